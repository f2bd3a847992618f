//! What each viewer may see ([V-1..7]): `view` for the whole table, `project` for one event.
//!
//! Hidden information never enters these types: opponents' cards appear only as their inactive
//! faces, sorted so that their order tells nothing, with no ids; the draw pile only as a count
//! and its top card's inactive face; shuffles only as counts.

use serde::{Deserialize, Serialize};

use super::action::Action;
use super::card::{CardId, Color, Face, Seat, Side};
use super::deck::Ruleset;
use super::event::{DrawCause, Event};
use super::setup::Options;
use super::state::{Direction, Game, Phase, RoundResult};
use super::tell::DrawTell;

/// Who is looking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Viewer {
    /// The player in this seat [V-1], [V-2].
    Seat(Seat),
    /// Someone who sees only what every player sees [V-6].
    Spectator,
}

impl Viewer {
    fn is(self, seat: Seat) -> bool {
        self == Viewer::Seat(seat)
    }
}

/// A card whose id and both faces the viewer may see: in their hand or on the discard pile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CardView {
    /// The card's id.
    pub id: CardId,
    /// Its light face.
    pub light: Face,
    /// Its dark face (none in classic UNO).
    pub dark: Option<Face>,
}

/// What the table shows of one seat [V-2].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlayerView {
    /// The seat.
    pub seat: Seat,
    /// Cards in hand.
    pub cards: usize,
    /// The inactive face of each card, sorted (empty in classic UNO, whose backs show nothing).
    pub backs: Vec<Face>,
    /// Holds one card without having called UNO, and may still be caught.
    pub uno_exposed: bool,
    /// Match total.
    pub score: u32,
    /// [H-LAST]: the place in which the seat went out of this round (1 = first); 0 while it
    /// plays.
    pub out_place: usize,
    /// Its last draw on its turn, while it may still hold cards it held then (`tell.rs`).
    pub draw_tell: Option<DrawTell>,
}

/// What the game waits for, as everyone may know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Awaiting {
    /// The turn seat plays or draws.
    Play,
    /// The turn seat plays the card it drew or keeps it.
    PlayOrKeepDrawn,
    /// The turn seat declares a color; then `then` plays.
    ChooseColor {
        /// Whose turn follows.
        then: Seat,
    },
    /// The turn seat chooses whom to swap hands with; then `then` plays [H-SEVEN0].
    ChooseSwap {
        /// Whose turn follows.
        then: Seat,
    },
    /// The turn seat takes or challenges the wild draw `card` played by `from` (or, under
    /// H-STACK, takes or passes on any draw card).
    Penalty {
        /// Who played it.
        from: Seat,
        /// The draw card (the top discard).
        card: CardId,
        /// Cards the seat takes if it accepts, stacked ones included [H-STACK] (0 for a Wild
        /// Draw Color, which draws until its color).
        total: u32,
    },
    /// Nothing: the match is over.
    MatchOver,
}

/// The table as one viewer sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    /// Who looks.
    pub viewer: Viewer,
    /// Events folded so far.
    pub version: u64,
    /// UNO Flip or classic.
    pub ruleset: Ruleset,
    /// Match options.
    pub options: Options,
    /// Round number, from 1.
    pub round: u32,
    /// This round's dealer.
    pub dealer: Seat,
    /// Active side.
    pub side: Side,
    /// Direction of play.
    pub direction: Direction,
    /// The color to match (none while one is to be declared).
    pub color: Option<Color>,
    /// Whose move the game waits for.
    pub turn: Seat,
    /// What it waits for.
    pub awaiting: Awaiting,
    /// The viewer's hand, every card with both faces [V-1] (empty for a spectator).
    pub hand: Vec<CardView>,
    /// The card the viewer just drew and may play or keep.
    pub drawn_card: Option<CardId>,
    /// Every seat as the table shows it, the viewer's included.
    pub players: Vec<PlayerView>,
    /// Cards in the draw pile [V-3].
    pub draw_count: usize,
    /// The inactive face of the draw pile's top card [V-3].
    pub draw_top: Option<Face>,
    /// The discard pile, top card last [V-4].
    pub discard: Vec<CardView>,
    /// The last finished round.
    pub last_round: Option<RoundSummary>,
    /// The winners, once the match is over.
    pub winners: Vec<Seat>,
    /// What the viewer may do now (empty for a spectator).
    pub legal_actions: Vec<Action>,
}

