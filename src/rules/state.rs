//! The state of a game and `apply`, which folds one event into it and never fails.
//!
//! Fields are private: a `Game` is reached only through `Game::new` (which checks its setup) or
//! [`Game::replay`] (which checks the log starts with a creation event), so that every state is one
//! the rules can reach. `apply` moves cards and sets fields as the event says; it knows no rule
//! except the UNO call window's bookkeeping ([F-UNO-1], [F-UNO-2]), which follows from which seat
//! acted.

use super::card::{CardId, Color, Face, Seat, Side};
use super::deck::{Deck, Ruleset};
use super::event::{DrawCause, Event};
use super::setup::{HAND_SIZE, Options};
use super::tell::DrawTell;

/// Direction of play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// seat + 1.
    Clockwise,
    /// seat - 1.
    CounterClockwise,
}

/// A wild draw card waiting to be taken or challenged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Penalty {
    /// Who played it.
    pub from: Seat,
    /// The wild draw card.
    pub card: CardId,
    /// The color current before it was played [F-CHAL-2].
    pub previous_color: Color,
    /// Whether its player held a card of `previous_color` [F-CHAL-2]. Hidden information.
    pub guilty: bool,
    /// Cards the seat takes if it accepts: this card's, plus those stacked before it
    /// [H-STACK].
    #[serde(default)]
    pub total: u32,
}

/// What the game waits for from the seat whose turn it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Play a card or draw [F-TURN-1].
    Play,
    /// Play the card just drawn if it matches, or keep it [F-TURN-3].
    PlayDrawn {
        /// The drawn card.
        card: CardId,
    },
    /// Declare a color; then `then` plays [F-START-4], [F-FLIP-4].
    ChooseColor {
        /// Whose turn follows.
        then: Seat,
    },
    /// Take or challenge a wild draw [F-CHAL-1].
    Penalty(Penalty),
    /// Choose whom to swap hands with; then `then` plays [H-SEVEN0].
    ChooseSwap {
        /// Whose turn follows.
        then: Seat,
    },
    /// The match is over.
    MatchOver,
}

/// The result of the last finished round.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RoundResult {
    /// Which round.
    pub round: u32,
    /// Who went out.
    pub winner: Seat,
    /// Each hand's value on the active side.
    pub hand_points: Vec<u32>,
    /// What each seat scored for the round.
    pub points: Vec<u32>,
    /// [H-LAST]: the seats in the order they went out, the one left last; otherwise just the
    /// winner.
    pub order: Vec<Seat>,
}

/// A game of UNO Flip or classic UNO: a match of rounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    pub(super) deck: &'static Deck,
    pub(super) seats: usize,
    pub(super) options: Options,
    pub(super) version: u64,
    pub(super) round: u32,
    pub(super) dealer: Seat,
    pub(super) scores: Vec<u32>,
    pub(super) side: Side,
    pub(super) direction: Direction,
    pub(super) hands: Vec<Vec<CardId>>,
    /// Top card last.
    pub(super) draw: Vec<CardId>,
    /// Top card last.
    pub(super) discard: Vec<CardId>,
    pub(super) color: Option<Color>,
    pub(super) turn: Seat,
    pub(super) phase: Phase,
    pub(super) uno_exposed: Option<Seat>,
    /// Boxed: a game in its first round has none, and it would make every live game's task 80
    /// bytes larger.
    pub(super) last_round: Option<Box<RoundResult>>,
    pub(super) winners: Vec<Seat>,
    /// [H-LAST]: the seats out of this round, in the order they went out.
    pub(super) out: Vec<Seat>,
    /// Each seat's last draw on its turn, while it tells something (`tell.rs`); empty until
    /// the first such draw.
    pub(super) tells: Vec<Option<DrawTell>>,
}

/// A log that does not describe a game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// Every log starts with `GameCreated`.
    #[error("the first event is not GameCreated")]
    NoCreation,
    /// The creation event names an impossible game.
    #[error("the creation event is invalid: {0}")]
    InvalidCreation(String),
}

impl Game {
    /// The empty game a `GameCreated` event describes, before any round.
    pub(super) fn created(ruleset: Ruleset, seats: usize, options: Options) -> Game {
        Game {
            deck: Deck::of(ruleset),
            seats,
            options,
            version: 1,
            round: 0,
            dealer: 0,
            scores: vec![0; seats],
            side: Side::Light,
            direction: Direction::Clockwise,
            hands: vec![Vec::new(); seats],
            draw: Vec::new(),
            discard: Vec::new(),
            color: None,
            turn: 0,
            phase: Phase::Play,
            uno_exposed: None,
            last_round: None,
            winners: Vec::new(),
            out: Vec::new(),
            tells: Vec::new(),
        }
    }

