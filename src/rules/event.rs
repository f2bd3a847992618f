//! Domain events: the facts a game is made of.
//!
//! Events record outcomes, not intentions: the cards each draw took, the order each shuffle
//! produced, the dealer the draw chose. Replaying them needs no random source and no rule: `apply`
//! (in `state.rs`) only moves cards and sets fields. Orders of piles are always written top first.
//!
//! Stored events are wrapped with a format version ([`encode`], [`decode`]) so that a later server
//! recognises what it reads.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::card::{CardId, Color, Seat};
use super::deck::Ruleset;
use super::setup::Options;

/// The cards one [`Event::CardsDrawn`] moves, in the order drawn: kept inline up to 16 (all but
/// the longest draws), so that deciding a draw allocates nothing. Stored as a JSON array.
pub type Drawn = SmallVec<[CardId; 16]>;

/// Why cards were drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawCause {
    /// The seat chose to draw on its turn [F-TURN-3].
    Turn,
    /// A draw card, played or accepted [F-ACT-1/5/7/11], [C-ACT-1].
    Penalty,
    /// The first discard was a draw card [F-START-1].
    FirstDiscard,
    /// The loser of a challenge draws [F-CHAL-3/4], [C-CHAL-1].
    Challenge,
    /// The seat was caught without calling UNO [F-UNO-2].
    UnoCaught,
    /// The seat called UNO without holding one card [H-FALSEUNO].
    FalseUno,
    /// The seat tried to catch a seat that could not be caught [H-FALSEUNO].
    FalseCatch,
}

/// One fact of a game. Event numbers (versions) are counted by the store, from 1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The first event of every game.
    GameCreated {
        /// UNO Flip or classic.
        ruleset: Ruleset,
        /// Number of seats.
        seats: usize,
        /// Scoring, target, house rules.
        options: Options,
    },
    /// The first dealer [F-SETUP-2]. `draws` lists the cards drawn for it, in order (empty when
    /// the creator named the dealer).
    DealerChosen {
        /// Who draws which card; ties draw again.
        draws: Vec<(Seat, CardId)>,
        /// The dealer.
        dealer: Seat,
    },
    /// A round is dealt from `deck` (top first) as [F-SETUP-3..4] say, on the light side, and
    /// the first discard is turned.
    RoundStarted {
        /// 1 for the first round.
        round: u32,
        /// This round's dealer.
        dealer: Seat,
        /// The shuffled deck, top first.
        deck: Vec<CardId>,
    },
    /// [F-START-5]: the first discard goes back into the draw pile, `depth` cards below its top,
    /// and the draw pile's top card `turned` replaces it.
    StarterReturned {
        /// The wild draw card put back.
        card: CardId,
        /// Cards above it in the draw pile once it is back.
        depth: usize,
        /// The card turned instead.
        turned: CardId,
    },
    /// `seat` is to play or draw [F-TURN-1].
    TurnStarted {
        /// Whose turn it is.
        seat: Seat,
    },
    /// A card moves from a hand to the discard pile and sets the current color.
    CardPlayed {
        /// Who played.
        seat: Seat,
        /// The card.
        card: CardId,
        /// The color declared with a wild.
        color: Option<Color>,
        /// UNO was called with this play [F-UNO-1].
        uno: bool,
    },
    /// A color declared apart from a play [F-START-4], [F-FLIP-4].
    ColorChosen {
        /// Who declared.
        seat: Seat,
        /// The color.
        color: Color,
    },
    /// `seat` must declare the current color, then `then` takes the turn.
    ColorRequested {
        /// Who declares.
        seat: Seat,
        /// Whose turn follows.
        then: Seat,
    },
    /// [H-SEVEN0]: `seat` played a 7 and must choose whom to swap hands with; then `then`
    /// takes the turn.
    SwapRequested {
        /// Who chooses.
        seat: Seat,
        /// Whose turn follows.
        then: Seat,
    },
    /// [H-SEVEN0]: `seat` and `with` swap hands.
    HandsSwapped {
        /// Who chose.
        seat: Seat,
        /// The other seat.
        with: Seat,
    },
    /// [H-SEVEN0]: a 0 was played (classic): every hand passes to the next seat in the
    /// direction of play.
    HandsPassed,
    /// [H-LAST]: `seat` played its last card and is out of the round, which goes on without it.
    /// Seats go out in the order of these events.
    WentOut {
        /// Who went out.
        seat: Seat,
    },
    /// The direction of play reverses [F-ACT-2].
    DirectionReversed,
    /// The table flips [F-FLIP-2]: both piles and every hand are turned over; the new top
    /// discard's color becomes current (none if it is a wild, [F-FLIP-4]).
    Flipped,
    /// Cards move from the top of the draw pile to a hand, top first. After a draw on the turn
    /// ([`DrawCause::Turn`]) the seat plays the drawn card or keeps it [F-TURN-3]; it decides
    /// even when the card cannot be played, so that nobody learns whether it could.
    CardsDrawn {
        /// Who draws.
        seat: Seat,
        /// The cards, in the order drawn.
        cards: Drawn,
        /// Why.
        cause: DrawCause,
    },
    /// The seat keeps the card it drew; its turn ends [F-TURN-3].
    DrawnCardKept {
        /// Who keeps.
        seat: Seat,
    },
    /// All discards but the top become the new draw pile, in this order, top first [F-EMPTY-1].
    Reshuffled {
        /// The new draw pile.
        order: Vec<CardId>,
    },
    /// `seat` must take the wild draw `card` played by `from`, or challenge it [F-CHAL-1].
    PenaltyPending {
        /// Who must take it.
        seat: Seat,
        /// Who played it.
        from: Seat,
        /// The wild draw card.
        card: CardId,
        /// The color current just before it [F-CHAL-2].
        previous_color: Color,
        /// Whether `from` held a card of `previous_color` when playing it [F-CHAL-2]. Hidden
        /// until a challenge.
        guilty: bool,
    },
    /// `seat` takes the pending penalty without challenging.
    PenaltyAccepted {
        /// Who accepts.
        seat: Seat,
    },
    /// `seat` challenges `target`'s wild draw; `guilty` is the outcome [F-CHAL-2].
    Challenged {
        /// The challenger.
        seat: Seat,
        /// The challenged player.
        target: Seat,
        /// The outcome.
        guilty: bool,
    },
    /// `seat` shows its hand to `to` alone [F-CHAL-1], [V-5].
    HandShown {
        /// Whose hand.
        seat: Seat,
        /// Who sees it.
        to: Seat,
        /// The hand.
        cards: Vec<CardId>,
    },
    /// `seat` calls UNO [F-UNO-1].
    UnoCalled {
        /// Who calls.
        seat: Seat,
    },
    /// `by` catches `seat` with one card and no call [F-UNO-2]; the draw of two follows.
    UnoCaught {
        /// The caught player.
        seat: Seat,
        /// Who caught.
        by: Seat,
    },
    /// The round is over [F-END]. Its lists are boxed: this rare event would otherwise make
    /// every event as wide as its four lists (112 bytes instead of 48).
    RoundEnded {
        /// Which round.
        round: u32,
        /// Who went out.
        winner: Seat,
        /// Each seat's hand, counted on the active side [F-END-3].
        hand_points: Box<Vec<u32>>,
        /// Points each seat scores for this round [F-END-6/7].
        points: Box<Vec<u32>>,
        /// Each seat's total after this round.
        totals: Box<Vec<u32>>,
        /// [H-LAST]: the seats in the order they went out, the one left last; otherwise just the
        /// winner.
        #[serde(default)]
        order: Box<Vec<Seat>>,
    },
    /// The match is over; `winners` are the seats that won it (several on a tie, [F-END-7]).
    MatchEnded {
        /// The winners.
        winners: Vec<Seat>,
    },
    /// The match ended without winners: for a long while nobody but the server moved
    /// (time-outs and bots only), so the server gave it up (SERVICE.md, lifecycle).
    MatchAbandoned,
    /// The lobby was never started and expired (SERVICE.md, lifecycle). It is the only event of
    /// such a game's log, in place of `GameCreated`: no game was ever dealt.
    LobbyExpired,
}

