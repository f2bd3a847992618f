//! A restarted server rebuilds every unfinished game from its store and plays on.

use std::sync::Arc;

use unoflip::proto as pb;
use unoflip::rules::Viewer;
use unoflip::service::{Config, Games};
use unoflip::store::{EventStore, SqliteStore};

use super::harness::options;

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
async fn moves(games: &Games, handle: &Arc<unoflip::service::GameHandle>, n: usize) {
    for _ in 0..n {
        let v = games.view(handle, Viewer::Spectator).await.unwrap();
        let Some(action) = super::common::plain_move(
            pb::Awaiting::try_from(v.awaiting).unwrap(),
            v.side == pb::Side::Dark as i32,
        ) else {
            return;
        };
        games
            .submit(handle, v.turn as usize, action, "", None)
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_restarted_server_rebuilds_unfinished_games_with_their_seats_and_plays_on() {
    let path = temp_db();
    let (name, tokens, view_before, waiting) = {
        let games = Games::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        let created = games
            .create(&options(pb::Ruleset::Flip, 2), false)
            .await
            .unwrap();
        let handle = games.get(&created.name).unwrap();
        let (_, t0, _) = games.join(&handle, Some(0), "ann").await.unwrap();
        let (_, t1, _) = games.join(&handle, Some(1), "bob").await.unwrap();
        games.start(&handle).await.unwrap();
        moves(&games, &handle, 12).await;
        let view = games.view(&handle, Viewer::Seat(0)).await.unwrap();
        // A second game still waiting for a player.
        let waiting = games
            .create(&options(pb::Ruleset::Classic, 3), false)
            .await
            .unwrap();
        (created.name, [t0, t1], view, waiting.name)
    };
    let games = Games::new(
        Arc::new(SqliteStore::open(&path).unwrap()),
        Config::default(),
    );
    assert_eq!(games.recover().await.unwrap(), 2);
    let handle = games.get(&name).unwrap();
    // Seat tokens still authenticate their seats.
    assert_eq!(games.seat_of(&handle, Some(&tokens[0])).await.unwrap(), 0);
    assert_eq!(games.seat_of(&handle, Some(&tokens[1])).await.unwrap(), 1);
    let view_after = games.view(&handle, Viewer::Seat(0)).await.unwrap();
    assert_eq!(view_after, view_before, "the same table after the restart");
    let lobby = games.get(&waiting).unwrap();
    let (seat, _, _) = games.join(&lobby, None, "cy").await.unwrap();
    assert_eq!(seat, 0);
    // Play on (a few moves, then the server's bots take both seats to the end); a finished game
    // is not recovered again.
    moves(&games, &handle, 6).await;
    games.leave(&handle, 0).await.unwrap();
    games.leave(&handle, 1).await.unwrap();
    let over = games.view(&handle, Viewer::Spectator).await.unwrap();
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
        let games = Games::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        let mut names = Vec::new();
        for _ in 0..2 {
            let created = games
                .create(&options(pb::Ruleset::Flip, 2), false)
                .await
                .unwrap();
            let handle = games.get(&created.name).unwrap();
            games.join(&handle, Some(0), "a").await.unwrap();
            games.join(&handle, Some(1), "b").await.unwrap();
            games.start(&handle).await.unwrap();
            moves(&games, &handle, 5).await;
            names.push(created.name);
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
    let games = Games::new(
        Arc::new(SqliteStore::open(&path).unwrap()),
        Config::default(),
    );
    assert_eq!(games.recover().await.unwrap(), 1);
    assert!(games.get(&good).is_ok());
    assert_eq!(
        games.get(&bad).err().map(|e| e.reason),
        Some("GAME_NOT_FOUND")
    );
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
        let games = Games::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        for ruleset in [pb::Ruleset::Flip, pb::Ruleset::Classic] {
            let created = games.create(&options(ruleset, 2), false).await.unwrap();
            let handle = games.get(&created.name).unwrap();
            games.join(&handle, Some(0), "a").await.unwrap();
            games.join(&handle, Some(1), "b").await.unwrap();
            games.start(&handle).await.unwrap();
            moves(&games, &handle, 8).await;
        }
        let server = super::harness::serve(games).await;
        firehose(&mut super::harness::client(server.addr).await, 0).await
    };
    assert!(before.len() > 10);
    assert!(before.windows(2).all(|w| w[0].position < w[1].position));
    // A new server on the same file: the same events at the same positions, and a client
    // resumes from the last position it saw.
    let games = Games::new(
        Arc::new(SqliteStore::open(&path).unwrap()),
        Config::default(),
    );
    games.recover().await.unwrap();
    let server = super::harness::serve(games).await;
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
    let (name, token, view_before, version) = {
        let games = Games::new(
            Arc::new(SqliteStore::open(&path).unwrap()),
            Config::default(),
        );
        let created = games
            .create(&options(pb::Ruleset::Flip, 2), false)
            .await
            .unwrap();
        let handle = games.get(&created.name).unwrap();
        let (_, token, _) = games.join(&handle, Some(0), "a").await.unwrap();
        games.join(&handle, Some(1), "b").await.unwrap();
        games.start(&handle).await.unwrap();
        // Draws and keeps only: nobody goes out, the log grows past several snapshots.
        moves(&games, &handle, 700).await;
        let view = games.view(&handle, Viewer::Seat(0)).await.unwrap();
        let version = view.version;
        (created.name, token, view, version)
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

    let games = Games::new(store, Config::default());
    assert_eq!(games.recover().await.unwrap(), 1);
    let handle = games.get(&name).unwrap();
    assert_eq!(
        games.view(&handle, Viewer::Seat(0)).await.unwrap(),
        view_before
    );
    // The whole log is still exported, events before the snapshot included.
    let exported = games.export(&handle, true).await.unwrap();
    assert_eq!(
        exported.iter().map(|e| e.version).collect::<Vec<_>>(),
        (1..=version).collect::<Vec<_>>()
    );
    // Streams start before the snapshot, at it, after it, and from now.
    let server = super::harness::serve(games.clone()).await;
    let mut client = super::harness::client(server.addr).await;
    for after in [1, snapshot_at - 1, snapshot_at, snapshot_at + 1] {
        let (view, versions) = stream_versions(&mut client, &name, &token, after).await;
        assert_eq!(view, Some(after), "a view at {after}");
        assert_eq!(versions, (after + 1..=version).collect::<Vec<_>>());
    }
    let (view, versions) = stream_versions(&mut client, &name, &token, 0).await;
    assert_eq!((view, versions), (Some(version), vec![]));
    // And the game plays on.
    moves(&games, &handle, 5).await;
    assert!(
        games
            .view(&handle, Viewer::Spectator)
            .await
            .unwrap()
            .version
            > version
    );
}
