//! The gRPC handlers: read the request and its token, call [`Games`], convert the answer. Every
//! rule and every state change lives elsewhere.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::proto as pb;
use crate::proto::uno_flip_service_server::UnoFlipService;
use crate::rules::{Deck, Ruleset, Viewer};

use super::convert;
use super::error::ServiceError;
use super::games::Games;
use super::stream::{self, Stream};

/// The `unoflip.v1.UnoFlipService` implementation.
#[derive(Clone)]
pub struct Service {
    games: Arc<Games>,
}

impl Service {
    /// A service over `games`.
    pub fn new(games: Arc<Games>) -> Service {
        Service { games }
    }
}

impl Service {
    /// The seat a token holds, or a spectator without a token.
    async fn viewer(
        &self,
        handle: &Arc<super::games::GameHandle>,
        token: Option<&str>,
    ) -> Result<Viewer, ServiceError> {
        match token {
            Some(t) => Ok(Viewer::Seat(self.games.seat_of(handle, Some(t)).await?)),
            None => Ok(Viewer::Spectator),
        }
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
        let admin = self.games.is_admin(token(&request).as_deref());
        let Some(options) = request.into_inner().options else {
            return Err(ServiceError::invalid("OPTIONS_MISSING", "options must be set").into());
        };
        let game = self.games.create(&options, admin).await?;
        tracing::info!(game = %game.name, seats = options.seats, "game created");
        // A table of server-played seats only has nobody to start it: it starts at once.
        let game = if game.seats.iter().all(|s| s.taken) {
            let handle = self.games.get(&game.name)?;
            self.games.start(&handle).await?
        } else {
            game
        };
        Ok(Response::new(pb::CreateGameResponse { game: Some(game) }))
    }

    async fn get_game(&self, request: Request<pb::GetGameRequest>) -> Answer<pb::GetGameResponse> {
        let handle = self.games.find(&request.get_ref().name).await?;
        Ok(Response::new(pb::GetGameResponse {
            game: Some(self.games.describe(&handle).await),
        }))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Answer<pb::ListGamesResponse> {
        let r = request.get_ref();
        Ok(Response::new(pb::ListGamesResponse {
            games: self.games.list(r.open_only, r.page_size).await,
        }))
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Answer<pb::JoinGameResponse> {
        let r = request.into_inner();
        let handle = self.games.find(&r.game).await?;
        let (seat, token, game) = self.games.join(&handle, r.seat, &r.player_name).await?;
        Ok(Response::new(pb::JoinGameResponse {
            seat: u32::try_from(seat).unwrap_or(u32::MAX),
            seat_token: token,
            game: Some(game),
        }))
    }

    async fn start_game(
        &self,
        request: Request<pb::StartGameRequest>,
    ) -> Answer<pb::StartGameResponse> {
        let token = token(&request);
        let handle = self.games.find(&request.get_ref().game).await?;
        if !self.games.is_admin(token.as_deref()) {
            self.games.seat_of(&handle, token.as_deref()).await?;
        }
        let game = self.games.start(&handle).await?;
        Ok(Response::new(pb::StartGameResponse { game: Some(game) }))
    }

    async fn submit_action(
        &self,
        request: Request<pb::SubmitActionRequest>,
    ) -> Answer<pb::SubmitActionResponse> {
        let token = token(&request);
        let r = request.into_inner();
        let handle = self.games.find(&r.game).await?;
        let seat = self.games.seat_of(&handle, token.as_deref()).await?;
        let action = convert::action_from(r.action.as_ref())?;
        if r.request_id.len() > 128 {
            return Err(ServiceError::invalid(
                "REQUEST_ID_TOO_LONG",
                "request_id: at most 128 bytes",
            )
            .into());
        }
        let response = self
            .games
            .submit(&handle, seat, action, &r.request_id, r.expected_version)
            .await?;
        Ok(Response::new(response))
    }

    async fn get_view(&self, request: Request<pb::GetViewRequest>) -> Answer<pb::GetViewResponse> {
        let token = token(&request);
        let handle = self.games.find(&request.get_ref().game).await?;
        let viewer = self.viewer(&handle, token.as_deref()).await?;
        Ok(Response::new(pb::GetViewResponse {
            view: Some(self.games.view(&handle, viewer).await?),
        }))
    }

    async fn leave_game(
        &self,
        request: Request<pb::LeaveGameRequest>,
    ) -> Answer<pb::LeaveGameResponse> {
        let token = token(&request);
        let handle = self.games.find(&request.get_ref().game).await?;
        let seat = self.games.seat_of(&handle, token.as_deref()).await?;
        let game = self.games.leave(&handle, seat).await?;
        Ok(Response::new(pb::LeaveGameResponse { game: Some(game) }))
    }

    type SubscribeStream = Stream<pb::SubscribeResponse>;

    async fn subscribe(
        &self,
        request: Request<pb::SubscribeRequest>,
    ) -> Answer<Self::SubscribeStream> {
        let token = token(&request);
        let r = request.into_inner();
        let handle = self.games.find(&r.game).await?;
        let viewer = self.viewer(&handle, token.as_deref()).await?;
        let stream = stream::subscribe(
            self.games.clone(),
            handle,
            viewer,
            r.after_version,
            r.include_view,
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
        Ok(Response::new(stream::subscribe_all(
            self.games.clone(),
            after,
        )))
    }

    async fn export_game(
        &self,
        request: Request<pb::ExportGameRequest>,
    ) -> Answer<pb::ExportGameResponse> {
        let admin = self.games.is_admin(token(&request).as_deref());
        let handle = self.games.find(&request.get_ref().game).await?;
        Ok(Response::new(pb::ExportGameResponse {
            events: self.games.export(&handle, admin).await?,
        }))
    }
}
