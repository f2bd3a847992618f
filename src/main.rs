//! The `unoflip` binary: flags and wiring only.
//!
//! `unoflip serve` runs the gRPC server, `unoflip play` is a terminal client for a person, and
//! `unoflip arena` plays bots against bots.

#![deny(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use unoflip::arena::{self, ArenaConfig};
use unoflip::bots::Level;
use unoflip::rules::Ruleset;
use unoflip::service::{self, Config, Games, Limits};
use unoflip::store::{EventStore, MemoryStore, PostgresStore, SqliteStore};

#[derive(Parser)]
#[command(
    name = "unoflip",
    version,
    about = "A game server for UNO Flip and classic UNO"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum RulesetArg {
    /// UNO Flip.
    Flip,
    /// Classic UNO.
    Classic,
}

#[derive(Subcommand)]
enum Command {
    /// Plays games between bot levels in process and prints each level's round win rate and
    /// average score with 95% confidence intervals.
    Arena {
        /// Games (single rounds) to play.
        #[arg(long, default_value_t = 10_000)]
        games: usize,
        /// UNO Flip or classic.
        #[arg(long, value_enum, default_value = "flip")]
        ruleset: RulesetArg,
        /// One bot level per seat, comma separated; seats are rotated from game to game.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "heuristic,random,random,random"
        )]
        levels: Vec<Level>,
        /// Seed of the shuffles and the bots' choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Plays a game in the terminal against a server: creates one with bot seats, or joins one.
    Play {
        /// The server.
        #[arg(long, env = "UNOFLIP_SERVER", default_value = "http://127.0.0.1:50051")]
        server: String,
        /// Join this game (`games/{id}`) instead of creating one.
        #[arg(long)]
        game: Option<String>,
        /// The seat wanted when joining (the first open one when absent).
        #[arg(long)]
        seat: Option<u32>,
        /// Come back to a seat joined earlier (needs --game).
        #[arg(long, env = "UNOFLIP_SEAT_TOKEN")]
        token: Option<String>,
        /// Your name at the table.
        #[arg(long, default_value = "player")]
        name: String,
        /// The ruleset of a created game.
        #[arg(long, value_enum, default_value = "flip")]
        ruleset: RulesetArg,
        /// Seats of a created game.
        #[arg(long, default_value_t = 4)]
        seats: u32,
        /// Seats of a created game played by server bots (the last ones); all but yours when
        /// absent.
        #[arg(long)]
        bots: Option<u32>,
        /// Plain text: no colors, no screen clearing.
        #[arg(long)]
        no_color: bool,
    },
    /// Runs the gRPC server (grpc-web and CORS included).
    Serve {
        /// Address to listen on.
        #[arg(long, env = "UNOFLIP_LISTEN", default_value = "127.0.0.1:50051")]
        listen: SocketAddr,
        /// The admin token (fixed decks, exports of running games). None: no admin calls.
        #[arg(long, env = "UNOFLIP_ADMIN_TOKEN")]
        admin_token: Option<String>,
        /// Where games are kept: `sqlite:<path>` (an embedded file, created if missing),
        /// `postgres://...` (PostgreSQL, schema created at start) or `memory` (lost when the
        /// server stops).
        #[arg(long, env = "UNOFLIP_STORE", default_value = "sqlite:unoflip.sqlite3")]
        store: String,
        /// Seconds an idle stream waits before a heartbeat.
        #[arg(long, env = "UNOFLIP_HEARTBEAT_SECS", default_value_t = 15)]
        heartbeat_secs: u64,
        /// Messages buffered per stream.
        #[arg(long, env = "UNOFLIP_STREAM_BUFFER", default_value_t = 256)]
        stream_buffer: usize,
        /// Most games held at once.
        #[arg(long, env = "UNOFLIP_MAX_GAMES", default_value_t = 100_000)]
        max_games: usize,
        /// Requests handled at once per connection.
        #[arg(long, env = "UNOFLIP_CONCURRENCY", default_value_t = 256)]
        concurrency_per_connection: usize,
        /// Seconds a unary call may take.
        #[arg(long, env = "UNOFLIP_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
        request_timeout_secs: u64,
        /// Milliseconds a bot waits before each move, so that people can follow the game.
        #[arg(long, env = "UNOFLIP_BOT_DELAY_MS", default_value_t = 800)]
        bot_delay_ms: u64,
        /// Requests per second one connection may send (0: no limit).
        #[arg(long, env = "UNOFLIP_RATE_LIMIT", default_value_t = 1000)]
        rate_limit: u64,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Play {
            server,
            game,
            seat,
            token,
            name,
            ruleset,
            seats,
            bots,
            no_color,
        } => {
            let options = unoflip::play::PlayOptions {
                server,
                game,
                seat,
                token,
                name,
                classic: matches!(ruleset, RulesetArg::Classic),
                seats,
                bots,
                color: !no_color,
            };
            let input = tokio::io::BufReader::new(tokio::io::stdin());
            unoflip::play::run(options, input).await?;
        }
        Command::Arena {
            games,
            ruleset,
            levels,
            seed,
        } => arena(games, ruleset, levels, seed)?,
        Command::Serve {
            listen,
            admin_token,
            store,
            heartbeat_secs,
            stream_buffer,
            max_games,
            concurrency_per_connection,
            request_timeout_secs,
            rate_limit,
            bot_delay_ms,
        } => {
            let store: Arc<dyn EventStore> = if store == "memory" {
                Arc::new(MemoryStore::new())
            } else if let Some(path) = store.strip_prefix("sqlite:") {
                Arc::new(SqliteStore::open(std::path::Path::new(path))?)
            } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
                Arc::new(PostgresStore::connect(&store).await?)
            } else {
                return Err(format!(
                    "--store {store:?}: expected sqlite:<path>, postgres://... or memory"
                )
                .into());
            };
            let config = Config {
                admin_token,
                heartbeat: Duration::from_secs(heartbeat_secs.max(1)),
                stream_buffer,
                max_games,
                bot_delay: Duration::from_millis(bot_delay_ms),
            };
            let limits = Limits {
                concurrency_per_connection,
                request_timeout: Duration::from_secs(request_timeout_secs.max(1)),
                requests_per_second_per_connection: rate_limit,
            };
            let listener = tokio::net::TcpListener::bind(listen).await?;
            tracing::info!(address = %listener.local_addr()?, "unoflip serving");
            service::serve(
                listener,
                Games::new(store, config),
                limits,
                shutdown_signal(),
            )
            .await?;
            tracing::info!("unoflip stopped");
        }
    }
    Ok(())
}

