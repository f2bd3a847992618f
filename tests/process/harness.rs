//! Starting the built `unoflip serve` on a free port, with its stderr kept for the test, and
//! clients for it.

use std::time::{Duration, Instant};

use tonic::{Request, Status};
use unoflip::proto as pb;

pub use crate::kit::{ADMIN, Client, Server, authed, pick_move, reason, temp_sqlite};

/// Registers a person named `name`: its player name and player token.
pub async fn register(client: &mut Client, name: &str) -> (String, String) {
    let r = client
        .register_player(pb::RegisterPlayerRequest {
            display_name: name.into(),
            bot: false,
        })
        .await
        .unwrap()
        .into_inner();
    (r.player.unwrap().name, r.player_token)
}

/// Options for a game with `seats` seats.
pub fn options(seats: u32) -> pb::GameOptions {
    pb::GameOptions {
        ruleset: pb::Ruleset::Flip as i32,
        seats,
        ..Default::default()
    }
}

/// `CreateGame` with these options: the game, or the refusal.
pub async fn create(client: &mut Client, options: pb::GameOptions) -> Result<pb::Game, Status> {
    let game = client
        .create_game(pb::CreateGameRequest {
            options: Some(options),
        })
        .await?
        .into_inner()
        .game;
    Ok(game.expect("CreateGame answered without a game"))
}

/// `LeaveGame` for the seat of `token`.
pub async fn leave(client: &mut Client, game: &str, token: &str) -> Result<(), Status> {
    client
        .leave_game(authed(
            pb::LeaveGameRequest {
                game: game.to_owned(),
            },
            token,
        ))
        .await
        .map(|_| ())
}

/// Creates a game and joins every seat but the bot seats; returns its name and the tokens by
/// seat (empty for bot seats).
pub async fn table(client: &mut Client, options: pb::GameOptions) -> (String, Vec<String>) {
    let game = create(client, options.clone()).await.unwrap();
    let mut tokens = vec![String::new(); options.seats as usize];
    for seat in 0..options.seats {
        if options.bot_seats.contains(&seat) {
            continue;
        }
        tokens[seat as usize] = client
            .join_game(pb::JoinGameRequest {
                game: game.name.clone(),
                seat: Some(seat),
                player_name: format!("p{seat}"),
                player: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .seat_token;
    }
    (game.name, tokens)
}

/// Creates, joins and starts a game of people.
pub async fn started(client: &mut Client, options: pb::GameOptions) -> (String, Vec<String>) {
    let (game, tokens) = table(client, options).await;
    client
        .start_game(authed(
            pb::StartGameRequest { game: game.clone() },
            &tokens[0],
        ))
        .await
        .unwrap();
    (game, tokens)
}

/// A seat's stream of `game` from its current state (a view first when `include_view`).
pub async fn seat_stream(
    client: &mut Client,
    game: &str,
    token: &str,
    include_view: bool,
) -> tonic::Streaming<pb::SubscribeResponse> {
    client
        .subscribe(authed(
            pb::SubscribeRequest {
                game: game.to_owned(),
                after_version: 0,
                include_view,
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
}

/// The firehose from its start.
pub async fn firehose_stream(client: &mut Client) -> tonic::Streaming<pb::SubscribeAllResponse> {
    client
        .subscribe_all(pb::SubscribeAllRequest { after_position: 0 })
        .await
        .unwrap()
        .into_inner()
}

/// The firehose's next event, passing over heartbeats (a stream idle for the heartbeat interval
/// on a slow machine) and its caught-up mark.
pub async fn next_firehose_event(
    stream: &mut tonic::Streaming<pb::SubscribeAllResponse>,
) -> pb::GameEvent {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("a firehose message within 10 s")
            .unwrap()
            .expect("the firehose goes on");
        if let Some(pb::subscribe_all_response::Kind::Event(event)) = message.kind {
            return event;
        }
    }
}

pub async fn get_game(client: &mut Client, game: &str) -> pb::Game {
    client
        .get_game(pb::GetGameRequest {
            name: game.to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap()
}

pub async fn view(client: &mut Client, game: &str, token: Option<&str>) -> pb::View {
    let message = pb::GetViewRequest {
        game: game.to_owned(),
    };
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

/// A move that is always legal for the seat to move and needs no card choice.
pub fn plain_move(v: &pb::View) -> Option<pb::Action> {
    let dark = v.side == pb::Side::Dark as i32;
    let action = super::common::plain_move(pb::Awaiting::try_from(v.awaiting).ok()?, dark)?;
    Some(unoflip::service::grpc::convert::action(action))
}

/// Polls `check` every 20 ms until it holds, for at most `within`.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < within, "not within {within:?}: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Plays one plain move of `game` for a seat that may act now (by its token in `tokens`).
/// Returns the new version, or `None` when no seat may act (the match is over).
pub async fn move_once(client: &mut Client, game: &str, tokens: &[String]) -> Option<u64> {
    for token in tokens.iter().filter(|t| !t.is_empty()) {
        let seat_view = view(client, game, Some(token)).await;
        if seat_view.legal_actions.is_empty() {
            continue;
        }
        let action = plain_move(&seat_view)?;
        let answer = client
            .submit_action(authed(
                pb::SubmitActionRequest {
                    game: game.to_owned(),
                    action: Some(action),
                    expected_version: Some(seat_view.version),
                    ..Default::default()
                },
                token,
            ))
            .await
            .unwrap();
        return Some(answer.into_inner().version);
    }
    None
}
