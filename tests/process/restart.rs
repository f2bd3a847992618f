//! A restarted `unoflip serve` rebuilds every unfinished game of its store at start: an all-bot
//! game and a turn-timer game advance with no client touching them, and `ListGames` lists every
//! unfinished game. A game long enough to be snapshotted, and the firehose's positions, read the
//! same after a restart.

use std::collections::HashMap;
use std::time::Duration;

use unoflip::proto as pb;

use super::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_rebuilds_every_unfinished_game_and_plays_on_without_a_client() {
    let store = temp_sqlite("restart");
    let flags = ["--bot-delay-ms", "300"];
    let server = Server::start(&store, &flags).await;
    let port = server.port;
    let mut client = server.client().await;
    // Bots only: it starts at once and the server plays it.
    let (bots, _) = table(
        &mut client,
        pb::GameOptions {
            bot_seats: vec![0, 1, 2],
            ..options(3)
        },
    )
    .await;
    // People with a one-second turn timer who never move: the server moves for them.
    let (timed, _) = started(
        &mut client,
        pb::GameOptions {
            turn_timer_seconds: 1,
            ..options(2)
        },
    )
    .await;
    // A lobby waiting for players.
    let (lobby, _) = table(&mut client, options(3)).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    server.stop();
    let before: HashMap<String, u64> = [&bots, &timed, &lobby]
        .into_iter()
        .map(|g| (g.clone(), 0))
        .collect();
    // The versions at the stop, from the store itself.
    let path = store.strip_prefix("sqlite:").unwrap().to_owned();
    let stored = |game: &str| -> u64 {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.query_row(
            "SELECT COALESCE(MAX(version), 0) FROM events WHERE game = ?1",
            [game],
            |row| row.get::<_, i64>(0),
        )
        .unwrap() as u64
    };
    let at_stop: HashMap<String, u64> = before.keys().map(|g| (g.clone(), stored(g))).collect();
    assert!(at_stop[&bots] > 0 && at_stop[&timed] > 0 && at_stop[&lobby] == 0);

    let server = Server::start_on(port, &store, &flags).await;
    assert!(
        server.log().contains("games=3") && server.log().contains("rebuilt"),
        "the server says how many games it rebuilt:\n{}",
        server.log()
    );
    // No client touches a game: wait, then read the store, not the server.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        stored(&bots) > at_stop[&bots],
        "the bots played on after the restart"
    );
    assert!(
        stored(&timed) > at_stop[&timed],
        "the turn timer ran out and the server moved"
    );
    // Every unfinished game is listed.
    let mut client = server.client().await;
    let listed = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .games;
    let names: Vec<&str> = listed.iter().map(|g| g.name.as_str()).collect();
    for game in [&bots, &timed, &lobby] {
        assert!(names.contains(&game.as_str()), "{game} listed: {names:?}");
    }
    let waiting = listed.iter().find(|g| g.name == lobby).unwrap();
    assert_eq!(waiting.status, pb::GameStatus::Waiting as i32);
}

/// The firehose from `after` until it says it caught up: (position, game, version) of each event.
async fn firehose(client: &mut Client, after: u64) -> Vec<(u64, String, u64)> {
    let mut stream = client
        .subscribe_all(pb::SubscribeAllRequest {
            after_position: after,
        })
        .await
        .unwrap()
        .into_inner();
    let mut seen = Vec::new();
    while let Some(message) = stream.message().await.unwrap() {
        match message.kind {
            Some(pb::subscribe_all_response::Kind::Event(e)) => {
                seen.push((e.position, e.game, e.event.unwrap().version));
            }
            Some(pb::subscribe_all_response::Kind::CaughtUp(_)) => break,
            _ => {}
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshotted_game_and_the_firehose_read_the_same_after_a_restart() {
    let store = temp_sqlite("snapshot-restart");
    let flags = ["--bot-delay-ms", "0"];
    let server = Server::start(&store, &flags).await;
    let port = server.port;
    let mut client = server.client().await;
    // A whole match of bots to 500 points: several rounds, usually hundreds of events. The
    // deal is random, so a short match (240 events was seen) is set aside for a longer one.
    let mut lengths = Vec::new();
    let mut long = None;
    for _ in 0..20 {
        let game = create(
            &mut client,
            pb::GameOptions {
                bot_seats: vec![0, 1, 2],
                ..options(3)
            },
        )
        .await
        .unwrap();
        assert_eq!(game.status, pb::GameStatus::Finished as i32);
        lengths.push(game.version);
        if game.version > 256 {
            long = Some(game);
            break;
        }
    }
    let game = long.unwrap_or_else(|| panic!("no match long enough for a snapshot: {lengths:?}"));
    let view_before = view(&mut client, &game.name, None).await;
    let all_before = firehose(&mut client, 0).await;
    // Every event of every match, the short ones set aside included.
    assert_eq!(all_before.len() as u64, lengths.iter().sum::<u64>());
    let of_game = all_before
        .iter()
        .filter(|(_, g, _)| *g == game.name)
        .count();
    assert_eq!(of_game as u64, game.version);
    let middle = all_before[all_before.len() / 2].0;
    server.stop();
    // The server stored a snapshot of it.
    let path = store.strip_prefix("sqlite:").unwrap().to_owned();
    let snapshot: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT version FROM snapshots WHERE game = ?1",
            [&game.name],
            |row| row.get(0),
        )
        .unwrap();
    assert!(snapshot >= 256, "snapshot at version {snapshot}");

    let server = Server::start_on(port, &store, &flags).await;
    let mut client = server.client().await;
    let again = get_game(&mut client, &game.name).await;
    assert_eq!((again.status, again.version), (game.status, game.version));
    assert_eq!(view(&mut client, &game.name, None).await, view_before);
    // The same positions, and resuming from one of them gives the rest.
    assert_eq!(firehose(&mut client, 0).await, all_before);
    let rest: Vec<_> = all_before
        .iter()
        .filter(|(p, _, _)| *p > middle)
        .cloned()
        .collect();
    assert_eq!(firehose(&mut client, middle).await, rest);
}

/// A second `unoflip serve` on the SQLite file a running server has open is refused at start,
/// saying why, and the first plays on; once the first is gone (killed, here), a server starts
/// on the file again with its games.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_a_sqlite_file_in_use_is_refused_and_the_first_plays_on() {
    let store = temp_sqlite("alone");
    let first = Server::start(&store, &[]).await;
    let mut client = first.client().await;
    let (game, _) = started(&mut client, options(2)).await;
    let mut second = std::process::Command::new(env!("CARGO_BIN_EXE_unoflip"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store", &store])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started_at = std::time::Instant::now();
    let status = loop {
        if let Some(status) = second.try_wait().unwrap() {
            break status;
        }
        if started_at.elapsed() > Duration::from_secs(30) {
            let _ = second.kill();
            panic!("a second server on a SQLite file in use was not refused");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("another unoflip server has this SQLite file open"),
        "{stderr}"
    );
    assert_eq!(
        get_game(&mut client, &game).await.status,
        pb::GameStatus::Playing as i32
    );
    drop(first);
    let again = Server::start(&store, &[]).await;
    let mut client = again.client().await;
    assert_eq!(
        get_game(&mut client, &game).await.status,
        pb::GameStatus::Playing as i32
    );
}
