//! The arena: games between bot levels in process, with seats rotated so that no level keeps the
//! advantage of a seat, and each level's round win rate and average score with 95% confidence
//! intervals.

use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::bots::{self, Level};
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
    let mut rng = SmallRng::seed_from_u64(config.seed);
    for g in 0..config.games {
        let (mut game, _) = Game::new(&setup, &mut rng)?;
        let level_of = |seat: usize| config.levels[(seat + g) % seats];
        // Only the seat to move acts; its view lists its UNO call and any catch it may make.
        let mut steps = 0;
        while !game.is_over() && steps < 100_000 {
            steps += 1;
            let seat = game.turn();
            let view = game.view(Viewer::Seat(seat));
            let Some(action) = bots::choose(level_of(seat), &view, &mut rng) else {
                break;
            };
            if game.act(seat, action, &mut rng).is_err() {
                break;
            }
        }
        if let Some(result) = game.last_round() {
            for seat in 0..seats {
                let i = distinct
                    .iter()
                    .position(|&l| l == level_of(seat))
                    .unwrap_or(0);
                let t = &mut tallies[i];
                let points = f64::from(result.points.get(seat).copied().unwrap_or(0));
                t.seat_games += 1;
                t.wins += u64::from(result.winner == seat);
                t.score += points;
                t.score_sq += points * points;
            }
        }
        progress(g + 1);
    }
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
