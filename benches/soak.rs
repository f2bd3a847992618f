//! Soak: many short all-bot games through one real `unoflip serve` process, to show that finished
//! games leave memory. Each game has two server-played seats and one round; with no bot delay,
//! `CreateGame` answers when the bots have played it out, and the game's task stops
//! `--keep-finished` (100 ms here) later.
//!
//! While the games run it samples the server's live game count (from its debug log) and its
//! resident memory (`VmRSS`), and prints the curve; at the end it reports the resident memory
//! after warm-up: its least and greatest, and their spread. Warm-up is the first 10% of the
//! games, and on the memory store, which keeps the games that finished last up to its bound
//! (10,000 by default), at least twice its bound: it holds as much as it ever will once it has
//! filled, and its allocator has settled once it has turned its games over. There the bench also
//! reports the growth per game after warm-up beside the bytes of one game's stored log.
//!
//! `cargo bench --bench soak` (`SOAK_GAMES`, default 100000; `SOAK_STORES`, default
//! `memory,sqlite`, any store URL; `SOAK_CLIENTS`, games in flight, default 32;
//! `SOAK_KEEP_FINISHED`, default `100ms`).

mod common;
#[path = "../tests/kit/mod.rs"]
mod kit;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{env, rss_kib};
use kit::{Launch, Server};
use unoflip::proto as pb;
type Error = Box<dyn std::error::Error + Send + Sync>;

/// How long a finished game's task stays (`SOAK_KEEP_FINISHED`, default `100ms`): short, so
/// that the live games are a few hundred and steady and the resident memory shows what the
/// games played leave behind (with `1s` at several thousand games a second the live count, and
/// the memory with it, follows the rate).
fn keep_finished() -> String {
    std::env::var("SOAK_KEEP_FINISHED").unwrap_or_else(|_| "100ms".into())
}

/// `unoflip serve` on `store`, its games played out at once and let go of soon after.
async fn start_server(store: &str) -> Server {
    let keep = keep_finished();
    Server::launch(Launch {
        store,
        flags: &[
            "--bot-delay-ms",
            "0",
            "--keep-finished",
            &keep,
            "--max-games",
            "1000000",
            "--max-games-per-client",
            "1000000",
        ],
        log_filter: "warn,unoflip::cli::serve=debug",
        ..Launch::default()
    })
    .await
}

/// The live game count the server last logged.
fn live_games(server: &Server) -> usize {
    server.live_games_since(0).unwrap_or(0)
}

/// How many finished games a memory store URL keeps (0 for other stores).
fn memory_bound(store: &str) -> usize {
    match store.strip_prefix("memory") {
        Some("") => unoflip::store::KEEP_FINISHED_GAMES,
        Some(query) => query
            .strip_prefix("?keep-finished-games=")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        None => 0,
    }
}

/// One sample of the curve.
struct Sample {
    at: Duration,
    games: usize,
    live: usize,
    rss_kib: u64,
}

async fn soak(store: &str, games: usize, clients: usize) -> Result<(), Error> {
    let server = start_server(store).await;
    let pid = server.pid();
    let client = server.client().await;
    println!("soak: {games} two-bot single-round games, {clients} in flight, store {store}");
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients {
        let mut client = client.clone();
        let done = done.clone();
        workers.push(tokio::spawn(async move {
            let mut last = None;
            while done.fetch_add(1, Ordering::Relaxed) < games {
                let game = client
                    .create_game(pb::CreateGameRequest {
                        options: Some(pb::GameOptions {
                            seats: 2,
                            bot_seats: vec![0, 1],
                            single_round: true,
                            ..Default::default()
                        }),
                    })
                    .await?
                    .into_inner()
                    .game
                    .ok_or("no game in the answer")?;
                if game.status != pb::GameStatus::Finished as i32 {
                    return Err(format!("{} answered unfinished: {game:?}", game.name).into());
                }
                last = Some(game.name);
            }
            Ok::<_, Error>(last)
        }));
    }
    let mut samples = Vec::new();
    let step = (games / 20).max(1);
    let mut next_print = 0;
    while workers.iter().any(|w| !w.is_finished()) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let sample = Sample {
            at: started.elapsed(),
            games: done.load(Ordering::Relaxed).min(games),
            live: live_games(&server),
            rss_kib: rss_kib(pid),
        };
        if sample.games >= next_print {
            println!(
                "  {:>7.1} s  {:>7} games  {:>6} live  RSS {:>7.1} MiB",
                sample.at.as_secs_f64(),
                sample.games,
                sample.live,
                sample.rss_kib as f64 / 1024.0
            );
            next_print = sample.games + step;
        }
        samples.push(sample);
    }
    let mut one_game = None;
    for worker in workers {
        if let Some(name) = worker.await?? {
            one_game = Some(name);
        }
    }
    let elapsed = started.elapsed();
    // Let the last games leave.
    let mut waited = 0;
    while live_games(&server) > 0 && waited < 100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    let end_rss = rss_kib(pid);
    println!(
        "{games} games in {:.1} s: {:.0} games/s; {} live at the end; RSS at the end {:.1} MiB",
        elapsed.as_secs_f64(),
        games as f64 / elapsed.as_secs_f64(),
        live_games(&server),
        end_rss as f64 / 1024.0
    );
    let warm_up = (games / 10).max(2 * memory_bound(store));
    println!("warm-up: the first {warm_up} games");
    let warm: Vec<&Sample> = samples.iter().filter(|s| s.games >= warm_up).collect();
    let (Some(least), Some(most)) = (
        warm.iter().map(|s| s.rss_kib).min(),
        warm.iter().map(|s| s.rss_kib).max(),
    ) else {
        println!("too few samples after warm-up");
        return Ok(());
    };
    let peak_live = samples.iter().map(|s| s.live).max().unwrap_or(0);
    println!(
        "after warm-up: RSS {:.1} to {:.1} MiB (spread {:.1}% of the least); peak live games {peak_live}",
        least as f64 / 1024.0,
        most as f64 / 1024.0,
        (most - least) as f64 * 100.0 / least as f64
    );
    if store.starts_with("memory")
        && let (Some(first), Some(last), Some(name)) = (warm.first(), warm.last(), one_game)
    {
        let mut client = client.clone();
        let events = client
            .export_game(pb::ExportGameRequest { game: name })
            .await?
            .into_inner()
            .events;
        let stored: usize = events.iter().map(|e| e.json.len()).sum();
        let per_game = (last.rss_kib as f64 - first.rss_kib as f64) * 1024.0
            / (last.games - first.games) as f64;
        println!(
            "memory store: RSS grows {per_game:.0} bytes per game after warm-up; one game's log is {} events, {stored} bytes of JSON (the store keeps the last {} finished games)",
            events.len(),
            memory_bound(store)
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let games = env("SOAK_GAMES", 100_000);
    let clients = env("SOAK_CLIENTS", 32).max(1);
    let stores = std::env::var("SOAK_STORES").unwrap_or_else(|_| "memory,sqlite".into());
    for store in stores.split(',').filter(|s| !s.is_empty()) {
        let url = if store == "sqlite" {
            let dir = std::env::temp_dir().join(format!("unoflip-soak-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            format!("sqlite:{}", dir.join("soak.sqlite3").display())
        } else {
            store.to_owned()
        };
        soak(&url, games, clients).await?;
    }
    Ok(())
}
