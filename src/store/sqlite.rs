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

use std::path::Path;
use std::sync::mpsc;

use rusqlite::TransactionBehavior::{Deferred, Immediate};
use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use super::{Change, Committed, EventStore, StoreError, StoreFuture, decode_log};
use crate::rules::{Event, encode};

/// The WAL's length, in pages, that makes a commit copy it into the database (a checkpoint),
/// SQLite's default. The commit that checkpoints answers its moves only once the pages are
/// copied and the file is synced, so a longer WAL holds up one batch for longer: at 8,000 pages
/// (chosen when every append dirtied a page of an index of its own game) the load bench saw two
/// or three commits of 15-24 ms in each 7-second run at 12,000 moves a second, and none past
/// 9 ms at 1,000.
const CHECKPOINT_PAGES: i64 = 1_000;

/// Requests taken together in one transaction at most.
const MAX_BATCH: usize = 4096;

/// A batch this large means moves come faster than the writer commits them alone: before its
/// next commit, the writer then lets requests gather for [`GATHER`], so that one commit (and its
/// fsync) serves several times more moves. Under about 6,000 moves a second the gathered batch
/// stays smaller than this and the writer goes back to committing at once, so a lightly loaded
/// server pays no wait. Measured with `cargo bench --bench load` (CHANGELOG.md).
const BUSY_BATCH: usize = 16;

/// How long a busy writer lets requests gather before a commit. It sleeps rather than waiting on
/// the channel with a timeout, which would wake it at every request that arrived meanwhile.
const GATHER: std::time::Duration = std::time::Duration::from_millis(2);

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
    changes: tokio::sync::broadcast::Sender<Change>,
    /// The file's lock, held while the store is open, when it was opened by
    /// [`SqliteStore::open_alone`].
    _lock: Option<std::fs::File>,
}

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// Makes the directory `path` is in, if missing.
fn create_parent(path: &Path) -> Result<(), StoreError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(unavailable)
        }
        _ => Ok(()),
    }
}

/// The tables. An event's `position` is its rowid: no event is ever deleted, so a new row takes
/// the largest position + 1 and no position is given twice. Earlier versions declared it
/// `AUTOINCREMENT` as well, which numbers rows the same way here but also rewrites a page of
/// `sqlite_sequence` in every commit (in the load bench, a tenth of the frames the WAL got). A
/// file they made keeps it unless [`REKEY`] makes its table again anyway: rebuilding a large
/// file only to drop it would hold up the server's start.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    request TEXT
);
CREATE TABLE IF NOT EXISTS event_keys (
    game TEXT NOT NULL,
    version INTEGER NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (game, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS event_keys_upto (
    upto INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshots (
    game TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    finished INTEGER NOT NULL,
    created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS cursors (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
";

/// The request that produced each event (durable `request_id`s), for a file made before it was
/// kept: added when missing.
const ADD_REQUEST: &str = "ALTER TABLE events ADD COLUMN request TEXT";

/// Files made before 2026-12-07 keyed `events` on `(game, version)` with a unique index. Every
/// append wrote a page of that index, a different one for each game: two thirds of the writer's
/// time per append went to it, most of it in the kernel (`cargo bench --bench appends`). The
/// events table is made again without it, and its keys go to `event_keys` ([`KEY_LAG`]).
const REKEY: &str = "
CREATE TABLE events_rekeyed (
    position INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    request TEXT
);
INSERT INTO events_rekeyed (position, game, version, body, request)
    SELECT position, game, version, body, request FROM events ORDER BY position;
DROP TABLE events;
ALTER TABLE events_rekeyed RENAME TO events;
";

/// Whether `events` still has the unique index of the files made before [`REKEY`].
const KEYED_THE_OLD_WAY: &str = "SELECT EXISTS (SELECT 1 FROM sqlite_master
    WHERE type = 'index' AND tbl_name = 'events' AND name LIKE 'sqlite_autoindex_events%')";

/// A new file, or one [`REKEY`] made again: every event it holds goes to `event_keys`.
const KEY_ALL: &str = "
INSERT OR IGNORE INTO event_keys (game, version, position)
    SELECT game, version, position FROM events ORDER BY game, version;
INSERT INTO event_keys_upto (upto) SELECT COALESCE(MAX(position), 0) FROM events;
";

/// Makes the tables, or brings a file an earlier version made up to date, in one transaction.
fn make_schema(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(Immediate)?;
    tx.execute_batch(SCHEMA)?;
    let has_request: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('events') WHERE name = 'request')",
        [],
        |row| row.get(0),
    )?;
    if !has_request {
        tx.execute_batch(ADD_REQUEST)?;
    }
    if tx.query_row(KEYED_THE_OLD_WAY, [], |row| row.get::<_, bool>(0))? {
        tx.execute_batch(REKEY)?;
    }
    // Earlier versions indexed the request ids too, which cost every append a page of the
    // index; a game's task reads its request ids once (see `EventStore::requests`).
    tx.execute_batch("DROP INDEX IF EXISTS events_request")?;
    let keyed: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM event_keys_upto)", [], |row| {
        row.get(0)
    })?;
    if !keyed {
        tx.execute_batch(KEY_ALL)?;
    }
    tx.commit()
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
            changes: tokio::sync::broadcast::channel(4096).0,
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

