"""A small typed wrapper over the generated stubs: create or join a game, read the view, act,
and follow a seat's stream with automatic resume after a dropped connection."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from unoflip.v1 import cards_pb2, game_pb2, service_pb2, service_pb2_grpc

RULESETS = {"flip": game_pb2.RULESET_FLIP, "classic": game_pb2.RULESET_CLASSIC}
BOT_LEVELS = {
    "random": game_pb2.BOT_LEVEL_RANDOM,
    "heuristic": game_pb2.BOT_LEVEL_HEURISTIC,
    "expert": game_pb2.BOT_LEVEL_EXPERT,
}
HOUSE_RULES = (
    "stacking",
    "jump_in",
    "seven_zero",
    "draw_to_match",
    "multi",
    "false_uno",
    "strict_wild_draw",
    "play_to_last",
)

# Codes on which a stream is resumed rather than given up.
_RESUMABLE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


class UnoflipError(Exception):
    """A call the server refused or could not serve.

    `reason` is the server's stable UPPER_SNAKE code from its ErrorInfo detail (NOT_YOUR_TURN,
    CARD_NOT_IN_HAND, VERSION_MISMATCH, ...), or the gRPC code's name when there is none.
    `retry_after` is the wait in seconds the server asked for in a RetryInfo detail (rate
    limits), or None.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        metadata: dict[str, str],
        retry_after: float | None = None,
    ):
        super().__init__(f"{reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.metadata = metadata
        self.retry_after = retry_after

    @classmethod
    def from_rpc(cls, error: grpc.RpcError) -> UnoflipError:
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        message = error.details() if hasattr(error, "details") else str(error)
        reason, metadata, retry_after = code.name, {}, None
        try:
            status = rpc_status.from_call(error)  # type: ignore[arg-type]
        except (ValueError, AttributeError):
            status = None
        for detail in status.details if status else ():
            info = error_details_pb2.ErrorInfo()
            retry = error_details_pb2.RetryInfo()
            if detail.Unpack(info):
                reason, metadata = info.reason, dict(info.metadata)
            elif detail.Unpack(retry):
                retry_after = retry.retry_delay.ToTimedelta().total_seconds()
        return cls(code, reason, message or "", metadata, retry_after)


@dataclass(frozen=True)
class SeatToken:
    """A seat of a game and the secret that authorizes it; keep it to come back to the seat."""

    game: str
    seat: int
    token: str


@dataclass(frozen=True)
class PlayerToken:
    """A registered player (`players/{id}`) and the secret that acts as it; keep it to find the
    player's seats again on another device (`Client.my_games`)."""

    player: str
    token: str


def options(
    *,
    ruleset: str = "flip",
    seats: int = 4,
    bot_seats: Iterable[int] = (),
    bot_level: str = "heuristic",
    turn_timer_seconds: int = 0,
    single_round: bool = False,
    target_score: int = 0,
    alternative_scoring: bool = False,
    house_rules: Iterable[str] = (),
    deck_order: Iterable[int] = (),
    rated: bool = False,
) -> game_pb2.GameOptions:
    """Game options, checked for names the server does not know."""
    if ruleset not in RULESETS:
        raise ValueError(f"ruleset must be one of {sorted(RULESETS)}, not {ruleset!r}")
    if bot_level not in BOT_LEVELS:
        raise ValueError(f"bot_level must be one of {sorted(BOT_LEVELS)}, not {bot_level!r}")
    rules = {}
    for rule in house_rules:
        if rule not in HOUSE_RULES:
            raise ValueError(f"unknown house rule {rule!r}; known: {', '.join(HOUSE_RULES)}")
        rules[rule] = True
    return game_pb2.GameOptions(
        ruleset=RULESETS[ruleset],
        seats=seats,
        bot_seats=list(bot_seats),
        bot_level=BOT_LEVELS[bot_level],
        turn_timer_seconds=turn_timer_seconds,
        single_round=single_round,
        target_score=target_score,
        scoring=game_pb2.SCORING_ALTERNATIVE if alternative_scoring else game_pb2.SCORING_STANDARD,
        house_rules=game_pb2.HouseRules(**rules),
        deck_order=list(deck_order),
        rated=rated,
    )


class Client:
    """A connection to an unoflip server, e.g. `Client("127.0.0.1:50051")`."""

    def __init__(
        self,
        target: str = "127.0.0.1:50051",
        *,
        channel: grpc.Channel | None = None,
        retry_for: float = 15.0,
        tls: bool = False,
        root_certificates: bytes | None = None,
    ):
        """`retry_for`: seconds that calls safe to repeat (reads, and moves sent with an
        expected_version) are retried while the server is unreachable, e.g. restarting. Any
        call the server's rate limit turned away (it ran nothing) is sent again after the wait
        the server names, for as long. `tls`: talk TLS (a server with `--tls-cert`), trusting
        the system's CAs, or only `root_certificates` (PEM) when given."""
        self.target = target
        self.retry_for = retry_for
        if channel is None and (tls or root_certificates is not None):
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            channel = grpc.secure_channel(target, credentials)
        self.channel = channel or grpc.insecure_channel(target)
        self.stub = service_pb2_grpc.UnoFlipServiceStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method, request, token: str | None = None, *, retry: bool = False, timeout: float = 30.0):
        metadata = [("authorization", f"Bearer {token}")] if token else None
        started = time.monotonic()
        deadline = started + (self.retry_for if retry else 0.0)
        while True:
            try:
                return method(request, metadata=metadata, timeout=timeout)
            except grpc.RpcError as error:
                code = error.code()
                if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    # A rate limit refuses before anything runs: any call may be sent again,
                    # after the wait the server names, while that stays within retry_for.
                    refused = UnoflipError.from_rpc(error)
                    wait = refused.retry_after
                    if wait is None or time.monotonic() + wait > started + self.retry_for:
                        raise refused from None
                    time.sleep(max(wait, 0.001))
                    continue
                if code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise UnoflipError.from_rpc(error) from None
                time.sleep(0.1)

    def create_game(
        self,
        *,
        ruleset: str = "flip",
        seats: int = 4,
        bot_seats: Iterable[int] = (),
        bot_level: str = "heuristic",
        turn_timer_seconds: int = 0,
        single_round: bool = False,
        target_score: int = 0,
        alternative_scoring: bool = False,
        house_rules: Iterable[str] = (),
        deck_order: Iterable[int] = (),
        admin_token: str | None = None,
        rated: bool = False,
    ) -> game_pb2.Game:
        """Creates a game; returns it (its `name` is `games/{id}`, and `invite_code` is a short
        code `join` takes too)."""
        request = service_pb2.CreateGameRequest(
            options=options(
                ruleset=ruleset,
                seats=seats,
                bot_seats=bot_seats,
                bot_level=bot_level,
                turn_timer_seconds=turn_timer_seconds,
                single_round=single_round,
                target_score=target_score,
                alternative_scoring=alternative_scoring,
                house_rules=house_rules,
                deck_order=deck_order,
                rated=rated,
            )
        )
        return self._call(self.stub.CreateGame, request, admin_token).game

    def get_game(self, game: str) -> game_pb2.Game:
        return self._call(self.stub.GetGame, service_pb2.GetGameRequest(name=game), retry=True).game

    def list_games(self, *, open_only: bool = False) -> list[game_pb2.Game]:
        request = service_pb2.ListGamesRequest(open_only=open_only)
        return list(self._call(self.stub.ListGames, request, retry=True).games)

    def join(
        self, game: str, *, name: str = "", seat: int | None = None, player: PlayerToken | None = None
    ) -> Seat:
        """Takes a seat (the first open one unless `seat` is given) of `game`, a game's name or
        its invite code; as `player` if given (the seat is then found again by `my_games`)."""
        request = service_pb2.JoinGameRequest(
            game=game, player_name=name, seat=seat, player=player.player if player else ""
        )
        reply = self._call(self.stub.JoinGame, request, player.token if player else None)
        return Seat(self, SeatToken(reply.game.name, reply.seat, reply.seat_token))

    def register_player(self, name: str, *, bot: bool = False) -> PlayerToken:
        """Registers a player (`bot` for a program); keep the token: it is shown only once."""
        request = service_pb2.RegisterPlayerRequest(display_name=name, bot=bot)
        reply = self._call(self.stub.RegisterPlayer, request)
        return PlayerToken(reply.player.name, reply.player_token)

    def get_player(self, player: str) -> service_pb2.Player:
        """A player's profile and ratings."""
        request = service_pb2.GetPlayerRequest(name=player)
        return self._call(self.stub.GetPlayer, request, retry=True).player

    def my_games(self, player: PlayerToken, *, page_size: int = 0) -> list[tuple[game_pb2.Game, Seat]]:
        """The games `player` sat at, newest first, each with its seat."""
        request = service_pb2.ListMyGamesRequest(player=player.player, page_size=page_size)
        reply = self._call(self.stub.ListMyGames, request, player.token, retry=True)
        return [(g.game, Seat(self, SeatToken(g.game.name, g.seat, g.seat_token))) for g in reply.games]

    def leaderboard(
        self, *, ruleset: str = "flip", bots: bool = False, page_size: int = 0, page_token: str = ""
    ) -> service_pb2.GetLeaderboardResponse:
        """Rated players (or bots), best first."""
        request = service_pb2.GetLeaderboardRequest(
            ruleset=RULESETS[ruleset], bots=bots, page_size=page_size, page_token=page_token
        )
        return self._call(self.stub.GetLeaderboard, request, retry=True)

    def find_match(
        self,
        player: PlayerToken,
        *,
        bot_fill_after: float | None = None,
        fill_levels: Iterable[str] = (),
        on_wait=None,
        **game_options,
    ) -> Seat:
        """Quick play: waits for a game with these options (`options()`'s arguments) and returns
        the player's seat in it, started. With `bot_fill_after` (seconds), built-in bots at
        `fill_levels` take the seats nobody took after that wait. `on_wait(MatchWaiting)` is
        called with each report of the wait."""
        for level in fill_levels:
            if level not in BOT_LEVELS:
                raise ValueError(f"fill level must be one of {sorted(BOT_LEVELS)}, not {level!r}")
        request = service_pb2.FindMatchRequest(
            player=player.player,
            options=options(**game_options),
            bot_fill=bot_fill_after is not None,
            bot_fill_after_seconds=int(bot_fill_after or 0),
            fill_levels=[BOT_LEVELS[level] for level in fill_levels],
        )
        metadata = [("authorization", f"Bearer {player.token}")]
        started = time.monotonic()
        while True:
            heard = False
            try:
                for message in self.stub.FindMatch(request, metadata=metadata):
                    heard = True
                    if message.WhichOneof("update") == "found":
                        found = message.found
                        return Seat(self, SeatToken(found.game.name, found.seat, found.seat_token))
                    if on_wait is not None:
                        on_wait(message.waiting)
                break
            except grpc.RpcError as error:
                refused = UnoflipError.from_rpc(error)
                # Turned away by the rate limit before anything ran: asked again after the wait
                # the server names, as `_call` does, while that stays within retry_for.
                wait = refused.retry_after
                if (
                    heard
                    or error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED
                    or wait is None
                    or time.monotonic() + wait > started + self.retry_for
                ):
                    raise refused from None
                time.sleep(max(wait, 0.001))
        raise UnoflipError(grpc.StatusCode.UNAVAILABLE, "MATCH_NOT_FOUND", "the stream ended", {})

    def replay(self, game: str, version: int) -> service_pb2.GetReplayResponse:
        """A finished game after its event `version` (1 to the last): the event, the table as a
        spectator saw it, and every seat's view with its hand (`seats`)."""
        request = service_pb2.GetReplayRequest(game=game, version=version)
        return self._call(self.stub.GetReplay, request, retry=True)

    def seat(self, token: SeatToken) -> Seat:
        """Comes back to a seat joined earlier (after a restart of the program, say)."""
        return Seat(self, token)

    def spectate(self, game: str) -> Seat:
        """Watches a game as a spectator: view and stream only."""
        return Seat(self, SeatToken(game, -1, ""))


