#!/usr/bin/env bash
# A bot in bash, with curl and jq only: creates a game against two server bots, joins it, and
# plays a whole round from its NDJSON stream, answering each prompt with a legal action.
set -euo pipefail
ADDR=${ADDR:-http://127.0.0.1:50051}
API=$ADDR/unoflip.v1.UnoFlipService
call() { curl -sS --fail-with-body -H 'Content-Type: application/json' "$@"; }

GAME=$(call -d '{"options": {"seats": 3, "botSeats": [1, 2], "singleRound": true}}' "$API/CreateGame" | jq -r .game.name)
TOKEN=$(call -d "{\"game\": \"$GAME\", \"playerName\": \"curl-bot\"}" "$API/JoinGame" | jq -r .seatToken)
AUTH="Authorization: Bearer $TOKEN"
call -H "$AUTH" -d "{\"game\": \"$GAME\"}" "$API/StartGame" > /dev/null
echo "playing $GAME"
MOVES=0
# One JSON message per line: the view, then events, prompts (my turn) and heartbeats.
while IFS= read -r LINE; do
  if PROMPT=$(jq -ce '.prompt // empty' <<< "$LINE"); then
    # A card if one can be played, else the first legal action (never catching UNO).
    ACTION=$(jq -c '[.legalActions[] | select(.playCard)] + [.legalActions[] | select(.catchUno | not)] | .[0]' <<< "$PROMPT")
    [[ $ACTION == null ]] && continue
    VERSION=$(jq -r .version <<< "$PROMPT")
    # The request id makes a retried move count once. A prompt the game has moved past (a chance
    # to catch a seat, while the others play on) is refused with VERSION_MISMATCH: the next comes.
    ANSWER=$(curl -sS -H 'Content-Type: application/json' -H "$AUTH" -d "{\"game\": \"$GAME\", \"action\": $ACTION, \"expectedVersion\": \"$VERSION\", \"requestId\": \"$GAME-$VERSION\"}" "$API/SubmitAction")
    case $(jq -r '.details[0].debug.reason // "OK"' <<< "$ANSWER") in
      OK) MOVES=$((MOVES + 1)) ;;
      VERSION_MISMATCH) ;;
      *) echo "refused: $ANSWER" >&2; exit 1 ;;
    esac
  elif jq -e '.event.roundEnded' <<< "$LINE" > /dev/null; then
    echo "round over after $MOVES moves of mine: $(jq -c .event.roundEnded <<< "$LINE")"
    exit 0
  elif jq -e '.error' <<< "$LINE" > /dev/null; then
    echo "the stream failed: $LINE" >&2
    exit 1
  fi
done < <(curl -sS -N --fail-with-body -H "$AUTH" -H 'Content-Type: application/json' -d "{\"game\": \"$GAME\"}" "$API/Subscribe")
echo "the stream ended before the round did" >&2
exit 1