impl EventStore for SqliteStore {
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
            // Nobody listening is fine.
            let _ = self.changes.send(Change::Appended {
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

    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
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

    fn put_entry<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: &'a str,
        create_only: bool,
    ) -> StoreFuture<'a, bool> {
        Box::pin(self.ask(move |reply| Command::PutEntry {
            kind: kind.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
            create_only,
            reply,
        }))
    }

    fn remove_entry<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: &'a str,
    ) -> StoreFuture<'a, bool> {
        Box::pin(self.ask(move |reply| Command::RemoveEntry {
            kind: kind.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
            reply,
        }))
    }

    fn entry<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(self.ask(move |reply| Command::Entry {
            kind: kind.to_owned(),
            key: key.to_owned(),
            reply,
        }))
    }

    fn entries<'a>(
        &'a self,
        kind: &'a str,
        prefix: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<(String, String)>> {
        Box::pin(self.ask(move |reply| Command::Entries {
            kind: kind.to_owned(),
            prefix: prefix.to_owned(),
            limit,
            reply,
        }))
    }
}

/// Answers a write of the batch with its own result, or with the commit's error if the batch
/// failed to commit.
fn after_commit<T: Send + 'static>(reply: Reply<T>, result: Result<T, StoreError>) -> Finish {
    Box::new(move |failed| {
        let _ = reply.send(match (failed, result) {
            (Some(e), Ok(_)) => Err(e.clone()),
            (_, r) => r,
        });
    })
}

