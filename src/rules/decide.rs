//! `decide`: turns a seat's action into events, or refuses it and changes nothing.
//!
//! An action is first checked against `legal_actions`; only then is it carried out, by emitting
//! events one at a time, each applied to the state as it is emitted. So the events always describe
//! exactly what happened, and folding them gives the same state. Randomness (shuffles, the
//! dealer draw) comes in as an argument and its outcomes are written into the events.

use rand::Rng;
use rand::seq::SliceRandom;

use super::action::{Action, RuleError};
use super::card::{CardId, Kind, Seat};
use super::event::{DrawCause, Event};
use super::setup::{Setup, SetupError};
use super::state::{Game, Penalty, Phase};

/// Emits events into a game and a log at once.
pub(super) struct Exec<'a, R: ?Sized> {
    pub(super) game: &'a mut Game,
    pub(super) events: &'a mut Vec<Event>,
    pub(super) rng: &'a mut R,
}

impl<R: Rng + ?Sized> Exec<'_, R> {
    pub(super) fn emit(&mut self, event: Event) {
        debug_assert!(
            self.game.seats_fit(&event),
            "{event:?} names a seat not at the table"
        );
        self.game.fold(&event);
        self.events.push(event);
    }

    /// A uniformly shuffled copy of `cards`.
    pub(super) fn shuffled(&mut self, cards: impl IntoIterator<Item = CardId>) -> Vec<CardId> {
        let mut cards: Vec<CardId> = cards.into_iter().collect();
        cards.shuffle(self.rng);
        cards
    }
}

impl Game {
    /// Starts a game: the creation event, the dealer, the first deal and the first discard's
    /// effect. `rng` shuffles and draws for the dealer unless the setup fixes them.
    pub fn new<R: Rng + ?Sized>(
        setup: &Setup,
        rng: &mut R,
    ) -> Result<(Game, Vec<Event>), SetupError> {
        setup.check()?;
        let mut game = Game::created(setup.ruleset, setup.seats, setup.options);
        let mut events = vec![Event::GameCreated {
            ruleset: setup.ruleset,
            seats: setup.seats,
            options: setup.options,
        }];
        let mut exec = Exec {
            game: &mut game,
            events: &mut events,
            rng,
        };
        exec.choose_first_dealer(setup.first_dealer);
        let dealer = exec.game.dealer;
        let deck = match &setup.deck {
            Some(order) => order.clone(),
            None => exec.shuffled(exec.game.deck.ids()),
        };
        exec.start_round(1, dealer, deck);
        Ok((game, events))
    }

    /// Carries out `action` for `seat` on this state and returns the events, or refuses it and
    /// leaves the state unchanged. The fast path of [`decide`].
    pub fn act<R: Rng + ?Sized>(
        &mut self,
        seat: Seat,
        action: Action,
        rng: &mut R,
    ) -> Result<Vec<Event>, RuleError> {
        let mut events = Vec::new();
        self.act_into(seat, action, rng, &mut events)?;
        Ok(events)
    }

    /// [`Game::act`] appending the events to `events`, a buffer the caller reuses: a search's
    /// playouts allocate next to nothing per action. A refused action appends nothing.
    pub fn act_into<R: Rng + ?Sized>(
        &mut self,
        seat: Seat,
        action: Action,
        rng: &mut R,
        events: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        if !self.is_legal(seat, action) {
            return Err(self.refusal(seat, action));
        }
        let mut exec = Exec {
            game: self,
            events,
            rng,
        };
        exec.carry_out(seat, action);
        Ok(())
    }

    /// [`Game::act_into`] for an action that [`Game::legal_actions`] has just listed for `seat` on
    /// this very state, as a search's playouts take them: the check that the action is legal,
    /// which repeats the listing's work, is skipped (debug builds still make it). Any other action
    /// may leave the game in a state no play leads to; moves from outside always go through
    /// [`Game::act_into`].
    pub fn act_listed_into<R: Rng + ?Sized>(
        &mut self,
        seat: Seat,
        action: Action,
        rng: &mut R,
        events: &mut Vec<Event>,
    ) {
        debug_assert!(
            self.is_legal(seat, action),
            "{action:?} by seat {seat} was not listed"
        );
        let mut exec = Exec {
            game: self,
            events,
            rng,
        };
        exec.carry_out(seat, action);
    }
}

/// The events `action` by `seat` produces on `game`, or why it is refused. `game` is not touched:
/// apply the events to move it on.
pub fn decide<R: Rng + ?Sized>(
    game: &Game,
    seat: Seat,
    action: Action,
    rng: &mut R,
) -> Result<Vec<Event>, RuleError> {
    game.clone().act(seat, action, rng)
}

