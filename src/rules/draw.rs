//! Drawing cards: counts, drawing until a color ([F-ACT-11]), penalties by card, and the
//! reshuffle of the discard pile when the draw pile runs out ([F-EMPTY-1], [F-EMPTY-2]).

use rand::Rng;

use super::card::{Color, Kind, Seat};
use super::decide::Exec;
use super::event::{DrawCause, Drawn, Event};

/// When a draw stops.
#[derive(Clone, Copy)]
enum Until {
    /// After this many cards.
    Count(usize),
    /// After a card of this color on the active side; a wild does not count [F-ACT-11].
    Color(Color),
    /// After a card that may be played on the discard pile [H-DRAWMATCH].
    Playable,
}

impl<R: Rng + ?Sized> Exec<'_, R> {
    /// `seat` draws `n` cards (fewer if even a reshuffle cannot supply them, [F-EMPTY-2]);
    /// returns how many it drew.
    pub(super) fn draw_cards(&mut self, seat: Seat, n: usize, cause: DrawCause) -> usize {
        self.draw_until(seat, Until::Count(n), cause)
    }

    /// The cards a draw card makes its victim take, plus `extra` (the lost challenge of a Wild
    /// Draw Color, [F-CHAL-4]). Wild Draw Color draws until the current color [F-ACT-11];
    /// a lost Wild Draw Two or Four challenge is the same count plus two ([F-CHAL-3], [C-CHAL-1]).
    pub(super) fn draw_penalty(&mut self, seat: Seat, kind: Kind, extra: usize, cause: DrawCause) {
        if kind == Kind::WildDrawColor
            && let Some(color) = self.game.color
        {
            self.draw_until(seat, Until::Color(color), cause);
        }
        let count = usize::try_from(kind.penalty_cards()).unwrap_or(0);
        if count + extra > 0 {
            self.draw_cards(seat, count + extra, cause);
        }
    }

    /// [H-DRAWMATCH]: `seat` draws until a card it may play comes, or the cards run out; returns
    /// how many it drew.
    pub(super) fn draw_to_match(&mut self, seat: Seat) -> usize {
        self.draw_until(seat, Until::Playable, DrawCause::Turn)
    }

    /// Draws from the top until `until` is met, reshuffling once when the pile runs out; one
    /// event per stretch drawn before and after the reshuffle. Returns the number of cards.
    fn draw_until(&mut self, seat: Seat, until: Until, cause: DrawCause) -> usize {
        let mut drawn = 0;
        let mut reshuffled = false;
        loop {
            let mut batch = Drawn::new();
            let mut done = false;
            for &card in self.game.draw.iter().rev() {
                match until {
                    Until::Count(n) if drawn + batch.len() >= n => {
                        done = true;
                        break;
                    }
                    Until::Count(_) => batch.push(card),
                    Until::Color(color) => {
                        batch.push(card);
                        if self.game.face(card).color == Some(color) {
                            done = true;
                            break;
                        }
                    }
                    Until::Playable => {
                        // Counting the cards this stretch brought, which are not in the hand
                        // yet (earlier stretches are).
                        let playable = self.game.matches(card)
                            && !self.game.strictly_forbidden(seat, card, &batch);
                        batch.push(card);
                        if playable {
                            done = true;
                            break;
                        }
                    }
                }
            }
            if let Until::Count(n) = until
                && drawn + batch.len() >= n
            {
                done = true;
            }
            if !batch.is_empty() {
                drawn += batch.len();
                self.emit(Event::CardsDrawn {
                    seat,
                    cards: batch,
                    cause,
                });
            }
            if done || reshuffled || self.game.discard.len() <= 1 {
                return drawn;
            }
            self.reshuffle();
            reshuffled = true;
        }
    }

    /// [F-EMPTY-1]: all discards but the top are shuffled into a new draw pile, on the current
    /// side.
    fn reshuffle(&mut self) {
        let below = self.game.discard.len().saturating_sub(1);
        let order = self.shuffled(self.game.discard[..below].to_vec());
        self.emit(Event::Reshuffled { order });
    }
}