/// The writer thread: batches requests and commits their writes together.
fn writer(mut conn: Connection, rx: mpsc::Receiver<Command>) {
    let mut tail = Tail::default();
    let mut busy = false;
    while let Ok(first) = rx.recv() {
        if busy {
            std::thread::sleep(GATHER);
        }
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(c) => batch.push(c),
                Err(_) => break,
            }
        }
        busy = batch.len() >= BUSY_BATCH;
        let mut reads = Vec::new();
        let mut done: Vec<Finish> = Vec::new();
        let mut tx = match begin(&mut conn, Immediate, &mut tail) {
            Ok(tx) => tx,
            Err(e) => {
                fail_all(batch, &e);
                continue;
            }
        };
        for command in batch {
            match command {
                Command::Append {
                    game,
                    expected,
                    bodies,
                    request,
                    reply,
                } => {
                    let result = append(
                        &mut tx,
                        &mut tail,
                        &game,
                        expected,
                        &bodies,
                        request.as_deref(),
                    );
                    done.push(after_commit(reply, result));
                }
                Command::SaveGame {
                    game,
                    record,
                    finished,
                    reply,
                } => {
                    let result = tx
                        .execute(
                            "INSERT INTO games (game, record, finished, created)
                             VALUES (?1, ?2, ?3, strftime('%s','now'))
                             ON CONFLICT (game) DO UPDATE SET record = ?2, finished = ?3",
                            params![game, record, finished],
                        )
                        .map(|_| ())
                        .map_err(unavailable);
                    done.push(after_commit(reply, result));
                }
                Command::SaveSnapshot {
                    game,
                    version,
                    state,
                    reply,
                } => {
                    let result = i64::try_from(version).map_err(unavailable).and_then(|v| {
                        tx.execute(
                            "INSERT INTO snapshots (game, version, state) VALUES (?1, ?2, ?3)
                             ON CONFLICT (game) DO UPDATE SET version = ?2, state = ?3
                             WHERE excluded.version > snapshots.version",
                            params![game, v, state],
                        )
                        .map(|_| ())
                        .map_err(unavailable)
                    });
                    done.push(after_commit(reply, result));
                }
                Command::SaveCursor {
                    name,
                    position,
                    reply,
                } => {
                    let result = i64::try_from(position).map_err(unavailable).and_then(|p| {
                        tx.execute(
                            "INSERT INTO cursors (name, position) VALUES (?1, ?2)
                             ON CONFLICT (name) DO UPDATE SET position = ?2",
                            params![name, p],
                        )
                        .map(|_| ())
                        .map_err(unavailable)
                    });
                    done.push(after_commit(reply, result));
                }
                Command::PutEntry {
                    kind,
                    key,
                    value,
                    create_only,
                    reply,
                } => {
                    let sql = if create_only {
                        "INSERT INTO entries (kind, key, value) VALUES (?1, ?2, ?3)
                         ON CONFLICT (kind, key) DO NOTHING"
                    } else {
                        "INSERT INTO entries (kind, key, value) VALUES (?1, ?2, ?3)
                         ON CONFLICT (kind, key) DO UPDATE SET value = ?3"
                    };
                    let result = tx
                        .execute(sql, params![kind, key, value])
                        .map(|n| n > 0)
                        .map_err(unavailable);
                    done.push(after_commit(reply, result));
                }
                Command::RemoveEntry {
                    kind,
                    key,
                    value,
                    reply,
                } => {
                    let result = tx
                        .execute(
                            "DELETE FROM entries WHERE kind = ?1 AND key = ?2 AND value = ?3",
                            params![kind, key, value],
                        )
                        .map(|n| n > 0)
                        .map_err(unavailable);
                    done.push(after_commit(reply, result));
                }
                read => reads.push(read),
            }
        }
        let failed = tail
            .key_if_long(&tx)
            .and_then(|()| tx.commit())
            .err()
            .map(unavailable);
        if failed.is_some() {
            // The batch's appends are undone: the tail's keys of them are wrong.
            tail.forget();
        }
        for finish in done {
            finish(failed.as_ref());
        }
        if !reads.is_empty() {
            serve_reads(&mut conn, &mut tail, reads);
        }
    }
}

/// Begins a transaction (`Immediate` takes the file's write lock at once) and makes sure the
/// tail is the file's within it.
fn begin<'c>(
    conn: &'c mut Connection,
    behavior: rusqlite::TransactionBehavior,
    tail: &mut Tail,
) -> Result<rusqlite::Transaction<'c>, StoreError> {
    let tx = conn
        .transaction_with_behavior(behavior)
        .map_err(unavailable)?;
    match tail.sync(&tx) {
        Ok(()) => Ok(tx),
        Err(e) => {
            tail.forget();
            Err(unavailable(e))
        }
    }
}

