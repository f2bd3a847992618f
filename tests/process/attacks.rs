//! Attacks on the built server from one client address while another client plays: request and
//! `JoinGame` floods (limited per address, across connections), a `CreateGame` flood and a
//! firehose flood. Each is refused with a reason or costs little, and the other client plays on.
//! (How fast the other client is served meanwhile is measured by `cargo bench --bench attacks`,
//! not here.)

use std::time::Duration;

use tonic::Code;
use tonic_types::StatusExt;
use unoflip::proto as pb;

use super::harness::*;

/// The refusals of `answers`, by reason; panics on any other error.
fn refusals<T>(answers: &[Result<T, tonic::Status>], expected: &str) -> usize {
    answers
        .iter()
        .filter_map(|a| a.as_ref().err())
        .inspect(|status| {
            assert_eq!(
                (status.code(), reason(status).as_str()),
                (Code::ResourceExhausted, expected),
                "{status:?}"
            );
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_over_its_request_rate_is_refused_on_every_connection_and_others_are_not() {
    let server = Server::start("memory", &["--rate-limit", "1"]).await;
    // Two connections from one address share its budget of one call a second.
    let mut first = server.client_from("127.0.0.2").await;
    let mut second = server.client_from("127.0.0.2").await;
    let started = std::time::Instant::now();
    let mut answers = Vec::new();
    for i in 0..20 {
        let client = if i % 2 == 0 { &mut first } else { &mut second };
        answers.push(client.list_games(pb::ListGamesRequest::default()).await);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let refused = refusals(&answers, "RATE_LIMITED");
    // One a second for the address: one at once, one more for each second it took (on a busy
    // machine). Per connection, twice as many would pass.
    let allowed = 1 + elapsed.ceil() as usize;
    assert!(
        20 - refused <= allowed,
        "{} of twenty passed in {elapsed:.2} s",
        20 - refused
    );
    // Each refusal says how long to wait: at most the second a request costs at one a second.
    for status in answers.iter().filter_map(|a| a.as_ref().err()) {
        let wait = status
            .get_details_retry_info()
            .and_then(|info| info.retry_delay)
            .unwrap_or_else(|| panic!("no RetryInfo in {status:?}"));
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
    }
    // Another address has its own budget.
    let mut other = server.client_from("127.0.0.3").await;
    other
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("another address is not limited by the first");
    let (_, text) = super::edge::http(server.port, "GET", "/metrics", "").await;
    assert!(
        text.contains(&format!(
            "unoflip_refusals_total{{reason=\"RATE_LIMITED\"}} {refused}"
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_game_is_limited_per_address_and_a_refused_join_takes_no_seat() {
    let server = Server::start("memory", &["--join-rate-limit", "3"]).await;
    let mut squatter = server.client_from("127.0.0.4").await;
    let game = create(&mut squatter, options(6)).await.unwrap().name;
    let join = |seat: u32| pb::JoinGameRequest {
        game: game.clone(),
        seat: Some(seat),
        player_name: format!("s{seat}"),
        player: String::new(),
    };
    let mut answers = Vec::new();
    for seat in 0..5 {
        answers.push(squatter.join_game(join(seat)).await);
    }
    assert_eq!(refusals(&answers, "JOIN_RATE_LIMITED"), 2);
    assert!(answers[..3].iter().all(Result::is_ok));
    let taken = |g: &pb::Game| g.seats.iter().filter(|s| s.taken).count();
    let mut player = server.client_from("127.0.0.5").await;
    assert_eq!(taken(&get_game(&mut player, &game).await), 3);
    // Another address joins the seats that are left.
    player.join_game(join(3)).await.unwrap();
    player.join_game(join(4)).await.unwrap();
    assert_eq!(taken(&get_game(&mut player, &game).await), 5);
    // Registering players counts in the same bucket: the squatter's is empty.
    let refused = squatter
        .register_player(pb::RegisterPlayerRequest {
            display_name: "squatter".into(),
            bot: false,
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "JOIN_RATE_LIMITED");
    // Three a minute: the next one passes within twenty seconds.
    let wait = refused
        .get_details_retry_info()
        .and_then(|info| info.retry_delay)
        .expect("a JOIN_RATE_LIMITED refusal says when to come back");
    assert!(
        wait > Duration::ZERO && wait <= Duration::from_secs(20),
        "{wait:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_game_flood_is_refused_past_its_limit_and_another_client_plays_on() {
    let server = Server::start("memory", &["--max-games-per-client", "50"]).await;
    let mut player = server.client().await;
    let (game, tokens) = started(&mut player, options(2)).await;
    let before = server.rss_kib();
    // Four connections from one address ask for 400 games at once.
    let mut flood = Vec::new();
    for _ in 0..4 {
        let mut client = server.client_from("127.0.0.6").await;
        flood.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            for _ in 0..100 {
                answers.push(create(&mut client, options(4)).await.map(|g| g.name));
            }
            answers
        }));
    }
    // Meanwhile the player plays.
    let mut moves = 0;
    while moves < 20 && move_once(&mut player, &game, &tokens).await.is_some() {
        moves += 1;
    }
    let mut answers = Vec::new();
    for task in flood {
        answers.extend(task.await.unwrap());
    }
    assert_eq!(refusals(&answers, "CLIENT_GAME_LIMIT"), 350);
    assert_eq!(answers.iter().filter(|a| a.is_ok()).count(), 50);
    assert!(moves >= 1, "the player moved during the flood");
    // The player's address may still create games.
    create(&mut player, options(2)).await.unwrap();
    let grown = server.rss_kib().saturating_sub(before);
    assert!(
        grown < 20 * 1024,
        "the flood grew the server by {grown} KiB"
    );
    let (_, text) = super::edge::http(server.port, "GET", "/metrics", "").await;
    assert!(
        text.contains("unoflip_refusals_total{reason=\"CLIENT_GAME_LIMIT\"} 350"),
        "{text}"
    );
}

/// Reads a firehose until it is caught up; returns how many events it sent.
async fn until_caught_up(stream: &mut tonic::Streaming<pb::SubscribeAllResponse>) -> usize {
    firehose_events(stream).await.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_firehose_flood_over_many_unfinished_games_costs_little_per_stream() {
    const GAMES: usize = 2_000;
    const STREAMS: usize = 100;
    let server = Server::start("memory", &["--max-games-per-client", "10000"]).await;
    // 2,000 started games whose people do not move.
    let mut makers = Vec::new();
    for _ in 0..8 {
        let mut client = server.client().await;
        makers.push(tokio::spawn(async move {
            for _ in 0..GAMES / 8 {
                started(&mut client, options(2)).await;
            }
        }));
    }
    for maker in makers {
        maker.await.unwrap();
    }
    let mut player = server.client().await;
    let (game, tokens) = started(&mut player, options(2)).await;
    // One firehose reads everything: the history is there to read.
    let mut attacker = server.client_from("127.0.0.7").await;
    let mut first = firehose_stream(&mut attacker).await;
    let history = until_caught_up(&mut first).await;
    assert!(history >= GAMES * 3, "{history} events");
    // The flood: many more, on four connections, read it all from the start and stay open.
    let mut clients = Vec::new();
    for i in 0..4 {
        let mut client = server.client_from(&format!("127.0.1.{}", i + 1)).await;
        client.get_decks(pb::GetDecksRequest {}).await.unwrap();
        clients.push(client);
    }
    let mut streams = Vec::new();
    let mut before = 0;
    for i in 0..STREAMS {
        // The first ten warm the allocator up.
        if i == 10 {
            before = server.rss_kib();
        }
        let mut stream = firehose_stream(&mut clients[i % 4]).await;
        assert_eq!(until_caught_up(&mut stream).await, history);
        streams.push(stream);
    }
    let per_stream = server.rss_kib().saturating_sub(before) / (STREAMS as u64 - 10);
    eprintln!("firehose flood: {per_stream} KiB per stream with {GAMES} unfinished games");
    // Each stream once kept a copy of every unfinished game: about 2 MB here.
    assert!(
        per_stream < 200,
        "{per_stream} KiB per firehose stream with {GAMES} unfinished games"
    );
    // Moves still reach every stream, and the player plays on.
    let version = move_once(&mut player, &game, &tokens).await.unwrap();
    for stream in streams.iter_mut().take(5) {
        let event = next_firehose_event(stream).await;
        assert_eq!(event.game, game);
        assert!(event.event.unwrap().version <= version);
    }
}

/// Every event of a firehose until it is caught up: (position, game, version).
async fn firehose_events(
    stream: &mut tonic::Streaming<pb::SubscribeAllResponse>,
) -> Vec<(u64, String, u64)> {
    let mut events = Vec::new();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(60), stream.message())
            .await
            .expect("the firehose caught up within a minute")
            .unwrap()
            .expect("the firehose went on");
        match message.kind {
            Some(pb::subscribe_all_response::Kind::Event(e)) => {
                events.push((e.position, e.game, e.event.unwrap().version));
            }
            Some(pb::subscribe_all_response::Kind::CaughtUp(_)) => return events,
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_firehose_that_falls_behind_the_shared_ring_reads_on_from_the_store_without_a_gap() {
    let server = Server::start("memory", &["--bot-delay-ms", "0"]).await;
    let mut client = server.client().await;
    // A firehose that is caught up, then reads nothing while thousands of events happen (more
    // than the shared ring keeps, and more than HTTP/2 flow control lets the server send ahead:
    // its window is small).
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{}", server.port))
            .unwrap()
            .initial_stream_window_size(Some(4096))
            .initial_connection_window_size(Some(4096))
            .connect()
            .await
            .unwrap();
    let mut slow_client =
        unoflip::proto::uno_flip_service_client::UnoFlipServiceClient::new(channel);
    let mut slow = firehose_stream(&mut slow_client).await;
    assert!(firehose_events(&mut slow).await.is_empty());
    let mut played = 0;
    while played < 6_000 {
        let game = create(
            &mut client,
            pb::GameOptions {
                bot_seats: vec![0, 1],
                single_round: true,
                ..options(2)
            },
        )
        .await
        .unwrap();
        played += get_game(&mut client, &game.name).await.version as usize;
    }
    // It reads on from the store: every event once, in order.
    let mut seen = Vec::new();
    while seen.len() < played {
        let message = tokio::time::timeout(Duration::from_secs(30), slow.message())
            .await
            .expect("the slow firehose went on")
            .unwrap()
            .unwrap();
        if let Some(pb::subscribe_all_response::Kind::Event(e)) = message.kind {
            seen.push((e.position, e.game, e.event.unwrap().version));
        }
    }
    let (_, text) = super::edge::http(server.port, "GET", "/metrics", "").await;
    assert!(
        super::edge::metric(&text, "unoflip_firehose_store_reads_total") >= 1.0,
        "{text}"
    );
    // How far behind streams were is in the lag histogram.
    assert!(
        super::edge::metric(&text, "unoflip_stream_lag_events_count") >= 1.0,
        "{text}"
    );
    // The same as a new stream from the start.
    let mut fresh = firehose_stream(&mut client).await;
    let all = firehose_events(&mut fresh).await;
    assert_eq!(all.len(), played);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(seen, all);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_open_file_limit_the_server_serves_its_connections_without_spinning() {
    let server = Server::start_with_open_files(64, "memory", &["--handshake-timeout", "2s"]).await;
    let mut player = server.client().await;
    let (game, tokens) = started(&mut player, options(2)).await;
    // A flood of idle connections, far more than the server has files for.
    let mut flood = Vec::new();
    for _ in 0..200 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.2.1:0".parse().unwrap()).unwrap();
        flood.push(
            socket
                .connect(format!("127.0.0.1:{}", server.port).parse().unwrap())
                .await,
        );
    }
    let cpu_before = server.cpu_time();
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The connection it has is served meanwhile.
    for _ in 0..5 {
        let v = view(&mut player, &game, Some(&tokens[0])).await;
        assert_eq!(v.version, get_game(&mut player, &game).await.version);
    }
    let cpu = server.cpu_time() - cpu_before;
    // Spinning on accept errors would take about a second of CPU in this second.
    assert!(
        cpu < Duration::from_millis(500),
        "{cpu:?} of CPU at the limit"
    );
    assert!(
        server
            .log()
            .contains("accepting a connection failed; waiting before the next"),
        "the accept errors are logged:\n{}",
        server.log()
    );
    // Once the flood's connections are gone (or timed out), new clients are served again.
    drop(flood);
    let mut newcomer = server.client().await;
    newcomer.get_decks(pb::GetDecksRequest {}).await.unwrap();
    move_once(&mut player, &game, &tokens).await.unwrap();
}
