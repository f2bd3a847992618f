//! Two `unoflip serve` processes on one PostgreSQL follow each other: moves made through one
//! reach the other's `GetView` and its seat streams within a second, both ways, and a waiting
//! room followed on one sees a seat taken through the other.

use std::time::{Duration, Instant};

use unoflip::proto as pb;
use unoflip::proto::subscribe_response::Kind;

use super::harness::*;
use crate::kit::{test_postgres, test_postgres_url};

/// Reads `stream` until it carries event `version`, for at most `within`.
async fn until_event(
    stream: &mut tonic::Streaming<pb::SubscribeResponse>,
    version: u64,
    within: Duration,
) -> bool {
    let started = Instant::now();
    loop {
        let left = within.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, stream.message()).await {
            Ok(Ok(Some(m))) => {
                if let Some(Kind::Event(e)) = m.kind
                    && e.version >= version
                {
                    return true;
                }
            }
            _ => return false,
        }
    }
}

/// Two servers on the tests' PostgreSQL, a client of each, and a two-seat game of 5,000 points
/// started through the first.
pub struct TwoServers {
    pub _servers: (Server, Server),
    pub ca: Client,
    pub cb: Client,
    pub game: String,
    pub tokens: Vec<String>,
}

/// [`TwoServers`], or `None` without PostgreSQL (said, and the test skips).
pub async fn two_servers_and_a_game() -> Option<TwoServers> {
    test_postgres().await?;
    let url = test_postgres_url();
    let flags = ["--bot-delay-ms", "0"];
    let (a, b) = (
        Server::start(&url, &flags).await,
        Server::start(&url, &flags).await,
    );
    let (mut ca, cb) = (a.client().await, b.client().await);
    let (game, tokens) = started(
        &mut ca,
        pb::GameOptions {
            target_score: 5000,
            ..options(2)
        },
    )
    .await;
    Some(TwoServers {
        _servers: (a, b),
        ca,
        cb,
        game,
        tokens,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_see_each_others_moves_within_a_second() {
    let Some(TwoServers {
        _servers,
        mut ca,
        mut cb,
        game,
        tokens,
    }) = two_servers_and_a_game().await
    else {
        return;
    };
    // Each server: a stream for each seat.
    let mut streams = Vec::new();
    for client in [&mut ca, &mut cb] {
        for token in &tokens {
            let stream = client
                .subscribe(authed(
                    pb::SubscribeRequest {
                        game: game.clone(),
                        after_version: 0,
                        include_view: true,
                    },
                    token,
                ))
                .await
                .unwrap()
                .into_inner();
            streams.push(stream);
        }
    }
    for round in 0..20 {
        // Even rounds move through A and are checked on B, odd rounds the other way.
        let (mover, watcher) = if round % 2 == 0 {
            (&mut ca, &mut cb)
        } else {
            (&mut cb, &mut ca)
        };
        let v = view(mover, &game, None).await;
        if v.awaiting == pb::Awaiting::MatchOver as i32 {
            break;
        }
        let token = &tokens[v.turn as usize];
        let answer = mover
            .submit_action(authed(
                pb::SubmitActionRequest {
                    game: game.clone(),
                    action: plain_move(&v),
                    expected_version: Some(v.version),
                    ..Default::default()
                },
                token,
            ))
            .await
            .unwrap()
            .into_inner();
        let started = Instant::now();
        loop {
            let seen = view(watcher, &game, Some(&tokens[0])).await.version;
            if seen >= answer.version {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "round {round}: the other server's view is at {seen}, not {}",
                answer.version
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Every stream, on both servers, carries the move within a second.
        for (i, stream) in streams.iter_mut().enumerate() {
            assert!(
                until_event(stream, answer.version, Duration::from_secs(1)).await,
                "round {round}: stream {i} did not carry version {}",
                answer.version
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_room_on_one_server_sees_a_seat_taken_on_the_other() {
    if test_postgres().await.is_none() {
        return;
    }
    let url = test_postgres_url();
    let (a, b) = (
        Server::start(&url, &[]).await,
        Server::start(&url, &[]).await,
    );
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    let game = create(&mut ca, options(2)).await.unwrap().name;
    let mut stream = ca
        .subscribe(pb::SubscribeRequest {
            game: game.clone(),
            after_version: 0,
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner();
    let mut next_lobby = async || loop {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .unwrap();
        match message.kind.unwrap() {
            Kind::Lobby(g) => return g.seats.iter().map(|s| s.taken).collect::<Vec<_>>(),
            Kind::Heartbeat(_) => {}
            other => panic!("expected the lobby, got {other:?}"),
        }
    };
    assert_eq!(next_lobby().await, [false, false]);
    cb.join_game(pb::JoinGameRequest {
        game: game.clone(),
        seat: Some(1),
        player_name: "b".into(),
        player: String::new(),
    })
    .await
    .unwrap();
    assert_eq!(next_lobby().await, [false, true]);
    // GetGame on A says so too.
    let seen = ca
        .get_game(pb::GetGameRequest { name: game.clone() })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert!(seen.seats[1].taken);
}
