//! The PostgreSQL event store, for several server processes sharing one store.
//!
//! Events are keyed on (game, version): two writers cannot both append event N, and the loser's
//! conflict is recognised by the unique-violation SQLSTATE (23505), never by the error's text. The
//! schema is created at start. Every append also sends a NOTIFY on `unoflip_events` with the new
//! version and the game's name (`"12 games/x"`): only a wake-up for other servers, which read the
//! events themselves.
//!
//! Appends are committed in groups: one writer task takes every append waiting (one per game)
//! and inserts them in one statement, so many games' moves share one transaction and one
//! flush of the log; each append is answered once that statement has committed.
//!
//! The firehose's global position of an event is `(xid << 16) + i`: the id of the transaction
//! that appended it, then its index in that transaction. Transaction ids are taken in start order, not
//! commit order, so `read_all` returns only events of transactions older than the oldest one
//! still running (`pg_snapshot_xmin`): those are all finished, so no event can later appear below
//! a position already read. The price is a short delay while older transactions are open.

use std::collections::{HashMap, HashSet};

use sqlx::postgres::{PgPool, PgPoolOptions};
use tokio::sync::{mpsc, oneshot};

use super::{Change, Committed, EventStore, Lease, StoreError, StoreFuture, decode_log};
use crate::rules::{Event, encode};

/// SQLSTATE of a unique violation.
const UNIQUE_VIOLATION: &str = "23505";

/// Events one transaction may append (the index within it takes 16 bits of the position).
const MAX_APPEND: usize = 1 << 16;

/// Appends committed together in one statement at most (group commit).
const MAX_BATCH: usize = 512;

const SCHEMA: [&str; 5] = [
    "CREATE TABLE IF NOT EXISTS unoflip_events (
        position BIGSERIAL PRIMARY KEY,
        game TEXT NOT NULL,
        version BIGINT NOT NULL,
        body TEXT NOT NULL,
        pos BIGINT,
        UNIQUE (game, version)
    )",
    "CREATE TABLE IF NOT EXISTS unoflip_snapshots (
        game TEXT PRIMARY KEY,
        version BIGINT NOT NULL,
        state TEXT NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS unoflip_games (
        game TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        finished BOOLEAN NOT NULL,
        created TIMESTAMPTZ NOT NULL DEFAULT now()
    )",
    "CREATE TABLE IF NOT EXISTS unoflip_cursors (
        name TEXT PRIMARY KEY,
        position BIGINT NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS unoflip_entries (
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (kind, key)
    )",
];

/// The durable firehose position (see the module's doc), for a table made before it existed:
/// rows already there keep their insertion number, which is below every transaction-based
/// position. Run only when the column or its index is missing, since `ALTER TABLE` locks out
/// every append while it runs.
const ADD_POSITION: [&str; 2] = [
    "ALTER TABLE unoflip_events ADD COLUMN IF NOT EXISTS pos BIGINT",
    "UPDATE unoflip_events SET pos = position WHERE pos IS NULL",
];
const POSITION_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS unoflip_events_pos ON unoflip_events (pos)";

/// The request that produced each event (durable `request_id`s), for a table made before it
/// was kept. Run only when missing, like the position.
const ADD_REQUEST: &str = "ALTER TABLE unoflip_events ADD COLUMN IF NOT EXISTS request TEXT";
/// Earlier versions indexed the request ids, which cost every append a page of the index. A
/// game's task now reads its request ids once (see `EventStore::requests`) and looks one up
/// only when it is a retry, through the `(game, version)` key: the index goes when a server
/// starts. (A server of an earlier version makes it again when it starts.)
const DROP_REQUEST_INDEX: &str = "DROP INDEX IF EXISTS unoflip_events_request";

/// Serializes schema changes between servers starting together.
const MIGRATION_LOCK: i64 = 0x0075_6e6f_666c_6970;

