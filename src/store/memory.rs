//! The in-memory event store: events encoded as they would be on disk, lost with the process.
//!
//! It keeps every unfinished game and the most recently finished ones: once more than its
//! bound have finished (10,000 by default, `memory?keep-finished-games=N`), the game that
//! finished first is forgotten — its events, record, snapshot and request ids — so that a
//! long-running server on this store holds a bounded amount of memory. A forgotten game is
//! unknown to the store from then on, as if it had never been, and its events drop out of the
//! global order.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use super::{
    Announcer, Change, Committed, Coordination, EntryKind, Events, Records, StoreError,
    StoreFuture, decode_stored,
};
use crate::rules::{Event, encode};

/// One of the store's tables, locked.
fn locked<T>(table: &Mutex<T>) -> Result<MutexGuard<'_, T>, StoreError> {
    table
        .lock()
        .map_err(|_| StoreError::Unavailable("memory store lock poisoned".into()))
}

/// How many finished games a [`MemoryStore`] keeps unless told otherwise.
pub const KEEP_FINISHED_GAMES: usize = 10_000;

/// Every game's encoded events, and the global order of appends, laid out compactly: each
/// game's events are one text with the end of each event noted, and the global order names a
/// game by its number.
#[derive(Default)]
struct Logs {
    /// Each game's log, by its number. Numbers are never used twice, so that the global order
    /// cannot name a forgotten game's successor.
    logs: HashMap<u32, Log>,
    /// Each game's number, by name.
    numbers: HashMap<String, u32>,
    /// The number the next new game gets.
    next_number: u32,
    /// The global order from position `trimmed + 1` on: the game's number and the event's
    /// version. Entries of forgotten games stay until they reach the front (then they are
    /// trimmed), and are skipped by readers.
    order: VecDeque<(u32, u32)>,
    /// How many positions were trimmed from the front of `order`.
    trimmed: u64,
}

/// One game's encoded events.
struct Log {
    name: String,
    /// The events' texts, one after another.
    text: String,
    /// Where each event's text ends in `text`.
    ends: Vec<u32>,
    /// The versions each stored request produced.
    requests: HashMap<String, (u64, u64)>,
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
        self.logs.get(self.numbers.get(game)?)
    }

    /// Drops `game`'s events, and the front of the global order while it names forgotten games.
    fn forget(&mut self, game: &str) {
        if let Some(number) = self.numbers.remove(game) {
            self.logs.remove(&number);
        }
        while let Some(&(number, _)) = self.order.front() {
            if self.logs.contains_key(&number) {
                break;
            }
            self.order.pop_front();
            self.trimmed += 1;
        }
        if self.order.is_empty() {
            self.order = VecDeque::new();
        }
    }
}

/// Events kept in memory, encoded as they would be on disk.
pub struct MemoryStore {
    games: Mutex<Logs>,
    records: Mutex<Kept>,
    snapshots: Mutex<HashMap<String, (u64, String)>>,
    cursors: Mutex<HashMap<String, u64>>,
    entries: Mutex<BTreeMap<(String, String), String>>,
    changes: Announcer,
    /// How many finished games are kept.
    keep_finished: usize,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::keeping(KEEP_FINISHED_GAMES)
    }
}

/// Game records in creation order, found by name, and the finished games in the order they
/// finished.
#[derive(Default)]
struct Kept {
    /// Name, record and whether the game is over, by creation number.
    list: BTreeMap<u64, (String, String, bool)>,
    /// Each name's creation number.
    index: HashMap<String, u64>,
    /// The next creation number.
    next: u64,
    /// The finished games, first finished first.
    finished: VecDeque<String>,
}

impl MemoryStore {
    /// An empty store that keeps the [`KEEP_FINISHED_GAMES`] most recently finished games.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// An empty store that keeps the `finished` most recently finished games (`usize::MAX`:
    /// every one).
    pub fn keeping(finished: usize) -> MemoryStore {
        MemoryStore {
            games: Mutex::default(),
            records: Mutex::default(),
            snapshots: Mutex::default(),
            cursors: Mutex::default(),
            entries: Mutex::default(),
            changes: Announcer::default(),
            keep_finished: finished,
        }
    }

