//! The in-memory event store: events encoded as they would be on disk, lost with the process.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Change, Committed, EventStore, StoreError, StoreFuture, decode_stored};
use crate::rules::{Event, encode};

/// Every game's encoded events, and the global order of appends (position = index + 1), laid
/// out compactly: each game's events are one text with the end of each event noted, and the
/// global order names a game by its number.
#[derive(Default)]
struct Logs {
    /// Each game's log, by its number.
    logs: Vec<Log>,
    /// Each game's number, by name.
    numbers: HashMap<String, u32>,
    /// The global order: the game's number and the event's version.
    order: Vec<(u32, u32)>,
    /// The versions each stored request produced, by game and request.
    requests: HashMap<(String, String), (u64, u64)>,
}

/// One game's encoded events.
struct Log {
    name: String,
    /// The events' texts, one after another.
    text: String,
    /// Where each event's text ends in `text`.
    ends: Vec<u32>,
}

impl Log {
    fn len(&self) -> u64 {
        self.ends.len() as u64
    }

    /// The text of event `version` (from 1).
    fn event(&self, version: u64) -> &str {
        let Some(i) = usize::try_from(version).ok().and_then(|v| v.checked_sub(1)) else {
            return "";
        };
        let start = match i.checked_sub(1) {
            Some(before) => self.ends.get(before).copied().unwrap_or(0),
            None => 0,
        } as usize;
        let end = self.ends.get(i).map_or(start, |&e| e as usize);
        self.text.get(start..end).unwrap_or("")
    }
}

impl Logs {
    fn log(&self, game: &str) -> Option<&Log> {
        self.logs.get(*self.numbers.get(game)? as usize)
    }
}

/// Events kept in memory, encoded as they would be on disk.
#[derive(Default)]
pub struct MemoryStore {
    games: Mutex<Logs>,
    records: Mutex<Records>,
    snapshots: Mutex<HashMap<String, (u64, String)>>,
    cursors: Mutex<HashMap<String, u64>>,
    entries: Mutex<std::collections::BTreeMap<(String, String), String>>,
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
                logs,
                numbers,
                order,
                requests,
            } = &mut *guard;
            let number = match numbers.get(game) {
                Some(&n) => n,
                None => {
                    let n = u32::try_from(logs.len())
                        .map_err(|_| StoreError::Unavailable("memory store is full".into()))?;
                    logs.push(Log {
                        name: game.to_owned(),
                        text: String::new(),
                        ends: Vec::new(),
                    });
                    numbers.insert(game.to_owned(), n);
                    n
                }
            };
            let Some(log) = logs.get_mut(number as usize) else {
                return Err(StoreError::Unavailable("memory store index damaged".into()));
            };
            let actual = log.len();
            if actual != expected {
                return Err(StoreError::Conflict {
                    game: game.to_owned(),
                    expected,
                    actual,
                });
            }
            // Checked before anything changes, so that a refused append leaves nothing.
            let texts: Vec<String> = events.iter().map(encode).collect();
            let bytes = log.text.len() + texts.iter().map(String::len).sum::<usize>();
            if u32::try_from(bytes).is_err() || u32::try_from(log.ends.len() + texts.len()).is_err()
            {
                return Err(StoreError::Unavailable("a game's log is over 4 GiB".into()));
            }
            for text in texts {
                log.text.push_str(&text);
                log.ends.push(log.text.len() as u32);
                order.push((number, log.ends.len() as u32));
            }
            let version = log.len();
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
            let Some(log) = guard.log(game) else {
                return Ok(Vec::new());
            };
            (after.saturating_add(1)..=log.len())
                .map(|version| decode_stored(game, version, log.event(version)))
                .collect()
        })
    }

    fn read_all(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<Committed>> {
        Box::pin(async move {
            let guard = self.lock()?;
            let start = usize::try_from(after).unwrap_or(usize::MAX);
            let mut out = Vec::new();
            for (i, &(number, version)) in guard.order.iter().enumerate().skip(start).take(limit) {
                let Some(log) = guard.logs.get(number as usize) else {
                    continue;
                };
                let version = u64::from(version);
                out.push(Committed {
                    position: i as u64 + 1,
                    game: log.name.clone(),
                    version,
                    event: decode_stored(&log.name, version, log.event(version))?,
                });
            }
            Ok(out)
        })
    }

    fn last_position(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move { Ok(self.lock()?.order.len() as u64) })
    }

    fn count_after(&self, after: u64, cap: u64) -> StoreFuture<'_, u64> {
        // Positions are 1, 2, 3, ...
        Box::pin(async move {
            Ok((self.lock()?.order.len() as u64)
                .saturating_sub(after)
                .min(cap))
        })
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

    fn cursor<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move {
            Ok(self
                .cursors
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?
                .get(name)
                .copied())
        })
    }

    fn save_cursor<'a>(&'a self, name: &'a str, position: u64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.cursors
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?
                .insert(name.to_owned(), position);
            Ok(())
        })
    }

    fn put_entry<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: &'a str,
        create_only: bool,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut entries = self
                .entries
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?;
            let slot = (kind.to_owned(), key.to_owned());
            if create_only && entries.contains_key(&slot) {
                return Ok(false);
            }
            entries.insert(slot, value.to_owned());
            Ok(true)
        })
    }

    fn entry<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            Ok(self
                .entries
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?
                .get(&(kind.to_owned(), key.to_owned()))
                .cloned())
        })
    }

    fn entries<'a>(
        &'a self,
        kind: &'a str,
        prefix: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let entries = self
                .entries
                .lock()
                .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))?;
            Ok(entries
                .range((kind.to_owned(), prefix.to_owned())..)
                .take_while(|((k, key), _)| k == kind && key.starts_with(prefix))
                .take(limit)
                .map(|((_, key), value)| (key.clone(), value.clone()))
                .collect())
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
            drop(records);
            // A finished game's log grows no more: it gives back what it held in reserve.
            if finished {
                let mut logs = self.lock()?;
                if let Some(&n) = logs.numbers.get(game)
                    && let Some(log) = logs.logs.get_mut(n as usize)
                {
                    log.text.shrink_to_fit();
                    log.ends.shrink_to_fit();
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