/// Creates or upgrades the schema, under an advisory lock.
async fn migrate(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut conn = pool.acquire().await?;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *conn)
        .await?;
    let result = async {
        for statement in SCHEMA {
            sqlx::query(statement).execute(&mut *conn).await?;
        }
        let (has_pos, has_index, has_request, has_request_index): (bool, bool, bool, bool) =
            sqlx::query_as(
                "SELECT
                EXISTS (SELECT 1 FROM information_schema.columns
                        WHERE table_schema = current_schema()
                          AND table_name = 'unoflip_events' AND column_name = 'pos'),
                EXISTS (SELECT 1 FROM pg_indexes
                        WHERE schemaname = current_schema() AND indexname = 'unoflip_events_pos'),
                EXISTS (SELECT 1 FROM information_schema.columns
                        WHERE table_schema = current_schema()
                          AND table_name = 'unoflip_events' AND column_name = 'request'),
                EXISTS (SELECT 1 FROM pg_indexes
                        WHERE schemaname = current_schema()
                          AND indexname = 'unoflip_events_request')",
            )
            .fetch_one(&mut *conn)
            .await?;
        if !has_pos {
            for statement in ADD_POSITION {
                sqlx::query(statement).execute(&mut *conn).await?;
            }
        }
        if !has_index {
            sqlx::query(POSITION_INDEX).execute(&mut *conn).await?;
        }
        if !has_request {
            sqlx::query(ADD_REQUEST).execute(&mut *conn).await?;
        }
        if has_request_index {
            sqlx::query(DROP_REQUEST_INDEX).execute(&mut *conn).await?;
        }
        Ok::<(), sqlx::Error>(())
    }
    .await;
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *conn)
        .await?;
    result
}

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// Events in PostgreSQL.
pub struct PostgresStore {
    pool: PgPool,
    /// Appends waiting for a writer.
    appends: mpsc::Sender<(Pending, Reply)>,
    changes: tokio::sync::broadcast::Sender<Change>,
    /// Where it connects, for the connection a [`Lease`] holds on its own.
    url: String,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://...`) and creates the schema if it is missing.
    pub async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(std::time::Duration::from_secs(5))
            .connect(url)
            .await
            .map_err(unavailable)?;
        migrate(&pool).await.map_err(unavailable)?;
        let (changes, _) = tokio::sync::broadcast::channel(4096);
        tokio::spawn(listen(pool.clone(), changes.clone()));
        let (appends, queue) = mpsc::channel(MAX_BATCH);
        tokio::spawn(writer(pool.clone(), queue));
        Ok(PostgresStore {
            pool,
            appends,
            changes,
            url: url.to_owned(),
        })
    }
}

/// The version `game` is at in the store.
async fn current(pool: &PgPool, game: &str) -> Result<u64, StoreError> {
    let (max,): (Option<i64>,) =
        sqlx::query_as("SELECT MAX(version) FROM unoflip_events WHERE game = $1")
            .bind(game)
            .fetch_one(pool)
            .await
            .map_err(unavailable)?;
    Ok(u64::try_from(max.unwrap_or(0)).unwrap_or(0))
}

/// An append waiting for a writer: its events already encoded.
struct Pending {
    game: String,
    expected: u64,
    bodies: Vec<String>,
    request: Option<String>,
}

/// Where an append's outcome goes.
type Reply = oneshot::Sender<Result<u64, StoreError>>;

/// The writer: takes every append waiting (up to [`MAX_BATCH`], one per game) and commits them
/// in one statement, so that many games' moves share a transaction and its flush. The appends
/// that come while its commit is in flight wait in the queue and go in together as the next
/// batch. One writer, not several: four, each committing its share, made four times as many
/// smaller transactions and delivered about a tenth fewer moves on the load bench, with a
/// longer tail (CHANGELOG.md).
async fn writer(pool: PgPool, mut queue: mpsc::Receiver<(Pending, Reply)>) {
    let mut carried: Option<(Pending, Reply)> = None;
    loop {
        // An append carried over from the last batch goes first.
        let first = match carried.take() {
            Some(first) => first,
            None => match queue.recv().await {
                Some(first) => first,
                None => return,
            },
        };
        let mut rows = first.0.bodies.len();
        let mut games = HashSet::from([first.0.game.clone()]);
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            let Ok(next) = queue.try_recv() else { break };
            // A game's second append waits for the next batch: it expects the first's
            // version, which a statement cannot see from its own snapshot.
            if rows + next.0.bodies.len() > MAX_APPEND || games.contains(&next.0.game) {
                carried = Some(next);
                break;
            }
            rows += next.0.bodies.len();
            games.insert(next.0.game.clone());
            batch.push(next);
        }
        commit_batch(&pool, batch).await;
    }
}