    /// The store a `memory` URL names: `memory`, or `memory?keep-finished-games=N` (a number,
    /// or `all`).
    pub fn from_url(url: &str) -> Result<MemoryStore, StoreError> {
        let bad = || {
            StoreError::Unavailable(format!(
                "store {url:?}: expected memory or memory?keep-finished-games=<number or all>"
            ))
        };
        let Some(query) = url.strip_prefix("memory") else {
            return Err(bad());
        };
        if query.is_empty() {
            return Ok(MemoryStore::new());
        }
        let value = query
            .strip_prefix("?keep-finished-games=")
            .ok_or_else(bad)?;
        let keep = match value {
            "all" => usize::MAX,
            n => n.parse().map_err(|_| bad())?,
        };
        Ok(MemoryStore::keeping(keep))
    }

    fn lock(&self) -> Result<MutexGuard<'_, Logs>, StoreError> {
        locked(&self.games)
    }

    /// Forgets `games` (finished games past the bound) entirely.
    fn forget(&self, games: &[String]) -> Result<(), StoreError> {
        if games.is_empty() {
            return Ok(());
        }
        {
            let mut logs = self.lock()?;
            for game in games {
                logs.forget(game);
            }
        }
        let mut snapshots = locked(&self.snapshots)?;
        for game in games {
            snapshots.remove(game);
        }
        Ok(())
    }
}

impl Events for MemoryStore {
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
                next_number,
                order,
                ..
            } = &mut *guard;
            let number = match numbers.get(game) {
                Some(&n) => n,
                None => {
                    let n = *next_number;
                    *next_number = n
                        .checked_add(1)
                        .ok_or_else(|| StoreError::Unavailable("memory store is full".into()))?;
                    logs.insert(
                        n,
                        Log {
                            name: game.to_owned(),
                            text: String::new(),
                            ends: Vec::new(),
                            requests: HashMap::new(),
                        },
                    );
                    numbers.insert(game.to_owned(), n);
                    n
                }
            };
            let Some(log) = logs.get_mut(&number) else {
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
                order.push_back((number, log.ends.len() as u32));
            }
            let version = log.len();
            if let Some(request) = request
                && !events.is_empty()
            {
                log.requests
                    .insert(request.to_owned(), (actual + 1, version));
            }
            self.changes.appended(game, version);
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
                .log(game)
                .and_then(|log| log.requests.get(request))
                .copied())
        })
    }

    fn requests<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            let guard = self.lock()?;
            Ok(guard
                .log(game)
                .map(|log| {
                    log.requests
                        .iter()
                        .filter(|(_, (_, last))| *last > after)
                        .map(|(request, _)| request.clone())
                        .collect()
                })
                .unwrap_or_default())
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
            // Positions up to `trimmed` were forgotten games'.
            let start = usize::try_from(after.saturating_sub(guard.trimmed)).unwrap_or(usize::MAX);
            let mut out = Vec::new();
            for (i, &(number, version)) in guard.order.iter().enumerate().skip(start) {
                if out.len() >= limit {
                    break;
                }
                let Some(log) = guard.logs.get(&number) else {
                    continue;
                };
                let version = u64::from(version);
                out.push(Committed {
                    position: guard.trimmed + i as u64 + 1,
                    game: log.name.clone(),
                    version,
                    event: decode_stored(&log.name, version, log.event(version))?,
                });
            }
            Ok(out)
        })
    }

    fn last_position(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let guard = self.lock()?;
            Ok(guard.trimmed + guard.order.len() as u64)
        })
    }

    fn count_after(&self, after: u64, cap: u64) -> StoreFuture<'_, u64> {
        // Positions are 1, 2, 3, ...; forgotten games' positions not yet trimmed are counted.
        Box::pin(async move {
            let guard = self.lock()?;
            Ok((guard.trimmed + guard.order.len() as u64)
                .saturating_sub(after)
                .min(cap))
        })
    }

    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}

