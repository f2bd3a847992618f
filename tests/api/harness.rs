//! A server on a free loopback port and clients for it.

use std::sync::Arc;

use tonic::{Request, Status};
use unoflip::proto as pb;
use unoflip::service::{self, Config, Registry};

pub use crate::kit::{
    Client, IN_PROCESS_ADMIN as ADMIN, InProcess, authed, connect as client, reason,
};

pub fn options(ruleset: pb::Ruleset, seats: u32) -> pb::GameOptions {
    pb::GameOptions {
        ruleset: ruleset as i32,
        seats,
        single_round: true,
        ..Default::default()
    }
}

/// A new game waiting for its players.
pub async fn created(client: &mut Client, options: pb::GameOptions) -> pb::Game {
    client
        .create_game(pb::CreateGameRequest {
            options: Some(options),
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap()
}

/// A started game whose every seat joined; returns its name and the seat tokens.
pub async fn started(client: &mut Client, options: pb::GameOptions) -> (String, Vec<String>) {
    let game = created(client, options.clone()).await;
    let mut tokens = Vec::new();
    for seat in 0..options.seats {
        if options.bot_seats.contains(&seat) {
            tokens.push(String::new());
            continue;
        }
        let joined = client
            .join_game(pb::JoinGameRequest {
                game: game.name.clone(),
                seat: Some(seat),
                player_name: format!("p{seat}"),
                player: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(joined.seat, seat);
        tokens.push(joined.seat_token);
    }
    let token = tokens.iter().find(|t| !t.is_empty()).unwrap().clone();
    client
        .start_game(authed(
            pb::StartGameRequest {
                game: game.name.clone(),
            },
            &token,
        ))
        .await
        .unwrap();
    (game.name, tokens)
}

pub async fn view(client: &mut Client, game: &str, token: Option<&str>) -> pb::View {
    let message = pb::GetViewRequest { game: game.into() };
    let request = match token {
        Some(t) => authed(message, t),
        None => Request::new(message),
    };
    client
        .get_view(request)
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap()
}

pub async fn submit(
    client: &mut Client,
    game: &str,
    token: &str,
    action: pb::Action,
) -> Result<pb::SubmitActionResponse, Status> {
    client
        .submit_action(authed(
            pb::SubmitActionRequest {
                game: game.into(),
                action: Some(action),
                request_id: String::new(),
                expected_version: None,
            },
            token,
        ))
        .await
        .map(|r| r.into_inner())
}

/// The game as `GetGame` shows it.
pub async fn get_game(client: &mut Client, game: &str) -> pb::Game {
    client
        .get_game(pb::GetGameRequest { name: game.into() })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap()
}

pub async fn game_version(client: &mut Client, game: &str) -> u64 {
    get_game(client, game).await.version
}

/// Plays `seat` until the match ends, every other seat being played by the server: each time
/// the view comes back, it must be `seat`'s move. Plays a card when it can.
pub async fn play_alone_to_the_end(client: &mut Client, game: &str, token: &str, seat: u32) {
    for _ in 0..5000 {
        let v = view(client, game, Some(token)).await;
        if v.awaiting == pb::Awaiting::MatchOver as i32 {
            return;
        }
        assert_eq!(
            v.turn, seat,
            "the server moves for every other seat at once"
        );
        let action = v
            .legal_actions
            .iter()
            .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
            .or_else(|| {
                v.legal_actions
                    .iter()
                    .find(|a| !matches!(a.kind, Some(pb::action::Kind::CatchUno(_))))
            })
            .cloned()
            .unwrap();
        submit(client, game, token, action).await.unwrap();
    }
    panic!("the game did not end");
}

/// The registry driven directly (no transport), for tests on the tokio clock: games by name,
/// seat tokens remembered per seat, views as the API's messages.
pub struct Direct {
    pub registry: Arc<Registry>,
    tokens: std::sync::Mutex<std::collections::HashMap<(String, usize), String>>,
}

impl Direct {
    pub fn new(store: Arc<dyn unoflip::store::EventStore>, config: Config) -> Direct {
        Direct {
            registry: Registry::new(store, config),
            tokens: Default::default(),
        }
    }

    pub async fn create(&self, options: &pb::GameOptions) -> String {
        let new = service::grpc::convert::new_game(options).unwrap();
        self.registry.create(new, false, None).await.unwrap().name
    }

    pub async fn join(&self, game: &str, seat: Option<usize>, player: &str) -> (usize, String) {
        let (seat, token, _) = self.registry.join(game, seat, player, None).await.unwrap();
        self.tokens
            .lock()
            .unwrap()
            .insert((game.to_owned(), seat), token.clone());
        (seat, token)
    }

    /// Remembers a seat token obtained elsewhere (before a restart).
    pub fn remember(&self, game: &str, seat: usize, token: &str) {
        self.tokens
            .lock()
            .unwrap()
            .insert((game.to_owned(), seat), token.to_owned());
    }

    pub fn token(&self, game: &str, seat: usize) -> String {
        self.tokens.lock().unwrap()[&(game.to_owned(), seat)].clone()
    }

    /// Starts the game with the token of any joined seat.
    pub async fn start(&self, game: &str) {
        let token = self
            .tokens
            .lock()
            .unwrap()
            .iter()
            .find(|((g, _), _)| g == game)
            .map(|(_, t)| t.clone())
            .unwrap();
        self.registry.start(game, Some(&token)).await.unwrap();
    }

    pub async fn view(&self, game: &str, viewer: unoflip::rules::Viewer) -> pb::View {
        let (view, deadline) = self.registry.view(game, viewer).await.unwrap();
        let deadline = deadline.map(|d| {
            let left = d.saturating_duration_since(tokio::time::Instant::now());
            let t = prost_types::Timestamp::from(std::time::SystemTime::now() + left);
            pbjson_types::Timestamp {
                seconds: t.seconds,
                nanos: t.nanos,
            }
        });
        service::grpc::convert::view(game, &view, deadline)
    }

    pub async fn submit(
        &self,
        game: &str,
        seat: usize,
        action: unoflip::rules::Action,
    ) -> Result<unoflip::service::Submitted, unoflip::service::ServiceError> {
        let token = self.token(game, seat);
        self.registry
            .submit(game, Some(&token), action, String::new(), None)
            .await
    }

    pub async fn leave(&self, game: &str, seat: usize) {
        let token = self.token(game, seat);
        self.registry.leave(game, Some(&token)).await.unwrap();
    }
}
