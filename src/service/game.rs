//! One live game: a task that owns it. It holds the game's record (seats, tokens), its state, its
//! log tail, its request-id answers, its turn clock and its scheduled server moves, and takes
//! [`Command`]s over a channel, answering each on a oneshot. Nothing else touches the game.
//!
//! A move is decided on the current state, appended to the store with the version it expects, and
//! only then applied and answered: a failed append changes nothing. Because the task, not the
//! caller, runs the whole move, a caller that goes away (a cancelled request) can never leave
//! memory behind the store. Time-outs, the server's own moves (bot seats, seats whose player
//! left), lobby expiry, abandonment and unloading are branches of the same loop. On a shared
//! store the task also follows its game: told that the store moved on, it reads and folds what
//! other servers appended, and its streams see those events.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::bots;
use crate::rules::{
    Action, Event, Game, Phase, Seat, SeenEvent, View, Viewer, decide, project, project_lobby,
};
use crate::store::{EventStore, StoreError};

use super::error::ServiceError;
use super::lobby::{GameInfo, Lobby, SeatState, Status, TokenHash, hash, new_token};
use super::log::EventLog;
use super::mailbox;
use super::metrics::Metrics;
use super::players::{self, Players};
use super::ratings;
use super::registry::Registry;
use super::signal;

/// Answers kept in memory per game for retried `request_id`s (older ones come from the store).
const REQUESTS_IN_MEMORY: usize = 1024;

/// Tries of a move that lost the race for the store against another server.
const CONFLICT_RETRIES: usize = 5;

/// Server moves in a row without a bot delay: the server's seats play on at once, before the
/// next command is answered, until a person is to move or the game is over (this many at most,
/// then the clock goes on with them).
const SERVER_MOVES_PER_TURN: usize = 100_000;

/// The lifecycle settings of games.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    /// How long a server-played seat waits before each move.
    pub bot_delay: Duration,
    /// How long a finished game stays in memory.
    pub keep_finished: Duration,
    /// How long a lobby may wait to be started.
    pub lobby_ttl: Duration,
    /// How long a started game may go with no move but the server's.
    pub abandon_after: Duration,
    /// How long a searching bot thinks per move when its game does not say.
    pub bot_think: Duration,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            bot_delay: Duration::ZERO,
            keep_finished: Duration::from_secs(600),
            lobby_ttl: Duration::from_secs(3600),
            abandon_after: Duration::from_secs(600),
            bot_think: bots::DEFAULT_THINK,
        }
    }
}

type Reply<T> = oneshot::Sender<Result<T, ServiceError>>;

/// What a caller asks of a game.
pub(crate) enum Command {
    /// The game's description.
    Describe { reply: Reply<GameInfo> },
    /// The seat a token holds (refused once its player left).
    SeatOf {
        token: TokenHash,
        reply: Reply<Seat>,
    },
    /// Takes a seat (the first open one when `None`).
    Join {
        seat: Option<usize>,
        name: String,
        player: Option<Joining>,
        reply: Reply<(Seat, String, GameInfo)>,
    },
    /// Deals the first round.
    Start { reply: Reply<GameInfo> },
    /// A seat's move.
    Submit {
        token: TokenHash,
        action: Action,
        request_id: String,
        expected_version: Option<u64>,
        reply: Reply<Submitted>,
    },
    /// The seat leaves; the server plays it from then on.
    Leave {
        token: TokenHash,
        reply: Reply<GameInfo>,
    },
    /// A viewer's view and the turn deadline.
    View {
        viewer: Viewer,
        reply: Reply<(View, Option<Instant>)>,
    },
    /// What a stream needs to go on from `after`.
    Read {
        after: u64,
        /// The stream has no state yet: the latest snapshot is wanted.
        with_base: bool,
        reply: Reply<Tail>,
    },
    /// Links the game that follows this finished one; answers the linked game (an earlier link
    /// stays).
    LinkRematch { name: String, reply: Reply<String> },
    /// The whole log.
    Export {
        admin: bool,
        reply: Reply<Vec<Event>>,
    },
}

/// A registered player taking a seat: its name and (checked) token, from which the seat token
/// is derived.
pub(crate) struct Joining {
    /// `players/{id}`.
    pub player: String,
    /// The player token.
    pub token: String,
    /// Where the player's games are listed.
    pub players: Players,
}

/// A move's answer: the game's version after it, and its events as the seat saw them.
#[derive(Clone, Debug)]
pub struct Submitted {
    /// The version after the move.
    pub version: u64,
    /// `(version, event)` for each event of the move, as the seat saw it.
    pub events: Vec<(u64, SeenEvent)>,
}

/// What a stream reads from the task.
pub(crate) struct Tail {
    /// The game's version.
    pub version: u64,
    /// The events after the stream's cursor, if the task holds them (else the store has them).
    pub events: Option<Vec<Event>>,
    /// The latest snapshot the task holds, its version and state, when asked for. Boxed, as the
    /// record: a tail is moved several times on its way to the stream.
    pub base: Option<Box<(u64, Game)>>,
    /// The record, when reading from the start (the first event shows the game's options).
    pub lobby: Option<Box<Lobby>>,
    /// The turn deadline.
    pub deadline: Option<Instant>,
}

/// A handle on a live game's task.
#[derive(Clone)]
pub(crate) struct GameRef {
    /// `games/{id}`.
    pub name: Arc<str>,
    /// Boxed: a command is large, and a queue slot is the size of what it holds.
    commands: mailbox::Sender<Box<Command>>,
    /// The number of events in the log; streams wait on it. A change of the lobby (a seat taken
    /// or left) notifies it too, with the number as it was: one signal instead of two, and
    /// waiting rooms' streams wait on it.
    pub version: signal::Receiver,
    /// The store's latest known version of the game, which the registry raises on another
    /// server's append ([`UNKNOWN_VERSION`] when the store could not say which game moved);
    /// `None` when the store has no other writer (memory, SQLite), which spares every game a
    /// channel.
    pub store_version: Option<Arc<signal::Sender>>,
    /// Where the game is found again once this task has left memory.
    registry: Weak<Registry>,
}