/// Commits `batch` in one statement and answers each append: its new version, or `Conflict`
/// for a game that was not at the version it expected. If another server's append raced one of
/// them (a unique violation aborts the whole statement), each is tried again on its own.
async fn commit_batch(pool: &PgPool, batch: Vec<(Pending, Reply)>) {
    let mut games = Vec::new();
    let mut versions = Vec::new();
    let mut bodies = Vec::new();
    let mut requests = Vec::new();
    let mut expected = Vec::new();
    let mut heads = Vec::new();
    for (pending, _) in &batch {
        let base = i64::try_from(pending.expected).unwrap_or(i64::MAX);
        heads.push(pending.game.as_str());
        expected.push(base);
        for (i, body) in pending.bodies.iter().enumerate() {
            games.push(pending.game.as_str());
            versions.push(base.saturating_add(i as i64 + 1));
            bodies.push(body.as_str());
            requests.push(pending.request.as_deref());
        }
    }
    // Each game's events go in only if it is at the version its append expects; every game
    // appended gets a NOTIFY, sent when the statement commits.
    let inserted: Result<Vec<(String, i64)>, sqlx::Error> = sqlx::query_as(
        "WITH ok AS (
             SELECT a.g FROM UNNEST($5::TEXT[], $6::BIGINT[]) AS a (g, e)
             WHERE (SELECT COALESCE(MAX(version), 0) FROM unoflip_events WHERE game = a.g) = a.e
         ),
         ins AS (
             INSERT INTO unoflip_events (game, version, body, pos, request)
             SELECT t.g, t.v, t.b, (pg_current_xact_id()::TEXT::BIGINT << 16) + t.i - 1, t.r
             FROM UNNEST($1::TEXT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[])
                  WITH ORDINALITY AS t (g, v, b, r, i)
             WHERE t.g IN (SELECT g FROM ok)
             RETURNING game, version
         ),
         done AS (SELECT game, MAX(version) AS version FROM ins GROUP BY game)
         SELECT done.game, done.version FROM done
         CROSS JOIN LATERAL (
             SELECT pg_notify('unoflip_events', done.version::TEXT || ' ' || done.game)
         ) AS notified",
    )
    .bind(&games)
    .bind(&versions)
    .bind(&bodies)
    .bind(&requests)
    .bind(&heads)
    .bind(&expected)
    .fetch_all(pool)
    .await;
    match inserted {
        Ok(rows) => {
            let done: HashMap<String, i64> = rows.into_iter().collect();
            for (pending, reply) in batch {
                let new_version = pending.expected + pending.bodies.len() as u64;
                let outcome = match done.get(&pending.game) {
                    Some(&v) if u64::try_from(v).ok() == Some(new_version) => Ok(new_version),
                    _ => match current(pool, &pending.game).await {
                        Ok(actual) => Err(StoreError::Conflict {
                            game: pending.game,
                            expected: pending.expected,
                            actual,
                        }),
                        Err(e) => Err(e),
                    },
                };
                let _ = reply.send(outcome);
            }
        }
        Err(e) if is_unique_violation(&e) => {
            for (pending, reply) in batch {
                let _ = reply.send(append_one(pool, &pending).await);
            }
        }
        Err(e) => {
            let error = unavailable(e);
            for (_, reply) in batch {
                let _ = reply.send(Err(error.clone()));
            }
        }
    }
}

fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == UNIQUE_VIOLATION)
}

