//! The gRPC handlers: read the request and its token, call the [`Registry`], convert the
//! answer. Every rule and every state change lives elsewhere.

use crate::service::reason::Reason;
use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::proto as pb;
use crate::proto::uno_flip_service_server::UnoFlipService;
use crate::rules::{Deck, Ruleset, Viewer};

use crate::service::accounts::players::{self, Caller};
use crate::service::error::ServiceError;
use crate::service::games::Registry;
use crate::service::grpc::convert;
use crate::service::grpc::firehose::{self, HubSlot};
use crate::service::grpc::stream::{self, Stream};
use crate::service::matchmaker::Matchmaker;

/// The `unoflip.v1.UnoFlipService` implementation.
#[derive(Clone)]
pub struct Service {
    registry: Arc<Registry>,
    /// The quick-play queue, if this server matches players.
    matchmaker: Option<Arc<Matchmaker>>,
    /// The firehose's shared projection, while a stream holds it.
    firehose: Arc<HubSlot>,
}

impl Service {
    /// A service over `registry`; it matches players unless `registry.config` says otherwise.
    pub fn new(registry: Arc<Registry>) -> Service {
        let matchmaker = registry
            .config
            .matchmaking
            .then(|| Matchmaker::start(Arc::downgrade(&registry)));
        Service {
            registry,
            matchmaker,
            firehose: Arc::default(),
        }
    }
}

impl Service {
    /// The player `name` (or `players/me`) the request's bearer proves to be.
    async fn caller(&self, name: &str, bearer: Option<&str>) -> Result<Caller, ServiceError> {
        self.registry.hooks.players.authenticate(name, bearer).await
    }
}

/// The bearer token of a request, if any.
fn token<T>(request: &Request<T>) -> Option<String> {
    let value = request.metadata().get("authorization")?.to_str().ok()?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))?;
    Some(token.trim().to_owned())
}

