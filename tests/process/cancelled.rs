//! Cancelled requests never leave the server behind its store: moves sent with deadlines from
//! 1 us to 2 ms, many cancelled before, during or after the store's commit, and after each one
//! `GetView` agrees with the store with no other move needed.
//!
//! A cancelled move may still be on its way into the game when the next `GetView` arrives (the
//! two travel on different HTTP/2 streams, and the server's handler of the first may not have
//! handed it over yet), so the view may trail the store for a moment. It must catch up with no
//! other move, and it must never lead the store (show a move not yet committed).

use std::time::{Duration, Instant};

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
    let (mut cancelled, mut answered, mut trailed) = (0, 0, 0);
    for i in 0..1000u64 {
        let v = caught_up(
            &mut client,
            &game,
            &stored,
            &format!("move {i}"),
            &mut trailed,
        )
        .await;
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
    caught_up(&mut client, &game, &stored, "at the end", &mut trailed).await;
    assert!(
        cancelled > 0,
        "some moves were cancelled ({answered} answered)"
    );
    eprintln!(
        "{cancelled} cancelled, {answered} answered; the view trailed the store {trailed} times"
    );
}

/// The public view of `game` once it agrees with the store, asked again every 5 ms (counted in
/// `trailed`) while it trails it. Fails if it ever leads the store, or still trails after 5 s.
async fn caught_up(
    client: &mut Client,
    game: &str,
    stored: &dyn Fn(&str) -> u64,
    when: &str,
    trailed: &mut u32,
) -> pb::View {
    let asked = Instant::now();
    loop {
        let v = view(client, game, None).await;
        let in_store = stored(game);
        assert!(
            v.version <= in_store,
            "{when}: the view ({}) is ahead of the store ({in_store})",
            v.version
        );
        if v.version == in_store {
            return v;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "{when}: the view ({}) stays behind the store ({in_store})",
            v.version
        );
        *trailed += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