/// Appends one game's events in a statement of their own, with its NOTIFY.
async fn append_one(pool: &PgPool, pending: &Pending) -> Result<u64, StoreError> {
    let game = pending.game.as_str();
    let expected = pending.expected;
    let versions: Vec<i64> = (1..=pending.bodies.len() as u64)
        .map(|i| i64::try_from(expected + i).unwrap_or(i64::MAX))
        .collect();
    let expected_sql = i64::try_from(expected).map_err(unavailable)?;
    // One statement: it inserts only if the game is at the expected version, and the unique key
    // on (game, version) stops a writer racing for the same number.
    let inserted = sqlx::query(
        "INSERT INTO unoflip_events (game, version, body, pos, request)
         SELECT $1, v, b, (pg_current_xact_id()::TEXT::BIGINT << 16) + (v - $4 - 1), $5
         FROM UNNEST($2::BIGINT[], $3::TEXT[]) AS t (v, b)
         WHERE (SELECT COALESCE(MAX(version), 0) FROM unoflip_events WHERE game = $1) = $4",
    )
    .bind(game)
    .bind(&versions)
    .bind(&pending.bodies)
    .bind(expected_sql)
    .bind(pending.request.as_deref())
    .execute(pool)
    .await;
    let conflict = match inserted {
        Ok(done) => done.rows_affected() != pending.bodies.len() as u64,
        Err(e) if is_unique_violation(&e) => true,
        Err(e) => return Err(unavailable(e)),
    };
    if conflict {
        return Err(StoreError::Conflict {
            game: game.to_owned(),
            expected,
            actual: current(pool, game).await?,
        });
    }
    let new_version = expected + pending.bodies.len() as u64;
    let note = Change::Appended {
        game: game.to_owned(),
        version: new_version,
    }
    .to_note();
    // The events are committed: a wake-up that cannot be sent must not turn the append into a
    // failure. Other servers catch up at their next read or reconnect.
    if let Err(error) = sqlx::query("SELECT pg_notify('unoflip_events', $1)")
        .bind(&note)
        .execute(pool)
        .await
    {
        tracing::warn!(%game, %error, "NOTIFY failed after an append");
    }
    Ok(new_version)
}

