//! Streams: resume without gap or duplicate, heartbeats and the caught-up marker, slow
//! subscribers, and the firehose.

use std::time::Duration;

use unoflip::proto as pb;
use unoflip::proto::subscribe_response::Kind;
use unoflip::service::Config;

use super::games::{drain, open_stream};
use super::harness::*;

/// Plays `n` moves (the turn seat's first listed non-catch action).
async fn play_moves(client: &mut Client, game: &str, tokens: &[String], n: usize) {
    for _ in 0..n {
        let v = view(client, game, None).await;
        if v.awaiting == pb::Awaiting::MatchOver as i32 {
            return;
        }
        let token = &tokens[v.turn as usize];
        let legal = view(client, game, Some(token)).await.legal_actions;
        let action = legal
            .iter()
            .find(|a| {
                !matches!(
                    a.kind,
                    Some(pb::action::Kind::CatchUno(_) | pb::action::Kind::CallUno(_))
                )
            })
            .cloned()
            .unwrap();
        submit(client, game, token, action).await.unwrap();
    }
}

async fn next_event(stream: &mut tonic::Streaming<pb::SubscribeResponse>) -> pb::SubscribeResponse {
    tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_dropped_stream_resumes_from_its_last_event_without_gap_or_duplicate() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens) = started(&mut client, options(pb::Ruleset::Flip, 3)).await;
    play_moves(&mut client, &game, &tokens, 5).await;
    let mut stream = open_stream(&mut client, &game, Some(&tokens[0]), 0).await;
    let mut table = None;
    let n = game_version(&mut client, &game).await;
    drain(&mut stream, &mut table, Some(0), n).await;
    drop(stream);
    play_moves(&mut client, &game, &tokens, 6).await;
    let now = game_version(&mut client, &game).await;
    assert!(now > n);
    let mut resumed = open_stream(&mut client, &game, Some(&tokens[0]), n).await;
    let mut versions = Vec::new();
    loop {
        match next_event(&mut resumed).await.kind.unwrap() {
            Kind::Event(e) => versions.push(e.version),
            Kind::CaughtUp(c) => {
                assert_eq!(c.version, now);
                break;
            }
            Kind::View(_) => panic!("no view unless asked"),
            Kind::Lobby(_) => panic!("a started game's stream sends no lobby"),
            Kind::Heartbeat(_) | Kind::Prompt(_) => {}
        }
    }
    assert_eq!(versions, (n + 1..=now).collect::<Vec<_>>());
    // The resumed stream folds on from the table kept before the drop.
    let mut resumed = open_stream(&mut client, &game, Some(&tokens[0]), n).await;
    drain(&mut resumed, &mut table, Some(0), now).await;
    let v = view(&mut client, &game, Some(&tokens[0])).await;
    assert_eq!(table.unwrap(), super::fold::Table::from_view(&v));
}

#[tokio::test]
async fn an_idle_stream_sends_heartbeats_after_its_caught_up_marker() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens) = started(&mut client, options(pb::Ruleset::Classic, 2)).await;
    let mut stream = open_stream(&mut client, &game, Some(&tokens[1]), 0).await;
    let first = next_event(&mut stream).await;
    assert!(
        matches!(first.kind, Some(Kind::View(_))),
        "from 0 the stream starts with a view"
    );
    // A prompt may come first if seat 1 is to act; then the marker, then heartbeats.
    let mut after_view = next_event(&mut stream).await;
    if matches!(after_view.kind, Some(Kind::Prompt(_))) {
        after_view = next_event(&mut stream).await;
    }
    assert!(
        matches!(after_view.kind, Some(Kind::CaughtUp(_))),
        "{after_view:?}"
    );
    assert!(matches!(
        next_event(&mut stream).await.kind,
        Some(Kind::Heartbeat(_))
    ));
}

#[tokio::test]
async fn a_stuck_subscriber_never_blocks_the_game_and_catches_up_from_the_log() {
    let server = InProcess::with_config(Config {
        heartbeat: Duration::from_secs(60),
        ..Config::default()
    })
    .await;
    let mut client = client(server.addr).await;
    let (game, tokens) = started(&mut client, options(pb::Ruleset::Flip, 2)).await;
    // Opened, then not read while the game goes on.
    let mut stuck = open_stream(&mut client, &game, Some(&tokens[0]), 1).await;
    play_moves(&mut client, &game, &tokens, 60).await;
    let now = game_version(&mut client, &game).await;
    let mut expected = 2;
    while expected <= now {
        if let Kind::Event(e) = next_event(&mut stuck).await.kind.unwrap() {
            assert_eq!(e.version, expected);
            expected += 1;
        }
    }
}

