//! Ratings of registered players, one per ruleset: Weng-Lin (the `skillratings` crate), a
//! multiplayer Bayesian rating with a value (mu) and an uncertainty (sigma).
//!
//! A rated game's result is stored once, when it finishes, as an [`Outcome`] (the finishing
//! order of its players) in the `rated_games` entry table: the history from which every rating
//! can be recomputed ([`replay`]). Each player's record keeps its current ratings, updated from
//! each outcome as it is stored. Seats the server played from the start are rated as the
//! built-in level's player (`players/` + [`builtin_id`]), so people are rated against them.

use std::collections::{BTreeMap, HashMap};

use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use crate::bots::Level;
use crate::rules::{Game, Ruleset};

/// A player's rating in one ruleset.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rating {
    /// The rating (mu); a new player has 25.
    pub mu: f64,
    /// Its uncertainty (sigma); a new player has 25/3.
    pub sigma: f64,
    /// Rated games played.
    pub games: u32,
    /// Rated games won.
    pub wins: u32,
}

impl Default for Rating {
    fn default() -> Self {
        let start = WengLinRating::new();
        Rating {
            mu: start.rating,
            sigma: start.uncertainty,
            games: 0,
            wins: 0,
        }
    }
}

impl Rating {
    /// The conservative estimate leaderboards sort by: mu - 3 sigma.
    pub fn conservative(&self) -> f64 {
        self.mu - 3.0 * self.sigma
    }
}

/// The result of one rated game, as stored.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// `games/{id}`.
    pub game: String,
    /// Its ruleset.
    pub ruleset: Ruleset,
    /// When it finished (Unix milliseconds): outcomes are replayed in this order.
    pub finished_millis: u64,
    /// Each seat's player (`players/{id}`) and place (1 is first; equal places tie).
    pub places: Vec<(String, usize)>,
}

/// The key of a ruleset in a player's ratings.
pub fn ruleset_key(ruleset: Ruleset) -> &'static str {
    match ruleset {
        Ruleset::Flip => "flip",
        Ruleset::Classic => "classic",
    }
}

/// The id of the player that stands for a built-in bot level.
pub fn builtin_id(level: Level) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("unoflip built-in bot {}", level.name()));
    hex::encode(digest)[..16].to_owned()
}

/// Each seat's place in a finished game: its winners first, then the others by score, highest
/// first; equal scores share a place.
pub fn places(game: &Game) -> Vec<usize> {
    let winners = game.winners();
    let scores = game.scores();
    // (is a winner, score) ranks a seat: better when greater.
    let key = |seat: usize| {
        (
            winners.contains(&seat),
            scores.get(seat).copied().unwrap_or(0),
        )
    };
    (0..game.seats())
        .map(|seat| 1 + (0..game.seats()).filter(|&o| key(o) > key(seat)).count())
        .collect()
}

/// Applies one outcome to `ratings` (player -> rating in the outcome's ruleset).
pub fn rate(ratings: &mut HashMap<String, Rating>, outcome: &Outcome) {
    let config = WengLinConfig::new();
    let before: Vec<[WengLinRating; 1]> = outcome
        .places
        .iter()
        .map(|(player, _)| {
            let r = ratings.get(player).copied().unwrap_or_default();
            [WengLinRating {
                rating: r.mu,
                uncertainty: r.sigma,
            }]
        })
        .collect();
    let teams: Vec<(&[WengLinRating], MultiTeamOutcome)> = before
        .iter()
        .zip(&outcome.places)
        .map(|(team, (_, place))| (&team[..], MultiTeamOutcome::new(*place)))
        .collect();
    let after = weng_lin_multi_team(&teams, &config);
    // A player at several seats (a built-in level filling two seats) gets the mean of its
    // seats' new ratings, and counts the game once.
    let mut merged: Vec<(&String, f64, f64, usize, bool)> = Vec::new();
    for ((player, place), new) in outcome.places.iter().zip(after) {
        let Some(new) = new.first() else { continue };
        match merged.iter_mut().find(|(p, ..)| *p == player) {
            Some((_, mu, sigma, n, won)) => {
                *mu += new.rating;
                *sigma += new.uncertainty;
                *n += 1;
                *won |= *place == 1;
            }
            None => merged.push((player, new.rating, new.uncertainty, 1, *place == 1)),
        }
    }
    for (player, mu, sigma, n, won) in merged {
        let entry = ratings.entry(player.clone()).or_default();
        entry.mu = mu / n as f64;
        entry.sigma = sigma / n as f64;
        entry.games += 1;
        entry.wins += u32::from(won);
    }
}

