//! Appends: a writer task takes the appends waiting and commits them in one transaction; a
//! conflict is told from the unique key on (game, version) by its SQLSTATE.

#[allow(clippy::wildcard_imports)]
use super::*;

/// SQLSTATE of a unique violation.
pub(super) const UNIQUE_VIOLATION: &str = "23505";
/// SQLSTATE of a deadlock PostgreSQL broke by aborting this transaction.
const DEADLOCK_DETECTED: &str = "40P01";
/// SQLSTATE of a serialization failure.
const SERIALIZATION_FAILURE: &str = "40001";

/// Events one transaction may append (the index within it takes 16 bits of the position).
pub(super) const MAX_APPEND: usize = 1 << 16;

/// Appends committed together in one statement at most (group commit).
pub(super) const MAX_BATCH: usize = 512;

/// The version `game` is at in the store.
pub(super) async fn current(pool: &PgPool, game: &str) -> Result<u64, StoreError> {
    let (max,): (Option<i64>,) =
        sqlx::query_as("SELECT MAX(version) FROM unoflip_events WHERE game = $1")
            .bind(game)
            .fetch_one(pool)
            .await
            .map_err(unavailable)?;
    Ok(u64::try_from(max.unwrap_or(0)).unwrap_or(0))
}

/// An append waiting for a writer: its events already encoded.
pub(super) struct Pending {
    pub(super) game: String,
    pub(super) expected: u64,
    pub(super) bodies: Vec<String>,
    pub(super) request: Option<String>,
}

/// Where an append's outcome goes.
pub(super) type Reply = oneshot::Sender<Result<u64, StoreError>>;

/// The writer: takes every append waiting (up to [`MAX_BATCH`], one per game) and commits them
/// in one statement, so that many games' moves share a transaction and its flush. The appends
/// that come while its commit is in flight wait in the queue and go in together as the next
/// batch. One writer, not several: several make as many smaller transactions, each with its
/// flush, and deliver fewer moves (docs/benchmarks.md).
pub(super) async fn writer(pool: PgPool, mut queue: mpsc::Receiver<(Pending, Reply)>) {
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
/// them (a unique violation, or a deadlock or serialization failure, aborts the whole
/// statement), each is tried again on its own, where a race is a conflict.
///
/// The rows go in sorted by game (and version): every server's batches take the unique keys of
/// the games they share in the same order, so two of them never wait for each other in a
/// circle (in arrival order, two servers' batches deadlocked, and PostgreSQL broke the tie only
/// after its deadlock timeout, a second).
pub(super) async fn commit_batch(pool: &PgPool, mut batch: Vec<(Pending, Reply)>) {
    batch.sort_by(|(a, _), (b, _)| a.game.cmp(&b.game));
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
        Err(e) if is_unique_violation(&e) || is_race(&e) => {
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

/// A deadlock or a serialization failure: another transaction raced this one.
fn is_race(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == DEADLOCK_DETECTED || c == SERIALIZATION_FAILURE)
}

pub(super) fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == UNIQUE_VIOLATION)
}

/// Appends one game's events in a statement of their own, with its NOTIFY.
pub(super) async fn append_one(pool: &PgPool, pending: &Pending) -> Result<u64, StoreError> {
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
        // A race with another server's append: the game's version decides, as for any conflict.
        Err(e) if is_unique_violation(&e) || is_race(&e) => true,
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
