//! Two servers on one PostgreSQL serve the same games: the seats of each game are split across
//! them, the games finish, and a stream on either server is gapless, with the events appended
//! through the other.

use std::sync::Arc;
use std::time::Duration;

use unoflip::proto as pb;
use unoflip::service::{self, Config, Games, Limits};
use unoflip::store::PostgresStore;

use super::common::test_postgres;
use super::harness::*;

async fn start_server(
    store: PostgresStore,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let games = Games::new(Arc::new(store), Config::default());
    games.recover().await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(service::serve(listener, games, Limits::default(), async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_share_games() {
    let (Some(a_store), Some(b_store)) = (test_postgres().await, test_postgres().await) else {
        return;
    };
    let (a_addr, _stop_a) = start_server(a_store).await;
    let (b_addr, _stop_b) = start_server(b_store).await;
    let mut a = client(a_addr).await;
    let mut b = client(b_addr).await;
    for round in 0..3 {
        let game = a
            .create_game(pb::CreateGameRequest {
                options: Some(options(pb::Ruleset::Flip, 2)),
            })
            .await
            .unwrap()
            .into_inner()
            .game
            .unwrap()
            .name;
        // Seat 0 joins through A, seat 1 through B.
        let t0 = a
            .join_game(pb::JoinGameRequest {
                game: game.clone(),
                seat: Some(0),
                player_name: "a".into(),
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
                .copied()
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
}
