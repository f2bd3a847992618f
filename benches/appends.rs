//! Appends: each store alone, with no gRPC and no service. `APPENDS_GAMES` (default 1000)
//! four-seat UNO Flip games, each a task of its own, play `APPENDS_MOVES` (default 100) moves
//! each and append every move's events with the version they expect, as the service does, all
//! at once. Prints, for each store in `APPENDS_STORES` (default `memory,sqlite,postgres`), the
//! appends per second and the process's CPU per append, split between the thread that commits
//! (SQLite's writer) and the rest, and between user and system (kernel) time; for PostgreSQL on
//! this machine, also the CPU per append of its server's processes (the backends serving the
//! store's connections, its WAL writer, checkpointer and the rest, whatever else they serve
//! meanwhile). Every move's append carries a new request id, as a move from the project's
//! clients does (`APPENDS_REQUEST_IDS=0` for none, as the figures before 2026-12-07 were
//! measured).
//!
//! `cargo bench --bench appends`. Every store starts empty: SQLite in a new file, PostgreSQL in a
//! new database on the server of `UNOFLIP_TEST_POSTGRES` (default the local server), dropped
//! after (the shared database itself if it cannot make one); `postgres` is skipped, saying so,
//! when no server answers there.

mod common;
#[path = "../tests/kit/mod.rs"]
mod kit;

use std::sync::Arc;
use std::time::Instant;

use common::{env, user_system};
use kit::{FreshPostgres, postgres_for_run};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use unoflip::rules::{Action, Game, Ruleset, Setup};
use unoflip::store::{EventStore, MemoryStore, PostgresStore, SqliteStore};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// This process's CPU seconds (user, system) in all, from `/proc/self/stat`.
fn process_cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    user_system(&stat)
}

/// The CPU seconds (user, system) of the tasks under `dir` (`/proc` or `/proc/self/task`)
/// named `name`.
fn cpu_named(dir: &str, name: &str) -> (f64, f64) {
    let mut out = (0.0, 0.0);
    let Ok(tasks) = std::fs::read_dir(dir) else {
        return out;
    };
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            let (user, system) = user_system(&stat);
            out.0 += user;
            out.1 += system;
        }
    }
    out
}

/// The CPU seconds of SQLite's writer thread.
fn writer_cpu() -> (f64, f64) {
    cpu_named("/proc/self/task", "unoflip-sqlite")
}

/// The CPU seconds of this machine's PostgreSQL server processes (none when it runs elsewhere).
fn postgres_cpu() -> (f64, f64) {
    cpu_named("/proc", "postgres")
}

/// The store named `store`, new and empty (SQLite in `dir`, PostgreSQL in a database of its
/// own, dropped with the guard); `None` when PostgreSQL is not there.
async fn open(
    store: &str,
    dir: &std::path::Path,
) -> Result<Option<(Arc<dyn EventStore>, Option<FreshPostgres>)>, Error> {
    Ok(Some(match store {
        "memory" => (Arc::new(MemoryStore::new()), None),
        "sqlite" => (
            Arc::new(SqliteStore::open(&dir.join("appends.sqlite3"))?),
            None,
        ),
        "postgres" => {
            let (url, database) = postgres_for_run();
            match PostgresStore::connect(&url).await {
                Ok(store) => (Arc::new(store), database),
                Err(e) => {
                    println!("postgres: SKIPPED, no server at {url}: {e}");
                    return Ok(None);
                }
            }
        }
        other => return Err(format!("unknown store {other}").into()),
    }))
}

/// Plays `moves` moves of a new game, appending each move's events to `store`, with a request
/// id each if `request_ids`.
async fn play(
    store: Arc<dyn EventStore>,
    name: String,
    seed: u64,
    moves: usize,
    request_ids: bool,
) -> usize {
    let mut rng = SmallRng::seed_from_u64(seed);
    let Ok((mut game, log)) = Game::new(&Setup::new(Ruleset::Flip, 4), &mut rng) else {
        return 0;
    };
    let Ok(mut version) = store.append(&name, 0, &log, None).await else {
        return 0;
    };
    let mut appends = 0;
    for n in 0..moves {
        if game.is_over() {
            break;
        }
        let seat = game.turn();
        let legal = game.legal_actions(seat);
        let action = legal
            .iter()
            .copied()
            .find(|a| matches!(a, Action::Play { .. }))
            .or_else(|| legal.first().copied());
        let Some(action) = action else { break };
        let Ok(events) = game.act(seat, action, &mut rng) else {
            break;
        };
        let request = request_ids.then(|| format!("{seat}/m{n}"));
        match store
            .append(&name, version, &events, request.as_deref())
            .await
        {
            Ok(v) => version = v,
            Err(_) => break,
        }
        appends += 1;
    }
    appends
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let games = env("APPENDS_GAMES", 1000);
    let moves = env("APPENDS_MOVES", 100);
    let request_ids = env("APPENDS_REQUEST_IDS", 1) != 0;
    let stores =
        std::env::var("APPENDS_STORES").unwrap_or_else(|_| "memory,sqlite,postgres".into());
    let run = std::process::id();
    println!(
        "appends: {games} games x {moves} moves per store, {} request ids",
        if request_ids { "with" } else { "without" }
    );
    println!(
        "| store | appends/s | user CPU us/append | system | SQLite's writer thread: user | system \
         | PostgreSQL server: user | system |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for store_name in stores.split(',').filter(|s| !s.is_empty()) {
        let dir = std::env::temp_dir().join(format!("unoflip-appends-{run}-{store_name}"));
        std::fs::create_dir_all(&dir)?;
        let Some((store, database)) = open(store_name, &dir).await? else {
            continue;
        };
        let (before, writer_before, server_before) = (process_cpu(), writer_cpu(), postgres_cpu());
        let start = Instant::now();
        let tasks: Vec<_> = (0..games)
            .map(|g| {
                let name = format!("games/appends-{run}-{store_name}-{g}");
                tokio::spawn(play(store.clone(), name, g as u64, moves, request_ids))
            })
            .collect();
        let mut appends = 0;
        for task in tasks {
            appends += task.await.unwrap_or(0);
        }
        let seconds = start.elapsed().as_secs_f64();
        let (after, writer_after, server_after) = (process_cpu(), writer_cpu(), postgres_cpu());
        let per = |seconds: f64| format!("{:.1}", seconds * 1e6 / appends.max(1) as f64);
        // User and system time per append between two readings, for `only` store ("-" for the
        // others).
        let spent = |only: &str, before: (f64, f64), after: (f64, f64)| {
            if store_name == only {
                (per(after.0 - before.0), per(after.1 - before.1))
            } else {
                ("-".to_owned(), "-".to_owned())
            }
        };
        // Only the SQLite store commits on a thread of its own (the writer of an earlier store
        // in the list may have ended in between), and only PostgreSQL has a server.
        let (writer_user, writer_system) = spent("sqlite", writer_before, writer_after);
        let (server_user, server_system) = spent("postgres", server_before, server_after);
        let (user, system) = spent(store_name, before, after);
        println!(
            "| {store_name} | {:.0} | {user} | {system} | {writer_user} | {writer_system} \
             | {server_user} | {server_system} |",
            appends as f64 / seconds,
        );
        // The store first: its connections end before its database is dropped.
        drop(store);
        drop(database);
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}
