//! The event store: one trait, [`EventStore`], that the service appends every game's events to
//! before it acknowledges a move. Appends name the version they expect the game to be at and fail
//! with [`StoreError::Conflict`] otherwise, so two writers can never both append event N.
//!
//! Besides events, a store keeps each game's lobby record (options, seats, token hashes) so that a
//! restarted server can rebuild every unfinished game, and snapshots of long games' states so
//! that it need not fold their whole logs.
//!
//! - [`MemoryStore`] (`memory.rs`): in memory (tests, and `serve --store memory`).
//! - [`SqliteStore`] (`sqlite/`): an embedded SQLite file, the default of `unoflip serve`:
//!   `schema`, `writer` (group commit), `tail` (delayed keying), `queries`.
//! - [`PostgresStore`] (`postgres/`): PostgreSQL, for several servers sharing one store:
//!   `schema`, `writer`, `listening` (NOTIFY and leases).

mod memory;
mod postgres;
mod sqlite;

use std::future::Future;
use std::pin::Pin;

pub use memory::{KEEP_FINISHED_GAMES, MemoryStore};
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

use crate::rules::{DecodeError, Event, decode};

/// A boxed future, so the trait can be used as `dyn EventStore`.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why an append or a read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The game was not at the expected version.
    #[error("game {game}: expected version {expected}, store is at {actual}")]
    Conflict {
        /// The game.
        game: String,
        /// The version the writer expected.
        expected: u64,
        /// The version in the store.
        actual: u64,
    },
    /// A stored event could not be read.
    #[error("game {game}, event {version}: {error}")]
    Corrupt {
        /// The game.
        game: String,
        /// The event's number.
        version: u64,
        /// What is wrong with it.
        error: DecodeError,
    },
    /// The stored events of a game skip a number.
    #[error("game {game}: event {expected} is missing (the next stored one is {found})")]
    Gap {
        /// The game.
        game: String,
        /// The number that should come next.
        expected: u64,
        /// The number found instead.
        found: u64,
    },
    /// The backend failed.
    #[error("store unavailable: {0}")]
    Unavailable(String),
}

/// One stored event in the store's global order (the firehose).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Committed {
    /// Its global position: increasing in the order the store made events visible, not
    /// necessarily contiguous. Every event is read after every event of a lower position.
    pub position: u64,
    /// The game, `games/{id}`.
    pub game: String,
    /// Its number in the game's log.
    pub version: u64,
    /// The event.
    pub event: Event,
}

impl Committed {
    /// A firehose row as the SQL stores keep it: position, game, version and the event's text.
    fn from_row(position: i64, game: String, version: i64, text: &str) -> Result<Self, StoreError> {
        let version = u64::try_from(version).unwrap_or(0);
        Ok(Committed {
            event: decode_stored(&game, version, text)?,
            position: u64::try_from(position).unwrap_or(0),
            game,
            version,
        })
    }
}

/// Event `version` of `game`, from its stored text; a text that is not an event is `Corrupt`.
fn decode_stored(game: &str, version: u64, text: &str) -> Result<Event, StoreError> {
    decode(text).map_err(|error| StoreError::Corrupt {
        game: game.to_owned(),
        version,
        error,
    })
}

/// A game's stored `(version, text)` rows after event `after`, in order: decoded, and checked to
/// follow on from `after` with no version missing (`Gap`).
fn decode_log(
    game: &str,
    after: u64,
    rows: impl IntoIterator<Item = Result<(i64, String), StoreError>>,
) -> Result<Vec<Event>, StoreError> {
    let mut events = Vec::new();
    for (next, row) in (after + 1..).zip(rows) {
        let (version, text) = row?;
        let version = u64::try_from(version).unwrap_or(0);
        if version != next {
            return Err(StoreError::Gap {
                game: game.to_owned(),
                expected: next,
                found: version,
            });
        }
        events.push(decode_stored(game, version, &text)?);
    }
    Ok(events)
}

/// Which table an entry is in: each kind keeps keys and values of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntryKind {
    /// Registered players, by id.
    Players,
    /// The seats each player took, by `<player id>/<game>`.
    PlayerGames,
    /// Player tokens' hashes, each naming its player's id.
    PlayerTokens,
    /// Invite codes, each naming its game.
    InviteCodes,
    /// Rated games' outcomes, by game.
    RatedGames,
}

impl EntryKind {
    /// The kind as the stores keep it.
    pub const fn as_str(self) -> &'static str {
        match self {
            EntryKind::Players => "players",
            EntryKind::PlayerGames => "player_games",
            EntryKind::PlayerTokens => "player_tokens",
            EntryKind::InviteCodes => "invite_codes",
            EntryKind::RatedGames => "rated_games",
        }
    }
}

