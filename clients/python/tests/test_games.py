"""Whole games played by the example bot against the real server, through the API only."""

from __future__ import annotations

import random
import threading
import time

import pytest

from unoflip import Client, UnoflipError, draw, play
from unoflip.bot import play_seat

from conftest import Server


class Worker(threading.Thread):
    """A thread that keeps its target's result or exception."""

    def __init__(self, target):
        super().__init__(daemon=True)
        self.run_target, self.result, self.error = target, None, None

    def run(self):
        try:
            self.result = self.run_target()
        except BaseException as error:  # noqa: BLE001 - reported by finish()
            self.error = error

    def finish(self, timeout=120):
        self.join(timeout)
        assert not self.is_alive(), "still running"
        if self.error:
            raise self.error
        return self.result


def versions_of(seat, after=0):
    """The version of the stream's first view, then every event version, until the match ends."""
    seen = []
    for message in seat.events(after=after):
        if message.WhichOneof("kind") == "view" and not seen:
            seen.append(message.view.version)
        if message.WhichOneof("kind") == "event":
            seen.append(message.event.version)
            if message.event.WhichOneof("kind") == "match_ended":
                return seen
    return seen


@pytest.mark.parametrize("ruleset", ["flip", "classic"])
def test_bot_plays_a_whole_match_against_server_bots(client: Client, ruleset: str):
    game = client.create_game(ruleset=ruleset, seats=4, bot_seats=[1, 2, 3], target_score=200)
    seat = client.join(game.name, name="py")
    seat.start()
    view = play_seat(seat, rng=random.Random(7))
    assert view.awaiting == 5  # AWAITING_MATCH_OVER
    assert len(view.winners) >= 1
    assert max(p.score for p in view.players) >= 200
    finished = client.get_game(game.name)
    assert finished.status == 3  # GAME_STATUS_FINISHED
    assert list(finished.winners) == list(view.winners)


def test_a_round_played_to_the_last_with_identical_cards_together(client: Client):
    """H-LAST and H-MULTI over the API: the round goes on until one seat is left, and the result
    gives the finishing order of all four seats."""
    game = client.create_game(
        ruleset="classic", seats=4, bot_seats=[1, 2, 3], single_round=True, house_rules=["multi", "play_to_last"]
    )
    seat = client.join(game.name, name="py")
    seat.start()
    view = play_seat(seat, rng=random.Random(3))
    assert view.awaiting == 5  # AWAITING_MATCH_OVER
    order = list(view.last_round.order)
    assert sorted(order) == [0, 1, 2, 3]
    assert order[0] == view.last_round.winner


def test_two_python_bots_and_two_server_bots_share_a_classic_match(client: Client):
    game = client.create_game(ruleset="classic", seats=4, bot_seats=[1, 3], single_round=True)
    a = client.join(game.name, name="a")
    b = client.join(game.name, name="b")
    assert (a.number, b.number) == (0, 2)
    a.start()
    workers = [Worker(lambda s=s: play_seat(s, rng=random.Random(s.number))) for s in (a, b)]
    for w in workers:
        w.start()
    views = {s.number: w.finish() for s, w in zip((a, b), workers)}
    assert views[0].version == views[2].version
    assert list(views[0].winners) == list(views[2].winners)
    assert views[0].last_round.round == 1


def test_stream_resumes_without_gap_across_a_server_restart(server, client: Client):
    game = client.create_game(ruleset="flip", seats=3, bot_seats=[1, 2])
    seat = client.join(game.name, name="py")
    seat.start()
    # A second stream of the bot's seat collects versions while the bot plays; the server is
    # killed (SIGKILL) in the middle and restarted on the same SQLite file.
    observer = Worker(lambda: versions_of(client.seat(seat.token)))
    observer.start()
    player = Worker(lambda: play_seat(seat, rng=random.Random(3)))
    player.start()
    deadline = time.monotonic() + 60
    while client.get_game(game.name).version < 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    killed_at = client.get_game(game.name).version
    server.restart()
    player.finish()
    collected = observer.finish()
    final = client.get_game(game.name)
    assert final.status == 3
    assert killed_at < final.version, "the game did not go on after the restart"
    first = collected[0]
    assert collected[1:] == list(range(first + 1, final.version + 1)), "a gap or duplicate in the resumed stream"


