//! Committing: a move's events go to the store, then into the state, the log, the snapshots and
//! the ratings; and catching up with what other servers appended.

use super::run::answering_reads;
#[allow(clippy::wildcard_imports)]
use super::*;
use crate::service::accounts::rater::{Finish, Seated};

/// The shortest turn timer whose deadlines are kept in the game's record.
const KEPT_DEADLINE: Duration = Duration::from_secs(60);

impl Live {
    /// Appends `events` to the store (with the request that made them), then applies them.
    /// Returns them as the mover's seat sees them.
    pub(super) async fn commit(
        &mut self,
        events: Vec<Event>,
        mover: Mover,
        request: Option<&str>,
    ) -> Result<Submitted, ServiceError> {
        let began = std::time::Instant::now();
        let append = self
            .hooks
            .store
            .append(&self.name, self.log.len(), &events, request);
        answering_reads(
            &mut self.commands,
            &self.log,
            &self.lobby,
            self.deadline,
            append,
        )
        .await?;
        self.hooks
            .metrics
            .store_appends
            .observe(began.elapsed().as_secs_f64());
        if let Mover::Person(_) = mover {
            self.last_person = Instant::now();
        }
        let viewer = match mover {
            Mover::Person(seat) => Some(Viewer::Seat(seat)),
            Mover::Server => None,
        };
        let seen = self.apply(events, viewer).await;
        Ok(Submitted {
            version: self.log.len(),
            events: seen,
        })
    }

    /// Applies events that are in the store and publishes them to the streams. Returns them as
    /// `viewer` sees them.
    pub(super) async fn apply(
        &mut self,
        events: Vec<Event>,
        viewer: Option<Viewer>,
    ) -> Vec<(u64, SeenEvent)> {
        let before = self.log.len();
        let was_final = self.status().is_final();
        let mut seen = Vec::new();
        for event in events {
            let version = self.log.len() + 1;
            match self.game.as_mut() {
                Some(game) => game.apply(&event),
                None => self.game = Game::replay([&event]).ok(),
            }
            if matches!(event, Event::LobbyExpired) {
                self.lobby.expired = true;
            }
            if let Some(viewer) = viewer {
                let shown = match self.game.as_ref() {
                    Some(game) => Some(project(game, &event, viewer)),
                    None => project_lobby(&event),
                };
                seen.extend(shown.map(|e| (version, e)));
            }
            self.log.push(event);
        }
        let version = self.log.len();
        if version > before {
            self.hooks.appended.send_modify(|n| *n += 1);
        }
        self.version.send_replace(version);
        self.deadline = self.lobby.timer.map(|t| Instant::now() + t);
        self.bot_at = None;
        if let Some(timer) = self.lobby.timer
            && timer >= KEPT_DEADLINE
            && version > before
            && !self.status().is_final()
        {
            // A correspondence game: the turn's deadline is kept, so that a restart does not
            // give the seat a whole new turn (one more write per move, at most one a minute
            // per seat and a few per move).
            let ends =
                now_millis().saturating_add(u64::try_from(timer.as_millis()).unwrap_or(u64::MAX));
            self.lobby.turn_deadline = Some(Box::new((version, ends)));
            if let Err(e) = self.save_record().await {
                tracing::warn!(game = %self.name, error = %e, "could not keep the turn's deadline");
            }
        }
        if self.log.snapshot_due()
            && let Some(game) = self.game.as_ref()
        {
            // A snapshot is only a shortcut: if it cannot be written, the log still has it all.
            match self
                .hooks
                .store
                .save_snapshot(&self.name, version, &game.snapshot())
                .await
            {
                Ok(()) => {
                    let state = game.clone();
                    self.log.rebase(state);
                }
                Err(e) => tracing::warn!(game = %self.name, error = %e, "snapshot not stored"),
            }
        }
        if !was_final
            && self.status().is_final()
            && let Err(e) = self.save_record().await
        {
            // The events are durable; only the finished mark is not, so a restart would load
            // this game again, already over.
            tracing::warn!(game = %self.name, error = %e, "could not mark the game finished");
        }
        if !was_final && self.status() == Status::Finished && self.lobby.rated {
            self.rate().await;
        }
        seen
    }

    /// Reports a rated game's finish to the rater and waits until its ratings are stored.
    pub(super) async fn rate(&self) {
        let Some(game) = self.game.as_ref() else {
            return;
        };
        let seats = (0..self.lobby.seats.len())
            .map(|seat| match &self.lobby.seats[seat] {
                _ if self.lobby.bot_seats.contains(&seat) => {
                    Seated::Builtin(self.lobby.level_of(seat))
                }
                s => s.player.clone().map_or(Seated::Nobody, Seated::Player),
            })
            .collect();
        let (done, rated) = oneshot::channel();
        let finish = Finish {
            game: self.name.to_string(),
            state: game.clone(),
            seats,
            done,
        };
        if self.hooks.finishes.send(finish).is_ok() {
            let _ = rated.await;
        }
    }

    /// Reads and folds what other servers appended. Returns how many events came.
    pub(super) async fn catch_up(&mut self) -> usize {
        match self.hooks.store.read(&self.name, self.log.len()).await {
            Ok(events) if !events.is_empty() => {
                let n = events.len();
                // Another server's moves, with request ids this task never saw (read after
                // the moves, so none is missed).
                if !self.requests_unread {
                    match self.hooks.store.requests(&self.name, self.log.len()).await {
                        Ok(stored) => self.learn(&stored),
                        Err(_) => self.requests_unread = true,
                    }
                }
                self.apply(events, None).await;
                n
            }
            Ok(_) => 0,
            Err(e) => {
                tracing::warn!(game = %self.name, error = %e, "catching up with the store failed");
                0
            }
        }
    }
}
