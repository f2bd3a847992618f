//! Built-in bots. A bot sees exactly what a remote seat sees, a [`View`], and returns one of the
//! legal actions the view lists: it never reads hidden state, and it needs no rule of its own.
//!
//! - [`Level::Random`]: uniform among the legal actions.
//! - [`Level::Heuristic`]: a rule-aware player (`heuristic.rs`).

mod heuristic;

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::rules::{Action, View};

/// How a bot plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Uniform among the legal actions.
    Random,
    /// Plays cards well: see `heuristic.rs`.
    Heuristic,
}

impl Level {
    /// Every level, for the arena.
    pub const ALL: [Level; 2] = [Level::Random, Level::Heuristic];

    /// Its lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Heuristic => "heuristic",
        }
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("no bot level {s:?} (random, heuristic)"))
    }
}

/// The action a bot of `level` takes in `view`, or `None` when the view lists none.
pub fn choose<R: Rng + ?Sized>(level: Level, view: &View, rng: &mut R) -> Option<Action> {
    match level {
        Level::Random => {
            let legal = &view.legal_actions;
            if legal.is_empty() {
                None
            } else {
                Some(legal[rng.random_range(0..legal.len())])
            }
        }
        Level::Heuristic => heuristic::choose(view, rng),
    }
}
