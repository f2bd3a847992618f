import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from unoflip.v1 import cards_pb2 as _cards_pb2
from unoflip.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetDecksRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetDecksResponse(_message.Message):
    __slots__ = ("flip", "classic")
    FLIP_FIELD_NUMBER: _ClassVar[int]
    CLASSIC_FIELD_NUMBER: _ClassVar[int]
    flip: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    classic: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, flip: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., classic: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class CreateGameRequest(_message.Message):
    __slots__ = ("options",)
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    options: _game_pb2.GameOptions
    def __init__(self, options: _Optional[_Union[_game_pb2.GameOptions, _Mapping]] = ...) -> None: ...

class CreateGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class GetGameRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ("open_only", "page_size")
    OPEN_ONLY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    open_only: bool
    page_size: int
    def __init__(self, open_only: _Optional[bool] = ..., page_size: _Optional[int] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games",)
    GAMES_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[_game_pb2.Game]
    def __init__(self, games: _Optional[_Iterable[_Union[_game_pb2.Game, _Mapping]]] = ...) -> None: ...

class JoinGameRequest(_message.Message):
    __slots__ = ("game", "seat", "player_name", "player")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    player_name: str
    player: str
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., player_name: _Optional[str] = ..., player: _Optional[str] = ...) -> None: ...

