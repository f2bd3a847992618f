//! Seating: joining, leaving and starting, the lobby record and the tokens that hold seats.

use super::*;
#[allow(clippy::wildcard_imports)]
use crate::service::reason::Reason;

impl Live {
    /// The seat `token` holds and whether its player left. On a shared store, a token this
    /// task does not know may have joined through another server: the record is read again.
    pub(super) async fn seat_of(
        &mut self,
        token: &TokenHash,
    ) -> Result<(Seat, bool), ServiceError> {
        if let Some(found) = self.lobby.seat_of(token) {
            return Ok(found);
        }
        if self.hooks.store.shared() {
            self.reload_record().await?;
            if let Some(found) = self.lobby.seat_of(token) {
                return Ok(found);
            }
        }
        Err(ServiceError::unauthenticated(format!(
            "this seat token holds no seat of {}",
            self.name
        )))
    }

    /// A seat token that may act: refused once its player left.
    pub(super) async fn acting_seat(&mut self, token: &TokenHash) -> Result<Seat, ServiceError> {
        match self.seat_of(token).await? {
            (seat, false) => Ok(seat),
            (seat, true) => Err(ServiceError::denied(
                Reason::SeatLeft,
                format!("seat {seat} was left; the server plays it and its token no longer acts"),
            )),
        }
    }

    /// Reads the record again (seats joined or left through another server).
    pub(super) async fn reload_record(&mut self) -> Result<(), ServiceError> {
        if let Some((text, _)) = self.hooks.store.record(&self.name).await?
            && let Ok(lobby) = Lobby::from_record(&text)
        {
            if self.lobby.seats != lobby.seats || self.lobby.expired != lobby.expired {
                self.lobby_changed();
            }
            self.lobby.seats = lobby.seats;
            self.lobby.expired = lobby.expired;
            self.lobby.rematch = self.lobby.rematch.take().or(lobby.rematch);
        }
        Ok(())
    }

    pub(super) async fn link_rematch(&mut self, name: String) -> Result<String, ServiceError> {
        if self.hooks.store.shared() {
            self.reload_record().await?;
        }
        if let Some(linked) = &self.lobby.rematch {
            return Ok(linked.clone());
        }
        self.lobby.rematch = Some(name.clone());
        if let Err(e) = self.save_record().await {
            self.lobby.rematch = None;
            return Err(e);
        }
        Ok(name)
    }

    /// Tells the streams that the lobby changed (they look at it again); the version stays.
    pub(super) fn lobby_changed(&self) {
        self.version.touch();
    }

    /// Stores the record; waiting rooms' streams look at the lobby again.
    pub(super) async fn save_record(&self) -> Result<(), ServiceError> {
        let over = self.status().is_final();
        let saved = self
            .hooks
            .store
            .save_game(&self.name, &self.lobby.to_record(), over)
            .await;
        self.lobby_changed();
        saved?;
        Ok(())
    }

    pub(super) async fn join(
        &mut self,
        seat: Option<usize>,
        name: &str,
        player: Option<Joining>,
    ) -> Result<(Seat, String, GameInfo), ServiceError> {
        if self.hooks.store.shared() {
            self.reload_record().await?;
            self.catch_up().await;
        }
        if let Some(joining) = &player
            && let Some(held) = self
                .lobby
                .seats
                .iter()
                .position(|s| s.player.as_deref() == Some(joining.player.as_str()))
        {
            // A player holds one seat per game: joining again (a retry, another device) finds
            // it, whatever the game's state.
            let token = players::seat_token(&joining.token, &self.name, held);
            return Ok((held, token, self.info()));
        }
        self.lobby_open()?;
        let seat = match seat {
            Some(s) => match self.lobby.seats.get(s) {
                None => {
                    return Err(ServiceError::invalid(
                        Reason::NoSuchSeat,
                        format!("seat {s} is not at this table"),
                    ));
                }
                Some(state) if state.taken => {
                    return Err(ServiceError::precondition(
                        Reason::SeatTaken,
                        format!("seat {s} is taken"),
                    ));
                }
                Some(_) => s,
            },
            None => self
                .lobby
                .seats
                .iter()
                .position(|s| !s.taken)
                .ok_or_else(|| {
                    ServiceError::precondition(Reason::NoOpenSeat, "every seat is taken")
                })?,
        };
        if self.lobby.rated && player.is_none() {
            return Err(ServiceError::precondition(
                Reason::RatedGameNeedsPlayer,
                "a rated game's seats are taken by registered players: join with `player` and its \
                 player token",
            ));
        }
        let token = match &player {
            Some(joining) => {
                // Listed first: a listing whose seat the record does not show is skipped.
                joining
                    .players
                    .note_seat(&joining.player, &self.name, seat)
                    .await?;
                players::seat_token(&joining.token, &self.name, seat)
            }
            None => new_token(),
        };
        let before = std::mem::replace(
            &mut self.lobby.seats[seat],
            SeatState {
                token_hash: Some(hash(&token)),
                name: name.to_owned(),
                server_played: false,
                taken: true,
                left: false,
                player: player.map(|j| j.player),
            },
        );
        if let Err(e) = self.save_record().await {
            self.lobby.seats[seat] = before;
            return Err(e);
        }
        Ok((seat, token, self.info()))
    }

    /// Refuses a lobby that is no longer open: started, or expired.
    pub(super) fn lobby_open(&self) -> Result<(), ServiceError> {
        match self.status() {
            Status::Waiting => Ok(()),
            Status::Expired => Err(ServiceError::precondition(
                Reason::LobbyExpired,
                "the lobby was never started and expired",
            )),
            _ => Err(ServiceError::precondition(
                Reason::GameAlreadyStarted,
                "the game has started; its seats are closed",
            )),
        }
    }

    pub(super) async fn start(&mut self) -> Result<GameInfo, ServiceError> {
        if self.hooks.store.shared() {
            self.reload_record().await?;
            self.catch_up().await;
        }
        self.lobby_open()?;
        if let Some(open) = self.lobby.seats.iter().position(|s| !s.taken) {
            return Err(ServiceError::precondition(
                Reason::SeatsOpen,
                format!("seat {open} is still open"),
            ));
        }
        let (_, events) = Game::new(&self.lobby.setup, &mut rand::rng())?;
        self.last_person = Instant::now();
        match self.commit(events, Mover::Server, None).await {
            Ok(_) => Ok(self.info()),
            // Another server sharing the store started it first: it is started.
            Err(ServiceError::Store(StoreError::Conflict { .. })) => {
                self.catch_up().await;
                Ok(self.info())
            }
            Err(e) => Err(e),
        }
    }

    pub(super) async fn leave(&mut self, token: &TokenHash) -> Result<GameInfo, ServiceError> {
        let seat = self.acting_seat(token).await?;
        if self.status().is_final() {
            return Err(ServiceError::precondition(
                Reason::GameOver,
                "the game is over; there is nothing to leave",
            ));
        }
        let before = self.lobby.seats[seat].clone();
        let state = &mut self.lobby.seats[seat];
        state.server_played = true;
        state.left = true;
        if let Err(e) = self.save_record().await {
            self.lobby.seats[seat] = before;
            return Err(e);
        }
        // The server plays the seat from now on, after the bot delay like any bot seat.
        self.bot_at = None;
        Ok(self.info())
    }
}