impl EventStore for PostgresStore {
    fn append<'a>(
        &'a self,
        game: &'a str,
        expected: u64,
        events: &'a [Event],
        request: Option<&'a str>,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            if events.len() > MAX_APPEND {
                return Err(unavailable(format!(
                    "{game}: {} events in one append (at most {MAX_APPEND})",
                    events.len()
                )));
            }
            let pending = Pending {
                game: game.to_owned(),
                expected,
                bodies: events.iter().map(encode).collect(),
                request: request.map(str::to_owned),
            };
            let new_version = if events.is_empty() {
                append_one(&self.pool, &pending).await?
            } else {
                let (reply, answer) = oneshot::channel();
                self.appends
                    .send((pending, reply))
                    .await
                    .map_err(|_| unavailable("the store's writers stopped"))?;
                answer
                    .await
                    .map_err(|_| unavailable("the store's writers stopped"))??
            };
            // This process's own waiters are woken at once, whatever LISTEN is doing.
            let _ = self.changes.send(Change::Appended {
                game: game.to_owned(),
                version: new_version,
            });
            Ok(new_version)
        })
    }

    fn request<'a>(
        &'a self,
        game: &'a str,
        request: &'a str,
    ) -> StoreFuture<'a, Option<(u64, u64)>> {
        Box::pin(async move {
            let (first, last): (Option<i64>, Option<i64>) = sqlx::query_as(
                "SELECT MIN(version), MAX(version) FROM unoflip_events
                 WHERE game = $1 AND request = $2",
            )
            .bind(game)
            .bind(request)
            .fetch_one(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(first.zip(last).map(|(first, last)| {
                (
                    u64::try_from(first).unwrap_or(0),
                    u64::try_from(last).unwrap_or(0),
                )
            }))
        })
    }

    fn requests<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            let after_sql = i64::try_from(after).map_err(unavailable)?;
            sqlx::query_scalar(
                "SELECT DISTINCT request FROM unoflip_events
                 WHERE game = $1 AND version > $2 AND request IS NOT NULL",
            )
            .bind(game)
            .bind(after_sql)
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)
        })
    }

    fn read<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<Event>> {
        Box::pin(async move {
            let after_sql = i64::try_from(after).map_err(unavailable)?;
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "SELECT version, body FROM unoflip_events
                 WHERE game = $1 AND version > $2 ORDER BY version",
            )
            .bind(game)
            .bind(after_sql)
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)?;
            decode_log(game, after, rows.into_iter().map(Ok))
        })
    }

    fn read_all(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<Committed>> {
        Box::pin(async move {
            let after_sql = i64::try_from(after).map_err(unavailable)?;
            let limit_sql = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows: Vec<(i64, String, i64, String)> = sqlx::query_as(
                "SELECT pos, game, version, body FROM unoflip_events
                 WHERE pos > $1
                   AND pos < (pg_snapshot_xmin(pg_current_snapshot())::TEXT::BIGINT << 16)
                 ORDER BY pos, game, version LIMIT $2",
            )
            .bind(after_sql)
            .bind(limit_sql)
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)?;
            rows.into_iter()
                .map(|(position, game, version, body)| {
                    Committed::from_row(position, game, version, &body)
                })
                .collect()
        })
    }

    fn last_position(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let (last,): (i64,) = sqlx::query_as(
                "SELECT COALESCE(MAX(pos), 0) FROM unoflip_events
                 WHERE pos < (pg_snapshot_xmin(pg_current_snapshot())::TEXT::BIGINT << 16)",
            )
            .fetch_one(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(u64::try_from(last).unwrap_or(0))
        })
    }

    fn count_after(&self, after: u64, cap: u64) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let (count,): (i64,) = sqlx::query_as(
                "SELECT COUNT(*) FROM (SELECT 1 FROM unoflip_events
                 WHERE pos > $1
                   AND pos < (pg_snapshot_xmin(pg_current_snapshot())::TEXT::BIGINT << 16)
                 LIMIT $2) AS behind",
            )
            .bind(i64::try_from(after).map_err(unavailable)?)
            .bind(i64::try_from(cap).unwrap_or(i64::MAX))
            .fetch_one(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(u64::try_from(count).unwrap_or(0))
        })
    }

    fn save_snapshot<'a>(
        &'a self,
        game: &'a str,
        version: u64,
        state: &'a str,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            // Several servers may snapshot one game: the newest stays.
            sqlx::query(
                "INSERT INTO unoflip_snapshots (game, version, state) VALUES ($1, $2, $3)
                 ON CONFLICT (game) DO UPDATE SET version = $2, state = $3
                 WHERE unoflip_snapshots.version < $2",
            )
            .bind(game)
            .bind(i64::try_from(version).map_err(unavailable)?)
            .bind(state)
            .execute(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(())
        })
    }

    fn snapshot<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(u64, String)>> {
        Box::pin(async move {
            let row: Option<(i64, String)> =
                sqlx::query_as("SELECT version, state FROM unoflip_snapshots WHERE game = $1")
                    .bind(game)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(unavailable)?;
            Ok(row.map(|(v, state)| (u64::try_from(v).unwrap_or(0), state)))
        })
    }

    fn save_game<'a>(
        &'a self,
        game: &'a str,
        record: &'a str,
        finished: bool,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO unoflip_games (game, record, finished) VALUES ($1, $2, $3)
                 ON CONFLICT (game) DO UPDATE SET record = $2, finished = $3",
            )
            .bind(game)
            .bind(record)
            .bind(finished)
            .execute(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(())
        })
    }

    fn record<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(String, bool)>> {
        Box::pin(async move {
            sqlx::query_as("SELECT record, finished FROM unoflip_games WHERE game = $1")
                .bind(game)
                .fetch_optional(&self.pool)
                .await
                .map_err(unavailable)
        })
    }

    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    fn shared(&self) -> bool {
        true
    }

    fn cursor<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move {
            let row: Option<(i64,)> =
                sqlx::query_as("SELECT position FROM unoflip_cursors WHERE name = $1")
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(unavailable)?;
            Ok(row.map(|(p,)| u64::try_from(p).unwrap_or(0)))
        })
    }

    fn save_cursor<'a>(&'a self, name: &'a str, position: u64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO unoflip_cursors (name, position) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET position = $2",
            )
            .bind(name)
            .bind(i64::try_from(position).map_err(unavailable)?)
            .execute(&self.pool)
            .await
            .map_err(unavailable)?;
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
            let sql = if create_only {
                "INSERT INTO unoflip_entries (kind, key, value) VALUES ($1, $2, $3)
                 ON CONFLICT (kind, key) DO NOTHING"
            } else {
                "INSERT INTO unoflip_entries (kind, key, value) VALUES ($1, $2, $3)
                 ON CONFLICT (kind, key) DO UPDATE SET value = $3"
            };
            let done = sqlx::query(sql)
                .bind(kind)
                .bind(key)
                .bind(value)
                .execute(&self.pool)
                .await
                .map_err(unavailable)?;
            Ok(done.rows_affected() > 0)
        })
    }

    fn remove_entry<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: &'a str,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let done = sqlx::query(
                "DELETE FROM unoflip_entries WHERE kind = $1 AND key = $2 AND value = $3",
            )
            .bind(kind)
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(done.rows_affected() > 0)
        })
    }

    fn entry<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            let row: Option<(String,)> =
                sqlx::query_as("SELECT value FROM unoflip_entries WHERE kind = $1 AND key = $2")
                    .bind(kind)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(unavailable)?;
            Ok(row.map(|(v,)| v))
        })
    }

    fn entries<'a>(
        &'a self,
        kind: &'a str,
        prefix: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<(String, String)>> {
        Box::pin(async move {
            // Keys compared byte by byte (COLLATE "C"), as the other stores order them.
            let rows: Vec<(String, String)> = sqlx::query_as(
                r#"SELECT key, value FROM unoflip_entries
                   WHERE kind = $1 AND key COLLATE "C" >= $2
                     AND left(key, length($2)) = $2
                   ORDER BY key COLLATE "C" LIMIT $3"#,
            )
            .bind(kind)
            .bind(prefix)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(rows)
        })
    }

    /// A session advisory lock, held by a connection of its own (not the pool's): the lock goes
    /// when the lease is dropped, or when the holding server dies and PostgreSQL closes its
    /// connection.
    fn lease<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<Box<dyn Lease>>> {
        Box::pin(async move {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(&self.url)
                .await
                .map_err(unavailable)?;
            let (held,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_lock($1)")
                .bind(lease_key(name))
                .fetch_one(&mut conn)
                .await
                .map_err(unavailable)?;
            if !held {
                let _ = conn.close().await;
                return Ok(None);
            }
            Ok(Some(Box::new(AdvisoryLease(conn)) as Box<dyn Lease>))
        })
    }

    fn unfinished(&self) -> StoreFuture<'_, Vec<(String, String)>> {
        Box::pin(async move {
            sqlx::query_as(
                "SELECT game, record FROM unoflip_games WHERE NOT finished ORDER BY created, game",
            )
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)
        })
    }
}