    /// Rebuilds a game by folding its whole log.
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<Game, ReplayError> {
        let mut events = events.into_iter();
        let Some(Event::GameCreated {
            ruleset,
            seats,
            options,
        }) = events.next()
        else {
            return Err(ReplayError::NoCreation);
        };
        let setup = super::Setup {
            ruleset: *ruleset,
            seats: *seats,
            options: *options,
            first_dealer: None,
            deck: None,
        };
        setup
            .check()
            .map_err(|e| ReplayError::InvalidCreation(e.to_string()))?;
        let mut game = Game::created(*ruleset, *seats, *options);
        for event in events {
            game.apply(event);
        }
        Ok(game)
    }

    /// Folds one event into the state. Never fails and never panics: an event that does not fit
    /// (which `decide` never produces) changes only what it can.
    pub fn apply(&mut self, event: &Event) {
        if !self.seats_fit(event) {
            self.version += 1;
            return;
        }
        self.fold(event);
    }

    /// [`Game::apply`] of an event the engine has just decided on this state, which names only
    /// seats at the table: `decide` folds its events with it, skipping the check that guards a
    /// replay against a damaged log.
    pub(super) fn fold(&mut self, event: &Event) {
        self.version += 1;
        match event {
            Event::GameCreated { .. } => {}
            Event::DealerChosen { dealer, .. } => self.dealer = *dealer,
            Event::RoundStarted {
                round,
                dealer,
                deck,
            } => self.deal(*round, *dealer, deck),
            Event::StarterReturned {
                card,
                depth,
                turned,
            } => {
                remove(&mut self.discard, *card);
                let at = self.draw.len().saturating_sub(*depth);
                self.draw.insert(at, *card);
                remove(&mut self.draw, *turned);
                self.discard.push(*turned);
                self.color = self.top_face().and_then(|f| f.color);
            }
            Event::TurnStarted { seat } => {
                self.turn = *seat;
                self.phase = Phase::Play;
            }
            Event::CardPlayed {
                seat,
                card,
                color,
                uno,
            } => {
                self.close_uno_window(*seat);
                self.tell_played(*seat, *card);
                if let Some(hand) = self.hands.get_mut(*seat) {
                    remove(hand, *card);
                    if hand.len() == 1 && !uno {
                        self.uno_exposed = Some(*seat);
                    }
                }
                // A seat with no card left has nothing to call UNO about.
                if self.uno_exposed == Some(*seat) && self.hand_len(*seat) == 0 {
                    self.uno_exposed = None;
                }
                self.discard.push(*card);
                self.color = color.or(self.deck.face(*card, self.side).color);
            }
            Event::ColorChosen { seat, color } => {
                self.close_uno_window(*seat);
                self.color = Some(*color);
            }
            Event::ColorRequested { seat, then } => {
                self.turn = *seat;
                self.phase = Phase::ChooseColor { then: *then };
            }
            Event::SwapRequested { seat, then } => {
                self.turn = *seat;
                self.phase = Phase::ChooseSwap { then: *then };
            }
            // A swap or a pass ends any UNO duty: it arises from a play [F-UNO-4].
            Event::HandsSwapped { seat, with } => {
                self.hands.swap(*seat, *with);
                self.tell_swapped(*seat, *with);
                self.uno_exposed = None;
            }
            // [H-LAST]: hands pass among the seats still in the round.
            Event::HandsPassed => {
                let old = std::mem::take(&mut self.hands);
                let mut passed = vec![Vec::new(); self.seats];
                for (seat, hand) in old.into_iter().enumerate() {
                    let to = if self.out.contains(&seat) {
                        seat
                    } else {
                        self.next_seat(seat)
                    };
                    if let Some(slot) = passed.get_mut(to) {
                        *slot = hand;
                    }
                }
                self.hands = passed;
                self.tells.clear();
                self.uno_exposed = None;
            }
            Event::WentOut { seat } => {
                if !self.out.contains(seat) {
                    self.out.push(*seat);
                }
            }
            Event::DirectionReversed => {
                self.direction = match self.direction {
                    Direction::Clockwise => Direction::CounterClockwise,
                    Direction::CounterClockwise => Direction::Clockwise,
                }
            }
            Event::Flipped => {
                self.side = self.side.other();
                self.draw.reverse();
                self.discard.reverse();
                self.color = self.top_face().and_then(|f| f.color);
            }
            Event::CardsDrawn { seat, cards, cause } => {
                if *cause == DrawCause::Turn {
                    self.close_uno_window(*seat);
                }
                for card in cards {
                    if self.draw.last() == Some(card) {
                        self.draw.pop();
                    } else {
                        remove(&mut self.draw, *card);
                    }
                    if let Some(hand) = self.hands.get_mut(*seat) {
                        hand.push(*card);
                    }
                }
                if self.uno_exposed == Some(*seat) && self.hand_len(*seat) != 1 {
                    self.uno_exposed = None;
                }
                if let (DrawCause::Turn, Some(&card)) = (cause, cards.last()) {
                    self.tell_drawn(*seat);
                    self.phase = Phase::PlayDrawn { card };
                }
            }
            Event::DrawnCardKept { seat } => self.tell_kept(*seat),
            Event::HandShown { .. } => {}
            Event::Reshuffled { order } => {
                let top = self.discard.pop();
                self.discard.clear();
                self.discard.extend(top);
                self.draw.extend(order.iter().rev());
            }
            Event::PenaltyPending {
                seat,
                from,
                card,
                previous_color,
                guilty,
            } => {
                // [H-STACK]: a draw card played on a pending penalty adds to it.
                let stacked = match self.phase {
                    Phase::Penalty(p) => p.total,
                    _ => 0,
                };
                self.turn = *seat;
                self.phase = Phase::Penalty(Penalty {
                    from: *from,
                    card: *card,
                    previous_color: *previous_color,
                    guilty: *guilty,
                    total: stacked + self.deck.face(*card, self.side).kind.penalty_cards(),
                });
            }
            Event::PenaltyAccepted { seat } | Event::Challenged { seat, .. } => {
                self.close_uno_window(*seat);
            }
            Event::UnoCalled { seat } => {
                if self.uno_exposed == Some(*seat) {
                    self.uno_exposed = None;
                }
            }
            Event::UnoCaught { .. } => self.uno_exposed = None,
            Event::RoundEnded {
                round,
                winner,
                hand_points,
                points,
                totals,
                order,
            } => {
                self.scores.clone_from(&**totals);
                self.uno_exposed = None;
                self.last_round = Some(Box::new(RoundResult {
                    round: *round,
                    winner: *winner,
                    hand_points: (**hand_points).clone(),
                    points: (**points).clone(),
                    order: (**order).clone(),
                }));
            }
            Event::MatchEnded { winners } => {
                self.phase = Phase::MatchOver;
                self.winners.clone_from(winners);
            }
            Event::MatchAbandoned => {
                self.phase = Phase::MatchOver;
                self.winners.clear();
            }
            // Only ever the whole log of a game that was never created: nothing to change.
            Event::LobbyExpired => {}
        }
    }

