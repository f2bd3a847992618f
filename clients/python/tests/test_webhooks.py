"""The webhook receiver a host backend copies: signatures as Standard Webhooks computes them,
forged and replayed requests refused, and the real server's notifications received, verified and
kept once by id."""

from __future__ import annotations

import json
import pathlib
import queue
import time

import pytest

from unoflip import Client
from unoflip.webhooks import Receiver, WebhookError, sign, verify

from conftest import Server

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def test_signatures_match_the_standard_webhooks_test_vector():
    body = b'{"test": 2432232314}'
    assert (
        sign(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
        == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    )


def test_forged_stale_and_unsigned_requests_are_refused():
    body = json.dumps({"type": "unoflip.your_turn", "data": {"id": "g.1.p"}}).encode()
    now = 1_800_000_000
    headers = {
        "Webhook-Id": "g.1.p",
        "Webhook-Timestamp": str(now),
        "Webhook-Signature": sign(SECRET, "g.1.p", now, body),
    }
    assert verify(SECRET, headers, body, now=now)["data"]["id"] == "g.1.p"
    # A rotated secret: several signatures, one of them good.
    rotated = dict(headers, **{"Webhook-Signature": "v1,AAAA " + headers["Webhook-Signature"]})
    assert verify(SECRET, rotated, body, now=now)["type"] == "unoflip.your_turn"
    with pytest.raises(WebhookError):
        verify(SECRET, headers, body.replace(b"your_turn", b"game_over"), now=now)
    with pytest.raises(WebhookError):
        verify("whsec_" + "A" * 32, headers, body, now=now)
    with pytest.raises(WebhookError):
        verify(SECRET, headers, body, now=now + 3600)
    with pytest.raises(WebhookError):
        verify(SECRET, {"Webhook-Id": "g.1.p"}, body, now=now)
    other = dict(headers, **{"Webhook-Id": "g.2.p"})
    other["Webhook-Signature"] = sign(SECRET, "g.2.p", now, body)
    with pytest.raises(WebhookError):
        verify(SECRET, other, body, now=now)


def test_the_server_notifies_a_player_through_the_receiver(tmp_path: pathlib.Path):
    received: queue.Queue[dict] = queue.Queue()
    with Receiver(SECRET, received.put) as receiver:
        server = Server(
            tmp_path,
            f"sqlite:{tmp_path / 'games.sqlite3'}",
            ["--webhook-url", receiver.url, "--webhook-secret", SECRET],
        )
        server.start()
        try:
            with Client(server.address) as client:
                ann = client.register_player("Ann")
                seat = client.find_match(ann, bot_fill_after=0, seats=2)
                kinds: dict[str, dict] = {}
                deadline = time.monotonic() + 30
                while not {"unoflip.game_started", "unoflip.your_turn"} <= kinds.keys():
                    assert time.monotonic() < deadline, f"only {sorted(kinds)}"
                    view = seat.view()
                    if view.legal_actions:
                        seat.act(view.legal_actions[0])
                    try:
                        n = received.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    kinds.setdefault(n["type"], n)
                started = kinds["unoflip.game_started"]["data"]
                assert started["player"] == ann.player
                assert started["game"] == seat.game
                assert started["seat"] == seat.number
                turn = kinds["unoflip.your_turn"]["data"]
                assert turn["player"] == ann.player
                assert turn["game_version"] > started["game_version"]
                assert receiver.refused == 0
        finally:
            server.stop()
