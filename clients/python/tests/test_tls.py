"""The Python client over TLS: a server started with `--tls-cert` and `--tls-key` (a test CA made
with openssl), reached with `Client(..., root_certificates=...)`; a client that does not trust
the CA is refused."""

from __future__ import annotations

import pathlib
import shutil
import socket
import subprocess
import time

import grpc
import pytest

from unoflip import Client, UnoflipError

from conftest import binary, free_port

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed")


def openssl(tmp: pathlib.Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True)


def authority(tmp: pathlib.Path, name: str) -> None:
    """`name.pem` (a CA) and `name-server.pem`/`.key` (for localhost and 127.0.0.1)."""
    openssl(tmp, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}")
    openssl(tmp, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}-server.key", "-out", f"{name}-server.csr", "-subj", "/CN=localhost")
    (tmp / "ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl(tmp, "x509", "-req", "-in", f"{name}-server.csr", "-CA", f"{name}.pem", "-CAkey",
            f"{name}.key", "-CAcreateserial", "-out", f"{name}-server.pem", "-days", "2",
            "-extfile", "ext")


@pytest.fixture
def tls_server(tmp_path: pathlib.Path):
    authority(tmp_path, "ca")
    port = free_port()
    log = tmp_path / "server.log"
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [str(binary()), "serve", "--listen", f"127.0.0.1:{port}", "--store", "memory",
             "--bot-delay-ms", "0", "--tls-cert", str(tmp_path / "ca-server.pem"),
             "--tls-key", str(tmp_path / "ca-server.key")],
            stdout=out, stderr=out)
    deadline = time.monotonic() + 30
    while "unoflip serving" not in log.read_text():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    yield port, tmp_path
    process.terminate()
    process.wait(timeout=10)


def test_a_game_is_played_over_tls_with_the_test_ca(tls_server):
    port, tmp = tls_server
    ca = (tmp / "ca.pem").read_bytes()
    with Client(f"localhost:{port}", root_certificates=ca) as client:
        game = client.create_game(seats=2, bot_seats=[1], single_round=True)
        seat = client.join(game.name)
        seat.start()
        view = seat.view()
        assert len(view.hand) >= 7
        assert client.get_game(game.name).name == game.name


def test_a_client_that_does_not_trust_the_ca_is_refused(tls_server):
    port, tmp = tls_server
    authority(tmp, "other")
    with Client(f"localhost:{port}", root_certificates=(tmp / "other.pem").read_bytes(),
                retry_for=0) as client:
        with pytest.raises(UnoflipError) as refused:
            client.get_game("games/none")
        assert refused.value.code == grpc.StatusCode.UNAVAILABLE
