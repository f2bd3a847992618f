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

mod listening;
mod schema;
mod writer;

use listening::*;
use schema::*;
use writer::*;

use std::collections::{HashMap, HashSet};

use sqlx::postgres::{PgPool, PgPoolOptions};

use tokio::sync::{mpsc, oneshot};

use super::{
    Announcer, Change, Committed, Coordination, EntryKind, Events, Lease, Records, StoreError,
    StoreFuture, decode_log,
};

use crate::rules::{Event, encode};

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// Events in PostgreSQL.
pub struct PostgresStore {
    pool: PgPool,
    /// Appends waiting for a writer.
    appends: mpsc::Sender<(Pending, Reply)>,
    changes: Announcer,
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
        let changes = Announcer::default();
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

impl Events for PostgresStore {
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
            self.changes.appended(game, new_version);
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

    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    fn shared(&self) -> bool {
        true
    }
}

impl Records for PostgresStore {
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

    fn put_entry<'a>(
        &'a self,
        kind: EntryKind,
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
                .bind(kind.as_str())
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
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let done = sqlx::query(
                "DELETE FROM unoflip_entries WHERE kind = $1 AND key = $2 AND value = $3",
            )
            .bind(kind.as_str())
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(done.rows_affected() > 0)
        })
    }

    fn entry<'a>(&'a self, kind: EntryKind, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            let row: Option<(String,)> =
                sqlx::query_as("SELECT value FROM unoflip_entries WHERE kind = $1 AND key = $2")
                    .bind(kind.as_str())
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(unavailable)?;
            Ok(row.map(|(v,)| v))
        })
    }

    fn entries<'a>(
        &'a self,
        kind: EntryKind,
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
            .bind(kind.as_str())
            .bind(prefix)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)?;
            Ok(rows)
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

impl Coordination for PostgresStore {
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
}