def test_a_refused_action_is_an_exception_with_its_reason(client: Client):
    game = client.create_game(ruleset="flip", seats=2, bot_seats=[1])
    seat = client.join(game.name)
    seat.start()
    view = seat.view()
    # A wild first discard asks this seat for a color first [F-START-4], and the bot may have
    # played a wild draw on it: settle those, so that the refusals below are about the card and
    # the version alone.
    for _ in range(10):
        pending = [
            a for a in view.legal_actions if a.WhichOneof("kind") in ("choose_color", "accept_penalty")
        ]
        if not pending:
            break
        seat.act(pending[0], expected_version=view.version)
        view = seat.view()
    held = {c.id for c in view.hand}
    stranger = next(i for i in range(112) if i not in held and i not in {c.id for c in view.discard})
    with pytest.raises(UnoflipError) as refused:
        seat.act(play(stranger), expected_version=view.version)
    assert refused.value.reason in {"CARD_NOT_IN_HAND", "NOT_YOUR_TURN"}
    assert seat.view().version == view.version

    with pytest.raises(UnoflipError) as stale:
        seat.act(draw(), expected_version=view.version + 1000)
    assert stale.value.reason == "VERSION_MISMATCH"
    assert seat.view().version == view.version

    with pytest.raises(UnoflipError) as bad:
        client.join("games/nope")
    assert bad.value.reason == "GAME_NOT_FOUND"
    assert bad.value.code.name == "NOT_FOUND"


def test_a_finished_games_replay_shows_every_hand(client: Client):
    game = client.create_game(ruleset="classic", seats=2, bot_seats=[1], single_round=True)
    seat = client.join(game.name)
    seat.start()
    final = play_seat(seat, rng=random.Random(5))
    last = final.version
    end = client.replay(game.name, last)
    assert (end.version, end.last_version) == (last, last)
    assert end.table == client.spectate(game.name).view()
    assert end.seats[0].hand == final.hand
    middle = client.replay(game.name, last // 2)
    for number, view in enumerate(middle.seats):
        assert view.seat == number
        assert len(view.hand) == middle.table.players[number].card_count
    with pytest.raises(UnoflipError) as refused:
        client.replay(game.name, last + 1)
    assert refused.value.reason == "VERSION_OUT_OF_RANGE"
    # The rematch: same options and bots, the same game however often it is asked for.
    again = seat.rematch()
    assert again.status == 1  # GAME_STATUS_WAITING
    assert again.options.ruleset == game.options.ruleset and list(again.options.bot_seats) == [1]
    assert seat.rematch().name == again.name == client.get_game(game.name).rematch


def test_calls_over_the_rate_limit_wait_as_the_server_asks_and_then_pass(tmp_path):
    server = Server(tmp_path, "memory", ["--rate-limit", "20"])
    server.start()
    try:
        with Client(server.address) as client:
            game = client.create_game(seats=2, bot_seats=[1])
            started = time.monotonic()
            # Twenty a second in bursts of twenty: sixty calls pass, the last forty waiting.
            for _ in range(60):
                assert client.get_game(game.name).name == game.name
            assert time.monotonic() - started >= 1.5
        # Without time to retry, the refusal is an error that says how long to wait.
        with Client(server.address, retry_for=0) as hasty:
            with pytest.raises(UnoflipError) as refused:
                for _ in range(100):
                    hasty.get_game(game.name)
            assert refused.value.reason == "RATE_LIMITED"
            assert refused.value.retry_after is not None and 0 < refused.value.retry_after <= 0.05
    finally:
        server.stop()


def test_quick_play_over_the_rate_limit_waits_as_the_server_asks(tmp_path):
    server = Server(tmp_path, "memory", ["--rate-limit", "20"])
    server.start()
    try:
        with Client(server.address) as client:
            bot = client.register_player("Quick", bot=True)
            started = time.monotonic()
            # Twenty a second in bursts of twenty: forty FindMatch streams pass, the last twenty
            # (and more, with the calls each match's start makes) waiting for the limit.
            seats = [
                client.find_match(bot, seats=2, single_round=True, bot_fill_after=0) for _ in range(40)
            ]
            assert time.monotonic() - started >= 0.9
            assert all(seat.game.startswith("games/") for seat in seats)
        with Client(server.address, retry_for=0) as hasty:
            with pytest.raises(UnoflipError) as refused:
                for _ in range(60):
                    hasty.find_match(bot, seats=2, single_round=True, bot_fill_after=0)
            assert refused.value.reason == "RATE_LIMITED"
    finally:
        server.stop()
