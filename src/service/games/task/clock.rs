//! The clock: turn deadlines, the server's bot delay, lobby expiry, abandonment and the keep
//! time of a finished game.

#[allow(clippy::wildcard_imports)]
use super::*;

/// When a lobby created at `lobby.created_unix` expires, as an instant on this machine's clock.
pub(super) fn lobby_ends(lobby: &Lobby, ttl: Duration, now: Instant) -> Instant {
    let age = crate::service::games::lobby::now_unix().saturating_sub(lobby.created_unix);
    now + ttl.saturating_sub(Duration::from_secs(age))
}

impl Live {
    /// How long the game may go on with no move but the server's before it is given up:
    /// `--abandon-after`, or, with a turn timer, a round of time-outs of every seat and one more
    /// (a correspondence game waits days for a move; its time-outs are what makes it end).
    pub(super) fn abandon_after(&self) -> Duration {
        let per_round = self.lobby.timer.map_or(Duration::ZERO, |t| {
            t.saturating_mul(u32::try_from(self.lobby.seats.len() + 1).unwrap_or(u32::MAX))
        });
        self.hooks.lifecycle.abandon_after.max(per_round)
    }

    /// Whether the task is done: a game over (or a lobby expired) past its keep time.
    pub(super) fn gone(&self) -> bool {
        self.unload_at.is_some_and(|at| at <= Instant::now())
    }

    /// The next time something is due.
    pub(super) fn next_wake(&self) -> Option<Instant> {
        let lobby_end = (self.status() == Status::Waiting).then_some(self.lobby_ends);
        let abandon = (self.status() == Status::Playing && !self.lobby.all_bots())
            .then(|| self.last_person + self.abandon_after());
        [
            self.deadline,
            self.bot_at,
            lobby_end,
            abandon,
            self.unload_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// After anything happened: plays the server's seats that are due, schedules the next, and
    /// sets the keep time of a game that is over.
    pub(super) async fn settle(&mut self) {
        let open = self.status().open(&self.lobby);
        if open != self.listed_open
            && let Some(registry) = self.hooks.registry.upgrade()
        {
            registry.set_open(self.seq, open);
            self.listed_open = open;
        }
        if self.search.is_some() {
            // A bot is thinking: its answer is the next server move.
            self.bot_at = None;
        } else if self.server_seat_to_move().is_none() {
            self.bot_at = None;
        } else if self.hooks.lifecycle.bot_delay.is_zero() {
            for _ in 0..SERVER_MOVES_PER_TURN {
                match self.server_step().await {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        tracing::warn!(game = %self.name, error = %e, "server move failed");
                        // Try again shortly rather than spin.
                        self.bot_at = Some(Instant::now() + Duration::from_millis(100));
                        return;
                    }
                }
            }
            // Still more to play: let waiting commands in first, then go on at once (unless a
            // bot is thinking, which wakes the task when it answers).
            self.bot_at = self
                .server_seat_to_move()
                .filter(|_| self.search.is_none())
                .map(|_| Instant::now());
        } else if self.bot_at.is_none() {
            self.bot_at = Some(Instant::now() + self.hooks.lifecycle.bot_delay);
        }
        if self.status().is_final() {
            self.deadline = None;
            self.bot_at = None;
            if self.unload_at.is_none() {
                self.unload_at = Some(Instant::now() + self.hooks.lifecycle.keep_finished);
                if let Some(code) = &self.lobby.invite_code
                    && let Err(e) = self.hooks.players.forget_code(code, &self.name).await
                {
                    tracing::warn!(game = %self.name, error = %e, "could not free the invite code");
                }
            }
        }
    }

    /// Something on the clock is due.
    pub(super) async fn on_clock(&mut self) {
        let now = Instant::now();
        if self.game.is_none() {
            if self.status() == Status::Waiting && self.lobby_ends <= now {
                self.expire().await;
            }
            return;
        }
        if self.status() != Status::Playing {
            return;
        }
        if !self.lobby.all_bots() && self.last_person + self.abandon_after() <= now {
            if let Err(e) = self
                .commit(vec![Event::MatchAbandoned], Mover::Server, None)
                .await
            {
                tracing::warn!(game = %self.name, error = %e, "could not abandon the game");
                self.last_person = now;
            } else {
                tracing::info!(game = %self.name, "game abandoned: nobody but the server moved");
            }
            return;
        }
        if self.bot_at.is_some_and(|at| at <= now) {
            self.bot_at = None;
            if let Err(e) = self.server_step().await {
                tracing::warn!(game = %self.name, error = %e, "server move failed");
            }
            return;
        }
        if self.deadline.is_some_and(|at| at <= now)
            && let Err(e) = self.time_out().await
        {
            tracing::warn!(game = %self.name, error = %e, "time-out move failed");
            self.deadline = Some(now + Duration::from_secs(1));
        }
    }

    /// The lobby expired: a `LobbyExpired` event becomes its log's first (and last) event, so
    /// its streams and the firehose say so, and the record is marked. Appended at version 0, it
    /// loses the race against a start through another server sharing the store; the game then
    /// goes on.
    pub(super) async fn expire(&mut self) {
        match self
            .commit(vec![Event::LobbyExpired], Mover::Server, None)
            .await
        {
            Ok(_) => tracing::info!(game = %self.name, "lobby expired"),
            Err(ServiceError::Store(StoreError::Conflict { .. })) => {
                self.catch_up().await;
            }
            Err(e) => {
                tracing::warn!(game = %self.name, error = %e, "could not expire the lobby");
                self.lobby_ends = Instant::now() + Duration::from_secs(1);
            }
        }
    }
}
