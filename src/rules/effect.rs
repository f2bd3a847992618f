//! What a played card does ([F-ACT], [F-FLIP], [F-WDRAW], [C-ACT-1]), what the first discard
//! does ([F-START], [C-START-1]), and how a round ends and is scored ([F-END]).

use rand::{Rng, RngExt};

use super::card::{CardId, Color, Kind, Seat};
use super::decide::Exec;
use super::event::{DrawCause, Event};
use super::setup::Scoring;
use super::state::Phase;

/// A play being carried out: who played which cards, of which kind, and what stood before it.
struct Played<'a> {
    seat: Seat,
    /// One card, or several identical ones [H-MULTI].
    cards: &'a [CardId],
    kind: Kind,
    /// [H-STACK]: cards stacked on the penalty before this play.
    stacked: u32,
    /// [F-CHAL-2]: the color current before the play, and whether the player held it.
    previous_color: Color,
    guilty: bool,
}

impl Played<'_> {
    /// The cards the victim of these draw cards takes besides the first card's own: what was
    /// stacked before [H-STACK], and the penalty of each card after the first [H-MULTI].
    fn extra_penalty(&self) -> usize {
        let each = usize::try_from(self.kind.penalty_cards()).unwrap_or(0);
        let stacked = usize::try_from(self.stacked).unwrap_or(0);
        stacked + each * self.cards.len().saturating_sub(1)
    }
}

/// Safety bound on first-discard resolution ([F-START-5], [F-START-6] may repeat); never reached
/// in practice, it only guarantees that starting a round terminates.
const MAX_STARTER_TURNS: usize = 1000;