impl GameRef {
    /// Sends `make(reply)` to the task and waits for its answer. The task finishes the command
    /// whether or not this caller is still waiting. A task answers every command it took before
    /// it left memory; one that finds it gone hands the command to the game's next task, loaded
    /// from the store (the game was found just as its keep time ran out).
    pub async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, ServiceError> {
        let (reply, answer) = oneshot::channel();
        if let Err(command) = self.send(Box::new(make(reply))).await {
            let registry = self.registry.upgrade().ok_or(ServiceError::Stopping)?;
            registry.deliver(&self.name, command).await?;
        }
        answer.await.map_err(|_| ServiceError::Stopping)?
    }

    /// Hands `command` to this task, or gives it back if the task has left memory.
    pub(crate) async fn send(&self, command: Box<Command>) -> Result<(), Box<Command>> {
        self.commands.send(command).await
    }

    /// Whether the task has stopped.
    pub fn is_closed(&self) -> bool {
        self.commands.is_closed()
    }
}

/// What the registry and every game's task share: one copy per server, made by the registry,
/// which each task holds through one pointer (six fields of their own would cost every live
/// game's task 64 bytes more).
pub(crate) struct Hooks {
    /// The store every game appends to.
    pub store: Arc<dyn EventStore>,
    /// How long games wait, think and stay.
    pub lifecycle: Lifecycle,
    /// Counts appends, this server's and (for a shared store) other servers'; firehose streams
    /// wait on it, then read the store.
    pub appended: Arc<watch::Sender<u64>>,
    /// The server's metrics.
    pub metrics: Arc<Metrics>,
    /// Registered players, invite codes, and where a rated game's outcome goes.
    pub players: Players,
    /// The registry, which loads a game again once its task has stopped.
    pub registry: Weak<Registry>,
}

/// The game's state inside its task.
struct Live {
    name: Arc<str>,
    /// The server's store, settings, metrics, players and registry.
    hooks: Arc<Hooks>,
    /// This task's registration in the registry: the task tells it whether its lobby is open
    /// and when it stops.
    seq: u64,
    /// What the registry was told last: the lobby has an open seat ([`Registry::set_open`]).
    listed_open: bool,
    lobby: Lobby,
    game: Option<Game>,
    log: EventLog,
    // No generator of its own: shuffles and bots draw from the thread's CSPRNG (`rand::rng()`,
    // ChaCha, reseeded from the OS), which spares every idle game 320 bytes.
    /// Made at the first request id, and boxed: the task of a game that never had one is smaller
    /// by the maps' 96 bytes (an empty map does not allocate, but is as large inline).
    requests: Option<Box<Requests>>,
    /// Whether the store may hold request ids of this game that `requests` does not have: the
    /// task was started with events already stored (after a restart, or once a finished game is
    /// asked for again) and has not needed them yet, or reading another server's failed.
    requests_unread: bool,
    /// When the seat to move runs out of time.
    deadline: Option<Instant>,
    /// When the server's seat to move plays (with a bot delay).
    bot_at: Option<Instant>,
    /// The last move by a person's seat (or the start).
    last_person: Instant,
    /// When the task stops: a finished game's keep time.
    unload_at: Option<Instant>,
    /// When a lobby nobody started expires (its TTL counts from its creation, across restarts).
    lobby_ends: Instant,
    version: signal::Sender,
    /// The task's mailbox. (The store's version of the game, which the task follows on a
    /// shared store, is the run loop's alone.)
    commands: mailbox::Receiver<Box<Command>>,
    /// A searching bot's move being thought on a blocking thread; the game goes on answering
    /// commands meanwhile, and plays the answer if nothing moved in between. Boxed: most games
    /// never have one.
    search: Option<Box<Search>>,
}

/// The request ids a game's task knows. One it does not know is new and needs no read: the
/// store is asked only for a retry whose answer the task forgot. (A request another server made
/// that this task has not read yet meets a conflict when it commits: the task reads that
/// server's moves and their ids, and asks again.)
#[derive(Default)]
struct Requests {
    /// The last answers, [`REQUESTS_IN_MEMORY`] at most.
    answers: HashMap<String, Submitted>,
    /// The other ids the store holds, by [`request_hash`]: answers forgotten to stay small, and
    /// ids read from the store (made before a restart, or on another server). One in 2^64 new
    /// ids has the hash of an old one, and costs a lookup that finds nothing.
    stored: HashSet<u64>,
}

/// A request id's hash for [`Requests::stored`], keyed at random once per process so that a
/// client cannot choose ids that collide.
fn request_hash(key: &str) -> u64 {
    static KEYS: std::sync::LazyLock<std::hash::RandomState> =
        std::sync::LazyLock::new(std::hash::RandomState::new);
    std::hash::BuildHasher::hash_one(&*KEYS, key)
}

/// A bot's search under way: for which seat, from which version, and where its answer comes.
struct Search {
    seat: Seat,
    version: u64,
    answer: oneshot::Receiver<Option<Action>>,
}

/// Starts the task of a game from its record and its log; returns its handle.
pub(crate) fn spawn(
    name: &str,
    hooks: &Arc<Hooks>,
    seq: u64,
    lobby: Lobby,
    log: EventLog,
    first: &mut Option<Box<Command>>,
) -> Result<GameRef, String> {
    let game = fold(&log)?;
    let mut lobby = lobby;
    if game.is_none() && log.since(0).is_some_and(|l| !l.is_empty()) {
        // The log is a `LobbyExpired` event (its record may not say so if the server stopped
        // in between).
        lobby.expired = true;
    }
    let (commands, receiver) = mailbox::channel(256);
    if let Some(command) = first.take() {
        // The channel is new and empty: this cannot fail, and if it did the command would come
        // back to its caller.
        if let Err(refused) = commands.try_send(command) {
            *first = Some(refused);
        }
    }
    let version = signal::channel(log.len()).0;
    let store_version = hooks
        .store
        .shared()
        .then(|| Arc::new(signal::channel(log.len()).0));
    let name: Arc<str> = Arc::from(name);
    let handle = GameRef {
        name: name.clone(),
        commands,
        version: version.subscribe(),
        store_version: store_version.clone(),
        registry: hooks.registry.clone(),
    };
    let now = Instant::now();
    let lobby_ends = lobby_ends(&lobby, hooks.lifecycle.lobby_ttl, now);
    let requests_unread = log.len() > 0;
    let mut live = Live {
        name,
        hooks: hooks.clone(),
        seq,
        lobby,
        game,
        log,
        requests_unread,
        requests: None,
        deadline: None,
        bot_at: None,
        last_person: now,
        unload_at: None,
        lobby_ends,
        version,
        commands: receiver,
        // As the registry assumes until told otherwise.
        listed_open: true,
        search: None,
    };
    if live.status() == Status::Playing {
        live.deadline = live.lobby.timer.map(|t| now + t);
    }
    tokio::spawn(async move {
        live.run(store_version.as_ref().map(|v| v.subscribe()))
            .await;
        if let Some(registry) = live.hooks.registry.upgrade() {
            registry.forget(&live.name, live.seq);
        }
    });
    Ok(handle)
}

