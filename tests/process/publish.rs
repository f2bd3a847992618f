//! `serve --publish nats://...`: every event's public projection reaches NATS JetStream exactly
//! once, in order per game and in the store's global order, through a SIGKILL of the server, a
//! broker that is away for 10 s, and a publisher that dies while another server waits to take
//! over. Each test runs its own `nats-server` (the machine's binary) on a free port, so that
//! tests neither share a stream nor stop the machine's broker.

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use async_nats::jetstream;
use prost::Message as _;
use tokio_stream::StreamExt;
use unoflip::proto as pb;

use super::edge::{http, metric};
use super::harness::*;
use crate::kit::{Nats, test_postgres, test_postgres_url};

/// One message of the stream, as a consumer reads it.
#[derive(Debug, Clone)]
pub struct Published {
    pub subject: String,
    pub id: String,
    pub game: String,
    pub version: u64,
    pub position: u64,
    pub kind: String,
    pub event: pb::GameEvent,
}

/// The stream's messages in stream order, read by a new pull consumer from the first.
pub async fn consume(url: &str, stream: &str) -> Vec<Published> {
    let client = async_nats::connect(url).await.unwrap();
    let js = jetstream::new(client);
    let stream = js.get_stream(stream).await.unwrap();
    let consumer = stream
        .create_consumer(jetstream::consumer::pull::Config {
            ack_policy: jetstream::consumer::AckPolicy::None,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut out = Vec::new();
    loop {
        let mut batch = consumer
            .fetch()
            .max_messages(1000)
            .expires(Duration::from_millis(500))
            .messages()
            .await
            .unwrap();
        let before = out.len();
        while let Some(message) = batch.next().await {
            let message = message.unwrap();
            let headers = message.headers.clone().unwrap_or_default();
            let header = |name: &str| {
                headers
                    .get(name)
                    .map(|v| v.as_str().to_owned())
                    .unwrap_or_default()
            };
            out.push(Published {
                subject: message.subject.to_string(),
                id: headers
                    .get(async_nats::header::NATS_MESSAGE_ID)
                    .map(|v| v.as_str().to_owned())
                    .unwrap_or_default(),
                game: header("Unoflip-Game"),
                version: header("Unoflip-Version").parse().unwrap(),
                position: header("Unoflip-Position").parse().unwrap(),
                kind: header("Unoflip-Event"),
                event: pb::GameEvent::decode(message.payload.clone()).unwrap(),
            });
        }
        if out.len() == before {
            return out;
        }
    }
}

/// How many messages the stream holds.
async fn stream_messages(url: &str, stream: &str) -> u64 {
    let Ok(client) = async_nats::connect(url).await else {
        return 0;
    };
    let js = jetstream::new(client);
    let Ok(mut stream) = js.get_stream(stream).await else {
        return 0;
    };
    stream.info().await.map(|i| i.state.messages).unwrap_or(0)
}

/// `game`'s stored events, with the admin token: (version, stored JSON `type`).
async fn exported(client: &mut Client, game: &str) -> Vec<(u64, String)> {
    let events = client
        .export_game(authed(
            pb::ExportGameRequest {
                game: game.to_owned(),
            },
            ADMIN,
        ))
        .await
        .unwrap()
        .into_inner()
        .events;
    events
        .into_iter()
        .map(|e| {
            let json: serde_json::Value = serde_json::from_str(&e.json).unwrap();
            (e.version, json["type"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Checks that the stream holds every event of `games` exactly once, in version order per
/// game, as `ExportGame` lists them; that every message's headers, subject and payload agree;
/// and that the whole stream follows the store's global order with no message twice.
async fn check_exactly_once(client: &mut Client, published: &[Published], games: &[String]) {
    let mut ids = std::collections::HashSet::new();
    let mut last_position = 0;
    for p in published {
        assert!(ids.insert(p.id.clone()), "message {} twice", p.id);
        assert!(
            p.position > last_position,
            "positions out of order: {} after {last_position}",
            p.position
        );
        last_position = p.position;
        let id = p.game.strip_prefix("games/").unwrap();
        assert_eq!(p.subject, format!("unoflip.v1.games.{id}.events"));
        assert_eq!(p.id, format!("{id}/{}", p.version));
        assert_eq!(p.event.game, p.game);
        assert_eq!(p.event.position, p.position);
        assert_eq!(p.event.event.as_ref().unwrap().version, p.version);
    }
    let mut by_game: HashMap<&str, Vec<(u64, String)>> = HashMap::new();
    for p in published {
        by_game
            .entry(&p.game)
            .or_default()
            .push((p.version, p.kind.clone()));
    }
    for game in games {
        let stored = exported(client, game).await;
        assert!(!stored.is_empty());
        assert_eq!(
            by_game.get(game.as_str()).cloned().unwrap_or_default(),
            stored,
            "{game}: the stream's (version, kind) are not the stored log's"
        );
    }
}

/// Waits until the stream holds `n` messages or more.
async fn until_messages(nats: &Nats, stream: &str, n: u64, within: Duration) {
    let url = nats.url();
    eventually(within, &format!("{n} messages in the stream"), || {
        let url = url.clone();
        async move { stream_messages(&url, stream).await >= n }
    })
    .await;
}

/// Bot games of four seats, a whole match each (many events), played by the server.
async fn bot_games(client: &mut Client, n: usize) -> Vec<String> {
    let mut games = Vec::new();
    for _ in 0..n {
        let (game, _) = table(
            client,
            pb::GameOptions {
                bot_seats: vec![0, 1, 2, 3],
                ..options(4)
            },
        )
        .await;
        games.push(game);
    }
    games
}

/// Waits until every game is finished; returns their stored event counts.
async fn until_finished(client: &mut Client, games: &[String], within: Duration) -> u64 {
    let started = Instant::now();
    let mut total = 0;
    for game in games {
        loop {
            let g = get_game(client, game).await;
            if g.status == pb::GameStatus::Finished as i32 {
                total += g.version;
                break;
            }
            assert!(started.elapsed() < within, "{game} did not finish");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_public_event_reaches_jetstream_once_in_order_matching_the_firehose() {
    let Some(nats) = Nats::start("once").await else {
        return;
    };
    let store = temp_sqlite("publish");
    let url = nats.url();
    let flags = ["--bot-delay-ms", "0", "--publish", &url];
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;
    let games = bot_games(&mut client, 6).await;
    let total = until_finished(&mut client, &games, Duration::from_secs(60)).await;
    until_messages(&nats, "UNOFLIP_EVENTS", total, Duration::from_secs(30)).await;
    let published = consume(&nats.url(), "UNOFLIP_EVENTS").await;
    assert_eq!(published.len() as u64, total);
    check_exactly_once(&mut client, &published, &games).await;
    // Each message is the event SubscribeAll sends, byte for byte.
    let mut firehose = firehose_stream(&mut client).await;
    let mut sent = Vec::new();
    while sent.len() < published.len() {
        match firehose.message().await.unwrap().unwrap().kind {
            Some(pb::subscribe_all_response::Kind::Event(e)) => sent.push(e),
            Some(pb::subscribe_all_response::Kind::CaughtUp(_)) => break,
            _ => {}
        }
    }
    let payloads: Vec<_> = published.iter().map(|p| p.event.clone()).collect();
    assert_eq!(payloads, sent);
    // The metrics say it publishes and is caught up.
    let (_, text) = http(server.port, "GET", "/metrics", "").await;
    assert_eq!(metric(&text, "unoflip_publishing "), 1.0, "{text}");
    assert_eq!(
        metric(&text, "unoflip_published_events_total "),
        total as f64
    );
    // A restart publishes nothing again: it goes on after the stream's last message.
    let port = server.port;
    server.stop();
    let server = Server::start_on(port, &store, &flags).await;
    let mut client = server.client().await;
    let more = bot_games(&mut client, 1).await;
    let more_total = until_finished(&mut client, &more, Duration::from_secs(60)).await;
    until_messages(
        &nats,
        "UNOFLIP_EVENTS",
        total + more_total,
        Duration::from_secs(30),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let published = consume(&nats.url(), "UNOFLIP_EVENTS").await;
    assert_eq!(published.len() as u64, total + more_total);
    let all: Vec<String> = games.iter().chain(&more).cloned().collect();
    check_exactly_once(&mut client, &published, &all).await;
    let (_, text) = http(server.port, "GET", "/metrics", "").await;
    assert_eq!(metric(&text, "unoflip_publish_duplicates_total "), 0.0);
}

/// The stream every test but the PostgreSQL one publishes to: the default.
const STREAM: &str = "UNOFLIP_EVENTS";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_while_it_publishes_goes_on_with_no_gap_and_no_duplicate() {
    let Some(nats) = Nats::start("kill").await else {
        return;
    };
    let store = temp_sqlite("publish-kill");
    let url = nats.url();
    let flags = ["--bot-delay-ms", "2", "--publish", &url];
    let server = Server::start(&store, &flags).await;
    let port = server.port;
    let mut client = server.client().await;
    let games = bot_games(&mut client, 6).await;
    until_messages(&nats, STREAM, 300, Duration::from_secs(30)).await;
    // SIGKILL, while the bots play and the publisher publishes.
    drop(server);
    let at_kill = stream_messages(&url, STREAM).await;
    // The restarted server rebuilds the games, plays them to the end and publishes the rest.
    let server = Server::start_on(port, &store, &flags).await;
    let mut client = server.client().await;
    let total = until_finished(&mut client, &games, Duration::from_secs(120)).await;
    assert!(
        at_kill < total,
        "the kill came after everything was published ({at_kill} of {total})"
    );
    until_messages(&nats, STREAM, total, Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let published = consume(&url, STREAM).await;
    assert_eq!(published.len() as u64, total, "messages in the stream");
    check_exactly_once(&mut client, &published, &games).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_away_for_ten_seconds_holds_no_game_back_and_the_stream_catches_up() {
    let Some(mut nats) = Nats::start("away").await else {
        return;
    };
    let store = temp_sqlite("publish-away");
    let url = nats.url();
    // A short duplicate window: when the broker comes back, the stream's last message is older
    // than it (a restarted nats-server then no longer knows the last message id).
    let server = Server::start(
        &store,
        &[
            "--bot-delay-ms",
            "10",
            "--publish",
            &url,
            "--publish-duplicate-window",
            "1s",
        ],
    )
    .await;
    let mut client = server.client().await;
    let games = bot_games(&mut client, 3).await;
    until_messages(&nats, STREAM, 100, Duration::from_secs(30)).await;
    nats.kill();
    let version = |g: pb::Game| g.version;
    let mut before = 0;
    for game in &games {
        before += version(get_game(&mut client, game).await);
    }
    // The games go on without the broker; moves are answered as quickly as ever.
    let started = Instant::now();
    let (mut slowest, mut people) = (Duration::ZERO, 0);
    while started.elapsed() < Duration::from_secs(10) {
        let (game, tokens) = started_game(&mut client).await;
        for _ in 0..20 {
            let asked = Instant::now();
            if move_once(&mut client, &game, &tokens).await.is_some() {
                people += 1;
            }
            slowest = slowest.max(asked.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut during = 0;
    for game in &games {
        during += version(get_game(&mut client, game).await);
    }
    assert!(
        during >= before + 300,
        "the bots' games hardly moved without the broker ({before} -> {during})"
    );
    assert!(people >= 100, "{people} moves of people answered");
    assert!(
        slowest < Duration::from_secs(2),
        "a move took {slowest:?} without the broker"
    );
    let (_, text) = http(server.port, "GET", "/metrics", "").await;
    assert!(
        metric(&text, "unoflip_publish_lag_events ") > 0.0,
        "the lag is exported while the broker is away:\n{text}"
    );
    // A publisher behind for 10 s says so in the log.
    eventually(Duration::from_secs(10), "the lag logged", || async {
        server.log().contains("the NATS stream is behind the store")
    })
    .await;
    // Back: the stream catches up with everything, exactly once.
    nats.restart().await;
    let total = until_finished(&mut client, &games, Duration::from_secs(120)).await;
    let port = server.port;
    eventually(
        Duration::from_secs(60),
        "the publisher caught up",
        || async {
            let (_, text) = http(port, "GET", "/metrics", "").await;
            metric(&text, "unoflip_publish_lag_events ") == 0.0
        },
    )
    .await;
    let published = consume(&url, STREAM).await;
    let ours: Vec<_> = published
        .iter()
        .filter(|p| games.contains(&p.game))
        .collect();
    assert_eq!(ours.len() as u64, total);
    check_exactly_once(&mut client, &published, &games).await;
    assert!(
        server.log().contains("publisher: stopped; starting over"),
        "the outage is logged"
    );
}

/// A started two-seat game of people, with its tokens.
async fn started_game(client: &mut Client) -> (String, Vec<String>) {
    started(client, options(2)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_publishing_server_dies_another_takes_over_with_nothing_lost_or_doubled() {
    if test_postgres().await.is_none() {
        return;
    }
    let Some(nats) = Nats::start("takeover").await else {
        return;
    };
    let pg = test_postgres_url();
    let url = nats.url();
    // A stream (and so a cursor) of this run's own: the database is shared with other tests.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let stream = format!("TAKEOVER_{nanos}");
    let flags = [
        "--bot-delay-ms",
        "3",
        "--publish",
        &url,
        "--publish-stream",
        &stream,
        "--publish-start",
        "now",
    ];
    let a = Server::start(&pg, &flags).await;
    eventually(Duration::from_secs(20), "A publishes", || async {
        a.log().contains("publisher: publishing to NATS JetStream")
    })
    .await;
    let b = Server::start(&pg, &flags).await;
    eventually(Duration::from_secs(20), "B waits for the lease", || async {
        b.log().contains("another server publishes")
    })
    .await;
    // B plays the games; A publishes them until it is killed.
    let mut client = b.client().await;
    let games = bot_games(&mut client, 4).await;
    until_messages(&nats, &stream, 200, Duration::from_secs(30)).await;
    drop(a);
    eventually(Duration::from_secs(20), "B takes over", || async {
        b.log().contains("publisher: publishing to NATS JetStream")
    })
    .await;
    let total = until_finished(&mut client, &games, Duration::from_secs(120)).await;
    let started = Instant::now();
    let published = loop {
        let published = consume(&url, &stream).await;
        let ours = published.iter().filter(|p| games.contains(&p.game)).count() as u64;
        if ours >= total {
            break published;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{ours} of {total} events published"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    check_exactly_once(&mut client, &published, &games).await;
}

#[test]
fn a_publish_address_or_stream_name_that_cannot_work_is_refused_at_start() {
    for (flags, said) in [
        (vec!["--publish", "http://127.0.0.1:4222"], "--publish"),
        (
            vec![
                "--publish",
                "nats://127.0.0.1:4222",
                "--publish-stream",
                "a.b",
            ],
            "--publish-stream",
        ),
        (
            vec![
                "--publish",
                "nats://127.0.0.1:4222",
                "--publish-retention",
                "forever",
            ],
            "--publish-retention",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_unoflip"))
            .args(["serve", "--store", "memory", "--listen", "127.0.0.1:0"])
            .args(&flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} was accepted");
        assert!(stderr.contains(said), "{flags:?}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_is_created_with_the_name_retention_and_limits_asked_for() {
    let Some(nats) = Nats::start("config").await else {
        return;
    };
    let url = nats.url();
    let server = Server::start(
        "memory",
        &[
            "--publish",
            &url,
            "--publish-stream",
            "GAMES_KEPT",
            "--publish-retention",
            "interest",
            "--publish-max-age",
            "2h",
            "--publish-max-bytes",
            "1000000",
            "--publish-duplicate-window",
            "30s",
        ],
    )
    .await;
    eventually(Duration::from_secs(20), "the publisher starts", || async {
        server
            .log()
            .contains("publisher: publishing to NATS JetStream")
    })
    .await;
    let js = jetstream::new(async_nats::connect(url.as_str()).await.unwrap());
    let mut stream = js.get_stream("GAMES_KEPT").await.unwrap();
    let config = stream.info().await.unwrap().config.clone();
    assert_eq!(config.subjects, ["unoflip.v1.games.*.events"]);
    assert_eq!(
        config.retention,
        jetstream::stream::RetentionPolicy::Interest
    );
    assert_eq!(config.max_age, Duration::from_secs(7200));
    assert_eq!(config.max_bytes, 1_000_000);
    assert_eq!(config.duplicate_window, Duration::from_secs(30));
    assert_eq!(config.storage, jetstream::stream::StorageType::File);
}