impl Event {
    /// The event's kind as its stored JSON names it (`"card_played"`): the `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::GameCreated { .. } => "game_created",
            Event::DealerChosen { .. } => "dealer_chosen",
            Event::RoundStarted { .. } => "round_started",
            Event::StarterReturned { .. } => "starter_returned",
            Event::TurnStarted { .. } => "turn_started",
            Event::CardPlayed { .. } => "card_played",
            Event::ColorChosen { .. } => "color_chosen",
            Event::ColorRequested { .. } => "color_requested",
            Event::SwapRequested { .. } => "swap_requested",
            Event::HandsSwapped { .. } => "hands_swapped",
            Event::HandsPassed => "hands_passed",
            Event::WentOut { .. } => "went_out",
            Event::DirectionReversed => "direction_reversed",
            Event::Flipped => "flipped",
            Event::CardsDrawn { .. } => "cards_drawn",
            Event::DrawnCardKept { .. } => "drawn_card_kept",
            Event::Reshuffled { .. } => "reshuffled",
            Event::PenaltyPending { .. } => "penalty_pending",
            Event::PenaltyAccepted { .. } => "penalty_accepted",
            Event::Challenged { .. } => "challenged",
            Event::HandShown { .. } => "hand_shown",
            Event::UnoCalled { .. } => "uno_called",
            Event::UnoCaught { .. } => "uno_caught",
            Event::RoundEnded { .. } => "round_ended",
            Event::MatchEnded { .. } => "match_ended",
            Event::MatchAbandoned => "match_abandoned",
            Event::LobbyExpired => "lobby_expired",
        }
    }
}

/// The format version written by this server.
pub const EVENT_FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Envelope<E> {
    v: u32,
    #[serde(flatten)]
    event: E,
}

/// Serializes an event with its format version, for a store.
pub fn encode(event: &Event) -> String {
    let envelope = Envelope {
        v: EVENT_FORMAT,
        event,
    };
    // Serializing these plain enums to JSON cannot fail: no maps with non-string keys, no I/O.
    serde_json::to_string(&envelope).unwrap_or_default()
}

/// Reads an event written by [`encode`].
pub fn decode(text: &str) -> Result<Event, DecodeError> {
    #[derive(Deserialize)]
    struct Version {
        v: u32,
    }
    let version: Version =
        serde_json::from_str(text).map_err(|e| DecodeError::Malformed(e.to_string()))?;
    if version.v != EVENT_FORMAT {
        return Err(DecodeError::UnknownVersion(version.v));
    }
    let envelope: Envelope<Event> =
        serde_json::from_str(text).map_err(|e| DecodeError::Malformed(e.to_string()))?;
    Ok(envelope.event)
}

/// A stored event that this server cannot read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Written by a format this server does not know.
    #[error("unknown event format version {0}")]
    UnknownVersion(u32),
    /// Not an event.
    #[error("malformed event: {0}")]
    Malformed(String),
}
