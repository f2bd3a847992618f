//! A restarted server rebuilds every unfinished game from its store and plays on.

use std::sync::Arc;

use unoflip::proto as pb;
use unoflip::rules::Viewer;
use unoflip::service::{Config, Registry};
use unoflip::store::{Events, SqliteStore};

use super::harness::{Direct, InProcess, options};
use unoflip::store::Records;

fn temp_db() -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir()
        .join(format!("unoflip-recovery-{}-{nanos}", std::process::id()))
        .join("games.sqlite3")
}

/// Plays `n` moves of whoever is to move: draws, keeps, accepts, declares red or pink.
async fn moves(games: &Direct, handle: &str, n: usize) {
    for _ in 0..n {
        let v = games.view(handle, Viewer::Spectator).await;
        let Some(action) = super::common::plain_move(
            pb::Awaiting::try_from(v.awaiting).unwrap(),
            v.side == pb::Side::Dark as i32,
        ) else {
            return;
        };
        games.submit(handle, v.turn as usize, action).await.unwrap();
    }
}

#[tokio::test]
async fn a_restarted_server_rebuilds_unfinished_games_with_their_seats_and_plays_on() {
    let path = temp_db();
    let (name, tokens, view_before, waiting) = {
        let games = Direct::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        let handle = games.create(&options(pb::Ruleset::Flip, 2)).await;
        let (_, t0) = games.join(&handle, Some(0), "ann").await;
        let (_, t1) = games.join(&handle, Some(1), "bob").await;
        games.start(&handle).await;
        moves(&games, &handle, 12).await;
        let view = games.view(&handle, Viewer::Seat(0)).await;
        // A second game still waiting for a player.
        let waiting = games.create(&options(pb::Ruleset::Classic, 3)).await;
        (handle, [t0, t1], view, waiting)
    };
    let games = Direct::new(
        Arc::new(SqliteStore::open(&path).unwrap()),
        Config::default(),
    );
    assert_eq!(games.registry.recover().await.unwrap(), 2);
    let handle = name;
    // Seat tokens still authenticate their seats.
    assert_eq!(
        games
            .registry
            .seat_of(&handle, Some(&tokens[0]))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        games
            .registry
            .seat_of(&handle, Some(&tokens[1]))
            .await
            .unwrap(),
        1
    );
    let view_after = games.view(&handle, Viewer::Seat(0)).await;
    assert_eq!(view_after, view_before, "the same table after the restart");
    let (seat, _) = games.join(&waiting, None, "cy").await;
    assert_eq!(seat, 0);
    // Play on (a few moves, then the server's bots take both seats to the end); a finished game
    // is not recovered again.
    for (seat, token) in tokens.iter().enumerate() {
        games.registry.seat_of(&handle, Some(token)).await.unwrap();
        games.remember(&handle, seat, token);
    }
    moves(&games, &handle, 6).await;
    games.leave(&handle, 0).await;
    games.leave(&handle, 1).await;
    let mut over = games.view(&handle, Viewer::Spectator).await;
    for _ in 0..200 {
        if over.awaiting == pb::Awaiting::MatchOver as i32 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        over = games.view(&handle, Viewer::Spectator).await;
    }
    assert_eq!(over.awaiting, pb::Awaiting::MatchOver as i32);
    let store = SqliteStore::open(&path).unwrap();
    let unfinished: Vec<String> = store
        .unfinished()
        .await
        .unwrap()
        .into_iter()
        .map(|(g, _)| g)
        .collect();
    assert_eq!(unfinished, vec![waiting]);
}

#[tokio::test]
async fn a_game_with_damaged_data_is_left_out_and_the_others_are_served() {
    let path = temp_db();
    let (good, bad) = {
        let games = Direct::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        let mut names = Vec::new();
        for _ in 0..2 {
            let handle = games.create(&options(pb::Ruleset::Flip, 2)).await;
            games.join(&handle, Some(0), "a").await;
            games.join(&handle, Some(1), "b").await;
            games.start(&handle).await;
            moves(&games, &handle, 5).await;
            names.push(handle);
        }
        (names[0].clone(), names[1].clone())
    };
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(
            "UPDATE events SET body = 'garbage' WHERE game = ?1 AND version = 3",
            [&bad],
        )
        .unwrap();
    }
    let games = Registry::new(
        Arc::new(SqliteStore::open(&path).unwrap()),
        Config::default(),
    );
    assert_eq!(games.recover().await.unwrap(), 1);
    assert!(games.describe(&good).await.is_ok());
    // Asked for, the damaged game is refused as damaged data, naming it and the event.
    let refused = games.describe(&bad).await.unwrap_err();
    assert_eq!(
        (refused.code(), refused.reason().as_str()),
        (tonic::Code::DataLoss, "STORE_DATA_DAMAGED")
    );
    assert!(refused.message().contains(&bad), "{refused}");
    assert!(refused.message().contains("event 3"), "{refused}");
}