/// What a stream at `after` needs to go on (see [`Live::read`]), from the task's log, lobby and
/// turn deadline.
fn tail(
    log: &EventLog,
    lobby: &Lobby,
    deadline: Option<Instant>,
    after: u64,
    with_base: bool,
) -> Tail {
    Tail {
        version: log.len(),
        events: log.since(after).map(<[Event]>::to_vec),
        base: match log.base() {
            (v, Some(state)) if with_base => Some(Box::new((v, state.clone()))),
            _ => None,
        },
        lobby: (after == 0).then(|| Box::new(lobby.clone())),
        deadline,
    }
}

/// Waits for the store to do `work` for the task (an append), answering meanwhile the streams'
/// reads that come, from what the task holds: committed events only, since `work`'s are applied
/// after it. A durable store takes a commit's time (milliseconds) to append, and the next move
/// would otherwise hold up every stream that had not yet read the last one: a stream that the
/// scheduler woke after the next seat had already moved got the event that much later than its
/// move's acknowledgement. Every other command waits its turn.
async fn answering_reads<T>(
    commands: &mut mailbox::Receiver<Box<Command>>,
    log: &EventLog,
    lobby: &Lobby,
    deadline: Option<Instant>,
    work: impl Future<Output = T>,
) -> T {
    let mut work = std::pin::pin!(work);
    loop {
        tokio::select! {
            biased;
            done = &mut work => return done,
            command = commands.take_first(|c| matches!(**c, Command::Read { .. })) => {
                if let Command::Read { after, with_base, reply } = *command {
                    let _ = reply.send(Ok(tail(log, lobby, deadline, after, with_base)));
                }
            }
        }
    }
}

/// What [`GameRef::store_version`] says when the store moved on without saying which game or
/// how far: every game reads the store again.
pub(crate) const UNKNOWN_VERSION: u64 = u64::MAX;

/// Waits for a change of `version`; never, if there is none to follow. The wait is boxed: most
/// games follow nothing (their store has no other writer), and every game's task would hold its
/// 120 bytes otherwise.
async fn changed_or_never(version: Option<&mut signal::Receiver>) -> Result<(), signal::Closed> {
    match version {
        Some(version) => Box::pin(version.changed()).await,
        None => std::future::pending().await,
    }
}

/// When a lobby created at `lobby.created_unix` expires, as an instant on this machine's clock.
fn lobby_ends(lobby: &Lobby, ttl: Duration, now: Instant) -> Instant {
    let age = super::lobby::now_unix().saturating_sub(lobby.created_unix);
    now + ttl.saturating_sub(Duration::from_secs(age))
}

/// The state a log leads to (`None` before the first event, or for an expired lobby's log).
fn fold(log: &EventLog) -> Result<Option<Game>, String> {
    match (log.base(), log.since(log.base().0)) {
        ((_, None), Some([Event::LobbyExpired, ..])) => Ok(None),
        ((_, Some(state)), Some(tail)) => {
            let mut game = state.clone();
            for event in tail {
                game.apply(event);
            }
            Ok(Some(game))
        }
        (_, Some([]) | None) => Ok(None),
        (_, Some(all)) => Game::replay(all).map(Some).map_err(|e| e.to_string()),
    }
}

/// What the server does when a seat's turn timer runs out (SERVICE.md): take a pending penalty
/// without challenging, or draw a card and keep it (declaring a color if one is asked for).
pub fn timeout_move(game: &Game) -> Option<Action> {
    let seat = game.turn();
    let legal = game.legal_actions(seat);
    match game.phase() {
        Phase::Penalty(_) => Some(Action::Accept),
        Phase::Play => Some(Action::Draw),
        Phase::PlayDrawn { .. } => Some(Action::Keep),
        Phase::ChooseColor { .. } => legal
            .into_iter()
            .find(|a| matches!(a, Action::ChooseColor { .. })),
        Phase::ChooseSwap { .. } => legal.into_iter().find(|a| matches!(a, Action::Swap { .. })),
        Phase::MatchOver => None,
    }
}

/// Who makes a move: a person's seat, or the server (a bot, a time-out, the lifecycle).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mover {
    Person(Seat),
    Server,
}

impl Live {
    fn status(&self) -> Status {
        Status::of(&self.lobby, self.game.as_ref())
    }

    fn info(&self) -> GameInfo {
        GameInfo {
            name: self.name.to_string(),
            lobby: self.lobby.clone(),
            status: self.status(),
            version: self.log.len(),
            winners: self
                .game
                .as_ref()
                .map(|g| g.winners().to_vec())
                .unwrap_or_default(),
        }
    }

