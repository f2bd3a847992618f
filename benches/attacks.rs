//! Attacks on one real `unoflip serve` (release build, memory store, the shipped limits) while a
//! well-behaved client plays: it reads its seat's view every 5 ms and moves now and then, and
//! the bench reports that client's `GetView` latency (p50, p99, max) in each phase, with what
//! each attack achieved. Attackers come from other loopback addresses (127.x.y.z), as other
//! clients would.
//!
//! Phases: quiet; a request flood (GetDecks as fast as four connections can send); a stream
//! flood (2,000 `Subscribe` on one connection); a connection flood (3,000 connections from five
//! addresses, half idle, half sending half a preface); a `CreateGame` flood (eight connections); a firehose
//! flood (100 `SubscribeAll` from the start, over 2,000 unfinished games, read at once).
//!
//! `cargo bench --bench attacks` (`ATTACK_SECS`, each phase's length, default 3).

mod common;
#[path = "../tests/kit/mod.rs"]
mod kit;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::rss_kib;
use kit::{Client, Launch, Server, authed};
use tokio::io::AsyncWriteExt;
use unoflip::proto as pb;
type Error = Box<dyn std::error::Error + Send + Sync>;

const PHASES: [&str; 6] = [
    "quiet",
    "request flood",
    "stream flood",
    "connection flood",
    "CreateGame flood",
    "firehose flood",
];

/// Unfinished games on the server during the firehose flood.
const GAMES: usize = 2_000;

/// The label of a refusal in the tallies: its ErrorInfo reason, or its code when it has none
/// (a connection the server closed has no status of the server's).
fn refusal_label(status: &tonic::Status) -> String {
    use tonic_types::StatusExt;
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_else(|| format!("{:?} without a reason", status.code()))
}

/// The server under attack: release build, memory store, the shipped limits.
async fn start_server() -> Server {
    Server::launch(Launch {
        flags: &["--bot-delay-ms", "0"],
        unlimited: false,
        log_filter: "error,unoflip::cli::serve=info",
        ..Launch::default()
    })
    .await
}

fn options(seats: u32) -> pb::GameOptions {
    pb::GameOptions {
        ruleset: pb::Ruleset::Flip as i32,
        seats,
        ..Default::default()
    }
}

/// Creates, joins and starts a game of people; its name and seat tokens.
async fn started(client: &mut Client) -> Result<(String, Vec<String>), Error> {
    let game = client
        .create_game(pb::CreateGameRequest {
            options: Some(options(2)),
        })
        .await?
        .into_inner()
        .game
        .ok_or("no game")?
        .name;
    let mut tokens = Vec::new();
    for seat in 0..2 {
        tokens.push(
            client
                .join_game(pb::JoinGameRequest {
                    game: game.clone(),
                    seat: Some(seat),
                    player_name: format!("p{seat}"),
                    player: String::new(),
                })
                .await?
                .into_inner()
                .seat_token,
        );
    }
    client
        .start_game(authed(
            pb::StartGameRequest { game: game.clone() },
            &tokens[0],
        ))
        .await?;
    Ok((game, tokens))
}

/// Counts of outcomes by name.
#[derive(Default)]
struct Tally(std::collections::BTreeMap<String, usize>);

impl Tally {
    fn add(&mut self, outcome: String) {
        *self.0.entry(outcome).or_default() += 1;
    }
    fn merge(&mut self, other: Tally) {
        for (k, v) in other.0 {
            *self.0.entry(k).or_default() += v;
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{v} {k}")).collect();
        write!(f, "{}", parts.join(", "))
    }
}

/// The well-behaved client: reads its view every 5 ms (recording the latency under the current
/// phase), and plays a move every tenth read, until `stop`.
async fn player(
    mut client: Client,
    game: String,
    tokens: Vec<String>,
    phase: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> Result<Vec<Vec<Duration>>, Error> {
    let mut latencies = vec![Vec::new(); PHASES.len()];
    let mut i = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let token = &tokens[i % 2];
        let started = Instant::now();
        let view = client
            .get_view(authed(pb::GetViewRequest { game: game.clone() }, token))
            .await?
            .into_inner()
            .view
            .ok_or("no view")?;
        latencies[phase.load(Ordering::Relaxed)].push(started.elapsed());
        if i.is_multiple_of(10)
            && let Some(action) = view.legal_actions.first().cloned()
        {
            // Any legal action; a refusal (the other seat's turn moved on) is fine.
            let _ = client
                .submit_action(authed(
                    pb::SubmitActionRequest {
                        game: game.clone(),
                        action: Some(action),
                        expected_version: Some(view.version),
                        ..Default::default()
                    },
                    token,
                ))
                .await;
        }
        i += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(latencies)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// `connections` connections from `ip` each make `call` as fast as they can until `until`;
/// the outcomes.
async fn flood<F, Fut>(
    server: &Server,
    ip: &str,
    connections: usize,
    until: Instant,
    call: F,
) -> Result<Tally, Error>
where
    F: Fn(Client) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<&'static str, tonic::Status>> + Send,
{
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let client = server.client_from(ip).await;
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            while Instant::now() < until {
                match call(client.clone()).await {
                    Ok(done) => tally.add(done.into()),
                    Err(status) => tally.add(refusal_label(&status)),
                }
            }
            tally
        }));
    }
    let mut tally = Tally::default();
    for task in tasks {
        tally.merge(task.await?);
    }
    Ok(tally)
}

