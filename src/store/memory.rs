//! The in-memory event store: events encoded as they would be on disk, lost with the process.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Change, Committed, EventStore, StoreError, StoreFuture, decode_stored};
use crate::rules::{Event, encode};

/// Every game's encoded events, and the global order of appends (position = index + 1).
#[derive(Default)]
struct Logs {
    games: HashMap<String, Vec<String>>,
    order: Vec<(String, u64)>,
    /// The versions each stored request produced, by game and request.
    requests: HashMap<(String, String), (u64, u64)>,
}

/// Events kept in memory, encoded as they would be on disk.
#[derive(Default)]
pub struct MemoryStore {
    games: Mutex<Logs>,
    records: Mutex<Records>,
    snapshots: Mutex<HashMap<String, (u64, String)>>,
    changes: Changes,
}

/// Game records in creation order, found by name.
#[derive(Default)]
struct Records {
    /// Name, record and whether the game is over.
    list: Vec<(String, String, bool)>,
    /// Where each name is in `list`.
    index: HashMap<String, usize>,
}

/// The wake-ups of [`EventStore::changes`].
struct Changes(tokio::sync::broadcast::Sender<Change>);

impl Default for Changes {
    fn default() -> Self {
        Changes(tokio::sync::broadcast::channel(4096).0)
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Logs>, StoreError> {
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
        request: Option<&'a str>,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let mut guard = self.lock()?;
            let Logs {
                games,
                order,
                requests,
            } = &mut *guard;
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
            order.extend((actual + 1..=log.len() as u64).map(|v| (game.to_owned(), v)));
            let version = log.len() as u64;
            if let Some(request) = request
                && !events.is_empty()
            {
                requests.insert((game.to_owned(), request.to_owned()), (actual + 1, version));
            }
            // Nobody listening is fine.
            let _ = self.changes.0.send(Change::Appended {
                game: game.to_owned(),
                version,
            });
            Ok(version)
        })
    }

    fn request<'a>(
        &'a self,
        game: &'a str,
        request: &'a str,
    ) -> StoreFuture<'a, Option<(u64, u64)>> {
        Box::pin(async move {
            let guard = self.lock()?;
            Ok(guard
                .requests
                .get(&(game.to_owned(), request.to_owned()))
                .copied())
        })
    }

    fn read<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<Event>> {
        Box::pin(async move {
            let guard = self.lock()?;
            let Some(log) = guard.games.get(game) else {
                return Ok(Vec::new());
            };
            let start = usize::try_from(after).unwrap_or(usize::MAX);
            log.iter()
                .enumerate()
                .skip(start)
                .map(|(i, text)| decode_stored(game, i as u64 + 1, text))
                .collect()
        })
    }

    fn read_all(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<Committed>> {
        Box::pin(async move {
            let guard = self.lock()?;
            let start = usize::try_from(after).unwrap_or(usize::MAX);
            let mut out = Vec::new();
            for (i, (game, version)) in guard.order.iter().enumerate().skip(start).take(limit) {
                let text = usize::try_from(*version - 1)
                    .ok()
                    .and_then(|v| guard.games.get(game)?.get(v))
                    .map_or("", String::as_str);
                out.push(Committed {
                    position: i as u64 + 1,
                    game: game.clone(),
                    version: *version,
                    event: decode_stored(game, *version, text)?,
                });
            }
            Ok(out)
        })
    }

    fn last_position(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move { Ok(self.lock()?.order.len() as u64) })
    }

    fn save_snapshot<'a>(
        &'a self,
        game: &'a str,
        version: u64,
        state: &'a str,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut snapshots = self
                .snapshots
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?;
            if snapshots.get(game).is_none_or(|(v, _)| *v < version) {
                snapshots.insert(game.to_owned(), (version, state.to_owned()));
            }
            Ok(())
        })
    }

    fn snapshot<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(u64, String)>> {
        Box::pin(async move {
            Ok(self
                .snapshots
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?
                .get(game)
                .cloned())
        })
    }

    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.0.subscribe()
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
            let Records { list, index } = &mut *records;
            match index.get(game).and_then(|&i| list.get_mut(i)) {
                Some(entry) => {
                    entry.1 = record.to_owned();
                    entry.2 = finished;
                }
                None => {
                    index.insert(game.to_owned(), list.len());
                    list.push((game.to_owned(), record.to_owned(), finished));
                }
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
                .index
                .get(game)
                .and_then(|&i| records.list.get(i))
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
                .list
                .iter()
                .filter(|(_, _, finished)| !finished)
                .map(|(g, r, _)| (g.clone(), r.clone()))
                .collect())
        })
    }
}
