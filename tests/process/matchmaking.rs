//! Quick play (`FindMatch`) on the binary: two players are matched into one started game; a
//! player who allows bots gets them after its wait; closing the stream leaves the queue; bad
//! requests are refused; with two servers on one PostgreSQL, the one started with
//! `--matchmaking false` refuses and the matched game plays through either.

use std::time::{Duration, Instant};

use tonic::Code;
use unoflip::proto as pb;
use unoflip::proto::find_match_response::Update;

use super::harness::*;
use crate::kit::{test_postgres, test_postgres_url};

fn find(
    player: &str,
    token: &str,
    options: pb::GameOptions,
    bot_fill_after: Option<u32>,
) -> tonic::Request<pb::FindMatchRequest> {
    authed(
        pb::FindMatchRequest {
            player: player.into(),
            options: Some(options),
            bot_fill: bot_fill_after.is_some(),
            bot_fill_after_seconds: bot_fill_after.unwrap_or(0),
            fill_levels: Vec::new(),
        },
        token,
    )
}

/// Reads a FindMatch stream to its match, returning the waits reported on the way.
async fn until_found(
    stream: &mut tonic::Streaming<pb::FindMatchResponse>,
) -> (Vec<pb::MatchWaiting>, pb::MatchFound) {
    let mut waits = Vec::new();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), stream.message())
            .await
            .expect("no match within 20 s")
            .unwrap()
            .expect("the stream ended without a match");
        match message.update.unwrap() {
            Update::Waiting(w) => waits.push(w),
            Update::Found(found) => {
                assert!(stream.message().await.unwrap().is_none(), "found ends it");
                return (waits, found);
            }
        }
    }
}