async fn request_flood(server: &Server, until: Instant) -> Result<Tally, Error> {
    flood(server, "127.0.3.1", 4, until, |mut client| async move {
        client.get_decks(pb::GetDecksRequest {}).await?;
        Ok("answered")
    })
    .await
}

async fn stream_flood(server: &Server, game: &str, until: Instant) -> Result<Tally, Error> {
    let client = server.client_from("127.0.4.1").await;
    let mut tally = Tally::default();
    let mut open = Vec::new();
    let mut asks = Vec::new();
    for _ in 0..2_000 {
        let mut client = client.clone();
        let game = game.to_owned();
        asks.push(tokio::spawn(async move {
            client
                .subscribe(pb::SubscribeRequest {
                    game,
                    after_version: 0,
                    include_view: false,
                })
                .await
        }));
    }
    for ask in asks {
        match ask.await? {
            Ok(stream) => {
                tally.add("opened".into());
                open.push(stream);
            }
            Err(status) => tally.add(refusal_label(&status)),
        }
    }
    tokio::time::sleep_until(until.into()).await;
    Ok(tally)
}

async fn connection_flood(server: &Server, until: Instant) -> Result<Tally, Error> {
    let mut sockets = Vec::new();
    let mut tally = Tally::default();
    for i in 0..3_000 {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(format!("127.0.5.{}:0", i / 600 + 1).parse()?)?;
        match socket
            .connect(SocketAddr::from(([127, 0, 0, 1], server.port)))
            .await
        {
            Ok(mut stream) => {
                if i % 2 == 1 {
                    let _ = stream.write_all(b"PRI * HTTP/2.0").await;
                }
                tally.add("connected".into());
                sockets.push(stream);
            }
            Err(error) => tally.add(format!("refused ({error})")),
        }
    }
    tokio::time::sleep_until(until.into()).await;
    // Which the server closed meanwhile: the surplus over the per-address limit (512) at once,
    // after a GOAWAY; the handshake timeout (10 s) closes the others later.
    let mut closed = 0;
    for socket in &sockets {
        // A refused one has its answer (a GOAWAY) to read, then the end.
        let mut buffer = [0u8; 512];
        loop {
            match socket.try_read(&mut buffer) {
                Ok(0) => {
                    closed += 1;
                    break;
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    closed += 1;
                    break;
                }
            }
        }
    }
    tally.0.insert(
        format!("closed by the server (of {})", sockets.len()),
        closed,
    );
    Ok(tally)
}

async fn create_flood(server: &Server, until: Instant) -> Result<Tally, Error> {
    flood(server, "127.0.6.1", 8, until, |mut client| async move {
        client
            .create_game(pb::CreateGameRequest {
                options: Some(options(4)),
            })
            .await?;
        Ok("created")
    })
    .await
}

/// Reads a firehose until it is caught up; the events it sent.
async fn until_caught_up(
    stream: &mut tonic::Streaming<pb::SubscribeAllResponse>,
) -> Result<usize, Error> {
    let mut events = 0;
    while let Some(message) = stream.message().await? {
        match message.kind {
            Some(pb::subscribe_all_response::Kind::Event(_)) => events += 1,
            Some(pb::subscribe_all_response::Kind::CaughtUp(_)) => return Ok(events),
            _ => {}
        }
    }
    Err("the firehose ended".into())
}

