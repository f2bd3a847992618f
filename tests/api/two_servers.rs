//! Two servers on one PostgreSQL serve the same games: the seats of each game are split across
//! them, the games finish, and a stream on either server is gapless, with the events appended
//! through the other. Both servers' firehoses give every event at the same global positions.

use std::sync::Arc;
use std::time::Duration;

use unoflip::proto as pb;
use unoflip::service::{Config, Registry};
use unoflip::store::PostgresStore;

use super::harness::*;
use crate::kit::test_postgres;

/// A server on `store`, with the unfinished games it holds recovered.
async fn start_server(store: PostgresStore) -> InProcess {
    let games = Registry::new(Arc::new(store), Config::default());
    games.recover().await.unwrap();
    InProcess::serve(games).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_share_games() {
    let (Some(a_store), Some(b_store)) = (test_postgres().await, test_postgres().await) else {
        return;
    };
    let (server_a, server_b) = (start_server(a_store).await, start_server(b_store).await);
    let mut a = client(server_a.addr).await;
    let mut b = client(server_b.addr).await;
    // Both firehoses, from the database's current position.
    let start = crate::kit::postgres_position().await;
    let hoses = [a.clone(), b.clone()].map(|mut c| {
        let seen = Arc::new(std::sync::Mutex::new(Vec::<pb::GameEvent>::new()));
        let into = seen.clone();
        tokio::spawn(async move {
            let mut stream = c
                .subscribe_all(pb::SubscribeAllRequest {
                    after_position: start,
                })
                .await
                .unwrap()
                .into_inner();
            while let Ok(Some(m)) = stream.message().await {
                if let Some(pb::subscribe_all_response::Kind::Event(e)) = m.kind {
                    into.lock().unwrap().push(e);
                }
            }
        });
        seen
    });
    let mut ours = std::collections::HashMap::new();
    for round in 0..3 {
        let game = created(&mut a, options(pb::Ruleset::Flip, 2)).await.name;
        // Seat 0 joins through A, seat 1 through B.
        let t0 = a
            .join_game(pb::JoinGameRequest {
                game: game.clone(),
                seat: Some(0),
                player_name: "a".into(),
                player: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .seat_token;
        let t1 = b
            .join_game(pb::JoinGameRequest {
                game: game.clone(),
                seat: Some(1),
                player_name: "b".into(),
                player: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .seat_token;
        b.start_game(authed(pb::StartGameRequest { game: game.clone() }, &t1))
            .await
            .unwrap();
        // A stream for seat 0 on server B.
        let mut stream = b
            .subscribe(authed(
                pb::SubscribeRequest {
                    game: game.clone(),
                    after_version: 1,
                    include_view: false,
                },
                &t0,
            ))
            .await
            .unwrap()
            .into_inner();
        let mut seen = 1;
        let mut last_version = 0;
        for _ in 0..3000 {
            // Each seat acts through its own server, with the version it saw.
            let v = view(&mut a, &game, None).await;
            if v.awaiting == pb::Awaiting::MatchOver as i32 {
                last_version = v.version;
                break;
            }
            let (client, token) = if v.turn == 0 {
                (&mut a, &t0)
            } else {
                (&mut b, &t1)
            };
            let mine = view(client, &game, Some(token)).await;
            let Some(action) = mine
                .legal_actions
                .iter()
                .find(|x| matches!(x.kind, Some(pb::action::Kind::PlayCard(_))))
                .or_else(|| {
                    mine.legal_actions
                        .iter()
                        .find(|x| !matches!(x.kind, Some(pb::action::Kind::CatchUno(_))))
                })
                .cloned()
            else {
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
                Ok(_) => {}
                Err(status) if status.code() == tonic::Code::FailedPrecondition => {}
                Err(status) => panic!("round {round}: {status:?}"),
            }
        }
        assert!(last_version > 0, "the game finished");
        ours.insert(game.clone(), last_version);
        // B's stream delivers every event, those appended through A included, in order.
        while seen < last_version {
            let m = tokio::time::timeout(Duration::from_secs(10), stream.message())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            if let Some(pb::subscribe_response::Kind::Event(e)) = m.kind {
                assert_eq!(e.version, seen + 1);
                seen = e.version;
            }
        }
    }
    // Every event of these games reaches both firehoses, gapless per game, at the same positions.
    let total: u64 = ours.values().sum();
    let mine = |hose: &Arc<std::sync::Mutex<Vec<pb::GameEvent>>>| -> Vec<(u64, String, u64)> {
        hose.lock()
            .unwrap()
            .iter()
            .filter(|e| ours.contains_key(&e.game))
            .map(|e| {
                (
                    e.position,
                    e.game.clone(),
                    e.event.as_ref().unwrap().version,
                )
            })
            .collect()
    };
    let waited = std::time::Instant::now();
    while hoses.iter().any(|h| (mine(h).len() as u64) < total) {
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "firehoses: {} and {} of {total} events",
            mine(&hoses[0]).len(),
            mine(&hoses[1]).len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (on_a, on_b) = (mine(&hoses[0]), mine(&hoses[1]));
    assert_eq!(on_a, on_b);
    assert!(on_a.windows(2).all(|w| w[0].0 < w[1].0));
    for (game, last) in &ours {
        let versions: Vec<u64> = on_a.iter().filter(|e| &e.1 == game).map(|e| e.2).collect();
        assert_eq!(versions, (1..=*last).collect::<Vec<_>>(), "{game}");
    }
}