#[tokio::test]
async fn the_firehose_streams_every_games_public_events_with_resume() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (a, a_tokens) = started(&mut client, options(pb::Ruleset::Flip, 2)).await;
    let (b, b_tokens) = started(&mut client, options(pb::Ruleset::Classic, 3)).await;
    play_moves(&mut client, &a, &a_tokens, 3).await;
    play_moves(&mut client, &b, &b_tokens, 3).await;
    let total = game_version(&mut client, &a).await + game_version(&mut client, &b).await;
    let read = |after: u64| {
        let mut client = client.clone();
        async move {
            let mut stream = client
                .subscribe_all(pb::SubscribeAllRequest {
                    after_position: after,
                })
                .await
                .unwrap()
                .into_inner();
            let mut got = Vec::new();
            loop {
                let m = tokio::time::timeout(Duration::from_secs(10), stream.message())
                    .await
                    .unwrap()
                    .unwrap()
                    .unwrap();
                match m.kind.unwrap() {
                    pb::subscribe_all_response::Kind::Event(e) => got.push(e),
                    pb::subscribe_all_response::Kind::CaughtUp(c) => {
                        assert_eq!(c.version, total);
                        return got;
                    }
                    pb::subscribe_all_response::Kind::Heartbeat(_) => {}
                }
            }
        }
    };
    let all = read(0).await;
    assert_eq!(
        all.iter().map(|e| e.position).collect::<Vec<_>>(),
        (1..=total).collect::<Vec<_>>()
    );
    for name in [&a, &b] {
        let versions: Vec<u64> = all
            .iter()
            .filter(|e| &e.game == name)
            .map(|e| e.event.as_ref().unwrap().version)
            .collect();
        assert_eq!(
            versions,
            (1..=versions.len() as u64).collect::<Vec<_>>(),
            "each game in order"
        );
    }
    for e in &all {
        match &e.event.as_ref().unwrap().kind {
            Some(pb::event::Kind::CardsDrawn(d)) => {
                assert!(d.cards.is_empty(), "public projection")
            }
            Some(pb::event::Kind::RoundStarted(r)) => assert!(r.hand.is_empty()),
            _ => {}
        }
    }
    let resumed = read(7).await;
    assert_eq!(resumed, all[7..].to_vec());
}

