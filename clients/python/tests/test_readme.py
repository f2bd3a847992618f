"""The README's dozen-line example, run as written against the real server."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_plays_a_game_against_server_bots(server):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert len(code.strip().splitlines()) <= 16
    code = code.replace("127.0.0.1:50051", server.address)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"winners: \[\d+(, \d+)*\]\n", done.stdout), done.stdout