/// Answers reads together in one read transaction, which sees the tail as it is in the file.
fn serve_reads(conn: &mut Connection, tail: &mut Tail, reads: Vec<Command>) {
    let tx = match begin(conn, Deferred, tail) {
        Ok(tx) => tx,
        Err(e) => {
            fail_all(reads, &e);
            return;
        }
    };
    for read in reads {
        serve_read(&tx, tail, read);
    }
    // Nothing was written: ending the transaction only lets go of its snapshot.
    let _ = tx.commit();
}

/// Events whose keys the file may lack, at most (the tail). Keyed one append at a time, a
/// thousand games' appends write a thousand pages of the key to the WAL and the file (one page
/// per game, a few bytes changed in each), and that was most of an append's cost. Past this
/// many, the keys of the game longest in the tail go to `event_keys` all at once. The longer the
/// tail, the more keys each game brings to its pages: with a thousand games under way, 32,768
/// brought about 33 and wrote as many pages of `event_keys` to the WAL as of `events`; at this
/// length a game has usually ended before it is keyed, and its keys go in together. The tail
/// costs the writer 16 to 32 bytes of memory per event (a few MiB at most), and a server reads
/// it back from `events` when it starts.
const KEY_LAG: usize = 131_072;

/// The writer's memory of the file's tail: the events whose keys are not in `event_keys` yet,
/// all after position `event_keys_upto`. A read by game takes the keyed events from the file
/// and the tail's by their positions.
#[derive(Default)]
struct Tail {
    /// The file's `PRAGMA data_version` when the tail was last known to be whole; it changes
    /// when another connection commits to the file, and the tail is then read again from it.
    seen: Option<i64>,
    /// Each game's events in the tail, `(version, position)`, in version order.
    games: std::collections::HashMap<String, Vec<(i64, i64)>>,
    /// The games in the tail, the one whose first event there came first at the front.
    order: std::collections::VecDeque<String>,
    /// Events in the tail.
    len: usize,
    /// `event_keys_upto` as the file has it.
    upto: i64,
}

impl Tail {
    /// Makes sure the tail is the file's, at the start of each transaction: if another
    /// connection wrote to the file since (appended, or keyed events), the tail is read again.
    fn sync(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        // A read first, so that the transaction has its snapshot of the file. Every batch asks
        // both: kept prepared, they are not parsed again each time.
        let upto: i64 = conn
            .prepare_cached("SELECT upto FROM event_keys_upto")?
            .query_row([], |row| row.get(0))?;
        let now: i64 = conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |row| row.get(0))?;
        if self.seen == Some(now) {
            return Ok(());
        }
        self.games.clear();
        self.order.clear();
        self.len = 0;
        self.upto = upto;
        let mut query = conn.prepare_cached(
            "SELECT game, version, position FROM events e WHERE position > ?1 AND NOT EXISTS
                 (SELECT 1 FROM event_keys k WHERE k.game = e.game AND k.version = e.version)
             ORDER BY position",
        )?;
        let mut rows = query.query(params![upto])?;
        while let Some(row) = rows.next()? {
            let game: String = row.get(0)?;
            self.add(&game, &[(row.get(1)?, row.get(2)?)]);
        }
        self.seen = Some(now);
        Ok(())
    }

    /// Adds the keys of events just appended to `game`.
    fn add(&mut self, game: &str, keys: &[(i64, i64)]) {
        match self.games.get_mut(game) {
            Some(known) => known.extend_from_slice(keys),
            None => {
                self.games.insert(game.to_owned(), keys.to_vec());
                self.order.push_back(game.to_owned());
            }
        }
        self.len += keys.len();
    }

    /// `game`'s events in the tail, `(version, position)`, in version order.
    fn of(&self, game: &str) -> &[(i64, i64)] {
        self.games.get(game).map_or(&[], Vec::as_slice)
    }

    /// While the tail holds more than [`KEY_LAG`] events, writes the keys of the game longest
    /// in it into `event_keys`, within the batch's transaction: under a steady load, each batch
    /// keys about as many events as it appended, a game's at a time.
    fn key_if_long(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        if self.len <= KEY_LAG {
            return Ok(());
        }
        let mut insert = conn.prepare_cached(
            "INSERT OR IGNORE INTO event_keys (game, version, position) VALUES (?1, ?2, ?3)",
        )?;
        while self.len > KEY_LAG {
            let Some(game) = self.order.pop_front() else {
                break;
            };
            for (version, position) in self.games.remove(&game).unwrap_or_default() {
                insert.execute(params![game, version, position])?;
                self.len -= 1;
            }
        }
        // Every event before the first one left in the tail is keyed.
        let first = self.order.front().and_then(|game| self.of(game).first());
        if let Some(&(_, position)) = first
            && position - 1 > self.upto
        {
            self.upto = position - 1;
            conn.prepare_cached("UPDATE event_keys_upto SET upto = ?1")?
                .execute(params![self.upto])?;
        }
        Ok(())
    }

    /// Reads the tail again at the next transaction (one that changed it did not commit).
    fn forget(&mut self) {
        self.seen = None;
    }
}

