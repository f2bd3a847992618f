//! What a game is built from: ruleset, seats, options and, for tests and tournaments, a named first
//! dealer and a fixed deck order ([F-SETUP], [F-END-6..8]).
//!
//! A [`Setup`] is plain data that anyone may build; [`Setup::check`] is the one place that says
//! whether it describes a game, and `Game::new` refuses any setup it rejects.

use serde::{Deserialize, Serialize};

use super::card::{CardId, Seat};
use super::deck::{Deck, Ruleset};

/// How a round is scored and when the match ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// [F-END-6]: the winner scores the opponents' hands; first to the target wins.
    #[default]
    Standard,
    /// [F-END-7]: everyone scores their own hand; at the target the lowest total wins.
    Alternative,
}

/// The house rules of docs/rules.md H-*. All off by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HouseRules {
    /// [H-STACK] draw penalties stack.
    pub stacking: bool,
    /// [H-JUMP] identical cards may be played out of turn.
    pub jump_in: bool,
    /// [H-SEVEN0] sevens swap hands, zeros pass them.
    pub seven_zero: bool,
    /// [H-DRAWMATCH] draw until a playable card comes.
    pub draw_to_match: bool,
    /// [H-MULTI] identical cards together.
    pub multi: bool,
    /// [H-FALSEUNO] a false UNO call or catch costs two cards.
    pub false_uno: bool,
    /// [H-STRICT] an illegal wild draw is refused rather than challengeable.
    pub strict_wild_draw: bool,
    /// [H-LAST] the round goes on until one player is left.
    pub play_to_last: bool,
}

impl HouseRules {
    /// The names of the rules switched on, as docs/rules.md ids.
    pub fn enabled(&self) -> Vec<&'static str> {
        [
            (self.stacking, "H-STACK"),
            (self.jump_in, "H-JUMP"),
            (self.seven_zero, "H-SEVEN0"),
            (self.draw_to_match, "H-DRAWMATCH"),
            (self.multi, "H-MULTI"),
            (self.false_uno, "H-FALSEUNO"),
            (self.strict_wild_draw, "H-STRICT"),
            (self.play_to_last, "H-LAST"),
        ]
        .into_iter()
        .filter_map(|(on, id)| on.then_some(id))
        .collect()
    }
}

/// The target score when none is given [F-END-6].
pub const DEFAULT_TARGET: u32 = 500;
/// Fewest seats [F-SETUP-1].
pub const MIN_SEATS: usize = 2;
/// Most seats [F-SETUP-1].
pub const MAX_SEATS: usize = 10;
/// Cards dealt to each seat [F-SETUP-3].
pub const HAND_SIZE: usize = 7;

/// Options of a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Options {
    /// Standard or alternative scoring.
    pub scoring: Scoring,
    /// Score that ends the match [F-END-8].
    pub target: u32,
    /// The match is one round [F-END-8].
    pub single_round: bool,
    /// House rules.
    pub house: HouseRules,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scoring: Scoring::Standard,
            target: DEFAULT_TARGET,
            single_round: false,
            house: HouseRules::default(),
        }
    }
}

/// Everything needed to start a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// UNO Flip or classic.
    pub ruleset: Ruleset,
    /// 2..=10.
    pub seats: usize,
    /// Scoring, target, house rules.
    pub options: Options,
    /// The first round's dealer; drawn by [F-SETUP-2] when `None`.
    pub first_dealer: Option<Seat>,
    /// The first round's deck order, top card first; shuffled when `None`. The deal then follows
    /// [F-SETUP-3]: one card at a time from the top, starting at the dealer's left; the next card
    /// starts the discard pile and the rest is the draw pile, in order.
    pub deck: Option<Vec<CardId>>,
}

impl Setup {
    /// A game with default options, a drawn dealer and a shuffled deck.
    pub fn new(ruleset: Ruleset, seats: usize) -> Setup {
        Setup {
            ruleset,
            seats,
            options: Options::default(),
            first_dealer: None,
            deck: None,
        }
    }

    /// Checks that this setup describes a game.
    pub fn check(&self) -> Result<(), SetupError> {
        if !(MIN_SEATS..=MAX_SEATS).contains(&self.seats) {
            return Err(SetupError::SeatCount { seats: self.seats });
        }
        if let Some(dealer) = self.first_dealer
            && dealer >= self.seats
        {
            return Err(SetupError::DealerNotASeat {
                dealer,
                seats: self.seats,
            });
        }
        if self.options.target == 0 {
            return Err(SetupError::ZeroTarget);
        }
        if let Some(order) = &self.deck {
            let deck = Deck::of(self.ruleset);
            let mut seen = vec![false; deck.len()];
            for &id in order {
                match seen.get_mut(id.index()) {
                    None => return Err(SetupError::DeckCardUnknown { card: id }),
                    Some(true) => return Err(SetupError::DeckCardRepeated { card: id }),
                    Some(s) => *s = true,
                }
            }
            if order.len() != deck.len() {
                return Err(SetupError::DeckIncomplete {
                    given: order.len(),
                    expected: deck.len(),
                });
            }
        }
        Ok(())
    }
}

/// Why a setup does not describe a game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// [F-SETUP-1].
    #[error("a game has 2 to 10 seats, not {seats}")]
    SeatCount {
        /// What was asked for.
        seats: usize,
    },
    /// The named dealer is not at the table.
    #[error("dealer {dealer} is not a seat of a {seats}-seat game")]
    DealerNotASeat {
        /// The named dealer.
        dealer: Seat,
        /// Seats of the game.
        seats: usize,
    },
    /// A target of zero would end the match before it starts.
    #[error("the target score must be at least 1")]
    ZeroTarget,
    /// A fixed deck names a card the ruleset's deck does not have.
    #[error("fixed deck: card {card} is not in this deck")]
    DeckCardUnknown {
        /// The unknown id.
        card: CardId,
    },
    /// A fixed deck names a card twice.
    #[error("fixed deck: card {card} appears twice")]
    DeckCardRepeated {
        /// The repeated id.
        card: CardId,
    },
    /// A fixed deck must hold every card once.
    #[error("fixed deck: {given} cards given, the deck has {expected}")]
    DeckIncomplete {
        /// Cards given.
        given: usize,
        /// Cards in the deck.
        expected: usize,
    },
}

impl SetupError {
    /// A stable UPPER_SNAKE reason for APIs.
    pub fn reason(&self) -> &'static str {
        match self {
            SetupError::SeatCount { .. } => "SEAT_COUNT_OUT_OF_RANGE",
            SetupError::DealerNotASeat { .. } => "DEALER_NOT_A_SEAT",
            SetupError::ZeroTarget => "TARGET_OUT_OF_RANGE",
            SetupError::DeckCardUnknown { .. } => "DECK_CARD_UNKNOWN",
            SetupError::DeckCardRepeated { .. } => "DECK_CARD_REPEATED",
            SetupError::DeckIncomplete { .. } => "DECK_INCOMPLETE",
        }
    }
}