impl<R: Rng + ?Sized> Exec<'_, R> {
    /// Plays `cards` from `seat`'s hand in order (one card, or several identical ones under
    /// [H-MULTI]), then applies their effect or ends the round.
    pub(super) fn play(&mut self, seat: Seat, cards: &[CardId], color: Option<Color>, uno: bool) {
        let Some(&card) = cards.last() else {
            return;
        };
        // [F-CHAL-2]: guilt is judged on the hand and color at the moment of the play.
        let previous_color = self.game.color.unwrap_or(Color::Red);
        // (Only a wild draw can be challenged: the hand is looked at only for one.)
        let guilty =
            self.game.face(card).kind.is_wild_draw() && self.game.holds_current_color(seat);
        // [H-STACK]: cards already stacked on the penalty this card passes on.
        let stacked = match self.game.phase {
            Phase::Penalty(p) => p.total,
            _ => 0,
        };
        for (i, &played) in cards.iter().enumerate() {
            self.emit(Event::CardPlayed {
                seat,
                card: played,
                color,
                uno: uno && i + 1 == cards.len(),
            });
        }
        let played = Played {
            seat,
            cards,
            kind: self.game.face(card).kind,
            stacked,
            previous_color,
            guilty,
        };
        if !self.game.hand(seat).is_empty() {
            self.effect(&played);
        } else if self.game.options.house.play_to_last && self.game.players_in() > 2 {
            // [H-LAST]: the round goes on without the seat.
            self.emit(Event::WentOut { seat });
            self.last_card_effect(&played);
        } else {
            self.end_round(&played);
        }
    }

    /// What a played card does; under [H-MULTI] an action card's effect counts once per card.
    fn effect(&mut self, p: &Played) {
        let seat = p.seat;
        let next = self.game.next_seat(seat);
        let seven_zero = self.game.options.house.seven_zero;
        match p.kind {
            // [H-SEVEN0]: a 7 swaps hands with a seat of the player's choice; a 0 (classic)
            // passes every hand on in the direction of play. Numbers are not action cards:
            // several 7s together swap once [H-MULTI].
            Kind::Number(7) if seven_zero => self.emit(Event::SwapRequested { seat, then: next }),
            Kind::Number(0) if seven_zero => {
                self.emit(Event::HandsPassed);
                self.emit(Event::TurnStarted { seat: next });
            }
            Kind::Number(_) | Kind::Wild => self.emit(Event::TurnStarted { seat: next }),
            // [H-STACK]: the next player takes it (with what was stacked) or passes it on.
            Kind::DrawOne | Kind::DrawTwo | Kind::DrawFive if self.game.options.house.stacking => {
                self.pend(p, next, false);
            }
            // [F-ACT-1], [F-ACT-7], [C-ACT-1]: the next player draws and loses the turn.
            Kind::DrawOne | Kind::DrawTwo | Kind::DrawFive => {
                self.draw_penalty(next, p.kind, p.extra_penalty(), DrawCause::Penalty);
                let after = self.game.next_seat(next);
                self.emit(Event::TurnStarted { seat: after });
            }
            // [F-ACT-2], [F-ACT-8]: with two players a Reverse acts as a Skip; by the ruling,
            // the direction still reverses (once per card [H-MULTI]).
            Kind::Reverse if self.game.players_in() == 2 => {
                for _ in p.cards {
                    self.emit(Event::DirectionReversed);
                }
                self.emit(Event::TurnStarted { seat });
            }
            Kind::Reverse => self.reverse(p),
            // [F-ACT-3]: the next player loses the turn (with two, the player plays again).
            Kind::Skip => self.skip(p),
            // [F-ACT-9]: everyone else loses the turn.
            Kind::SkipEveryone => self.emit(Event::TurnStarted { seat }),
            Kind::Flip => self.flip(p),
            // [F-ACT-5], [F-ACT-11], [C-ACT-1]: the next player takes it or challenges [F-CHAL-1].
            Kind::WildDrawTwo | Kind::WildDrawFour | Kind::WildDrawColor => {
                self.pend(p, next, p.guilty);
            }
        }
    }

    /// The draw cards played wait for `victim` to take them or answer, one pending penalty per
    /// card so that their totals add up [H-MULTI], [H-STACK]. `guilty` only matters for a wild
    /// draw, the one kind that can be challenged.
    fn pend(&mut self, p: &Played, victim: Seat, guilty: bool) {
        for &card in p.cards {
            self.emit(Event::PenaltyPending {
                seat: victim,
                from: p.seat,
                card,
                previous_color: p.previous_color,
                guilty,
            });
        }
    }

    /// [H-LAST]: what a seat's last card does when the round goes on without it. As at the end
    /// of a round [F-END-2], a draw card makes the next player draw at once (no challenge,
    /// [F-CHAL-5]; no stacking on it); a 7 or 0 swaps nothing; what would give the turn back to
    /// the seat gives it to the next one.
    fn last_card_effect(&mut self, p: &Played) {
        let next = self.game.next_seat(p.seat);
        if p.kind.is_draw() {
            self.draw_penalty(next, p.kind, p.extra_penalty(), DrawCause::Penalty);
            let after = self.game.next_seat(next);
            self.emit(Event::TurnStarted { seat: after });
            return;
        }
        match p.kind {
            Kind::Reverse => self.reverse(p),
            Kind::Skip => self.skip(p),
            Kind::Flip => self.flip(p),
            _ => self.emit(Event::TurnStarted { seat: next }),
        }
    }

    /// [F-ACT-2], [F-ACT-8]: the direction reverses, once per card [H-MULTI].
    fn reverse(&mut self, p: &Played) {
        for _ in p.cards {
            self.emit(Event::DirectionReversed);
        }
        let next = self.game.next_seat(p.seat);
        self.emit(Event::TurnStarted { seat: next });
    }

    /// [F-ACT-3]: the next player loses the turn; under [H-MULTI] one more other player per
    /// card (with two players, the player plays again however many).
    fn skip(&mut self, p: &Played) {
        let mut skipped = p.seat;
        for _ in p.cards {
            skipped = self.game.next_seat(skipped);
            if skipped == p.seat {
                skipped = self.game.next_seat(skipped);
            }
        }
        let after = self.game.next_seat(skipped);
        self.emit(Event::TurnStarted { seat: after });
    }

    /// [F-ACT-6], [F-FLIP-4]: flip (once per card, [H-MULTI]), then the next player plays on
    /// the new side, once the flipper has declared a color if the new top is a wild.
    fn flip(&mut self, p: &Played) {
        for _ in p.cards {
            self.emit(Event::Flipped);
        }
        let next = self.game.next_seat(p.seat);
        if self.game.color.is_none() {
            self.emit(Event::ColorRequested {
                seat: p.seat,
                then: next,
            });
        } else {
            self.emit(Event::TurnStarted { seat: next });
        }
    }

    /// [F-END-1..3]: the round ends when a seat plays its last card (under [H-LAST], when one
    /// seat is left). A draw card still makes the next player draw (no challenge: [F-CHAL-5]);
    /// a Flip still flips. Then hands are scored on the active side.
    fn end_round(&mut self, p: &Played) {
        let next = self.game.next_seat(p.seat);
        if p.kind.is_draw() {
            self.draw_penalty(next, p.kind, p.extra_penalty(), DrawCause::Penalty);
        } else if p.kind == Kind::Flip {
            for _ in p.cards {
                self.emit(Event::Flipped);
            }
        }
        // [H-LAST]: the finishing order, the seat left last; the first out wins the round.
        let mut order = self.game.out.clone();
        order.push(p.seat);
        if self.game.options.house.play_to_last {
            let left: Vec<Seat> = (0..self.game.seats)
                .filter(|s| !order.contains(s))
                .collect();
            order.extend(left);
        }
        self.score_round(order);
    }

    /// [F-END-3..8], [C-END-1]: scores the round, then ends the match or deals the next round.
    fn score_round(&mut self, order: Vec<Seat>) {
        let game = &*self.game;
        let winner = order.first().copied().unwrap_or(game.turn);
        let ruleset = game.ruleset();
        let hand_points: Vec<u32> = (0..game.seats)
            .map(|s| {
                game.hand(s)
                    .iter()
                    .map(|&c| game.face(c).points(ruleset))
                    .sum()
            })
            .collect();
        let points: Vec<u32> = match game.options.scoring {
            // [F-END-6]: the winner scores every opponent's hand.
            Scoring::Standard => (0..game.seats)
                .map(|s| {
                    if s == winner {
                        hand_points.iter().sum()
                    } else {
                        0
                    }
                })
                .collect(),
            // [F-END-7]: everyone scores their own hand; the winner's is empty.
            Scoring::Alternative => hand_points.clone(),
        };
        let totals: Vec<u32> = game
            .scores
            .iter()
            .zip(&points)
            .map(|(t, p)| t.saturating_add(*p))
            .collect();
        let target = game.options.target;
        let reached = totals.iter().any(|&t| t >= target);
        let over = reached || game.options.single_round;
        let winners: Vec<Seat> = match game.options.scoring {
            Scoring::Standard => vec![winner],
            // [F-END-7]: the lowest total wins; equal lowest totals win together.
            Scoring::Alternative => {
                let low = totals.iter().copied().min().unwrap_or(0);
                (0..game.seats)
                    .filter(|&s| totals.get(s) == Some(&low))
                    .collect()
            }
        };
        let round = game.round;
        let next_dealer = (game.dealer + 1) % game.seats;
        self.emit(Event::RoundEnded {
            round,
            winner,
            hand_points: Box::new(hand_points),
            points: Box::new(points),
            totals: Box::new(totals),
            order: Box::new(order),
        });
        if over {
            self.emit(Event::MatchEnded { winners });
        } else {
            // [F-END-9], [F-SETUP-2]: collect, shuffle, deal again; the deal passes clockwise.
            let deck = self.shuffled(self.game.deck.ids());
            self.start_round(round + 1, next_dealer, deck);
        }
    }

    /// [F-SETUP-2]: the creator's dealer, or the highest light-side number drawn (symbols count
    /// as zero); tied players draw again.
    pub(super) fn choose_first_dealer(&mut self, named: Option<Seat>) {
        if let Some(dealer) = named {
            self.emit(Event::DealerChosen {
                draws: Vec::new(),
                dealer,
            });
            return;
        }
        let seats = self.game.seats;
        let mut pile = Vec::new();
        let mut draws = Vec::new();
        let mut contenders: Vec<Seat> = (0..seats).collect();
        while contenders.len() > 1 {
            let mut best = 0;
            let mut drawn = Vec::with_capacity(contenders.len());
            for &seat in &contenders {
                if pile.is_empty() {
                    pile = self.shuffled(self.game.deck.ids());
                }
                let Some(card) = pile.pop() else { break };
                let value = match self.game.deck.face(card, super::Side::Light).kind {
                    Kind::Number(n) => n,
                    _ => 0,
                };
                best = best.max(value);
                drawn.push((seat, value));
                draws.push((seat, card));
            }
            contenders = drawn
                .into_iter()
                .filter(|&(_, v)| v == best)
                .map(|(s, _)| s)
                .collect();
        }
        let dealer = contenders.first().copied().unwrap_or(0);
        self.emit(Event::DealerChosen { draws, dealer });
    }

    /// Deals a round from `deck` (top first) and resolves its first discard.
    pub(super) fn start_round(&mut self, round: u32, dealer: Seat, deck: Vec<CardId>) {
        self.emit(Event::RoundStarted {
            round,
            dealer,
            deck,
        });
        self.resolve_first_discard();
    }

    /// [F-START-1..6], [C-START-1]: the first discard acts as if the dealer had played it.
    fn resolve_first_discard(&mut self) {
        let dealer = self.game.dealer;
        let first = (dealer + 1) % self.game.seats;
        for _ in 0..MAX_STARTER_TURNS {
            let Some(top) = self.game.top_card() else {
                break;
            };
            let kind = self.game.face(top).kind;
            match kind {
                // [F-START-5]: a wild draw goes back at a random place (not the top, where it
                // would be turned again) and the next card is turned.
                Kind::WildDrawTwo | Kind::WildDrawFour | Kind::WildDrawColor => {
                    let Some(&turned) = self.game.draw.last() else {
                        break;
                    };
                    let depth = self.rng.random_range(1..=self.game.draw.len());
                    self.emit(Event::StarterReturned {
                        card: top,
                        depth,
                        turned,
                    });
                }
                // [F-START-6]: the round starts on the dark side and the new top is read again.
                Kind::Flip => self.emit(Event::Flipped),
                // [F-START-1], [C-START-1]: the first player draws and is skipped.
                Kind::DrawOne | Kind::DrawTwo | Kind::DrawFive => {
                    self.draw_penalty(first, kind, 0, DrawCause::FirstDiscard);
                    let after = self.game.next_seat(first);
                    self.emit(Event::TurnStarted { seat: after });
                    return;
                }
                // [F-START-2]: the dealer plays first, counter-clockwise.
                Kind::Reverse => {
                    self.emit(Event::DirectionReversed);
                    self.emit(Event::TurnStarted { seat: dealer });
                    return;
                }
                // [F-START-3]: the first player is skipped.
                Kind::Skip => {
                    let after = self.game.next_seat(first);
                    self.emit(Event::TurnStarted { seat: after });
                    return;
                }
                // [F-START-6] ruling: Skip Everyone lets the dealer play first.
                Kind::SkipEveryone => {
                    self.emit(Event::TurnStarted { seat: dealer });
                    return;
                }
                // [F-START-4]: the first player declares the color, then plays.
                Kind::Wild => {
                    self.emit(Event::ColorRequested {
                        seat: first,
                        then: first,
                    });
                    return;
                }
                Kind::Number(_) => break,
            }
        }
        self.emit(Event::TurnStarted { seat: first });
    }
}
