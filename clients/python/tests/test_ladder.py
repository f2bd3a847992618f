"""The bot ladder: the example bot plays 600 rated four-seat games against the built-in
`random` and `heuristic` levels through quick play, and the ratings come out in the order of
strength, with the heuristic's and random's 95% intervals apart."""

from __future__ import annotations

import random
import time

from unoflip import Client
from unoflip.bot import ladder

GAMES = 600


def test_the_ladder_rates_heuristic_above_random_with_the_intervals_apart(client: Client):
    bot = client.register_player("python example bot", bot=True)
    started = time.monotonic()
    won = ladder(client, bot, GAMES, bot_fill_after=0, rng=random.Random(7))
    took = time.monotonic() - started

    board = client.leaderboard(bots=True, page_size=100)
    by_name = {e.player.display_name: e.rating for e in board.entries}
    heuristic = by_name["Built-in heuristic"]
    rand = by_name["Built-in random"]
    mine = by_name["python example bot"]
    print(
        f"\n{GAMES} ladder games in {took:.0f} s; example bot won {won}: "
        + ", ".join(
            f"{name} {r.rating:.1f} +- {2 * r.uncertainty:.1f} ({r.wins}/{r.games} won)"
            for name, r in [("heuristic", heuristic), ("random", rand), ("example bot", mine)]
        )
    )
    assert mine.games == GAMES and mine.wins == won
    # Each game seats both built-in levels (three fill seats, each level once, then again).
    assert heuristic.games == GAMES and rand.games == GAMES
    assert heuristic.rating - 2 * heuristic.uncertainty > rand.rating + 2 * rand.uncertainty
    # The board is in order, ranked from 1.
    assert [e.rank for e in board.entries] == list(range(1, len(board.entries) + 1))
    conservative = [e.rating.rating - 3 * e.rating.uncertainty for e in board.entries]
    assert conservative == sorted(conservative, reverse=True)


def test_a_player_joins_by_invite_code_and_finds_its_seat_again(client: Client, server):
    ada = client.register_player("Ada")
    game = client.create_game(seats=2, bot_seats=[1])
    assert len(game.invite_code) == 6
    seat = client.join(game.invite_code.lower(), player=ada)
    assert (seat.game, seat.number) == (game.name, 0)
    seat.start()
    # Another device: a new connection and the player token only.
    with Client(server.address) as other:
        [(found, again)] = other.my_games(ada)
        assert found.name == game.name
        assert again.token == seat.token
        assert again.view().seat == 0


def test_two_players_quick_play_into_one_game(client: Client):
    import threading

    ann, bea = client.register_player("Ann"), client.register_player("Bea")
    seats = {}

    def find(who) -> None:
        seats[who.player] = client.find_match(who, seats=2, ruleset="classic")

    threads = [threading.Thread(target=find, args=(p,)) for p in (ann, bea)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert seats[ann.player].game == seats[bea.player].game
    assert {seats[ann.player].number, seats[bea.player].number} == {0, 1}