class JoinGameResponse(_message.Message):
    __slots__ = ("seat", "seat_token", "game")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    seat_token: str
    game: _game_pb2.Game
    def __init__(self, seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class StartGameRequest(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: str
    def __init__(self, game: _Optional[str] = ...) -> None: ...

class StartGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class SubmitActionRequest(_message.Message):
    __slots__ = ("game", "action", "request_id", "expected_version")
    GAME_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    game: str
    action: _game_pb2.Action
    request_id: str
    expected_version: int
    def __init__(self, game: _Optional[str] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., request_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class SubmitActionResponse(_message.Message):
    __slots__ = ("version", "events")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    version: int
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, version: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class GetViewRequest(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: str
    def __init__(self, game: _Optional[str] = ...) -> None: ...

class GetViewResponse(_message.Message):
    __slots__ = ("view",)
    VIEW_FIELD_NUMBER: _ClassVar[int]
    view: _game_pb2.View
    def __init__(self, view: _Optional[_Union[_game_pb2.View, _Mapping]] = ...) -> None: ...

class LeaveGameRequest(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: str
    def __init__(self, game: _Optional[str] = ...) -> None: ...

class LeaveGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ("game", "after_version", "include_view")
    GAME_FIELD_NUMBER: _ClassVar[int]
    AFTER_VERSION_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_VIEW_FIELD_NUMBER: _ClassVar[int]
    game: str
    after_version: int
    include_view: bool
    def __init__(self, game: _Optional[str] = ..., after_version: _Optional[int] = ..., include_view: _Optional[bool] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CaughtUp(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    def __init__(self, version: _Optional[int] = ...) -> None: ...

class Prompt(_message.Message):
    __slots__ = ("version", "legal_actions", "turn_deadline")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TURN_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    version: int
    legal_actions: _containers.RepeatedCompositeFieldContainer[_game_pb2.Action]
    turn_deadline: _timestamp_pb2.Timestamp
    def __init__(self, version: _Optional[int] = ..., legal_actions: _Optional[_Iterable[_Union[_game_pb2.Action, _Mapping]]] = ..., turn_deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SubscribeResponse(_message.Message):
    __slots__ = ("view", "event", "heartbeat", "caught_up", "prompt", "lobby")
    VIEW_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    LOBBY_FIELD_NUMBER: _ClassVar[int]
    view: _game_pb2.View
    event: _game_pb2.Event
    heartbeat: Heartbeat
    caught_up: CaughtUp
    prompt: Prompt
    lobby: _game_pb2.Game
    def __init__(self, view: _Optional[_Union[_game_pb2.View, _Mapping]] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., caught_up: _Optional[_Union[CaughtUp, _Mapping]] = ..., prompt: _Optional[_Union[Prompt, _Mapping]] = ..., lobby: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class SubscribeAllRequest(_message.Message):
    __slots__ = ("after_position",)
    AFTER_POSITION_FIELD_NUMBER: _ClassVar[int]
    after_position: int
    def __init__(self, after_position: _Optional[int] = ...) -> None: ...

class GameEvent(_message.Message):
    __slots__ = ("game", "position", "event")
    GAME_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    game: str
    position: int
    event: _game_pb2.Event
    def __init__(self, game: _Optional[str] = ..., position: _Optional[int] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ...) -> None: ...

class SubscribeAllResponse(_message.Message):
    __slots__ = ("event", "heartbeat", "caught_up")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    event: GameEvent
    heartbeat: Heartbeat
    caught_up: CaughtUp
    def __init__(self, event: _Optional[_Union[GameEvent, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., caught_up: _Optional[_Union[CaughtUp, _Mapping]] = ...) -> None: ...

class ExportGameRequest(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: str
    def __init__(self, game: _Optional[str] = ...) -> None: ...

class ExportedEvent(_message.Message):
    __slots__ = ("version", "json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    version: int
    json: str
    def __init__(self, version: _Optional[int] = ..., json: _Optional[str] = ...) -> None: ...

class ExportGameResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[ExportedEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[ExportedEvent, _Mapping]]] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("game", "version")
    GAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    game: str
    version: int
    def __init__(self, game: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class GetReplayResponse(_message.Message):
    __slots__ = ("version", "last_version", "event", "table", "seats")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    LAST_VERSION_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    version: int
    last_version: int
    event: _game_pb2.Event
    table: _game_pb2.View
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.View]
    def __init__(self, version: _Optional[int] = ..., last_version: _Optional[int] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ..., table: _Optional[_Union[_game_pb2.View, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[_game_pb2.View, _Mapping]]] = ...) -> None: ...

class RematchRequest(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: str
    def __init__(self, game: _Optional[str] = ...) -> None: ...

class RematchResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class Player(_message.Message):
    __slots__ = ("name", "display_name", "bot", "create_time", "ratings")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    name: str
    display_name: str
    bot: bool
    create_time: _timestamp_pb2.Timestamp
    ratings: _containers.RepeatedCompositeFieldContainer[Rating]
    def __init__(self, name: _Optional[str] = ..., display_name: _Optional[str] = ..., bot: _Optional[bool] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ratings: _Optional[_Iterable[_Union[Rating, _Mapping]]] = ...) -> None: ...

class Rating(_message.Message):
    __slots__ = ("ruleset", "rating", "uncertainty", "games", "wins")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    UNCERTAINTY_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    ruleset: _game_pb2.Ruleset
    rating: float
    uncertainty: float
    games: int
    wins: int
    def __init__(self, ruleset: _Optional[_Union[_game_pb2.Ruleset, str]] = ..., rating: _Optional[float] = ..., uncertainty: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ...) -> None: ...

class RegisterPlayerRequest(_message.Message):
    __slots__ = ("display_name", "bot")
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    display_name: str
    bot: bool
    def __init__(self, display_name: _Optional[str] = ..., bot: _Optional[bool] = ...) -> None: ...

class RegisterPlayerResponse(_message.Message):
    __slots__ = ("player", "player_token")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    player: Player
    player_token: str
    def __init__(self, player: _Optional[_Union[Player, _Mapping]] = ..., player_token: _Optional[str] = ...) -> None: ...

class GetPlayerRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetPlayerResponse(_message.Message):
    __slots__ = ("player",)
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    player: Player
    def __init__(self, player: _Optional[_Union[Player, _Mapping]] = ...) -> None: ...

class ListMyGamesRequest(_message.Message):
    __slots__ = ("player", "page_size")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    player: str
    page_size: int
    def __init__(self, player: _Optional[str] = ..., page_size: _Optional[int] = ...) -> None: ...

class PlayerGame(_message.Message):
    __slots__ = ("game", "seat", "seat_token", "your_turn", "turn_deadline")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    YOUR_TURN_FIELD_NUMBER: _ClassVar[int]
    TURN_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    seat: int
    seat_token: str
    your_turn: bool
    turn_deadline: _timestamp_pb2.Timestamp
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., your_turn: _Optional[bool] = ..., turn_deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListMyGamesResponse(_message.Message):
    __slots__ = ("games",)
    GAMES_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[PlayerGame]
    def __init__(self, games: _Optional[_Iterable[_Union[PlayerGame, _Mapping]]] = ...) -> None: ...

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("ruleset", "bots", "page_size", "page_token")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ruleset: _game_pb2.Ruleset
    bots: bool
    page_size: int
    page_token: str
    def __init__(self, ruleset: _Optional[_Union[_game_pb2.Ruleset, str]] = ..., bots: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class LeaderboardEntry(_message.Message):
    __slots__ = ("rank", "player", "rating")
    RANK_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    rank: int
    player: Player
    rating: Rating
    def __init__(self, rank: _Optional[int] = ..., player: _Optional[_Union[Player, _Mapping]] = ..., rating: _Optional[_Union[Rating, _Mapping]] = ...) -> None: ...

class GetLeaderboardResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[LeaderboardEntry]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[LeaderboardEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class FindMatchRequest(_message.Message):
    __slots__ = ("player", "options", "bot_fill", "bot_fill_after_seconds", "fill_levels")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    BOT_FILL_FIELD_NUMBER: _ClassVar[int]
    BOT_FILL_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FILL_LEVELS_FIELD_NUMBER: _ClassVar[int]
    player: str
    options: _game_pb2.GameOptions
    bot_fill: bool
    bot_fill_after_seconds: int
    fill_levels: _containers.RepeatedScalarFieldContainer[_game_pb2.BotLevel]
    def __init__(self, player: _Optional[str] = ..., options: _Optional[_Union[_game_pb2.GameOptions, _Mapping]] = ..., bot_fill: _Optional[bool] = ..., bot_fill_after_seconds: _Optional[int] = ..., fill_levels: _Optional[_Iterable[_Union[_game_pb2.BotLevel, str]]] = ...) -> None: ...

class MatchWaiting(_message.Message):
    __slots__ = ("players_queued", "waited_seconds", "rating_window")
    PLAYERS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    WAITED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RATING_WINDOW_FIELD_NUMBER: _ClassVar[int]
    players_queued: int
    waited_seconds: int
    rating_window: float
    def __init__(self, players_queued: _Optional[int] = ..., waited_seconds: _Optional[int] = ..., rating_window: _Optional[float] = ...) -> None: ...

class MatchFound(_message.Message):
    __slots__ = ("game", "seat", "seat_token")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    seat: int
    seat_token: str
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ...) -> None: ...

class FindMatchResponse(_message.Message):
    __slots__ = ("waiting", "found")
    WAITING_FIELD_NUMBER: _ClassVar[int]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    waiting: MatchWaiting
    found: MatchFound
    def __init__(self, waiting: _Optional[_Union[MatchWaiting, _Mapping]] = ..., found: _Optional[_Union[MatchFound, _Mapping]] = ...) -> None: ...
