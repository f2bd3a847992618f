"""Receiving the server's notifications (`unoflip serve --webhook-url ... --webhook-secret ...`):
the example a host backend copies to turn them into pushes (FCM, APNs).

Each notification is a POST of JSON signed as the Standard Webhooks specification says
(https://www.standardwebhooks.com/): headers `webhook-id` (the notification's id, the same on
every retry), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
(`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`). The body::

    {"type": "unoflip.your_turn", "timestamp": "2026-12-07T21:00:00Z",
     "data": {"id": "...", "player": "players/...", "game": "games/...",
              "game_version": 17, "seat": 1}}

Types: `unoflip.your_turn`, `unoflip.penalty_waiting`, `unoflip.game_started` (a quick-play match
starts at once: "you were matched"), `unoflip.game_over` (with `winners` and `won`),
`unoflip.turn_ending` (a reminder before a long turn runs out, with `turn_deadline`).

A notification may come more than once (at least once): keep the ids you saw (`Receiver` does,
in memory) and answer 2xx to a repeat. Any other answer makes the server try again later.

    python -m unoflip.webhooks --port 8080 --secret whsec_...    # prints what it receives
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import threading
import time
from collections.abc import Callable, Mapping

#: How far a notification's timestamp may be from this machine's clock (replayed requests).
TOLERANCE_SECONDS = 300


class WebhookError(Exception):
    """A request that is not a notification of this server: unsigned, forged or stale."""


def key_of(secret: str) -> bytes:
    """The HMAC key of a secret: `whsec_` and base64 (Standard Webhooks), or the text's bytes."""
    if secret.startswith("whsec_"):
        return base64.b64decode(secret[len("whsec_"):])
    return secret.encode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` the server sends for `body`."""
    mac = hmac.new(key_of(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> dict:
    """The notification in `body` if its headers sign it with `secret`, else `WebhookError`."""
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        msg_id = lower["webhook-id"]
        timestamp = int(lower["webhook-timestamp"])
        signatures = lower["webhook-signature"]
    except (KeyError, ValueError) as e:
        raise WebhookError(f"missing or malformed webhook header: {e}") from None
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        raise WebhookError("the timestamp is too far from now (a replayed request?)")
    expected = sign(secret, msg_id, timestamp, body)
    # The header may list several signatures (`v1,a v1,b`) while a secret is rotated.
    if not any(hmac.compare_digest(expected, s) for s in signatures.split()):
        raise WebhookError("no signature matches")
    notification = json.loads(body)
    if notification.get("data", {}).get("id") != msg_id:
        raise WebhookError("the body's id is not the header's")
    return notification


class Receiver:
    """A small HTTP server taking notifications: verified, repeats dropped by id, each new one
    passed to `on_notification` (which should be quick: hand it to a queue)."""

    def __init__(
        self,
        secret: str,
        on_notification: Callable[[dict], None],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.secret = secret
        self.on_notification = on_notification
        self.seen: set[str] = set()
        self.refused = 0
        lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                try:
                    notification = verify(receiver.secret, dict(self.headers), body)
                except (WebhookError, ValueError):
                    with lock:
                        receiver.refused += 1
                    self.send_response(401)
                    self.end_headers()
                    return
                with lock:
                    new = notification["data"]["id"] not in receiver.seen
                    receiver.seen.add(notification["data"]["id"])
                if new:
                    receiver.on_notification(notification)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/unoflip"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description="Print the notifications an unoflip server sends.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--secret", required=True, help="the server's --webhook-secret")
    args = parser.parse_args()
    with Receiver(args.secret, lambda n: print(json.dumps(n), flush=True), host="0.0.0.0", port=args.port) as r:
        print(f"listening on port {r.port}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
