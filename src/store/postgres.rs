//! The PostgreSQL event store, for several server processes sharing one store.
//!
//! Events are keyed on (game, version): two writers cannot both append event N, and the loser's
//! conflict is recognised by the unique-violation SQLSTATE (23505), never by the error's text. The
//! schema is created at start. Every append also sends a NOTIFY on `unoflip_events` with the new
//! version and the game's name (`"12 games/x"`): only a wake-up for other servers, which read the
//! events themselves.

use sqlx::postgres::{PgPool, PgPoolOptions};

use super::{EventStore, StoreError, StoreFuture};
use crate::rules::{Event, decode, encode};

/// SQLSTATE of a unique violation.
const UNIQUE_VIOLATION: &str = "23505";

const SCHEMA: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS unoflip_events (
        position BIGSERIAL PRIMARY KEY,
        game TEXT NOT NULL,
        version BIGINT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (game, version)
    )",
    "CREATE TABLE IF NOT EXISTS unoflip_games (
        game TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        finished BOOLEAN NOT NULL,
        created TIMESTAMPTZ NOT NULL DEFAULT now()
    )",
];

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// Events in PostgreSQL.
pub struct PostgresStore {
    pool: PgPool,
    changes: tokio::sync::broadcast::Sender<String>,
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
        for statement in SCHEMA {
            sqlx::query(statement)
                .execute(&pool)
                .await
                .map_err(unavailable)?;
        }
        let (changes, _) = tokio::sync::broadcast::channel(4096);
        tokio::spawn(listen(pool.clone(), changes.clone()));
        Ok(PostgresStore { pool, changes })
    }

    async fn current(&self, game: &str) -> Result<u64, StoreError> {
        let (max,): (Option<i64>,) =
            sqlx::query_as("SELECT MAX(version) FROM unoflip_events WHERE game = $1")
                .bind(game)
                .fetch_one(&self.pool)
                .await
                .map_err(unavailable)?;
        Ok(u64::try_from(max.unwrap_or(0)).unwrap_or(0))
    }
}

impl EventStore for PostgresStore {
    fn append<'a>(
        &'a self,
        game: &'a str,
        expected: u64,
        events: &'a [Event],
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let versions: Vec<i64> = (1..=events.len() as u64)
                .map(|i| i64::try_from(expected + i).unwrap_or(i64::MAX))
                .collect();
            let bodies: Vec<String> = events.iter().map(encode).collect();
            let expected_sql = i64::try_from(expected).map_err(unavailable)?;
            // One statement: it inserts only if the game is at the expected version, and the
            // unique key on (game, version) stops a writer racing for the same number.
            let inserted = sqlx::query(
                "INSERT INTO unoflip_events (game, version, body)
                 SELECT $1, v, b FROM UNNEST($2::BIGINT[], $3::TEXT[]) AS t (v, b)
                 WHERE (SELECT COALESCE(MAX(version), 0) FROM unoflip_events WHERE game = $1) = $4",
            )
            .bind(game)
            .bind(&versions)
            .bind(&bodies)
            .bind(expected_sql)
            .execute(&self.pool)
            .await;
            let conflict = match inserted {
                Ok(done) => done.rows_affected() != events.len() as u64,
                Err(e)
                    if e.as_database_error()
                        .and_then(|d| d.code())
                        .is_some_and(|c| c == UNIQUE_VIOLATION) =>
                {
                    true
                }
                Err(e) => return Err(unavailable(e)),
            };
            if conflict {
                return Err(StoreError::Conflict {
                    game: game.to_owned(),
                    expected,
                    actual: self.current(game).await?,
                });
            }
            let new_version = expected + events.len() as u64;
            sqlx::query("SELECT pg_notify('unoflip_events', $1)")
                .bind(format!("{new_version} {game}"))
                .execute(&self.pool)
                .await
                .map_err(unavailable)?;
            Ok(new_version)
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
            let mut events = Vec::with_capacity(rows.len());
            for (next, (version, body)) in (after + 1..).zip(rows) {
                let version = u64::try_from(version).unwrap_or(0);
                if version != next {
                    return Err(StoreError::Gap {
                        game: game.to_owned(),
                        expected: next,
                        found: version,
                    });
                }
                events.push(decode(&body).map_err(|error| StoreError::Corrupt {
                    game: game.to_owned(),
                    version,
                    error,
                })?);
            }
            Ok(events)
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

    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        Some(self.changes.subscribe())
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

/// Forwards `unoflip_events` notifications. After a lost connection (notifications may have been
/// missed) it sends `"*"`. Ends when nobody listens any more.
async fn listen(pool: PgPool, changes: tokio::sync::broadcast::Sender<String>) {
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
        let _ = changes.send("*".to_owned());
        while let Ok(notification) = listener.recv().await {
            let _ = changes.send(notification.payload().to_owned());
        }
    }
}