/// The first waiting report of a stream.
async fn first_wait(stream: &mut tonic::Streaming<pb::FindMatchResponse>) -> pb::MatchWaiting {
    match stream.message().await.unwrap().unwrap().update.unwrap() {
        Update::Waiting(w) => w,
        Update::Found(f) => panic!("found at once: {f:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_play_matches_players_fills_with_bots_and_leaves_the_queue_on_close() {
    let server = Server::start("memory", &["--bot-delay-ms", "0"]).await;
    let mut client = server.client().await;
    let (ann, ann_token) = register(&mut client, "Ann").await;
    let (bea, bea_token) = register(&mut client, "Bea").await;
    let (cid, cid_token) = register(&mut client, "Cid").await;
    let classic = pb::GameOptions {
        ruleset: pb::Ruleset::Classic as i32,
        ..options(2)
    };

    // Refusals, each leaving the queue as it was.
    let refused = client
        .find_match(find(&ann, &bea_token, options(2), None))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "PLAYER_TOKEN_INVALID");
    let refused = client
        .find_match(find(&ann, &ann_token, options(11), None))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    let refused = client
        .find_match(find(
            &ann,
            &ann_token,
            pb::GameOptions {
                bot_seats: vec![1],
                ..options(2)
            },
            None,
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "MATCH_OPTIONS_INVALID");

    // Ann queues, then closes her stream: she has left the queue.
    let mut ann_stream = client
        .find_match(find(&ann, &ann_token, classic.clone(), None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first_wait(&mut ann_stream).await.players_queued, 1);
    let again = client
        .find_match(find(&ann, &ann_token, classic.clone(), None))
        .await
        .unwrap_err();
    assert_eq!(
        (again.code(), reason(&again).as_str()),
        (Code::FailedPrecondition, "ALREADY_MATCHING")
    );
    drop(ann_stream);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut bea_stream = client
        .find_match(find(&bea, &bea_token, classic.clone(), None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        first_wait(&mut bea_stream).await.players_queued,
        1,
        "Ann left the queue with her stream"
    );
    // Cid asks for the same game: Bea and Cid are matched into one started game.
    let mut cid_stream = client
        .find_match(find(&cid, &cid_token, classic.clone(), None))
        .await
        .unwrap()
        .into_inner();
    let (_, bea_found) = until_found(&mut bea_stream).await;
    let (_, cid_found) = until_found(&mut cid_stream).await;
    let game = bea_found.game.unwrap();
    assert_eq!(game.name, cid_found.game.unwrap().name);
    assert_eq!(game.status, pb::GameStatus::Playing as i32);
    assert_eq!(game.options.unwrap().ruleset, pb::Ruleset::Classic as i32);
    let mut seats = [bea_found.seat, cid_found.seat];
    seats.sort();
    assert_eq!(seats, [0, 1]);
    let players: Vec<&str> = game.seats.iter().map(|s| s.player.as_str()).collect();
    assert!(players.contains(&bea.as_str()) && players.contains(&cid.as_str()));
    assert!(game.seats.iter().all(|s| !s.played_by_server));
    let seen = view(&mut client, &game.name, Some(&bea_found.seat_token)).await;
    assert_eq!(seen.seat, Some(bea_found.seat));

    // Ann alone, with bot fill after one second at two levels: a four-seat game with three bots,
    // each level at least once.
    let asked = Instant::now();
    let mut request = find(&ann, &ann_token, options(4), Some(1));
    request.get_mut().fill_levels =
        vec![pb::BotLevel::Random as i32, pb::BotLevel::Heuristic as i32];
    let mut ann_stream = client.find_match(request).await.unwrap().into_inner();
    let (waits, found) = until_found(&mut ann_stream).await;
    assert!(asked.elapsed() >= Duration::from_secs(1));
    assert_eq!(waits.first().map(|w| w.players_queued), Some(1));
    let game = found.game.unwrap();
    assert_eq!(found.seat, 0);
    assert_eq!(game.seats[0].player, ann);
    assert!(game.seats[1..].iter().all(|s| s.played_by_server));
    let levels: Vec<i32> = game.seats[1..].iter().map(|s| s.bot_level).collect();
    for level in [pb::BotLevel::Random, pb::BotLevel::Heuristic] {
        assert!(levels.contains(&(level as i32)), "{levels:?}");
    }
    assert_eq!(game.seats[0].bot_level, pb::BotLevel::Unspecified as i32);
    assert_eq!(game.options.unwrap().bot_seats, vec![1, 2, 3]);
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_server_of_two_on_postgres_matches_and_the_game_plays_through_either() {
    if test_postgres().await.is_none() {
        return;
    }
    let url = test_postgres_url();
    let matcher = Server::start(&url, &["--bot-delay-ms", "0"]).await;
    let other = Server::start(&url, &["--bot-delay-ms", "0", "--matchmaking", "false"]).await;
    let (mut ca, mut cb) = (matcher.client().await, other.client().await);
    let (ann, ann_token) = register(&mut cb, "Ann").await;
    let (bea, bea_token) = register(&mut ca, "Bea").await;
    let refused = cb
        .find_match(find(&ann, &ann_token, options(2), None))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "MATCHMAKING_ELSEWHERE")
    );
    // Players registered through either server queue on the matcher.
    let opts = pb::GameOptions {
        target_score: 5000,
        ..options(2)
    };
    let mut ann_stream = ca
        .find_match(find(&ann, &ann_token, opts.clone(), None))
        .await
        .unwrap()
        .into_inner();
    let mut bea_stream = ca
        .find_match(find(&bea, &bea_token, opts, None))
        .await
        .unwrap()
        .into_inner();
    let (_, found) = until_found(&mut ann_stream).await;
    until_found(&mut bea_stream).await;
    let game = found.game.unwrap().name;
    // The other server finds the game, the seat and its token, and moves it.
    let seen = view(&mut cb, &game, Some(&found.seat_token)).await;
    assert_eq!(seen.seat, Some(found.seat));
    let mine = cb
        .list_my_games(authed(
            pb::ListMyGamesRequest {
                player: ann.clone(),
                page_size: 0,
            },
            &ann_token,
        ))
        .await
        .unwrap()
        .into_inner()
        .games;
    assert_eq!(mine[0].game.as_ref().unwrap().name, game);
    assert_eq!(mine[0].seat_token, found.seat_token);
    matcher.stop();
    other.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_empties_the_queue_and_the_waiting_stream_ends_so_its_client_asks_again() {
    let store = temp_sqlite("queue");
    let server = Server::start(&store, &[]).await;
    let port = server.port;
    let mut client = server.client().await;
    let (ann, ann_token) = register(&mut client, "Ann").await;
    let mut waiting = client
        .find_match(find(&ann, &ann_token, options(3), None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first_wait(&mut waiting).await.players_queued, 1);
    server.stop();
    // The stream ends with a status that says to go elsewhere or come back.
    let ended = loop {
        match tokio::time::timeout(Duration::from_secs(10), waiting.message())
            .await
            .expect("the stream ends when the server stops")
        {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the stream ended without a status"),
            Err(status) => break status,
        }
    };
    assert_eq!(ended.code(), Code::Unavailable, "{ended:?}");
    // The restarted server's queue is empty; the player (kept in the store) asks again.
    let server = Server::start_on(port, &store, &[]).await;
    let mut client = server.client().await;
    let mut again = client
        .find_match(find(&ann, &ann_token, options(3), None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first_wait(&mut again).await.players_queued, 1);
    drop(again);
    server.stop();
}