/// A finished round's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundSummary {
    /// Which round.
    pub round: u32,
    /// Who went out.
    pub winner: Seat,
    /// Each hand's value.
    pub hand_points: Vec<u32>,
    /// Points scored this round.
    pub points: Vec<u32>,
    /// [H-LAST]: the finishing order, the seat left last; otherwise just the winner.
    pub order: Vec<Seat>,
}

impl From<&RoundResult> for RoundSummary {
    fn from(r: &RoundResult) -> Self {
        RoundSummary {
            round: r.round,
            winner: r.winner,
            hand_points: r.hand_points.clone(),
            points: r.points.clone(),
            order: r.order.clone(),
        }
    }
}

/// One event as a viewer may see it. Every event has a projection for every viewer, so each
/// viewer's event numbering stays gapless.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SeenEvent {
    /// See [`Event::GameCreated`].
    GameCreated {
        /// UNO Flip or classic.
        ruleset: Ruleset,
        /// Seats.
        seats: usize,
        /// Options.
        options: Options,
    },
    /// See [`Event::DealerChosen`]; the draws are public.
    DealerChosen {
        /// Who drew which card.
        draws: Vec<(Seat, CardId)>,
        /// The dealer.
        dealer: Seat,
    },
    /// A round is dealt. The deck order stays hidden [V-7].
    RoundStarted {
        /// Round number.
        round: u32,
        /// Dealer.
        dealer: Seat,
        /// The viewer's hand (empty for a spectator).
        hand: Vec<CardView>,
        /// What the table shows of every seat.
        players: Vec<PlayerView>,
        /// The first discard.
        starter: CardView,
        /// Cards in the draw pile.
        draw_count: usize,
        /// Its top card's inactive face.
        draw_top: Option<Face>,
    },
    /// The first discard went back into the draw pile (where is hidden) and `turned` replaced it.
    StarterReturned {
        /// The card put back.
        card: CardId,
        /// The new first discard.
        turned: CardView,
        /// The draw pile's new top, inactive face.
        draw_top: Option<Face>,
    },
    /// See [`Event::TurnStarted`].
    TurnStarted {
        /// Whose turn.
        seat: Seat,
    },
    /// A card was played; it is public.
    CardPlayed {
        /// Who.
        seat: Seat,
        /// The card.
        card: CardView,
        /// Declared color of a wild.
        color: Option<Color>,
        /// UNO called with it.
        uno: bool,
    },
    /// See [`Event::ColorChosen`].
    ColorChosen {
        /// Who.
        seat: Seat,
        /// The color.
        color: Color,
    },
    /// See [`Event::ColorRequested`].
    ColorRequested {
        /// Who declares.
        seat: Seat,
        /// Who plays next.
        then: Seat,
    },
    /// See [`Event::SwapRequested`].
    SwapRequested {
        /// Who chooses.
        seat: Seat,
        /// Who plays next.
        then: Seat,
    },
    /// Two seats swapped hands [H-SEVEN0]: each of them now sees its new hand; everyone sees
    /// the table as it now is.
    HandsSwapped {
        /// Who chose.
        seat: Seat,
        /// The other seat.
        with: Seat,
        /// The viewer's new hand, when it is one of the two (else empty).
        hand: Vec<CardView>,
        /// What the table now shows of every seat.
        players: Vec<PlayerView>,
    },
    /// Every hand passed to the next seat [H-SEVEN0].
    HandsPassed {
        /// The viewer's new hand (empty for a spectator).
        hand: Vec<CardView>,
        /// What the table now shows of every seat.
        players: Vec<PlayerView>,
    },
    /// See [`Event::WentOut`].
    WentOut {
        /// Who went out.
        seat: Seat,
    },
    /// See [`Event::DirectionReversed`].
    DirectionReversed,
    /// The table flipped: every hand now shows its other faces to the table [F-FLIP-5].
    Flipped {
        /// What the table now shows of every seat.
        players: Vec<PlayerView>,
        /// The draw pile's new top, inactive face.
        draw_top: Option<Face>,
    },
    /// Cards were drawn. Only their owner sees ids; everyone sees their inactive faces.
    CardsDrawn {
        /// Who drew.
        seat: Seat,
        /// How many.
        count: usize,
        /// The cards, for their owner only.
        cards: Vec<CardView>,
        /// Their inactive faces, sorted.
        backs: Vec<Face>,
        /// Why.
        cause: DrawCause,
        /// The draw pile's new top, inactive face.
        draw_top: Option<Face>,
    },
    /// See [`Event::DrawnCardKept`].
    DrawnCardKept {
        /// Who.
        seat: Seat,
    },
    /// The discards were shuffled into a new draw pile (order hidden) [F-EMPTY-1].
    Reshuffled {
        /// Cards in the new draw pile.
        count: usize,
        /// Its top card's inactive face.
        draw_top: Option<Face>,
    },
    /// `seat` must take or challenge the wild draw. Whether it was a bluff stays hidden.
    PenaltyPending {
        /// Who must take it.
        seat: Seat,
        /// Who played it.
        from: Seat,
        /// The card.
        card: CardId,
        /// The color current before it.
        previous_color: Color,
        /// Cards the seat takes if it accepts, stacked ones included [H-STACK].
        total: u32,
    },
    /// See [`Event::PenaltyAccepted`].
    PenaltyAccepted {
        /// Who.
        seat: Seat,
    },
    /// See [`Event::Challenged`]: the outcome is public.
    Challenged {
        /// Challenger.
        seat: Seat,
        /// Challenged.
        target: Seat,
        /// Outcome.
        guilty: bool,
    },
    /// `seat` showed its hand to `to`; the cards only to `to` and the owner [V-5].
    HandShown {
        /// Whose hand.
        seat: Seat,
        /// Who saw it.
        to: Seat,
        /// The hand, when the viewer may see it.
        cards: Vec<CardView>,
    },
    /// See [`Event::UnoCalled`].
    UnoCalled {
        /// Who.
        seat: Seat,
    },
    /// See [`Event::UnoCaught`].
    UnoCaught {
        /// Caught.
        seat: Seat,
        /// Catcher.
        by: Seat,
    },
    /// See [`Event::RoundEnded`].
    RoundEnded {
        /// Round.
        round: u32,
        /// Winner.
        winner: Seat,
        /// Hand values.
        hand_points: Vec<u32>,
        /// Points this round.
        points: Vec<u32>,
        /// Totals.
        totals: Vec<u32>,
        /// Finishing order [H-LAST].
        order: Vec<Seat>,
    },
    /// See [`Event::MatchEnded`].
    MatchEnded {
        /// Winners.
        winners: Vec<Seat>,
    },
    /// See [`Event::MatchAbandoned`].
    MatchAbandoned,
    /// See [`Event::LobbyExpired`].
    LobbyExpired,
}