/// A wake-up from [`Events::changes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// `game` has events up to `version`.
    Appended {
        /// The game, `games/{id}`.
        game: String,
        /// Its version after the append.
        version: u64,
    },
    /// Wake-ups may have been missed: any game may have changed.
    Any,
}

impl Change {
    /// The wake-up as PostgreSQL's NOTIFY carries it: `"<version> <game>"`.
    pub fn to_note(&self) -> String {
        match self {
            Change::Appended { game, version } => format!("{version} {game}"),
            Change::Any => "*".to_owned(),
        }
    }

    /// Reads a NOTIFY payload; anything unreadable is [`Change::Any`].
    pub fn from_note(note: &str) -> Change {
        note.split_once(' ')
            .and_then(|(version, game)| {
                Some(Change::Appended {
                    game: game.to_owned(),
                    version: version.parse().ok()?,
                })
            })
            .unwrap_or(Change::Any)
    }
}

/// The wake-ups a store sends for [`Events::changes`]: one per append once it is durable, from
/// this one place for every backend (PostgreSQL's listener also relays other servers' here).
#[derive(Clone)]
pub(crate) struct Announcer(tokio::sync::broadcast::Sender<Change>);

impl Default for Announcer {
    fn default() -> Self {
        Announcer(tokio::sync::broadcast::channel(4096).0)
    }
}

impl Announcer {
    /// `game` has events up to `version`. Nobody listening is fine.
    pub(crate) fn appended(&self, game: &str, version: u64) {
        if self.0.receiver_count() > 0 {
            let _ = self.0.send(Change::Appended {
                game: game.to_owned(),
                version,
            });
        }
    }

    /// Another change, as a shared store's listener hears it.
    pub(crate) fn relay(&self, change: Change) {
        let _ = self.0.send(change);
    }

    /// Whether nobody listens and nothing waits to be read.
    pub(crate) fn unheard(&self) -> bool {
        self.0.receiver_count() == 0 && self.0.is_empty()
    }

    /// A new listener.
    pub(crate) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.0.subscribe()
    }
}

/// Opens the store `url` names for a server: `sqlite:<path>` (an embedded file, created if
/// missing, for one server at a time: [`SqliteStore::open_alone`]), `postgres://...` or
/// `postgresql://...` (PostgreSQL, schema created at start) or `memory`
/// (`memory?keep-finished-games=N`: how many finished games it keeps, a number or `all`).
pub async fn open(url: &str) -> Result<std::sync::Arc<dyn EventStore>, StoreError> {
    if url == "memory" || url.starts_with("memory?") {
        Ok(std::sync::Arc::new(MemoryStore::from_url(url)?))
    } else if let Some(path) = url.strip_prefix("sqlite:") {
        Ok(std::sync::Arc::new(SqliteStore::open_alone(
            std::path::Path::new(path),
        )?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(std::sync::Arc::new(PostgresStore::connect(url).await?))
    } else {
        Err(StoreError::Unavailable(format!(
            "store {url:?}: expected sqlite:<path>, postgres://..., memory or memory?keep-finished-games=N"
        )))
    }
}

/// A store's events: each game's log, appended with the version it expects, and the global order
/// of every game's events. Versions count events from 1.
pub trait Events: Send + Sync + 'static {
    /// Appends `events` to `game`, which must hold exactly `expected` events. Returns the new
    /// version. Durable when it returns.
    ///
    /// `request` names the client request that produced the events (a seat and its
    /// `request_id`): it is stored with them, so that [`Events::request`] finds them again
    /// after a restart and a retry changes nothing.
    fn append<'a>(
        &'a self,
        game: &'a str,
        expected: u64,
        events: &'a [Event],
        request: Option<&'a str>,
    ) -> StoreFuture<'a, u64>;

    /// The versions (first, last) of the events `request` produced in `game`, if it was stored.
    fn request<'a>(
        &'a self,
        game: &'a str,
        request: &'a str,
    ) -> StoreFuture<'a, Option<(u64, u64)>>;

    /// The request ids stored with `game`'s events after version `after`, each once, in no
    /// particular order: how a server learns which request ids are not new when it did not
    /// make every move itself (after a restart, or on a shared store).
    fn requests<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<String>>;

    /// The events of `game` after version `after`, in order.
    fn read<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<Event>>;

    /// Up to `limit` events of every game after global position `after`, in position order.
    /// Never skips an event: once an event at position P has been returned, no event with a
    /// position below P becomes visible later (an append still being committed holds back the
    /// events after it). A damaged event ends the read with `Corrupt`, naming game and version.
    fn read_all(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<Committed>>;

    /// The global position of the last event [`Events::read_all`] can return now (0 when
    /// none): a reader starting after it misses nothing that commits later.
    fn last_position(&self) -> StoreFuture<'_, u64>;

    /// How many events [`Events::read_all`] would return after `after`, counting up to
    /// `cap` at most (how far a reader of the global order is behind, without reading it).
    fn count_after(&self, after: u64, cap: u64) -> StoreFuture<'_, u64>;

    /// Waits for new events: a [`Change`] for each append once it is durable (this process's
    /// appends for an embedded store; every server's for a shared one). Only a wake-up, to be
    /// followed by a read: one may come late, twice, or not at all (then [`Change::Any`]
    /// comes).
    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change>;

    /// Whether other server processes append to this store too, so that a server must follow
    /// [`Events::changes`] to see their events.
    fn shared(&self) -> bool {
        false
    }
}

