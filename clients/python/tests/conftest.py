"""Starts the real `unoflip` binary on a free port for the tests.

The binary is $UNOFLIP_BIN, else the repository's target/debug/unoflip (built with cargo if
missing)."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import time

import grpc
import pytest

from unoflip import Client

REPO = pathlib.Path(__file__).resolve().parents[3]


def binary() -> pathlib.Path:
    if os.environ.get("UNOFLIP_BIN"):
        return pathlib.Path(os.environ["UNOFLIP_BIN"])
    path = REPO / "target" / "debug" / "unoflip"
    if not path.exists():
        subprocess.run(["cargo", "build", "--bin", "unoflip"], cwd=REPO, check=True)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A `unoflip serve` process; `restart()` kills it (SIGKILL) and starts it again on the same
    port and store."""

    def __init__(self, tmp: pathlib.Path, store: str, extra: list[str]):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.store = store
        self.extra = extra
        self.log = tmp / "server.log"
        self.admin_token = "test-admin"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        args = [
            str(binary()),
            "serve",
            "--listen",
            self.address,
            "--store",
            self.store,
            "--bot-delay-ms",
            "0",
            "--admin-token",
            self.admin_token,
            *self.extra,
        ]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"unoflip exited: {self.log.read_text()}")
            with grpc.insecure_channel(self.address) as channel:
                try:
                    grpc.channel_ready_future(channel).result(timeout=0.5)
                    return
                except grpc.FutureTimeoutError:
                    continue
        raise RuntimeError(f"unoflip did not start: {self.log.read_text()}")

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def server(tmp_path: pathlib.Path):
    s = Server(tmp_path, f"sqlite:{tmp_path / 'games.sqlite3'}", [])
    s.start()
    yield s
    s.stop()


@pytest.fixture
def client(server: Server):
    with Client(server.address) as c:
        yield c