/// Appends within the batch's transaction, which holds the file's write lock, so the version
/// [`stored_version`] finds is the file's (the tail is read again when another connection has
/// written, see [`Tail::sync`]). Then every event goes in with one statement, which SQLite
/// applies whole or not at all: a refused append leaves nothing.
fn append(
    tx: &mut rusqlite::Transaction<'_>,
    tail: &mut Tail,
    game: &str,
    expected: u64,
    bodies: &[String],
    request: Option<&str>,
) -> Result<u64, StoreError> {
    let actual = stored_version(tx, tail, game)?;
    if actual != expected {
        return Err(StoreError::Conflict {
            game: game.to_owned(),
            expected,
            actual,
        });
    }
    if bodies.is_empty() {
        return Ok(expected);
    }
    // A move makes a handful of events: one statement, kept prepared for each count, which
    // SQLite applies whole or not at all. Longer appends go in chunks under a savepoint.
    let mut keys = Vec::with_capacity(bodies.len());
    let inserted = if bodies.len() <= CHUNK {
        insert_events(tx, game, expected, bodies, request, &mut keys)
    } else {
        tx.savepoint().map_err(unavailable).and_then(|sp| {
            for (i, chunk) in bodies.chunks(CHUNK).enumerate() {
                let first = expected + (i * CHUNK) as u64;
                insert_events(&sp, game, first, chunk, request, &mut keys)?;
            }
            sp.commit().map_err(unavailable)
        })
    };
    inserted?;
    tail.add(game, &keys);
    Ok(expected + bodies.len() as u64)
}

/// The version `game` is at in the file (as this transaction sees it): its last event in the
/// tail, else its last keyed event (one lookup in the key).
fn stored_version(conn: &Connection, tail: &Tail, game: &str) -> Result<u64, StoreError> {
    let version = match tail.of(game).last() {
        Some(&(version, _)) => version,
        None => conn
            .prepare_cached("SELECT COALESCE(MAX(version), 0) FROM event_keys WHERE game = ?1")
            .and_then(|mut q| q.query_row(params![game], |row| row.get::<_, i64>(0)))
            .map_err(unavailable)?,
    };
    Ok(u64::try_from(version).unwrap_or(0))
}

/// Events one `INSERT` statement takes at most.
const CHUNK: usize = 32;

