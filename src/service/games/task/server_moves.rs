//! The server's own moves: bots (searching ones on a blocking thread), left seats and time-outs.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A bot's search under way: for which seat, from which version, and where its answer comes.
pub(super) struct Search {
    pub(super) seat: Seat,
    pub(super) version: u64,
    pub(super) answer: oneshot::Receiver<Option<Action>>,
}

impl Live {
    /// The server-played seat whose move the game waits for, if any.
    pub(super) fn server_seat_to_move(&self) -> Option<Seat> {
        let game = self.game.as_ref()?;
        let seat = game.turn();
        (!game.is_over() && self.lobby.seats.get(seat).is_some_and(|s| s.server_played))
            .then_some(seat)
    }

    /// One move of the server-played seat to move, chosen by its bot from that seat's view; a
    /// searching bot's move is only started here (see [`Live::start_search`]). Returns whether a
    /// move was made.
    pub(super) async fn server_step(&mut self) -> Result<bool, ServiceError> {
        let Some(seat) = self.server_seat_to_move() else {
            return Ok(false);
        };
        let Some(game) = self.game.as_ref() else {
            return Ok(false);
        };
        let level = self.lobby.level_of(seat);
        if level.searches() {
            self.start_search(seat);
            return Ok(false);
        }
        let view = game.view(Viewer::Seat(seat));
        let Some(action) = bots::choose(level, &view, &mut rand::rng()) else {
            return Ok(false);
        };
        self.server_move(seat, action).await
    }

    /// Starts a searching bot's move for `seat` on a blocking thread (searches take their time,
    /// [`bots::Think`]); [`Live::on_search`] plays its answer.
    pub(super) fn start_search(&mut self, seat: Seat) {
        let Some(game) = self.game.as_ref() else {
            return;
        };
        let view = game.view(Viewer::Seat(seat));
        let level = self.lobby.level_of(seat);
        let think = bots::Think::for_time(match self.lobby.bot_think_ms {
            0 => self.hooks.lifecycle.bot_think,
            ms => Duration::from_millis(u64::from(ms)).min(bots::MAX_THINK),
        });
        let mut rng = StdRng::from_rng(&mut rand::rng());
        let (reply, answer) = oneshot::channel();
        tokio::task::spawn_blocking(move || {
            // Nobody waits any more when the game left memory meanwhile.
            let _ = reply.send(bots::choose_thinking(level, &view, think, &mut rng));
        });
        self.search = Some(Box::new(Search {
            seat,
            version: self.log.len(),
            answer,
        }));
    }

    /// A bot's search answered: its move is played if the game is where the search started
    /// (otherwise the next settle thinks again).
    pub(super) async fn on_search(
        &mut self,
        answer: Result<Option<Action>, oneshot::error::RecvError>,
    ) {
        let Some(search) = self.search.take() else {
            return;
        };
        if search.version != self.log.len() || self.server_seat_to_move() != Some(search.seat) {
            return;
        }
        let action = match answer {
            Ok(action) => action,
            // The search panicked (a bug): the heuristic plays this move rather than nobody.
            Err(_) => {
                tracing::error!(game = %self.name, "the expert bot failed; the heuristic moves");
                let Some(game) = self.game.as_ref() else {
                    return;
                };
                let view = game.view(Viewer::Seat(search.seat));
                bots::choose(bots::Level::Heuristic, &view, &mut rand::rng())
            }
        };
        let Some(action) = action else {
            return;
        };
        if let Err(e) = self.server_move(search.seat, action).await {
            tracing::warn!(game = %self.name, error = %e, "server move failed");
            self.bot_at = Some(Instant::now() + Duration::from_millis(100));
        }
    }

    /// Commits `action` of the server-played `seat`. Returns whether a move was made.
    pub(super) async fn server_move(
        &mut self,
        seat: Seat,
        action: Action,
    ) -> Result<bool, ServiceError> {
        let Some(game) = self.game.as_ref() else {
            return Ok(false);
        };
        let events = decide(game, seat, action, &mut rand::rng())?;
        match self.commit(events, Mover::Server, None).await {
            Ok(_) => {
                self.hooks.metrics.server_moves.inc();
                Ok(true)
            }
            // Another server moved first; catch up and let the next step decide.
            Err(ServiceError::Store(StoreError::Conflict { .. })) => {
                self.catch_up().await;
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }

    /// Acts for the seat whose timer ran out.
    pub(super) async fn time_out(&mut self) -> Result<(), ServiceError> {
        let Some(game) = self.game.as_ref() else {
            return Ok(());
        };
        let seat = game.turn();
        let Some(action) = crate::rules::timeout_move(game) else {
            return Ok(());
        };
        let events = decide(game, seat, action, &mut rand::rng())?;
        self.commit(events, Mover::Server, None).await?;
        self.hooks.metrics.time_outs.inc();
        // A timed-out draw keeps the card drawn in the same breath.
        if let Some(game) = self.game.as_ref()
            && game.turn() == seat
            && matches!(game.phase(), Phase::PlayDrawn { .. })
        {
            let events = decide(game, seat, Action::Keep, &mut rand::rng())?;
            self.commit(events, Mover::Server, None).await?;
        }
        Ok(())
    }
}
