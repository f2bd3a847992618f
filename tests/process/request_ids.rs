//! `request_id`s are durable: a retried request returns its first answer and changes nothing,
//! after a restart (an upgrade from a file with the old request index) and after thousands of
//! other moves, and on another server sharing the store.

use std::time::Duration;

use unoflip::proto as pb;

use super::harness::*;
use super::two_servers::{TwoServers, two_servers_and_a_game};

/// One move of the seat to move (a card when it has one, else a plain move), with a request id.
async fn one_move(client: &mut Client, game: &str, tokens: &[String], id: &str) -> bool {
    let v = view(client, game, None).await;
    if v.awaiting == pb::Awaiting::MatchOver as i32 {
        return false;
    }
    let token = &tokens[v.turn as usize];
    let mine = view(client, game, Some(token)).await;
    let action = mine
        .legal_actions
        .iter()
        .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
        .cloned()
        .or_else(|| plain_move(&v));
    client
        .submit_action(authed(
            pb::SubmitActionRequest {
                game: game.to_owned(),
                action,
                request_id: id.to_owned(),
                expected_version: Some(v.version),
            },
            token,
        ))
        .await
        .unwrap();
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_request_gets_its_first_answer_after_a_restart_and_5000_other_moves() {
    let store = temp_sqlite("request-ids");
    let flags = ["--bot-delay-ms", "0"];
    let server = Server::start(&store, &flags).await;
    let port = server.port;
    let mut client = server.client().await;
    let (game, tokens) = started(
        &mut client,
        pb::GameOptions {
            // Long enough for thousands of moves.
            target_score: 100_000,
            ..options(2)
        },
    )
    .await;
    // The first request: seat to move draws.
    let v = view(&mut client, &game, None).await;
    let token = tokens[v.turn as usize].clone();
    let request = || {
        authed(
            pb::SubmitActionRequest {
                game: game.clone(),
                action: plain_move(&v),
                request_id: "the-first-request".into(),
                expected_version: None,
            },
            &token,
        )
    };
    let first = client.submit_action(request()).await.unwrap().into_inner();
    assert!(first.version > v.version && !first.events.is_empty());
    let hand = view(&mut client, &game, Some(&token)).await.hand;
    server.stop();
    // The restart is an upgrade too: versions before 2026-12-07 indexed request ids, and a
    // server drops that index when it opens the file.
    let path = store.trim_start_matches("sqlite:");
    let request_index = || {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'events_request'",
                [],
                |row| row.get::<_, i64>(0),
            )
            .unwrap()
    };
    rusqlite::Connection::open(path)
        .unwrap()
        .execute_batch("CREATE INDEX events_request ON events (game, request)")
        .unwrap();
    assert_eq!(request_index(), 1);

    // After a restart: the same answer, and the game did not move.
    let server = Server::start_on(port, &store, &flags).await;
    assert_eq!(request_index(), 0, "the old index is gone");
    let mut client = server.client().await;
    let again = client.submit_action(request()).await.unwrap().into_inner();
    assert_eq!(again, first, "the first answer, after a restart");
    let now = view(&mut client, &game, Some(&token)).await;
    assert_eq!((now.version, now.hand), (first.version, hand));

    // After 5,000 other moves, each with its own request id.
    let mut moves = 0;
    while moves < 5000 && one_move(&mut client, &game, &tokens, &format!("m{moves}")).await {
        moves += 1;
    }
    assert_eq!(moves, 5000, "the game lasted 5,000 moves");
    let before = get_game(&mut client, &game).await.version;
    let again = client.submit_action(request()).await.unwrap().into_inner();
    assert_eq!(again, first, "the first answer, after 5,000 other moves");
    assert_eq!(
        get_game(&mut client, &game).await.version,
        before,
        "nothing changed"
    );
}

/// A move of the seat to move (a plain one) with request id `id`, as the seat's client sends it.
async fn plain_request(
    client: &mut Client,
    game: &str,
    tokens: &[String],
    id: &str,
) -> (pb::SubmitActionRequest, String) {
    let v = view(client, game, None).await;
    let request = pb::SubmitActionRequest {
        game: game.to_owned(),
        action: plain_move(&v),
        request_id: id.into(),
        expected_version: Some(v.version),
    };
    (request, tokens[v.turn as usize].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_made_on_one_server_and_retried_on_another_gets_its_first_answer() {
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
    for round in 0..10 {
        // Each server shows the other's moves within a second: the round starts once both show
        // the last one, so that the move is made from a current view.
        let (a_now, b_now) = (ca.clone(), cb.clone());
        eventually(
            Duration::from_secs(2),
            "both servers at one version",
            || {
                let (mut a, mut b, game) = (a_now.clone(), b_now.clone(), game.clone());
                async move {
                    get_game(&mut a, &game).await.version == get_game(&mut b, &game).await.version
                }
            },
        )
        .await;
        // Made on one server, retried at once on the other: both ways.
        let (maker, retrier) = if round % 2 == 0 {
            (&mut ca, &mut cb)
        } else {
            (&mut cb, &mut ca)
        };
        let (request, token) = plain_request(maker, &game, &tokens, &format!("r{round}")).await;
        let first = maker
            .submit_action(authed(request.clone(), &token))
            .await
            .unwrap()
            .into_inner();
        let again = retrier
            .submit_action(authed(request, &token))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            again, first,
            "round {round}: the first answer, from the other server"
        );
        assert_eq!(
            get_game(maker, &game).await.version,
            first.version,
            "round {round}: nothing changed"
        );
    }
}