async fn firehose_flood(server: &Server, until: Instant) -> Result<Tally, Error> {
    let pid = server.pid();
    let mut clients = Vec::new();
    for i in 0..4 {
        clients.push(server.client_from(&format!("127.0.7.{}", i + 1)).await);
    }
    let before = rss_kib(pid);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..100 {
        let mut client = clients[i % 4].clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = client
                .subscribe_all(pb::SubscribeAllRequest { after_position: 0 })
                .await?
                .into_inner();
            let events = until_caught_up(&mut stream).await?;
            Ok::<_, Error>((events, stream))
        }));
    }
    let mut open = Vec::new();
    let mut events = 0;
    for task in tasks {
        let (n, stream) = task.await??;
        events += n;
        open.push(stream);
    }
    let caught_up = started.elapsed();
    let after = rss_kib(pid);
    let mut tally = Tally::default();
    tally.add(format!(
        "streams caught up ({events} events) in {:.2} s; RSS {} -> {} KiB, {:.1} KiB per stream",
        caught_up.as_secs_f64(),
        before,
        after,
        after.saturating_sub(before) as f64 / 100.0
    ));
    tokio::time::sleep_until(until.into()).await;
    drop(open);
    Ok(tally)
}

/// What one stream costs once the allocator is warm: 40 streams first, then 100 more, each
/// caught up from the start before the next opens; their growth per stream.
async fn firehose_per_stream(server: &Server) -> Result<f64, Error> {
    let pid = server.pid();
    let mut clients = Vec::new();
    for i in 0..4 {
        clients.push(server.client_from(&format!("127.0.8.{}", i + 1)).await);
    }
    let mut open = Vec::new();
    let mut before = 0;
    for i in 0..140 {
        if i == 40 {
            before = rss_kib(pid);
        }
        let mut stream = clients[i % 4]
            .subscribe_all(pb::SubscribeAllRequest { after_position: 0 })
            .await?
            .into_inner();
        until_caught_up(&mut stream).await?;
        open.push(stream);
    }
    Ok(rss_kib(pid).saturating_sub(before) as f64 / 100.0)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let secs = std::env::var("ATTACK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3u64);
    let server = start_server().await;
    let pid = server.pid();
    // The unfinished games, made from twenty addresses (each below the per-address limits).
    let mut makers = Vec::new();
    for a in 0..20 {
        let mut client = server.client_from(&format!("127.0.9.{}", a + 1)).await;
        makers.push(tokio::spawn(async move {
            for _ in 0..GAMES / 20 {
                started(&mut client).await?;
            }
            Ok::<_, Error>(())
        }));
    }
    for maker in makers {
        maker.await??;
    }
    let mut good = server.client_from("127.0.0.1").await;
    let (game, tokens) = started(&mut good).await?;
    let phase = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let playing = tokio::spawn(player(
        good.clone(),
        game.clone(),
        tokens,
        phase.clone(),
        stop.clone(),
    ));
    println!(
        "attacks: {GAMES} unfinished games, memory store, shipped limits; RSS {} KiB; {secs} s a phase",
        rss_kib(pid)
    );
    let mut results = Vec::new();
    for (i, name) in PHASES.iter().enumerate() {
        phase.store(i, Ordering::Relaxed);
        let until = Instant::now() + Duration::from_secs(secs);
        let tally = match i {
            0 => {
                tokio::time::sleep(Duration::from_secs(secs)).await;
                Tally::default()
            }
            1 => request_flood(&server, until).await?,
            2 => stream_flood(&server, &game, until).await?,
            3 => connection_flood(&server, until).await?,
            4 => create_flood(&server, until).await?,
            _ => firehose_flood(&server, until).await?,
        };
        results.push((name, tally, rss_kib(pid)));
        // Let the server settle between attacks.
        phase.store(0, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut latencies = playing.await??;
    println!(
        "{:<18} {:>6} {:>8} {:>8} {:>8}  {:>9}  attack",
        "phase", "views", "p50 ms", "p99 ms", "max ms", "RSS KiB"
    );
    for (i, (name, tally, rss)) in results.iter().enumerate() {
        let l = &mut latencies[i];
        l.sort();
        println!(
            "{:<18} {:>6} {:>8.2} {:>8.2} {:>8.2}  {:>9}  {}",
            name,
            l.len(),
            percentile(l, 0.5),
            percentile(l, 0.99),
            percentile(l, 1.0),
            rss,
            tally
        );
    }
    println!(
        "firehose memory per stream once warm (100 streams from the start over {GAMES} unfinished games): {:.1} KiB",
        firehose_per_stream(&server).await?
    );
    Ok(())
}