    /// The loop: commands, the store moving on, and the clock, until the game leaves memory.
    async fn run(&mut self, mut store_version: Option<signal::Receiver>) {
        let mut following = store_version.is_some();
        // The clock, armed for the next wake while there is one. Boxed: a game with nothing due
        // would hold a timer's 112 bytes in its task otherwise.
        let mut clock: Option<Pin<Box<tokio::time::Sleep>>> = None;
        Box::pin(self.settle()).await;
        loop {
            if self.gone() {
                // No command is taken from now on (a caller finds the game's next task); those
                // already taken are answered. A sender gets its command back from the close
                // on, so the queue holds all there is to answer.
                self.commands.close();
                while let Some(command) = self.commands.recv().await {
                    Box::pin(self.handle(*command)).await;
                }
                return;
            }
            // The clock moves only when the next wake comes sooner than it is set for, or once
            // it went off: a later wake (a person's move puts off the abandon time, a new turn's
            // deadline) is met by waking early, finding nothing due, and setting it again. Every
            // command would otherwise register a timer and take it back.
            match (self.next_wake(), clock.as_mut()) {
                (None, _) => clock = None,
                (Some(at), Some(set)) if !set.is_elapsed() && set.deadline() <= at => {}
                (Some(at), Some(set)) => set.as_mut().reset(at),
                (Some(at), None) => clock = Some(Box::pin(tokio::time::sleep_until(at))),
            }
            let sleep = async {
                match clock.as_mut() {
                    Some(set) => set.as_mut().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                command = self.commands.recv() => match command {
                    Some(command) => Box::pin(self.handle(*command)).await,
                    // The registry forgot this game: nobody can reach it any more.
                    None => return,
                },
                changed = changed_or_never(store_version.as_mut()), if following => {
                    if changed.is_ok() {
                        let announced = store_version
                            .as_mut()
                            .map_or(0, signal::Receiver::get_and_update);
                        // What the task holds already (its own appends are announced too)
                        // needs no read. What is past it does, even when it was announced
                        // while the task was committing a move of its own.
                        if announced > self.log.len() {
                            Box::pin(self.catch_up()).await;
                        }
                    } else {
                        following = false;
                    }
                }
                () = sleep => Box::pin(self.on_clock()).await,
                answer = async {
                    match self.search.as_mut() {
                        Some(search) => (&mut search.answer).await,
                        None => std::future::pending().await,
                    }
                } => Box::pin(self.on_search(answer)).await,
            }
            Box::pin(self.settle()).await;
        }
    }

    /// Whether the task is done: a game over (or a lobby expired) past its keep time.
    fn gone(&self) -> bool {
        self.unload_at.is_some_and(|at| at <= Instant::now())
    }

    /// The next time something is due.
    fn next_wake(&self) -> Option<Instant> {
        let lobby_end = (self.status() == Status::Waiting).then_some(self.lobby_ends);
        let abandon = (self.status() == Status::Playing && !self.lobby.all_bots())
            .then(|| self.last_person + self.hooks.lifecycle.abandon_after);
        [
            self.deadline,
            self.bot_at,
            lobby_end,
            abandon,
            self.unload_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// After anything happened: plays the server's seats that are due, schedules the next, and
    /// sets the keep time of a game that is over.
    async fn settle(&mut self) {
        let open = self.status().open(&self.lobby);
        if open != self.listed_open
            && let Some(registry) = self.hooks.registry.upgrade()
        {
            registry.set_open(self.seq, open);
            self.listed_open = open;
        }
        if self.search.is_some() {
            // A bot is thinking: its answer is the next server move.
            self.bot_at = None;
        } else if self.server_seat_to_move().is_none() {
            self.bot_at = None;
        } else if self.hooks.lifecycle.bot_delay.is_zero() {
            for _ in 0..SERVER_MOVES_PER_TURN {
                match self.server_step().await {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        tracing::warn!(game = %self.name, error = %e, "server move failed");
                        // Try again shortly rather than spin.
                        self.bot_at = Some(Instant::now() + Duration::from_millis(100));
                        return;
                    }
                }
            }
            // Still more to play: let waiting commands in first, then go on at once (unless a
            // bot is thinking, which wakes the task when it answers).
            self.bot_at = self
                .server_seat_to_move()
                .filter(|_| self.search.is_none())
                .map(|_| Instant::now());
        } else if self.bot_at.is_none() {
            self.bot_at = Some(Instant::now() + self.hooks.lifecycle.bot_delay);
        }
        if self.status().is_final() {
            self.deadline = None;
            self.bot_at = None;
            if self.unload_at.is_none() {
                self.unload_at = Some(Instant::now() + self.hooks.lifecycle.keep_finished);
                if let Some(code) = &self.lobby.invite_code
                    && let Err(e) = self.hooks.players.forget_code(code, &self.name).await
                {
                    tracing::warn!(game = %self.name, error = %e, "could not free the invite code");
                }
            }
        }
    }

    /// Something on the clock is due.
    async fn on_clock(&mut self) {
        let now = Instant::now();
        if self.game.is_none() {
            if self.status() == Status::Waiting && self.lobby_ends <= now {
                self.expire().await;
            }
            return;
        }
        if self.status() != Status::Playing {
            return;
        }
        if !self.lobby.all_bots() && self.last_person + self.hooks.lifecycle.abandon_after <= now {
            if let Err(e) = self
                .commit(vec![Event::MatchAbandoned], Mover::Server, None)
                .await
            {
                tracing::warn!(game = %self.name, error = %e, "could not abandon the game");
                self.last_person = now;
            } else {
                tracing::info!(game = %self.name, "game abandoned: nobody but the server moved");
            }
            return;
        }
        if self.bot_at.is_some_and(|at| at <= now) {
            self.bot_at = None;
            if let Err(e) = self.server_step().await {
                tracing::warn!(game = %self.name, error = %e, "server move failed");
            }
            return;
        }
        if self.deadline.is_some_and(|at| at <= now)
            && let Err(e) = self.time_out().await
        {
            tracing::warn!(game = %self.name, error = %e, "time-out move failed");
            self.deadline = Some(now + Duration::from_secs(1));
        }
    }

    /// The lobby expired: a `LobbyExpired` event becomes its log's first (and last) event, so
    /// its streams and the firehose say so, and the record is marked. Appended at version 0, it
    /// loses the race against a start through another server sharing the store; the game then
    /// goes on.
    async fn expire(&mut self) {
        match self
            .commit(vec![Event::LobbyExpired], Mover::Server, None)
            .await
        {
            Ok(_) => tracing::info!(game = %self.name, "lobby expired"),
            Err(ServiceError::Store(StoreError::Conflict { .. })) => {
                self.catch_up().await;
            }
            Err(e) => {
                tracing::warn!(game = %self.name, error = %e, "could not expire the lobby");
                self.lobby_ends = Instant::now() + Duration::from_secs(1);
            }
        }
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::Describe { reply } => {
                if self.game.is_none() && self.hooks.store.shared() {
                    // Another server sharing the store may have seated someone, or started it.
                    let _ = self.reload_record().await;
                    self.catch_up().await;
                }
                let _ = reply.send(Ok(self.info()));
            }
            Command::SeatOf { token, reply } => {
                let _ = reply.send(self.acting_seat(&token).await);
            }
            Command::Join {
                seat,
                name,
                player,
                reply,
            } => {
                let _ = reply.send(self.join(seat, &name, player).await);
            }
            Command::Start { reply } => {
                let _ = reply.send(self.start().await);
            }
            Command::Submit {
                token,
                action,
                request_id,
                expected_version,
                reply,
            } => {
                let answer = self
                    .submit(&token, action, &request_id, expected_version)
                    .await;
                self.hooks.metrics.move_done(answer.is_ok());
                let _ = reply.send(answer);
            }
            Command::Leave { token, reply } => {
                let _ = reply.send(self.leave(&token).await);
            }
            Command::View { viewer, reply } => {
                let _ = reply.send(self.view(viewer).await);
            }
            Command::Read {
                after,
                with_base,
                reply,
            } => {
                let _ = reply.send(Ok(self.read(after, with_base)));
            }
            Command::LinkRematch { name, reply } => {
                let _ = reply.send(self.link_rematch(name).await);
            }
            Command::Export { admin, reply } => {
                let _ = reply.send(self.export(admin).await);
            }
        }
    }

    /// The seat `token` holds and whether its player left. On a shared store, a token this
    /// task does not know may have joined through another server: the record is read again.
    async fn seat_of(&mut self, token: &TokenHash) -> Result<(Seat, bool), ServiceError> {
        if let Some(found) = self.lobby.seat_of(token) {
            return Ok(found);
        }
        if self.hooks.store.shared() {
            self.reload_record().await?;
            if let Some(found) = self.lobby.seat_of(token) {
                return Ok(found);
            }
        }
        Err(ServiceError::unauthenticated(format!(
            "this seat token holds no seat of {}",
            self.name
        )))
    }

    /// A seat token that may act: refused once its player left.
    async fn acting_seat(&mut self, token: &TokenHash) -> Result<Seat, ServiceError> {
        match self.seat_of(token).await? {
            (seat, false) => Ok(seat),
            (seat, true) => Err(ServiceError::denied(
                "SEAT_LEFT",
                format!("seat {seat} was left; the server plays it and its token no longer acts"),
            )),
        }
    }

    /// Reads the record again (seats joined or left through another server).
    async fn reload_record(&mut self) -> Result<(), ServiceError> {
        if let Some((text, _)) = self.hooks.store.record(&self.name).await?
            && let Ok(lobby) = Lobby::from_record(&text)
        {
            if self.lobby.seats != lobby.seats || self.lobby.expired != lobby.expired {
                self.lobby_changed();
            }
            self.lobby.seats = lobby.seats;
            self.lobby.expired = lobby.expired;
            self.lobby.rematch = self.lobby.rematch.take().or(lobby.rematch);
        }
        Ok(())
    }

    async fn link_rematch(&mut self, name: String) -> Result<String, ServiceError> {
        if self.hooks.store.shared() {
            self.reload_record().await?;
        }
        if let Some(linked) = &self.lobby.rematch {
            return Ok(linked.clone());
        }
        self.lobby.rematch = Some(name.clone());
        if let Err(e) = self.save_record().await {
            self.lobby.rematch = None;
            return Err(e);
        }
        Ok(name)
    }

    /// Tells the streams that the lobby changed (they look at it again); the version stays.
    fn lobby_changed(&self) {
        self.version.touch();
    }

    /// Stores the record; waiting rooms' streams look at the lobby again.
    async fn save_record(&self) -> Result<(), ServiceError> {
        let over = self.status().is_final();
        let saved = self
            .hooks
            .store
            .save_game(&self.name, &self.lobby.to_record(), over)
            .await;
        self.lobby_changed();
        saved?;
        Ok(())
    }

    async fn join(
        &mut self,
        seat: Option<usize>,
        name: &str,
        player: Option<Joining>,
    ) -> Result<(Seat, String, GameInfo), ServiceError> {
        if self.hooks.store.shared() {
            self.reload_record().await?;
            self.catch_up().await;
        }
        if let Some(joining) = &player
            && let Some(held) = self
                .lobby
                .seats
                .iter()
                .position(|s| s.player.as_deref() == Some(joining.player.as_str()))
        {
            // A player holds one seat per game: joining again (a retry, another device) finds
            // it, whatever the game's state.
            let token = players::seat_token(&joining.token, &self.name, held);
            return Ok((held, token, self.info()));
        }
        self.lobby_open()?;
        let seat = match seat {
            Some(s) => match self.lobby.seats.get(s) {
                None => {
                    return Err(ServiceError::invalid(
                        "NO_SUCH_SEAT",
                        format!("seat {s} is not at this table"),
                    ));
                }
                Some(state) if state.taken => {
                    return Err(ServiceError::precondition(
                        "SEAT_TAKEN",
                        format!("seat {s} is taken"),
                    ));
                }
                Some(_) => s,
            },
            None => self
                .lobby
                .seats
                .iter()
                .position(|s| !s.taken)
                .ok_or_else(|| ServiceError::precondition("NO_OPEN_SEAT", "every seat is taken"))?,
        };
        if self.lobby.rated && player.is_none() {
            return Err(ServiceError::precondition(
                "RATED_GAME_NEEDS_PLAYER",
                "a rated game's seats are taken by registered players: join with `player` and its \
                 player token",
            ));
        }
        let token = match &player {
            Some(joining) => {
                // Listed first: a listing whose seat the record does not show is skipped.
                joining
                    .players
                    .note_seat(&joining.player, &self.name, seat)
                    .await?;
                players::seat_token(&joining.token, &self.name, seat)
            }
            None => new_token(),
        };
        let before = std::mem::replace(
            &mut self.lobby.seats[seat],
            SeatState {
                token_hash: Some(hash(&token)),
                name: name.to_owned(),
                server_played: false,
                taken: true,
                left: false,
                player: player.map(|j| j.player),
            },
        );
        if let Err(e) = self.save_record().await {
            self.lobby.seats[seat] = before;
            return Err(e);
        }
        Ok((seat, token, self.info()))
    }

    /// Refuses a lobby that is no longer open: started, or expired.
    fn lobby_open(&self) -> Result<(), ServiceError> {
        match self.status() {
            Status::Waiting => Ok(()),
            Status::Expired => Err(ServiceError::precondition(
                "LOBBY_EXPIRED",
                "the lobby was never started and expired",
            )),
            _ => Err(ServiceError::precondition(
                "GAME_ALREADY_STARTED",
                "the game has started; its seats are closed",
            )),
        }
    }

    async fn start(&mut self) -> Result<GameInfo, ServiceError> {
        if self.hooks.store.shared() {
            self.reload_record().await?;
            self.catch_up().await;
        }
        self.lobby_open()?;
        if let Some(open) = self.lobby.seats.iter().position(|s| !s.taken) {
            return Err(ServiceError::precondition(
                "SEATS_OPEN",
                format!("seat {open} is still open"),
            ));
        }
        let (_, events) = Game::new(&self.lobby.setup, &mut rand::rng())?;
        self.last_person = Instant::now();
        match self.commit(events, Mover::Server, None).await {
            Ok(_) => Ok(self.info()),
            // Another server sharing the store started it first: it is started.
            Err(ServiceError::Store(StoreError::Conflict { .. })) => {
                self.catch_up().await;
                Ok(self.info())
            }
            Err(e) => Err(e),
        }
    }

    async fn submit(
        &mut self,
        token: &TokenHash,
        action: Action,
        request_id: &str,
        expected_version: Option<u64>,
    ) -> Result<Submitted, ServiceError> {
        let seat = self.acting_seat(token).await?;
        let key = (!request_id.is_empty()).then(|| format!("{seat}/{request_id}"));
        let mut attempt = 0;
        loop {
            attempt += 1;
            if expected_version.is_some_and(|e| e > self.log.len()) {
                // The client saw events this server has not read yet (another server's).
                self.catch_up().await;
            }
            // Asked again after every catch-up: the events another server appended may be this
            // very request's, made there first.
            if let Some(key) = &key
                && let Some(first) = self.answered(key, seat).await?
            {
                return Ok(first);
            }
            let Some(game) = self.game.as_ref() else {
                return Err(match self.status() {
                    Status::Expired => ServiceError::precondition(
                        "LOBBY_EXPIRED",
                        "the lobby was never started and expired",
                    ),
                    _ => ServiceError::precondition("GAME_NOT_STARTED", "the game has not started"),
                });
            };
            let version = self.log.len();
            if let Some(expected) = expected_version
                && expected != version
            {
                return Err(ServiceError::VersionMismatch {
                    expected,
                    actual: version,
                });
            }
            let decided = decide(game, seat, action, &mut rand::rng());
            let events = match decided {
                Ok(events) => events,
                // This server's copy may be behind another server's writes: catch up once and
                // decide again before refusing.
                Err(refusal) if attempt == 1 && self.hooks.store.shared() => {
                    if self.catch_up().await == 0 {
                        return Err(refusal.into());
                    }
                    continue;
                }
                Err(refusal) => return Err(refusal.into()),
            };
            match self
                .commit(events, Mover::Person(seat), key.as_deref())
                .await
            {
                Ok(answer) => {
                    if let Some(key) = key {
                        self.remember(key, answer.clone());
                    }
                    return Ok(answer);
                }
                Err(ServiceError::Store(StoreError::Conflict { .. }))
                    if attempt < CONFLICT_RETRIES =>
                {
                    self.catch_up().await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn remember(&mut self, key: String, answer: Submitted) {
        let requests = self.requests.get_or_insert_default();
        if requests.answers.len() >= REQUESTS_IN_MEMORY {
            let Requests { answers, stored } = &mut **requests;
            stored.extend(answers.drain().map(|(key, _)| request_hash(&key)));
        }
        requests.answers.insert(key, answer);
    }

    /// Learns request ids the store holds.
    fn learn(&mut self, stored: &[String]) {
        if !stored.is_empty() {
            let known = &mut self.requests.get_or_insert_default().stored;
            known.extend(stored.iter().map(|key| request_hash(key)));
        }
    }

    /// The first answer to a request already made: from memory, or rebuilt from the events the
    /// store keeps with it.
    async fn answered(&mut self, key: &str, seat: Seat) -> Result<Option<Submitted>, ServiceError> {
        if let Some(first) = self.requests.as_ref().and_then(|r| r.answers.get(key)) {
            return Ok(Some(first.clone()));
        }
        if self.requests_unread {
            let stored = self.hooks.store.requests(&self.name, 0).await?;
            self.learn(&stored);
            self.requests_unread = false;
        }
        let hash = request_hash(key);
        if !self
            .requests
            .as_ref()
            .is_some_and(|r| r.stored.contains(&hash))
        {
            return Ok(None);
        }
        let Some((first, last)) = self.hooks.store.request(&self.name, key).await? else {
            return Ok(None);
        };
        let events = self.hooks.store.read(&self.name, 0).await?;
        let upto = usize::try_from(last)
            .unwrap_or(usize::MAX)
            .min(events.len());
        let from = usize::try_from(first.saturating_sub(1)).unwrap_or(usize::MAX);
        let (before, mine) = events[..upto].split_at(from.min(upto));
        let mut game = match before.first() {
            Some(_) => Game::replay(before).map_err(|e| ServiceError::Damaged {
                game: self.name.to_string(),
                error: e.to_string(),
            })?,
            None => match mine.first() {
                Some(created) => Game::replay([created]).map_err(|e| ServiceError::Damaged {
                    game: self.name.to_string(),
                    error: e.to_string(),
                })?,
                None => return Ok(None),
            },
        };
        let mut seen = Vec::new();
        for (i, event) in mine.iter().enumerate() {
            if !(before.is_empty() && i == 0) {
                game.apply(event);
            }
            seen.push((first + i as u64, project(&game, event, Viewer::Seat(seat))));
        }
        let answer = Submitted {
            version: last,
            events: seen,
        };
        self.remember(key.to_owned(), answer.clone());
        Ok(Some(answer))
    }

    async fn leave(&mut self, token: &TokenHash) -> Result<GameInfo, ServiceError> {
        let seat = self.acting_seat(token).await?;
        if self.status().is_final() {
            return Err(ServiceError::precondition(
                "GAME_OVER",
                "the game is over; there is nothing to leave",
            ));
        }
        let before = self.lobby.seats[seat].clone();
        let state = &mut self.lobby.seats[seat];
        state.server_played = true;
        state.left = true;
        if let Err(e) = self.save_record().await {
            self.lobby.seats[seat] = before;
            return Err(e);
        }
        // The server plays the seat from now on, after the bot delay like any bot seat.
        self.bot_at = None;
        Ok(self.info())
    }

    async fn view(&mut self, viewer: Viewer) -> Result<(View, Option<Instant>), ServiceError> {
        if self.game.is_none() && self.hooks.store.shared() {
            // Another server sharing the store may have started it.
            self.catch_up().await;
        }
        match &self.game {
            Some(game) => Ok((game.view(viewer), self.deadline)),
            None => Err(ServiceError::precondition(
                "GAME_NOT_STARTED",
                "the game has not started",
            )),
        }
    }

    /// What a stream at `after` needs to go on: only what it lacks is cloned (a stream reads
    /// once per change of the game, so this is the hot path of every subscriber).
    fn read(&self, after: u64, with_base: bool) -> Tail {
        tail(&self.log, &self.lobby, self.deadline, after, with_base)
    }

    async fn export(&self, admin: bool) -> Result<Vec<Event>, ServiceError> {
        if !self.status().is_final() && !admin {
            return Err(ServiceError::denied(
                "GAME_NOT_FINISHED",
                "a game's log may be exported once it is over, or with the admin token",
            ));
        }
        if let Some(events) = self.log.since(0) {
            return Ok(events.to_vec());
        }
        // Events before the last snapshot are no longer in memory: the store has them all.
        let mut events = self.hooks.store.read(&self.name, 0).await?;
        events.truncate(usize::try_from(self.log.len()).unwrap_or(usize::MAX));
        Ok(events)
    }

    /// The server-played seat whose move the game waits for, if any.
    fn server_seat_to_move(&self) -> Option<Seat> {
        let game = self.game.as_ref()?;
        let seat = game.turn();
        (!game.is_over() && self.lobby.seats.get(seat).is_some_and(|s| s.server_played))
            .then_some(seat)
    }

    /// One move of the server-played seat to move, chosen by its bot from that seat's view; a
    /// searching bot's move is only started here (see [`Live::start_search`]). Returns whether a
    /// move was made.
    async fn server_step(&mut self) -> Result<bool, ServiceError> {
        let Some(seat) = self.server_seat_to_move() else {
            return Ok(false);
        };
        let Some(game) = self.game.as_ref() else {
            return Ok(false);
        };
        let level = self.lobby.level_of(seat);
        if level.searches() {
            self.start_search(seat);
            return Ok(false);
        }
        let view = game.view(Viewer::Seat(seat));
        let Some(action) = bots::choose(level, &view, &mut rand::rng()) else {
            return Ok(false);
        };
        self.server_move(seat, action).await
    }

    /// Starts a searching bot's move for `seat` on a blocking thread (searches take their time,
    /// [`bots::Think`]); [`Live::on_search`] plays its answer.
    fn start_search(&mut self, seat: Seat) {
        let Some(game) = self.game.as_ref() else {
            return;
        };
        let view = game.view(Viewer::Seat(seat));
        let level = self.lobby.level_of(seat);
        let think = bots::Think::for_time(match self.lobby.bot_think_ms {
            0 => self.hooks.lifecycle.bot_think,
            ms => Duration::from_millis(u64::from(ms)).min(bots::MAX_THINK),
        });
        let mut rng = StdRng::from_rng(&mut rand::rng());
        let (reply, answer) = oneshot::channel();
        tokio::task::spawn_blocking(move || {
            // Nobody waits any more when the game left memory meanwhile.
            let _ = reply.send(bots::choose_thinking(level, &view, think, &mut rng));
        });
        self.search = Some(Box::new(Search {
            seat,
            version: self.log.len(),
            answer,
        }));
    }

    /// A bot's search answered: its move is played if the game is where the search started
    /// (otherwise the next settle thinks again).
    async fn on_search(&mut self, answer: Result<Option<Action>, oneshot::error::RecvError>) {
        let Some(search) = self.search.take() else {
            return;
        };
        if search.version != self.log.len() || self.server_seat_to_move() != Some(search.seat) {
            return;
        }
        let action = match answer {
            Ok(action) => action,
            // The search panicked (a bug): the heuristic plays this move rather than nobody.
            Err(_) => {
                tracing::error!(game = %self.name, "the expert bot failed; the heuristic moves");
                let Some(game) = self.game.as_ref() else {
                    return;
                };
                let view = game.view(Viewer::Seat(search.seat));
                bots::choose(bots::Level::Heuristic, &view, &mut rand::rng())
            }
        };
        let Some(action) = action else {
            return;
        };
        if let Err(e) = self.server_move(search.seat, action).await {
            tracing::warn!(game = %self.name, error = %e, "server move failed");
            self.bot_at = Some(Instant::now() + Duration::from_millis(100));
        }
    }

    /// Commits `action` of the server-played `seat`. Returns whether a move was made.
    async fn server_move(&mut self, seat: Seat, action: Action) -> Result<bool, ServiceError> {
        let Some(game) = self.game.as_ref() else {
            return Ok(false);
        };
        let events = decide(game, seat, action, &mut rand::rng())?;
        match self.commit(events, Mover::Server, None).await {
            Ok(_) => {
                self.hooks.metrics.server_moves.inc();
                Ok(true)
            }
            // Another server moved first; catch up and let the next step decide.
            Err(ServiceError::Store(StoreError::Conflict { .. })) => {
                self.catch_up().await;
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }

    /// Acts for the seat whose timer ran out.
    async fn time_out(&mut self) -> Result<(), ServiceError> {
        let Some(game) = self.game.as_ref() else {
            return Ok(());
        };
        let seat = game.turn();
        let Some(action) = timeout_move(game) else {
            return Ok(());
        };
        let events = decide(game, seat, action, &mut rand::rng())?;
        self.commit(events, Mover::Server, None).await?;
        self.hooks.metrics.time_outs.inc();
        // A timed-out draw keeps the card drawn in the same breath.
        if let Some(game) = self.game.as_ref()
            && game.turn() == seat
            && matches!(game.phase(), Phase::PlayDrawn { .. })
        {
            let events = decide(game, seat, Action::Keep, &mut rand::rng())?;
            self.commit(events, Mover::Server, None).await?;
        }
        Ok(())
    }

    /// Appends `events` to the store (with the request that made them), then applies them.
    /// Returns them as the mover's seat sees them.
    async fn commit(
        &mut self,
        events: Vec<Event>,
        mover: Mover,
        request: Option<&str>,
    ) -> Result<Submitted, ServiceError> {
        let began = std::time::Instant::now();
        let append = self
            .hooks
            .store
            .append(&self.name, self.log.len(), &events, request);
        answering_reads(
            &mut self.commands,
            &self.log,
            &self.lobby,
            self.deadline,
            append,
        )
        .await?;
        self.hooks
            .metrics
            .store_appends
            .observe(began.elapsed().as_secs_f64());
        if let Mover::Person(_) = mover {
            self.last_person = Instant::now();
        }
        let viewer = match mover {
            Mover::Person(seat) => Some(Viewer::Seat(seat)),
            Mover::Server => None,
        };
        let seen = self.apply(events, viewer).await;
        Ok(Submitted {
            version: self.log.len(),
            events: seen,
        })
    }

    /// Applies events that are in the store and publishes them to the streams. Returns them as
    /// `viewer` sees them.
    async fn apply(&mut self, events: Vec<Event>, viewer: Option<Viewer>) -> Vec<(u64, SeenEvent)> {
        let before = self.log.len();
        let was_final = self.status().is_final();
        let mut seen = Vec::new();
        for event in events {
            let version = self.log.len() + 1;
            match self.game.as_mut() {
                Some(game) => game.apply(&event),
                None => self.game = Game::replay([&event]).ok(),
            }
            if matches!(event, Event::LobbyExpired) {
                self.lobby.expired = true;
            }
            if let Some(viewer) = viewer {
                let shown = match self.game.as_ref() {
                    Some(game) => Some(project(game, &event, viewer)),
                    None => project_lobby(&event),
                };
                seen.extend(shown.map(|e| (version, e)));
            }
            self.log.push(event);
        }
        let version = self.log.len();
        if version > before {
            self.hooks.appended.send_modify(|n| *n += 1);
        }
        self.version.send_replace(version);
        self.deadline = self.lobby.timer.map(|t| Instant::now() + t);
        self.bot_at = None;
        if self.log.snapshot_due()
            && let Some(game) = self.game.as_ref()
        {
            // A snapshot is only a shortcut: if it cannot be written, the log still has it all.
            match self
                .hooks
                .store
                .save_snapshot(&self.name, version, &game.snapshot())
                .await
            {
                Ok(()) => {
                    let state = game.clone();
                    self.log.rebase(state);
                }
                Err(e) => tracing::warn!(game = %self.name, error = %e, "snapshot not stored"),
            }
        }
        if !was_final
            && self.status().is_final()
            && let Err(e) = self.save_record().await
        {
            // The events are durable; only the finished mark is not, so a restart would load
            // this game again, already over.
            tracing::warn!(game = %self.name, error = %e, "could not mark the game finished");
        }
        if !was_final && self.status() == Status::Finished && self.lobby.rated {
            self.rate().await;
        }
        seen
    }

    /// Stores a rated game's outcome and updates its players' ratings (once, whichever server
    /// sees it finish first).
    async fn rate(&self) {
        let Some(game) = self.game.as_ref() else {
            return;
        };
        let places = ratings::places(game);
        let mut seated = Vec::new();
        for (seat, place) in places.into_iter().enumerate() {
            let player = match self.lobby.seats.get(seat) {
                Some(_) if self.lobby.bot_seats.contains(&seat) => {
                    match self.hooks.players.builtin(self.lobby.level_of(seat)).await {
                        Ok(p) => p.name,
                        Err(e) => {
                            tracing::warn!(game = %self.name, error = %e, "not rated");
                            return;
                        }
                    }
                }
                Some(s) => match &s.player {
                    Some(p) => p.clone(),
                    None => {
                        tracing::warn!(game = %self.name, seat, "not rated: a seat has no player");
                        return;
                    }
                },
                None => return,
            };
            seated.push((player, place));
        }
        let outcome = ratings::Outcome {
            game: self.name.to_string(),
            ruleset: self.lobby.setup.ruleset,
            finished_millis: players::now_millis(),
            places: seated,
        };
        match self.hooks.players.record_outcome(&outcome).await {
            Ok(true) => tracing::info!(game = %self.name, "ratings updated"),
            Ok(false) => {}
            Err(e) => tracing::warn!(game = %self.name, error = %e, "ratings not updated"),
        }
    }

    /// Reads and folds what other servers appended. Returns how many events came.
    async fn catch_up(&mut self) -> usize {
        match self.hooks.store.read(&self.name, self.log.len()).await {
            Ok(events) if !events.is_empty() => {
                let n = events.len();
                // Another server's moves, with request ids this task never saw (read after
                // the moves, so none is missed).
                if !self.requests_unread {
                    match self.hooks.store.requests(&self.name, self.log.len()).await {
                        Ok(stored) => self.learn(&stored),
                        Err(_) => self.requests_unread = true,
                    }
                }
                self.apply(events, None).await;
                n
            }
            Ok(_) => 0,
            Err(e) => {
                tracing::warn!(game = %self.name, error = %e, "catching up with the store failed");
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_game_stays_small() {
        // Every live game's task holds a `Live` and the run loop's state: with tokio's header
        // and trailer, the release build's task fits mimalloc's 1,024-byte class
        // (`LOAD_STORES=, cargo bench --bench load` measures the memory per idle game). Each
        // byte more counts 10,000 times on a server of 10,000 games.
        assert!(
            std::mem::size_of::<Live>() <= 696,
            "{} bytes",
            std::mem::size_of::<Live>()
        );
    }
}
