//! What the edge asks of a game, handed to its task: seats, moves, views, exports and replays.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A seat a player took, as `ListMyGames` shows it.
#[derive(Clone, Debug)]
pub struct PlayerGame {
    /// The game.
    pub info: GameInfo,
    /// The seat.
    pub seat: Seat,
    /// The seat's token.
    pub seat_token: String,
    /// The player must act in it now.
    pub your_turn: bool,
    /// When the turn waited for runs out, while the game is played with a turn timer.
    pub deadline: Option<tokio::time::Instant>,
}

impl Registry {
    /// Takes a seat (the first open one when `seat` is `None`) and returns its token. `name`
    /// is the game's name or its invite code. With `player` (authenticated), the seat is that
    /// player's, its token derived from the player's seat key; a player who already holds a
    /// seat of the game gets that seat again.
    pub async fn join(
        self: &Arc<Self>,
        name: &str,
        seat: Option<Seat>,
        display_name: &str,
        player: Option<Caller>,
    ) -> Result<(Seat, String, GameInfo), ServiceError> {
        let name = self.resolve(name).await?;
        let name = name.as_str();
        let game = self.get(name).await?;
        let mut display_name: String = display_name.chars().take(64).collect();
        let joining = match player {
            Some(caller) => {
                if display_name.trim().is_empty() {
                    display_name = caller.player.display_name;
                }
                Some(task::Joining {
                    player: caller.player.name,
                    token: caller.seat_key,
                    players: self.hooks.players.clone(),
                })
            }
            None => None,
        };
        let joined = game
            .ask(|reply| task::Command::Join {
                seat,
                name: display_name,
                player: joining,
                reply,
            })
            .await?;
        self.note_token(hash(&joined.1), name);
        Ok(joined)
    }

    /// The game `name` names: itself, or the game of an invite code while its lobby is open.
    pub(super) async fn resolve(self: &Arc<Self>, name: &str) -> Result<String, ServiceError> {
        if name.starts_with("games/") {
            return Ok(name.to_owned());
        }
        let Some(code) = crate::service::accounts::players::as_code(name) else {
            // Neither a name nor a code: refused as a malformed name.
            return game_id(name).map(|_| name.to_owned());
        };
        let Some(game) = self.hooks.players.code(&code).await? else {
            return Err(ServiceError::not_found(
                Reason::InviteCodeUnknown,
                format!("no game has the invite code {code} (a code ends with its game)"),
            ));
        };
        let info = self.describe(&game).await?;
        if info.status != Status::Waiting {
            return Err(ServiceError::precondition(
                Reason::InviteCodeExpired,
                format!("the invite code {code} expired: its game's lobby is no longer open"),
            ));
        }
        Ok(game)
    }

    /// Up to `limit` of the seats the `caller` took, with each seat's token: those where the
    /// player must act first (the deadline soonest first), then the others newest first.
    pub async fn player_games(
        self: &Arc<Self>,
        caller: &Caller,
        limit: u32,
    ) -> Result<Vec<PlayerGame>, ServiceError> {
        let found = &caller.player;
        let token = caller.seat_key.as_str();
        let limit = if limit == 0 { 50 } else { limit.min(100) } as usize;
        let mut out = Vec::new();
        for held in self.hooks.players.games(&found.name, limit).await? {
            let Ok(info) = self.describe(&held.game).await else {
                continue;
            };
            let theirs = info
                .lobby
                .seats
                .get(held.seat)
                .is_some_and(|s| s.player.as_deref() == Some(found.name.as_str()));
            if theirs {
                let seat_token =
                    crate::service::accounts::players::seat_token(token, &held.game, held.seat);
                self.note_token(hash(&seat_token), &held.game);
                let (your_turn, deadline) = if info.status == Status::Playing {
                    match self.view(&held.game, Viewer::Seat(held.seat)).await {
                        Ok((view, deadline)) => (
                            view.turn == held.seat && !view.legal_actions.is_empty(),
                            deadline,
                        ),
                        Err(_) => (false, None),
                    }
                } else {
                    (false, None)
                };
                out.push(PlayerGame {
                    info,
                    seat: held.seat,
                    seat_token,
                    your_turn,
                    deadline,
                });
            }
        }
        // Stable: the others stay newest first.
        out.sort_by_key(|g| (!g.your_turn, g.your_turn.then_some(g.deadline).flatten()));
        Ok(out)
    }

    /// Deals the first round; the caller must hold a seat or the admin token.
    pub async fn start(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<GameInfo, ServiceError> {
        let game = self.get(name).await?;
        if !self.is_admin(token) {
            self.seat_of(name, token).await?;
        }
        game.ask(|reply| task::Command::Start { reply }).await
    }

    /// A move by the seat `token` holds.
    pub async fn submit(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
        action: crate::rules::Action,
        request_id: String,
        expected_version: Option<u64>,
    ) -> Result<task::Submitted, ServiceError> {
        let game = self.get(name).await?;
        let token = self.token(name, token)?;
        let answer = game
            .ask(|reply| task::Command::Submit {
                token,
                action,
                request_id,
                expected_version,
                reply,
            })
            .await;
        self.explain(name, &token, answer)
    }

    /// The seat `token` holds leaves the game.
    pub async fn leave(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<GameInfo, ServiceError> {
        let game = self.get(name).await?;
        let token = self.token(name, token)?;
        let answer = game
            .ask(|reply| task::Command::Leave { token, reply })
            .await;
        self.explain(name, &token, answer)
    }

    /// A viewer's view of game `name` and its turn deadline.
    pub async fn view(
        self: &Arc<Self>,
        name: &str,
        viewer: Viewer,
    ) -> Result<(crate::rules::View, Option<tokio::time::Instant>), ServiceError> {
        let game = self.get(name).await?;
        game.ask(|reply| task::Command::View { viewer, reply })
            .await
    }

    /// The whole log of game `name` (once it is over, or for the admin).
    pub async fn export(
        self: &Arc<Self>,
        name: &str,
        admin: bool,
    ) -> Result<Vec<crate::rules::Event>, ServiceError> {
        let game = self.get(name).await?;
        game.ask(|reply| task::Command::Export { admin, reply })
            .await
    }

    /// Game `name` after its event `version`, for a replay: the log's last version, the state and
    /// the event. Refused as [`Registry::export`] refuses.
    pub async fn replay(
        self: &Arc<Self>,
        name: &str,
        version: u64,
        admin: bool,
    ) -> Result<(u64, crate::rules::Game, crate::rules::Event), ServiceError> {
        let events = self.export(name, admin).await?;
        let last = events.len() as u64;
        let upto = usize::try_from(version).unwrap_or(usize::MAX);
        if version == 0 || version > last {
            return Err(ServiceError::invalid(
                Reason::VersionOutOfRange,
                format!("version {version} is not an event of this game (1 to {last})"),
            ));
        }
        let state = crate::rules::Game::replay(&events[..upto]).map_err(|_| {
            ServiceError::precondition(Reason::GameNotStarted, "the game was never started")
        })?;
        let event = events[upto - 1].clone();
        Ok((last, state, event))
    }

    /// The record of game `name`: from its task, else from the store.
    pub(crate) async fn lobby(&self, name: &str) -> Option<Lobby> {
        let live = self.live_ref(name).ok().flatten();
        if let Some(game) = live
            && let Ok(info) = game.ask(|reply| task::Command::Describe { reply }).await
        {
            return Some(info.lobby);
        }
        match self.hooks.store.record(name).await {
            Ok(Some((record, _))) => Lobby::from_record(&record).ok(),
            _ => None,
        }
    }
}
