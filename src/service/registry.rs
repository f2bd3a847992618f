//! The registry: maps game names to their live tasks (`game.rs`), creates games, loads a game
//! that is not live from the store on demand, and at start rebuilds every unfinished game so that
//! its timers and server moves resume without any client. On a shared store it follows the
//! store's change notices and tells the task of each game another server wrote to.
//!
//! It counts live games (`--max-games`) and the live games each client address created
//! (`--max-games-per-client`); a task that stops (a finished game past its keep time, an expired
//! lobby) leaves the registry and frees its memory.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;

use crate::bots::Level;
use crate::rules::{CardId, Game, Options, Ruleset, Seat, Setup, Viewer};
use crate::store::{Change, EventStore, StoreError};

use super::error::{ServiceError, quote};
use super::game::{self, GameRef, Hooks, Lifecycle};
use super::lobby::{GameInfo, Lobby, SeatState, Status, TokenHash, hash, new_token, now_unix};
use super::log::EventLog;
use super::matchmaker::Matchmaker;
use super::metrics::Open;
use super::players::Players;

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
        }
    }
}

/// What a game is created with (the domain side of `GameOptions`).
#[derive(Clone, Debug)]
pub struct NewGame {
    /// The ruleset.
    pub ruleset: Ruleset,
    /// Seats at the table.
    pub seats: u32,
    /// Scoring, target, house rules.
    pub options: Options,
    /// The first dealer, if fixed.
    pub first_dealer: Option<u32>,
    /// The deck order, if fixed (admin only).
    pub deck_order: Vec<u32>,
    /// Seats the server plays.
    pub bot_seats: Vec<u32>,
    /// The level of its bots.
    pub bot_level: Level,
    /// How long its searching bots think per move (`None`: the server's default).
    pub bot_think: Option<Duration>,
    /// The turn timer.
    pub turn_timer: Option<Duration>,
    /// Finishing updates the players' ratings.
    pub rated: bool,
    /// Bot seats that play at another level than `bot_level`.
    pub seat_levels: Vec<(Seat, Level)>,
}

struct Slot {
    /// Its registration: creation (or load) order, never given twice.
    seq: u64,
    game: GameRef,
    client: Option<IpAddr>,
    /// The keys of its seats' tokens in [`Table::tokens`].
    tokens: Vec<TokenKey>,
}

/// A seat token's key in [`Table::tokens`]: the first 8 bytes of its hash. The table only
/// explains a refusal (the token belongs to another game), so two tokens of one key, once in
/// about 2^64 pairs, would at worst explain one wrongly; the full hash would cost every live game
/// about 250 bytes more (its four tokens' keys, twice).
type TokenKey = u64;