impl<R: Rng + ?Sized> Exec<'_, R> {
    /// Dispatches a legal action to the rule that handles it.
    fn carry_out(&mut self, seat: Seat, action: Action) {
        match action {
            Action::Play { card, color, uno } => {
                // [H-JUMP]: a jump-in takes the turn, and play goes on from the jumper.
                if seat != self.game.turn {
                    self.emit(Event::TurnStarted { seat });
                }
                self.play(seat, &[card], color, uno);
            }
            Action::PlayMany { cards, uno } => self.play(seat, cards.as_slice(), None, uno),
            Action::Draw => self.draw_on_turn(seat),
            Action::Keep => {
                self.emit(Event::DrawnCardKept { seat });
                let next = self.game.next_seat(seat);
                self.emit(Event::TurnStarted { seat: next });
            }
            Action::ChooseColor { color } => {
                let then = match self.game.phase {
                    Phase::ChooseColor { then } => then,
                    _ => seat,
                };
                self.emit(Event::ColorChosen { seat, color });
                self.emit(Event::TurnStarted { seat: then });
            }
            Action::Accept => {
                if let Phase::Penalty(penalty) = self.game.phase {
                    self.accept_penalty(seat, penalty);
                }
            }
            Action::Challenge => {
                if let Phase::Penalty(penalty) = self.game.phase {
                    self.challenge(seat, penalty);
                }
            }
            // [H-FALSEUNO]: a call without holding one card costs two cards.
            Action::CallUno if self.game.hand(seat).len() != 1 => {
                self.draw_cards(seat, 2, DrawCause::FalseUno);
            }
            Action::CallUno => self.emit(Event::UnoCalled { seat }),
            // [H-FALSEUNO]: so does a catch of a seat that may not be caught.
            Action::Catch { seat: caught } if self.game.uno_exposed != Some(caught) => {
                self.draw_cards(seat, 2, DrawCause::FalseCatch);
            }
            Action::Catch { seat: caught } => self.catch_uno(seat, caught),
            Action::Swap { seat: with } => {
                let then = match self.game.phase {
                    Phase::ChooseSwap { then } => then,
                    _ => self.game.next_seat(seat),
                };
                self.emit(Event::HandsSwapped { seat, with });
                self.emit(Event::TurnStarted { seat: then });
            }
        }
    }

    /// [F-TURN-3]: draw one card, then play it if it matches or keep it (the next action).
    /// [H-DRAWMATCH]: draw until a playable card comes, then play it or keep it.
    /// [F-EMPTY-2]: with nothing to draw, the turn ends.
    fn draw_on_turn(&mut self, seat: Seat) {
        let drawn = if self.game.options.house.draw_to_match {
            self.draw_to_match(seat)
        } else {
            self.draw_cards(seat, 1, DrawCause::Turn)
        };
        if drawn == 0 {
            let next = self.game.next_seat(seat);
            self.emit(Event::TurnStarted { seat: next });
        }
    }

    /// [F-UNO-2]: the caught seat draws two.
    fn catch_uno(&mut self, by: Seat, caught: Seat) {
        self.emit(Event::UnoCaught { seat: caught, by });
        self.draw_cards(caught, 2, DrawCause::UnoCaught);
    }

    /// [F-CHAL-1..4], [C-CHAL-1]: the challenged hand is shown to the challenger; the loser draws.
    fn challenge(&mut self, seat: Seat, penalty: Penalty) {
        let guilty = penalty.guilty;
        self.emit(Event::Challenged {
            seat,
            target: penalty.from,
            guilty,
        });
        let cards = self.game.hand(penalty.from).to_vec();
        self.emit(Event::HandShown {
            seat: penalty.from,
            to: seat,
            cards,
        });
        let kind = self.game.face(penalty.card).kind;
        let stacked = stacked_before(penalty, kind);
        if guilty {
            // The challenged player takes the penalty; the challenger plays on the declared color.
            self.draw_penalty(penalty.from, kind, stacked, DrawCause::Challenge);
            self.emit(Event::TurnStarted { seat });
        } else {
            // The challenger takes the penalty and two more, and loses the turn.
            self.draw_penalty(seat, kind, 2 + stacked, DrawCause::Challenge);
            let next = self.game.next_seat(seat);
            self.emit(Event::TurnStarted { seat: next });
        }
    }

    /// The victim takes the wild draw and loses the turn [F-ACT-5], [F-ACT-11], [C-ACT-1].
    fn accept_penalty(&mut self, seat: Seat, penalty: Penalty) {
        self.emit(Event::PenaltyAccepted { seat });
        let kind = self.game.face(penalty.card).kind;
        self.draw_penalty(
            seat,
            kind,
            stacked_before(penalty, kind),
            DrawCause::Penalty,
        );
        let next = self.game.next_seat(seat);
        self.emit(Event::TurnStarted { seat: next });
    }
}

/// [H-STACK]: the cards stacked before the pending draw card, a `kind`; they go with it to
/// whoever takes the penalty.
fn stacked_before(penalty: Penalty, kind: Kind) -> usize {
    usize::try_from(penalty.total.saturating_sub(kind.penalty_cards())).unwrap_or(0)
}
