"""The NATS follower (`unoflip-follow`) against the real binary publishing to a nats-server of
the test's own: every event printed once, as words, and a durable consumer resumes where it
stopped."""

from __future__ import annotations

import asyncio
import io
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time

import nats
import nats.errors
import pytest
from nats.js.client import JetStreamContext

from unoflip import Client
from unoflip.follow import follow

from conftest import Server


def nats_binary() -> str | None:
    return os.environ.get("UNOFLIP_NATS_SERVER") or shutil.which("nats-server") or (
        "/usr/sbin/nats-server" if os.path.exists("/usr/sbin/nats-server") else None
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def broker(tmp_path: pathlib.Path):
    binary = nats_binary()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("nats-server is required in CI")
        pytest.skip("SKIPPED: no nats-server binary; install Debian's nats-server to run this test")
    port = free_port()
    process = subprocess.Popen(
        [binary, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(tmp_path / "nats")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"nats://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    yield url
    process.kill()
    process.wait()


@pytest.fixture
def publishing(tmp_path: pathlib.Path, broker: str):
    s = Server(tmp_path, f"sqlite:{tmp_path / 'games.sqlite3'}", ["--publish", broker])
    s.start()
    yield s
    s.stop()


def stream_messages(url: str) -> int:
    async def count() -> int:
        client = await nats.connect(url)
        try:
            info = await client.jetstream().stream_info("UNOFLIP_EVENTS")
            return info.state.messages
        except Exception:  # noqa: BLE001 - not created yet
            return 0
        finally:
            await client.close()

    return asyncio.run(count())


def bot_game(address: str, broker: str, before: int) -> tuple[str, int]:
    """An all-bot single round, played at once by the server; waits until it is published."""
    with Client(address) as client:
        game = client.create_game(seats=3, bot_seats=(0, 1, 2), single_round=True)
        version = client.get_game(game.name).version
    deadline = time.monotonic() + 20
    while stream_messages(broker) < before + version:
        assert time.monotonic() < deadline, "not published"
        time.sleep(0.05)
    return game.name, version


def lines_of(broker: str, durable: str | None) -> list[str]:
    out = io.StringIO()
    printed = asyncio.run(follow(broker, durable=durable, idle_exit=1.5, out=out))
    lines = out.getvalue().splitlines()
    assert printed == len(lines)
    return lines


def test_the_follower_prints_every_event_once_and_a_durable_one_resumes(publishing: Server, broker: str):
    first, n = bot_game(publishing.address, broker, 0)
    lines = lines_of(broker, "words")
    assert [line.split(":")[0] for line in lines] == [f"{first} #{v}" for v in range(1, n + 1)]
    assert lines[0] == f"{first} #1: created: 3 seats"
    assert any(" played " in line for line in lines)
    assert re.fullmatch(rf"{first} #{n}: the match ended; won by seat [0-2]", lines[-1]), lines[-1]
    # The same durable consumer: nothing new, nothing again.
    assert lines_of(broker, "words") == []
    # A new game: only its events.
    second, m = bot_game(publishing.address, broker, n)
    again = lines_of(broker, "words")
    assert [line.split(":")[0] for line in again] == [f"{second} #{v}" for v in range(1, m + 1)]
    # Without a durable name: everything from the first.
    assert len(lines_of(broker, None)) == n + m


def test_an_idle_follower_stops_whichever_timeout_the_fetch_raises(
    publishing: Server, broker: str, monkeypatch: pytest.MonkeyPatch
):
    """nats-py raises its own TimeoutError when a fetch finds nothing, and since 2.16 sometimes
    asyncio's plain one (its deadline ran out between two requests): both mean "idle"."""
    first, n = bot_game(publishing.address, broker, 0)
    real_fetch = JetStreamContext.PullSubscription.fetch
    plain = []

    async def fetch(self, *args, **kwargs):
        try:
            return await real_fetch(self, *args, **kwargs)
        except nats.errors.TimeoutError:
            plain.append(1)
            raise asyncio.TimeoutError from None

    monkeypatch.setattr(JetStreamContext.PullSubscription, "fetch", fetch)
    lines = lines_of(broker, None)
    assert [line.split(":")[0] for line in lines] == [f"{first} #{v}" for v in range(1, n + 1)]
    assert plain == [1]


def test_the_command_line_follower(publishing: Server, broker: str):
    game, n = bot_game(publishing.address, broker, 0)
    done = subprocess.run(
        [sys.executable, "-m", "unoflip.follow", "--nats", broker, "--durable", "cli", "--idle-exit", "1.5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == n
    assert done.stdout.splitlines()[0] == f"{game} #1: created: 3 seats"