fn token_key(hash: &TokenHash) -> TokenKey {
    let mut key = [0; 8];
    key.copy_from_slice(&hash[..8]);
    TokenKey::from_le_bytes(key)
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

/// A place held in the registry's limits for a game being created; given back when dropped
/// unless the game filled it.
struct Reservation<'a> {
    registry: &'a Registry,
    client: Option<IpAddr>,
    filled: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.filled {
            return;
        }
        if let Ok(mut table) = self.registry.table.lock() {
            table.reserved = table.reserved.saturating_sub(1);
            if let Some(ip) = self.client {
                table.release_client(ip);
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
    /// The firehose's shared projection, while a stream holds it.
    pub(crate) firehose: tokio::sync::Mutex<Weak<super::firehose::Hub>>,
    /// One rematch created at a time, so that two players asking at once get the same game.
    rematches: tokio::sync::Mutex<()>,
    /// The quick-play queue, if this server matches.
    pub matchmaker: std::sync::OnceLock<Arc<Matchmaker>>,
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
            "INVALID_GAME_NAME",
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
        let registry = Arc::new_cyclic(|registry| Registry {
            table: Mutex::default(),
            loading: tokio::sync::Mutex::new(()),
            live: watch::channel(0).0,
            hooks: Arc::new(Hooks {
                players: Players::new(store.clone()),
                store,
                lifecycle: config.lifecycle.clone(),
                appended: Arc::new(watch::channel(0).0),
                metrics: Arc::default(),
                registry: registry.clone(),
            }),
            config,
            streams: Mutex::default(),
            stopping: watch::channel(false).0,
            firehose: tokio::sync::Mutex::new(Weak::new()),
            rematches: tokio::sync::Mutex::new(()),
            matchmaker: std::sync::OnceLock::new(),
        });
        if registry.config.matchmaking {
            let _ = registry
                .matchmaker
                .set(Matchmaker::start(Arc::downgrade(&registry)));
        }
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
                    "TOO_MANY_STREAMS",
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

    /// Whether `token` is the admin token.
    pub fn is_admin(&self, token: Option<&str>) -> bool {
        match (&self.config.admin_token, token) {
            // Compare hashes so the comparison's time says nothing about the token.
            (Some(admin), Some(token)) => hash(admin) == hash(token),
            _ => false,
        }
    }

    /// Rebuilds every unfinished game of the store, so that its timers and server moves go on.
    /// A game whose data is damaged is left out with an error naming it; the others are served.
    /// Returns the number of games rebuilt.
    pub async fn recover(self: &Arc<Self>) -> Result<usize, StoreError> {
        /// Logs read from the store at once, ahead of the games being rebuilt in order.
        const READ_AHEAD: usize = 64;
        let mut rebuilt = 0;
        let mut records = self.hooks.store.unfinished().await?.into_iter();
        let mut pending = std::collections::VecDeque::new();
        loop {
            while pending.len() < READ_AHEAD
                && let Some((name, record)) = records.next()
            {
                let store = self.hooks.store.clone();
                let game = name.clone();
                let log = tokio::spawn(async move { stored_log(&*store, &game).await });
                pending.push_back((name, record, log));
            }
            let Some((name, record, log)) = pending.pop_front() else {
                break;
            };
            let loaded = match log.await {
                Ok(Ok(log)) => {
                    let _guard = self.loading.lock().await;
                    self.install(&name, &record, log, None, &mut None)
                        .map(|_| ())
                }
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match loaded {
                Ok(()) => rebuilt += 1,
                Err(error) => {
                    tracing::error!(game = %name, %error, "game not recovered: its stored data is damaged");
                }
            }
        }
        Ok(rebuilt)
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
        command: Box<game::Command>,
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
        first: &mut Option<Box<game::Command>>,
    ) -> Result<GameRef, ServiceError> {
        let _guard = self.loading.lock().await;
        if let Some(game) = self.live_ref(name)? {
            return Ok(game);
        }
        let Some((record, _)) = self.hooks.store.record(name).await? else {
            return Err(ServiceError::no_game(name));
        };
        let damaged = |error: String| {
            tracing::error!(game = %name, %error, "game not loaded: its stored data is damaged");
            ServiceError::Damaged {
                game: name.to_owned(),
                error,
            }
        };
        let log = stored_log(&*self.hooks.store, name).await?;
        self.install(name, &record, log, None, first)
            .map_err(damaged)
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
        first: &mut Option<Box<game::Command>>,
    ) -> Result<GameRef, String> {
        let lobby = Lobby::from_record(record)?;
        let tokens: Vec<TokenKey> = lobby
            .seats
            .iter()
            .filter_map(|s| s.token_hash.as_ref().map(token_key))
            .collect();
        let mut table = self.table.lock().map_err(|_| "registry lock poisoned")?;
        if let Some(slot) = table.by_name.get(name)
            && !slot.game.is_closed()
        {
            return Ok(slot.game.clone());
        }
        let seq = table.next;
        table.next += 1;
        let key: Arc<str> = Arc::from(name);
        let game = game::spawn(name, &self.hooks, seq, lobby, log, first)?;
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

    /// Remembers a token joined through this server.
    fn note_token(&self, token: TokenHash, name: &str) {
        let token = token_key(&token);
        if let Ok(mut table) = self.table.lock()
            && let Some(slot) = table.by_name.get_mut(name)
            && !slot.tokens.contains(&token)
        {
            slot.tokens.push(token);
            let seq = slot.seq;
            table.tokens.insert(token, seq);
        }
    }

    /// Holds a place for a game about to be created, within `max_games` and the client's
    /// `max_games_per_client`: creations at once each count, so they cannot pass a limit
    /// together. The place is given back if the creation fails or is cancelled.
    fn reserve(&self, client: Option<IpAddr>) -> Result<Reservation<'_>, ServiceError> {
        let mut table = self.table()?;
        if table.by_name.len() + table.reserved >= self.config.max_games {
            return Err(ServiceError::exhausted(
                "TOO_MANY_GAMES",
                "the server holds as many live games as it may; try again later",
            ));
        }
        if let Some(ip) = client {
            let count = table.per_client.entry(ip).or_default();
            if *count >= self.config.max_games_per_client {
                let limit = self.config.max_games_per_client;
                if *count == 0 {
                    table.per_client.remove(&ip);
                }
                return Err(ServiceError::exhausted(
                    "CLIENT_GAME_LIMIT",
                    format!(
                        "this address has {limit} live games, as many as one client may create"
                    ),
                ));
            }
            *count += 1;
        }
        table.reserved += 1;
        Ok(Reservation {
            registry: self,
            client,
            filled: false,
        })
    }

    /// Creates a game with open seats (bot seats taken); a table of bots only starts at once.
    /// A fixed deck needs `admin`.
    pub async fn create(
        self: &Arc<Self>,
        new: NewGame,
        admin: bool,
        client: Option<IpAddr>,
    ) -> Result<GameInfo, ServiceError> {
        let seats = usize::try_from(new.seats).unwrap_or(usize::MAX);
        let deck = if new.deck_order.is_empty() {
            None
        } else if new.rated {
            return Err(ServiceError::invalid(
                "RATED_GAME_FIXED_DECK",
                "a rated game is dealt from a shuffled deck: no deck_order",
            ));
        } else {
            if !admin {
                return Err(ServiceError::denied(
                    "ADMIN_TOKEN_REQUIRED",
                    "a fixed deck order needs the admin token",
                ));
            }
            let ids: Result<Vec<_>, _> = new
                .deck_order
                .iter()
                .map(|&id| u8::try_from(id).map(CardId))
                .collect();
            Some(ids.map_err(|_| {
                ServiceError::invalid("DECK_CARD_UNKNOWN", "deck_order: card id out of range")
            })?)
        };
        let setup = Setup {
            ruleset: new.ruleset,
            seats,
            options: new.options,
            first_dealer: new
                .first_dealer
                .map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
            deck,
        };
        setup.check()?;
        let mut bot_seats: Vec<Seat> = Vec::new();
        for &b in &new.bot_seats {
            let seat = usize::try_from(b).unwrap_or(usize::MAX);
            if seat >= seats {
                return Err(ServiceError::invalid(
                    "BOT_SEAT_OUT_OF_RANGE",
                    format!("bot_seats: {b} is not a seat of a {seats}-seat game"),
                ));
            }
            if bot_seats.contains(&seat) {
                return Err(ServiceError::invalid(
                    "BOT_SEAT_DUPLICATE",
                    format!("bot_seats: seat {b} is named twice"),
                ));
            }
            bot_seats.push(seat);
        }
        let mut reservation = self.reserve(client)?;
        let name = format!("games/{}", &new_token()[..16]);
        let invite_code = self.hooks.players.new_code(&name).await?;
        let lobby = Lobby {
            setup,
            timer: new.turn_timer,
            bot_level: new.bot_level,
            bot_think_ms: new
                .bot_think
                .map_or(0, |t| u32::try_from(t.as_millis()).unwrap_or(u32::MAX)),
            seats: (0..seats)
                .map(|seat| {
                    let bot = bot_seats.contains(&seat);
                    SeatState {
                        token_hash: None,
                        name: if bot { "bot".into() } else { String::new() },
                        server_played: bot,
                        taken: bot,
                        left: false,
                        player: None,
                    }
                })
                .collect(),
            bot_seats,
            created_unix: now_unix(),
            expired: false,
            rematch: None,
            rated: new.rated,
            seat_levels: new.seat_levels,
            invite_code: Some(invite_code),
        };
        let record = lobby.to_record();
        self.hooks.store.save_game(&name, &record, false).await?;
        let all_bots = lobby.all_bots();
        let game = self
            .install(
                &name,
                &record,
                EventLog::default(),
                Some(&mut reservation),
                &mut None,
            )
            .map_err(|error| ServiceError::Damaged {
                game: name.clone(),
                error,
            })?;
        tracing::info!(game = %name, seats, "game created");
        if all_bots {
            // A table of server-played seats has nobody to start it: it starts at once. The
            // description is asked after, so it shows what the bots played meanwhile (all of a
            // game with no bot delay).
            game.ask(|reply| game::Command::Start { reply }).await?;
        }
        game.ask(|reply| game::Command::Describe { reply }).await
    }

    /// The rematch of finished game `name`, asked with a seat token of it: created by the first
    /// to ask (on this server, one at a time), the same game for the others.
    pub async fn rematch(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<GameInfo, ServiceError> {
        self.seat_of(name, token).await?;
        let _one_at_a_time = self.rematches.lock().await;
        let old = self.get(name).await?;
        let info = old.ask(|reply| game::Command::Describe { reply }).await?;
        if !matches!(info.status, Status::Finished | Status::Abandoned) {
            return Err(ServiceError::precondition(
                "GAME_NOT_FINISHED",
                "a rematch follows a finished game",
            ));
        }
        if let Some(next) = &info.lobby.rematch {
            return self.describe(next).await;
        }
        let lobby = &info.lobby;
        let new = NewGame {
            ruleset: lobby.setup.ruleset,
            seats: u32::try_from(lobby.setup.seats).unwrap_or(u32::MAX),
            options: lobby.setup.options,
            first_dealer: None,
            deck_order: Vec::new(),
            bot_seats: lobby
                .bot_seats
                .iter()
                .map(|&s| u32::try_from(s).unwrap_or(u32::MAX))
                .collect(),
            bot_level: lobby.bot_level,
            bot_think: (lobby.bot_think_ms > 0)
                .then(|| Duration::from_millis(u64::from(lobby.bot_think_ms))),
            turn_timer: lobby.timer,
            rated: lobby.rated,
            seat_levels: lobby.seat_levels.clone(),
        };
        let created = self.create(new, false, client).await?;
        let linked = old
            .ask(|reply| game::Command::LinkRematch {
                name: created.name.clone(),
                reply,
            })
            .await?;
        if linked == created.name {
            Ok(created)
        } else {
            // Another server linked its own first: that one is the rematch (this lobby expires).
            self.describe(&linked).await
        }
    }

    /// A game's description.
    pub async fn describe(self: &Arc<Self>, name: &str) -> Result<GameInfo, ServiceError> {
        let game = self.get(name).await?;
        game.ask(|reply| game::Command::Describe { reply }).await
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
                let Ok(info) = game.ask(|reply| game::Command::Describe { reply }).await else {
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

    /// Takes a seat (the first open one when `seat` is `None`) and returns its token. `name`
    /// is the game's name or its invite code. With `player` (`players/{id}` and its token),
    /// the seat is that player's, its token derived from the player's; a player who already
    /// holds a seat of the game gets that seat again.
    pub async fn join(
        self: &Arc<Self>,
        name: &str,
        seat: Option<u32>,
        display_name: &str,
        player: Option<(&str, Option<&str>)>,
    ) -> Result<(Seat, String, GameInfo), ServiceError> {
        let name = self.resolve(name).await?;
        let name = name.as_str();
        let game = self.get(name).await?;
        let seat = seat.map(|s| usize::try_from(s).unwrap_or(usize::MAX));
        let mut display_name: String = display_name.chars().take(64).collect();
        let joining = match player {
            Some((player, token)) => {
                let found = self.hooks.players.authenticate(player, token).await?;
                if display_name.trim().is_empty() {
                    display_name = found.display_name;
                }
                Some(game::Joining {
                    player: found.name,
                    token: token.unwrap_or_default().to_owned(),
                    players: self.hooks.players.clone(),
                })
            }
            None => None,
        };
        let joined = game
            .ask(|reply| game::Command::Join {
                seat,
                name: display_name,
                player: joining,
                reply,
            })
            .await?;
        self.note_token(hash(&joined.1), name);
        Ok(joined)
    }

    /// The game `name` names: itself, or the game of an invite code while its lobby is open.
    async fn resolve(self: &Arc<Self>, name: &str) -> Result<String, ServiceError> {
        if name.starts_with("games/") {
            return Ok(name.to_owned());
        }
        let Some(code) = super::players::as_code(name) else {
            // Neither a name nor a code: refused as a malformed name.
            return game_id(name).map(|_| name.to_owned());
        };
        let Some(game) = self.hooks.players.code(&code).await? else {
            return Err(ServiceError::not_found(
                "INVITE_CODE_UNKNOWN",
                format!("no game has the invite code {code} (a code ends with its game)"),
            ));
        };
        let info = self.describe(&game).await?;
        if info.status != Status::Waiting {
            return Err(ServiceError::precondition(
                "INVITE_CODE_EXPIRED",
                format!("the invite code {code} expired: its game's lobby is no longer open"),
            ));
        }
        Ok(game)
    }

    /// Up to `limit` of the seats a player took, newest first, with each seat's token (the
    /// player's `token` must be given).
    pub async fn player_games(
        self: &Arc<Self>,
        player: &str,
        token: Option<&str>,
        limit: u32,
    ) -> Result<Vec<(GameInfo, Seat, String)>, ServiceError> {
        let found = self.hooks.players.authenticate(player, token).await?;
        let token = token.unwrap_or_default();
        let limit = if limit == 0 { 50 } else { limit.min(100) } as usize;
        let mut out = Vec::new();
        for held in self.hooks.players.games(&found.name, limit).await? {
            let Ok(info) = self.describe(&held.game).await else {
                continue;
            };
            let theirs = info
                .lobby
                .seats
                .get(held.seat)
                .is_some_and(|s| s.player.as_deref() == Some(found.name.as_str()));
            if theirs {
                let seat_token = super::players::seat_token(token, &held.game, held.seat);
                self.note_token(hash(&seat_token), &held.game);
                out.push((info, held.seat, seat_token));
            }
        }
        Ok(out)
    }

    /// The seat `token` holds in game `name`.
    pub async fn seat_of(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<Seat, ServiceError> {
        let game = self.get(name).await?;
        let token = self.token(name, token)?;
        let found = game
            .ask(|reply| game::Command::SeatOf { token, reply })
            .await;
        self.explain(name, &token, found)
    }

    /// The viewer a request is: the seat its token holds, or a spectator without a token.
    pub async fn viewer(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<Viewer, ServiceError> {
        match token {
            Some(_) => Ok(Viewer::Seat(self.seat_of(name, token).await?)),
            None => Ok(Viewer::Spectator),
        }
    }

    /// The hash of a request's token; none is refused.
    fn token(&self, _name: &str, token: Option<&str>) -> Result<TokenHash, ServiceError> {
        match token {
            Some(t) => Ok(hash(t)),
            None => Err(ServiceError::unauthenticated(
                "this call needs a seat token as `authorization: Bearer <token>`",
            )),
        }
    }

    /// A token refused by the game: said to belong to another game when this server knows it.
    fn explain<T>(
        &self,
        name: &str,
        token: &TokenHash,
        result: Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        match result {
            Err(ServiceError::Unauthenticated(message)) => {
                let other = self
                    .table
                    .lock()
                    .ok()
                    .and_then(|t| {
                        let seq = t.tokens.get(&token_key(token))?;
                        t.order.get(seq).cloned()
                    })
                    .is_some_and(|game| &*game != name);
                if other {
                    Err(ServiceError::denied(
                        "SEAT_TOKEN_OTHER_GAME",
                        format!("this seat token belongs to another game than {name}"),
                    ))
                } else {
                    Err(ServiceError::Unauthenticated(message))
                }
            }
            other => other,
        }
    }

    /// Deals the first round; the caller must hold a seat or the admin token.
    pub async fn start(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<GameInfo, ServiceError> {
        let game = self.get(name).await?;
        if !self.is_admin(token) {
            self.seat_of(name, token).await?;
        }
        game.ask(|reply| game::Command::Start { reply }).await
    }

    /// A move by the seat `token` holds.
    pub async fn submit(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
        action: crate::rules::Action,
        request_id: String,
        expected_version: Option<u64>,
    ) -> Result<game::Submitted, ServiceError> {
        let game = self.get(name).await?;
        let token = self.token(name, token)?;
        let answer = game
            .ask(|reply| game::Command::Submit {
                token,
                action,
                request_id,
                expected_version,
                reply,
            })
            .await;
        self.explain(name, &token, answer)
    }

    /// The seat `token` holds leaves the game.
    pub async fn leave(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<GameInfo, ServiceError> {
        let game = self.get(name).await?;
        let token = self.token(name, token)?;
        let answer = game
            .ask(|reply| game::Command::Leave { token, reply })
            .await;
        self.explain(name, &token, answer)
    }

    /// A viewer's view of game `name` and its turn deadline.
    pub async fn view(
        self: &Arc<Self>,
        name: &str,
        viewer: Viewer,
    ) -> Result<(crate::rules::View, Option<tokio::time::Instant>), ServiceError> {
        let game = self.get(name).await?;
        game.ask(|reply| game::Command::View { viewer, reply })
            .await
    }

    /// The whole log of game `name` (once it is over, or for the admin).
    pub async fn export(
        self: &Arc<Self>,
        name: &str,
        admin: bool,
    ) -> Result<Vec<crate::rules::Event>, ServiceError> {
        let game = self.get(name).await?;
        game.ask(|reply| game::Command::Export { admin, reply })
            .await
    }

    /// Game `name` after its event `version`, for a replay: the log's last version, the state and
    /// the event. Refused as [`Registry::export`] refuses.
    pub async fn replay(
        self: &Arc<Self>,
        name: &str,
        version: u64,
        admin: bool,
    ) -> Result<(u64, crate::rules::Game, crate::rules::Event), ServiceError> {
        let events = self.export(name, admin).await?;
        let last = events.len() as u64;
        let upto = usize::try_from(version).unwrap_or(usize::MAX);
        if version == 0 || version > last {
            return Err(ServiceError::invalid(
                "VERSION_OUT_OF_RANGE",
                format!("version {version} is not an event of this game (1 to {last})"),
            ));
        }
        let state = crate::rules::Game::replay(&events[..upto]).map_err(|_| {
            ServiceError::precondition("GAME_NOT_STARTED", "the game was never started")
        })?;
        let event = events[upto - 1].clone();
        Ok((last, state, event))
    }

    /// The record of game `name`: from its task, else from the store.
    pub(crate) async fn lobby(&self, name: &str) -> Option<Lobby> {
        let live = self.live_ref(name).ok().flatten();
        if let Some(game) = live
            && let Ok(info) = game.ask(|reply| game::Command::Describe { reply }).await
        {
            return Some(info.lobby);
        }
        match self.hooks.store.record(name).await {
            Ok(Some((record, _))) => Lobby::from_record(&record).ok(),
            _ => None,
        }
    }
}

/// A game's log from the store: its latest snapshot and the events after it, or every event when
/// it has no snapshot or the snapshot cannot be used (then it says so).
async fn stored_log(store: &dyn EventStore, name: &str) -> Result<EventLog, StoreError> {
    if let Some((version, state)) = store.snapshot(name).await? {
        match Game::restore(&state) {
            Ok(game) if game.version() == version => {
                let tail = store.read(name, version).await?;
                return Ok(EventLog::from_snapshot(version, game, tail));
            }
            Ok(_) => {
                tracing::warn!(game = %name, version, "snapshot version mismatch; replaying the whole log");
            }
            Err(error) => {
                tracing::warn!(game = %name, version, %error, "snapshot not usable; replaying the whole log");
            }
        }
    }
    Ok(EventLog::new(store.read(name, 0).await?))
}

/// Follows the writes of other servers sharing the store: tells the task of each live game
/// another server wrote to, and wakes the firehose.
async fn follow(registry: Weak<Registry>, mut changes: tokio::sync::broadcast::Receiver<Change>) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let change = match changes.recv().await {
            Ok(change) => change,
            Err(RecvError::Lagged(_)) => Change::Any,
            Err(RecvError::Closed) => return,
        };
        let Some(registry) = registry.upgrade() else {
            return;
        };
        registry.hooks.appended.send_modify(|n| *n += 1);
        let Ok(table) = registry.table.lock() else {
            return;
        };
        match change {
            Change::Appended { game, version } => {
                if let Some(slot) = table.by_name.get(game.as_str())
                    && version > slot.game.version.get()
                    && let Some(store_version) = &slot.game.store_version
                {
                    store_version.send_replace(version);
                }
            }
            Change::Any => {
                for store_version in table
                    .by_name
                    .values()
                    .filter_map(|s| s.game.store_version.as_ref())
                {
                    store_version.send_replace(game::UNKNOWN_VERSION);
                }
            }
        }
    }
}
