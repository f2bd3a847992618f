//! Delayed keying: events go in by position at once, their keys by game later, many at once; the
//! writer keeps the keys not yet written in memory.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Events whose keys the file may lack, at most (the tail). Keyed one append at a time, a
/// thousand games' appends write a thousand pages of the key to the WAL and the file (one page
/// per game, a few bytes changed in each), and that was most of an append's cost. Past this
/// many, the keys of the game longest in the tail go to `event_keys` all at once. The longer the
/// tail, the more keys each game brings to its pages: with a thousand games under way, 32,768
/// brought about 33 and wrote as many pages of `event_keys` to the WAL as of `events`; at this
/// length a game has usually ended before it is keyed, and its keys go in together. The tail
/// costs the writer 16 to 32 bytes of memory per event (a few MiB at most), and a server reads
/// it back from `events` when it starts.
pub(super) const KEY_LAG: usize = 131_072;

/// The writer's memory of the file's tail: the events whose keys are not in `event_keys` yet,
/// all after position `event_keys_upto`. A read by game takes the keyed events from the file
/// and the tail's by their positions.
#[derive(Default)]
pub(super) struct Tail {
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
    pub(super) fn sync(&mut self, conn: &Connection) -> rusqlite::Result<()> {
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
    pub(super) fn add(&mut self, game: &str, keys: &[(i64, i64)]) {
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
    pub(super) fn of(&self, game: &str) -> &[(i64, i64)] {
        self.games.get(game).map_or(&[], Vec::as_slice)
    }

    /// While the tail holds more than [`KEY_LAG`] events, writes the keys of the game longest
    /// in it into `event_keys`, within the batch's transaction: under a steady load, each batch
    /// keys about as many events as it appended, a game's at a time.
    pub(super) fn key_if_long(&mut self, conn: &Connection) -> rusqlite::Result<()> {
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
    pub(super) fn forget(&mut self) {
        self.seen = None;
    }
}
