//! The registry: maps game names to their live tasks (`game.rs`), creates games, loads a game
//! that is not live from the store on demand, and at start rebuilds every unfinished game so that
//! its timers and server moves resume without any client. On a shared store it follows the
//! store's change notices and tells the task of each game another server wrote to.
//!
//! It counts live games (`--max-games`) and the live games each client address created
//! (`--max-games-per-client`); a task that stops (a finished game past its keep time, an expired
//! lobby) leaves the registry and frees its memory.

mod auth;
mod calls;
mod create;
pub mod lobby;
mod log;
mod recovery;
pub mod task;

pub use calls::PlayerGame;
pub use create::NewGame;
pub use lobby::{GameInfo, Status};

use auth::{TokenKey, token_key};
use create::Reservation;
use recovery::{follow, stored_log};

use crate::service::reason::Reason;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;

use crate::bots::Level;
use crate::rules::{CardId, Game, Options, Ruleset, Seat, Setup, Viewer};
use crate::store::{Change, EventStore, StoreError};

use crate::service::accounts::players::{Caller, Players};
use crate::service::accounts::rater;
use crate::service::accounts::sign_in::SignIn;
use crate::service::error::{ServiceError, quote};
use crate::service::games::lobby::{Lobby, SeatState, TokenHash, hash, new_token, now_unix};
use crate::service::games::log::EventLog;
use crate::service::games::task::{GameRef, Hooks, Lifecycle};
use crate::service::metrics::{Metrics, Open};

/// Why a stored game cannot be made live again.
#[derive(Debug, thiserror::Error)]
pub enum Unloadable {
    /// Its record does not read.
    #[error("its record does not read: {0}")]
    Record(#[from] serde_json::Error),
    /// Its log does not replay.
    #[error("its log does not replay: {0}")]
    Log(#[from] crate::rules::ReplayError),
    /// The registry's table is poisoned (a panic while it was held).
    #[error("the registry's table is poisoned")]
    Poisoned,
}

impl Unloadable {
    /// The refusal of a call that needed game `game`.
    pub(crate) fn refusal(self, game: &str) -> ServiceError {
        ServiceError::Damaged {
            game: game.to_owned(),
            error: self.to_string(),
        }
    }
}

/// Times a command follows its game to a new task before giving up.
const FOLLOW_TASK: usize = 3;

/// Limits and secrets of a running service.
#[derive(Clone, Debug)]
pub struct Config {
    /// The admin token: fixed decks and exports of running games.
    pub admin_token: Option<String>,
    /// How long an idle stream waits before sending a heartbeat.
    pub heartbeat: Duration,
    /// Live games at once; creating more is refused.
    pub max_games: usize,
    /// Live games one client address may have created.
    pub max_games_per_client: usize,
    /// Game and firehose streams open at once on one connection.
    pub max_streams_per_connection: usize,
    /// Bot delay, keep time, lobby time-to-live, abandonment.
    pub lifecycle: Lifecycle,
    /// This server matches players (`FindMatch`).
    pub matchmaking: bool,
    /// The host's sign-in: its JWTs stand for players.
    pub sign_in: Option<Arc<SignIn>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            admin_token: None,
            heartbeat: Duration::from_secs(15),
            max_games: 100_000,
            max_games_per_client: 1_000,
            max_streams_per_connection: 100,
            lifecycle: Lifecycle::default(),
            matchmaking: true,
            sign_in: None,
        }
    }
}

struct Slot {
    /// Its registration: creation (or load) order, never given twice.
    seq: u64,
    game: GameRef,
    client: Option<IpAddr>,
    /// The keys of its seats' tokens in [`Table::tokens`].
    tokens: Vec<TokenKey>,
}

#[derive(Default)]
struct Table {
    by_name: HashMap<Arc<str>, Slot>,
    /// Live games in creation (or load) order.
    order: BTreeMap<u64, Arc<str>>,
    /// The live games of [`Table::order`] whose lobby may have an open seat: each is, until its
    /// task says otherwise ([`Registry::set_open`]).
    open: BTreeSet<u64>,
    next: u64,
    /// Live games per creating client, counting the creations under way ([`Reservation`]).
    per_client: HashMap<IpAddr, usize>,
    /// Creations under way: each holds a place against `max_games` until its game is installed.
    reserved: usize,
    /// Which live game each known seat token belongs to, by [`TokenKey`]: its registration
    /// (the key of [`Table::order`]), 8 bytes where its name would take 16.
    tokens: HashMap<TokenKey, u64>,
}

