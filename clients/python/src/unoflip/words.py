"""Cards and events in words, as players say them: `red 5`, `seat 2 drew 1 card`."""

from __future__ import annotations

from unoflip.v1 import cards_pb2, game_pb2


def face_words(face: cards_pb2.Face) -> str:
    """`red 5`, `pink skip everyone`, `wild draw color`: a face as players say it."""
    color = cards_pb2.Color.Name(face.color).removeprefix("COLOR_").lower()
    kind = cards_pb2.Kind.Name(face.kind).removeprefix("KIND_").lower().replace("_", " ")
    if kind == "number":
        kind = str(face.number)
    return kind if color == "unspecified" else f"{color} {kind}"


def card_words(card: cards_pb2.Card) -> str:
    """Both faces of a card, light first: `red 5 | pink 3` (classic cards have one)."""
    if card.HasField("dark"):
        return f"{face_words(card.light)} | {face_words(card.dark)}"
    return face_words(card.light)


def describe_event(e: game_pb2.Event) -> str:
    """What happened, in words: `seat 2 played red 5 | pink 3`."""
    kind = e.WhichOneof("kind") or "unknown"
    body = getattr(e, kind, None)
    if kind == "game_created":
        o = body.options
        what = f"created: {o.seats} seats"
    elif kind == "round_started":
        what = f"round {body.round} dealt by seat {body.dealer}; first discard {card_words(body.starter)}"
        if body.hand:  # a seat's own stream shows its hand
            what += "; your hand: " + ", ".join(card_words(c) for c in body.hand)
    elif kind == "turn_started":
        what = f"seat {body.seat}'s turn"
    elif kind == "card_played":
        what = f"seat {body.seat} played {card_words(body.card)}" + (" and called UNO" if body.uno else "")
    elif kind == "cards_drawn":
        what = f"seat {body.seat} drew {body.count} card{'s' if body.count != 1 else ''}"
        if body.cards:  # cards the viewer may see
            what += ": " + ", ".join(card_words(c) for c in body.cards)
    elif kind == "color_chosen":
        what = f"seat {body.seat} chose {cards_pb2.Color.Name(body.color).removeprefix('COLOR_').lower()}"
    elif kind == "uno_called":
        what = f"seat {body.seat} called UNO"
    elif kind == "uno_caught":
        what = f"seat {body.by} caught seat {body.seat} without UNO"
    elif kind == "went_out":
        what = f"seat {body.seat} went out"
    elif kind == "round_ended":
        what = "the round ended"
    elif kind == "match_ended":
        what = "the match ended; won by seat " + ", ".join(str(s) for s in body.winners)
    else:
        what = kind.replace("_", " ")
    return what
