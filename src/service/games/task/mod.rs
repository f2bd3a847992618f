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

mod clock;
mod commit;
mod moves;
mod run;
mod seating;
mod server_moves;

use clock::lobby_ends;
use moves::Requests;
use server_moves::Search;

use crate::bots;
use crate::rules::{
    Action, Event, Game, Phase, Seat, SeenEvent, View, Viewer, decide, project, project_lobby,
};
use crate::store::{EventStore, StoreError};

use crate::chan::mailbox;
use crate::chan::signal;
use crate::service::accounts::players::now_millis;
use crate::service::accounts::players::{self, Players};
use crate::service::accounts::rater::Finishes;
use crate::service::error::ServiceError;
use crate::service::games::lobby::{
    GameInfo, Lobby, SeatState, Status, TokenHash, hash, new_token,
};
use crate::service::games::log::EventLog;
use crate::service::games::{Registry, Unloadable};
use crate::service::metrics::Metrics;

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
    /// Registered players and invite codes.
    pub players: Players,
    /// Where a rated game's finish is reported, to be rated.
    pub finishes: Finishes,
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

/// Starts the task of a game from its record and its log; returns its handle.
pub(crate) fn spawn(
    name: &str,
    hooks: &Arc<Hooks>,
    seq: u64,
    lobby: Lobby,
    log: EventLog,
    first: &mut Option<Box<Command>>,
) -> Result<GameRef, Unloadable> {
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
        // The deadline stored with the record, if it is this turn's; else a whole turn.
        let at = live.log.len();
        live.deadline = live
            .lobby
            .timer
            .map(|t| match live.lobby.turn_deadline.as_deref() {
                Some(&(version, unix_ms)) if version == at => {
                    now + Duration::from_millis(unix_ms.saturating_sub(now_millis()))
                }
                _ => now + t,
            });
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

/// What [`GameRef::store_version`] says when the store moved on without saying which game or
/// how far: every game reads the store again.
pub(crate) const UNKNOWN_VERSION: u64 = u64::MAX;

/// The state a log leads to (`None` before the first event, or for an expired lobby's log).
fn fold(log: &EventLog) -> Result<Option<Game>, Unloadable> {
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
        (_, Some(all)) => Ok(Some(Game::replay(all)?)),
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