class Seat:
    """One seat of one game, as its player acts and sees it."""

    def __init__(self, client: Client, token: SeatToken):
        self.client = client
        self.token = token

    @property
    def game(self) -> str:
        return self.token.game

    @property
    def number(self) -> int:
        return self.token.seat

    def _call(self, method, request, *, retry: bool = False):
        return self.client._call(method, request, self.token.token or None, retry=retry)

    def start(self) -> game_pb2.Game:
        """Deals the first round (every seat must be taken)."""
        return self._call(self.client.stub.StartGame, service_pb2.StartGameRequest(game=self.game)).game

    def view(self) -> game_pb2.View:
        """The table as this seat sees it, with its legal actions."""
        return self._call(self.client.stub.GetView, service_pb2.GetViewRequest(game=self.game), retry=True).view

    def rematch(self) -> game_pb2.Game:
        """The rematch of this finished game (same options and bots), waiting for its players:
        created by the first to ask, the same game for the others. Join it with Client.join."""
        return self._call(self.client.stub.Rematch, service_pb2.RematchRequest(game=self.game)).game

    def leave(self) -> game_pb2.Game:
        """Leaves the seat; the server plays it from then on."""
        return self._call(self.client.stub.LeaveGame, service_pb2.LeaveGameRequest(game=self.game)).game

    def act(
        self,
        action: game_pb2.Action,
        *,
        expected_version: int | None = None,
        request_id: str | None = None,
    ) -> service_pb2.SubmitActionResponse:
        """Makes a move. A retry with the same `request_id` is answered once; with
        `expected_version`, the move is refused (VERSION_MISMATCH) if the game has moved on."""
        request = service_pb2.SubmitActionRequest(
            game=self.game,
            action=action,
            request_id=request_id or uuid.uuid4().hex,
            expected_version=expected_version,
        )
        # A move that names its expected version is safe to send again: if the first attempt
        # went through, the retry is refused with VERSION_MISMATCH.
        return self._call(self.client.stub.SubmitAction, request, retry=expected_version is not None)

    def events(
        self,
        *,
        after: int = 0,
        include_view: bool = False,
        resume_for: float = 30.0,
        heartbeats: bool = False,
    ) -> Iterator[service_pb2.SubscribeResponse]:
        """The seat's stream: events after `after`, then live ones, with `view`, `caught_up` and
        `prompt` messages (and `lobby`, the game with its seats, while it waits for players). When the connection drops (or the server restarts), it reconnects from
        the last event received, so the events come without gap or duplicate; it gives up with
        UnoflipError after `resume_for` seconds without a connection."""
        last = after
        want_view = include_view
        down_since: float | None = None
        while True:
            request = service_pb2.SubscribeRequest(game=self.game, after_version=last, include_view=want_view)
            metadata = [("authorization", f"Bearer {self.token.token}")] if self.token.token else None
            call = self.client.stub.Subscribe(request, metadata=metadata)
            try:
                for message in call:
                    down_since = None
                    kind = message.WhichOneof("kind")
                    if kind == "event":
                        if message.event.version <= last:
                            continue
                        last = message.event.version
                    elif kind == "view":
                        want_view = False
                        last = max(last, message.view.version)
                    elif kind == "heartbeat" and not heartbeats:
                        continue
                    yield message
                return
            except grpc.RpcError as error:
                if error.code() not in _RESUMABLE:
                    raise UnoflipError.from_rpc(error) from None
                now = time.monotonic()
                down_since = down_since or now
                if now - down_since > resume_for:
                    raise UnoflipError.from_rpc(error) from None
                time.sleep(0.1)
            finally:
                call.cancel()