/// Runs the arena with a progress bar on stderr and prints the table on stdout.
fn arena(
    games: usize,
    ruleset: RulesetArg,
    levels: Vec<Level>,
    seed: u64,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let ruleset = match ruleset {
        RulesetArg::Flip => Ruleset::Flip,
        RulesetArg::Classic => Ruleset::Classic,
    };
    let bar = indicatif::ProgressBar::new(games as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games, {per_sec}, eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let config = ArenaConfig {
        ruleset,
        levels: levels.clone(),
        games,
        seed,
    };
    let report = arena::run(&config, |done| {
        if done % 100 == 0 || done == games {
            bar.set_position(done as u64);
        }
    })?;
    bar.finish_and_clear();
    let names: Vec<&str> = levels.iter().map(|l| l.name()).collect();
    println!(
        "{games} games of {ruleset:?}, seats {} (rotated), seed {seed}",
        names.join(",")
    );
    println!(
        "{:<10} {:>10} {:>9} {:>19} {:>10} {:>21}",
        "level", "seat-games", "win rate", "95% CI", "avg score", "95% CI"
    );
    for l in &report.levels {
        println!(
            "{:<10} {:>10} {:>8.2}% {:>8.2}% .. {:>6.2}% {:>10.1} {:>9.1} .. {:>9.1}",
            l.level.name(),
            l.seat_games,
            100.0 * l.win_rate,
            100.0 * l.win_rate_ci.0,
            100.0 * l.win_rate_ci.1,
            l.mean_score,
            l.mean_score_ci.0,
            l.mean_score_ci.1
        );
    }
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("shutting down");
}
