//! Games and seats: the lobby, seat tokens, moves applied one at a time per game (each game has
//! its own lock, so games run in parallel), the server's own moves for bot, departed and timed-out
//! seats, and the logs that streams read.
//!
//! A move is decided on the current state, appended to the store with the version it expects,
//! and only then applied and acknowledged: a failed append changes nothing.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, SystemTime};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::bots::{self, Level};
use crate::proto as pb;
use crate::rules::{Action, Event, Game, Phase, Seat, Setup, Viewer, decide, encode, project};
use crate::store::EventStore;

use super::convert;
use super::error::ServiceError;
use super::log::EventLog;

/// The reason of an append that lost the race against another server.
const STORE_CONFLICT: &str = "STORE_CONFLICT";

/// Limits and secrets of a running service.
#[derive(Clone, Debug)]
pub struct Config {
    /// The admin token: fixed decks and exports of running games.
    pub admin_token: Option<String>,
    /// How long an idle stream waits before sending a heartbeat.
    pub heartbeat: Duration,
    /// Messages buffered per stream before the stream waits for its client.
    pub stream_buffer: usize,
    /// Games kept at once; creating more is refused.
    pub max_games: usize,
    /// How long a server-played seat waits before each move, so that people can follow.
    pub bot_delay: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            admin_token: None,
            heartbeat: Duration::from_secs(15),
            stream_buffer: 256,
            max_games: 100_000,
            bot_delay: Duration::ZERO,
        }
    }
}

/// One seat of the lobby.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct SeatState {
    #[serde(with = "token_hash_hex")]
    token_hash: Option<[u8; 32]>,
    name: String,
    server_played: bool,
    taken: bool,
}

/// A game's mutable part, behind its lock.
pub(crate) struct Entry {
    /// The creation options as sent back to clients (no deck order).
    pub(crate) options: pb::GameOptions,
    setup: Setup,
    timer: Option<Duration>,
    seats: Vec<SeatState>,
    /// The game, once started.
    pub(crate) game: Option<Game>,
    /// The log: the latest snapshot's state and the events after it.
    pub(crate) log: EventLog,
    rng: StdRng,
    bot_level: Level,
    requests: HashMap<(Seat, String), pb::SubmitActionResponse>,
    /// When the seat to move runs out of time.
    pub(crate) deadline: Option<Instant>,
}

/// A game shared by handlers, streams and its timer.
pub struct GameHandle {
    /// `games/{id}`.
    pub name: String,
    pub(crate) entry: tokio::sync::Mutex<Entry>,
    /// The number of events in the log; streams wait on it.
    pub(crate) version: watch::Sender<u64>,
}

/// Every game of this server.
pub struct Games {
    games: RwLock<HashMap<String, Arc<GameHandle>>>,
    order: RwLock<Vec<String>>,
    tokens: RwLock<HashMap<[u8; 32], String>>,
    store: Arc<dyn EventStore>,
    /// Counts appends, this server's and (for a shared store) other servers'; firehose streams
    /// wait on it, then read the store.
    pub(crate) appended: watch::Sender<u64>,
    /// Limits and secrets.
    pub config: Config,
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
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

fn status(entry: &Entry) -> pb::GameStatus {
    match &entry.game {
        None => pb::GameStatus::Waiting,
        Some(g) if g.is_over() => pb::GameStatus::Finished,
        Some(_) => pb::GameStatus::Playing,
    }
}

/// Parses `games/{id}`.
pub fn game_id(name: &str) -> Result<&str, ServiceError> {
    match name.strip_prefix("games/") {
        Some(id) if !id.is_empty() && !id.contains('/') => Ok(id),
        _ => Err(ServiceError::invalid(
            "INVALID_GAME_NAME",
            format!("{name:?} is not a game name of the form games/{{game}}"),
        )),
    }
}

impl Games {
    /// No games yet.
    pub fn new(store: Arc<dyn EventStore>, config: Config) -> Arc<Games> {
        Arc::new(Games {
            games: RwLock::default(),
            order: RwLock::default(),
            tokens: RwLock::default(),
            store,
            appended: watch::channel(0).0,
            config,
        })
    }

    /// Saves the game's lobby record.
    async fn persist(&self, name: &str, entry: &Entry) -> Result<(), ServiceError> {
        let record = serde_json::to_string(&Record::of(entry))
            .map_err(|e| ServiceError::unavailable(e.to_string()))?;
        let finished = entry.game.as_ref().is_some_and(Game::is_over);
        self.store
            .save_game(name, &record, finished)
            .await
            .map_err(|e| ServiceError::unavailable(e.to_string()))
    }

