//! What a seat can ask for, and why a request may be refused.

use serde::{Deserialize, Serialize};

use super::card::{CardId, Color, Seat};

/// A seat's move. `legal_actions` lists exactly the ones allowed now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// Play a card from the hand [F-TURN-1]; a wild needs `color` [F-ACT-4]. `uno` calls UNO
    /// with the play, allowed when the play leaves one card [F-UNO-1].
    Play {
        /// The card.
        card: CardId,
        /// The color declared with a wild; `None` for other cards.
        color: Option<Color>,
        /// Call UNO with this play.
        uno: bool,
    },
    /// Draw one card instead of playing [F-TURN-3].
    Draw,
    /// Keep the playable card just drawn; the turn ends [F-TURN-3].
    Keep,
    /// Declare the current color when asked [F-START-4], [F-FLIP-4].
    ChooseColor {
        /// The color, of the active side.
        color: Color,
    },
    /// Take the pending wild draw penalty.
    Accept,
    /// Challenge the pending wild draw [F-CHAL-1].
    Challenge,
    /// Call UNO after the play that left one card [F-UNO-1].
    CallUno,
    /// Catch `seat`, which holds one card and has not called UNO [F-UNO-2].
    Catch {
        /// The seat caught.
        seat: Seat,
    },
    /// [H-SEVEN0]: after playing a 7, swap hands with `seat`.
    Swap {
        /// The other seat.
        seat: Seat,
    },
    /// [H-MULTI]: play several identical colored cards (same color and face on the active side)
    /// in one action, in the order given: the last ends on top. The first must match the pile.
    /// `uno` calls UNO with the play, allowed when it leaves one card.
    PlayMany {
        /// The cards, two or more.
        cards: Cards,
        /// Call UNO with this play.
        uno: bool,
    },
}

/// The most cards one [`Action::PlayMany`] carries: no deck holds more identical cards.
pub const MAX_TOGETHER: usize = 4;

/// The cards of one [`Action::PlayMany`], in the order played. A plain value (no allocation), so
/// an [`Action`] stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "Vec<CardId>", try_from = "Vec<CardId>")]
pub struct Cards {
    len: u8,
    ids: [CardId; MAX_TOGETHER],
}

impl Cards {
    /// The list of `ids`, or `None` when there are more than [`MAX_TOGETHER`].
    pub fn new(ids: &[CardId]) -> Option<Cards> {
        let mut cards = Cards {
            len: u8::try_from(ids.len()).ok()?,
            ids: [CardId(0); MAX_TOGETHER],
        };
        cards.ids.get_mut(..ids.len())?.copy_from_slice(ids);
        Some(cards)
    }

    /// The cards, in the order played.
    pub fn as_slice(&self) -> &[CardId] {
        self.ids.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl std::fmt::Debug for Cards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl From<Cards> for Vec<CardId> {
    fn from(cards: Cards) -> Vec<CardId> {
        cards.as_slice().to_vec()
    }
}

impl TryFrom<Vec<CardId>> for Cards {
    type Error = String;
    fn try_from(ids: Vec<CardId>) -> Result<Cards, String> {
        Cards::new(&ids).ok_or_else(|| format!("at most {MAX_TOGETHER} cards are played together"))
    }
}

/// Why an action was refused. The game is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The match is over; nothing more can be done.
    #[error("the match is over")]
    MatchOver,
    /// The seat is not at the table.
    #[error("seat {seat} is not at this table")]
    NoSuchSeat {
        /// The seat named.
        seat: Seat,
    },
    /// Only the seat whose turn it is may do this [F-TURN-5].
    #[error("it is seat {turn}'s turn")]
    NotYourTurn {
        /// Whose turn it is.
        turn: Seat,
    },
    /// No card has this id in this deck.
    #[error("card {card} is not in this deck")]
    UnknownCard {
        /// The id.
        card: CardId,
    },
    /// The card is not in the seat's hand.
    #[error("card {card} is not in your hand")]
    CardNotInHand {
        /// The card.
        card: CardId,
    },
    /// The card does not match the top discard or the current color [F-TURN-2].
    #[error("card {card} does not match the discard pile")]
    CardDoesNotMatch {
        /// The card.
        card: CardId,
    },
    /// A wild needs a declared color [F-ACT-4].
    #[error("playing wild card {card} needs a color")]
    ColorRequired {
        /// The card.
        card: CardId,
    },
    /// Only wilds take a color.
    #[error("card {card} is not a wild; it takes no color")]
    ColorNotAllowed {
        /// The card.
        card: CardId,
    },
    /// The color is not one of the active side's [F-ACT-4], [F-ACT-10].
    #[error("{color:?} is not a color of the active side")]
    ColorNotOnActiveSide {
        /// The color.
        color: Color,
    },
    /// After drawing, only the drawn card may be played [F-TURN-3].
    #[error("only the card just drawn, {drawn}, may be played now")]
    OnlyDrawnCardPlayable {
        /// The drawn card.
        drawn: CardId,
    },
    /// A turn has one draw [F-TURN-3].
    #[error("you have already drawn this turn; play the drawn card or keep it")]
    AlreadyDrew,
    /// Keep needs a playable drawn card.
    #[error("there is no drawn card to keep")]
    NothingToKeep,
    /// A color must be declared before anything else happens.
    #[error("a color must be declared first")]
    ColorChoicePending,
    /// Declaring a color is only for when one is asked for.
    #[error("no color is to be declared now")]
    NoColorChoicePending,
    /// The seat must take or challenge a wild draw first.
    #[error("a wild draw penalty must be accepted or challenged first")]
    PenaltyPending,
    /// There is no penalty to take.
    #[error("there is no penalty to accept")]
    NoPenaltyPending,
    /// Nothing to challenge [F-CHAL-1].
    #[error("there is no wild draw to challenge")]
    NoChallengePending,
    /// UNO is called with or right after the play that leaves one card [F-UNO-1].
    #[error("UNO can be called only with or right after the play that leaves you one card")]
    UnoNotDue,
    /// The seat holds more than one card, called UNO, or the window has closed [F-UNO-3].
    #[error("seat {seat} cannot be caught")]
    NotCatchable {
        /// The seat named.
        seat: Seat,
    },
    /// A player does not catch themselves.
    #[error("you cannot catch yourself")]
    CannotCatchYourself,
    /// [H-STRICT]: a wild draw may not be played while holding a card of the current color.
    #[error(
        "card {card} is a wild draw, and you hold a card of the current color (strict wild draws)"
    )]
    WildDrawForbidden {
        /// The card.
        card: CardId,
    },
    /// [H-STACK]: only a draw card of the pending one's symbol may be played on it.
    #[error("card {card} cannot be stacked on the pending draw card")]
    CannotStack {
        /// The card.
        card: CardId,
    },
    /// [H-SEVEN0]: the seat must choose whom to swap hands with first.
    #[error("choose whom to swap hands with first")]
    SwapChoicePending,
    /// [H-SEVEN0]: a swap follows only the play of a 7.
    #[error("there is no swap of hands to choose now")]
    NoSwapPending,
    /// [H-SEVEN0]: the swap is with another seat.
    #[error("you cannot swap hands with yourself")]
    CannotSwapWithYourself,
    /// [H-STRICT]: wild draws are never bluffs, so there is nothing to challenge.
    #[error("wild draws cannot be challenged in this game (strict wild draws)")]
    ChallengeNotOffered,
    /// [H-MULTI]: several cards in one action need the house rule.
    #[error("playing several cards at once needs the H-MULTI house rule")]
    MultiPlayOff,
    /// [H-MULTI]: cards played together are identical colored cards, two or more, each once.
    #[error(
        "card {card} cannot be played with the others: cards played together are two or more \
         different cards of the same color and face (wilds have no color)"
    )]
    NotIdentical {
        /// The first card that differs.
        card: CardId,
    },
    /// [H-LAST]: a seat that went out takes no part in the rest of the round.
    #[error("seat {seat} has gone out; the round goes on without it")]
    OutOfRound {
        /// The seat that went out.
        seat: Seat,
    },
}

