"""unoflip: a Python client for the unoflip game server.

    from unoflip import Client
    client = Client("127.0.0.1:50051")
    game = client.create_game(ruleset="flip", seats=4, bot_seats=[1, 2, 3])
    seat = client.join(game.name, name="me")
    seat.start()
    for message in seat.events():
        ...

The generated stubs are in `unoflip.v1` (cards_pb2, game_pb2, service_pb2, service_pb2_grpc).
"""

from unoflip.client import (
    Client,
    PlayerToken,
    Seat,
    SeatToken,
    UnoflipError,
    accept,
    call_uno,
    catch,
    challenge,
    choose_color,
    draw,
    keep,
    options,
    play,
)

__all__ = [
    "Client",
    "PlayerToken",
    "Seat",
    "SeatToken",
    "UnoflipError",
    "accept",
    "call_uno",
    "catch",
    "challenge",
    "choose_color",
    "draw",
    "keep",
    "options",
    "play",
]