/// Inserts events `expected + 1`.. of `game` with one statement, and adds their `(version,
/// position)` to `keys`. The transaction holds the file's write lock and SQLite numbers the rows
/// one after another in the order of `VALUES` (each the largest position + 1), so the last row's
/// position says every row's.
fn insert_events(
    conn: &Connection,
    game: &str,
    expected: u64,
    bodies: &[String],
    request: Option<&str>,
    keys: &mut Vec<(i64, i64)>,
) -> Result<(), StoreError> {
    let values = vec!["(?, ?, ?, ?)"; bodies.len()].join(", ");
    let mut insert = conn
        .prepare_cached(&format!(
            "INSERT INTO events (game, version, body, request) VALUES {values}"
        ))
        .map_err(unavailable)?;
    let versions = (1..=bodies.len() as u64)
        .map(|i| i64::try_from(expected + i).map_err(unavailable))
        .collect::<Result<Vec<i64>, _>>()?;
    let mut args: Vec<&dyn rusqlite::ToSql> = Vec::with_capacity(bodies.len() * 4);
    for (version, body) in versions.iter().zip(bodies) {
        args.extend([&game as &dyn rusqlite::ToSql, version, body, &request]);
    }
    insert
        .execute(rusqlite::params_from_iter(args))
        .map_err(unavailable)?;
    let first = conn.last_insert_rowid() - (versions.len() as i64 - 1);
    keys.extend(versions.iter().zip(first..).map(|(&v, p)| (v, p)));
    Ok(())
}

fn serve_read(conn: &Connection, tail: &Tail, command: Command) {
    match command {
        Command::Read { game, after, reply } => {
            let _ = reply.send(read(conn, tail, &game, after));
        }
        Command::Unfinished { reply } => {
            let _ = reply.send(unfinished(conn));
        }
        Command::Snapshot { game, reply } => {
            let found = conn
                .query_row(
                    "SELECT version, state FROM snapshots WHERE game = ?1",
                    params![game],
                    |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
                )
                .optional()
                .map_err(unavailable)
                .map(|row| row.map(|(v, state)| (u64::try_from(v).unwrap_or(0), state)));
            let _ = reply.send(found);
        }
        Command::SaveSnapshot { reply, .. } => {
            let _ = reply.send(Err(unavailable("not a read")));
        }
        Command::ReadAll {
            after,
            limit,
            reply,
        } => {
            let _ = reply.send(read_all(conn, after, limit));
        }
        Command::LastPosition { reply } => {
            let last = conn
                .query_row("SELECT COALESCE(MAX(position), 0) FROM events", [], |row| {
                    row.get::<_, i64>(0)
                })
                .map_err(unavailable)
                .map(|p| u64::try_from(p).unwrap_or(0));
            let _ = reply.send(last);
        }
        Command::Record { game, reply } => {
            let _ = reply.send(record(conn, &game));
        }
        Command::CountAfter { after, cap, reply } => {
            let count = i64::try_from(after)
                .map_err(unavailable)
                .and_then(|after| {
                    conn.query_row(
                        "SELECT COUNT(*) FROM (SELECT 1 FROM events WHERE position > ?1 LIMIT ?2)",
                        params![after, i64::try_from(cap).unwrap_or(i64::MAX)],
                        |row| row.get::<_, i64>(0),
                    )
                    .map_err(unavailable)
                })
                .map(|n| u64::try_from(n).unwrap_or(0));
            let _ = reply.send(count);
        }
        Command::Request {
            game,
            request,
            reply,
        } => {
            let _ = reply.send(find_request(conn, tail, &game, &request));
        }
        Command::Requests { game, after, reply } => {
            let _ = reply.send(game_requests(conn, tail, &game, after));
        }
        Command::Append { reply, .. } => {
            let _ = reply.send(Err(unavailable("not a read")));
        }
        Command::SaveGame { reply, .. } | Command::SaveCursor { reply, .. } => {
            let _ = reply.send(Err(unavailable("not a read")));
        }
        Command::PutEntry { reply, .. } | Command::RemoveEntry { reply, .. } => {
            let _ = reply.send(Err(unavailable("not a read")));
        }
        Command::Entry { kind, key, reply } => {
            let found = conn
                .query_row(
                    "SELECT value FROM entries WHERE kind = ?1 AND key = ?2",
                    params![kind, key],
                    |row| row.get::<_, String>(0),
                )
                .optional()
                .map_err(unavailable);
            let _ = reply.send(found);
        }
        Command::Entries {
            kind,
            prefix,
            limit,
            reply,
        } => {
            let _ = reply.send(entries(conn, &kind, &prefix, limit));
        }
        Command::Cursor { name, reply } => {
            let found = conn
                .query_row(
                    "SELECT position FROM cursors WHERE name = ?1",
                    params![name],
                    |row| row.get::<_, i64>(0),
                )
                .optional()
                .map_err(unavailable)
                .map(|p| p.map(|p| u64::try_from(p).unwrap_or(0)));
            let _ = reply.send(found);
        }
    }
}

