//! The event store: one trait, [`EventStore`], that the service appends every game's events to
//! before it acknowledges a move. Appends name the version they expect the game to be at and fail
//! with [`StoreError::Conflict`] otherwise, so two writers can never both append event N.
//!
//! [`MemoryStore`] keeps the encoded events in memory (tests, and `serve --store memory`). The
//! durable backends (embedded SQLite, PostgreSQL) implement the same trait.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use crate::rules::{DecodeError, Event, decode, encode};

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
    /// The backend failed.
    #[error("store unavailable: {0}")]
    Unavailable(String),
}

/// Where games' events are kept. Versions count events from 1.
pub trait EventStore: Send + Sync + 'static {
    /// Appends `events` to `game`, which must hold exactly `expected` events. Returns the new
    /// version. Durable when it returns.
    fn append<'a>(
        &'a self,
        game: &'a str,
        expected: u64,
        events: &'a [Event],
    ) -> StoreFuture<'a, u64>;

    /// The events of `game` after version `after`, in order.
    fn read<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<Event>>;
}

/// Events kept in memory, encoded as they would be on disk.
#[derive(Default)]
pub struct MemoryStore {
    games: Mutex<HashMap<String, Vec<String>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Vec<String>>>, StoreError> {
        self.games
            .lock()
            .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))
    }
}

impl EventStore for MemoryStore {
    fn append<'a>(
        &'a self,
        game: &'a str,
        expected: u64,
        events: &'a [Event],
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let mut games = self.lock()?;
            let log = games.entry(game.to_owned()).or_default();
            let actual = log.len() as u64;
            if actual != expected {
                return Err(StoreError::Conflict {
                    game: game.to_owned(),
                    expected,
                    actual,
                });
            }
            log.extend(events.iter().map(encode));
            Ok(log.len() as u64)
        })
    }

    fn read<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<Event>> {
        Box::pin(async move {
            let games = self.lock()?;
            let Some(log) = games.get(game) else {
                return Ok(Vec::new());
            };
            let start = usize::try_from(after).unwrap_or(usize::MAX);
            log.iter()
                .enumerate()
                .skip(start)
                .map(|(i, text)| {
                    decode(text).map_err(|error| StoreError::Corrupt {
                        game: game.to_owned(),
                        version: i as u64 + 1,
                        error,
                    })
                })
                .collect()
        })
    }
}
