//! The in-memory event store: events encoded as they would be on disk, lost with the process.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{EventStore, StoreError, StoreFuture};
use crate::rules::{Event, decode, encode};

/// Events kept in memory, encoded as they would be on disk.
#[derive(Default)]
pub struct MemoryStore {
    games: Mutex<HashMap<String, Vec<String>>>,
    records: Mutex<Vec<(String, String, bool)>>,
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

    fn save_game<'a>(
        &'a self,
        game: &'a str,
        record: &'a str,
        finished: bool,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut records = self
                .records
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?;
            match records.iter_mut().find(|(g, _, _)| g == game) {
                Some(entry) => *entry = (game.to_owned(), record.to_owned(), finished),
                None => records.push((game.to_owned(), record.to_owned(), finished)),
            }
            Ok(())
        })
    }

    fn record<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(String, bool)>> {
        Box::pin(async move {
            let records = self
                .records
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?;
            Ok(records
                .iter()
                .find(|(g, _, _)| g == game)
                .map(|(_, r, f)| (r.clone(), *f)))
        })
    }

    fn unfinished(&self) -> StoreFuture<'_, Vec<(String, String)>> {
        Box::pin(async move {
            let records = self
                .records
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?;
            Ok(records
                .iter()
                .filter(|(_, _, finished)| !finished)
                .map(|(g, r, _)| (g.clone(), r.clone()))
                .collect())
        })
    }
}
