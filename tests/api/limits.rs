//! The server's game limits hold under creations at once: each creation holds its place from
//! the check to the game's start, and gives it back if it fails or its caller goes.

use std::sync::Arc;
use std::time::Duration;

use tonic::Code;
use unoflip::proto as pb;
use unoflip::service::{Config, Registry};

use super::harness::*;
use super::tampered::Tampered;

/// A server whose lobby records take `delay` to save: creations at once all wait between the
/// limit's check and the game's start.
async fn slow_server(delay: Duration, config: Config) -> InProcess {
    let store = Tampered {
        save_delay: delay,
        ..Tampered::new()
    };
    InProcess::serve(Registry::new(Arc::new(store), config)).await
}

/// `n` creations at once, each on its own connection; their answers.
async fn create_at_once(server: &InProcess, n: usize) -> Vec<Result<pb::Game, tonic::Status>> {
    let mut tasks = Vec::new();
    for _ in 0..n {
        let mut client = client(server.addr).await;
        tasks.push(tokio::spawn(async move {
            client
                .create_game(pb::CreateGameRequest {
                    options: Some(options(pb::Ruleset::Flip, 2)),
                })
                .await
                .map(|r| r.into_inner().game.unwrap_or_default())
        }));
    }
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

fn refused_for(answers: &[Result<pb::Game, tonic::Status>], why: &str) -> usize {
    answers
        .iter()
        .filter(|a| {
            a.as_ref()
                .err()
                .is_some_and(|s| s.code() == Code::ResourceExhausted && reason(s) == why)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creations_at_once_get_no_more_games_than_a_client_may_have() {
    let server = slow_server(
        Duration::from_millis(100),
        Config {
            max_games_per_client: 5,
            ..Config::default()
        },
    )
    .await;
    let answers = create_at_once(&server, 24).await;
    assert_eq!(answers.iter().filter(|a| a.is_ok()).count(), 5);
    assert_eq!(refused_for(&answers, "CLIENT_GAME_LIMIT"), 19);
    let mut client = client(server.addr).await;
    let live = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .games;
    assert_eq!(live.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creations_at_once_get_no_more_games_than_the_server_may_hold() {
    let server = slow_server(
        Duration::from_millis(100),
        Config {
            max_games: 3,
            ..Config::default()
        },
    )
    .await;
    let answers = create_at_once(&server, 16).await;
    assert_eq!(answers.iter().filter(|a| a.is_ok()).count(), 3);
    assert_eq!(refused_for(&answers, "TOO_MANY_GAMES"), 13);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_creation_whose_caller_went_gives_its_place_back() {
    let server = slow_server(
        Duration::from_millis(300),
        Config {
            max_games_per_client: 2,
            ..Config::default()
        },
    )
    .await;
    // Two callers give up while their games are being saved.
    for _ in 0..2 {
        let mut client = client(server.addr).await;
        let mut request = tonic::Request::new(pb::CreateGameRequest {
            options: Some(options(pb::Ruleset::Flip, 2)),
        });
        request.set_timeout(Duration::from_millis(20));
        let gone = client.create_game(request).await.unwrap_err();
        // The client's deadline or the server's (it reads `grpc-timeout`), whichever fires first.
        assert!(
            matches!(gone.code(), Code::Cancelled | Code::DeadlineExceeded),
            "{gone:?}"
        );
    }
    // Their places are free again: two games can still be created, and a third is refused.
    let mut client = client(server.addr).await;
    let mut made = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while made < 2 {
        match client
            .create_game(pb::CreateGameRequest {
                options: Some(options(pb::Ruleset::Flip, 2)),
            })
            .await
        {
            Ok(_) => made += 1,
            Err(s) if reason(&s) == "CLIENT_GAME_LIMIT" => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "places never came back"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(s) => panic!("{s:?}"),
        }
    }
    let refused = client
        .create_game(pb::CreateGameRequest {
            options: Some(options(pb::Ruleset::Flip, 2)),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "CLIENT_GAME_LIMIT");
}