#[tokio::test]
async fn a_seat_stream_prompts_the_seat_with_its_legal_actions_when_it_may_act() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens) = started(&mut client, options(pb::Ruleset::Flip, 2)).await;
    let turn = view(&mut client, &game, None).await.turn as usize;
    let mut stream = open_stream(&mut client, &game, Some(&tokens[turn]), 0).await;
    let prompt = loop {
        if let Kind::Prompt(p) = next_event(&mut stream).await.kind.unwrap() {
            break p;
        }
    };
    let v = view(&mut client, &game, Some(&tokens[turn])).await;
    assert_eq!(
        (prompt.version, prompt.legal_actions.clone()),
        (v.version, v.legal_actions)
    );
    // Acting on the prompt alone, with its version as the expected one, is accepted.
    let answer = client
        .submit_action(authed(
            pb::SubmitActionRequest {
                game: game.clone(),
                action: Some(prompt.legal_actions[0].clone()),
                request_id: String::new(),
                expected_version: Some(prompt.version),
            },
            &tokens[turn],
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(answer.version > prompt.version);
    // The other seat is never prompted while it may not act.
    let mut other = open_stream(&mut client, &game, Some(&tokens[1 - turn]), 1).await;
    let now = game_version(&mut client, &game).await;
    let other_view = view(&mut client, &game, Some(&tokens[1 - turn])).await;
    loop {
        match next_event(&mut other).await.kind.unwrap() {
            Kind::Prompt(p) => assert!(!other_view.legal_actions.is_empty() || p.version < now),
            Kind::CaughtUp(_) => break,
            _ => {}
        }
    }
}

/// The next message that is not a heartbeat.
async fn next_message(stream: &mut tonic::Streaming<pb::SubscribeResponse>) -> Kind {
    loop {
        match next_event(stream).await.kind.unwrap() {
            Kind::Heartbeat(_) => {}
            other => return other,
        }
    }
}

fn taken(kind: &Kind) -> Vec<bool> {
    match kind {
        Kind::Lobby(game) => {
            assert_eq!(game.status, pb::GameStatus::Waiting as i32);
            game.seats.iter().map(|s| s.taken).collect()
        }
        other => panic!("expected the lobby, got {other:?}"),
    }
}

async fn join(client: &mut Client, game: &str, seat: u32) -> String {
    client
        .join_game(pb::JoinGameRequest {
            game: game.into(),
            seat: Some(seat),
            player_name: format!("p{seat}"),
            player: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .seat_token
}

#[tokio::test]
async fn a_waiting_rooms_stream_sends_the_lobby_on_every_change_then_the_game() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let game = created(&mut client, options(pb::Ruleset::Flip, 3))
        .await
        .name;
    let t0 = join(&mut client, &game, 0).await;
    let mut seat = open_stream(&mut client, &game, Some(&t0), 0).await;
    let mut watcher = open_stream(&mut client, &game, None, 0).await;
    assert_eq!(taken(&next_message(&mut seat).await), [true, false, false]);
    assert_eq!(
        taken(&next_message(&mut watcher).await),
        [true, false, false]
    );
    join(&mut client, &game, 2).await;
    assert_eq!(taken(&next_message(&mut seat).await), [true, false, true]);
    assert_eq!(
        taken(&next_message(&mut watcher).await),
        [true, false, true]
    );
    join(&mut client, &game, 1).await;
    assert_eq!(taken(&next_message(&mut seat).await), [true, true, true]);
    // A refused join changes nothing and sends nothing.
    let refused = client
        .join_game(pb::JoinGameRequest {
            game: game.clone(),
            seat: Some(1),
            player_name: "late".into(),
            player: String::new(),
        })
        .await;
    assert!(refused.is_err());
    client
        .start_game(authed(pb::StartGameRequest { game: game.clone() }, &t0))
        .await
        .unwrap();
    // Started: a view of the dealt table comes next (no other lobby in between).
    let now = game_version(&mut client, &game).await;
    match next_message(&mut seat).await {
        Kind::View(v) => {
            assert_eq!(v.seat, Some(0));
            assert!(!v.hand.is_empty());
            assert!(v.version >= 1 && v.version <= now);
        }
        other => panic!("expected the view, got {other:?}"),
    }
    assert_eq!(taken(&next_message(&mut watcher).await), [true, true, true]);
    match next_message(&mut watcher).await {
        Kind::View(v) => assert!(v.hand.is_empty() && v.seat.is_none()),
        other => panic!("expected the view, got {other:?}"),
    }
}

/// A stream reads the game while the game's task waits for the store to commit a move (a
/// durable store's append takes a commit's time): its view and caught-up marker come at once,
/// at the version before the move, and the move's events follow once it is committed. Before,
/// a stream's read waited behind the commit, so a seat whose stream was late to read the last
/// move got it only after the next move's commit.
#[tokio::test]
async fn a_stream_reads_the_game_while_a_move_is_being_committed() {
    let store = std::sync::Arc::new(super::tampered::Tampered::new());
    let server = super::tampered::start_server(&store).await;
    let mut client = client(server.addr).await;
    let (game, tokens) = started(&mut client, options(pb::Ruleset::Classic, 2)).await;
    let before = game_version(&mut client, &game).await;
    let (moving, release) = super::tampered::a_held_move(&store, &client, &game, &tokens).await;
    // The move is in the store, not yet applied by the task: a spectator subscribes now. (A
    // seat's stream asks the task for its seat first, a command that waits its turn.)
    let mut stream = open_stream(&mut client, &game, None, 0).await;
    let Some(Kind::View(first)) = next_event(&mut stream).await.kind else {
        panic!("from 0 the stream starts with a view");
    };
    assert_eq!(
        first.version, before,
        "the view is of the last applied move"
    );
    let Some(Kind::CaughtUp(marker)) = next_event(&mut stream).await.kind else {
        panic!("the marker follows the view");
    };
    assert_eq!(marker.version, before);
    assert!(!moving.is_finished(), "the move is still being committed");
    release.send(()).unwrap();
    let acked = moving.await.unwrap().unwrap();
    assert!(acked.version > before);
    let mut versions = Vec::new();
    while versions.last() != Some(&acked.version) {
        match next_event(&mut stream).await.kind {
            Some(Kind::Event(e)) => versions.push(e.version),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(versions, (before + 1..=acked.version).collect::<Vec<_>>());
}
