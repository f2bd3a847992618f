//! The embedded event store: one SQLite file (bundled SQLite, WAL, `synchronous=FULL`), nothing
//! to install.
//!
//! One thread owns the connection. It takes every request waiting for it and commits all the
//! appends among them in one transaction (group commit), so the cost of an fsync is shared by the
//! moves of many games; each append is acknowledged only once that transaction is durable. While
//! it is busy, it lets requests gather for a moment before each commit ([`BUSY_BATCH`]).
//!
//! Events are kept in the order they were appended (`events`, by position); their keys by game
//! (`event_keys`) go in later, many at once ([`KEY_LAG`]), and the writer keeps the keys not
//! yet written in memory ([`Tail`]).

mod queries;
mod schema;
mod tail;
mod writer;

use queries::*;
use schema::*;
use tail::*;
use writer::*;

use std::path::Path;

use std::sync::mpsc;

use rusqlite::TransactionBehavior::{Deferred, Immediate};

use rusqlite::{Connection, OptionalExtension, params};

use tokio::sync::oneshot;

use super::{
    Announcer, Change, Committed, Coordination, EntryKind, Events, Records, StoreError,
    StoreFuture, decode_log,
};

use crate::rules::{Event, encode};

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// Answers one write of a batch once the batch's commit is known (`Some` if it failed).
type Finish = Box<dyn FnOnce(Option<&StoreError>)>;

enum Command {
    Append {
        game: String,
        expected: u64,
        bodies: Vec<String>,
        request: Option<String>,
        reply: Reply<u64>,
    },
    Request {
        game: String,
        request: String,
        reply: Reply<Option<(u64, u64)>>,
    },
    Requests {
        game: String,
        after: u64,
        reply: Reply<Vec<String>>,
    },
    Read {
        game: String,
        after: u64,
        reply: Reply<Vec<Event>>,
    },
    SaveGame {
        game: String,
        record: String,
        finished: bool,
        reply: Reply<()>,
    },
    ReadAll {
        after: u64,
        limit: usize,
        reply: Reply<Vec<Committed>>,
    },
    LastPosition {
        reply: Reply<u64>,
    },
    CountAfter {
        after: u64,
        cap: u64,
        reply: Reply<u64>,
    },
    SaveSnapshot {
        game: String,
        version: u64,
        state: String,
        reply: Reply<()>,
    },
    Snapshot {
        game: String,
        reply: Reply<Option<(u64, String)>>,
    },
    Unfinished {
        reply: Reply<Vec<(String, String)>>,
    },
    Record {
        game: String,
        reply: Reply<Option<(String, bool)>>,
    },
    SaveCursor {
        name: String,
        position: u64,
        reply: Reply<()>,
    },
    Cursor {
        name: String,
        reply: Reply<Option<u64>>,
    },
    PutEntry {
        kind: String,
        key: String,
        value: String,
        create_only: bool,
        reply: Reply<bool>,
    },
    RemoveEntry {
        kind: String,
        key: String,
        value: String,
        reply: Reply<bool>,
    },
    Entry {
        kind: String,
        key: String,
        reply: Reply<Option<String>>,
    },
    Entries {
        kind: String,
        prefix: String,
        limit: usize,
        reply: Reply<Vec<(String, String)>>,
    },
}

/// Events in an SQLite file.
pub struct SqliteStore {
    commands: mpsc::Sender<Command>,
    changes: Announcer,
    /// The file's lock, held while the store is open, when it was opened by
    /// [`SqliteStore::open_alone`].
    _lock: Option<std::fs::File>,
}

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

impl SqliteStore {
    /// Opens (or creates) the store at `path` for this server alone, as `serve` does: a server
    /// keeps its games in memory and reads the file only at start, so a second server on the
    /// same file would play the same games from a stale copy (its moves refused, its streams
    /// behind). The second is refused: the first holds an exclusive lock on `<path>.lock` (made
    /// beside the file and left there) for as long as its store is open, and the system drops
    /// it when the process ends, however it ends. Several servers share PostgreSQL instead.
    pub fn open_alone(path: &Path) -> Result<SqliteStore, StoreError> {
        create_parent(path)?;
        let mut lock_path = path.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = std::path::PathBuf::from(lock_path);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| unavailable(format!("{}: {e}", lock_path.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Unavailable(format!(
                    "{}: another unoflip server has this SQLite file open (it holds {}); one \
                     server per file (several servers share a PostgreSQL store)",
                    path.display(),
                    lock_path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(unavailable(format!("{}: {e}", lock_path.display())));
            }
        }
        let mut store = SqliteStore::open(path)?;
        store._lock = Some(lock);
        Ok(store)
    }

    /// Opens (or creates) the store at `path`. Several stores may share a file (each writer
    /// appends under the file's write lock, and notices the others' appends before its own);
    /// [`SqliteStore::open_alone`] is for a server.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        create_parent(path)?;
        let mut conn = Connection::open(path).map_err(unavailable)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(unavailable)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(unavailable)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(unavailable)?;
        conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_PAGES)
            .map_err(unavailable)?;
        make_schema(&mut conn).map_err(unavailable)?;
        let (commands, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("unoflip-sqlite".into())
            .spawn(move || writer(conn, rx))
            .map_err(unavailable)?;
        Ok(SqliteStore {
            commands,
            changes: Announcer::default(),
            _lock: None,
        })
    }

    async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(make(reply))
            .map_err(|_| unavailable("the SQLite writer has stopped"))?;
        answer
            .await
            .map_err(|_| unavailable("the SQLite writer has stopped"))?
    }
}

