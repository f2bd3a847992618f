//! The games' lifecycle with small settings: finished games leave memory (the live count and
//! the server's memory return to their baseline, and `CreateGame` works again), lobbies expire,
//! games nobody plays end as abandoned, and one client cannot fill the server.

use std::time::Duration;

use tonic::Code;
use unoflip::proto as pb;

use super::harness::*;

/// Games of bots only, one round each: they finish at once with no bot delay.
fn bots_only() -> pb::GameOptions {
    pb::GameOptions {
        bot_seats: vec![0, 1],
        single_round: true,
        ..options(2)
    }
}

/// Waits until the server logs `n` live games after `mark` (see [`Server::log_mark`]).
async fn wait_live(server: &Server, mark: usize, n: usize) {
    eventually(
        Duration::from_secs(20),
        &format!("{n} live games"),
        || async { server.live_games_since(mark) == Some(n) },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_games_leave_memory_and_the_server_takes_new_ones_again() {
    // On a file store (the memory store's own bound is the next test's).
    let store = temp_sqlite("waves");
    let server = Server::start(
        &store,
        &[
            "--bot-delay-ms",
            "0",
            "--keep-finished",
            "10s",
            "--max-games",
            "100",
            "--max-games-per-client",
            "100",
        ],
    )
    .await;
    let mut client = server.client().await;
    let mut after_wave = Vec::new();
    for wave in 0..3 {
        let started = std::time::Instant::now();
        for _ in 0..100 {
            let game = create(&mut client, bots_only()).await.unwrap();
            assert_eq!(game.status, pb::GameStatus::Finished as i32);
        }
        // The server is full until the finished games leave (10 s after each finished).
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "wave {wave} was too slow to check"
        );
        let refused = create(&mut client, bots_only()).await.unwrap_err();
        assert_eq!(
            (refused.code(), reason(&refused).as_str()),
            (Code::ResourceExhausted, "TOO_MANY_GAMES"),
            "wave {wave}"
        );
        wait_live(&server, server.log_mark(), 0).await;
        after_wave.push(server.rss_kib());
    }
    // A finished game that left memory is still there, read from the store.
    let listed = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .games;
    assert!(listed.is_empty(), "no live game is listed");
    // Memory after the first wave is the baseline: later waves come back to it.
    let baseline = after_wave[0];
    for (wave, rss) in after_wave.iter().enumerate() {
        assert!(
            *rss <= baseline + baseline / 10,
            "wave {wave}: {rss} KiB against a baseline of {baseline} KiB ({after_wave:?})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_store_keeps_the_last_finished_games_and_its_memory_stays_bounded() {
    let server = Server::start(
        "memory?keep-finished-games=50",
        &[
            "--bot-delay-ms",
            "0",
            "--keep-finished",
            "1s",
            "--max-games-per-client",
            "10000",
        ],
    )
    .await;
    let mut client = server.client().await;
    // A lobby never started is kept however many games finish after it.
    let (lobby, _) = table(&mut client, options(3)).await;
    let mut after_wave = Vec::new();
    let mut names = Vec::new();
    for _ in 0..4 {
        let mark = server.log_mark();
        for _ in 0..300 {
            let game = create(&mut client, bots_only()).await.unwrap();
            assert_eq!(game.status, pb::GameStatus::Finished as i32);
            names.push(game.name);
        }
        wait_live(&server, mark, 1).await;
        after_wave.push(server.rss_kib());
    }
    // The 50 that finished last are there; the ones before are forgotten.
    for name in &names[names.len() - 50..] {
        let game = get_game(&mut client, name).await;
        assert_eq!(game.status, pb::GameStatus::Finished as i32, "{name}");
        let events = client
            .export_game(pb::ExportGameRequest { game: name.clone() })
            .await
            .unwrap()
            .into_inner()
            .events;
        assert_eq!(events.len() as u64, game.version, "{name}");
    }
    for name in &names[..names.len() - 50] {
        let refused = client
            .get_game(pb::GetGameRequest { name: name.clone() })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::NotFound, "{name}");
    }
    assert_eq!(
        get_game(&mut client, &lobby).await.status,
        pb::GameStatus::Waiting as i32
    );
    // Memory after the first wave is the baseline: later waves come back to it.
    let baseline = after_wave[0];
    for (wave, rss) in after_wave.iter().enumerate() {
        assert!(
            *rss <= baseline + baseline / 10,
            "wave {wave}: {rss} KiB against a baseline of {baseline} KiB ({after_wave:?})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_is_read_from_the_store_after_it_left_memory() {
    let store = temp_sqlite("lifecycle");
    let server = Server::start(&store, &["--bot-delay-ms", "0", "--keep-finished", "500ms"]).await;
    let mut client = server.client().await;
    let mark = server.log_mark();
    let game = create(&mut client, bots_only()).await.unwrap();
    assert_eq!(game.status, pb::GameStatus::Finished as i32);
    wait_live(&server, mark, 0).await;
    let again = get_game(&mut client, &game.name).await;
    assert_eq!(again.status, pb::GameStatus::Finished as i32);
    assert_eq!(again.version, game.version);
    let exported = client
        .export_game(pb::ExportGameRequest {
            game: game.name.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(exported.len() as u64, game.version);
    assert_eq!(
        view(&mut client, &game.name, None).await.awaiting,
        pb::Awaiting::MatchOver as i32
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_expires_and_a_game_nobody_plays_is_abandoned() {
    let server = Server::start(
        "memory",
        &[
            "--bot-delay-ms",
            "0",
            "--lobby-ttl",
            "1s",
            "--abandon-after",
            "2s",
        ],
    )
    .await;
    let mut client = server.client().await;
    let (lobby, _) = table(&mut client, options(3)).await;
    // Two people who never move, with a one-second turn timer: the server moves for them.
    let (timed, tokens) = started(
        &mut client,
        pb::GameOptions {
            turn_timer_seconds: 1,
            ..options(2)
        },
    )
    .await;
    let at_start = get_game(&mut client, &timed).await.version;
    eventually(Duration::from_secs(5), "the lobby expired", || {
        let (mut c, g) = (client.clone(), lobby.clone());
        async move { get_game(&mut c, &g).await.status == pb::GameStatus::Expired as i32 }
    })
    .await;
    let refused = client
        .join_game(pb::JoinGameRequest {
            game: lobby.clone(),
            seat: None,
            player_name: "late".into(),
            player: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "LOBBY_EXPIRED")
    );
    eventually(Duration::from_secs(8), "the game was abandoned", || {
        let (mut c, g) = (client.clone(), timed.clone());
        async move { get_game(&mut c, &g).await.status == pb::GameStatus::Abandoned as i32 }
    })
    .await;
    let game = get_game(&mut client, &timed).await;
    assert!(
        game.version > at_start,
        "time-outs moved before it was abandoned"
    );
    assert!(game.winners.is_empty());
    let events = client
        .export_game(pb::ExportGameRequest {
            game: timed.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert!(
        events
            .last()
            .unwrap()
            .json
            .contains(r#""type":"match_abandoned""#)
    );
    // Its seats can no longer move.
    let refused = client
        .submit_action(authed(
            pb::SubmitActionRequest {
                game: timed.clone(),
                action: Some(pb::Action {
                    kind: Some(pb::action::Kind::DrawCard(pb::DrawCard {})),
                }),
                ..Default::default()
            },
            &tokens[0],
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_fill_the_server() {
    let server = Server::start("memory", &["--max-games-per-client", "3"]).await;
    let mut client = server.client().await;
    for _ in 0..3 {
        table(&mut client, options(2)).await;
    }
    let refused = create(&mut client, options(2)).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::ResourceExhausted, "CLIENT_GAME_LIMIT")
    );
}

/// The next event of a stream, skipping views, prompts, heartbeats and catch-up marks.
async fn next_event(stream: &mut tonic::Streaming<pb::SubscribeResponse>) -> pb::Event {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("an event within 10 s")
            .unwrap()
            .expect("the stream goes on");
        if let Some(pb::subscribe_response::Kind::Event(event)) = message.kind {
            return event;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lobby_says_so_with_an_event_that_outlives_a_restart() {
    let store = temp_sqlite("lobby-expired");
    let server = Server::start(&store, &["--lobby-ttl", "2s", "--keep-finished", "1s"]).await;
    let port = server.port;
    let mut client = server.client().await;
    let (lobby, tokens) = table(&mut client, options(3)).await;
    let mut seat = seat_stream(&mut client, &lobby, &tokens[0], false).await;
    let mut firehose = firehose_stream(&mut client).await;
    let event = next_event(&mut seat).await;
    assert_eq!(event.version, 1);
    assert!(
        matches!(event.kind, Some(pb::event::Kind::LobbyExpired(_))),
        "the seat's stream says the lobby expired: {event:?}"
    );
    let told = next_firehose_event(&mut firehose).await;
    assert_eq!(told.game, lobby, "{told:?}");
    let told = told.event.unwrap();
    assert_eq!(told.version, 1);
    assert!(matches!(told.kind, Some(pb::event::Kind::LobbyExpired(_))));
    let game = get_game(&mut client, &lobby).await;
    assert_eq!(
        (game.status, game.version),
        (pb::GameStatus::Expired as i32, 1)
    );
    let exported = client
        .export_game(pb::ExportGameRequest {
            game: lobby.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(exported.len(), 1);
    assert!(exported[0].json.contains(r#""type":"lobby_expired""#));
    // It left memory after its keep time and is not rebuilt at start; it still reads the same.
    drop((seat, firehose));
    server.stop();
    let server = Server::start_on(port, &store, &["--lobby-ttl", "2s"]).await;
    let mut client = server.client().await;
    assert!(server.log().contains("games=0"), "{}", server.log());
    let game = get_game(&mut client, &lobby).await;
    assert_eq!(
        (game.status, game.version),
        (pb::GameStatus::Expired as i32, 1)
    );
    let refused = client
        .join_game(pb::JoinGameRequest {
            game: lobby.clone(),
            seat: Some(2),
            player_name: "late".into(),
            player: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "LOBBY_EXPIRED");
    let refused = client
        .start_game(authed(
            pb::StartGameRequest {
                game: lobby.clone(),
            },
            &tokens[0],
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "LOBBY_EXPIRED");
    let mut replay = seat_stream(&mut client, &lobby, &tokens[1], false).await;
    let event = next_event(&mut replay).await;
    assert!(matches!(event.kind, Some(pb::event::Kind::LobbyExpired(_))));
}

/// [Issue 13: lifecycle] Calls that find a game just as its keep time runs out are answered, from
/// the game's next task, loaded from the store: with a keep time of a millisecond, every
/// `CreateGame` of an all-bot game and every `GetGame` and `GetView` racing its task's exit
/// answers with the finished game (the soak bench once got `SERVER_STOPPING` from a
/// `CreateGame` whose game left memory between its start and its description).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_race_a_game_leaving_memory_are_answered_from_the_store() {
    race_a_game_leaving_memory("1ms", 100).await;
}

/// [Issue 13: lifecycle] With a keep time of zero, a finished game's task leaves memory as soon
/// as it is loaded, before its caller's command can reach it: the task loaded for a command takes
/// it before it starts, so every call is still answered (CI once got `SERVER_STOPPING` from a
/// `GetView` whose reloaded task left memory three times before the call reached one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_on_a_game_kept_no_time_are_answered_by_the_task_loaded_for_them() {
    race_a_game_leaving_memory("0ms", 100).await;
}

/// Four clients each create `rounds` all-bot games on a server keeping finished games for
/// `keep`, and read each five times with `GetGame` and `GetView`: every call answers the finished
/// game.
async fn race_a_game_leaving_memory(keep: &str, rounds: usize) {
    let server = Server::start("memory", &["--bot-delay-ms", "0", "--keep-finished", keep]).await;
    let client = server.client().await;
    let mut readers = Vec::new();
    for worker in 0..4 {
        let mut client = client.clone();
        readers.push(tokio::spawn(async move {
            let mut answered = 0;
            for round in 0..rounds {
                let game = create(&mut client, bots_only())
                    .await
                    .unwrap_or_else(|e| panic!("create {worker}/{round}: {e:?}"));
                assert_eq!(game.status, pb::GameStatus::Finished as i32);
                for _ in 0..5 {
                    let again = get_game(&mut client, &game.name).await;
                    assert_eq!((again.status, again.version), (game.status, game.version));
                    let seen = view(&mut client, &game.name, None).await;
                    assert_eq!(seen.version, game.version);
                    answered += 2;
                }
            }
            answered
        }));
    }
    let mut answered = 0;
    for reader in readers {
        answered += reader.await.unwrap();
    }
    assert_eq!(answered, 4 * rounds * 10);
}
