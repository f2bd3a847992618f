//! The file's schema and its migrations: tables made at opening, and files of earlier versions
//! brought up to date.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Makes the directory `path` is in, if missing.
pub(super) fn create_parent(path: &Path) -> Result<(), StoreError> {
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
/// `sqlite_sequence` in every commit. A
/// file they made keeps it unless [`REKEY`] makes its table again anyway: rebuilding a large
/// file only to drop it would hold up the server's start.
pub(super) const SCHEMA: &str = "
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
pub(super) const ADD_REQUEST: &str = "ALTER TABLE events ADD COLUMN request TEXT";

/// Files of earlier versions keyed `events` on `(game, version)` with a unique index, and every
/// append wrote a page of it, a different one for each game. The events table is made again
/// without it, and its keys go to `event_keys` ([`KEY_LAG`]).
pub(super) const REKEY: &str = "
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
pub(super) const KEYED_THE_OLD_WAY: &str = "SELECT EXISTS (SELECT 1 FROM sqlite_master
    WHERE type = 'index' AND tbl_name = 'events' AND name LIKE 'sqlite_autoindex_events%')";

/// A new file, or one [`REKEY`] made again: every event it holds goes to `event_keys`.
const KEY_ALL: &str = "
INSERT OR IGNORE INTO event_keys (game, version, position)
    SELECT game, version, position FROM events ORDER BY game, version;
INSERT INTO event_keys_upto (upto) SELECT COALESCE(MAX(position), 0) FROM events;
";

/// Makes the tables, or brings a file an earlier version made up to date, in one transaction.
pub(super) fn make_schema(conn: &mut Connection) -> rusqlite::Result<()> {
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
    // index; a game's task reads its request ids once (see `Events::requests`).
    tx.execute_batch("DROP INDEX IF EXISTS events_request")?;
    let keyed: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM event_keys_upto)", [], |row| {
        row.get(0)
    })?;
    if !keyed {
        tx.execute_batch(KEY_ALL)?;
    }
    tx.commit()
}