impl Table {
    /// One live game (or creation under way) of `ip` less.
    fn release_client(&mut self, ip: IpAddr) {
        if let Some(n) = self.per_client.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(&ip);
            }
        }
    }
}

/// Every live game of this server.
pub struct Registry {
    table: Mutex<Table>,
    /// One load from the store at a time, so a game is never loaded twice.
    loading: tokio::sync::Mutex<()>,
    /// The number of live games.
    live: watch::Sender<usize>,
    /// Limits and secrets.
    pub config: Config,
    /// The store, the metrics, registered players, the append counter and `config.lifecycle`:
    /// the registry's, and shared by every game's task (one copy, not one per game).
    pub(crate) hooks: Arc<Hooks>,
    /// Open streams per client connection (its remote address).
    streams: Mutex<HashMap<SocketAddr, usize>>,
    /// Set when the server stops: every stream ends with `SERVER_STOPPING`.
    pub(crate) stopping: watch::Sender<bool>,
    /// One rematch created at a time, so that two players asking at once get the same game.
    rematches: tokio::sync::Mutex<()>,
}

/// One open stream, counted against its connection's limit and in the metrics until dropped.
pub(crate) struct StreamSlot {
    registry: Weak<Registry>,
    peer: Option<SocketAddr>,
    _open: Open,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let (Some(registry), Some(peer)) = (self.registry.upgrade(), self.peer) else {
            return;
        };
        if let Ok(mut streams) = registry.streams.lock()
            && let Some(n) = streams.get_mut(&peer)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                streams.remove(&peer);
            }
        }
    }
}

/// Parses `games/{id}`.
pub fn game_id(name: &str) -> Result<&str, ServiceError> {
    match name.strip_prefix("games/") {
        Some(id) if !id.is_empty() && !id.contains('/') && id.len() <= 64 => Ok(id),
        _ => Err(ServiceError::invalid(
            Reason::InvalidGameName,
            format!(
                "{} is not a game name of the form games/{{game}}",
                quote(name)
            ),
        )),
    }
}

impl Registry {
    /// No games yet. On a shared store, starts following the store's change notices.
    pub fn new(store: Arc<dyn EventStore>, config: Config) -> Arc<Registry> {
        let players = Players::new(store.clone(), config.sign_in.clone());
        let mut metrics = Metrics::new();
        if let Some(sign_in) = &config.sign_in {
            metrics.register_sign_in(sign_in.metrics());
        }
        let finishes = rater::start(players.clone());
        let registry = Arc::new_cyclic(|registry| Registry {
            table: Mutex::default(),
            loading: tokio::sync::Mutex::new(()),
            live: watch::channel(0).0,
            hooks: Arc::new(Hooks {
                finishes,
                players,
                store,
                lifecycle: config.lifecycle.clone(),
                appended: Arc::new(watch::channel(0).0),
                metrics: Arc::new(metrics),
                registry: registry.clone(),
            }),
            config,
            streams: Mutex::default(),
            stopping: watch::channel(false).0,
            rematches: tokio::sync::Mutex::new(()),
        });
        if registry.hooks.store.shared() {
            tokio::spawn(follow(
                Arc::downgrade(&registry),
                registry.hooks.store.changes(),
            ));
        }
        registry
    }

    /// A stream for the connection `peer`, or `TOO_MANY_STREAMS` once it has
    /// `max_streams_per_connection` open.
    pub(crate) fn open_stream(
        self: &Arc<Self>,
        peer: Option<SocketAddr>,
    ) -> Result<StreamSlot, ServiceError> {
        if let Some(peer) = peer {
            let mut streams = self
                .streams
                .lock()
                .map_err(|_| ServiceError::unavailable("stream table lock poisoned"))?;
            let open = streams.entry(peer).or_default();
            if *open >= self.config.max_streams_per_connection {
                return Err(ServiceError::exhausted(
                    Reason::TooManyStreams,
                    format!(
                        "this connection has {} streams open, the most allowed \
                         (serve --max-streams-per-connection); close one first",
                        *open
                    ),
                ));
            }
            *open += 1;
        }
        Ok(StreamSlot {
            registry: Arc::downgrade(self),
            peer,
            _open: Open::new(&self.hooks.metrics.open_streams),
        })
    }