/// What a store keeps beside the events: each game's record (options, seats, token hashes) and
/// latest snapshot, and the accounts' entries (players, invite codes, ratings).
pub trait Records: Send + Sync + 'static {
    /// Keeps `state`, a snapshot of `game` after event `version`, in place of any older one.
    fn save_snapshot<'a>(
        &'a self,
        game: &'a str,
        version: u64,
        state: &'a str,
    ) -> StoreFuture<'a, ()>;

    /// The latest snapshot of `game` and the version it was taken at, if any.
    fn snapshot<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(u64, String)>>;

    /// Creates or replaces `game`'s lobby record; `finished` games are not recovered.
    fn save_game<'a>(
        &'a self,
        game: &'a str,
        record: &'a str,
        finished: bool,
    ) -> StoreFuture<'a, ()>;

    /// A game's lobby record and whether it is finished, if the store has the game.
    fn record<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(String, bool)>>;

    /// Every unfinished game's name and lobby record, oldest first.
    fn unfinished(&self) -> StoreFuture<'_, Vec<(String, String)>>;

    /// Keeps `value` under `key` in the table of `kind`:
    /// in place of an older value, or, when `create_only`, only if the key is free. Returns
    /// whether it was written. Durable when it returns.
    fn put_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
        create_only: bool,
    ) -> StoreFuture<'a, bool>;

    /// Removes the entry under `key` in the table `kind` if it holds `value` (so that an entry
    /// taken again since by someone else stays). Returns whether it was removed. Durable when
    /// it returns.
    fn remove_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
    ) -> StoreFuture<'a, bool>;

    /// The value under `key` in the table `kind`, if any.
    fn entry<'a>(&'a self, kind: EntryKind, key: &'a str) -> StoreFuture<'a, Option<String>>;

    /// Up to `limit` entries of the table `kind` whose keys start with `prefix`, as
    /// `(key, value)` in key order.
    fn entries<'a>(
        &'a self,
        kind: EntryKind,
        prefix: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<(String, String)>>;
}

/// What the servers sharing a store coordinate with: readers' saved positions and leases.
pub trait Coordination: Send + Sync + 'static {
    /// The global position a reader of the whole store (such as the NATS publisher) saved under
    /// `name`, if it saved one.
    fn cursor<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<u64>>;

    /// Keeps `position` under `name` in place of any earlier one. Durable when it returns.
    fn save_cursor<'a>(&'a self, name: &'a str, position: u64) -> StoreFuture<'a, ()>;

    /// Tries to become the one holder of `name` among the servers sharing this store (the one
    /// that publishes events, say): `None` while another server holds it. Held until the
    /// [`Lease`] is dropped or its holder dies. A store that belongs to one server grants it
    /// at once.
    fn lease<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<Box<dyn Lease>>> {
        let _ = name;
        Box::pin(async { Ok(Some(Box::new(Sole) as Box<dyn Lease>)) })
    }
}

/// A whole event store, as the service holds it (`Arc<dyn EventStore>`): its events, its records
/// and what servers coordinate with. Every backend is one by implementing the three.
pub trait EventStore: Events + Records + Coordination {}

impl<T: Events + Records + Coordination + ?Sized> EventStore for T {}

/// A lease from [`Coordination::lease`]; dropping it lets another server take it.
pub trait Lease: Send {
    /// Whether it is still held: an error when the store can no longer vouch for it (its
    /// connection to a shared store was lost), and the holder must stop and take it again.
    fn check(&mut self) -> StoreFuture<'_, ()>;
}

/// The lease of a store only one server uses: always held.
struct Sole;

impl Lease for Sole {
    fn check(&mut self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
}