/// Reads the firehose after `after` until it is caught up.
async fn firehose(client: &mut super::harness::Client, after: u64) -> Vec<pb::GameEvent> {
    let mut stream = client
        .subscribe_all(pb::SubscribeAllRequest {
            after_position: after,
        })
        .await
        .unwrap()
        .into_inner();
    let mut got = Vec::new();
    loop {
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), stream.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        match message.kind.unwrap() {
            pb::subscribe_all_response::Kind::Event(e) => got.push(e),
            pb::subscribe_all_response::Kind::CaughtUp(_) => return got,
            pb::subscribe_all_response::Kind::Heartbeat(_) => {}
        }
    }
}

#[tokio::test]
async fn firehose_positions_are_durable_across_a_restart() {
    let path = temp_db();
    let before = {
        let games = Direct::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        for ruleset in [pb::Ruleset::Flip, pb::Ruleset::Classic] {
            let handle = games.create(&options(ruleset, 2)).await;
            games.join(&handle, Some(0), "a").await;
            games.join(&handle, Some(1), "b").await;
            games.start(&handle).await;
            moves(&games, &handle, 8).await;
        }
        let server = InProcess::serve(games.registry.clone()).await;
        firehose(&mut super::harness::client(server.addr).await, 0).await
    };
    assert!(before.len() > 10);
    assert!(before.windows(2).all(|w| w[0].position < w[1].position));
    // A new server on the same file: the same events at the same positions, and a client
    // resumes from the last position it saw.
    let games = Registry::new(
        Arc::new(SqliteStore::open(&path).unwrap()),
        Config::default(),
    );
    games.recover().await.unwrap();
    let server = InProcess::serve(games).await;
    let mut client = super::harness::client(server.addr).await;
    assert_eq!(firehose(&mut client, 0).await, before);
    let k = before.len() / 2;
    assert_eq!(
        firehose(&mut client, before[k].position).await,
        before[k + 1..].to_vec()
    );
}

/// Every event version a stream sends after `after` until it is caught up, and its first view's
/// version.
async fn stream_versions(
    client: &mut super::harness::Client,
    game: &str,
    token: &str,
    after: u64,
) -> (Option<u64>, Vec<u64>) {
    let mut stream = client
        .subscribe(super::harness::authed(
            pb::SubscribeRequest {
                game: game.to_owned(),
                after_version: after,
                include_view: true,
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner();
    let (mut view, mut versions) = (None, Vec::new());
    loop {
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), stream.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        match message.kind.unwrap() {
            pb::subscribe_response::Kind::View(v) => view = view.or(Some(v.version)),
            pb::subscribe_response::Kind::Event(e) => versions.push(e.version),
            pb::subscribe_response::Kind::CaughtUp(_) => return (view, versions),
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_long_game_recovers_from_its_latest_snapshot_and_streams_start_anywhere() {
    let path = temp_db();
    let (name, [token, other], view_before, version) = {
        let games = Direct::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        let handle = games.create(&options(pb::Ruleset::Flip, 2)).await;
        let (_, token) = games.join(&handle, Some(0), "a").await;
        let (_, other) = games.join(&handle, Some(1), "b").await;
        games.start(&handle).await;
        // Draws and keeps only: nobody goes out, the log grows past several snapshots.
        moves(&games, &handle, 700).await;
        let view = games.view(&handle, Viewer::Seat(0)).await;
        let version = view.version;
        (handle, [token, other], view, version)
    };
    assert!(version > 600, "a long log: {version}");
    let store = Arc::new(SqliteStore::open(&path).unwrap());
    let (snapshot_at, state) = store.snapshot(&name).await.unwrap().expect("a snapshot");
    assert!(
        snapshot_at >= 512 && snapshot_at <= version,
        "{snapshot_at}"
    );
    // The snapshot is the state its version's events fold to.
    let log = store.read(&name, 0).await.unwrap();
    let folded =
        unoflip::rules::Game::replay(&log[..usize::try_from(snapshot_at).unwrap()]).unwrap();
    assert_eq!(unoflip::rules::Game::restore(&state).unwrap(), folded);

    let games = Direct::new(store, Config::default());
    assert_eq!(games.registry.recover().await.unwrap(), 1);
    let handle = name.clone();
    assert_eq!(games.view(&handle, Viewer::Seat(0)).await, view_before);
    // The whole log is still exported, events before the snapshot included.
    let exported = games.registry.export(&handle, true).await.unwrap();
    assert_eq!(exported, log[..exported.len()].to_vec());
    assert_eq!(exported.len() as u64, version);
    // Streams start before the snapshot, at it, after it, and from now.
    let server = InProcess::serve(games.registry.clone()).await;
    let mut client = super::harness::client(server.addr).await;
    for after in [1, snapshot_at - 1, snapshot_at, snapshot_at + 1] {
        let (view, versions) = stream_versions(&mut client, &name, &token, after).await;
        assert_eq!(view, Some(after), "a view at {after}");
        assert_eq!(versions, (after + 1..=version).collect::<Vec<_>>());
    }
    let (view, versions) = stream_versions(&mut client, &name, &token, 0).await;
    assert_eq!((view, versions), (Some(version), vec![]));
    // And the game plays on.
    games.remember(&handle, 0, &token);
    games.remember(&handle, 1, &other);
    moves(&games, &handle, 5).await;
    assert!(games.view(&handle, Viewer::Spectator).await.version > version);
}
