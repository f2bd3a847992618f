//! Load: many concurrent four-seat games against a real `unoflip serve` process on loopback,
//! every seat subscribed to its stream and acting when its turn comes (on the stream's Prompt,
//! choosing among the legal actions it lists, preferring to play a card, with
//! `expected_version`).
//!
//! Reports acknowledged actions per second, the latency from an action's acknowledgement to its
//! last event reaching every subscriber of the game (p50, p99), and the server's peak memory.
//!
//! Submissions are paced to `LOAD_RATE` actions per second across all games (default 12000; 0
//! for as fast as the machine goes), so that latency is measured at a given throughput rather
//! than in a saturated queue.
//!
//! `cargo bench --bench load` (`LOAD_GAMES`, default 1000; `LOAD_SEATS`, default 4; `LOAD_STORE`,
//! the server's `--store`, default `memory`; `sqlite` uses a fresh file).
//!
//! `LOAD_PUBLISH=1` also starts a `nats-server` of its own (`UNOFLIP_NATS_SERVER`, else
//! `nats-server` on the PATH) and the server with `--publish`: a plain NATS subscription times
//! each event's arrival on the broker, and the report adds the lag from an action's
//! acknowledgement to its last event reaching NATS (p50, p99), and how many never came.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use unoflip::proto as pb;
use unoflip::proto::uno_flip_service_client::UnoFlipServiceClient;

type Client = UnoFlipServiceClient<Channel>;