type Answer<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl UnoFlipService for Service {
    async fn get_decks(&self, _: Request<pb::GetDecksRequest>) -> Answer<pb::GetDecksResponse> {
        Ok(Response::new(pb::GetDecksResponse {
            flip: convert::deck(Deck::of(Ruleset::Flip)),
            classic: convert::deck(Deck::of(Ruleset::Classic)),
        }))
    }

    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Answer<pb::CreateGameResponse> {
        let admin = self.registry.is_admin(token(&request).as_deref());
        let client = request.remote_addr().map(|a| a.ip());
        let Some(options) = request.into_inner().options else {
            return Err(
                ServiceError::invalid(Reason::OptionsMissing, "options must be set").into(),
            );
        };
        let new = convert::new_game(&options)?;
        let game = self.registry.create(new, admin, client).await?;
        Ok(Response::new(pb::CreateGameResponse {
            game: Some(convert::game(&game)),
        }))
    }

    async fn get_game(&self, request: Request<pb::GetGameRequest>) -> Answer<pb::GetGameResponse> {
        let game = self.registry.describe(&request.get_ref().name).await?;
        Ok(Response::new(pb::GetGameResponse {
            game: Some(convert::game(&game)),
        }))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Answer<pb::ListGamesResponse> {
        let r = request.get_ref();
        let games = self.registry.list(r.open_only, r.page_size).await;
        Ok(Response::new(pb::ListGamesResponse {
            games: games.iter().map(convert::game).collect(),
        }))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Answer<pb::JoinGameResponse> {
        let bearer = token(&request);
        let r = request.into_inner();
        let player = match r.player.as_str() {
            "" => None,
            name => Some(self.caller(name, bearer.as_deref()).await?),
        };
        let (seat, token, game) = self
            .registry
            .join(
                &r.game,
                r.seat.map(convert::seat_from),
                &r.player_name,
                player,
            )
            .await?;
        Ok(Response::new(pb::JoinGameResponse {
            seat: u32::try_from(seat).unwrap_or(u32::MAX),
            seat_token: token,
            game: Some(convert::game(&game)),
        }))
    }

    async fn start_game(
        &self,
        request: Request<pb::StartGameRequest>,
    ) -> Answer<pb::StartGameResponse> {
        let token = token(&request);
        let game = self
            .registry
            .start(&request.get_ref().game, token.as_deref())
            .await?;
        Ok(Response::new(pb::StartGameResponse {
            game: Some(convert::game(&game)),
        }))
    }

    async fn submit_action(
        &self,
        request: Request<pb::SubmitActionRequest>,
    ) -> Answer<pb::SubmitActionResponse> {
        let token = token(&request);
        let r = request.into_inner();
        let action = convert::action_from(r.action.as_ref())?;
        if r.request_id.len() > 128 {
            return Err(ServiceError::invalid(
                Reason::RequestIdTooLong,
                "request_id: at most 128 bytes",
            )
            .into());
        }
        let submitted = self
            .registry
            .submit(
                &r.game,
                token.as_deref(),
                action,
                r.request_id,
                r.expected_version,
            )
            .await?;
        Ok(Response::new(convert::submitted(&submitted)))
    }

    async fn get_view(&self, request: Request<pb::GetViewRequest>) -> Answer<pb::GetViewResponse> {
        let token = token(&request);
        let name = &request.get_ref().game;
        let viewer = self.registry.viewer(name, token.as_deref()).await?;
        let (view, deadline) = self.registry.view(name, viewer).await?;
        Ok(Response::new(pb::GetViewResponse {
            view: Some(convert::view(
                name,
                &view,
                stream::deadline_timestamp(deadline),
            )),
        }))
    }

    async fn leave_game(
        &self,
        request: Request<pb::LeaveGameRequest>,
    ) -> Answer<pb::LeaveGameResponse> {
        let token = token(&request);
        let game = self
            .registry
            .leave(&request.get_ref().game, token.as_deref())
            .await?;
        Ok(Response::new(pb::LeaveGameResponse {
            game: Some(convert::game(&game)),
        }))
    }

    type SubscribeStream = Stream<pb::SubscribeResponse>;

    async fn subscribe(
        &self,
        request: Request<pb::SubscribeRequest>,
    ) -> Answer<Self::SubscribeStream> {
        let slot = self.registry.open_stream(request.remote_addr())?;
        let token = token(&request);
        let r = request.into_inner();
        let viewer = self.registry.viewer(&r.game, token.as_deref()).await?;
        let stream = stream::subscribe(
            self.registry.clone(),
            &r.game,
            viewer,
            r.after_version,
            r.include_view,
            slot,
        )
        .await?;
        Ok(Response::new(stream))
    }

    type SubscribeAllStream = Stream<pb::SubscribeAllResponse>;

    async fn subscribe_all(
        &self,
        request: Request<pb::SubscribeAllRequest>,
    ) -> Answer<Self::SubscribeAllStream> {
        let after = request.get_ref().after_position;
        // Stores number positions as signed 64-bit integers: nothing lies beyond.
        if i64::try_from(after).is_err() {
            return Err(ServiceError::invalid(
                Reason::PositionOutOfRange,
                format!("after_position {after} is past any store position (at most 2^63-1)"),
            )
            .into());
        }
        let slot = self.registry.open_stream(request.remote_addr())?;
        Ok(Response::new(firehose::subscribe_all(
            self.registry.clone(),
            self.firehose.clone(),
            after,
            slot,
        )))
    }

    async fn export_game(
        &self,
        request: Request<pb::ExportGameRequest>,
    ) -> Answer<pb::ExportGameResponse> {
        let admin = self.registry.is_admin(token(&request).as_deref());
        let events = self.registry.export(&request.get_ref().game, admin).await?;
        Ok(Response::new(pb::ExportGameResponse {
            events: events
                .iter()
                .enumerate()
                .map(|(i, e)| pb::ExportedEvent {
                    version: i as u64 + 1,
                    json: crate::rules::encode(e),
                })
                .collect(),
        }))
    }

    async fn rematch(&self, request: Request<pb::RematchRequest>) -> Answer<pb::RematchResponse> {
        let client = request.remote_addr().map(|a| a.ip());
        let token = token(&request);
        let game = self
            .registry
            .rematch(&request.get_ref().game, token.as_deref(), client)
            .await?;
        Ok(Response::new(pb::RematchResponse {
            game: Some(convert::game(&game)),
        }))
    }

    async fn register_player(
        &self,
        request: Request<pb::RegisterPlayerRequest>,
    ) -> Answer<pb::RegisterPlayerResponse> {
        let r = request.get_ref();
        let (player, token) = self
            .registry
            .hooks
            .players
            .register(&r.display_name, r.bot)
            .await?;
        Ok(Response::new(pb::RegisterPlayerResponse {
            player: Some(convert::registered_player(&player)),
            player_token: token,
        }))
    }

    async fn get_player(
        &self,
        request: Request<pb::GetPlayerRequest>,
    ) -> Answer<pb::GetPlayerResponse> {
        let name = &request.get_ref().name;
        let player = if name == players::ME {
            self.caller(name, token(&request).as_deref()).await?.player
        } else {
            self.registry.hooks.players.get(name).await?
        };
        Ok(Response::new(pb::GetPlayerResponse {
            player: Some(convert::registered_player(&player)),
        }))
    }

    async fn list_my_games(
        &self,
        request: Request<pb::ListMyGamesRequest>,
    ) -> Answer<pb::ListMyGamesResponse> {
        let bearer = token(&request);
        let r = request.get_ref();
        let caller = self.caller(&r.player, bearer.as_deref()).await?;
        let games = self.registry.player_games(&caller, r.page_size).await?;
        Ok(Response::new(pb::ListMyGamesResponse {
            games: games
                .iter()
                .map(|held| pb::PlayerGame {
                    game: Some(convert::game(&held.info)),
                    seat: u32::try_from(held.seat).unwrap_or(u32::MAX),
                    seat_token: held.seat_token.clone(),
                    your_turn: held.your_turn,
                    turn_deadline: stream::deadline_timestamp(held.deadline),
                })
                .collect(),
        }))
    }

    async fn get_leaderboard(
        &self,
        request: Request<pb::GetLeaderboardRequest>,
    ) -> Answer<pb::GetLeaderboardResponse> {
        let r = request.get_ref();
        let ruleset = convert::ruleset_from(r.ruleset)?;
        let skip: usize = if r.page_token.is_empty() {
            0
        } else {
            r.page_token.parse().map_err(|_| {
                ServiceError::invalid(
                    Reason::PageTokenInvalid,
                    "page_token: not one this call returned",
                )
            })?
        };
        let limit = if r.page_size == 0 {
            50
        } else {
            r.page_size.min(100)
        } as usize;
        let (rows, more) = self
            .registry
            .hooks
            .players
            .leaderboard(ruleset, r.bots, skip, limit)
            .await?;
        Ok(Response::new(pb::GetLeaderboardResponse {
            entries: rows
                .iter()
                .enumerate()
                .map(|(i, (player, rating))| pb::LeaderboardEntry {
                    rank: u32::try_from(skip + i + 1).unwrap_or(u32::MAX),
                    player: Some(convert::registered_player(player)),
                    rating: Some(convert::rating(ruleset, rating)),
                })
                .collect(),
            next_page_token: if more {
                (skip + rows.len()).to_string()
            } else {
                String::new()
            },
        }))
    }

    type FindMatchStream = Stream<pb::FindMatchResponse>;

    async fn find_match(
        &self,
        request: Request<pb::FindMatchRequest>,
    ) -> Answer<Self::FindMatchStream> {
        let Some(matchmaker) = self.matchmaker.clone() else {
            return Err(ServiceError::precondition(
                Reason::MatchmakingElsewhere,
                "this server does not match players (serve --matchmaking false); ask the one that does",
            )
            .into());
        };
        let slot = self.registry.open_stream(request.remote_addr())?;
        let bearer = token(&request);
        let r = request.into_inner();
        let caller = self.caller(&r.player, bearer.as_deref()).await?;
        let Some(options) = r.options else {
            return Err(
                ServiceError::invalid(Reason::OptionsMissing, "options must be set").into(),
            );
        };
        let new = convert::new_game(&options)?;
        if r.bot_fill_after_seconds > 600 {
            return Err(ServiceError::invalid(
                Reason::BotFillWaitTooLong,
                "bot_fill_after_seconds: at most 600",
            )
            .into());
        }
        let fill_levels = r
            .fill_levels
            .iter()
            .map(|&level| convert::bot_level_from(level))
            .collect::<Result<Vec<_>, _>>()?;
        let bot_fill = r
            .bot_fill
            .then(|| std::time::Duration::from_secs(u64::from(r.bot_fill_after_seconds)));
        let ticket = matchmaker.join(caller, new, bot_fill, fill_levels)?;
        Ok(Response::new(stream::find_match(
            self.registry.clone(),
            matchmaker,
            ticket,
            slot,
        )))
    }

    async fn get_replay(
        &self,
        request: Request<pb::GetReplayRequest>,
    ) -> Answer<pb::GetReplayResponse> {
        let admin = self.registry.is_admin(token(&request).as_deref());
        let r = request.into_inner();
        let (last, state, event) = self.registry.replay(&r.game, r.version, admin).await?;
        let seen = crate::rules::project(&state, &event, Viewer::Spectator);
        let seats = (0..state.seats())
            .map(|seat| convert::view(&r.game, &state.view(Viewer::Seat(seat)), None))
            .collect();
        Ok(Response::new(pb::GetReplayResponse {
            version: r.version,
            last_version: last,
            event: Some(convert::event(r.version, &seen, None)),
            table: Some(convert::view(&r.game, &state.view(Viewer::Spectator), None)),
            seats,
        }))
    }
}
