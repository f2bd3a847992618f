//! The arena: games between bot levels in process, with seats rotated so that no level keeps the
//! advantage of a seat, and each level's round win rate and average score with 95% confidence
//! intervals. Games are played on `jobs` threads, one game per thread at a time; each game's
//! shuffles and choices come from its own seed (the arena's seed and the game's number), so the
//! results do not depend on the number of threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::bots::{self, Level, Think};
use crate::rules::{Game, Options, Ruleset, Setup, SetupError, Viewer};

/// What to play.
#[derive(Clone, Debug)]
pub struct ArenaConfig {
    /// UNO Flip or classic.
    pub ruleset: Ruleset,
    /// One level per seat (rotated from game to game).
    pub levels: Vec<Level>,
    /// Games (single rounds) to play.
    pub games: usize,
    /// Seed of the games' shuffles and the bots' choices.
    pub seed: u64,
    /// How long searching bots think per move.
    pub think: Think,
    /// Threads playing games at once (at least one).
    pub jobs: usize,
}

/// One level's results.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelResult {
    /// The level.
    pub level: Level,
    /// Seat-games played by this level (games times the seats it held).
    pub seat_games: u64,
    /// Rounds won.
    pub wins: u64,
    /// Win rate per seat-game.
    pub win_rate: f64,
    /// 95% Wilson interval of the win rate.
    pub win_rate_ci: (f64, f64),
    /// Mean points scored per seat-game (standard scoring: the winner scores the other hands).
    pub mean_score: f64,
    /// 95% interval of the mean score.
    pub mean_score_ci: (f64, f64),
}

/// The arena's results, one entry per distinct level.
#[derive(Clone, Debug, PartialEq)]
pub struct ArenaReport {
    /// Games played.
    pub games: usize,
    /// Per level.
    pub levels: Vec<LevelResult>,
}

#[derive(Default, Clone)]
struct Tally {
    seat_games: u64,
    wins: u64,
    score: f64,
    score_sq: f64,
}

/// The 95% Wilson score interval of `wins` out of `n`.
pub fn wilson(wins: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (n, p, z) = (n as f64, wins as f64 / n as f64, 1.96f64);
    let centre = p + z * z / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let denominator = 1.0 + z * z / n;
    (
        (centre - spread) / denominator,
        (centre + spread) / denominator,
    )
}

/// One finished game: for each seat, its level, whether it won and its points.
type Outcome = Vec<(Level, bool, f64)>;

/// Plays game number `g`: seats rotated by `g`, its own seed.
fn play_one(config: &ArenaConfig, setup: &Setup, g: usize) -> Result<Outcome, SetupError> {
    let seats = config.levels.len();
    let mut rng = SmallRng::seed_from_u64(
        config
            .seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(g as u64),
    );
    let (mut game, _) = Game::new(setup, &mut rng)?;
    let level_of = |seat: usize| config.levels[(seat + g) % seats];
    // Only the seat to move acts; its view lists its UNO call and any catch it may make.
    let mut steps = 0;
    while !game.is_over() && steps < 100_000 {
        steps += 1;
        let seat = game.turn();
        let view = game.view(Viewer::Seat(seat));
        let Some(action) = bots::choose_thinking(level_of(seat), &view, config.think, &mut rng)
        else {
            break;
        };
        if game.act(seat, action, &mut rng).is_err() {
            break;
        }
    }
    let Some(result) = game.last_round() else {
        return Ok(Vec::new());
    };
    Ok((0..seats)
        .map(|seat| {
            let points = f64::from(result.points.get(seat).copied().unwrap_or(0));
            (level_of(seat), result.winner == seat, points)
        })
        .collect())
}

/// Plays the arena; `progress` is told how many games are done.
pub fn run(
    config: &ArenaConfig,
    mut progress: impl FnMut(usize),
) -> Result<ArenaReport, SetupError> {
    let seats = config.levels.len();
    let setup = Setup {
        options: Options {
            single_round: true,
            ..Options::default()
        },
        ..Setup::new(config.ruleset, seats)
    };
    setup.check()?;
    let mut distinct: Vec<Level> = Vec::new();
    for &l in &config.levels {
        if !distinct.contains(&l) {
            distinct.push(l);
        }
    }
    let mut tallies = vec![Tally::default(); distinct.len()];
    let next = AtomicUsize::new(0);
    let (sender, receiver) = mpsc::channel::<Result<Outcome, SetupError>>();
    std::thread::scope(|scope| -> Result<(), SetupError> {
        for _ in 0..config.jobs.max(1) {
            let sender = sender.clone();
            let (next, setup) = (&next, &setup);
            scope.spawn(move || {
                loop {
                    let g = next.fetch_add(1, Ordering::Relaxed);
                    if g >= config.games {
                        return;
                    }
                    if sender.send(play_one(config, setup, g)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        let mut done = 0;
        for outcome in receiver {
            for (level, won, points) in outcome? {
                let i = distinct.iter().position(|&l| l == level).unwrap_or(0);
                let t = &mut tallies[i];
                t.seat_games += 1;
                t.wins += u64::from(won);
                t.score += points;
                t.score_sq += points * points;
            }
            done += 1;
            progress(done);
        }
        Ok(())
    })?;
    let levels = distinct
        .into_iter()
        .zip(tallies)
        .map(|(level, t)| {
            let n = t.seat_games.max(1) as f64;
            let mean = t.score / n;
            let variance = (t.score_sq / n - mean * mean).max(0.0);
            let half = 1.96 * (variance / n).sqrt();
            LevelResult {
                level,
                seat_games: t.seat_games,
                wins: t.wins,
                win_rate: t.wins as f64 / n,
                win_rate_ci: wilson(t.wins, t.seat_games),
                mean_score: mean,
                mean_score_ci: (mean - half, mean + half),
            }
        })
        .collect();
    Ok(ArenaReport {
        games: config.games,
        levels,
    })
}
