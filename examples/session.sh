#!/usr/bin/env bash
# A game against a server-played seat, with buf curl: create, join, start, look, play.
set -euo pipefail
ADDR=${ADDR:-http://127.0.0.1:50051}
API=$ADDR/unoflip.v1.UnoFlipService
call() { buf curl --protocol grpc --http2-prior-knowledge --schema proto "$@"; }
pick() { python3 -c "import json,sys; v=json.load(sys.stdin)$1; print(v if isinstance(v, str) else json.dumps(v))"; }

GAME=$(call -d '{"options": {"seats": 2, "botSeats": [1], "singleRound": true}}' "$API/CreateGame" | pick '["game"]["name"]')
TOKEN=$(call -d "{\"game\": \"$GAME\"}" "$API/JoinGame" | pick '["seatToken"]')
AUTH="Authorization: Bearer $TOKEN"
call -H "$AUTH" -d "{\"game\": \"$GAME\"}" "$API/StartGame" > /dev/null
# The bot may move first (after the server's bot delay): wait until I have something to do.
until VIEW=$(call -H "$AUTH" -d "{\"game\": \"$GAME\"}" "$API/GetView") && [[ $VIEW == *legalActions* ]]; do sleep 0.5; done
echo "my legal actions: $(echo "$VIEW" | pick '["view"]["legalActions"]')"
ACTION=$(echo "$VIEW" | pick '["view"]["legalActions"][0]')
call -H "$AUTH" -d "{\"game\": \"$GAME\", \"action\": $ACTION}" "$API/SubmitAction"