impl Events for SqliteStore {
    fn append<'a>(
        &'a self,
        game: &'a str,
        expected: u64,
        events: &'a [Event],
        request: Option<&'a str>,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let bodies = events.iter().map(encode).collect();
            let version = self
                .ask(|reply| Command::Append {
                    game: game.to_owned(),
                    expected,
                    bodies,
                    request: request.map(str::to_owned),
                    reply,
                })
                .await?;
            self.changes.appended(game, version);
            Ok(version)
        })
    }

    fn request<'a>(
        &'a self,
        game: &'a str,
        request: &'a str,
    ) -> StoreFuture<'a, Option<(u64, u64)>> {
        Box::pin(self.ask(move |reply| Command::Request {
            game: game.to_owned(),
            request: request.to_owned(),
            reply,
        }))
    }

    fn requests<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<String>> {
        Box::pin(self.ask(move |reply| Command::Requests {
            game: game.to_owned(),
            after,
            reply,
        }))
    }

    fn read<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<Event>> {
        Box::pin(self.ask(move |reply| Command::Read {
            game: game.to_owned(),
            after,
            reply,
        }))
    }

    fn read_all(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<Committed>> {
        Box::pin(self.ask(move |reply| Command::ReadAll {
            after,
            limit,
            reply,
        }))
    }

    fn last_position(&self) -> StoreFuture<'_, u64> {
        Box::pin(self.ask(|reply| Command::LastPosition { reply }))
    }

    fn count_after(&self, after: u64, cap: u64) -> StoreFuture<'_, u64> {
        Box::pin(self.ask(move |reply| Command::CountAfter { after, cap, reply }))
    }

    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}

impl Records for SqliteStore {
    fn save_snapshot<'a>(
        &'a self,
        game: &'a str,
        version: u64,
        state: &'a str,
    ) -> StoreFuture<'a, ()> {
        Box::pin(self.ask(move |reply| Command::SaveSnapshot {
            game: game.to_owned(),
            version,
            state: state.to_owned(),
            reply,
        }))
    }

    fn snapshot<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(u64, String)>> {
        Box::pin(self.ask(move |reply| Command::Snapshot {
            game: game.to_owned(),
            reply,
        }))
    }

    fn save_game<'a>(
        &'a self,
        game: &'a str,
        record: &'a str,
        finished: bool,
    ) -> StoreFuture<'a, ()> {
        Box::pin(self.ask(move |reply| Command::SaveGame {
            game: game.to_owned(),
            record: record.to_owned(),
            finished,
            reply,
        }))
    }

    fn unfinished(&self) -> StoreFuture<'_, Vec<(String, String)>> {
        Box::pin(self.ask(|reply| Command::Unfinished { reply }))
    }

    fn record<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(String, bool)>> {
        Box::pin(self.ask(move |reply| Command::Record {
            game: game.to_owned(),
            reply,
        }))
    }

    fn put_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
        create_only: bool,
    ) -> StoreFuture<'a, bool> {
        Box::pin(self.ask(move |reply| Command::PutEntry {
            kind: kind.as_str().to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
            create_only,
            reply,
        }))
    }

    fn remove_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
    ) -> StoreFuture<'a, bool> {
        Box::pin(self.ask(move |reply| Command::RemoveEntry {
            kind: kind.as_str().to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
            reply,
        }))
    }

    fn entry<'a>(&'a self, kind: EntryKind, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(self.ask(move |reply| Command::Entry {
            kind: kind.as_str().to_owned(),
            key: key.to_owned(),
            reply,
        }))
    }

    fn entries<'a>(
        &'a self,
        kind: EntryKind,
        prefix: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<(String, String)>> {
        Box::pin(self.ask(move |reply| Command::Entries {
            kind: kind.as_str().to_owned(),
            prefix: prefix.to_owned(),
            limit,
            reply,
        }))
    }
}

impl Coordination for SqliteStore {
    fn cursor<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<u64>> {
        Box::pin(self.ask(move |reply| Command::Cursor {
            name: name.to_owned(),
            reply,
        }))
    }

    fn save_cursor<'a>(&'a self, name: &'a str, position: u64) -> StoreFuture<'a, ()> {
        Box::pin(self.ask(move |reply| Command::SaveCursor {
            name: name.to_owned(),
            position,
            reply,
        }))
    }
}