/// The advisory lock key of lease `name`: the first 8 bytes of its SHA-256, so that every server
/// computes the same key (and none collides with [`MIGRATION_LOCK`] but by a 2^-64 chance).
fn lease_key(name: &str) -> i64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("unoflip lease {name}").as_bytes());
    let mut key = [0u8; 8];
    key.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(key)
}

/// A held advisory lock and the connection that holds it.
struct AdvisoryLease(sqlx::PgConnection);

impl Lease for AdvisoryLease {
    fn check(&mut self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let probe = sqlx::query("SELECT 1").execute(&mut self.0);
            match tokio::time::timeout(std::time::Duration::from_secs(5), probe).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(unavailable(e)),
                Err(_) => Err(unavailable("the lease's connection did not answer in 5 s")),
            }
        })
    }
}

/// Forwards `unoflip_events` notifications. After a lost connection (notifications may have been
/// missed) it sends [`Change::Any`]. Ends when nobody listens any more.
async fn listen(pool: PgPool, changes: tokio::sync::broadcast::Sender<Change>) {
    loop {
        if changes.receiver_count() == 0 && changes.is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        let mut listener = match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(l) => l,
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
        };
        if listener.listen("unoflip_events").await.is_err() {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            continue;
        }
        let _ = changes.send(Change::Any);
        while let Ok(notification) = listener.recv().await {
            let _ = changes.send(Change::from_note(notification.payload()));
        }
    }
}
