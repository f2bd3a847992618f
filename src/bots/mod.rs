//! Built-in bots. A bot sees exactly what a remote seat sees, a [`View`], and returns one of the
//! legal actions the view lists: it never reads hidden state, and it needs no rule of its own.
//!
//! - [`Level::Random`]: uniform among the legal actions.
//! - [`Level::Heuristic`]: a rule-aware player (`heuristic.rs`).
//! - [`Level::Expert`]: a determinized Monte Carlo search over worlds the view allows, which
//!   reads the faces the table shows of hidden cards (`expert.rs`); it thinks for a budget,
//!   [`Think`].

mod expert;
mod heuristic;

use std::time::Duration;

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::rules::{Action, Knowledge, View};

/// The default time a searching bot thinks per move.
pub const DEFAULT_THINK: Duration = Duration::from_millis(50);

/// The longest a game may let its searching bots think per move.
pub const MAX_THINK: Duration = Duration::from_secs(2);

/// How long a searching bot ([`Level::Expert`]) thinks per move: it stops at whichever limit
/// comes first. The other levels do not search and ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Think {
    /// Time per move.
    pub time: Duration,
    /// Playouts per move.
    pub playouts: u32,
    /// What its sampled worlds agree with: [`Knowledge::Draws`]; the others only to measure
    /// what reading the draws and the backs is worth.
    pub knowledge: Knowledge,
}

impl Default for Think {
    fn default() -> Self {
        Think {
            time: DEFAULT_THINK,
            playouts: u32::MAX,
            knowledge: Knowledge::Draws,
        }
    }
}

impl Think {
    /// Thinks for `time` per move.
    pub fn for_time(time: Duration) -> Think {
        Think {
            time,
            ..Think::default()
        }
    }

    /// Thinks for exactly `playouts` per move, however long they take: repeatable for tests.
    pub fn for_playouts(playouts: u32) -> Think {
        Think {
            time: Duration::MAX,
            playouts,
            ..Think::default()
        }
    }
}

/// How a bot plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Uniform among the legal actions.
    Random,
    /// Plays cards well: see `heuristic.rs`.
    Heuristic,
    /// Searches: see `expert.rs`.
    Expert,
}

impl Level {
    /// Every level, for the arena.
    pub const ALL: [Level; 3] = [Level::Random, Level::Heuristic, Level::Expert];

    /// Its lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Heuristic => "heuristic",
            Level::Expert => "expert",
        }
    }

    /// Whether it searches, and so takes its time ([`Think`]): a server runs it off its
    /// request threads.
    pub fn searches(self) -> bool {
        self == Level::Expert
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("no bot level {s:?} (random, heuristic, expert)"))
    }
}

/// The action a bot of `level` takes in `view`, or `None` when the view lists none; a searching
/// level thinks for the default time.
pub fn choose<R: Rng + ?Sized>(level: Level, view: &View, rng: &mut R) -> Option<Action> {
    choose_thinking(level, view, Think::default(), rng)
}

/// [`choose`] with a searching level thinking as `think` says.
pub fn choose_thinking<R: Rng + ?Sized>(
    level: Level,
    view: &View,
    think: Think,
    rng: &mut R,
) -> Option<Action> {
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
        Level::Expert => expert::choose(view, think, rng),
    }
}
