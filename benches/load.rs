//! Load: many concurrent four-seat games against a real `unoflip serve` process on loopback,
//! every seat subscribed to its stream and acting when its turn comes (on the stream's Prompt,
//! choosing among the legal actions it lists, preferring to play a card, with
//! `expected_version` and, as the project's clients do, a new `request_id`;
//! `LOAD_REQUEST_IDS=0` sends none, as the figures before 2026-12-06 were measured).
//!
//! One run measures, one after the other on the same machine, every store in `LOAD_STORES`
//! (default `transport,memory,sqlite,postgres`) at every rate in `LOAD_RATES` (actions per
//! second across all games, default `0,12000`; 0 for as fast as the machine goes), and prints a
//! table with each store's ratio to the memory store at the same rate:
//! - acknowledged actions per second;
//! - the latency from an action's acknowledgement to its last event reaching every subscriber
//!   of the game (p50, p99);
//! - the server's CPU time per acknowledged action and its peak memory.
//!
//! `transport` is the baseline: the same clients against a bare tonic service (this benchmark's
//! own binary, started again as a server) that keeps no game and no store; it acknowledges each
//! action and sends its four subscribers an event each and the next seat a prompt, which is what
//! gRPC itself costs here. `postgres` uses a new, empty database on the server of
//! `UNOFLIP_TEST_POSTGRES` (default the local server), dropped after its run, as SQLite uses a
//! new file (the shared database itself if it cannot make one); it is skipped, saying so, when no
//! server answers there.
//!
//! Then the memory of idle games: `LOAD_IDLE_GAMES` (default 10000) started four-seat games,
//! every seat with an open stream, in a fresh server for each store in `LOAD_IDLE_STORES`
//! (default `memory,sqlite`: the memory store keeps every event and record in the server's
//! memory, the embedded store, `serve`'s default, keeps them on disk); it prints the server's
//! resident memory and what each game and each stream cost, and how long a `ListGames` call with
//! `open_only` takes among those games, none of them open (`LOAD_IDLE_GAMES=0` skips it all).
//!
//! `cargo bench --bench load` (`LOAD_GAMES`, default 1000; `LOAD_SEATS`, default 4;
//! `LOAD_SERVER_BIN`, another `unoflip` binary to measure, such as a build from before a change).
//!
//! `LOAD_ROUNDS` (default 1) measures it all that many times over, and then prints each store's
//! median ratio to the memory store of the same round, with their range: on a shared machine
//! whose speed drifts from minute to minute, one round's ratio can mislead.
//!
//! `LOAD_PUBLISH=1` also starts a `nats-server` of its own (`UNOFLIP_NATS_SERVER`, else
//! `nats-server` on the PATH) and the servers with `--publish`: a plain NATS subscription times
//! each event's arrival on the broker, and the report adds the lag from an action's
//! acknowledgement to its last event reaching NATS (p50, p99), and how many never came.

mod common;
#[path = "../tests/kit/mod.rs"]
mod kit;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::env;
use kit::authed;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use tonic::transport::Channel;
use unoflip::proto as pb;
use unoflip::proto::uno_flip_service_client::UnoFlipServiceClient;

type Client = UnoFlipServiceClient<Channel>;
type Error = Box<dyn std::error::Error + Send + Sync>;

/// Set (to a port) when this binary is started again as the transport baseline's server.
const ECHO_PORT: &str = "LOAD_ECHO_PORT";

/// Arrival times of each event version at each subscriber, and acknowledgement times.
#[derive(Default)]
struct Timings {
    acks: Vec<(usize, u64, Instant)>,
    arrivals: HashMap<(usize, usize, u64), Instant>,
}

fn list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// What one configuration measured.
struct Report {
    store: String,
    rate: usize,
    /// Which of the `LOAD_ROUNDS` it was measured in.
    round: usize,
    actions: u64,
    seconds: f64,
    p50_ms: f64,
    p99_ms: f64,
    peak: String,
    cpu_us_per_action: f64,
}

impl Report {
    fn per_second(&self) -> f64 {
        self.actions as f64 / self.seconds
    }
}

fn main() -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if let Ok(port) = std::env::var(ECHO_PORT) {
        return runtime.block_on(echo::serve(port.parse()?));
    }
    runtime.block_on(run())
}