    /// [F-SETUP-3], [F-SETUP-4]: deal seven cards each from the top, one at a time from the
    /// dealer's left, turn the next card, and keep the rest as the draw pile.
    fn deal(&mut self, round: u32, dealer: Seat, deck: &[CardId]) {
        self.round = round;
        self.dealer = dealer;
        self.side = Side::Light;
        self.direction = Direction::Clockwise;
        self.uno_exposed = None;
        self.out.clear();
        self.tells.clear();
        for hand in &mut self.hands {
            hand.clear();
        }
        let n = self.seats;
        let dealt = (HAND_SIZE * n).min(deck.len());
        for (i, &card) in deck[..dealt].iter().enumerate() {
            if let Some(hand) = self.hands.get_mut((dealer + 1 + i % n) % n) {
                hand.push(card);
            }
        }
        self.discard.clear();
        self.discard.extend(deck.get(dealt).copied());
        self.draw.clear();
        self.draw.extend(deck.iter().skip(dealt + 1).rev());
        self.color = self.top_face().and_then(|f| f.color);
        self.turn = (dealer + 1) % n;
        self.phase = Phase::Play;
    }

    /// Whether every seat the event names is at this table; an event that names another is not
    /// applied (only a damaged log holds one).
    pub(super) fn seats_fit(&self, event: &Event) -> bool {
        let n = self.seats;
        let seats: &[Seat] = match event {
            Event::DealerChosen { dealer, .. } | Event::RoundStarted { dealer, .. } => {
                &[*dealer][..]
            }
            Event::TurnStarted { seat }
            | Event::CardPlayed { seat, .. }
            | Event::ColorChosen { seat, .. }
            | Event::CardsDrawn { seat, .. }
            | Event::DrawnCardKept { seat }
            | Event::PenaltyAccepted { seat }
            | Event::UnoCalled { seat }
            | Event::WentOut { seat } => &[*seat][..],
            Event::ColorRequested { seat, then } | Event::SwapRequested { seat, then } => {
                &[*seat, *then][..]
            }
            Event::HandsSwapped { seat, with } => &[*seat, *with][..],
            Event::PenaltyPending { seat, from, .. } => &[*seat, *from][..],
            Event::Challenged { seat, target, .. } => &[*seat, *target][..],
            Event::HandShown { seat, to, .. } => &[*seat, *to][..],
            Event::UnoCaught { seat, by } => &[*seat, *by][..],
            Event::RoundEnded {
                winner,
                totals,
                order,
                ..
            } => {
                return *winner < n && totals.len() == n && order.iter().all(|&s| s < n);
            }
            Event::MatchEnded { winners } => return winners.iter().all(|&w| w < n),
            _ => &[],
        };
        seats.iter().all(|&s| s < n)
    }

