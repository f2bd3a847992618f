//! A seat's moves and reads: submitting with request ids and expected versions, views, the
//! log for streams and exports.

use super::*;
#[allow(clippy::wildcard_imports)]
use crate::service::reason::Reason;

/// The request ids a game's task knows. One it does not know is new and needs no read: the
/// store is asked only for a retry whose answer the task forgot. (A request another server made
/// that this task has not read yet meets a conflict when it commits: the task reads that
/// server's moves and their ids, and asks again.)
#[derive(Default)]
pub(super) struct Requests {
    /// The last answers, [`REQUESTS_IN_MEMORY`] at most.
    pub(super) answers: HashMap<String, Submitted>,
    /// The other ids the store holds, by [`request_hash`]: answers forgotten to stay small, and
    /// ids read from the store (made before a restart, or on another server). One in 2^64 new
    /// ids has the hash of an old one, and costs a lookup that finds nothing.
    pub(super) stored: HashSet<u64>,
}

/// A request id's hash for [`Requests::stored`], keyed at random once per process so that a
/// client cannot choose ids that collide.
pub(super) fn request_hash(key: &str) -> u64 {
    static KEYS: std::sync::LazyLock<std::hash::RandomState> =
        std::sync::LazyLock::new(std::hash::RandomState::new);
    std::hash::BuildHasher::hash_one(&*KEYS, key)
}

impl Live {
    pub(super) async fn submit(
        &mut self,
        token: &TokenHash,
        action: Action,
        request_id: &str,
        expected_version: Option<u64>,
    ) -> Result<Submitted, ServiceError> {
        let seat = self.acting_seat(token).await?;
        let key = (!request_id.is_empty()).then(|| format!("{seat}/{request_id}"));
        let mut attempt = 0;
        loop {
            attempt += 1;
            if expected_version.is_some_and(|e| e > self.log.len()) {
                // The client saw events this server has not read yet (another server's).
                self.catch_up().await;
            }
            // Asked again after every catch-up: the events another server appended may be this
            // very request's, made there first.
            if let Some(key) = &key
                && let Some(first) = self.answered(key, seat).await?
            {
                return Ok(first);
            }
            let Some(game) = self.game.as_ref() else {
                return Err(match self.status() {
                    Status::Expired => ServiceError::precondition(
                        Reason::LobbyExpired,
                        "the lobby was never started and expired",
                    ),
                    _ => ServiceError::precondition(
                        Reason::GameNotStarted,
                        "the game has not started",
                    ),
                });
            };
            let version = self.log.len();
            if let Some(expected) = expected_version
                && expected != version
            {
                return Err(ServiceError::VersionMismatch {
                    expected,
                    actual: version,
                });
            }
            let decided = decide(game, seat, action, &mut rand::rng());
            let events = match decided {
                Ok(events) => events,
                // This server's copy may be behind another server's writes: catch up once and
                // decide again before refusing.
                Err(refusal) if attempt == 1 && self.hooks.store.shared() => {
                    if self.catch_up().await == 0 {
                        return Err(refusal.into());
                    }
                    continue;
                }
                Err(refusal) => return Err(refusal.into()),
            };
            match self
                .commit(events, Mover::Person(seat), key.as_deref())
                .await
            {
                Ok(answer) => {
                    if let Some(key) = key {
                        self.remember(key, answer.clone());
                    }
                    return Ok(answer);
                }
                Err(ServiceError::Store(StoreError::Conflict { .. }))
                    if attempt < CONFLICT_RETRIES =>
                {
                    self.catch_up().await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    pub(super) fn remember(&mut self, key: String, answer: Submitted) {
        let requests = self.requests.get_or_insert_default();
        if requests.answers.len() >= REQUESTS_IN_MEMORY {
            let Requests { answers, stored } = &mut **requests;
            stored.extend(answers.drain().map(|(key, _)| request_hash(&key)));
        }
        requests.answers.insert(key, answer);
    }

    /// Learns request ids the store holds.
    pub(super) fn learn(&mut self, stored: &[String]) {
        if !stored.is_empty() {
            let known = &mut self.requests.get_or_insert_default().stored;
            known.extend(stored.iter().map(|key| request_hash(key)));
        }
    }

    /// The first answer to a request already made: from memory, or rebuilt from the events the
    /// store keeps with it.
    pub(super) async fn answered(
        &mut self,
        key: &str,
        seat: Seat,
    ) -> Result<Option<Submitted>, ServiceError> {
        if let Some(first) = self.requests.as_ref().and_then(|r| r.answers.get(key)) {
            return Ok(Some(first.clone()));
        }
        if self.requests_unread {
            let stored = self.hooks.store.requests(&self.name, 0).await?;
            self.learn(&stored);
            self.requests_unread = false;
        }
        let hash = request_hash(key);
        if !self
            .requests
            .as_ref()
            .is_some_and(|r| r.stored.contains(&hash))
        {
            return Ok(None);
        }
        let Some((first, last)) = self.hooks.store.request(&self.name, key).await? else {
            return Ok(None);
        };
        let events = self.hooks.store.read(&self.name, 0).await?;
        let upto = usize::try_from(last)
            .unwrap_or(usize::MAX)
            .min(events.len());
        let from = usize::try_from(first.saturating_sub(1)).unwrap_or(usize::MAX);
        let (before, mine) = events[..upto].split_at(from.min(upto));
        let mut game = match before.first() {
            Some(_) => Game::replay(before).map_err(|e| ServiceError::Damaged {
                game: self.name.to_string(),
                error: e.to_string(),
            })?,
            None => match mine.first() {
                Some(created) => Game::replay([created]).map_err(|e| ServiceError::Damaged {
                    game: self.name.to_string(),
                    error: e.to_string(),
                })?,
                None => return Ok(None),
            },
        };
        let mut seen = Vec::new();
        for (i, event) in mine.iter().enumerate() {
            if !(before.is_empty() && i == 0) {
                game.apply(event);
            }
            seen.push((first + i as u64, project(&game, event, Viewer::Seat(seat))));
        }
        let answer = Submitted {
            version: last,
            events: seen,
        };
        self.remember(key.to_owned(), answer.clone());
        Ok(Some(answer))
    }

    pub(super) async fn view(
        &mut self,
        viewer: Viewer,
    ) -> Result<(View, Option<Instant>), ServiceError> {
        if self.game.is_none() && self.hooks.store.shared() {
            // Another server sharing the store may have started it.
            self.catch_up().await;
        }
        match &self.game {
            Some(game) => Ok((game.view(viewer), self.deadline)),
            None => Err(ServiceError::precondition(
                Reason::GameNotStarted,
                "the game has not started",
            )),
        }
    }

    /// What a stream at `after` needs to go on: only what it lacks is cloned (a stream reads
    /// once per change of the game, so this is the hot path of every subscriber).
    pub(super) fn read(&self, after: u64, with_base: bool) -> Tail {
        tail(&self.log, &self.lobby, self.deadline, after, with_base)
    }

    pub(super) async fn export(&self, admin: bool) -> Result<Vec<Event>, ServiceError> {
        if !self.status().is_final() && !admin {
            return Err(ServiceError::denied(
                Reason::GameNotFinished,
                "a game's log may be exported once it is over, or with the admin token",
            ));
        }
        if let Some(events) = self.log.since(0) {
            return Ok(events.to_vec());
        }
        // Events before the last snapshot are no longer in memory: the store has them all.
        let mut events = self.hooks.store.read(&self.name, 0).await?;
        events.truncate(usize::try_from(self.log.len()).unwrap_or(usize::MAX));
        Ok(events)
    }
}