async fn run() -> Result<(), Error> {
    let games = env("LOAD_GAMES", 1000);
    let seats = env("LOAD_SEATS", 4);
    let rates: Vec<usize> = list("LOAD_RATES", "0,12000")
        .iter()
        .filter_map(|r| r.parse().ok())
        .collect();
    let stores = list("LOAD_STORES", "transport,memory,sqlite,postgres");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load: {games} games x {seats} seats per run; stores {stores:?} at {rates:?} actions/s \
         (0: unpaced); load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let rounds = env("LOAD_ROUNDS", 1).max(1);
    let mut reports = Vec::new();
    for round in 0..rounds {
        for &rate in &rates {
            for store in &stores {
                match measure(store, rate, games, seats).await {
                    Ok(Some(report)) => reports.push(Report { round, ..report }),
                    Ok(None) => {}
                    Err(e) => println!("{store} at {rate}/s failed: {e}"),
                }
            }
        }
    }
    // Each store is compared with the memory store at the same rate in the same round: the two
    // ran minutes apart, on the same machine.
    let memory_of = |r: &Report| {
        reports
            .iter()
            .find(|m| m.store == "memory" && m.rate == r.rate && m.round == r.round)
    };
    println!();
    println!(
        "| store | paced at | actions/s | x memory | p50 ms | p99 ms | p99 x memory | server CPU us/action | x memory | server peak |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &reports {
        let memory = memory_of(r);
        let ratio = |f: &dyn Fn(&Report) -> f64| {
            memory
                .map(|m| format!("{:.2}", f(r) / f(m)))
                .unwrap_or_else(|| "-".into())
        };
        println!(
            "| {} | {} | {:.0} | {} | {:.2} | {:.2} | {} | {:.0} | {} | {} |",
            r.store,
            paced(r.rate),
            r.per_second(),
            ratio(&|r| r.per_second()),
            r.p50_ms,
            r.p99_ms,
            ratio(&|r| r.p99_ms),
            r.cpu_us_per_action,
            ratio(&|r| r.cpu_us_per_action),
            r.peak,
        );
    }
    if rounds > 1 {
        // On a noisy machine one round can mislead: the median of the rounds' ratios, and their
        // range.
        println!();
        println!(
            "{rounds} rounds, the median ratio to the memory store of the same round (range):"
        );
        println!("| store | paced at | actions/s x memory | p99 x memory | server CPU x memory |");
        println!("|---|---|---|---|---|");
        for &rate in &rates {
            for store in stores.iter().filter(|s| *s != "memory") {
                let ours: Vec<(&Report, &Report)> = reports
                    .iter()
                    .filter(|r| r.store == *store && r.rate == rate)
                    .filter_map(|r| Some((r, memory_of(r)?)))
                    .collect();
                if ours.is_empty() {
                    continue;
                }
                let spread = |f: &dyn Fn(&Report) -> f64| {
                    let mut v: Vec<f64> = ours.iter().map(|(r, m)| f(r) / f(m)).collect();
                    v.sort_by(f64::total_cmp);
                    let median = if v.len() % 2 == 1 {
                        v[v.len() / 2]
                    } else {
                        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
                    };
                    format!("{median:.2} ({:.2}-{:.2})", v[0], v[v.len() - 1])
                };
                println!(
                    "| {store} | {} | {} | {} | {} |",
                    paced(rate),
                    spread(&|r| r.per_second()),
                    spread(&|r| r.p99_ms),
                    spread(&|r| r.cpu_us_per_action),
                );
            }
        }
    }
    let idle = env("LOAD_IDLE_GAMES", 10_000);
    if idle > 0 {
        for store in list("LOAD_IDLE_STORES", "memory,sqlite") {
            println!();
            idle_memory(&store, idle, seats).await?;
        }
    }
    Ok(())
}

/// A rate as the tables show it.
fn paced(rate: usize) -> String {
    if rate == 0 {
        "unpaced".to_owned()
    } else {
        format!("{rate}/s")
    }
}

/// The process a measurement runs against (the game server, or this binary as the bare
/// transport), and what its store leaves behind: unlike the kit's `Server`, it may be the
/// transport baseline and starts quietly, so that logging costs nothing in the figures.
struct Measured {
    child: std::process::Child,
    port: u16,
    cleanup: Option<std::path::PathBuf>,
    /// PostgreSQL's database of this run, dropped once the server is stopped.
    _database: Option<kit::FreshPostgres>,
}

