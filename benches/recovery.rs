//! Recovery: the time a restarted server takes to rebuild every unfinished game from an SQLite
//! file. Fills a fresh file with `RECOVERY_GAMES` (default 10,000) started four-seat games with
//! `RECOVERY_MOVES` (default 20) moves each, then times `Registry::recover` on a new server, once
//! with the snapshots the server took (every 256 events) and once with them deleted (every log
//! folded from its first event).
//!
//! `cargo bench --bench recovery`; long logs: `RECOVERY_GAMES=1000 RECOVERY_MOVES=1000 cargo
//! bench --bench recovery`

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::env;
use unoflip::proto as pb;
use unoflip::rules::{Action, Color, Viewer};
use unoflip::service::{Config, Registry, grpc::convert};
use unoflip::store::SqliteStore;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let games_n = env("RECOVERY_GAMES", 10_000);
    let moves = env("RECOVERY_MOVES", 20);
    let dir = std::env::temp_dir().join(format!("unoflip-recovery-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("games.sqlite3");
    let fill = Instant::now();
    {
        let games = Registry::new(Arc::new(SqliteStore::open(&path)?), Config::default());
        let mut tasks = Vec::new();
        for _ in 0..games_n {
            let games = games.clone();
            tasks.push(tokio::spawn(async move {
                let options = pb::GameOptions {
                    seats: 4,
                    ..Default::default()
                };
                let created = games
                    .create(convert::new_game(&options)?, false, None)
                    .await?;
                let handle = created.name;
                let mut tokens = Vec::new();
                for seat in 0..4 {
                    tokens.push(games.join(&handle, Some(seat), "p", None).await?.1);
                }
                games.start(&handle, Some(&tokens[0])).await?;
                for _ in 0..moves {
                    let (v, _) = games.view(&handle, Viewer::Spectator).await?;
                    let v = convert::view(&handle, &v, None);
                    let action = match pb::Awaiting::try_from(v.awaiting) {
                        Ok(pb::Awaiting::Play) => Action::Draw,
                        Ok(pb::Awaiting::PlayOrKeepDrawn) => Action::Keep,
                        Ok(pb::Awaiting::Penalty) => Action::Accept,
                        Ok(pb::Awaiting::ChooseColor) if v.side == pb::Side::Dark as i32 => {
                            Action::ChooseColor { color: Color::Pink }
                        }
                        Ok(pb::Awaiting::ChooseColor) => Action::ChooseColor { color: Color::Red },
                        _ => break,
                    };
                    let token = Some(tokens[v.turn as usize].as_str());
                    games
                        .submit(&handle, token, action, String::new(), None)
                        .await?;
                }
                Ok::<_, unoflip::service::ServiceError>(())
            }));
        }
        for task in tasks {
            task.await??;
        }
    }
    println!(
        "filled {games_n} games with {moves} moves each in {:.2} s",
        fill.elapsed().as_secs_f64()
    );
    let events: i64 =
        rusqlite::Connection::open(&path)?
            .query_row("SELECT COUNT(*) FROM events", [], |row| row.get(0))?;
    for with_snapshots in [true, false] {
        if !with_snapshots {
            rusqlite::Connection::open(&path)?.execute("DELETE FROM snapshots", [])?;
        }
        let games = Registry::new(Arc::new(SqliteStore::open(&path)?), Config::default());
        let start = Instant::now();
        let recovered = games.recover().await?;
        let took = start.elapsed();
        let size = std::fs::metadata(&path)?.len();
        println!(
            "{} snapshots: recovered {recovered} unfinished games ({events} events) in {:.2} s ({:.0} games/s); file {:.1} MB",
            if with_snapshots { "with" } else { "without" },
            took.as_secs_f64(),
            recovered as f64 / took.as_secs_f64(),
            size as f64 / 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