/// The events after `after`, checked to be numbered without a gap: those keyed in
/// `event_keys`, then the tail's. The versions are the events' own, so a key that no longer
/// matches its event (or an event gone) shows as a gap.
fn read(conn: &Connection, tail: &Tail, game: &str, after: u64) -> Result<Vec<Event>, StoreError> {
    let after_sql = i64::try_from(after).map_err(unavailable)?;
    let version_and_body = |row: &rusqlite::Row<'_>| Ok((row.get::<_, i64>(0)?, row.get(1)?));
    let tail_rows = in_tail(
        conn,
        tail,
        game,
        after_sql,
        "SELECT version, body FROM events WHERE position = ?1",
        version_and_body,
    )?;
    let mut keyed = conn
        .prepare_cached(
            "SELECT e.version, e.body FROM event_keys k JOIN events e ON e.position = k.position
             WHERE k.game = ?1 AND k.version > ?2 ORDER BY k.version",
        )
        .map_err(unavailable)?;
    let keyed_rows = keyed
        .query_map(params![game, after_sql], version_and_body)
        .map_err(unavailable)?
        .map(|row| row.map_err(unavailable));
    decode_log(game, after, keyed_rows.chain(tail_rows.into_iter().map(Ok)))
}

/// What `sql` reads (`?1` is an event's position) of each of `game`'s events in the tail after
/// version `after`, in version order; an event no longer in the file reads as nothing.
fn in_tail<T>(
    conn: &Connection,
    tail: &Tail,
    game: &str,
    after: i64,
    sql: &str,
    row: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    let mut at = conn.prepare_cached(sql).map_err(unavailable)?;
    let mut found = Vec::new();
    for &(_, position) in tail.of(game).iter().filter(|(version, _)| *version > after) {
        found.extend(
            at.query_row(params![position], &row)
                .optional()
                .map_err(unavailable)?,
        );
    }
    Ok(found)
}

/// Every game's events after global position `after`. One thread commits appends one batch
/// after another, so positions become visible in order.
fn read_all(conn: &Connection, after: u64, limit: usize) -> Result<Vec<Committed>, StoreError> {
    let mut query = conn
        .prepare_cached(
            "SELECT position, game, version, body FROM events WHERE position > ?1
             ORDER BY position LIMIT ?2",
        )
        .map_err(unavailable)?;
    let after_sql = i64::try_from(after).map_err(unavailable)?;
    let limit_sql = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = query
        .query_map(params![after_sql, limit_sql], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, String>(3)?,
            ))
        })
        .map_err(unavailable)?;
    rows.map(|row| {
        let (position, game, version, body) = row.map_err(unavailable)?;
        Committed::from_row(position, game, version, &body)
    })
    .collect()
}

fn unfinished(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut query = conn
        .prepare_cached("SELECT game, record FROM games WHERE finished = 0 ORDER BY created, rowid")
        .map_err(unavailable)?;
    let rows = query
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(unavailable)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(unavailable)
}

fn record(conn: &Connection, game: &str) -> Result<Option<(String, bool)>, StoreError> {
    conn.query_row(
        "SELECT record, finished FROM games WHERE game = ?1",
        params![game],
        |row| Ok((row.get::<_, String>(0)?, row.get::<_, bool>(1)?)),
    )
    .optional()
    .map_err(unavailable)
}

