#!/usr/bin/env bash
# A game against a server-played seat, with curl and jq: create, join, start, look, play.
set -euo pipefail
ADDR=${ADDR:-http://127.0.0.1:50051}
API=$ADDR/unoflip.v1.UnoFlipService
call() { curl -sS --fail-with-body -H 'Content-Type: application/json' "$@"; }

GAME=$(call -d '{"options": {"seats": 2, "botSeats": [1], "singleRound": true}}' "$API/CreateGame" | jq -r .game.name)
TOKEN=$(call -d "{\"game\": \"$GAME\"}" "$API/JoinGame" | jq -r .seatToken)
AUTH="Authorization: Bearer $TOKEN"
call -H "$AUTH" -d "{\"game\": \"$GAME\"}" "$API/StartGame" > /dev/null
# The bot may move first (after the server's bot delay): wait until I have something to do.
until VIEW=$(call -H "$AUTH" -d "{\"game\": \"$GAME\"}" "$API/GetView") && [[ $VIEW == *legalActions* ]]; do sleep 0.5; done
echo "my legal actions: $(jq -c .view.legalActions <<< "$VIEW")"
ACTION=$(jq -c '.view.legalActions[0]' <<< "$VIEW")
call -H "$AUTH" -d "{\"game\": \"$GAME\", \"action\": $ACTION}" "$API/SubmitAction"
