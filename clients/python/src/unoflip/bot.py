"""An example bot that plays a seat only through the API: it follows the seat's stream and, at
each prompt, picks one of the legal actions the server lists.

    python -m unoflip.bot --server 127.0.0.1:50051 --bots 3

On the bot ladder (rated bot-only games, against the built-in levels and other bots):

    python -m unoflip.bot --server 127.0.0.1:50051 --ladder 100
"""

from __future__ import annotations

import argparse
import collections
import os
import random

from unoflip.client import Client, PlayerToken, Seat, UnoflipError
from unoflip.v1 import cards_pb2, game_pb2

# Refusals a bot may meet when the table moved on between its prompt and its move: it waits for
# the next prompt.
_STALE = {"VERSION_MISMATCH", "NOT_YOUR_TURN", "NOTHING_TO_CATCH", "NO_UNO_TO_CALL"}


def face(card: cards_pb2.Card, side: int) -> cards_pb2.Face:
    """The active face of a card."""
    return card.dark if side == cards_pb2.SIDE_DARK else card.light


def best_color(view: game_pb2.View) -> int:
    """The color the bot holds most of on the active side."""
    counts = collections.Counter(
        face(c, view.side).color for c in view.hand if face(c, view.side).color != cards_pb2.COLOR_UNSPECIFIED
    )
    return counts.most_common(1)[0][0] if counts else 0


def choose(legal: list[game_pb2.Action], view: game_pb2.View, rng: random.Random) -> game_pb2.Action | None:
    """One of `legal`, or None when none is worth taking: catch a forgotten UNO, else play
    (numbers and actions before wilds, calling UNO when it leaves one card), else declare the
    color it holds most of, else the rest. Calls and catches only when due: with the false-UNO
    house rule they are always listed, and a wrong one costs two cards."""
    exposed = {p.seat for p in view.players if p.uno_exposed}
    kinds = collections.defaultdict(list)
    for action in legal:
        kind = action.WhichOneof("kind")
        if kind == "catch_uno" and action.catch_uno.seat not in exposed:
            continue
        if kind == "call_uno" and view.seat not in exposed:
            continue
        kinds[kind].append(action)
    if kinds["catch_uno"]:
        return kinds["catch_uno"][0]
    if kinds["call_uno"]:
        return kinds["call_uno"][0]
    plays = kinds["play_card"]
    if plays:
        hand = {c.id: c for c in view.hand}
        color = best_color(view)

        def rank(a: game_pb2.Action) -> tuple:
            card = hand.get(a.play_card.card)
            wild = card is not None and face(card, view.side).color == cards_pb2.COLOR_UNSPECIFIED
            # Shed the most cards at once (identical cards together, H-MULTI).
            more = -len(a.play_card.more_cards)
            return (wild, not a.play_card.uno, more, wild and a.play_card.color != color, rng.random())

        return min(plays, key=rank)
    if kinds["swap_hands"]:  # seven-zero: take the smallest hand
        counts = {p.seat: p.card_count for p in view.players}
        return min(kinds["swap_hands"], key=lambda a: counts.get(a.swap_hands.seat, 1 << 30))
    if kinds["choose_color"]:
        color = best_color(view)
        return next((a for a in kinds["choose_color"] if a.choose_color.color == color), kinds["choose_color"][0])
    for kind in ("accept_penalty", "keep_card", "draw_card", "challenge"):
        if kinds[kind]:
            return kinds[kind][0]
    return None


# The events after which a game never moves again.
_OVER = ("match_ended", "match_abandoned", "lobby_expired")


def play_seat(seat: Seat, *, rng: random.Random | None = None, after: int = 0) -> game_pb2.View:
    """Plays `seat` until the match is over (or abandoned); returns the final view."""
    rng = rng or random.Random()
    for message in seat.events(after=after):
        kind = message.WhichOneof("kind")
        if kind == "event" and message.event.WhichOneof("kind") in _OVER:
            return seat.view()
        if kind == "prompt":
            view = seat.view()
            if view.version != message.prompt.version:
                continue  # the table moved on; a newer prompt follows
            action = choose(list(message.prompt.legal_actions), view, rng)
            if action is None:
                continue
            try:
                seat.act(action, expected_version=message.prompt.version)
            except UnoflipError as error:
                if error.reason not in _STALE:
                    raise
    return seat.view()


def ladder(
    client: Client,
    player: PlayerToken,
    games: int,
    *,
    ruleset: str = "flip",
    seats: int = 4,
    fill_levels: tuple[str, ...] = ("random", "heuristic"),
    bot_fill_after: float = 1.0,
    rng: random.Random | None = None,
    report=None,
) -> int:
    """Plays `games` rated bot-only games on the bot ladder as `player` (registered as a bot):
    quick play queues it with the other bots, and the built-in `fill_levels` take the seats
    nobody took after `bot_fill_after` seconds. Returns the games won."""
    rng = rng or random.Random()
    won = 0
    for n in range(games):
        seat = client.find_match(
            player,
            ruleset=ruleset,
            seats=seats,
            single_round=True,
            rated=True,
            bot_fill_after=bot_fill_after,
            fill_levels=fill_levels,
        )
        view = play_seat(seat, rng=rng)
        won += seat.number in view.winners
        if report is not None:
            report(n + 1, seat, view)
    return won


def main() -> None:
    parser = argparse.ArgumentParser(description="Play unoflip with the example bot.")
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--ruleset", choices=["flip", "classic"], default="flip")
    parser.add_argument("--bots", type=int, default=3, help="server bots at the table")
    parser.add_argument(
        "--ladder",
        type=int,
        metavar="GAMES",
        help="play this many rated games on the bot ladder instead of one game",
    )
    parser.add_argument("--name", default="python example bot", help="the ladder player's name")
    parser.add_argument(
        "--player",
        help="play the ladder as this registered bot (players/{id}); its token in $UNOFLIP_PLAYER_TOKEN",
    )
    args = parser.parse_args()
    with Client(args.server) as client:
        if args.ladder is not None:
            if args.player:
                player = PlayerToken(args.player, os.environ["UNOFLIP_PLAYER_TOKEN"])
            else:
                player = client.register_player(args.name, bot=True)
                print(f"registered {player.player}; its token: {player.token}")

            def report(n: int, seat, view) -> None:
                result = "won" if seat.number in view.winners else "lost"
                print(f"game {n}: {seat.game} {result}")

            won = ladder(client, player, args.ladder, ruleset=args.ruleset, report=report)
            rating = next(r for r in client.get_player(player.player).ratings)
            print(
                f"{won}/{args.ladder} won; rating {rating.rating:.1f} +- {2 * rating.uncertainty:.1f} "
                f"after {rating.games} rated games"
            )
            return
        game = client.create_game(ruleset=args.ruleset, seats=args.bots + 1, bot_seats=range(1, args.bots + 1))
        seat = client.join(game.name, name="python bot")
        seat.start()
        view = play_seat(seat)
        print(f"{game.name}: winners {list(view.winners)}, scores {[p.score for p in view.players]}")


if __name__ == "__main__":
    main()