impl Drop for Measured {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.cleanup {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn free_port() -> Result<u16, Error> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Starts the server for `store` (`transport`, `memory`, `sqlite`, `postgres` or a store URL).
fn start(store: &str, extra: &[String]) -> Result<Measured, Error> {
    let port = free_port()?;
    if store == "transport" {
        let child = std::process::Command::new(std::env::current_exe()?)
            .env(ECHO_PORT, port.to_string())
            .spawn()?;
        return Ok(Measured {
            child,
            port,
            cleanup: None,
            _database: None,
        });
    }
    let mut cleanup = None;
    let mut database = None;
    let url = match store {
        "sqlite" => {
            let dir =
                std::env::temp_dir().join(format!("unoflip-load-{}-{}", std::process::id(), port));
            std::fs::create_dir_all(&dir)?;
            let url = format!("sqlite:{}", dir.join("load.sqlite3").display());
            cleanup = Some(dir);
            url
        }
        // A database of its own, empty, as SQLite's new file.
        "postgres" => {
            let (url, fresh) = kit::postgres_for_run();
            database = fresh;
            url
        }
        other => other.to_owned(),
    };
    // LOAD_SERVER_BIN: another build of the server (to compare before and after a change).
    let binary =
        std::env::var("LOAD_SERVER_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_unoflip").into());
    let child = std::process::Command::new(binary)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--max-games",
            "1000000",
            "--max-games-per-client",
            "1000000",
            // Many clients' streams over few connections.
            "--max-streams-per-connection",
            "1000000",
            // Every player comes from this one address.
            "--rate-limit",
            "0",
            "--join-rate-limit",
            "0",
            "--store",
            &url,
        ])
        .args(extra)
        .env("RUST_LOG", "warn")
        .spawn()?;
    Ok(Measured {
        child,
        port,
        cleanup,
        _database: database,
    })
}

