//! The one catalogue of refusal reasons: every `google.rpc.ErrorInfo` reason the server sends,
//! the service's own and the rules' alike. Each is documented once, in docs/api.md (its code,
//! whether a retry helps, what it means); a test checks that this list and that table agree.

use crate::rules::{RuleError, SetupError};

macro_rules! catalogue {
    ($($variant:ident = $text:literal,)*) => {
        /// A refusal's stable UPPER_SNAKE reason. The variants are documented in docs/api.md,
        /// the one place a client author reads them.
        #[allow(missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Reason {
            $($variant,)*
        }

        impl Reason {
            /// Every reason, in catalogue order.
            pub const ALL: &'static [Reason] = &[$(Reason::$variant,)*];

            /// The reason as sent on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Reason::$variant => $text,)*
                }
            }
        }
    };
}

catalogue! {
    // Requests the server could not read (made by the transport, named by the reasons layer).
    UndecodableRequest = "UNDECODABLE_REQUEST",
    MalformedRequest = "MALFORMED_REQUEST",
    InvalidRequest = "INVALID_REQUEST",
    MessageTooLarge = "MESSAGE_TOO_LARGE",
    UnknownMethod = "UNKNOWN_METHOD",
    // Connect and JSON requests the Connect layer refuses before the call.
    HttpMethodNotAllowed = "HTTP_METHOD_NOT_ALLOWED",
    ContentTypeUnsupported = "CONTENT_TYPE_UNSUPPORTED",
    EncodingUnsupported = "ENCODING_UNSUPPORTED",
    DeadlineExceeded = "DEADLINE_EXCEEDED",
    Cancelled = "CANCELLED",
    ResourceExhausted = "RESOURCE_EXHAUSTED",
    Unavailable = "UNAVAILABLE",
    InternalError = "INTERNAL_ERROR",
    // Malformed input.
    InvalidGameName = "INVALID_GAME_NAME",
    OptionsMissing = "OPTIONS_MISSING",
    ActionMissing = "ACTION_MISSING",
    UnknownRuleset = "UNKNOWN_RULESET",
    UnknownScoring = "UNKNOWN_SCORING",
    UnknownColor = "UNKNOWN_COLOR",
    UnknownBotLevel = "UNKNOWN_BOT_LEVEL",
    BotThinkTooLong = "BOT_THINK_TOO_LONG",
    BotSeatOutOfRange = "BOT_SEAT_OUT_OF_RANGE",
    BotSeatDuplicate = "BOT_SEAT_DUPLICATE",
    BotFillWaitTooLong = "BOT_FILL_WAIT_TOO_LONG",
    TurnTimerTooLong = "TURN_TIMER_TOO_LONG",
    TooManyCards = "TOO_MANY_CARDS",
    RatedGameFixedDeck = "RATED_GAME_FIXED_DECK",
    RequestIdTooLong = "REQUEST_ID_TOO_LONG",
    PositionOutOfRange = "POSITION_OUT_OF_RANGE",
    VersionOutOfRange = "VERSION_OUT_OF_RANGE",
    AfterVersionAhead = "AFTER_VERSION_AHEAD",
    PageTokenInvalid = "PAGE_TOKEN_INVALID",
    MatchOptionsInvalid = "MATCH_OPTIONS_INVALID",
    PlayerNameInvalid = "PLAYER_NAME_INVALID",
    PlayerNameMalformed = "PLAYER_NAME_MALFORMED",
    // Game options the rules cannot play (rules::SetupError).
    SeatCountOutOfRange = "SEAT_COUNT_OUT_OF_RANGE",
    DealerNotASeat = "DEALER_NOT_A_SEAT",
    TargetOutOfRange = "TARGET_OUT_OF_RANGE",
    DeckCardUnknown = "DECK_CARD_UNKNOWN",
    DeckCardRepeated = "DECK_CARD_REPEATED",
    DeckIncomplete = "DECK_INCOMPLETE",
    // Tokens and permissions.
    SeatTokenInvalid = "SEAT_TOKEN_INVALID",
    SeatTokenOtherGame = "SEAT_TOKEN_OTHER_GAME",
    SeatLeft = "SEAT_LEFT",
    PlayerTokenInvalid = "PLAYER_TOKEN_INVALID",
    // The host's sign-in (a bearer JWT).
    TokenMalformed = "TOKEN_MALFORMED",
    TokenExpired = "TOKEN_EXPIRED",
    TokenNotYetValid = "TOKEN_NOT_YET_VALID",
    TokenSignatureInvalid = "TOKEN_SIGNATURE_INVALID",
    TokenAudienceInvalid = "TOKEN_AUDIENCE_INVALID",
    TokenIssuerInvalid = "TOKEN_ISSUER_INVALID",
    TokenAlgorithmNotAllowed = "TOKEN_ALGORITHM_NOT_ALLOWED",
    TokenClaimMissing = "TOKEN_CLAIM_MISSING",
    TokenKeyUnknown = "TOKEN_KEY_UNKNOWN",
    SignInUnavailable = "SIGN_IN_UNAVAILABLE",
    AdminTokenRequired = "ADMIN_TOKEN_REQUIRED",
    // Things that are not there.
    GameNotFound = "GAME_NOT_FOUND",
    PlayerNotFound = "PLAYER_NOT_FOUND",
    InviteCodeUnknown = "INVITE_CODE_UNKNOWN",
    // The game's lifecycle.
    SeatTaken = "SEAT_TAKEN",
    NoOpenSeat = "NO_OPEN_SEAT",
    SeatsOpen = "SEATS_OPEN",
    RatedGameNeedsPlayer = "RATED_GAME_NEEDS_PLAYER",
    LobbyExpired = "LOBBY_EXPIRED",
    InviteCodeExpired = "INVITE_CODE_EXPIRED",
    GameAlreadyStarted = "GAME_ALREADY_STARTED",
    GameNotStarted = "GAME_NOT_STARTED",
    GameOver = "GAME_OVER",
    GameNotFinished = "GAME_NOT_FINISHED",
    VersionMismatch = "VERSION_MISMATCH",
    AlreadyMatching = "ALREADY_MATCHING",
    MatchmakingElsewhere = "MATCHMAKING_ELSEWHERE",
    // Moves the rules forbid now (rules::RuleError).
    MatchOver = "MATCH_OVER",
    NoSuchSeat = "NO_SUCH_SEAT",
    NotYourTurn = "NOT_YOUR_TURN",
    UnknownCard = "UNKNOWN_CARD",
    CardNotInHand = "CARD_NOT_IN_HAND",
    CardDoesNotMatch = "CARD_DOES_NOT_MATCH",
    ColorRequired = "COLOR_REQUIRED",
    ColorNotAllowed = "COLOR_NOT_ALLOWED",
    ColorNotOnActiveSide = "COLOR_NOT_ON_ACTIVE_SIDE",
    OnlyDrawnCardPlayable = "ONLY_DRAWN_CARD_PLAYABLE",
    AlreadyDrew = "ALREADY_DREW",
    NothingToKeep = "NOTHING_TO_KEEP",
    ColorChoicePending = "COLOR_CHOICE_PENDING",
    NoColorChoicePending = "NO_COLOR_CHOICE_PENDING",
    PenaltyPending = "PENALTY_PENDING",
    NoPenaltyPending = "NO_PENALTY_PENDING",
    NoChallengePending = "NO_CHALLENGE_PENDING",
    UnoNotDue = "UNO_NOT_DUE",
    NotCatchable = "NOT_CATCHABLE",
    CannotCatchYourself = "CANNOT_CATCH_YOURSELF",
    WildDrawForbidden = "WILD_DRAW_FORBIDDEN",
    ChallengeNotOffered = "CHALLENGE_NOT_OFFERED",
    SwapChoicePending = "SWAP_CHOICE_PENDING",
    CardDoesNotStack = "CARD_DOES_NOT_STACK",
    NoSwapPending = "NO_SWAP_PENDING",
    CannotSwapWithYourself = "CANNOT_SWAP_WITH_YOURSELF",
    MultiPlayOff = "MULTI_PLAY_OFF",
    CardsNotIdentical = "CARDS_NOT_IDENTICAL",
    OutOfRound = "OUT_OF_ROUND",
    // Limits of the server.
    TooManyGames = "TOO_MANY_GAMES",
    ClientGameLimit = "CLIENT_GAME_LIMIT",
    TooManyStreams = "TOO_MANY_STREAMS",
    InviteCodesExhausted = "INVITE_CODES_EXHAUSTED",
    RateLimited = "RATE_LIMITED",
    JoinRateLimited = "JOIN_RATE_LIMITED",
    // The store and the server.
    StoreConflict = "STORE_CONFLICT",
    StoreUnavailable = "STORE_UNAVAILABLE",
    StoreDataDamaged = "STORE_DATA_DAMAGED",
    GameDataDamaged = "GAME_DATA_DAMAGED",
    ServerStopping = "SERVER_STOPPING",
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&RuleError> for Reason {
    fn from(e: &RuleError) -> Reason {
        use RuleError as E;
        let reason = match e {
            E::MatchOver => Reason::MatchOver,
            E::NoSuchSeat { .. } => Reason::NoSuchSeat,
            E::NotYourTurn { .. } => Reason::NotYourTurn,
            E::UnknownCard { .. } => Reason::UnknownCard,
            E::CardNotInHand { .. } => Reason::CardNotInHand,
            E::CardDoesNotMatch { .. } => Reason::CardDoesNotMatch,
            E::ColorRequired { .. } => Reason::ColorRequired,
            E::ColorNotAllowed { .. } => Reason::ColorNotAllowed,
            E::ColorNotOnActiveSide { .. } => Reason::ColorNotOnActiveSide,
            E::OnlyDrawnCardPlayable { .. } => Reason::OnlyDrawnCardPlayable,
            E::AlreadyDrew => Reason::AlreadyDrew,
            E::NothingToKeep => Reason::NothingToKeep,
            E::ColorChoicePending => Reason::ColorChoicePending,
            E::NoColorChoicePending => Reason::NoColorChoicePending,
            E::PenaltyPending => Reason::PenaltyPending,
            E::NoPenaltyPending => Reason::NoPenaltyPending,
            E::NoChallengePending => Reason::NoChallengePending,
            E::UnoNotDue => Reason::UnoNotDue,
            E::NotCatchable { .. } => Reason::NotCatchable,
            E::CannotCatchYourself => Reason::CannotCatchYourself,
            E::WildDrawForbidden { .. } => Reason::WildDrawForbidden,
            E::ChallengeNotOffered => Reason::ChallengeNotOffered,
            E::SwapChoicePending => Reason::SwapChoicePending,
            E::CannotStack { .. } => Reason::CardDoesNotStack,
            E::NoSwapPending => Reason::NoSwapPending,
            E::CannotSwapWithYourself => Reason::CannotSwapWithYourself,
            E::MultiPlayOff => Reason::MultiPlayOff,
            E::NotIdentical { .. } => Reason::CardsNotIdentical,
            E::OutOfRound { .. } => Reason::OutOfRound,
        };
        debug_assert_eq!(
            reason.as_str(),
            e.reason(),
            "the rules' reason and the catalogue's"
        );
        reason
    }
}

impl From<&SetupError> for Reason {
    fn from(e: &SetupError) -> Reason {
        use SetupError as E;
        let reason = match e {
            E::SeatCount { .. } => Reason::SeatCountOutOfRange,
            E::DealerNotASeat { .. } => Reason::DealerNotASeat,
            E::ZeroTarget => Reason::TargetOutOfRange,
            E::DeckCardUnknown { .. } => Reason::DeckCardUnknown,
            E::DeckCardRepeated { .. } => Reason::DeckCardRepeated,
            E::DeckIncomplete { .. } => Reason::DeckIncomplete,
        };
        debug_assert_eq!(
            reason.as_str(),
            e.reason(),
            "the rules' reason and the catalogue's"
        );
        reason
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The reasons of docs/api.md's catalogue table: the first cell of each row whose first cell
    /// is an UPPER_SNAKE word in backticks, under the heading "Refusal reasons".
    fn documented() -> Vec<String> {
        let api = include_str!("../../docs/api.md");
        let section = api
            .split("\n## Refusal reasons")
            .nth(1)
            .expect("docs/api.md has a section `## Refusal reasons`");
        let section = section.split("\n## ").next().unwrap_or(section);
        section
            .lines()
            .filter_map(|line| {
                let cell = line.strip_prefix("| `")?;
                let word = cell.split('`').next()?;
                word.chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_')
                    .then(|| word.to_owned())
            })
            .collect()
    }

    #[test]
    fn every_reason_is_documented_once_and_every_documented_reason_exists() {
        let documented = documented();
        let unique: BTreeSet<&str> = documented.iter().map(String::as_str).collect();
        assert_eq!(
            unique.len(),
            documented.len(),
            "a reason is documented twice in docs/api.md"
        );
        let catalogue: BTreeSet<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            catalogue.len(),
            Reason::ALL.len(),
            "a reason is in the catalogue twice"
        );
        let undocumented: Vec<_> = catalogue.difference(&unique).collect();
        let unknown: Vec<_> = unique.difference(&catalogue).collect();
        assert!(
            undocumented.is_empty(),
            "not in docs/api.md: {undocumented:?}"
        );
        assert!(
            unknown.is_empty(),
            "in docs/api.md but not in the catalogue: {unknown:?}"
        );
    }

    #[test]
    fn reasons_are_upper_snake() {
        for reason in Reason::ALL {
            let text = reason.as_str();
            assert!(
                !text.is_empty()
                    && !text.starts_with('_')
                    && text.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{text}"
            );
        }
    }
}
