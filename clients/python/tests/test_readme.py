"""The README's dozen-line example, run as written against the real server."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_plays_a_game_against_server_bots(server):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert len(code.strip().splitlines()) <= 18
    code = code.replace("127.0.0.1:50051", server.address)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # A single round, told event by event: seat 0's hand shown at the deal, plays by every seat,
    # and the end.
    assert lines[0] == "dealer chosen", lines[:3]
    assert any(re.match(r"round 1 dealt by seat [0-3]; first discard .+; your hand: .+", l) for l in lines)
    assert sum(l.startswith("round ") and " dealt " in l for l in lines) == 1
    for s in range(4):
        assert any(l.startswith(f"seat {s}'s turn") for l in lines), s
    assert any(re.match(r"seat [0-3] played \w", l) for l in lines)
    assert re.fullmatch(r"the match ended; won by seat [0-3]", lines[-1]), lines[-3:]