/// `n` connections to the server, once it listens; `None` if it exited first.
async fn connect(server: &mut Measured, n: usize) -> Result<Option<Vec<Channel>>, Error> {
    let endpoint = Channel::from_shared(format!("http://127.0.0.1:{}", server.port))?;
    let mut channels = Vec::new();
    for _ in 0..n {
        let mut tries = 0;
        let channel = loop {
            match endpoint.connect().await {
                Ok(c) => break c,
                Err(_) if server.child.try_wait()?.is_some() => return Ok(None),
                Err(e) if tries >= 100 => return Err(e.into()),
                Err(_) => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        channels.push(channel);
    }
    Ok(Some(channels))
}

/// CPU seconds (user and system) process `pid` has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let (user, system) = common::user_system(&stat);
    user + system
}

/// Creates `games` games of `seats` seats and joins every seat: names and seat tokens.
async fn set_up(
    channels: &[Channel],
    games: usize,
    seats: usize,
) -> Result<Vec<(String, Vec<String>)>, Error> {
    let mut tasks = Vec::new();
    let per = games.div_ceil(channels.len());
    for (c, channel) in channels.iter().enumerate() {
        let mut client = Client::new(channel.clone());
        let count = per.min(games.saturating_sub(c * per));
        tasks.push(tokio::spawn(async move {
            let mut tables = Vec::new();
            for _ in 0..count {
                let game = client
                    .create_game(pb::CreateGameRequest {
                        options: Some(pb::GameOptions {
                            seats: seats as u32,
                            single_round: true,
                            ..Default::default()
                        }),
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
            Ok::<_, Error>(tables)
        }));
    }
    let mut tables = Vec::new();
    for task in tasks {
        tables.extend(task.await??);
    }
    Ok(tables)
}

/// One store at one rate: `None` when its server would not start (a missing PostgreSQL).
async fn measure(
    store: &str,
    rate: usize,
    games: usize,
    seats: usize,
) -> Result<Option<Report>, Error> {
    // With LOAD_PUBLISH: a broker of our own, and a subscription timing each event's arrival.
    let nats = if env("LOAD_PUBLISH", 0) == 1 && store != "transport" {
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
    let mut server = start(store, &publish_flags)?;
    let pid = server.child.id();
    let Some(channels) = connect(&mut server, 16).await? else {
        println!("{store}: SKIPPED, its server did not start (is the store there?)");
        return Ok(None);
    };
    // Each submission takes the next slot of a global schedule.
    let interval_ns = if rate == 0 {
        0
    } else {
        1_000_000_000 / rate as u64
    };
    let next_slot = Arc::new(AtomicU64::new(0));
    let request_ids = env("LOAD_REQUEST_IDS", 1) != 0;
    let tables = set_up(&channels, games, seats).await?;
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
    let cpu_before = cpu_seconds(pid);
    let start = Instant::now();
    // All at once, as a server under load meets them: one after another, the starts would add a
    // thousand store round trips (commits, with a durable store) to the measured time.
    let mut starts = tokio::task::JoinSet::new();
    for (g, (name, tokens)) in tables.iter().enumerate() {
        let mut client = Client::new(channels[g % channels.len()].clone());
        let request = authed(pb::StartGameRequest { game: name.clone() }, &tokens[0]);
        starts.spawn(async move { client.start_game(request).await });
    }
    while let Some(started) = starts.join_next().await {
        started??;
    }
    // The schedule starts once every game is dealt, so no backlog of slots bursts out at once.
    let paced_from = Instant::now();
    let actions = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    for (g, seat, name, token, mut client, mut stream) in streams {
        let timings = timings.clone();
        let actions = actions.clone();
        let refused = refused.clone();
        let next_slot = next_slot.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = SmallRng::seed_from_u64((g * 16 + seat) as u64);
            let mut submitted = 0u64;
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
                    let slot = next_slot.fetch_add(interval_ns, Ordering::Relaxed);
                    tokio::time::sleep_until((paced_from + Duration::from_nanos(slot)).into())
                        .await;
                }
                let answer = client
                    .submit_action(authed(
                        pb::SubmitActionRequest {
                            game: name.clone(),
                            action: Some(action),
                            // As the project's clients do: a new id for every action.
                            request_id: if request_ids {
                                submitted += 1;
                                format!("{g}-{seat}-{submitted}")
                            } else {
                                String::new()
                            },
                            expected_version: Some(prompt.version),
                        },
                        &token,
                    ))
                    .await;
                match answer {
                    Ok(answer) => {
                        let acked = Instant::now();
                        actions.fetch_add(1, Ordering::Relaxed);
                        if let Ok(mut t) = timings.lock() {
                            t.acks.push((g, answer.into_inner().version, acked));
                        }
                    }
                    // Any refusal. In the runs measured, each was a move on a prompt the game had
                    // already left behind ("expected version 39, the game is at 41").
                    Err(_) => {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let elapsed = start.elapsed();
    let peak = format!("{} kB", common::peak_kib(pid));
    let server_cpu = cpu_seconds(pid) - cpu_before;
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
    drop(server);
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
            .as_secs_f64()
            * 1000.0
    };
    let n = actions.load(Ordering::Relaxed);
    let refused = refused.load(Ordering::Relaxed);
    let report = Report {
        store: store.to_owned(),
        rate,
        round: 0,
        actions: n,
        seconds: elapsed.as_secs_f64(),
        p50_ms: pct(0.5),
        p99_ms: pct(0.99),
        peak,
        cpu_us_per_action: server_cpu * 1e6 / n.max(1) as f64,
    };
    println!(
        "{store} at {}: {n} actions in {:.2} s: {:.0} actions/s; ack -> every subscriber: p50 {:.2} ms, p99 {:.2} ms ({} samples); server peak memory {}, server CPU {:.2} s ({:.0} us/action); {refused} moves refused",
        paced(rate),
        report.seconds,
        report.per_second(),
        report.p50_ms,
        report.p99_ms,
        latencies.len(),
        report.peak,
        server_cpu,
        report.cpu_us_per_action,
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
    Ok(Some(report))
}

/// `games` started games of `seats` seats, every seat's stream open, in a fresh server on
/// `store`: its resident memory empty, with the games, and with the streams.
async fn idle_memory(store: &str, games: usize, seats: usize) -> Result<(), Error> {
    let mut server = start(store, &[])?;
    let pid = server.child.id();
    let channels = connect(&mut server, 64)
        .await?
        .ok_or_else(|| format!("the {store}-store server did not start"))?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let empty = common::rss_kib(pid);
    let tables = set_up(&channels, games, seats).await?;
    let mut tasks = Vec::new();
    for (c, chunk) in tables.chunks(games.div_ceil(channels.len())).enumerate() {
        let mut client = Client::new(channels[c].clone());
        let chunk = chunk.to_vec();
        tasks.push(tokio::spawn(async move {
            for (name, tokens) in chunk {
                client
                    .start_game(authed(pb::StartGameRequest { game: name }, &tokens[0]))
                    .await?;
            }
            Ok::<_, Error>(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let with_games = common::rss_kib(pid);
    // A client looking for a lobby to join, among many started games and none open.
    let mut client = Client::new(channels[0].clone());
    let calls: u32 = 20;
    let begun = Instant::now();
    for _ in 0..calls {
        let open = client
            .list_games(pb::ListGamesRequest {
                open_only: true,
                page_size: 0,
            })
            .await?
            .into_inner();
        if !open.games.is_empty() {
            return Err("a started game was listed as open".into());
        }
    }
    println!(
        "ListGames open_only, {store} store, {games} started games and no open lobby: {:.3} ms per call",
        begun.elapsed().as_secs_f64() * 1000.0 / f64::from(calls)
    );
    // Every seat's stream, each read up to its first prompt or event so it is surely open.
    let mut streams = Vec::new();
    for (g, (name, tokens)) in tables.iter().enumerate() {
        for (seat, token) in tokens.iter().enumerate() {
            let mut client = Client::new(channels[(g * seats + seat) % channels.len()].clone());
            let mut stream = client
                .subscribe(authed(
                    pb::SubscribeRequest {
                        game: name.clone(),
                        after_version: 0,
                        include_view: false,
                    },
                    token,
                ))
                .await?
                .into_inner();
            stream.message().await?.ok_or("a stream ended")?;
            streams.push(stream);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let with_streams = common::rss_kib(pid);
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "idle memory, {store} store: server RSS {:.1} MiB empty, {:.1} MiB with {games} started games ({:.2} KiB per game), {:.1} MiB with {} open streams ({:.2} KiB per stream)",
        mib(empty),
        mib(with_games),
        with_games.saturating_sub(empty) as f64 / games as f64,
        mib(with_streams),
        streams.len(),
        with_streams.saturating_sub(with_games) as f64 / streams.len().max(1) as f64,
    );
    drop(streams);
    drop(server);
    Ok(())
}

/// A `nats-server` with JetStream on a free port and a fresh directory: the process, its URL and
/// the directory.
async fn start_nats() -> Result<(std::process::Child, String, std::path::PathBuf), Error> {
    let binary = std::env::var("UNOFLIP_NATS_SERVER").unwrap_or_else(|_| "nats-server".into());
    let port = free_port()?;
    let dir = std::env::temp_dir().join(format!("unoflip-load-nats-{}-{port}", std::process::id()));
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

/// The transport baseline: a bare tonic service with no game and no store. It takes the load's
/// lobby calls, then for each action acknowledges it, sends every subscriber of the game one
/// event and the next seat a prompt, and ends the game after `LOAD_ECHO_ACTIONS` actions
/// (default 80, about a real single round's length).
mod echo {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use tokio::sync::mpsc;
    use tokio_stream::wrappers::ReceiverStream;
    use tonic::{Request, Response, Status};

    /// The service's messages and a server trait with default methods (built by `build.rs`).
    #[allow(missing_docs, clippy::all)]
    mod pb {
        include!(concat!(env!("OUT_DIR"), "/stubbed/unoflip.v1.rs"));
    }
    use pb::uno_flip_service_server::{UnoFlipService, UnoFlipServiceServer};

    type Sender = mpsc::Sender<Result<pb::SubscribeResponse, Status>>;

    #[derive(Default)]
    struct Table {
        seats: u32,
        version: u64,
        turn: u32,
        streams: HashMap<u32, Sender>,
    }

    #[derive(Clone, Default)]
    struct Echo {
        tables: Arc<Mutex<HashMap<String, Table>>>,
        next: Arc<Mutex<u64>>,
        length: u64,
    }

    fn seat_of(request: &Request<impl Sized>) -> Result<u32, Status> {
        request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .and_then(|v| v.rsplit('-').next())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| Status::unauthenticated("no seat token"))
    }

    fn prompt(version: u64) -> pb::SubscribeResponse {
        let play = pb::Action {
            kind: Some(pb::action::Kind::PlayCard(pb::PlayCard {
                card: 7,
                ..Default::default()
            })),
        };
        let draw = pb::Action {
            kind: Some(pb::action::Kind::DrawCard(pb::DrawCard {})),
        };
        pb::SubscribeResponse {
            kind: Some(pb::subscribe_response::Kind::Prompt(pb::Prompt {
                version,
                legal_actions: vec![play, draw],
                turn_deadline: None,
            })),
        }
    }

    fn event(version: u64, seat: u32, last: bool) -> pb::Event {
        let kind = if last {
            pb::event::Kind::MatchEnded(pb::MatchEnded {
                winners: vec![seat],
            })
        } else {
            pb::event::Kind::CardPlayed(pb::CardPlayed {
                seat,
                card: Some(pb::Card {
                    id: 7,
                    ..Default::default()
                }),
                color: 0,
                uno: false,
            })
        };
        pb::Event {
            version,
            kind: Some(kind),
        }
    }

    #[tonic::async_trait]
    impl UnoFlipService for Echo {
        async fn create_game(
            &self,
            request: Request<pb::CreateGameRequest>,
        ) -> Result<Response<pb::CreateGameResponse>, Status> {
            let seats = request.into_inner().options.map(|o| o.seats).unwrap_or(4);
            let name = {
                let mut next = self.next.lock().map_err(|_| Status::internal("lock"))?;
                *next += 1;
                format!("games/{next}")
            };
            self.tables
                .lock()
                .map_err(|_| Status::internal("lock"))?
                .insert(
                    name.clone(),
                    Table {
                        seats,
                        ..Table::default()
                    },
                );
            Ok(Response::new(pb::CreateGameResponse {
                game: Some(pb::Game {
                    name,
                    ..Default::default()
                }),
            }))
        }

        async fn join_game(
            &self,
            request: Request<pb::JoinGameRequest>,
        ) -> Result<Response<pb::JoinGameResponse>, Status> {
            let r = request.into_inner();
            Ok(Response::new(pb::JoinGameResponse {
                seat_token: format!("{}-{}", r.game, r.seat.unwrap_or(0)),
                ..Default::default()
            }))
        }

        async fn subscribe(
            &self,
            request: Request<pb::SubscribeRequest>,
        ) -> Result<Response<tonic::codegen::BoxStream<pb::SubscribeResponse>>, Status> {
            let seat = seat_of(&request)?;
            let game = request.into_inner().game;
            let (tx, rx) = mpsc::channel(64);
            self.tables
                .lock()
                .map_err(|_| Status::internal("lock"))?
                .get_mut(&game)
                .ok_or_else(|| Status::not_found("no such game"))?
                .streams
                .insert(seat, tx);
            Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
        }

        async fn start_game(
            &self,
            request: Request<pb::StartGameRequest>,
        ) -> Result<Response<pb::StartGameResponse>, Status> {
            let game = request.into_inner().game;
            let first = {
                let tables = self.tables.lock().map_err(|_| Status::internal("lock"))?;
                let table = tables
                    .get(&game)
                    .ok_or_else(|| Status::not_found("no such game"))?;
                table.streams.get(&0).cloned()
            };
            if let Some(first) = first {
                let _ = first.send(Ok(prompt(0))).await;
            }
            Ok(Response::new(pb::StartGameResponse::default()))
        }

        async fn submit_action(
            &self,
            request: Request<pb::SubmitActionRequest>,
        ) -> Result<Response<pb::SubmitActionResponse>, Status> {
            let seat = seat_of(&request)?;
            let game = request.into_inner().game;
            let (version, last, streams, next) = {
                let mut tables = self.tables.lock().map_err(|_| Status::internal("lock"))?;
                let table = tables
                    .get_mut(&game)
                    .ok_or_else(|| Status::not_found("no such game"))?;
                if table.turn != seat {
                    return Err(Status::failed_precondition("not your turn"));
                }
                table.version += 1;
                table.turn = (table.turn + 1) % table.seats.max(1);
                let streams: Vec<(u32, Sender)> =
                    table.streams.iter().map(|(s, t)| (*s, t.clone())).collect();
                (
                    table.version,
                    table.version >= self.length,
                    streams,
                    table.turn,
                )
            };
            let e = event(version, seat, last);
            for (s, stream) in &streams {
                let message = pb::SubscribeResponse {
                    kind: Some(pb::subscribe_response::Kind::Event(e.clone())),
                };
                let _ = stream.send(Ok(message)).await;
                if !last && *s == next {
                    let _ = stream.send(Ok(prompt(version))).await;
                }
            }
            Ok(Response::new(pb::SubmitActionResponse {
                version,
                events: vec![e],
            }))
        }
    }

    /// Serves on `port` until killed.
    pub async fn serve(port: u16) -> Result<(), super::Error> {
        let echo = Echo {
            length: super::env("LOAD_ECHO_ACTIONS", 80) as u64,
            ..Echo::default()
        };
        tonic::transport::Server::builder()
            .add_service(UnoFlipServiceServer::new(echo))
            .serve(([127, 0, 0, 1], port).into())
            .await?;
        Ok(())
    }
}