def play(
    card: int | cards_pb2.Card, color: int = 0, uno: bool = False, more: tuple[int | cards_pb2.Card, ...] = ()
) -> game_pb2.Action:
    """The action that plays `card` (with a declared `color` for a wild), and under H-MULTI the
    identical cards `more` after it."""

    def card_id(c: int | cards_pb2.Card) -> int:
        return c if isinstance(c, int) else c.id

    return game_pb2.Action(
        play_card=game_pb2.PlayCard(card=card_id(card), color=color, uno=uno, more_cards=[card_id(m) for m in more])
    )


def draw() -> game_pb2.Action:
    return game_pb2.Action(draw_card=game_pb2.DrawCard())


def keep() -> game_pb2.Action:
    return game_pb2.Action(keep_card=game_pb2.KeepCard())


def choose_color(color: int) -> game_pb2.Action:
    return game_pb2.Action(choose_color=game_pb2.ChooseColor(color=color))


def accept() -> game_pb2.Action:
    return game_pb2.Action(accept_penalty=game_pb2.AcceptPenalty())


def challenge() -> game_pb2.Action:
    return game_pb2.Action(challenge=game_pb2.Challenge())


def call_uno() -> game_pb2.Action:
    return game_pb2.Action(call_uno=game_pb2.CallUno())


def catch(seat: int) -> game_pb2.Action:
    return game_pb2.Action(catch_uno=game_pb2.CatchUno(seat=seat))
