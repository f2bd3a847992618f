//! Which actions a seat may take now: `legal_actions` is the one source of truth, and
//! [`Game::refusal`] only explains why an action it does not list is refused.

use super::action::{Action, Cards, RuleError};
use super::card::{CardId, Color, Kind, Seat};
use super::deck::{MatchKey, Ruleset};
use super::state::{Game, Phase};

impl Game {
    /// [F-TURN-2]: `card` matches the top discard: the current color, the same number or symbol,
    /// or a wild ([`MatchKey::matches`]). [F-WDRAW-2]: a wild draw is accepted even as a bluff.
    pub fn matches(&self, card: CardId) -> bool {
        let (color, kind) = self.match_codes();
        self.deck.key(card, self.side).matches(color, kind)
    }

    /// The current color's and the top discard's kind codes, which [`MatchKey::matches`] takes.
    #[inline]
    pub(super) fn match_codes(&self) -> (u8, u8) {
        let kind = self.top_card().map_or(MatchKey::NO_KIND, |top| {
            self.deck.key(top, self.side).kind()
        });
        (MatchKey::color_code(self.color), kind)
    }

    /// [H-STACK]: whether `seat` may play `card` on the pending draw card `pending`: the same
    /// symbol (Draw One, Two, Five, Wild Draw Two or Four), or in classic UNO a Draw Two of the
    /// declared color on a Wild Draw Four. Wild Draw Color never stacks.
    fn stacks_on(&self, seat: Seat, card: CardId, pending: CardId) -> bool {
        let (face, on) = (self.face(card), self.face(pending).kind);
        if on == Kind::WildDrawColor || face.kind == Kind::WildDrawColor || !face.kind.is_draw() {
            return false;
        }
        let same = face.kind == on;
        let answers_four = self.ruleset() == Ruleset::Classic
            && on == Kind::WildDrawFour
            && face.kind == Kind::DrawTwo
            && face.color.is_some()
            && face.color == self.color;
        (same || answers_four) && !self.strictly_forbidden(seat, card, &[])
    }

    /// [H-JUMP]: `card`'s active face is the top discard's (same color and number or symbol; a
    /// plain Wild on a plain Wild), and it is not a wild draw.
    pub fn identical_to_top(&self, card: CardId) -> bool {
        let face = self.face(card);
        !face.kind.is_wild_draw() && self.top_face() == Some(face)
    }

    /// [H-STRICT]: a wild draw that F-WDRAW-1 forbids is refused instead of left to a challenge.
    /// `also_held`: cards the seat holds that are not in its hand yet (those it is drawing).
    pub(super) fn strictly_forbidden(
        &self,
        seat: Seat,
        card: CardId,
        also_held: &[CardId],
    ) -> bool {
        self.options.house.strict_wild_draw
            && self.face(card).kind.is_wild_draw()
            && (self.holds_current_color(seat)
                || also_held
                    .iter()
                    .any(|&c| self.color.is_some() && self.face(c).color == self.color))
    }

    /// [F-WDRAW-1]: whether `seat` holds a card of the current color, which forbids a wild draw
    /// (and makes a challenge find its player guilty, [F-CHAL-2]).
    pub fn holds_current_color(&self, seat: Seat) -> bool {
        self.color.is_some()
            && self
                .hand(seat)
                .iter()
                .any(|&c| self.face(c).color == self.color)
    }

    /// Every action `seat` may take now. Empty for a seat not at the table.
    pub fn legal_actions(&self, seat: Seat) -> Vec<Action> {
        let mut out = Vec::new();
        self.legal_actions_into(seat, &mut out);
        out
    }

    /// [`Game::legal_actions`] into a buffer the caller reuses.
    pub fn legal_actions_into(&self, seat: Seat, out: &mut Vec<Action>) {
        out.clear();
        self.list_actions(seat, out);
    }