impl Game {
    fn card_view(&self, id: CardId) -> CardView {
        match self.deck.get(id) {
            Some(card) => CardView {
                id,
                light: card.light,
                dark: card.dark,
            },
            None => CardView {
                id,
                light: self.face(id),
                dark: None,
            },
        }
    }

    /// The face of `card` that the table sees while it is in a hand or on the draw pile.
    fn back(&self, card: CardId) -> Option<Face> {
        self.deck.get(card).and_then(|c| c.back(self.side))
    }

    fn backs_of(&self, cards: &[CardId]) -> Vec<Face> {
        let mut backs: Vec<Face> = cards.iter().filter_map(|&c| self.back(c)).collect();
        backs.sort_unstable();
        backs
    }

    fn players_view(&self) -> Vec<PlayerView> {
        (0..self.seats)
            .map(|seat| PlayerView {
                seat,
                cards: self.hand(seat).len(),
                backs: self.backs_of(self.hand(seat)),
                uno_exposed: self.uno_exposed == Some(seat),
                score: self.scores.get(seat).copied().unwrap_or(0),
                out_place: self
                    .out
                    .iter()
                    .position(|&o| o == seat)
                    .map_or(0, |p| p + 1),
                draw_tell: self.draw_tell(seat),
            })
            .collect()
    }

