//! The writer thread: it owns the connection, takes every request waiting and commits the appends
//! among them in one transaction (group commit), answering each once it is durable.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The WAL's length, in pages, that makes a commit copy it into the database (a checkpoint),
/// SQLite's default. The commit that checkpoints answers its moves only once the pages are
/// copied and the file is synced, so a longer WAL holds up that batch for longer
/// (docs/benchmarks.md has the measurements).
pub(super) const CHECKPOINT_PAGES: i64 = 1_000;

/// Requests taken together in one transaction at most.
pub(super) const MAX_BATCH: usize = 4096;

/// A batch this large means moves come faster than the writer commits them alone: before its
/// next commit, the writer then lets requests gather for [`GATHER`], so that one commit (and its
/// fsync) serves several times more moves. Under about 6,000 moves a second the gathered batch
/// stays smaller than this and the writer goes back to committing at once, so a lightly loaded
/// server pays no wait.
pub(super) const BUSY_BATCH: usize = 16;

/// How long a busy writer lets requests gather before a commit. It sleeps rather than waiting on
/// the channel with a timeout, which would wake it at every request that arrived meanwhile.
pub(super) const GATHER: std::time::Duration = std::time::Duration::from_millis(2);

/// Answers a write of the batch with its own result, or with the commit's error if the batch
/// failed to commit.
pub(super) fn after_commit<T: Send + 'static>(
    reply: Reply<T>,
    result: Result<T, StoreError>,
) -> Finish {
    Box::new(move |failed| {
        let _ = reply.send(match (failed, result) {
            (Some(e), Ok(_)) => Err(e.clone()),
            (_, r) => r,
        });
    })
}

/// The writer thread: batches requests and commits their writes together.
pub(super) fn writer(mut conn: Connection, rx: mpsc::Receiver<Command>) {
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
pub(super) fn begin<'c>(
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
pub(super) fn serve_reads(conn: &mut Connection, tail: &mut Tail, reads: Vec<Command>) {
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

/// Appends within the batch's transaction, which holds the file's write lock, so the version
/// [`stored_version`] finds is the file's (the tail is read again when another connection has
/// written, see [`Tail::sync`]). Then every event goes in with one statement, which SQLite
/// applies whole or not at all: a refused append leaves nothing.
pub(super) fn append(
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
pub(super) fn stored_version(
    conn: &Connection,
    tail: &Tail,
    game: &str,
) -> Result<u64, StoreError> {
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
pub(super) const CHUNK: usize = 32;

/// Inserts events `expected + 1`.. of `game` with one statement, and adds their `(version,
/// position)` to `keys`. The transaction holds the file's write lock and SQLite numbers the rows
/// one after another in the order of `VALUES` (each the largest position + 1), so the last row's
/// position says every row's.
pub(super) fn insert_events(
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

pub(super) fn fail_all(batch: Vec<Command>, error: &StoreError) {
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
