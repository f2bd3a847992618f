//! The schema, created at start, and its migrations; one server migrates at a time.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) const SCHEMA: [&str; 5] = [
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
pub(super) const ADD_POSITION: [&str; 2] = [
    "ALTER TABLE unoflip_events ADD COLUMN IF NOT EXISTS pos BIGINT",
    "UPDATE unoflip_events SET pos = position WHERE pos IS NULL",
];

pub(super) const POSITION_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS unoflip_events_pos ON unoflip_events (pos)";

/// The request that produced each event (durable `request_id`s), for a table made before it
/// was kept. Run only when missing, like the position.
const ADD_REQUEST: &str = "ALTER TABLE unoflip_events ADD COLUMN IF NOT EXISTS request TEXT";

/// Earlier versions indexed the request ids, which cost every append a page of the index. A
/// game's task now reads its request ids once (see `Events::requests`) and looks one up
/// only when it is a retry, through the `(game, version)` key: the index goes when a server
/// starts. (A server of an earlier version makes it again when it starts.)
pub(super) const DROP_REQUEST_INDEX: &str = "DROP INDEX IF EXISTS unoflip_events_request";

/// Serializes schema changes between servers starting together.
pub(super) const MIGRATION_LOCK: i64 = 0x0075_6e6f_666c_6970;

/// Creates or upgrades the schema, under an advisory lock.
pub(super) async fn migrate(pool: &PgPool) -> Result<(), sqlx::Error> {
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