/// Every rating, recomputed from the stored outcomes: ruleset key -> player -> rating.
pub fn replay(outcomes: &mut [Outcome]) -> BTreeMap<&'static str, HashMap<String, Rating>> {
    outcomes.sort_by(|a, b| (a.finished_millis, &a.game).cmp(&(b.finished_millis, &b.game)));
    let mut all: BTreeMap<&'static str, HashMap<String, Rating>> = BTreeMap::new();
    for outcome in outcomes.iter() {
        rate(
            all.entry(ruleset_key(outcome.ruleset)).or_default(),
            outcome,
        );
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(game: &str, millis: u64, places: &[(&str, usize)]) -> Outcome {
        Outcome {
            game: game.into(),
            ruleset: Ruleset::Flip,
            finished_millis: millis,
            places: places.iter().map(|(p, n)| ((*p).to_owned(), *n)).collect(),
        }
    }

    #[test]
    fn the_winner_gains_the_others_lose_and_uncertainty_shrinks() {
        let mut ratings = HashMap::new();
        rate(
            &mut ratings,
            &outcome("games/1", 1, &[("a", 2), ("b", 1), ("c", 3), ("d", 3)]),
        );
        let start = Rating::default();
        assert!(ratings["b"].mu > start.mu);
        assert!(ratings["a"].mu < ratings["b"].mu && ratings["a"].mu > ratings["c"].mu);
        assert!(ratings["c"].mu < start.mu);
        assert_eq!(ratings["c"].mu, ratings["d"].mu, "a tie rates alike");
        for r in ratings.values() {
            assert!(r.sigma < start.sigma);
            assert_eq!(r.games, 1);
        }
        assert_eq!((ratings["b"].wins, ratings["a"].wins), (1, 0));
    }

    #[test]
    fn a_replay_of_the_history_in_any_stored_order_gives_the_same_ratings() {
        let history = vec![
            outcome("games/1", 10, &[("a", 1), ("b", 2)]),
            outcome("games/2", 20, &[("a", 2), ("b", 1), ("c", 3)]),
            outcome("games/3", 30, &[("c", 1), ("a", 2)]),
        ];
        let mut by_hand = HashMap::new();
        for o in &history {
            rate(&mut by_hand, o);
        }
        let mut shuffled = vec![history[2].clone(), history[0].clone(), history[1].clone()];
        assert_eq!(replay(&mut shuffled)["flip"], by_hand);
    }

    #[test]
    fn a_player_at_two_seats_counts_the_game_once() {
        let mut ratings = HashMap::new();
        rate(
            &mut ratings,
            &outcome("games/1", 1, &[("bot", 2), ("a", 1), ("bot", 3)]),
        );
        assert_eq!((ratings["bot"].games, ratings["bot"].wins), (1, 0));
        assert!(ratings["bot"].mu < 25.0 && ratings["a"].mu > 25.0);
    }

    #[test]
    fn builtin_ids_are_fixed_and_distinct() {
        assert_eq!(builtin_id(Level::Random), builtin_id(Level::Random));
        assert_ne!(builtin_id(Level::Random), builtin_id(Level::Heuristic));
        assert_eq!(builtin_id(Level::Expert).len(), 16);
    }
}
