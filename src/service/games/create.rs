//! Creating games: options checked against the server's limits and the rules, a place reserved
//! under `--max-games` and `--max-games-per-client`, and rematches.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The longest turn timer: 7 days, for correspondence play.
pub const MAX_TURN_TIMER: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a game is created with (the domain side of `GameOptions`).
#[derive(Clone, Debug)]
pub struct NewGame {
    /// The ruleset.
    pub ruleset: Ruleset,
    /// Seats at the table.
    pub seats: usize,
    /// Scoring, target, house rules.
    pub options: Options,
    /// The first dealer, if fixed.
    pub first_dealer: Option<Seat>,
    /// The deck order, if fixed (admin only).
    pub deck_order: Option<Vec<CardId>>,
    /// Seats the server plays.
    pub bot_seats: Vec<Seat>,
    /// The level of its bots.
    pub bot_level: Level,
    /// How long its searching bots think per move (`None`: the server's default).
    pub bot_think: Option<Duration>,
    /// The turn timer.
    pub turn_timer: Option<Duration>,
    /// Finishing updates the players' ratings.
    pub rated: bool,
    /// Bot seats that play at another level than `bot_level`.
    pub seat_levels: Vec<(Seat, Level)>,
}

/// A place held in the registry's limits for a game being created; given back when dropped
/// unless the game filled it.
pub(super) struct Reservation<'a> {
    pub(super) registry: &'a Registry,
    pub(super) client: Option<IpAddr>,
    pub(super) filled: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.filled {
            return;
        }
        if let Ok(mut table) = self.registry.table.lock() {
            table.reserved = table.reserved.saturating_sub(1);
            if let Some(ip) = self.client {
                table.release_client(ip);
            }
        }
    }
}