    /// [F-UNO-1]: the call window of a seat closes when another seat takes a turn action.
    fn close_uno_window(&mut self, actor: Seat) {
        if self.uno_exposed.is_some_and(|s| s != actor) {
            self.uno_exposed = None;
        }
    }

    // ----- reading the state -----

    /// The ruleset.
    pub fn ruleset(&self) -> Ruleset {
        self.deck.ruleset()
    }

    /// The deck table in use.
    pub fn deck(&self) -> &'static Deck {
        self.deck
    }

    /// Number of seats.
    pub fn seats(&self) -> usize {
        self.seats
    }

    /// Options of the match.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Number of events folded into this state, the creation included: the version a client
    /// sends as `expected_version`.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The round being played, from 1.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// This round's dealer.
    pub fn dealer(&self) -> Seat {
        self.dealer
    }

    /// Match totals by seat.
    pub fn scores(&self) -> &[u32] {
        &self.scores
    }

    /// The active side.
    pub fn side(&self) -> Side {
        self.side
    }

    /// Direction of play.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// Every hand, by seat, in the order the cards came.
    pub fn hands(&self) -> &[Vec<CardId>] {
        &self.hands
    }

    /// One hand; empty for a seat that is not at the table.
    #[inline]
    pub fn hand(&self, seat: Seat) -> &[CardId] {
        self.hands.get(seat).map_or(&[], Vec::as_slice)
    }

    fn hand_len(&self, seat: Seat) -> usize {
        self.hand(seat).len()
    }

    /// The draw pile, top card last.
    pub fn draw_pile(&self) -> &[CardId] {
        &self.draw
    }

    /// The discard pile, top card last.
    pub fn discard_pile(&self) -> &[CardId] {
        &self.discard
    }

    /// The top discard.
    pub fn top_card(&self) -> Option<CardId> {
        self.discard.last().copied()
    }

    /// The top discard's active face.
    pub fn top_face(&self) -> Option<Face> {
        self.top_card().map(|c| self.face(c))
    }

    /// A card's face on the active side.
    #[inline]
    pub fn face(&self, card: CardId) -> Face {
        self.deck.face(card, self.side)
    }

    /// The color to match; `None` while a color is to be declared.
    pub fn color(&self) -> Option<Color> {
        self.color
    }

    /// Whose move the game waits for.
    pub fn turn(&self) -> Seat {
        self.turn
    }

    /// What the game waits for.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The seat that holds one card without having called UNO while it may still be caught.
    pub fn uno_exposed(&self) -> Option<Seat> {
        self.uno_exposed
    }

    /// The last finished round's result.
    pub fn last_round(&self) -> Option<&RoundResult> {
        self.last_round.as_deref()
    }

    /// The winners, once the match is over.
    pub fn winners(&self) -> &[Seat] {
        &self.winners
    }

    /// Whether the match is over.
    pub fn is_over(&self) -> bool {
        self.phase == Phase::MatchOver
    }

    /// [H-LAST]: the seats out of this round, in the order they went out.
    pub fn out(&self) -> &[Seat] {
        &self.out
    }

    /// [H-LAST]: whether `seat` has gone out of this round.
    pub fn is_out(&self, seat: Seat) -> bool {
        self.out.contains(&seat)
    }

    /// Seats still playing this round: all of them, unless [H-LAST] let some go out.
    pub fn players_in(&self) -> usize {
        self.seats - self.out.len()
    }

    /// The seat after `seat` in the direction of play, passing over seats that went out
    /// [H-LAST].
    pub fn next_seat(&self, seat: Seat) -> Seat {
        let mut next = seat;
        for _ in 0..self.seats {
            next = match self.direction {
                Direction::Clockwise => (next + 1) % self.seats,
                Direction::CounterClockwise => (next + self.seats - 1) % self.seats,
            };
            if !self.out.contains(&next) {
                break;
            }
        }
        next
    }
}

/// Removes one copy of `card`, keeping the order of the rest.
fn remove(cards: &mut Vec<CardId>, card: CardId) {
    if let Some(i) = cards.iter().rposition(|&c| c == card) {
        cards.remove(i);
    }
}