    fn draw_top_back(&self) -> Option<Face> {
        self.draw.last().and_then(|&c| self.back(c))
    }

    fn own_cards(&self, viewer: Viewer, seat: Seat, cards: &[CardId]) -> Vec<CardView> {
        if viewer.is(seat) {
            cards.iter().map(|&c| self.card_view(c)).collect()
        } else {
            Vec::new()
        }
    }

    /// The table as `viewer` may see it [V-1..7], with the viewer's legal actions.
    pub fn view(&self, viewer: Viewer) -> View {
        let (hand, legal_actions) = match viewer {
            Viewer::Seat(seat) => (
                self.own_cards(viewer, seat, self.hand(seat)),
                self.legal_actions(seat),
            ),
            Viewer::Spectator => (Vec::new(), Vec::new()),
        };
        let awaiting = match self.phase {
            Phase::Play => Awaiting::Play,
            Phase::PlayDrawn { .. } => Awaiting::PlayOrKeepDrawn,
            Phase::ChooseColor { then } => Awaiting::ChooseColor { then },
            Phase::ChooseSwap { then } => Awaiting::ChooseSwap { then },
            Phase::Penalty(p) => Awaiting::Penalty {
                from: p.from,
                card: p.card,
                total: p.total,
            },
            Phase::MatchOver => Awaiting::MatchOver,
        };
        let drawn_card = match self.phase {
            Phase::PlayDrawn { card } if viewer.is(self.turn) => Some(card),
            _ => None,
        };
        View {
            viewer,
            version: self.version,
            ruleset: self.ruleset(),
            options: self.options,
            round: self.round,
            dealer: self.dealer,
            side: self.side,
            direction: self.direction,
            color: self.color,
            turn: self.turn,
            awaiting,
            hand,
            drawn_card,
            players: self.players_view(),
            draw_count: self.draw.len(),
            draw_top: self.draw_top_back(),
            discard: self.discard.iter().map(|&c| self.card_view(c)).collect(),
            last_round: self.last_round.as_deref().map(RoundSummary::from),
            winners: self.winners.clone(),
            legal_actions,
        }
    }
}

