//! The `unoflip` binary: flags and wiring only.
//!
//! `unoflip serve` runs the gRPC server, `unoflip play` is a terminal client for a person, and
//! `unoflip arena` plays bots against bots.

#![deny(clippy::unwrap_used)]

use clap::{Parser, Subcommand, ValueEnum};
use unoflip::bots::Level;
use unoflip::cli::arena::{self, ArenaConfig};
use unoflip::cli::serve::{self, ServeArgs};
use unoflip::rules::Ruleset;

/// mimalloc rather than the system's allocator: a long-running server frees games of every size
/// in the order they finish, and mimalloc gives that memory back to new games where glibc's
/// heap keeps growing into a higher water mark (the soak bench shows both).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        /// Milliseconds the expert thinks per move.
        #[arg(long, default_value_t = 50)]
        expert_ms: u64,
        /// Playouts the expert makes per move at most (its time still bounds it).
        #[arg(long)]
        expert_playouts: Option<u32>,
        /// The expert ignores the faces the table shows of hidden cards (V-2, V-3) when it
        /// deals its worlds: to measure what reading them is worth.
        #[arg(long)]
        expert_blind: bool,
        /// The expert's worlds ignore what draws suggest (that a seat which drew on its turn
        /// could not play the cards it held): to measure what that guess is worth.
        #[arg(long)]
        expert_ignore_draws: bool,
        /// Games played at once, one per thread (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
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
        /// How the bots of a created game play: random, heuristic or expert.
        #[arg(long, default_value = "heuristic")]
        bot_level: Level,
        /// Plain text: no colors, no screen clearing (also when the output is not a terminal,
        /// or NO_COLOR is set).
        #[arg(long)]
        no_color: bool,
    },
    /// Runs the gRPC server (grpc-web and CORS included).
    Serve(Box<ServeArgs>),
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // Said plainly, not as a debug dump.
        Err(e) => {
            eprintln!("unoflip: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colors only on a terminal: a log file or a pipe gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
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
            bot_level,
            no_color,
        } => {
            let options = unoflip::cli::play::PlayOptions {
                server,
                game,
                seat,
                token,
                name,
                classic: matches!(ruleset, RulesetArg::Classic),
                seats,
                bots,
                bot_level,
                color: unoflip::cli::play::colors_wanted(no_color),
            };
            let input = tokio::io::BufReader::new(tokio::io::stdin());
            unoflip::cli::play::run(options, input).await?;
        }
        Command::Arena {
            games,
            ruleset,
            levels,
            seed,
            expert_ms,
            expert_playouts,
            expert_blind,
            expert_ignore_draws,
            jobs,
        } => {
            let think = unoflip::bots::Think {
                time: std::time::Duration::from_millis(expert_ms),
                playouts: expert_playouts.unwrap_or(u32::MAX),
                knowledge: match (expert_blind, expert_ignore_draws) {
                    (true, _) => unoflip::rules::Knowledge::Counts,
                    (false, true) => unoflip::rules::Knowledge::Backs,
                    (false, false) => unoflip::rules::Knowledge::Draws,
                },
            };
            let jobs = jobs.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            arena(ArenaConfig {
                ruleset: match ruleset {
                    RulesetArg::Flip => Ruleset::Flip,
                    RulesetArg::Classic => Ruleset::Classic,
                },
                levels,
                games,
                seed,
                think,
                jobs,
            })?
        }
        Command::Serve(args) => serve::run(*args).await?,
    }
    Ok(())
}

/// Runs the arena with a progress bar on stderr and prints the table on stdout.
fn arena(config: ArenaConfig) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let ArenaConfig {
        ruleset,
        games,
        seed,
        ..
    } = config;
    let levels = config.levels.clone();
    let bar = indicatif::ProgressBar::new(games as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games, {per_sec}, eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let report = arena::run(&config, |done| {
        if done % 100 == 0 || done == games {
            bar.set_position(done as u64);
        }
    })?;
    bar.finish_and_clear();
    let names: Vec<&str> = levels.iter().map(|l| l.name()).collect();
    println!(
        "{games} games of {ruleset:?}, seats {} (rotated), seed {seed}, {} jobs",
        names.join(","),
        config.jobs
    );
    if levels.contains(&Level::Expert) {
        println!(
            "expert: {} ms per move{}{}",
            config.think.time.as_millis(),
            match config.think.playouts {
                u32::MAX => String::new(),
                n => format!(", at most {n} playouts"),
            },
            match config.think.knowledge {
                unoflip::rules::Knowledge::Draws => "",
                unoflip::rules::Knowledge::Backs => ", ignoring what draws suggest",
                unoflip::rules::Knowledge::Counts => ", blind to the backs (V-2, V-3 ignored)",
            }
        );
    }
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