    /// Ends every stream with `UNAVAILABLE` / `SERVER_STOPPING` (the server is stopping).
    pub fn stop_streams(&self) {
        self.stopping.send_replace(true);
    }

    /// The number of live games, as it changes.
    pub fn live_games(&self) -> watch::Receiver<usize> {
        self.live.subscribe()
    }

    fn table(&self) -> Result<std::sync::MutexGuard<'_, Table>, ServiceError> {
        self.table.lock().map_err(|_| ServiceError::Stopping)
    }

    /// The live game named `name`, loaded from the store if it is not live here (a finished
    /// game, a game another server created, a game after a restart).
    pub(crate) async fn get(self: &Arc<Self>, name: &str) -> Result<GameRef, ServiceError> {
        game_id(name)?;
        if let Some(game) = self.live_ref(name)? {
            return Ok(game);
        }
        self.load(name, &mut None).await
    }

    /// Hands `command` to the task of the game named `name`, whose last task left memory as the
    /// command was sent. A task loaded for the command holds it before it starts, so it answers
    /// it even if its keep time runs out at once (a finished game kept a millisecond on a busy
    /// machine).
    pub(crate) async fn deliver(
        self: &Arc<Self>,
        name: &str,
        command: Box<task::Command>,
    ) -> Result<(), ServiceError> {
        let mut command = Some(command);
        // Each turn loads a task that takes the command before it starts, or finds a live one
        // and sends it; that fails only if the task left memory in between.
        for _ in 0..FOLLOW_TASK {
            let game = self.load(name, &mut command).await?;
            let Some(next) = command.take() else {
                return Ok(());
            };
            match game.send(next).await {
                Ok(()) => return Ok(()),
                Err(back) => command = Some(back),
            }
        }
        Err(ServiceError::Stopping)
    }

    /// Loads the game named `name` from the store and starts its task, which takes `first`
    /// before anything else; returns the live task instead if there is one (then `first` stays).
    async fn load(
        self: &Arc<Self>,
        name: &str,
        first: &mut Option<Box<task::Command>>,
    ) -> Result<GameRef, ServiceError> {
        let _guard = self.loading.lock().await;
        if let Some(game) = self.live_ref(name)? {
            return Ok(game);
        }
        let Some((record, _)) = self.hooks.store.record(name).await? else {
            return Err(ServiceError::no_game(name));
        };
        let log = stored_log(&*self.hooks.store, name).await?;
        self.install(name, &record, log, None, first)
            .map_err(|error| {
                tracing::error!(game = %name, %error, "game not loaded: its stored data is damaged");
                error.refusal(name)
            })
    }

    fn live_ref(&self, name: &str) -> Result<Option<GameRef>, ServiceError> {
        let table = self.table()?;
        Ok(table
            .by_name
            .get(name)
            .filter(|slot| !slot.game.is_closed())
            .map(|slot| slot.game.clone()))
    }

    /// Starts the task of a game and registers it.
    /// A new game fills the place its `reservation` held.
    fn install(
        self: &Arc<Self>,
        name: &str,
        record: &str,
        log: EventLog,
        reservation: Option<&mut Reservation<'_>>,
        first: &mut Option<Box<task::Command>>,
    ) -> Result<GameRef, Unloadable> {
        let lobby = Lobby::from_record(record)?;
        let tokens: Vec<TokenKey> = lobby
            .seats
            .iter()
            .filter_map(|s| s.token_hash.as_ref().map(token_key))
            .collect();
        let mut table = self.table.lock().map_err(|_| Unloadable::Poisoned)?;
        if let Some(slot) = table.by_name.get(name)
            && !slot.game.is_closed()
        {
            return Ok(slot.game.clone());
        }
        let seq = table.next;
        table.next += 1;
        let key: Arc<str> = Arc::from(name);
        let game = task::spawn(name, &self.hooks, seq, lobby, log, first)?;
        let mut client = None;
        if let Some(reservation) = reservation {
            // The place becomes the game's: the client's count already holds it.
            table.reserved = table.reserved.saturating_sub(1);
            reservation.filled = true;
            client = reservation.client;
        }
        for token in &tokens {
            table.tokens.insert(*token, seq);
        }
        table.order.insert(seq, key.clone());
        table.open.insert(seq);
        table.by_name.insert(
            key,
            Slot {
                seq,
                game: game.clone(),
                client,
                tokens,
            },
        );
        self.live.send_replace(table.by_name.len());
        self.hooks
            .metrics
            .live_games
            .set(i64::try_from(table.by_name.len()).unwrap_or(i64::MAX));
        Ok(game)
    }

    /// A task stopped: the game leaves the registry.
    pub(crate) fn forget(&self, name: &str, seq: u64) {
        let Ok(mut table) = self.table.lock() else {
            return;
        };
        if table.by_name.get(name).is_none_or(|slot| slot.seq != seq) {
            return;
        }
        if let Some(slot) = table.by_name.remove(name) {
            table.order.remove(&slot.seq);
            table.open.remove(&slot.seq);
            for token in &slot.tokens {
                table.tokens.remove(token);
            }
            if let Some(ip) = slot.client {
                table.release_client(ip);
            }
        }
        // Give memory back once most games have left.
        if table.by_name.capacity() > 64 && table.by_name.len() < table.by_name.capacity() / 4 {
            table.by_name.shrink_to_fit();
            table.tokens.shrink_to_fit();
            table.per_client.shrink_to_fit();
        }
        self.live.send_replace(table.by_name.len());
        self.hooks
            .metrics
            .live_games
            .set(i64::try_from(table.by_name.len()).unwrap_or(i64::MAX));
    }

    /// Live games, newest first; only lobbies with an open seat when `open_only`. Only the games
    /// it shows are asked (each through its task), and with `open_only` only those whose task
    /// said last that a seat is open ([`Registry::set_open`]): a server of many started games
    /// answers with the few lobbies among them, not by asking every game.
    pub async fn list(&self, open_only: bool, page_size: u32) -> Vec<GameInfo> {
        let limit = if page_size == 0 {
            100
        } else {
            page_size.min(100)
        } as usize;
        let mut out = Vec::new();
        let mut before = u64::MAX;
        while out.len() < limit {
            let candidates = self.newest(open_only, before, limit - out.len());
            let Some(&(oldest, _)) = candidates.last() else {
                break;
            };
            before = oldest;
            for (_, game) in candidates {
                let Ok(info) = game.ask(|reply| task::Command::Describe { reply }).await else {
                    continue;
                };
                // A seat may have been taken since the task said it was open.
                if !open_only || info.status.open(&info.lobby) {
                    out.push(info);
                }
            }
        }
        out
    }

    /// Up to `n` live games created before `before` (by [`Slot::seq`]), newest first, with their
    /// `seq`s; only those that may be open when `open_only`.
    fn newest(&self, open_only: bool, before: u64, n: usize) -> Vec<(u64, GameRef)> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        let slot = |seq: &u64| {
            let slot = table.by_name.get(table.order.get(seq)?)?;
            Some((*seq, slot.game.clone()))
        };
        if open_only {
            table
                .open
                .range(..before)
                .rev()
                .filter_map(slot)
                .take(n)
                .collect()
        } else {
            table
                .order
                .range(..before)
                .rev()
                .filter_map(|(seq, _)| slot(seq))
                .take(n)
                .collect()
        }
    }

    /// The task of the game registered `seq`-th ([`Slot::seq`]) says whether its lobby has an
    /// open seat, whenever that changes; [`Registry::list`] asks only those that have.
    pub(crate) fn set_open(&self, seq: u64, open: bool) {
        let Ok(mut table) = self.table.lock() else {
            return;
        };
        // A task that has left the registry is not listed again.
        if open && table.order.contains_key(&seq) {
            table.open.insert(seq);
        } else {
            table.open.remove(&seq);
        }
    }
}