    /// The store.
    pub(crate) fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// The options a game was created with, as shown to clients: from this server's copy, else
    /// from the store's record (a game another server holds, or a finished one).
    pub(crate) async fn shown_options(&self, name: &str) -> pb::GameOptions {
        if let Ok(handle) = self.get(name) {
            return handle.entry.lock().await.options.clone();
        }
        match self.store.record(name).await {
            Ok(Some((record, _))) => serde_json::from_str::<Record>(&record)
                .map_err(|e| e.to_string())
                .and_then(|r| r.shown_options())
                .unwrap_or_default(),
            _ => pb::GameOptions::default(),
        }
    }

    /// Rebuilds every unfinished game of the store: lobby, state, log, timers, tokens. A game
    /// whose data is damaged is left out with an error naming it; the others are served.
    /// Returns the number of games rebuilt.
    pub async fn recover(self: &Arc<Self>) -> Result<usize, crate::store::StoreError> {
        /// Logs read from the store at once, ahead of the games being rebuilt in order.
        const READ_AHEAD: usize = 64;
        self.follow_store();
        let mut rebuilt = 0;
        let mut records = self.store.unfinished().await?.into_iter();
        let mut pending = std::collections::VecDeque::new();
        loop {
            while pending.len() < READ_AHEAD
                && let Some((name, record)) = records.next()
            {
                let games = self.clone();
                let game = name.clone();
                let log = tokio::spawn(async move { games.stored_log(&game).await });
                pending.push_back((name, record, log));
            }
            let Some((name, record, log)) = pending.pop_front() else {
                break;
            };
            let loaded = match log.await {
                Ok(Ok(log)) => self.load_from(&name, &record, log).await,
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match loaded {
                Ok(_) => rebuilt += 1,
                Err(error) => {
                    tracing::error!(game = %name, %error, "game not recovered: its stored data is damaged");
                }
            }
        }
        Ok(rebuilt)
    }

    /// A game's log from the store: its latest snapshot and the events after it, or every
    /// event when it has no snapshot or the snapshot cannot be used (then it says so).
    async fn stored_log(&self, name: &str) -> Result<EventLog, crate::store::StoreError> {
        if let Some((version, state)) = self.store.snapshot(name).await? {
            match Game::restore(&state) {
                Ok(game) if game.version() == version => {
                    let tail = self.store.read(name, version).await?;
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
        Ok(EventLog::new(self.store.read(name, 0).await?))
    }

    /// Rebuilds one game from its record and its stored events (from its latest snapshot), and
    /// serves it.
    async fn load(self: &Arc<Self>, name: &str, record: &str) -> Result<Arc<GameHandle>, String> {
        let log = self.stored_log(name).await.map_err(|e| e.to_string())?;
        self.load_from(name, record, log).await
    }

    /// Rebuilds one game from its record and its log, and serves it.
    async fn load_from(
        self: &Arc<Self>,
        name: &str,
        record: &str,
        log: EventLog,
    ) -> Result<Arc<GameHandle>, String> {
        let entry = serde_json::from_str::<Record>(record)
            .map_err(|e| e.to_string())
            .and_then(|r| r.entry(log))?;
        let name = name.to_owned();
        let version = entry.log.len();
        let playing = entry.game.as_ref().is_some_and(|g| !g.is_over());
        if let Ok(mut tokens) = self.tokens.write() {
            for seat in &entry.seats {
                if let Some(h) = seat.token_hash {
                    tokens.insert(h, name.clone());
                }
            }
        }
        let handle = Arc::new(GameHandle {
            name: name.clone(),
            entry: tokio::sync::Mutex::new(entry),
            version: watch::channel(version).0,
        });
        if let (Ok(mut games), Ok(mut order)) = (self.games.write(), self.order.write()) {
            if let Some(existing) = games.get(&name) {
                return Ok(existing.clone());
            }
            games.insert(name.clone(), handle.clone());
            order.push(name);
        }
        if playing {
            {
                let mut entry = handle.entry.lock().await;
                entry.deadline = entry.timer.map(|t| Instant::now() + t);
                self.after_moves(&handle, &mut entry)
                    .await
                    .map_err(|e| e.message)?;
            }
            tokio::spawn(run_clock(
                Arc::downgrade(self),
                Arc::downgrade(&handle),
                self.config.bot_delay,
            ));
        }
        Ok(handle)
    }

    /// The game named `name`, loaded from the store if this server does not hold it (a finished
    /// game after a restart, for its view and export).
    pub async fn find(self: &Arc<Self>, name: &str) -> Result<Arc<GameHandle>, ServiceError> {
        match self.get(name) {
            Err(e) if e.reason == "GAME_NOT_FOUND" => {}
            found => return found,
        }
        let Some((record, _)) = self
            .store
            .record(name)
            .await
            .map_err(|e| ServiceError::unavailable(e.to_string()))?
        else {
            return Err(ServiceError::no_game(name));
        };
        self.load(name, &record).await.map_err(|error| {
            tracing::error!(game = %name, %error, "game not loaded: its stored data is damaged");
            ServiceError {
                code: tonic::Code::DataLoss,
                reason: "GAME_DATA_DAMAGED",
                message: format!("the stored data of {name} is damaged: {error}"),
            }
        })
    }

    /// Whether `token` is the admin token.
    pub fn is_admin(&self, token: Option<&str>) -> bool {
        match (&self.config.admin_token, token) {
            (Some(admin), Some(token)) => {
                // Compare hashes so the comparison's time says nothing about the token.
                hash(admin) == hash(token)
            }
            _ => false,
        }
    }

    /// The game named `name`.
    pub fn get(&self, name: &str) -> Result<Arc<GameHandle>, ServiceError> {
        game_id(name)?;
        self.games
            .read()
            .map_err(|_| ServiceError::unavailable("games lock poisoned"))?
            .get(name)
            .cloned()
            .ok_or_else(|| ServiceError::no_game(name))
    }

    /// The seat `token` holds in `handle`'s game.
    pub async fn seat_of(
        &self,
        handle: &Arc<GameHandle>,
        token: Option<&str>,
    ) -> Result<Seat, ServiceError> {
        let Some(token) = token else {
            return Err(ServiceError::unauthenticated(
                "this call needs a seat token as `authorization: Bearer <token>`",
            ));
        };
        let h = hash(token);
        let mut entry = handle.entry.lock().await;
        if let Some(seat) = entry.seats.iter().position(|s| s.token_hash == Some(h)) {
            return Ok(seat);
        }
        // The seat may have been joined through another server sharing the store.
        if self.refresh(handle, &mut entry).await.is_ok()
            && let Some(seat) = entry.seats.iter().position(|s| s.token_hash == Some(h))
        {
            return Ok(seat);
        }
        drop(entry);
        let other = self
            .tokens
            .read()
            .map_err(|_| ServiceError::unavailable("tokens lock poisoned"))?
            .contains_key(&h);
        if other {
            Err(ServiceError::denied(
                "SEAT_TOKEN_OTHER_GAME",
                format!(
                    "this seat token belongs to another game than {}",
                    handle.name
                ),
            ))
        } else {
            Err(ServiceError::unauthenticated("unknown seat token"))
        }
    }

    /// Creates a game with open seats (bot seats taken). A fixed deck needs `admin`.
    pub async fn create(
        self: &Arc<Self>,
        options: &pb::GameOptions,
        admin: bool,
    ) -> Result<pb::Game, ServiceError> {
        let seats = usize::try_from(options.seats).unwrap_or(usize::MAX);
        let deck = if options.deck_order.is_empty() {
            None
        } else {
            if !admin {
                return Err(ServiceError::denied(
                    "ADMIN_TOKEN_REQUIRED",
                    "a fixed deck order needs the admin token",
                ));
            }
            let ids: Result<Vec<_>, _> = options
                .deck_order
                .iter()
                .map(|&id| u8::try_from(id).map(crate::rules::CardId))
                .collect();
            Some(ids.map_err(|_| {
                ServiceError::invalid("DECK_CARD_UNKNOWN", "deck_order: card id out of range")
            })?)
        };
        let setup = Setup {
            ruleset: convert::ruleset_from(options.ruleset)?,
            seats,
            options: convert::options_from(options)?,
            first_dealer: options
                .first_dealer
                .map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
            deck,
        };
        setup.check()?;
        let mut bots = vec![false; seats];
        for &b in &options.bot_seats {
            match bots.get_mut(usize::try_from(b).unwrap_or(usize::MAX)) {
                Some(slot) => *slot = true,
                None => {
                    return Err(ServiceError::invalid(
                        "BOT_SEAT_OUT_OF_RANGE",
                        format!("bot_seats: {b} is not a seat of a {seats}-seat game"),
                    ));
                }
            }
        }
        if self.order.read().map(|o| o.len()).unwrap_or(0) >= self.config.max_games {
            return Err(ServiceError {
                code: tonic::Code::ResourceExhausted,
                reason: "TOO_MANY_GAMES",
                message: "the server holds as many games as it may".into(),
            });
        }
        let mut shown = options.clone();
        shown.deck_order.clear();
        shown.ruleset = convert::ruleset(setup.ruleset) as i32;
        shown.target_score = setup.options.target;
        let name = format!("games/{}", &new_token()[..16]);
        let entry = Entry {
            options: shown,
            setup,
            timer: (options.turn_timer_seconds > 0)
                .then(|| Duration::from_secs(u64::from(options.turn_timer_seconds))),
            seats: bots
                .iter()
                .map(|&bot| SeatState {
                    token_hash: None,
                    name: if bot { "bot".into() } else { String::new() },
                    server_played: bot,
                    taken: bot,
                })
                .collect(),
            game: None,
            log: EventLog::default(),
            rng: StdRng::from_rng(&mut rand::rng()),
            bot_level: convert::bot_level_from(options.bot_level)?,
            requests: HashMap::new(),
            deadline: None,
        };
        let game = game_message(&name, &entry);
        self.persist(&name, &entry).await?;
        let handle = Arc::new(GameHandle {
            name: name.clone(),
            entry: tokio::sync::Mutex::new(entry),
            version: watch::channel(0).0,
        });
        self.games
            .write()
            .map_err(|_| ServiceError::unavailable("games lock poisoned"))?
            .insert(name.clone(), handle);
        self.order
            .write()
            .map_err(|_| ServiceError::unavailable("games lock poisoned"))?
            .push(name);
        Ok(game)
    }

    /// The game's public description.
    pub async fn describe(&self, handle: &GameHandle) -> pb::Game {
        game_message(&handle.name, &*handle.entry.lock().await)
    }

    /// Games, newest first.
    pub async fn list(&self, open_only: bool, page_size: u32) -> Vec<pb::Game> {
        let limit = if page_size == 0 {
            100
        } else {
            page_size.min(100)
        } as usize;
        let names: Vec<String> = self
            .order
            .read()
            .map(|o| o.iter().rev().cloned().collect())
            .unwrap_or_default();
        let mut out = Vec::new();
        for name in names {
            if out.len() >= limit {
                break;
            }
            if let Ok(handle) = self.get(&name) {
                let game = self.describe(&handle).await;
                if !open_only
                    || game.status == pb::GameStatus::Waiting as i32
                        && game.seats.iter().any(|s| !s.taken)
                {
                    out.push(game);
                }
            }
        }
        out
    }

    /// Takes a seat (the first open one when `seat` is `None`) and returns its token.
    pub async fn join(
        &self,
        handle: &GameHandle,
        seat: Option<u32>,
        name: &str,
    ) -> Result<(Seat, String, pb::Game), ServiceError> {
        let mut entry = handle.entry.lock().await;
        if entry.game.is_some() {
            return Err(ServiceError::precondition(
                "GAME_ALREADY_STARTED",
                "the game has started; its seats are closed",
            ));
        }
        let seat =
            match seat {
                Some(s) => {
                    let s = usize::try_from(s).unwrap_or(usize::MAX);
                    match entry.seats.get(s) {
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
                    }
                }
                None => entry.seats.iter().position(|s| !s.taken).ok_or_else(|| {
                    ServiceError::precondition("NO_OPEN_SEAT", "every seat is taken")
                })?,
            };
        let token = new_token();
        let h = hash(&token);
        let before = std::mem::replace(
            &mut entry.seats[seat],
            SeatState {
                token_hash: Some(h),
                name: name.chars().take(64).collect(),
                server_played: false,
                taken: true,
            },
        );
        if let Err(e) = self.persist(&handle.name, &entry).await {
            entry.seats[seat] = before;
            return Err(e);
        }
        self.tokens
            .write()
            .map_err(|_| ServiceError::unavailable("tokens lock poisoned"))?
            .insert(h, handle.name.clone());
        Ok((seat, token, game_message(&handle.name, &entry)))
    }

    /// Deals the first round. Every seat must be taken.
    pub async fn start(
        self: &Arc<Self>,
        handle: &Arc<GameHandle>,
    ) -> Result<pb::Game, ServiceError> {
        let mut entry = handle.entry.lock().await;
        if entry.game.is_some() {
            return Err(ServiceError::precondition(
                "GAME_ALREADY_STARTED",
                "the game has started",
            ));
        }
        if let Some(open) = entry.seats.iter().position(|s| !s.taken) {
            return Err(ServiceError::precondition(
                "SEATS_OPEN",
                format!("seat {open} is still open"),
            ));
        }
        let Entry { setup, rng, .. } = &mut *entry;
        let (game, events) = Game::new(setup, rng)?;
        let created =
            Game::replay(&events[..1]).map_err(|e| ServiceError::unavailable(e.to_string()))?;
        entry.game = Some(created);
        if let Err(e) = self.commit(handle, &mut entry, events, None).await {
            entry.game = None;
            if e.reason == STORE_CONFLICT {
                // Another server sharing the store started it first.
                self.refresh(handle, &mut entry).await?;
                return Ok(game_message(&handle.name, &entry));
            }
            return Err(e);
        }
        debug_assert_eq!(entry.game.as_ref(), Some(&game));
        self.after_moves(handle, &mut entry).await?;
        tokio::spawn(run_clock(
            Arc::downgrade(self),
            Arc::downgrade(handle),
            self.config.bot_delay,
        ));
        Ok(game_message(&handle.name, &entry))
    }

    /// Makes a move for `seat`.
    pub async fn submit(
        &self,
        handle: &Arc<GameHandle>,
        seat: Seat,
        action: Action,
        request_id: &str,
        expected_version: Option<u64>,
    ) -> Result<pb::SubmitActionResponse, ServiceError> {
        let mut entry = handle.entry.lock().await;
        let key = (seat, request_id.to_owned());
        if !request_id.is_empty()
            && let Some(first) = entry.requests.get(&key)
        {
            return Ok(first.clone());
        }
        let mut attempts = 0;
        let seen = loop {
            attempts += 1;
            if entry.game.is_none() {
                return Err(ServiceError::precondition(
                    "GAME_NOT_STARTED",
                    "the game has not started",
                ));
            }
            if expected_version.is_some_and(|e| e > entry.log.len()) {
                // The client saw events this server has not read yet (another server's).
                self.refresh(handle, &mut entry).await?;
            }
            let version = entry.log.len();
            if let Some(expected) = expected_version
                && expected != version
            {
                return Err(ServiceError::precondition(
                    "VERSION_MISMATCH",
                    format!("expected version {expected}, the game is at {version}"),
                ));
            }
            let decided = {
                let Entry { game, rng, .. } = &mut *entry;
                let Some(game) = game.as_ref() else {
                    return Err(ServiceError::precondition(
                        "GAME_NOT_STARTED",
                        "the game has not started",
                    ));
                };
                decide(game, seat, action, rng)
            };
            let events = match decided {
                Ok(events) => events,
                // This server's copy may be behind another server's writes: catch up once and
                // decide again before refusing.
                Err(refusal) if attempts == 1 => {
                    let before = entry.log.len();
                    self.refresh(handle, &mut entry).await?;
                    if entry.log.len() == before {
                        return Err(refusal.into());
                    }
                    continue;
                }
                Err(refusal) => return Err(refusal.into()),
            };
            match self
                .commit(handle, &mut entry, events, Some(Viewer::Seat(seat)))
                .await
            {
                Ok(seen) => break seen,
                // Another server appended first: catch up and decide again on the new state.
                Err(e) if e.reason == STORE_CONFLICT && attempts < 5 => {
                    self.refresh(handle, &mut entry).await?;
                }
                Err(e) => return Err(e),
            }
        };
        let response = pb::SubmitActionResponse {
            version: entry.log.len(),
            events: seen,
        };
        if let Err(e) = self.after_moves(handle, &mut entry).await {
            // The move itself is committed; the server's own seats will move on the next wake.
            tracing::warn!(game = %handle.name, error = %e.message, "server seats did not move");
        }
        if !request_id.is_empty() {
            if entry.requests.len() >= 4096 {
                entry.requests.clear();
            }
            entry.requests.insert(key, response.clone());
        }
        Ok(response)
    }

    /// The seat leaves; the server plays it from now on.
    pub async fn leave(
        &self,
        handle: &Arc<GameHandle>,
        seat: Seat,
    ) -> Result<pb::Game, ServiceError> {
        let mut entry = handle.entry.lock().await;
        let Some(state) = entry.seats.get_mut(seat) else {
            return Err(ServiceError::invalid(
                "NO_SUCH_SEAT",
                format!("seat {seat} is not at this table"),
            ));
        };
        let was = state.server_played;
        state.server_played = true;
        if let Err(e) = self.persist(&handle.name, &entry).await {
            if let Some(state) = entry.seats.get_mut(seat) {
                state.server_played = was;
            }
            return Err(e);
        }
        self.after_moves(handle, &mut entry).await?;
        Ok(game_message(&handle.name, &entry))
    }

    /// The view of `viewer`, with the turn deadline.
    pub async fn view(
        &self,
        handle: &Arc<GameHandle>,
        viewer: Viewer,
    ) -> Result<pb::View, ServiceError> {
        let mut entry = handle.entry.lock().await;
        if entry.game.is_none() {
            // Another server sharing the store may have started it.
            self.refresh(handle, &mut entry).await?;
        }
        let Some(game) = &entry.game else {
            return Err(ServiceError::precondition(
                "GAME_NOT_STARTED",
                "the game has not started",
            ));
        };
        Ok(convert::view(
            &handle.name,
            &game.view(viewer),
            deadline_timestamp(entry.deadline),
        ))
    }

    /// The whole log, encoded, for a finished game or the admin.
    pub async fn export(
        &self,
        handle: &GameHandle,
        admin: bool,
    ) -> Result<Vec<pb::ExportedEvent>, ServiceError> {
        let (version, held) = {
            let entry = handle.entry.lock().await;
            let finished = entry.game.as_ref().is_some_and(Game::is_over);
            if !finished && !admin {
                return Err(ServiceError::denied(
                    "GAME_NOT_FINISHED",
                    "a game's log may be exported once it is over, or with the admin token",
                ));
            }
            (entry.log.len(), entry.log.since(0).map(<[Event]>::to_vec))
        };
        // Events before the last snapshot are no longer in memory: the store has them all.
        let events = match held {
            Some(events) => events,
            None => {
                let mut events = self
                    .store
                    .read(&handle.name, 0)
                    .await
                    .map_err(|e| ServiceError::store(&e))?;
                events.truncate(usize::try_from(version).unwrap_or(usize::MAX));
                events
            }
        };
        Ok(events
            .iter()
            .enumerate()
            .map(|(i, e)| pb::ExportedEvent {
                version: i as u64 + 1,
                json: encode(e),
            })
            .collect())
    }

    /// Appends `events` to the store, then applies them and publishes them. Returns them as
    /// `viewer` sees them.
    async fn commit(
        &self,
        handle: &Arc<GameHandle>,
        entry: &mut Entry,
        events: Vec<Event>,
        viewer: Option<Viewer>,
    ) -> Result<Vec<pb::Event>, ServiceError> {
        let expected = entry.log.len();
        self.store
            .append(&handle.name, expected, &events)
            .await
            .map_err(|e| match e {
                crate::store::StoreError::Conflict { .. } => ServiceError {
                    code: tonic::Code::Aborted,
                    reason: STORE_CONFLICT,
                    message: format!("{e}; another server moved the game first, try again"),
                },
                e => ServiceError::unavailable(e.to_string()),
            })?;
        Ok(self.apply_local(handle, entry, events, viewer).await)
    }

    /// Applies events that are in the store to this server's copy of the game and publishes
    /// them to its streams. Returns them as `viewer` sees them.
    async fn apply_local(
        &self,
        handle: &Arc<GameHandle>,
        entry: &mut Entry,
        events: Vec<Event>,
        viewer: Option<Viewer>,
    ) -> Vec<pb::Event> {
        let expected = entry.log.len();
        let mut seen = Vec::new();
        for event in events {
            let version = entry.log.len() + 1;
            // The creation event is the state `start` puts in place before committing.
            if let Some(game) = entry.game.as_mut()
                && !matches!(event, Event::GameCreated { .. })
            {
                game.apply(&event);
            }
            if let (Some(viewer), Some(game)) = (viewer, entry.game.as_ref()) {
                seen.push(convert::event(
                    version,
                    &project(game, &event, viewer),
                    &entry.options,
                ));
            }
            entry.log.push(event);
        }
        let version = entry.log.len();
        if version > expected {
            self.appended.send_modify(|n| *n += 1);
        }
        handle.version.send_replace(version);
        entry.deadline = entry.timer.map(|t| Instant::now() + t);
        if entry.log.snapshot_due()
            && let Some(game) = entry.game.as_ref()
        {
            // A snapshot is only a shortcut: if it cannot be written, the log still has it all.
            match self
                .store
                .save_snapshot(&handle.name, version, &game.snapshot())
                .await
            {
                Ok(()) => {
                    let state = game.clone();
                    entry.log.rebase(state);
                }
                Err(e) => tracing::warn!(game = %handle.name, error = %e, "snapshot not stored"),
            }
        }
        if entry.game.as_ref().is_some_and(Game::is_over)
            && let Err(e) = self.persist(&handle.name, entry).await
        {
            // The events are durable; only the finished mark is not, so a restart would load
            // this game again, already over.
            tracing::warn!(game = %handle.name, error = %e.message, "could not mark the game finished");
        }
        seen
    }

    /// Catches this server's copy of a game up with the store: its lobby record (seats joined
    /// or left through other servers) and the events other servers appended.
    async fn refresh(
        &self,
        handle: &Arc<GameHandle>,
        entry: &mut Entry,
    ) -> Result<(), ServiceError> {
        let unavailable = |e: crate::store::StoreError| ServiceError::unavailable(e.to_string());
        if let Some((record, _)) = self.store.record(&handle.name).await.map_err(unavailable)?
            && let Ok(record) = serde_json::from_str::<Record>(&record)
        {
            if let Ok(mut tokens) = self.tokens.write() {
                for seat in &record.seats {
                    if let Some(h) = seat.token_hash {
                        tokens.insert(h, handle.name.clone());
                    }
                }
            }
            entry.seats = record.seats;
        }
        let events = self
            .store
            .read(&handle.name, entry.log.len())
            .await
            .map_err(unavailable)?;
        if events.is_empty() {
            return Ok(());
        }
        if entry.game.is_none() {
            let Some(first) = events.first() else {
                return Ok(());
            };
            entry.game =
                Some(Game::replay([first]).map_err(|e| ServiceError::unavailable(e.to_string()))?);
        }
        self.apply_local(handle, entry, events, None).await;
        Ok(())
    }

    /// Follows the writes of other servers sharing the store (PostgreSQL): each game they write
    /// to that this server holds is caught up from the store.
    pub fn follow_store(self: &Arc<Self>) {
        if !self.store.shared() {
            return; // This server makes every append itself.
        }
        let mut changes = self.store.changes();
        let games = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let name = match changes.recv().await {
                    Ok(name) => name,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => "*".to_owned(),
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(games) = games.upgrade() else { return };
                games.appended.send_modify(|n| *n += 1);
                if name == "*" {
                    let names: Vec<String> =
                        games.order.read().map(|o| o.clone()).unwrap_or_default();
                    for name in names {
                        games.changed(&name, None).await;
                    }
                } else if let Some((version, game)) = name.split_once(' ') {
                    games.changed(game, version.parse().ok()).await;
                }
            }
        });
    }

    /// Catches up a game this server holds after another server wrote to it (a wake-up from
    /// the store: it may come late or twice, never with the events themselves).
    pub async fn changed(&self, name: &str, version: Option<u64>) {
        let Ok(handle) = self.get(name) else { return };
        let mut entry = handle.entry.lock().await;
        if version.is_some_and(|v| entry.log.len() >= v) {
            return; // Already here: this server's own write, or caught up already.
        }
        if let Err(e) = self.refresh(&handle, &mut entry).await {
            tracing::warn!(game = %name, error = %e.message, "catching up with the store failed");
        }
    }

    /// The server-played seat whose move the game waits for, if any.
    fn server_seat_to_move(entry: &Entry) -> Option<Seat> {
        let game = entry.game.as_ref()?;
        let seat = game.turn();
        (!game.is_over() && entry.seats.get(seat).is_some_and(|s| s.server_played)).then_some(seat)
    }

    /// One move of the server-played seat to move, chosen by its bot from that seat's view.
    /// Returns whether a move was made.
    async fn server_step(
        &self,
        handle: &Arc<GameHandle>,
        entry: &mut Entry,
    ) -> Result<bool, ServiceError> {
        let Some(seat) = Self::server_seat_to_move(entry) else {
            return Ok(false);
        };
        let Entry {
            game,
            rng,
            bot_level,
            ..
        } = &mut *entry;
        let Some(game) = game.as_ref() else {
            return Ok(false);
        };
        let Some(action) = bots::choose(*bot_level, &game.view(Viewer::Seat(seat)), rng) else {
            return Ok(false);
        };
        let events = decide(game, seat, action, rng)?;
        match self.commit(handle, entry, events, None).await {
            Ok(_) => Ok(true),
            // Another server moved first; this one catches up and lets the next step decide.
            Err(e) if e.reason == STORE_CONFLICT => {
                self.refresh(handle, entry).await?;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Without a bot delay, plays the server's seats until a person is to move; with one, the
    /// game's clock task plays them one move at a time.
    async fn after_moves(
        &self,
        handle: &Arc<GameHandle>,
        entry: &mut Entry,
    ) -> Result<(), ServiceError> {
        if entry.game.as_ref().is_some_and(Game::is_over) {
            entry.deadline = None;
        }
        if !self.config.bot_delay.is_zero() {
            return Ok(());
        }
        for _ in 0..100_000 {
            if !self.server_step(handle, entry).await? {
                break;
            }
        }
        if entry.game.as_ref().is_some_and(Game::is_over) {
            entry.deadline = None;
        }
        Ok(())
    }

    /// A delayed server move, if `version` is still the game's version.
    async fn delayed_server_move(
        &self,
        handle: &Arc<GameHandle>,
        version: u64,
    ) -> Result<(), ServiceError> {
        let mut entry = handle.entry.lock().await;
        if entry.log.len() != version {
            return Ok(());
        }
        self.server_step(handle, &mut entry).await?;
        if entry.game.as_ref().is_some_and(Game::is_over) {
            entry.deadline = None;
        }
        Ok(())
    }

    /// Acts for the seat whose timer ran out, if `version` is still the game's version.
    async fn time_out(&self, handle: &Arc<GameHandle>, version: u64) -> Result<(), ServiceError> {
        let mut entry = handle.entry.lock().await;
        if entry.log.len() != version || entry.deadline.is_none_or(|d| d > Instant::now()) {
            return Ok(());
        }
        let Entry { game, rng, .. } = &mut *entry;
        let Some(game) = game.as_ref() else {
            return Ok(());
        };
        let seat = game.turn();
        let Some(action) = timeout_move(game) else {
            return Ok(());
        };
        let events = decide(game, seat, action, rng)?;
        self.commit(handle, &mut entry, events, None).await?;
        // A timed-out draw keeps the card drawn in the same breath.
        let Entry { game, rng, .. } = &mut *entry;
        if let Some(game) = game.as_ref()
            && game.turn() == seat
            && matches!(game.phase(), Phase::PlayDrawn { .. })
        {
            let events = decide(game, seat, Action::Keep, rng)?;
            self.commit(handle, &mut entry, events, None).await?;
        }
        self.after_moves(handle, &mut entry).await
    }
}

/// A game's clock: the turn timer, and the delayed moves of server-played seats. Sleeps until
/// the next of them unless a move comes first; ends with the game.
async fn run_clock(games: Weak<Games>, handle: Weak<GameHandle>, bot_delay: Duration) {
    loop {
        let Some(h) = handle.upgrade() else { return };
        let mut version_rx = h.version.subscribe();
        let (version, deadline, over, bot_due) = {
            let entry = h.entry.lock().await;
            (
                entry.log.len(),
                entry.deadline,
                entry.game.as_ref().is_none_or(Game::is_over),
                Games::server_seat_to_move(&entry).is_some(),
            )
        };
        if over {
            return;
        }
        drop(h);
        let bot_at = (bot_due && !bot_delay.is_zero()).then(|| Instant::now() + bot_delay);
        let wake = match (deadline, bot_at) {
            (Some(d), Some(b)) => Some(d.min(b)),
            (d, b) => d.or(b),
        };
        let sleep = async {
            match wake {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => {
                let (Some(g), Some(h)) = (games.upgrade(), handle.upgrade()) else { return };
                let result = if bot_at.is_some_and(|b| b <= Instant::now()) {
                    g.delayed_server_move(&h, version).await
                } else {
                    g.time_out(&h, version).await
                };
                if let Err(e) = result {
                    tracing::warn!(game = %h.name, error = %e.message, "server move failed");
                }
            }
            changed = version_rx.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

pub(crate) fn deadline_timestamp(deadline: Option<Instant>) -> Option<prost_types::Timestamp> {
    let deadline = deadline?;
    let left = deadline.saturating_duration_since(Instant::now());
    let at = SystemTime::now() + left;
    Some(prost_types::Timestamp::from(at))
}

/// Seat token hashes as hex in lobby records.
mod token_hash_hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(hash: &Option<[u8; 32]>, s: S) -> Result<S::Ok, S::Error> {
        match hash {
            Some(h) => s.serialize_some(&hex::encode(h)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<[u8; 32]>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| {
            let bytes = hex::decode(t).map_err(serde::de::Error::custom)?;
            <[u8; 32]>::try_from(bytes.as_slice()).map_err(serde::de::Error::custom)
        })
        .transpose()
    }
}

/// What a store keeps of a game besides its events: enough to rebuild its lobby.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    /// The options shown to clients, protobuf-encoded, hex.
    options: String,
    setup: Setup,
    timer_secs: Option<u64>,
    bot_level: Level,
    seats: Vec<SeatState>,
}

impl Record {
    fn of(entry: &Entry) -> Record {
        use prost::Message;
        Record {
            options: hex::encode(entry.options.encode_to_vec()),
            setup: entry.setup.clone(),
            timer_secs: entry.timer.map(|t| t.as_secs()),
            bot_level: entry.bot_level,
            seats: entry.seats.clone(),
        }
    }

    /// The options shown to clients.
    fn shown_options(&self) -> Result<pb::GameOptions, String> {
        use prost::Message;
        let bytes = hex::decode(&self.options).map_err(|e| e.to_string())?;
        pb::GameOptions::decode(bytes.as_slice()).map_err(|e| e.to_string())
    }

    fn entry(self, log: EventLog) -> Result<Entry, String> {
        let options = self.shown_options()?;
        let game = match (log.base(), log.since(log.base().0)) {
            ((_, Some(state)), Some(tail)) => {
                let mut game = state.clone();
                for event in tail {
                    game.apply(event);
                }
                Some(game)
            }
            (_, Some([])) | (_, None) => None,
            (_, Some(all)) => Some(Game::replay(all).map_err(|e| e.to_string())?),
        };
        Ok(Entry {
            options,
            setup: self.setup,
            timer: self.timer_secs.map(Duration::from_secs),
            seats: self.seats,
            game,
            log,
            rng: StdRng::from_rng(&mut rand::rng()),
            bot_level: self.bot_level,
            requests: HashMap::new(),
            deadline: None,
        })
    }
}

fn game_message(name: &str, entry: &Entry) -> pb::Game {
    pb::Game {
        name: name.to_owned(),
        options: Some(entry.options.clone()),
        status: status(entry) as i32,
        seats: entry
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| pb::SeatInfo {
                seat: u32::try_from(i).unwrap_or(u32::MAX),
                taken: s.taken,
                player_name: s.name.clone(),
                played_by_server: s.server_played,
            })
            .collect(),
        version: entry.log.len(),
        winners: entry
            .game
            .as_ref()
            .map(|g| {
                g.winners()
                    .iter()
                    .map(|&w| u32::try_from(w).unwrap_or(u32::MAX))
                    .collect()
            })
            .unwrap_or_default(),
    }
}
