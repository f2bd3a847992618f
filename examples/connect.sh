#!/usr/bin/env bash
# Connect and JSON with curl: a read by GET, a refusal with its reason, a stream as NDJSON.
set -euo pipefail
ADDR=${ADDR:-http://127.0.0.1:50051}
API=$ADDR/unoflip.v1.UnoFlipService
# Methods without side effects also answer GET (the message in the query, if any): cacheable.
curl -sS --fail-with-body "$API/GetDecks" | jq -c '{flip: (.flip | length), classic: (.classic | length)}'
# A refusal: an HTTP status, Connect's error code, and the reason gRPC clients get too.
curl -sS -w ' HTTP %{http_code}\n' -H 'Content-Type: application/json' -d '{"name": "games/nope"}' "$API/GetGame"
# A stream as NDJSON, one message per line (here a lobby, watched for a second).
GAME=$(curl -sS --fail-with-body -H 'Content-Type: application/json' -d '{"options": {"seats": 2}}' "$API/CreateGame" | jq -r .game.name)
curl -sS -N --max-time 1 -G --data-urlencode "message={\"game\": \"$GAME\"}" "$API/Subscribe" || true
