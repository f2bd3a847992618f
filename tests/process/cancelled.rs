//! Cancelled requests never leave the server behind its store: moves sent with deadlines from
//! 1 us to 2 ms, many cancelled before, during or after the store's commit, and after each one
//! `GetView` agrees with the store with no other move needed.

use std::time::Duration;

use unoflip::proto as pb;

use super::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_with_tiny_deadlines_leave_views_in_step_with_the_store() {
    let store = temp_sqlite("cancelled");
    let server = Server::start(&store, &["--bot-delay-ms", "0"]).await;
    let mut client = server.client().await;
    let (game, tokens) = started(
        &mut client,
        pb::GameOptions {
            // Long enough for a thousand moves.
            target_score: 5000,
            ..options(2)
        },
    )
    .await;
    let path = store.strip_prefix("sqlite:").unwrap().to_owned();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let stored = |game: &str| -> u64 {
        conn.query_row(
            "SELECT COALESCE(MAX(version), 0) FROM events WHERE game = ?1",
            [game],
            |row| row.get::<_, i64>(0),
        )
        .unwrap() as u64
    };
    let (mut cancelled, mut answered) = (0, 0);
    for i in 0..1000u64 {
        let v = view(&mut client, &game, None).await;
        assert_eq!(
            v.version,
            stored(&game),
            "move {i}: the view agrees with the store"
        );
        if v.awaiting == pb::Awaiting::MatchOver as i32 {
            break;
        }
        let token = &tokens[v.turn as usize];
        let mine = view(&mut client, &game, Some(token)).await;
        let action = mine
            .legal_actions
            .iter()
            .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
            .cloned()
            .or_else(|| plain_move(&v));
        let mut request = authed(
            pb::SubmitActionRequest {
                game: game.clone(),
                action,
                expected_version: Some(v.version),
                ..Default::default()
            },
            token,
        );
        // Every other deadline is 1 us; the rest spread from 40 us to 2 ms. The server's timer
        // fires on a whole millisecond, so a tiny deadline cuts a move off wherever it is when
        // the next tick comes: a host that answers every move within 1 ms (which once left a
        // run of 1-2 ms deadlines with nothing cancelled) still has some cut off, at every step.
        let micros = if i % 2 == 0 { 1 } else { 20 + (i % 100) * 20 };
        request.set_timeout(Duration::from_micros(micros));
        match client.submit_action(request).await {
            Ok(_) => answered += 1,
            Err(_) => cancelled += 1,
        }
    }
    let v = view(&mut client, &game, None).await;
    assert_eq!(v.version, stored(&game));
    assert!(
        cancelled > 0,
        "some moves were cancelled ({answered} answered)"
    );
    eprintln!("{cancelled} cancelled, {answered} answered");
}