impl Registry {
    /// Holds a place for a game about to be created, within `max_games` and the client's
    /// `max_games_per_client`: creations at once each count, so they cannot pass a limit
    /// together. The place is given back if the creation fails or is cancelled.
    pub(super) fn reserve(&self, client: Option<IpAddr>) -> Result<Reservation<'_>, ServiceError> {
        let mut table = self.table()?;
        if table.by_name.len() + table.reserved >= self.config.max_games {
            return Err(ServiceError::exhausted(
                Reason::TooManyGames,
                "the server holds as many live games as it may; try again later",
            ));
        }
        if let Some(ip) = client {
            let count = table.per_client.entry(ip).or_default();
            if *count >= self.config.max_games_per_client {
                let limit = self.config.max_games_per_client;
                if *count == 0 {
                    table.per_client.remove(&ip);
                }
                return Err(ServiceError::exhausted(
                    Reason::ClientGameLimit,
                    format!(
                        "this address has {limit} live games, as many as one client may create"
                    ),
                ));
            }
            *count += 1;
        }
        table.reserved += 1;
        Ok(Reservation {
            registry: self,
            client,
            filled: false,
        })
    }

    /// Creates a game with open seats (bot seats taken); a table of bots only starts at once.
    /// A fixed deck needs `admin`.
    pub async fn create(
        self: &Arc<Self>,
        new: NewGame,
        admin: bool,
        client: Option<IpAddr>,
    ) -> Result<GameInfo, ServiceError> {
        let seats = new.seats;
        if new.deck_order.is_some() {
            if new.rated {
                return Err(ServiceError::invalid(
                    Reason::RatedGameFixedDeck,
                    "a rated game is dealt from a shuffled deck: no deck_order",
                ));
            }
            if !admin {
                return Err(ServiceError::denied(
                    Reason::AdminTokenRequired,
                    "a fixed deck order needs the admin token",
                ));
            }
        }
        let setup = Setup {
            ruleset: new.ruleset,
            seats,
            options: new.options,
            first_dealer: new.first_dealer,
            deck: new.deck_order,
        };
        setup.check()?;
        if let Some(timer) = new.turn_timer
            && timer > MAX_TURN_TIMER
        {
            return Err(ServiceError::invalid(
                Reason::TurnTimerTooLong,
                format!(
                    "turn_timer_seconds: {} is more than {} (7 days)",
                    timer.as_secs(),
                    MAX_TURN_TIMER.as_secs()
                ),
            ));
        }
        let mut bot_seats: Vec<Seat> = Vec::new();
        for &seat in &new.bot_seats {
            if seat >= seats {
                return Err(ServiceError::invalid(
                    Reason::BotSeatOutOfRange,
                    format!("bot_seats: {seat} is not a seat of a {seats}-seat game"),
                ));
            }
            if bot_seats.contains(&seat) {
                return Err(ServiceError::invalid(
                    Reason::BotSeatDuplicate,
                    format!("bot_seats: seat {seat} is named twice"),
                ));
            }
            bot_seats.push(seat);
        }
        let mut reservation = self.reserve(client)?;
        let name = format!("games/{}", &new_token()[..16]);
        let invite_code = self.hooks.players.new_code(&name).await?;
        let lobby = Lobby {
            setup,
            timer: new.turn_timer,
            bot_level: new.bot_level,
            bot_think_ms: new
                .bot_think
                .map_or(0, |t| u32::try_from(t.as_millis()).unwrap_or(u32::MAX)),
            seats: (0..seats)
                .map(|seat| {
                    let bot = bot_seats.contains(&seat);
                    SeatState {
                        token_hash: None,
                        name: if bot { "bot".into() } else { String::new() },
                        server_played: bot,
                        taken: bot,
                        left: false,
                        player: None,
                    }
                })
                .collect(),
            bot_seats,
            created_unix: now_unix(),
            expired: false,
            rematch: None,
            rated: new.rated,
            seat_levels: new.seat_levels,
            invite_code: Some(invite_code),
            turn_deadline: None,
        };
        let record = lobby.to_record();
        self.hooks.store.save_game(&name, &record, false).await?;
        let all_bots = lobby.all_bots();
        let game = self
            .install(
                &name,
                &record,
                EventLog::default(),
                Some(&mut reservation),
                &mut None,
            )
            .map_err(|error| error.refusal(&name))?;
        tracing::info!(game = %name, seats, "game created");
        if all_bots {
            // A table of server-played seats has nobody to start it: it starts at once. The
            // description is asked after, so it shows what the bots played meanwhile (all of a
            // game with no bot delay).
            game.ask(|reply| task::Command::Start { reply }).await?;
        }
        game.ask(|reply| task::Command::Describe { reply }).await
    }

    /// The rematch of finished game `name`, asked with a seat token of it: created by the first
    /// to ask (on this server, one at a time), the same game for the others.
    pub async fn rematch(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<GameInfo, ServiceError> {
        self.seat_of(name, token).await?;
        let _one_at_a_time = self.rematches.lock().await;
        let old = self.get(name).await?;
        let info = old.ask(|reply| task::Command::Describe { reply }).await?;
        if !matches!(info.status, Status::Finished | Status::Abandoned) {
            return Err(ServiceError::precondition(
                Reason::GameNotFinished,
                "a rematch follows a finished game",
            ));
        }
        if let Some(next) = &info.lobby.rematch {
            return self.describe(next).await;
        }
        let lobby = &info.lobby;
        let new = NewGame {
            ruleset: lobby.setup.ruleset,
            seats: lobby.setup.seats,
            options: lobby.setup.options,
            first_dealer: None,
            deck_order: None,
            bot_seats: lobby.bot_seats.clone(),
            bot_level: lobby.bot_level,
            bot_think: (lobby.bot_think_ms > 0)
                .then(|| Duration::from_millis(u64::from(lobby.bot_think_ms))),
            turn_timer: lobby.timer,
            rated: lobby.rated,
            seat_levels: lobby.seat_levels.clone(),
        };
        let created = self.create(new, false, client).await?;
        let linked = old
            .ask(|reply| task::Command::LinkRematch {
                name: created.name.clone(),
                reply,
            })
            .await?;
        if linked == created.name {
            Ok(created)
        } else {
            // Another server linked its own first: that one is the rematch (this lobby expires).
            self.describe(&linked).await
        }
    }

    /// A game's description.
    pub async fn describe(self: &Arc<Self>, name: &str) -> Result<GameInfo, ServiceError> {
        let game = self.get(name).await?;
        game.ask(|reply| task::Command::Describe { reply }).await
    }
}
