import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from unoflip.v1 import cards_pb2 as _cards_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Ruleset(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RULESET_UNSPECIFIED: _ClassVar[Ruleset]
    RULESET_FLIP: _ClassVar[Ruleset]
    RULESET_CLASSIC: _ClassVar[Ruleset]

class Scoring(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_UNSPECIFIED: _ClassVar[Scoring]
    SCORING_STANDARD: _ClassVar[Scoring]
    SCORING_ALTERNATIVE: _ClassVar[Scoring]

class BotLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BOT_LEVEL_UNSPECIFIED: _ClassVar[BotLevel]
    BOT_LEVEL_RANDOM: _ClassVar[BotLevel]
    BOT_LEVEL_HEURISTIC: _ClassVar[BotLevel]
    BOT_LEVEL_EXPERT: _ClassVar[BotLevel]

class GameStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_STATUS_UNSPECIFIED: _ClassVar[GameStatus]
    GAME_STATUS_WAITING: _ClassVar[GameStatus]
    GAME_STATUS_PLAYING: _ClassVar[GameStatus]
    GAME_STATUS_FINISHED: _ClassVar[GameStatus]
    GAME_STATUS_ABANDONED: _ClassVar[GameStatus]
    GAME_STATUS_EXPIRED: _ClassVar[GameStatus]

class Awaiting(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AWAITING_UNSPECIFIED: _ClassVar[Awaiting]
    AWAITING_PLAY: _ClassVar[Awaiting]
    AWAITING_PLAY_OR_KEEP_DRAWN: _ClassVar[Awaiting]
    AWAITING_CHOOSE_COLOR: _ClassVar[Awaiting]
    AWAITING_PENALTY: _ClassVar[Awaiting]
    AWAITING_MATCH_OVER: _ClassVar[Awaiting]
    AWAITING_CHOOSE_SWAP: _ClassVar[Awaiting]

class Direction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIRECTION_UNSPECIFIED: _ClassVar[Direction]
    DIRECTION_CLOCKWISE: _ClassVar[Direction]
    DIRECTION_COUNTER_CLOCKWISE: _ClassVar[Direction]

class DrawCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRAW_CAUSE_UNSPECIFIED: _ClassVar[DrawCause]
    DRAW_CAUSE_TURN: _ClassVar[DrawCause]
    DRAW_CAUSE_PENALTY: _ClassVar[DrawCause]
    DRAW_CAUSE_FIRST_DISCARD: _ClassVar[DrawCause]
    DRAW_CAUSE_CHALLENGE: _ClassVar[DrawCause]
    DRAW_CAUSE_UNO_CAUGHT: _ClassVar[DrawCause]
    DRAW_CAUSE_FALSE_UNO: _ClassVar[DrawCause]
    DRAW_CAUSE_FALSE_CATCH: _ClassVar[DrawCause]
RULESET_UNSPECIFIED: Ruleset
RULESET_FLIP: Ruleset
RULESET_CLASSIC: Ruleset
SCORING_UNSPECIFIED: Scoring
SCORING_STANDARD: Scoring
SCORING_ALTERNATIVE: Scoring
BOT_LEVEL_UNSPECIFIED: BotLevel
BOT_LEVEL_RANDOM: BotLevel
BOT_LEVEL_HEURISTIC: BotLevel
BOT_LEVEL_EXPERT: BotLevel
GAME_STATUS_UNSPECIFIED: GameStatus
GAME_STATUS_WAITING: GameStatus
GAME_STATUS_PLAYING: GameStatus
GAME_STATUS_FINISHED: GameStatus
GAME_STATUS_ABANDONED: GameStatus
GAME_STATUS_EXPIRED: GameStatus
AWAITING_UNSPECIFIED: Awaiting
AWAITING_PLAY: Awaiting
AWAITING_PLAY_OR_KEEP_DRAWN: Awaiting
AWAITING_CHOOSE_COLOR: Awaiting
AWAITING_PENALTY: Awaiting
AWAITING_MATCH_OVER: Awaiting
AWAITING_CHOOSE_SWAP: Awaiting
DIRECTION_UNSPECIFIED: Direction
DIRECTION_CLOCKWISE: Direction
DIRECTION_COUNTER_CLOCKWISE: Direction
DRAW_CAUSE_UNSPECIFIED: DrawCause
DRAW_CAUSE_TURN: DrawCause
DRAW_CAUSE_PENALTY: DrawCause
DRAW_CAUSE_FIRST_DISCARD: DrawCause
DRAW_CAUSE_CHALLENGE: DrawCause
DRAW_CAUSE_UNO_CAUGHT: DrawCause
DRAW_CAUSE_FALSE_UNO: DrawCause
DRAW_CAUSE_FALSE_CATCH: DrawCause

class HouseRules(_message.Message):
    __slots__ = ("stacking", "jump_in", "seven_zero", "draw_to_match", "multi", "false_uno", "strict_wild_draw", "play_to_last")
    STACKING_FIELD_NUMBER: _ClassVar[int]
    JUMP_IN_FIELD_NUMBER: _ClassVar[int]
    SEVEN_ZERO_FIELD_NUMBER: _ClassVar[int]
    DRAW_TO_MATCH_FIELD_NUMBER: _ClassVar[int]
    MULTI_FIELD_NUMBER: _ClassVar[int]
    FALSE_UNO_FIELD_NUMBER: _ClassVar[int]
    STRICT_WILD_DRAW_FIELD_NUMBER: _ClassVar[int]
    PLAY_TO_LAST_FIELD_NUMBER: _ClassVar[int]
    stacking: bool
    jump_in: bool
    seven_zero: bool
    draw_to_match: bool
    multi: bool
    false_uno: bool
    strict_wild_draw: bool
    play_to_last: bool
    def __init__(self, stacking: _Optional[bool] = ..., jump_in: _Optional[bool] = ..., seven_zero: _Optional[bool] = ..., draw_to_match: _Optional[bool] = ..., multi: _Optional[bool] = ..., false_uno: _Optional[bool] = ..., strict_wild_draw: _Optional[bool] = ..., play_to_last: _Optional[bool] = ...) -> None: ...

class GameOptions(_message.Message):
    __slots__ = ("ruleset", "seats", "scoring", "target_score", "single_round", "house_rules", "turn_timer_seconds", "bot_seats", "first_dealer", "deck_order", "bot_level", "bot_think_ms", "rated")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    TARGET_SCORE_FIELD_NUMBER: _ClassVar[int]
    SINGLE_ROUND_FIELD_NUMBER: _ClassVar[int]
    HOUSE_RULES_FIELD_NUMBER: _ClassVar[int]
    TURN_TIMER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BOT_SEATS_FIELD_NUMBER: _ClassVar[int]
    FIRST_DEALER_FIELD_NUMBER: _ClassVar[int]
    DECK_ORDER_FIELD_NUMBER: _ClassVar[int]
    BOT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    BOT_THINK_MS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    ruleset: Ruleset
    seats: int
    scoring: Scoring
    target_score: int
    single_round: bool
    house_rules: HouseRules
    turn_timer_seconds: int
    bot_seats: _containers.RepeatedScalarFieldContainer[int]
    first_dealer: int
    deck_order: _containers.RepeatedScalarFieldContainer[int]
    bot_level: BotLevel
    bot_think_ms: int
    rated: bool
    def __init__(self, ruleset: _Optional[_Union[Ruleset, str]] = ..., seats: _Optional[int] = ..., scoring: _Optional[_Union[Scoring, str]] = ..., target_score: _Optional[int] = ..., single_round: _Optional[bool] = ..., house_rules: _Optional[_Union[HouseRules, _Mapping]] = ..., turn_timer_seconds: _Optional[int] = ..., bot_seats: _Optional[_Iterable[int]] = ..., first_dealer: _Optional[int] = ..., deck_order: _Optional[_Iterable[int]] = ..., bot_level: _Optional[_Union[BotLevel, str]] = ..., bot_think_ms: _Optional[int] = ..., rated: _Optional[bool] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "taken", "player_name", "played_by_server", "player", "bot_level")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYED_BY_SERVER_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    BOT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    taken: bool
    player_name: str
    played_by_server: bool
    player: str
    bot_level: BotLevel
    def __init__(self, seat: _Optional[int] = ..., taken: _Optional[bool] = ..., player_name: _Optional[str] = ..., played_by_server: _Optional[bool] = ..., player: _Optional[str] = ..., bot_level: _Optional[_Union[BotLevel, str]] = ...) -> None: ...

class Game(_message.Message):
    __slots__ = ("name", "options", "status", "seats", "version", "winners", "rematch", "invite_code")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    REMATCH_FIELD_NUMBER: _ClassVar[int]
    INVITE_CODE_FIELD_NUMBER: _ClassVar[int]
    name: str
    options: GameOptions
    status: GameStatus
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    version: int
    winners: _containers.RepeatedScalarFieldContainer[int]
    rematch: str
    invite_code: str
    def __init__(self, name: _Optional[str] = ..., options: _Optional[_Union[GameOptions, _Mapping]] = ..., status: _Optional[_Union[GameStatus, str]] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., version: _Optional[int] = ..., winners: _Optional[_Iterable[int]] = ..., rematch: _Optional[str] = ..., invite_code: _Optional[str] = ...) -> None: ...

class PlayCard(_message.Message):
    __slots__ = ("card", "color", "uno", "more_cards")
    CARD_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    UNO_FIELD_NUMBER: _ClassVar[int]
    MORE_CARDS_FIELD_NUMBER: _ClassVar[int]
    card: int
    color: _cards_pb2.Color
    uno: bool
    more_cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, card: _Optional[int] = ..., color: _Optional[_Union[_cards_pb2.Color, str]] = ..., uno: _Optional[bool] = ..., more_cards: _Optional[_Iterable[int]] = ...) -> None: ...

class DrawCard(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class KeepCard(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ChooseColor(_message.Message):
    __slots__ = ("color",)
    COLOR_FIELD_NUMBER: _ClassVar[int]
    color: _cards_pb2.Color
    def __init__(self, color: _Optional[_Union[_cards_pb2.Color, str]] = ...) -> None: ...

class AcceptPenalty(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Challenge(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CallUno(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CatchUno(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class SwapHands(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("play_card", "draw_card", "keep_card", "choose_color", "accept_penalty", "challenge", "call_uno", "catch_uno", "swap_hands")
    PLAY_CARD_FIELD_NUMBER: _ClassVar[int]
    DRAW_CARD_FIELD_NUMBER: _ClassVar[int]
    KEEP_CARD_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_COLOR_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_PENALTY_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_FIELD_NUMBER: _ClassVar[int]
    CALL_UNO_FIELD_NUMBER: _ClassVar[int]
    CATCH_UNO_FIELD_NUMBER: _ClassVar[int]
    SWAP_HANDS_FIELD_NUMBER: _ClassVar[int]
    play_card: PlayCard
    draw_card: DrawCard
    keep_card: KeepCard
    choose_color: ChooseColor
    accept_penalty: AcceptPenalty
    challenge: Challenge
    call_uno: CallUno
    catch_uno: CatchUno
    swap_hands: SwapHands
    def __init__(self, play_card: _Optional[_Union[PlayCard, _Mapping]] = ..., draw_card: _Optional[_Union[DrawCard, _Mapping]] = ..., keep_card: _Optional[_Union[KeepCard, _Mapping]] = ..., choose_color: _Optional[_Union[ChooseColor, _Mapping]] = ..., accept_penalty: _Optional[_Union[AcceptPenalty, _Mapping]] = ..., challenge: _Optional[_Union[Challenge, _Mapping]] = ..., call_uno: _Optional[_Union[CallUno, _Mapping]] = ..., catch_uno: _Optional[_Union[CatchUno, _Mapping]] = ..., swap_hands: _Optional[_Union[SwapHands, _Mapping]] = ...) -> None: ...

class PlayerView(_message.Message):
    __slots__ = ("seat", "card_count", "backs", "uno_exposed", "score", "out_place")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_COUNT_FIELD_NUMBER: _ClassVar[int]
    BACKS_FIELD_NUMBER: _ClassVar[int]
    UNO_EXPOSED_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    OUT_PLACE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card_count: int
    backs: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Face]
    uno_exposed: bool
    score: int
    out_place: int
    def __init__(self, seat: _Optional[int] = ..., card_count: _Optional[int] = ..., backs: _Optional[_Iterable[_Union[_cards_pb2.Face, _Mapping]]] = ..., uno_exposed: _Optional[bool] = ..., score: _Optional[int] = ..., out_place: _Optional[int] = ...) -> None: ...

class RoundResult(_message.Message):
    __slots__ = ("round", "winner", "hand_points", "points", "totals", "order")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    HAND_POINTS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    round: int
    winner: int
    hand_points: _containers.RepeatedScalarFieldContainer[int]
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    order: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, round: _Optional[int] = ..., winner: _Optional[int] = ..., hand_points: _Optional[_Iterable[int]] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., order: _Optional[_Iterable[int]] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("game", "version", "seat", "ruleset", "round", "dealer", "side", "direction", "color", "turn", "awaiting", "hand", "drawn_card", "players", "draw_count", "draw_top", "discard", "last_round", "winners", "legal_actions", "turn_deadline", "penalty_from", "then_turn", "pending_draw")
    GAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    AWAITING_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DRAW_COUNT_FIELD_NUMBER: _ClassVar[int]
    DRAW_TOP_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    LAST_ROUND_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TURN_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    PENALTY_FROM_FIELD_NUMBER: _ClassVar[int]
    THEN_TURN_FIELD_NUMBER: _ClassVar[int]
    PENDING_DRAW_FIELD_NUMBER: _ClassVar[int]
    game: str
    version: int
    seat: int
    ruleset: Ruleset
    round: int
    dealer: int
    side: _cards_pb2.Side
    direction: Direction
    color: _cards_pb2.Color
    turn: int
    awaiting: Awaiting
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    drawn_card: int
    players: _containers.RepeatedCompositeFieldContainer[PlayerView]
    draw_count: int
    draw_top: _cards_pb2.Face
    discard: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    last_round: RoundResult
    winners: _containers.RepeatedScalarFieldContainer[int]
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    turn_deadline: _timestamp_pb2.Timestamp
    penalty_from: int
    then_turn: int
    pending_draw: int
    def __init__(self, game: _Optional[str] = ..., version: _Optional[int] = ..., seat: _Optional[int] = ..., ruleset: _Optional[_Union[Ruleset, str]] = ..., round: _Optional[int] = ..., dealer: _Optional[int] = ..., side: _Optional[_Union[_cards_pb2.Side, str]] = ..., direction: _Optional[_Union[Direction, str]] = ..., color: _Optional[_Union[_cards_pb2.Color, str]] = ..., turn: _Optional[int] = ..., awaiting: _Optional[_Union[Awaiting, str]] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., drawn_card: _Optional[int] = ..., players: _Optional[_Iterable[_Union[PlayerView, _Mapping]]] = ..., draw_count: _Optional[int] = ..., draw_top: _Optional[_Union[_cards_pb2.Face, _Mapping]] = ..., discard: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., last_round: _Optional[_Union[RoundResult, _Mapping]] = ..., winners: _Optional[_Iterable[int]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., turn_deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., penalty_from: _Optional[int] = ..., then_turn: _Optional[int] = ..., pending_draw: _Optional[int] = ...) -> None: ...

class DealerDraw(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("version", "game_created", "dealer_chosen", "round_started", "starter_returned", "turn_started", "card_played", "color_chosen", "color_requested", "direction_reversed", "flipped", "cards_drawn", "drawn_card_kept", "reshuffled", "penalty_pending", "penalty_accepted", "challenged", "hand_shown", "uno_called", "uno_caught", "round_ended", "match_ended", "swap_requested", "hands_swapped", "hands_passed", "went_out", "match_abandoned", "lobby_expired")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    GAME_CREATED_FIELD_NUMBER: _ClassVar[int]
    DEALER_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    STARTER_RETURNED_FIELD_NUMBER: _ClassVar[int]
    TURN_STARTED_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    COLOR_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    COLOR_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_REVERSED_FIELD_NUMBER: _ClassVar[int]
    FLIPPED_FIELD_NUMBER: _ClassVar[int]
    CARDS_DRAWN_FIELD_NUMBER: _ClassVar[int]
    DRAWN_CARD_KEPT_FIELD_NUMBER: _ClassVar[int]
    RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    PENALTY_PENDING_FIELD_NUMBER: _ClassVar[int]
    PENALTY_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGED_FIELD_NUMBER: _ClassVar[int]
    HAND_SHOWN_FIELD_NUMBER: _ClassVar[int]
    UNO_CALLED_FIELD_NUMBER: _ClassVar[int]
    UNO_CAUGHT_FIELD_NUMBER: _ClassVar[int]
    ROUND_ENDED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    SWAP_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    HANDS_SWAPPED_FIELD_NUMBER: _ClassVar[int]
    HANDS_PASSED_FIELD_NUMBER: _ClassVar[int]
    WENT_OUT_FIELD_NUMBER: _ClassVar[int]
    MATCH_ABANDONED_FIELD_NUMBER: _ClassVar[int]
    LOBBY_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    version: int
    game_created: GameCreated
    dealer_chosen: DealerChosen
    round_started: RoundStarted
    starter_returned: StarterReturned
    turn_started: TurnStarted
    card_played: CardPlayed
    color_chosen: ColorChosen
    color_requested: ColorRequested
    direction_reversed: DirectionReversed
    flipped: Flipped
    cards_drawn: CardsDrawn
    drawn_card_kept: DrawnCardKept
    reshuffled: Reshuffled
    penalty_pending: PenaltyPending
    penalty_accepted: PenaltyAccepted
    challenged: Challenged
    hand_shown: HandShown
    uno_called: UnoCalled
    uno_caught: UnoCaught
    round_ended: RoundEnded
    match_ended: MatchEnded
    swap_requested: SwapRequested
    hands_swapped: HandsSwapped
    hands_passed: HandsPassed
    went_out: WentOut
    match_abandoned: MatchAbandoned
    lobby_expired: LobbyExpired
    def __init__(self, version: _Optional[int] = ..., game_created: _Optional[_Union[GameCreated, _Mapping]] = ..., dealer_chosen: _Optional[_Union[DealerChosen, _Mapping]] = ..., round_started: _Optional[_Union[RoundStarted, _Mapping]] = ..., starter_returned: _Optional[_Union[StarterReturned, _Mapping]] = ..., turn_started: _Optional[_Union[TurnStarted, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., color_chosen: _Optional[_Union[ColorChosen, _Mapping]] = ..., color_requested: _Optional[_Union[ColorRequested, _Mapping]] = ..., direction_reversed: _Optional[_Union[DirectionReversed, _Mapping]] = ..., flipped: _Optional[_Union[Flipped, _Mapping]] = ..., cards_drawn: _Optional[_Union[CardsDrawn, _Mapping]] = ..., drawn_card_kept: _Optional[_Union[DrawnCardKept, _Mapping]] = ..., reshuffled: _Optional[_Union[Reshuffled, _Mapping]] = ..., penalty_pending: _Optional[_Union[PenaltyPending, _Mapping]] = ..., penalty_accepted: _Optional[_Union[PenaltyAccepted, _Mapping]] = ..., challenged: _Optional[_Union[Challenged, _Mapping]] = ..., hand_shown: _Optional[_Union[HandShown, _Mapping]] = ..., uno_called: _Optional[_Union[UnoCalled, _Mapping]] = ..., uno_caught: _Optional[_Union[UnoCaught, _Mapping]] = ..., round_ended: _Optional[_Union[RoundEnded, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., swap_requested: _Optional[_Union[SwapRequested, _Mapping]] = ..., hands_swapped: _Optional[_Union[HandsSwapped, _Mapping]] = ..., hands_passed: _Optional[_Union[HandsPassed, _Mapping]] = ..., went_out: _Optional[_Union[WentOut, _Mapping]] = ..., match_abandoned: _Optional[_Union[MatchAbandoned, _Mapping]] = ..., lobby_expired: _Optional[_Union[LobbyExpired, _Mapping]] = ...) -> None: ...

class GameCreated(_message.Message):
    __slots__ = ("options",)
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    options: GameOptions
    def __init__(self, options: _Optional[_Union[GameOptions, _Mapping]] = ...) -> None: ...

class DealerChosen(_message.Message):
    __slots__ = ("draws", "dealer")
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    draws: _containers.RepeatedCompositeFieldContainer[DealerDraw]
    dealer: int
    def __init__(self, draws: _Optional[_Iterable[_Union[DealerDraw, _Mapping]]] = ..., dealer: _Optional[int] = ...) -> None: ...

class RoundStarted(_message.Message):
    __slots__ = ("round", "dealer", "hand", "players", "starter", "draw_count", "draw_top")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    DRAW_COUNT_FIELD_NUMBER: _ClassVar[int]
    DRAW_TOP_FIELD_NUMBER: _ClassVar[int]
    round: int
    dealer: int
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    players: _containers.RepeatedCompositeFieldContainer[PlayerView]
    starter: _cards_pb2.Card
    draw_count: int
    draw_top: _cards_pb2.Face
    def __init__(self, round: _Optional[int] = ..., dealer: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[PlayerView, _Mapping]]] = ..., starter: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., draw_count: _Optional[int] = ..., draw_top: _Optional[_Union[_cards_pb2.Face, _Mapping]] = ...) -> None: ...

class StarterReturned(_message.Message):
    __slots__ = ("card", "turned", "draw_top")
    CARD_FIELD_NUMBER: _ClassVar[int]
    TURNED_FIELD_NUMBER: _ClassVar[int]
    DRAW_TOP_FIELD_NUMBER: _ClassVar[int]
    card: int
    turned: _cards_pb2.Card
    draw_top: _cards_pb2.Face
    def __init__(self, card: _Optional[int] = ..., turned: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., draw_top: _Optional[_Union[_cards_pb2.Face, _Mapping]] = ...) -> None: ...

class TurnStarted(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("seat", "card", "color", "uno")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    UNO_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: _cards_pb2.Card
    color: _cards_pb2.Color
    uno: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., color: _Optional[_Union[_cards_pb2.Color, str]] = ..., uno: _Optional[bool] = ...) -> None: ...

class ColorChosen(_message.Message):
    __slots__ = ("seat", "color")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    seat: int
    color: _cards_pb2.Color
    def __init__(self, seat: _Optional[int] = ..., color: _Optional[_Union[_cards_pb2.Color, str]] = ...) -> None: ...

class ColorRequested(_message.Message):
    __slots__ = ("seat", "then_turn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    THEN_TURN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    then_turn: int
    def __init__(self, seat: _Optional[int] = ..., then_turn: _Optional[int] = ...) -> None: ...

class DirectionReversed(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SwapRequested(_message.Message):
    __slots__ = ("seat", "then_turn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    THEN_TURN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    then_turn: int
    def __init__(self, seat: _Optional[int] = ..., then_turn: _Optional[int] = ...) -> None: ...

class HandsSwapped(_message.Message):
    __slots__ = ("seat", "hand", "players")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    WITH_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    players: _containers.RepeatedCompositeFieldContainer[PlayerView]
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[PlayerView, _Mapping]]] = ..., **kwargs) -> None: ...

class WentOut(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class HandsPassed(_message.Message):
    __slots__ = ("hand", "players")
    HAND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    players: _containers.RepeatedCompositeFieldContainer[PlayerView]
    def __init__(self, hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[PlayerView, _Mapping]]] = ...) -> None: ...

class Flipped(_message.Message):
    __slots__ = ("players", "draw_top")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DRAW_TOP_FIELD_NUMBER: _ClassVar[int]
    players: _containers.RepeatedCompositeFieldContainer[PlayerView]
    draw_top: _cards_pb2.Face
    def __init__(self, players: _Optional[_Iterable[_Union[PlayerView, _Mapping]]] = ..., draw_top: _Optional[_Union[_cards_pb2.Face, _Mapping]] = ...) -> None: ...

class CardsDrawn(_message.Message):
    __slots__ = ("seat", "count", "cards", "backs", "cause", "draw_top")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    BACKS_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    DRAW_TOP_FIELD_NUMBER: _ClassVar[int]
    seat: int
    count: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    backs: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Face]
    cause: DrawCause
    draw_top: _cards_pb2.Face
    def __init__(self, seat: _Optional[int] = ..., count: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., backs: _Optional[_Iterable[_Union[_cards_pb2.Face, _Mapping]]] = ..., cause: _Optional[_Union[DrawCause, str]] = ..., draw_top: _Optional[_Union[_cards_pb2.Face, _Mapping]] = ...) -> None: ...

class DrawnCardKept(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Reshuffled(_message.Message):
    __slots__ = ("count", "draw_top")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    DRAW_TOP_FIELD_NUMBER: _ClassVar[int]
    count: int
    draw_top: _cards_pb2.Face
    def __init__(self, count: _Optional[int] = ..., draw_top: _Optional[_Union[_cards_pb2.Face, _Mapping]] = ...) -> None: ...

class PenaltyPending(_message.Message):
    __slots__ = ("seat", "card", "previous_color", "total")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_COLOR_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: int
    previous_color: _cards_pb2.Color
    total: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., previous_color: _Optional[_Union[_cards_pb2.Color, str]] = ..., total: _Optional[int] = ..., **kwargs) -> None: ...

class PenaltyAccepted(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Challenged(_message.Message):
    __slots__ = ("seat", "target", "guilty")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    GUILTY_FIELD_NUMBER: _ClassVar[int]
    seat: int
    target: int
    guilty: bool
    def __init__(self, seat: _Optional[int] = ..., target: _Optional[int] = ..., guilty: _Optional[bool] = ...) -> None: ...

class HandShown(_message.Message):
    __slots__ = ("seat", "to", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    to: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, seat: _Optional[int] = ..., to: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class UnoCalled(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class UnoCaught(_message.Message):
    __slots__ = ("seat", "by")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    seat: int
    by: int
    def __init__(self, seat: _Optional[int] = ..., by: _Optional[int] = ...) -> None: ...

class RoundEnded(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: RoundResult
    def __init__(self, result: _Optional[_Union[RoundResult, _Mapping]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("winners",)
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, winners: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchAbandoned(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LobbyExpired(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