/// Up to `limit` entries of `kind` whose keys start with `prefix`, in key order (SQLite
/// compares text byte by byte).
fn entries(
    conn: &Connection,
    kind: &str,
    prefix: &str,
    limit: usize,
) -> Result<Vec<(String, String)>, StoreError> {
    let mut query = conn
        .prepare_cached(
            "SELECT key, value FROM entries
             WHERE kind = ?1 AND key >= ?2 AND substr(key, 1, length(?2)) = ?2
             ORDER BY key LIMIT ?3",
        )
        .map_err(unavailable)?;
    let rows = query
        .query_map(
            params![kind, prefix, i64::try_from(limit).unwrap_or(i64::MAX)],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
        )
        .map_err(unavailable)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(unavailable)
}

/// The versions a stored request produced.
fn find_request(
    conn: &Connection,
    tail: &Tail,
    game: &str,
    request: &str,
) -> Result<Option<(u64, u64)>, StoreError> {
    let (first, last): (Option<i64>, Option<i64>) = conn
        .prepare_cached(
            "SELECT MIN(e.version), MAX(e.version) FROM event_keys k
             JOIN events e ON e.position = k.position WHERE k.game = ?1 AND e.request = ?2",
        )
        .and_then(|mut q| q.query_row(params![game, request], |row| Ok((row.get(0)?, row.get(1)?))))
        .map_err(unavailable)?;
    let in_tail = in_tail(
        conn,
        tail,
        game,
        0,
        "SELECT version, request FROM events WHERE position = ?1",
        |row| Ok((row.get::<_, i64>(0)?, row.get::<_, Option<String>>(1)?)),
    )?;
    let versions: Vec<i64> = first
        .into_iter()
        .chain(last)
        .chain(
            in_tail
                .into_iter()
                .filter(|(_, r)| r.as_deref() == Some(request))
                .map(|(v, _)| v),
        )
        .collect();
    let first = versions.iter().min().copied();
    let last = versions.iter().max().copied();
    Ok(first.zip(last).map(|(first, last)| {
        (
            u64::try_from(first).unwrap_or(0),
            u64::try_from(last).unwrap_or(0),
        )
    }))
}

/// The request ids stored with `game`'s events after version `after`, each once.
fn game_requests(
    conn: &Connection,
    tail: &Tail,
    game: &str,
    after: u64,
) -> Result<Vec<String>, StoreError> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let mut keyed = conn
        .prepare_cached(
            "SELECT DISTINCT e.request FROM event_keys k JOIN events e ON e.position = k.position
             WHERE k.game = ?1 AND k.version > ?2 AND e.request IS NOT NULL",
        )
        .map_err(unavailable)?;
    let mut requests = keyed
        .query_map(params![game, after], |row| row.get::<_, String>(0))
        .map_err(unavailable)?
        .collect::<Result<std::collections::HashSet<_>, _>>()
        .map_err(unavailable)?;
    requests.extend(in_tail(
        conn,
        tail,
        game,
        after,
        "SELECT request FROM events WHERE position = ?1 AND request IS NOT NULL",
        |row| row.get::<_, String>(0),
    )?);
    Ok(requests.into_iter().collect())
}

fn fail_all(batch: Vec<Command>, error: &StoreError) {
    for command in batch {
        match command {
            Command::Append { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Read { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::SaveGame { reply, .. } | Command::SaveCursor { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Cursor { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::PutEntry { reply, .. } | Command::RemoveEntry { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Entry { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Entries { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Unfinished { reply } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::SaveSnapshot { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Snapshot { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::ReadAll { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::LastPosition { reply } | Command::CountAfter { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Record { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Request { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
            Command::Requests { reply, .. } => {
                let _ = reply.send(Err(error.clone()));
            }
        }
    }
}
