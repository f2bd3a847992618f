// Cards, actions and events in words, as the table shows them.

import { Color, Kind, Side, type Card, type Face } from "@unoflip/client";
import { DrawCause, type Action, type Event } from "@unoflip/client";

const KINDS: Record<number, string> = {
  [Kind.DRAW_ONE]: "draw one",
  [Kind.DRAW_TWO]: "draw two",
  [Kind.DRAW_FIVE]: "draw five",
  [Kind.REVERSE]: "reverse",
  [Kind.SKIP]: "skip",
  [Kind.SKIP_EVERYONE]: "skip everyone",
  [Kind.FLIP]: "flip",
  [Kind.WILD]: "wild",
  [Kind.WILD_DRAW_TWO]: "wild draw two",
  [Kind.WILD_DRAW_FOUR]: "wild draw four",
  [Kind.WILD_DRAW_COLOR]: "wild draw color",
};

/** A color's name in lower case ("red"); empty when unset. */
export function colorName(color: Color): string {
  return color === Color.UNSPECIFIED ? "" : Color[color].toLowerCase();
}

/** A face in words: "red 5", "teal skip everyone", "wild draw two". */
export function faceName(face: Face | undefined): string {
  if (!face) return "?";
  const what = face.kind === Kind.NUMBER ? String(face.number) : (KINDS[face.kind] ?? "?");
  const color = colorName(face.color);
  return color ? `${color} ${what}` : what;
}

/** The face of `card` on `side` (classic cards have only the light one). */
export function activeFace(card: Card, side: Side): Face | undefined {
  return side === Side.DARK && card.dark ? card.dark : card.light;
}

/** The other face of `card` (none in classic). */
export function otherFace(card: Card, side: Side): Face | undefined {
  if (!card.dark) return undefined;
  return side === Side.DARK ? card.light : card.dark;
}

/** How the table names a seat, from `me`'s point of view. */
export type Who = (seat: number) => string;

/** An action in words, `cards` giving the faces of the viewer's cards by id. */
export function actionWords(action: Action, who: Who, card: (id: number) => string): string {
  const k = action.kind;
  switch (k.case) {
    case "playCard": {
      const names = [k.value.card, ...k.value.moreCards].map(card).join(" + ");
      let line = `Play ${names}`;
      if (k.value.color !== Color.UNSPECIFIED) line += `, choose ${colorName(k.value.color)}`;
      if (k.value.uno) line += ", UNO!";
      return line;
    }
    case "drawCard":
      return "Draw";
    case "keepCard":
      return "Keep the drawn card";
    case "chooseColor":
      return `Choose ${colorName(k.value.color)}`;
    case "acceptPenalty":
      return "Take the penalty";
    case "challenge":
      return "Challenge";
    case "callUno":
      return "Call UNO";
    case "catchUno":
      return `Catch ${who(k.value.seat)}`;
    case "swapHands":
      return `Swap hands with ${who(k.value.seat)}`;
    default:
      return "?";
  }
}

const CAUSES: Record<number, string> = {
  [DrawCause.PENALTY]: " as a penalty",
  [DrawCause.FIRST_DISCARD]: " (first discard)",
  [DrawCause.CHALLENGE]: " after the challenge",
  [DrawCause.UNO_CAUGHT]: ", caught without UNO",
  [DrawCause.FALSE_UNO]: " for a false UNO",
  [DrawCause.FALSE_CATCH]: " for a false catch",
};

/** An event in words, cards named by their face on `side` (the side active when it happened). */
export function eventWords(event: Event, who: Who, side: Side): string | undefined {
  const k = event.kind;
  switch (k.case) {
    case "gameCreated":
      return "The game was created.";
    case "dealerChosen":
      return `${who(k.value.dealer)} deals.`;
    case "roundStarted":
      return `Round ${k.value.round} is dealt; the first card is ${faceName(k.value.starter?.light)}.`;
    case "starterReturned":
      return "The first card went back; another was turned.";
    case "turnStarted":
      return `${who(k.value.seat)} to play.`;
    case "cardPlayed": {
      const face = k.value.card ? activeFace(k.value.card, side) : undefined;
      let line = `${who(k.value.seat)} played ${faceName(face)}`;
      if (k.value.color !== Color.UNSPECIFIED) line += ` and chose ${colorName(k.value.color)}`;
      return line + (k.value.uno ? ": UNO!" : ".");
    }
    case "colorChosen":
      return `${who(k.value.seat)} chose ${colorName(k.value.color)}.`;
    case "colorRequested":
      return `${who(k.value.seat)} must choose a color.`;
    case "directionReversed":
      return "Play changes direction.";
    case "flipped":
      return "The table flips!";
    case "cardsDrawn": {
      const n = k.value.count;
      return `${who(k.value.seat)} drew ${n} card${n === 1 ? "" : "s"}${CAUSES[k.value.cause] ?? ""}.`;
    }
    case "drawnCardKept":
      return `${who(k.value.seat)} kept the drawn card.`;
    case "reshuffled":
      return "The discards were shuffled into a new draw pile.";
    case "penaltyPending":
      return `${who(k.value.seat)} must take ${k.value.total || "the"} cards or answer.`;
    case "penaltyAccepted":
      return `${who(k.value.seat)} took the penalty.`;
    case "challenged":
      return `${who(k.value.seat)} challenged ${who(k.value.target)}: ${k.value.guilty ? "guilty" : "not guilty"}.`;
    case "handShown":
      return `${who(k.value.seat)} showed their hand to ${who(k.value.to)}.`;
    case "unoCalled":
      return `${who(k.value.seat)} called UNO!`;
    case "unoCaught":
      return `${who(k.value.by)} caught ${who(k.value.seat)} without UNO.`;
    case "roundEnded": {
      const r = k.value.result;
      return r ? `Round ${r.round} is over: ${who(r.winner)} won it.` : "The round is over.";
    }
    case "matchEnded":
      return `The match is over: ${k.value.winners.map(who).join(" and ")} won.`;
    case "matchAbandoned":
      return "The match was abandoned: nobody moved for too long.";
    case "lobbyExpired":
      return "The lobby expired before anyone started it.";
    case "swapRequested":
      return `${who(k.value.seat)} chooses whom to swap hands with.`;
    case "handsSwapped":
      return `${who(k.value.seat)} swapped hands with ${who(k.value.with)}.`;
    case "handsPassed":
      return "Every hand passed on.";
    case "wentOut":
      return `${who(k.value.seat)} went out; the round goes on.`;
    default:
      return undefined;
  }
}