impl RuleError {
    /// A stable UPPER_SNAKE reason, for APIs (google.rpc.ErrorInfo).
    pub fn reason(&self) -> &'static str {
        match self {
            RuleError::MatchOver => "MATCH_OVER",
            RuleError::NoSuchSeat { .. } => "NO_SUCH_SEAT",
            RuleError::NotYourTurn { .. } => "NOT_YOUR_TURN",
            RuleError::UnknownCard { .. } => "UNKNOWN_CARD",
            RuleError::CardNotInHand { .. } => "CARD_NOT_IN_HAND",
            RuleError::CardDoesNotMatch { .. } => "CARD_DOES_NOT_MATCH",
            RuleError::ColorRequired { .. } => "COLOR_REQUIRED",
            RuleError::ColorNotAllowed { .. } => "COLOR_NOT_ALLOWED",
            RuleError::ColorNotOnActiveSide { .. } => "COLOR_NOT_ON_ACTIVE_SIDE",
            RuleError::OnlyDrawnCardPlayable { .. } => "ONLY_DRAWN_CARD_PLAYABLE",
            RuleError::AlreadyDrew => "ALREADY_DREW",
            RuleError::NothingToKeep => "NOTHING_TO_KEEP",
            RuleError::ColorChoicePending => "COLOR_CHOICE_PENDING",
            RuleError::NoColorChoicePending => "NO_COLOR_CHOICE_PENDING",
            RuleError::PenaltyPending => "PENALTY_PENDING",
            RuleError::NoPenaltyPending => "NO_PENALTY_PENDING",
            RuleError::NoChallengePending => "NO_CHALLENGE_PENDING",
            RuleError::UnoNotDue => "UNO_NOT_DUE",
            RuleError::NotCatchable { .. } => "NOT_CATCHABLE",
            RuleError::CannotCatchYourself => "CANNOT_CATCH_YOURSELF",
            RuleError::WildDrawForbidden { .. } => "WILD_DRAW_FORBIDDEN",
            RuleError::ChallengeNotOffered => "CHALLENGE_NOT_OFFERED",
            RuleError::SwapChoicePending => "SWAP_CHOICE_PENDING",
            RuleError::CannotStack { .. } => "CARD_DOES_NOT_STACK",
            RuleError::NoSwapPending => "NO_SWAP_PENDING",
            RuleError::CannotSwapWithYourself => "CANNOT_SWAP_WITH_YOURSELF",
            RuleError::MultiPlayOff => "MULTI_PLAY_OFF",
            RuleError::NotIdentical { .. } => "CARDS_NOT_IDENTICAL",
            RuleError::OutOfRound { .. } => "OUT_OF_ROUND",
        }
    }
}