/// `event` as `viewer` may see it. `game` is the state right after the event was applied.
pub fn project(game: &Game, event: &Event, viewer: Viewer) -> SeenEvent {
    match event {
        Event::GameCreated {
            ruleset,
            seats,
            options,
        } => SeenEvent::GameCreated {
            ruleset: *ruleset,
            seats: *seats,
            options: *options,
        },
        Event::DealerChosen { draws, dealer } => SeenEvent::DealerChosen {
            draws: draws.clone(),
            dealer: *dealer,
        },
        Event::RoundStarted { round, dealer, .. } => SeenEvent::RoundStarted {
            round: *round,
            dealer: *dealer,
            hand: match viewer {
                Viewer::Seat(seat) => game.own_cards(viewer, seat, game.hand(seat)),
                Viewer::Spectator => Vec::new(),
            },
            players: game.players_view(),
            starter: game.card_view(game.top_card().unwrap_or(CardId(0))),
            draw_count: game.draw.len(),
            draw_top: game.draw_top_back(),
        },
        Event::StarterReturned { card, turned, .. } => SeenEvent::StarterReturned {
            card: *card,
            turned: game.card_view(*turned),
            draw_top: game.draw_top_back(),
        },
        Event::TurnStarted { seat } => SeenEvent::TurnStarted { seat: *seat },
        Event::CardPlayed {
            seat,
            card,
            color,
            uno,
        } => SeenEvent::CardPlayed {
            seat: *seat,
            card: game.card_view(*card),
            color: *color,
            uno: *uno,
        },
        Event::ColorChosen { seat, color } => SeenEvent::ColorChosen {
            seat: *seat,
            color: *color,
        },
        Event::ColorRequested { seat, then } => SeenEvent::ColorRequested {
            seat: *seat,
            then: *then,
        },
        Event::DirectionReversed => SeenEvent::DirectionReversed,
        Event::SwapRequested { seat, then } => SeenEvent::SwapRequested {
            seat: *seat,
            then: *then,
        },
        Event::HandsSwapped { seat, with } => SeenEvent::HandsSwapped {
            seat: *seat,
            with: *with,
            hand: match viewer {
                Viewer::Seat(me) if me == *seat || me == *with => {
                    game.own_cards(viewer, me, game.hand(me))
                }
                _ => Vec::new(),
            },
            players: game.players_view(),
        },
        Event::HandsPassed => SeenEvent::HandsPassed {
            hand: match viewer {
                Viewer::Seat(me) => game.own_cards(viewer, me, game.hand(me)),
                Viewer::Spectator => Vec::new(),
            },
            players: game.players_view(),
        },
        Event::Flipped => SeenEvent::Flipped {
            players: game.players_view(),
            draw_top: game.draw_top_back(),
        },
        Event::CardsDrawn { seat, cards, cause } => SeenEvent::CardsDrawn {
            seat: *seat,
            count: cards.len(),
            cards: game.own_cards(viewer, *seat, cards),
            backs: game.backs_of(cards),
            cause: *cause,
            draw_top: game.draw_top_back(),
        },
        Event::DrawnCardKept { seat } => SeenEvent::DrawnCardKept { seat: *seat },
        Event::Reshuffled { order } => SeenEvent::Reshuffled {
            count: order.len(),
            draw_top: game.draw_top_back(),
        },
        Event::PenaltyPending {
            seat,
            from,
            card,
            previous_color,
            ..
        } => SeenEvent::PenaltyPending {
            seat: *seat,
            from: *from,
            card: *card,
            previous_color: *previous_color,
            total: match game.phase {
                Phase::Penalty(p) => p.total,
                _ => 0,
            },
        },
        Event::PenaltyAccepted { seat } => SeenEvent::PenaltyAccepted { seat: *seat },
        Event::Challenged {
            seat,
            target,
            guilty,
        } => SeenEvent::Challenged {
            seat: *seat,
            target: *target,
            guilty: *guilty,
        },
        Event::HandShown { seat, to, cards } => SeenEvent::HandShown {
            seat: *seat,
            to: *to,
            cards: if viewer.is(*to) || viewer.is(*seat) {
                cards.iter().map(|&c| game.card_view(c)).collect()
            } else {
                Vec::new()
            },
        },
        Event::UnoCalled { seat } => SeenEvent::UnoCalled { seat: *seat },
        Event::UnoCaught { seat, by } => SeenEvent::UnoCaught {
            seat: *seat,
            by: *by,
        },
        Event::RoundEnded {
            round,
            winner,
            hand_points,
            points,
            totals,
            order,
        } => SeenEvent::RoundEnded {
            round: *round,
            winner: *winner,
            hand_points: (**hand_points).clone(),
            points: (**points).clone(),
            totals: (**totals).clone(),
            order: (**order).clone(),
        },
        Event::WentOut { seat } => SeenEvent::WentOut { seat: *seat },
        Event::MatchEnded { winners } => SeenEvent::MatchEnded {
            winners: winners.clone(),
        },
        Event::MatchAbandoned => SeenEvent::MatchAbandoned,
        Event::LobbyExpired => SeenEvent::LobbyExpired,
    }
}

/// An event of a log that has no game (yet), as every viewer sees it: only
/// [`Event::LobbyExpired`] can be one.
pub fn project_lobby(event: &Event) -> Option<SeenEvent> {
    matches!(event, Event::LobbyExpired).then_some(SeenEvent::LobbyExpired)
}