impl Records for MemoryStore {
    fn save_snapshot<'a>(
        &'a self,
        game: &'a str,
        version: u64,
        state: &'a str,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut snapshots = locked(&self.snapshots)?;
            if snapshots.get(game).is_none_or(|(v, _)| *v < version) {
                snapshots.insert(game.to_owned(), (version, state.to_owned()));
            }
            Ok(())
        })
    }

    fn snapshot<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(u64, String)>> {
        Box::pin(async move { Ok(locked(&self.snapshots)?.get(game).cloned()) })
    }

    fn put_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
        create_only: bool,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut entries = locked(&self.entries)?;
            let slot = (kind.as_str().to_owned(), key.to_owned());
            if create_only && entries.contains_key(&slot) {
                return Ok(false);
            }
            entries.insert(slot, value.to_owned());
            Ok(true)
        })
    }

    fn remove_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut entries = locked(&self.entries)?;
            let slot = (kind.as_str().to_owned(), key.to_owned());
            if entries.get(&slot).is_some_and(|v| v == value) {
                entries.remove(&slot);
                return Ok(true);
            }
            Ok(false)
        })
    }

    fn entry<'a>(&'a self, kind: EntryKind, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            Ok(locked(&self.entries)?
                .get(&(kind.as_str().to_owned(), key.to_owned()))
                .cloned())
        })
    }

    fn entries<'a>(
        &'a self,
        kind: EntryKind,
        prefix: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let entries = locked(&self.entries)?;
            Ok(entries
                .range((kind.as_str().to_owned(), prefix.to_owned())..)
                .take_while(|((k, key), _)| k == kind.as_str() && key.starts_with(prefix))
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
            let mut records = locked(&self.records)?;
            let Kept {
                list,
                index,
                next,
                finished: done,
            } = &mut *records;
            let was_finished = match index.get(game).and_then(|i| list.get_mut(i)) {
                Some(entry) => {
                    let was = entry.2;
                    entry.1 = record.to_owned();
                    entry.2 = finished;
                    was
                }
                None => {
                    index.insert(game.to_owned(), *next);
                    list.insert(*next, (game.to_owned(), record.to_owned(), finished));
                    *next += 1;
                    false
                }
            };
            // The games past the bound, first finished first (a game marked finished again is
            // counted once).
            let mut forget = Vec::new();
            if finished && !was_finished {
                done.push_back(game.to_owned());
                while done.len() > self.keep_finished {
                    let Some(old) = done.pop_front() else { break };
                    if let Some(i) = index.remove(&old) {
                        list.remove(&i);
                    }
                    forget.push(old);
                }
            }
            drop(records);
            self.forget(&forget)?;
            // A finished game's log grows no more: it gives back what it held in reserve.
            if finished {
                let mut logs = self.lock()?;
                if let Some(&n) = logs.numbers.get(game)
                    && let Some(log) = logs.logs.get_mut(&n)
                {
                    log.text.shrink_to_fit();
                    log.ends.shrink_to_fit();
                    log.requests.shrink_to_fit();
                }
            }
            Ok(())
        })
    }

    fn record<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(String, bool)>> {
        Box::pin(async move {
            let records = locked(&self.records)?;
            Ok(records
                .index
                .get(game)
                .and_then(|i| records.list.get(i))
                .map(|(_, r, f)| (r.clone(), *f)))
        })
    }

    fn unfinished(&self) -> StoreFuture<'_, Vec<(String, String)>> {
        Box::pin(async move {
            let records = locked(&self.records)?;
            Ok(records
                .list
                .values()
                .filter(|(_, _, finished)| !finished)
                .map(|(g, r, _)| (g.clone(), r.clone()))
                .collect())
        })
    }
}

impl Coordination for MemoryStore {
    fn cursor<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move { Ok(locked(&self.cursors)?.get(name).copied()) })
    }

    fn save_cursor<'a>(&'a self, name: &'a str, position: u64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            locked(&self.cursors)?.insert(name.to_owned(), position);
            Ok(())
        })
    }
}