    /// Lists every action `seat` may take now into `out`, a list or a search for one action.
    fn list_actions(&self, seat: Seat, out: &mut impl Sink) {
        if self.phase == Phase::MatchOver || seat >= self.seats {
            return;
        }
        // [H-LAST]: a seat that went out only declares the color its last card (a Flip) asks
        // for.
        if self.is_out(seat) {
            if seat == self.turn && matches!(self.phase, Phase::ChooseColor { .. }) {
                for color in Color::of_side(self.side) {
                    out.push(Action::ChooseColor { color });
                }
            }
            return;
        }
        // Out of turn: the UNO call and the catch [F-TURN-5], [F-UNO]. [H-FALSEUNO]: any seat
        // may call or catch at any time, and pays two cards when it is wrong.
        if self.options.house.false_uno {
            out.push(Action::CallUno);
            for other in 0..self.seats {
                if other != seat && !self.is_out(other) {
                    out.push(Action::Catch { seat: other });
                }
            }
        } else if let Some(exposed) = self.uno_exposed {
            if exposed == seat {
                out.push(Action::CallUno);
            } else {
                out.push(Action::Catch { seat: exposed });
            }
        }
        if seat != self.turn {
            // [H-JUMP]: a card identical to the top discard, out of turn.
            if self.options.house.jump_in && self.phase == Phase::Play {
                let uno_due = self.hand(seat).len() == 2;
                for &card in self.candidates(seat, out) {
                    if self.identical_to_top(card) {
                        self.push_card_plays(card, uno_due, out);
                    }
                }
            }
            return;
        }
        let uno_due = self.hand(seat).len() == 2;
        match self.phase {
            Phase::Play => {
                // The hottest loop of a playout: each card's key against the codes, read once.
                let keys = self.deck.keys(self.side);
                let (color, kind) = self.match_codes();
                let strict = self.options.house.strict_wild_draw;
                for &card in self.candidates(seat, out) {
                    let key = keys.get(card.index()).copied().unwrap_or(MatchKey::WILD);
                    // [H-STRICT] does not forbid it (a wild draw while holding the color).
                    if key.matches(color, kind)
                        && !(strict && self.strictly_forbidden(seat, card, &[]))
                    {
                        self.push_plays(card, key.is_wild(), uno_due, out);
                        if self.options.house.multi {
                            self.push_many(seat, card, out);
                        }
                    }
                }
                out.push(Action::Draw);
            }
            Phase::PlayDrawn { card } => {
                if out.only().is_none_or(|only| only == Some(card))
                    && self.matches(card)
                    && !self.strictly_forbidden(seat, card, &[])
                {
                    self.push_card_plays(card, uno_due, out);
                }
                out.push(Action::Keep);
            }
            Phase::ChooseColor { .. } => {
                for color in Color::of_side(self.side) {
                    out.push(Action::ChooseColor { color });
                }
            }
            Phase::ChooseSwap { .. } => {
                for other in 0..self.seats {
                    if other != seat && !self.is_out(other) {
                        out.push(Action::Swap { seat: other });
                    }
                }
            }
            Phase::Penalty(penalty) => {
                out.push(Action::Accept);
                // [H-STRICT]: no wild draw is a bluff, so none is challenged. Only wild draws
                // are challenged at all (a Draw Two is pending only under H-STACK).
                if !self.options.house.strict_wild_draw
                    && self.face(penalty.card).kind.is_wild_draw()
                {
                    out.push(Action::Challenge);
                }
                // [H-STACK]: pass it on with a draw card of the same symbol.
                if self.options.house.stacking {
                    for &card in self.candidates(seat, out) {
                        if self.stacks_on(seat, card, penalty.card) {
                            self.push_card_plays(card, uno_due, out);
                        }
                    }
                }
            }
            Phase::MatchOver => {}
        }
    }

    /// The cards of `seat`'s hand whose plays `out` wants: all of them, or the one it looks for.
    fn candidates(&self, seat: Seat, out: &impl Sink) -> &[CardId] {
        let hand = self.hand(seat);
        match out.only() {
            None => hand,
            Some(card) => hand
                .iter()
                .position(|&c| Some(c) == card)
                .and_then(|at| hand.get(at..=at))
                .unwrap_or(&[]),
        }
    }

    /// The ways to play `card`: one per color for a wild, with and without the UNO call when the
    /// play leaves one card (`uno_due`: the seat holds two).
    #[inline(always)]
    fn push_plays(&self, card: CardId, wild: bool, uno_due: bool, out: &mut impl Sink) {
        if !wild && !uno_due {
            // Most plays of a playout: one way to play the card.
            out.push(Action::Play {
                card,
                color: None,
                uno: false,
            });
        } else {
            self.push_several_plays(card, wild, uno_due, out);
        }
    }

    /// [`Game::push_plays`] of a card whose key the caller has not read.
    fn push_card_plays(&self, card: CardId, uno_due: bool, out: &mut impl Sink) {
        let wild = self.deck.key(card, self.side).is_wild();
        self.push_plays(card, wild, uno_due, out);
    }

    /// [`Game::push_plays`] of a wild, or of a card that leaves one.
    #[inline(never)]
    fn push_several_plays(&self, card: CardId, wild: bool, uno_due: bool, out: &mut impl Sink) {
        let calls: &[bool] = if uno_due { &[false, true] } else { &[false] };
        for &uno in calls {
            if wild {
                for color in Color::of_side(self.side) {
                    out.push(Action::Play {
                        card,
                        color: Some(color),
                        uno,
                    });
                }
            } else {
                out.push(Action::Play {
                    card,
                    color: None,
                    uno,
                });
            }
        }
    }

