//! Snapshots: a game's whole state as versioned JSON, so that a long log need not be folded from
//! its first event. A snapshot is only a shortcut: [`Game::restore`] checks it (format, seats,
//! every card in exactly one place) and a caller that gets an error folds the log instead.

use serde::{Deserialize, Serialize};

use super::card::{CardId, Color, Seat, Side};
use super::deck::{Deck, Ruleset};
use super::setup::Options;
use super::state::{Direction, Game, Phase, RoundResult};
use super::tell::DrawTell;

/// The snapshot format this code writes and reads.
pub const SNAPSHOT_FORMAT: u32 = 1;

/// Why a snapshot was not restored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// Written by a format this server does not know.
    #[error("unknown snapshot format version {0}")]
    UnknownVersion(u32),
    /// Not a snapshot.
    #[error("malformed snapshot: {0}")]
    Malformed(String),
    /// A snapshot of a state no game can reach.
    #[error("impossible snapshot: {0}")]
    Impossible(&'static str),
}

/// The fields of a [`Game`], with the deck named by its ruleset.
#[derive(Serialize, Deserialize)]
struct Snapshot {
    v: u32,
    ruleset: Ruleset,
    seats: usize,
    options: Options,
    version: u64,
    round: u32,
    dealer: Seat,
    scores: Vec<u32>,
    side: Side,
    direction: Direction,
    hands: Vec<Vec<CardId>>,
    draw: Vec<CardId>,
    discard: Vec<CardId>,
    color: Option<Color>,
    turn: Seat,
    phase: Phase,
    uno_exposed: Option<Seat>,
    last_round: Option<RoundResult>,
    winners: Vec<Seat>,
    #[serde(default)]
    out: Vec<Seat>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tells: Vec<Option<DrawTell>>,
}

impl Game {
    /// The whole state as JSON, hidden cards included (for the store, never for a client).
    pub fn snapshot(&self) -> String {
        let s = Snapshot {
            v: SNAPSHOT_FORMAT,
            ruleset: self.deck.ruleset(),
            seats: self.seats,
            options: self.options,
            version: self.version,
            round: self.round,
            dealer: self.dealer,
            scores: self.scores.clone(),
            side: self.side,
            direction: self.direction,
            hands: self.hands.clone(),
            draw: self.draw.clone(),
            discard: self.discard.clone(),
            color: self.color,
            turn: self.turn,
            phase: self.phase,
            uno_exposed: self.uno_exposed,
            last_round: self.last_round.as_deref().cloned(),
            winners: self.winners.clone(),
            out: self.out.clone(),
            tells: self.tells.clone(),
        };
        // Plain structs and enums: serializing to JSON cannot fail.
        serde_json::to_string(&s).unwrap_or_default()
    }

    /// A game from [`Game::snapshot`]'s text, checked: the format version, the seats, and every
    /// card of the deck in exactly one place.
    pub fn restore(text: &str) -> Result<Game, SnapshotError> {
        #[derive(Deserialize)]
        struct Version {
            v: u32,
        }
        let version: Version =
            serde_json::from_str(text).map_err(|e| SnapshotError::Malformed(e.to_string()))?;
        if version.v != SNAPSHOT_FORMAT {
            return Err(SnapshotError::UnknownVersion(version.v));
        }
        let s: Snapshot =
            serde_json::from_str(text).map_err(|e| SnapshotError::Malformed(e.to_string()))?;
        let deck = Deck::of(s.ruleset);
        if !(2..=10).contains(&s.seats) || s.hands.len() != s.seats || s.scores.len() != s.seats {
            return Err(SnapshotError::Impossible("the seats do not match"));
        }
        if s.turn >= s.seats
            || s.dealer >= s.seats
            || s.uno_exposed.is_some_and(|u| u >= s.seats)
            || s.out.len() >= s.seats
            || s.out.iter().any(|&o| o >= s.seats)
        {
            return Err(SnapshotError::Impossible("a seat is not at the table"));
        }
        if !(s.tells.is_empty() || s.tells.len() == s.seats) {
            return Err(SnapshotError::Impossible(
                "the draw tells do not match the seats",
            ));
        }
        let mut cards: Vec<CardId> = s
            .hands
            .iter()
            .flatten()
            .chain(&s.draw)
            .chain(&s.discard)
            .copied()
            .collect();
        cards.sort_unstable();
        let whole = (0..deck.len()).all(|i| cards.get(i).is_some_and(|c| usize::from(c.0) == i));
        // Before the first deal every card is still in the box.
        if !(cards.is_empty() && s.round == 0) && (cards.len() != deck.len() || !whole) {
            return Err(SnapshotError::Impossible(
                "the deck's cards are not each in exactly one place",
            ));
        }
        Ok(Game {
            deck,
            seats: s.seats,
            options: s.options,
            version: s.version,
            round: s.round,
            dealer: s.dealer,
            scores: s.scores,
            side: s.side,
            direction: s.direction,
            hands: s.hands,
            draw: s.draw,
            discard: s.discard,
            color: s.color,
            turn: s.turn,
            phase: s.phase,
            uno_exposed: s.uno_exposed,
            last_round: s.last_round.map(Box::new),
            winners: s.winners,
            out: s.out,
            tells: s.tells,
        })
    }
}
