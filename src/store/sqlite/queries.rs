//! Reads: a game's log and request ids, the global order, records, cursors and entries, each
//! seeing the keys still in the tail.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) fn serve_read(conn: &Connection, tail: &Tail, command: Command) {
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
pub(super) fn read(
    conn: &Connection,
    tail: &Tail,
    game: &str,
    after: u64,
) -> Result<Vec<Event>, StoreError> {
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
pub(super) fn in_tail<T>(
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
pub(super) fn read_all(
    conn: &Connection,
    after: u64,
    limit: usize,
) -> Result<Vec<Committed>, StoreError> {
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

pub(super) fn unfinished(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
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

pub(super) fn record(conn: &Connection, game: &str) -> Result<Option<(String, bool)>, StoreError> {
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
pub(super) fn entries(
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
pub(super) fn find_request(
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
pub(super) fn game_requests(
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