    /// [H-MULTI]: every order of two or more identical colored cards starting with `first` (the
    /// last ends on top, and its hidden face differs), with and without the UNO call when the
    /// play leaves one card.
    fn push_many(&self, seat: Seat, first: CardId, out: &mut impl Sink) {
        let face = self.face(first);
        if face.color.is_none() {
            return;
        }
        let hand = self.hand(seat);
        let twins: Vec<CardId> = hand
            .iter()
            .copied()
            .filter(|&c| c != first && self.face(c) == face)
            .collect();
        if twins.is_empty() {
            return;
        }
        let mut sequences = Vec::new();
        let mut current = vec![first];
        arrangements(&twins, &mut current, &mut sequences);
        for cards in sequences {
            let unos: &[bool] = if hand.len() == cards.len() + 1 {
                &[false, true]
            } else {
                &[false]
            };
            if let Some(cards) = Cards::new(&cards) {
                for &uno in unos {
                    out.push(Action::PlayMany { cards, uno });
                }
            }
        }
    }

    /// Whether `seat` may take `action` now.
    pub fn is_legal(&self, seat: Seat, action: Action) -> bool {
        let mut search = Search {
            action,
            found: false,
        };
        self.list_actions(seat, &mut search);
        search.found
    }

    /// Why `action` is refused for `seat`; call it for actions `legal_actions` does not list.
    pub fn refusal(&self, seat: Seat, action: Action) -> RuleError {
        if self.phase == Phase::MatchOver {
            return RuleError::MatchOver;
        }
        if seat >= self.seats {
            return RuleError::NoSuchSeat { seat };
        }
        if self.is_out(seat) && seat != self.turn {
            return RuleError::OutOfRound { seat };
        }
        match action {
            Action::PlayMany { .. } if !self.options.house.multi => RuleError::MultiPlayOff,
            Action::Catch { seat: target } if target == seat => RuleError::CannotCatchYourself,
            Action::Catch { seat: target } if target >= self.seats => {
                RuleError::NoSuchSeat { seat: target }
            }
            Action::Catch { seat: target } => RuleError::NotCatchable { seat: target },
            Action::CallUno => RuleError::UnoNotDue,
            _ if seat != self.turn => RuleError::NotYourTurn { turn: self.turn },
            _ => self.turn_refusal(seat, action),
        }
    }

    /// Why the turn seat may not take `action` in the current phase.
    fn turn_refusal(&self, seat: Seat, action: Action) -> RuleError {
        match (self.phase, action) {
            (Phase::ChooseColor { .. }, Action::ChooseColor { color }) => {
                RuleError::ColorNotOnActiveSide { color }
            }
            (Phase::ChooseColor { .. }, _) => RuleError::ColorChoicePending,
            (Phase::ChooseSwap { .. }, Action::Swap { seat: other }) if other == seat => {
                RuleError::CannotSwapWithYourself
            }
            (Phase::ChooseSwap { .. }, Action::Swap { seat: other }) if self.is_out(other) => {
                RuleError::OutOfRound { seat: other }
            }
            (Phase::ChooseSwap { .. }, Action::Swap { seat: other }) => {
                RuleError::NoSuchSeat { seat: other }
            }
            (Phase::ChooseSwap { .. }, _) => RuleError::SwapChoicePending,
            (_, Action::Swap { .. }) => RuleError::NoSwapPending,
            (Phase::Penalty(_), Action::Challenge) if self.options.house.strict_wild_draw => {
                RuleError::ChallengeNotOffered
            }
            (Phase::Penalty(p), Action::Challenge) if !self.face(p.card).kind.is_wild_draw() => {
                RuleError::NoChallengePending
            }
            (Phase::Penalty(_), Action::Play { card, .. })
                if self.options.house.stacking && self.hand(seat).contains(&card) =>
            {
                RuleError::CannotStack { card }
            }
            (Phase::Penalty(_), _) => RuleError::PenaltyPending,
            (_, Action::ChooseColor { .. }) => RuleError::NoColorChoicePending,
            (_, Action::Accept) => RuleError::NoPenaltyPending,
            (_, Action::Challenge) => RuleError::NoChallengePending,
            (Phase::PlayDrawn { .. }, Action::Draw) => RuleError::AlreadyDrew,
            (Phase::Play, Action::Keep) => RuleError::NothingToKeep,
            (phase, Action::Play { card, color, uno }) => {
                self.play_refusal(seat, phase, card, color, uno)
            }
            (Phase::PlayDrawn { card }, Action::PlayMany { .. }) => {
                RuleError::OnlyDrawnCardPlayable { drawn: card }
            }
            (_, Action::PlayMany { cards, uno }) => self.many_refusal(seat, cards.as_slice(), uno),
            _ => RuleError::NotYourTurn { turn: self.turn },
        }
    }