fn authed<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    if let Ok(value) = format!("Bearer {token}").parse::<MetadataValue<_>>() {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// Arrival times of each event version at each subscriber, and acknowledgement times.
#[derive(Default)]
struct Timings {
    acks: Vec<(usize, u64, Instant)>,
    arrivals: HashMap<(usize, usize, u64), Instant>,
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let games = env("LOAD_GAMES", 1000);
    let seats = env("LOAD_SEATS", 4);
    let rate = env("LOAD_RATE", 12_000);
    // Each submission takes the next slot of a global schedule.
    let interval_ns = if rate == 0 {
        0
    } else {
        1_000_000_000 / rate as u64
    };
    let next_slot = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        l.local_addr()?.port()
    };
    let store = match std::env::var("LOAD_STORE").as_deref() {
        Ok("sqlite") => {
            let dir = std::env::temp_dir().join(format!("unoflip-load-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            format!("sqlite:{}", dir.join("load.sqlite3").display())
        }
        Ok(other) if !other.is_empty() => other.to_owned(),
        _ => "memory".to_owned(),
    };
    // With LOAD_PUBLISH: a broker of our own, and a subscription timing each event's arrival.
    let nats = if env("LOAD_PUBLISH", 0) == 1 {
        Some(start_nats().await?)
    } else {
        None
    };
    let broker_arrivals: Arc<Mutex<HashMap<(String, u64), Instant>>> = Arc::default();
    if let Some((_, url, _)) = &nats {
        let client = async_nats::connect(url.as_str()).await?;
        let mut subscription = client.subscribe("unoflip.v1.games.*.events").await?;
        let arrivals = broker_arrivals.clone();
        tokio::spawn(async move {
            use tokio_stream::StreamExt;
            let _client = client;
            while let Some(message) = subscription.next().await {
                let now = Instant::now();
                let Some(headers) = message.headers else {
                    continue;
                };
                let game = headers.get("Unoflip-Game").map(|v| v.as_str().to_owned());
                let version = headers
                    .get("Unoflip-Version")
                    .and_then(|v| v.as_str().parse::<u64>().ok());
                if let (Some(game), Some(version)) = (game, version)
                    && let Ok(mut a) = arrivals.lock()
                {
                    a.insert((game, version), now);
                }
            }
        });
    }
    let publish_flags: Vec<String> = match &nats {
        Some((_, url, _)) => vec!["--publish".into(), url.clone()],
        None => Vec::new(),
    };
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_unoflip"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--max-games",
            "1000000",
            "--max-games-per-client",
            "1000000",
            // Many clients' streams over 16 connections.
            "--max-streams-per-connection",
            "1000000",
            // Every player comes from this one address.
            "--rate-limit",
            "0",
            "--join-rate-limit",
            "0",
            "--store",
            &store,
        ])
        .args(&publish_flags)
        .env("RUST_LOG", "warn")
        .spawn()?;
    let pid = server.id();
    let mut channels = Vec::new();
    for _ in 0..16 {
        let endpoint = Channel::from_shared(format!("http://127.0.0.1:{port}"))?;
        let mut tries = 0;
        let channel = loop {
            match endpoint.connect().await {
                Ok(c) => break c,
                Err(e) if tries < 50 => {
                    tries += 1;
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(e.into()),
            }
        };
        channels.push(channel);
    }
    println!(
        "load: {games} games x {seats} seats, paced to {rate} actions/s (0: unpaced), store {store}, against pid {pid} on port {port}"
    );
    // Lobby: create, join, subscribe, start.
    let mut tables = Vec::new();
    for g in 0..games {
        let mut client = Client::new(channels[g % channels.len()].clone());
        let options = pb::GameOptions {
            seats: seats as u32,
            single_round: true,
            ..Default::default()
        };
        let game = client
            .create_game(pb::CreateGameRequest {
                options: Some(options),
            })
            .await?
            .into_inner()
            .game
            .ok_or("no game")?;
        let mut tokens = Vec::new();
        for seat in 0..seats {
            let joined = client
                .join_game(pb::JoinGameRequest {
                    game: game.name.clone(),
                    seat: Some(seat as u32),
                    player_name: String::new(),
                    player: String::new(),
                })
                .await?
                .into_inner();
            tokens.push(joined.seat_token);
        }
        tables.push((game.name, tokens));
    }
    let timings = Arc::new(Mutex::new(Timings::default()));
    let mut tasks = Vec::new();
    let mut streams = Vec::new();
    for (g, (name, tokens)) in tables.iter().enumerate() {
        for (seat, token) in tokens.iter().enumerate() {
            let mut client = Client::new(channels[(g * seats + seat) % channels.len()].clone());
            let stream = client
                .subscribe(authed(
                    pb::SubscribeRequest {
                        game: name.clone(),
                        after_version: 0,
                        include_view: true,
                    },
                    token,
                ))
                .await?
                .into_inner();
            streams.push((g, seat, name.clone(), token.clone(), client, stream));
        }
    }
    let start = Instant::now();
    for (g, (name, tokens)) in tables.iter().enumerate() {
        let mut client = Client::new(channels[g % channels.len()].clone());
        client
            .start_game(authed(
                pb::StartGameRequest { game: name.clone() },
                &tokens[0],
            ))
            .await?;
    }
    // The schedule starts once every game is dealt, so no backlog of slots bursts out at once.
    let paced_from = Instant::now();
    let actions = Arc::new(std::sync::atomic::AtomicU64::new(0));
    for (g, seat, name, token, mut client, mut stream) in streams {
        let timings = timings.clone();
        let actions = actions.clone();
        let next_slot = next_slot.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = SmallRng::seed_from_u64((g * 16 + seat) as u64);
            while let Ok(Some(message)) = stream.message().await {
                use pb::event::Kind as E;
                use pb::subscribe_response::Kind;
                let now = Instant::now();
                let prompt = match message.kind {
                    Some(Kind::Event(e)) => {
                        if let Ok(mut t) = timings.lock() {
                            t.arrivals.insert((g, seat, e.version), now);
                        }
                        if matches!(e.kind, Some(E::MatchEnded(_))) {
                            return;
                        }
                        continue;
                    }
                    Some(Kind::Prompt(p)) => p,
                    _ => continue,
                };
                let legal: Vec<pb::Action> = prompt
                    .legal_actions
                    .into_iter()
                    .filter(|a| !matches!(a.kind, Some(pb::action::Kind::CatchUno(_))))
                    .collect();
                if legal.is_empty() {
                    continue;
                }
                let plays: Vec<&pb::Action> = legal
                    .iter()
                    .filter(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
                    .collect();
                let action = if !plays.is_empty() && rng.random_bool(0.9) {
                    plays[rng.random_range(0..plays.len())].clone()
                } else {
                    legal[rng.random_range(0..legal.len())].clone()
                };
                if interval_ns > 0 {
                    let slot =
                        next_slot.fetch_add(interval_ns, std::sync::atomic::Ordering::Relaxed);
                    tokio::time::sleep_until((paced_from + Duration::from_nanos(slot)).into())
                        .await;
                }
                let answer = client
                    .submit_action(authed(
                        pb::SubmitActionRequest {
                            game: name.clone(),
                            action: Some(action),
                            request_id: String::new(),
                            expected_version: Some(prompt.version),
                        },
                        &token,
                    ))
                    .await;
                if let Ok(answer) = answer {
                    let acked = Instant::now();
                    actions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if let Ok(mut t) = timings.lock() {
                        t.acks.push((g, answer.into_inner().version, acked));
                    }
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let elapsed = start.elapsed();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: unknown")
        .to_owned();
    // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second).
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    let server_cpu = ticks as f64 / 100.0;
    // The broker's lag: from each acknowledgement to its last event on NATS (waiting up to 60 s
    // for the publisher to finish).
    let broker_lag = if nats.is_some() {
        let wanted: Vec<(String, u64, Instant)> = timings
            .lock()
            .map_err(|_| "timings lock")?
            .acks
            .iter()
            .map(|&(g, v, acked)| (tables[g].0.clone(), v, acked))
            .collect();
        let waited = Instant::now();
        loop {
            let missing = {
                let a = broker_arrivals.lock().map_err(|_| "arrivals lock")?;
                wanted
                    .iter()
                    .filter(|(g, v, _)| !a.contains_key(&(g.clone(), *v)))
                    .count()
            };
            if missing == 0 || waited.elapsed() > Duration::from_secs(60) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let a = broker_arrivals.lock().map_err(|_| "arrivals lock")?;
        let mut lags: Vec<Duration> = wanted
            .iter()
            .filter_map(|(g, v, acked)| {
                Some(a.get(&(g.clone(), *v))?.saturating_duration_since(*acked))
            })
            .collect();
        lags.sort();
        Some((lags, wanted.len()))
    } else {
        None
    };
    let _ = server.kill();
    let _ = server.wait();
    if let Some((mut broker, _, dir)) = nats {
        let _ = broker.kill();
        let _ = broker.wait();
        let _ = std::fs::remove_dir_all(dir);
    }
    let t = timings.lock().map_err(|_| "timings lock")?;
    let mut latencies: Vec<Duration> = t
        .acks
        .iter()
        .filter_map(|&(g, v, acked)| {
            let last = (0..seats)
                .map(|s| t.arrivals.get(&(g, s, v)).copied())
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .max()?;
            Some(last.saturating_duration_since(acked))
        })
        .collect();
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    let n = actions.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{n} actions in {:.2} s: {:.0} actions/s; ack -> every subscriber: p50 {:.2} ms, p99 {:.2} ms ({} samples); server peak memory {}, server CPU {:.2} s",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64(),
        pct(0.5).as_secs_f64() * 1000.0,
        pct(0.99).as_secs_f64() * 1000.0,
        latencies.len(),
        peak.trim_start_matches("VmHWM:").trim(),
        server_cpu
    );
    if let Some((lags, wanted)) = broker_lag {
        let at = |p: f64| {
            lags.get(((lags.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or_default()
                .as_secs_f64()
                * 1000.0
        };
        println!(
            "published to NATS: ack -> event on the broker p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {} of {wanted} actions' events never came",
            at(0.5),
            at(0.99),
            at(1.0),
            wanted - lags.len()
        );
    }
    Ok(())
}

/// A `nats-server` with JetStream on a free port and a fresh directory: the process, its URL and
/// the directory.
async fn start_nats()
-> Result<(std::process::Child, String, std::path::PathBuf), Box<dyn std::error::Error>> {
    let binary = std::env::var("UNOFLIP_NATS_SERVER").unwrap_or_else(|_| "nats-server".into());
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let dir = std::env::temp_dir().join(format!("unoflip-load-nats-{}", std::process::id()));
    let child = std::process::Command::new(&binary)
        .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{binary}: {e} (LOAD_PUBLISH needs nats-server)"))?;
    let url = format!("nats://127.0.0.1:{port}");
    for _ in 0..200 {
        if async_nats::connect(url.as_str()).await.is_ok() {
            return Ok((child, url, dir));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("nats-server did not come up".into())
}
