//! A server killed with SIGKILL under load loses no acknowledged move: restarted on the same
//! store (an SQLite file, or PostgreSQL), every game holds every event a client saw acknowledged,
//! streams resume without a gap, and the games play on to the end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use unoflip::proto as pb;

use super::harness::{get_game, options, started};
use crate::kit::{Client, Server, authed, pick_move, reason, temp_sqlite};

/// Plays moves of `game` until an error (the server is gone); records each acknowledged version.
async fn play(
    mut client: Client,
    game: String,
    tokens: Vec<String>,
    acked: Arc<Mutex<HashMap<String, u64>>>,
) {
    loop {
        let Ok(v) = client
            .get_view(pb::GetViewRequest { game: game.clone() })
            .await
        else {
            return;
        };
        let v = v.into_inner().view.unwrap();
        if v.awaiting == pb::Awaiting::MatchOver as i32 {
            return;
        }
        let token = &tokens[v.turn as usize];
        let Ok(mine) = client
            .get_view(authed(pb::GetViewRequest { game: game.clone() }, token))
            .await
        else {
            return;
        };
        let legal = mine.into_inner().view.unwrap().legal_actions;
        let Some(action) = pick_move(&legal) else {
            continue;
        };
        let request = authed(
            pb::SubmitActionRequest {
                game: game.clone(),
                action: Some(action),
                request_id: String::new(),
                expected_version: Some(v.version),
            },
            token,
        );
        match client.submit_action(request).await {
            Ok(answer) => {
                let version = answer.into_inner().version;
                let mut acked = acked.lock().unwrap();
                let entry = acked.entry(game.clone()).or_default();
                *entry = (*entry).max(version);
            }
            Err(status) if status.code() == tonic::Code::FailedPrecondition => {}
            Err(_) => return,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_under_load_loses_no_acknowledged_move_sqlite() {
    crash_and_recover(&temp_sqlite("crash")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_under_load_loses_no_acknowledged_move_postgres() {
    if crate::kit::test_postgres().await.is_none() {
        return;
    }
    crash_and_recover(&crate::kit::test_postgres_url()).await;
}

/// Plays 20 games against a server on `store`, kills it with SIGKILL, restarts it on the same
/// store and checks every game.
async fn crash_and_recover(store: &str) {
    const FLAGS: &[&str] = &["--bot-delay-ms", "0"];
    let server = Server::start(store, FLAGS).await;
    let port = server.port;
    let mut client = server.client().await;
    let mut tables = Vec::new();
    for _ in 0..20 {
        tables.push(started(&mut client, options(3)).await);
    }
    let acked = Arc::new(Mutex::new(HashMap::new()));
    let players: Vec<_> = tables
        .iter()
        .map(|(game, tokens)| {
            tokio::spawn(play(
                client.clone(),
                game.clone(),
                tokens.clone(),
                acked.clone(),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(700)).await;
    server.kill(); // SIGKILL
    for p in players {
        p.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.values().sum::<u64>() > 100,
        "the server was under load: {acked:?}"
    );

    let server = Server::start_on(port, store, FLAGS).await;
    let mut client = server.client().await;
    for (game, tokens) in &tables {
        let stored = get_game(&mut client, game).await;
        let seen = acked.get(game).copied().unwrap_or(0);
        assert!(
            stored.version >= seen,
            "{game}: acknowledged {seen}, stored {}",
            stored.version
        );
        // A stream resumes from the last event the client saw, with no gap and no duplicate.
        let mut stream = client
            .subscribe(authed(
                pb::SubscribeRequest {
                    game: game.clone(),
                    after_version: seen,
                    include_view: false,
                },
                &tokens[0],
            ))
            .await
            .unwrap()
            .into_inner();
        let mut expected = seen + 1;
        loop {
            let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            match message.kind.unwrap() {
                pb::subscribe_response::Kind::Event(e) => {
                    assert_eq!(e.version, expected);
                    expected += 1;
                }
                pb::subscribe_response::Kind::CaughtUp(c) => {
                    assert_eq!(c.version, stored.version);
                    break;
                }
                _ => {}
            }
        }
        // The games play on: every seat leaves and the server's bots finish the match. The bots
        // may finish it before the last seat has left (a bot plays its last card of a round that
        // ends the match): that seat's leave is then refused as GAME_OVER.
        for token in tokens {
            if let Err(refused) = client
                .leave_game(authed(pb::LeaveGameRequest { game: game.clone() }, token))
                .await
            {
                assert_eq!(
                    (refused.code(), reason(&refused).as_str()),
                    (tonic::Code::FailedPrecondition, "GAME_OVER"),
                    "{game}"
                );
                break;
            }
        }
        let finished = get_game(&mut client, game).await;
        assert_eq!(finished.status, pb::GameStatus::Finished as i32, "{game}");
    }
}