    /// [H-MULTI]: why these cards may not be played together now.
    fn many_refusal(&self, seat: Seat, cards: &[CardId], uno: bool) -> RuleError {
        let Some(&first) = cards.first() else {
            return RuleError::NotIdentical { card: CardId(0) };
        };
        let mut hand = self.hand(seat).to_vec();
        for &card in cards {
            if self.deck.get(card).is_none() {
                return RuleError::UnknownCard { card };
            }
            let Some(at) = hand.iter().position(|&c| c == card) else {
                return RuleError::CardNotInHand { card };
            };
            hand.swap_remove(at);
        }
        let face = self.face(first);
        if face.color.is_none() || cards.len() < 2 {
            return RuleError::NotIdentical { card: first };
        }
        if let Some(&card) = cards.iter().find(|&&c| self.face(c) != face) {
            return RuleError::NotIdentical { card };
        }
        if uno && hand.len() != 1 {
            return RuleError::UnoNotDue;
        }
        RuleError::CardDoesNotMatch { card: first }
    }

    fn play_refusal(
        &self,
        seat: Seat,
        phase: Phase,
        card: CardId,
        color: Option<Color>,
        uno: bool,
    ) -> RuleError {
        if self.deck.get(card).is_none() {
            return RuleError::UnknownCard { card };
        }
        if !self.hand(seat).contains(&card) {
            return RuleError::CardNotInHand { card };
        }
        if let Phase::PlayDrawn { card: drawn } = phase
            && drawn != card
        {
            return RuleError::OnlyDrawnCardPlayable { drawn };
        }
        let wild = self.face(card).kind.is_wild();
        match color {
            None if wild => return RuleError::ColorRequired { card },
            Some(_) if !wild => return RuleError::ColorNotAllowed { card },
            Some(c) if c.side() != self.side => {
                return RuleError::ColorNotOnActiveSide { color: c };
            }
            _ => {}
        }
        if uno && self.hand(seat).len() != 2 {
            return RuleError::UnoNotDue;
        }
        if self.strictly_forbidden(seat, card, &[]) {
            return RuleError::WildDrawForbidden { card };
        }
        RuleError::CardDoesNotMatch { card }
    }
}

/// Where [`Game::list_actions`] puts what it finds.
trait Sink {
    fn push(&mut self, action: Action);

    /// The card whose plays are wanted, when only one card's are: a search for one action
    /// skips the other cards of the hand. `Some(None)`: no card's.
    #[inline]
    fn only(&self) -> Option<Option<CardId>> {
        None
    }
}

impl Sink for Vec<Action> {
    #[inline]
    fn push(&mut self, action: Action) {
        Vec::push(self, action);
    }
}

/// Looks for one action among the legal ones without listing them anywhere: [`Game::is_legal`]
/// runs on every action, and allocates nothing.
struct Search {
    action: Action,
    found: bool,
}

impl Sink for Search {
    #[inline]
    fn push(&mut self, action: Action) {
        self.found |= action == self.action;
    }

    #[inline]
    fn only(&self) -> Option<Option<CardId>> {
        Some(match self.action {
            Action::Play { card, .. } => Some(card),
            Action::PlayMany { cards, .. } => cards.as_slice().first().copied(),
            _ => None,
        })
    }
}

/// Every arrangement that extends `current` with one or more of `rest` (each used once), in
/// order, into `out`.
fn arrangements(rest: &[CardId], current: &mut Vec<CardId>, out: &mut Vec<Vec<CardId>>) {
    for (i, &card) in rest.iter().enumerate() {
        current.push(card);
        out.push(current.clone());
        let others: Vec<CardId> = rest
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &c)| c)
            .collect();
        arrangements(&others, current, out);
        current.pop();
    }
}

/// What the server does when a seat's turn timer runs out (SERVICE.md): take a pending penalty
/// without challenging, or draw a card and keep it (declaring a color if one is asked for).
pub fn timeout_move(game: &Game) -> Option<Action> {
    let seat = game.turn();
    let legal = game.legal_actions(seat);
    match game.phase() {
        Phase::Penalty(_) => Some(Action::Accept),
        Phase::Play => Some(Action::Draw),
        Phase::PlayDrawn { .. } => Some(Action::Keep),
        Phase::ChooseColor { .. } => legal
            .into_iter()
            .find(|a| matches!(a, Action::ChooseColor { .. })),
        Phase::ChooseSwap { .. } => legal.into_iter().find(|a| matches!(a, Action::Swap { .. })),
        Phase::MatchOver => None,
    }
}
