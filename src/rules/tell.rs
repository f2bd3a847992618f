//! What a seat's draw on its turn tells the table. A seat may draw even when it holds a playable
//! card [F-TURN-4], but a seat that draws mostly has none. So when a seat draws on its turn, the
//! table notes what it drew on and how many of its cards it held then: public facts, since
//! everyone saw the draw. What they suggest, that none of those cards could have been played
//! there, is only a guess, which a searching bot may make when it deals the cards it cannot see
//! ([`crate::rules::Knowledge::Draws`]).
//!
//! A tell lasts while the seat may still hold a card it held at the draw: each card it plays
//! after it counts one card fewer (the drawn card, played at once, does not), a new round or the
//! hands passing on ends it, and a swap of hands takes it along with the hand.

use serde::{Deserialize, Serialize};

use super::card::{CardId, Side};
use super::deck::Deck;
use super::state::{Game, Phase};

/// A seat's last draw on its turn, as the table saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DrawTell {
    /// The side up at the draw.
    side: Side,
    /// The current color's match code at the draw (`deck.rs`'s `MatchKey`).
    color: u8,
    /// The top discard's kind code at the draw.
    kind: u8,
    /// How many of the seat's cards it held at the draw, at least.
    held: u16,
}

impl DrawTell {
    /// How many of the seat's cards it held at the draw, at least: none of these could have been
    /// played there, if it drew because it had to.
    pub fn held(&self) -> usize {
        usize::from(self.held)
    }

    /// Whether `card` could have been played where the seat drew.
    pub fn playable(&self, deck: &Deck, card: CardId) -> bool {
        deck.key(card, self.side).matches(self.color, self.kind)
    }
}

impl Game {
    /// The tell of `seat`'s last draw on its turn, while it lasts.
    pub fn draw_tell(&self, seat: usize) -> Option<DrawTell> {
        self.tells.get(seat).copied().flatten()
    }

    /// `seat` drew on its turn: every card it holds but the last drawn was held
    /// where it drew (under [H-DRAWMATCH] the cards drawn before the last did not match either).
    pub(super) fn tell_drawn(&mut self, seat: usize) {
        let (color, kind) = self.match_codes();
        let held = self.hand(seat).len().saturating_sub(1);
        let tell = DrawTell {
            side: self.side,
            color,
            kind,
            held: u16::try_from(held).unwrap_or(u16::MAX),
        };
        if self.tells.is_empty() {
            self.tells = vec![None; self.seats];
        }
        if let Some(slot) = self.tells.get_mut(seat) {
            *slot = (held > 0).then_some(tell);
        }
    }

    /// `seat` kept the card it drew: it did not play it there either (unless the house rule made
    /// it draw until a card matched, when the kept card does).
    pub(super) fn tell_kept(&mut self, seat: usize) {
        if self.options.house.draw_to_match {
            return;
        }
        let len = self.hand(seat).len();
        if let Some(Some(tell)) = self.tells.get_mut(seat) {
            tell.held = u16::try_from(len).unwrap_or(u16::MAX);
        }
    }

    /// `seat` is about to play `card`: a card held at the draw may be the one leaving, unless it
    /// is the card just drawn.
    pub(super) fn tell_played(&mut self, seat: usize, card: CardId) {
        if matches!(self.phase, Phase::PlayDrawn { card: drawn } if drawn == card) {
            return;
        }
        if let Some(slot) = self.tells.get_mut(seat)
            && let Some(tell) = slot
        {
            tell.held = tell.held.saturating_sub(1);
            if tell.held == 0 {
                *slot = None;
            }
        }
    }

    /// Hands swapped between two seats: their tells go with them.
    pub(super) fn tell_swapped(&mut self, seat: usize, with: usize) {
        if seat < self.tells.len() && with < self.tells.len() {
            self.tells.swap(seat, with);
        }
    }
}
