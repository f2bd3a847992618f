//! The service's errors: [`ServiceError`], an enum of the causes of a refusal, and their one
//! mapping to gRPC statuses with a google.rpc.ErrorInfo reason ([`ServiceError::code`],
//! [`ServiceError::reason`], from the catalogue in `reason.rs`). Code that must tell causes apart
//! matches on the variants or on [`Reason`], never on strings.

use crate::service::reason::Reason;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::rules::{RuleError, SetupError};
use crate::store::StoreError;

/// The `domain` of every ErrorInfo this service sends.
pub const ERROR_DOMAIN: &str = "unoflip";

/// Longest piece of client input quoted in an error message.
const QUOTE_CHARS: usize = 64;

/// Why a call was refused. Every refusal leaves every game as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceError {
    /// A malformed request or an input out of range (`INVALID_ARGUMENT`).
    Invalid {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
    },
    /// A well-formed request that the game's state does not allow (`FAILED_PRECONDITION`).
    Precondition {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
    },
    /// The rules refused the action.
    Rule(RuleError),
    /// The game's options are not playable.
    Setup(SetupError),
    /// No game has this name (`NOT_FOUND`).
    NoGame(String),
    /// No token, or a token no game knows (`UNAUTHENTICATED`).
    Unauthenticated(String),
    /// No player token, or not the token of the player named (`UNAUTHENTICATED`).
    PlayerUnauthenticated(String),
    /// A host's JWT refused: expired, forged, for another audience (`UNAUTHENTICATED`).
    Credential {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
    },
    /// A service the call needs, other than the store, cannot be reached: the identity
    /// provider's keys (`UNAVAILABLE`).
    Upstream {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
    },
    /// Something else than a game that is not there: a player, an invite code (`NOT_FOUND`).
    NotFound {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
    },
    /// A token for something else, or an admin call without the admin token
    /// (`PERMISSION_DENIED`).
    Denied {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
    },
    /// A limit of the server (`RESOURCE_EXHAUSTED`).
    Exhausted {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
    },
    /// Too many requests from one client address (`RESOURCE_EXHAUSTED`); the status carries a
    /// google.rpc.RetryInfo saying when the next one may pass.
    RateLimited {
        /// Its reason, from the catalogue.
        reason: Reason,
        /// Words for a person.
        message: String,
        /// How long until the address's bucket lets the next request through.
        retry_after: std::time::Duration,
    },
    /// The client expected another version of the game (`FAILED_PRECONDITION`).
    VersionMismatch {
        /// The version the client expected.
        expected: u64,
        /// The game's version.
        actual: u64,
    },
    /// The store failed or holds damaged data.
    Store(StoreError),
    /// A game's stored data cannot be rebuilt (`DATA_LOSS`).
    Damaged {
        /// The game.
        game: String,
        /// What is wrong.
        error: String,
    },
    /// The server is stopping, or the game's task stopped while answering (`UNAVAILABLE`).
    Stopping,
}

/// `text` cut to a short prefix, for quoting client input in a message.
pub fn quote(text: &str) -> String {
    if text.chars().count() <= QUOTE_CHARS {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(QUOTE_CHARS).collect();
        format!("{head:?}...")
    }
}

impl ServiceError {
    /// A malformed request.
    pub fn invalid(reason: Reason, message: impl Into<String>) -> ServiceError {
        ServiceError::Invalid {
            reason,
            message: message.into(),
        }
    }

    /// A request that is well formed but not allowed in the current state.
    pub fn precondition(reason: Reason, message: impl Into<String>) -> ServiceError {
        ServiceError::Precondition {
            reason,
            message: message.into(),
        }
    }

    /// No such game.
    pub fn no_game(name: &str) -> ServiceError {
        ServiceError::NoGame(name.to_owned())
    }

    /// No token, or a token no game knows.
    pub fn unauthenticated(message: impl Into<String>) -> ServiceError {
        ServiceError::Unauthenticated(message.into())
    }

    /// A token for another game, or an admin call without the admin token.
    pub fn denied(reason: Reason, message: impl Into<String>) -> ServiceError {
        ServiceError::Denied {
            reason,
            message: message.into(),
        }
    }

    /// A limit of the server.
    pub fn exhausted(reason: Reason, message: impl Into<String>) -> ServiceError {
        ServiceError::Exhausted {
            reason,
            message: message.into(),
        }
    }

    /// Something that is not there.
    pub fn not_found(reason: Reason, message: impl Into<String>) -> ServiceError {
        ServiceError::NotFound {
            reason,
            message: message.into(),
        }
    }

    /// The store failed.
    pub fn unavailable(message: impl Into<String>) -> ServiceError {
        ServiceError::Store(StoreError::Unavailable(message.into()))
    }

    /// A store error.
    pub fn store(error: &StoreError) -> ServiceError {
        ServiceError::Store(error.clone())
    }

    /// The gRPC status code.
    pub fn code(&self) -> Code {
        use ServiceError as E;
        match self {
            E::Invalid { .. } | E::Setup(_) => Code::InvalidArgument,
            E::Rule(RuleError::UnknownCard { .. } | RuleError::NoSuchSeat { .. }) => {
                Code::InvalidArgument
            }
            E::Rule(_) | E::Precondition { .. } | E::VersionMismatch { .. } => {
                Code::FailedPrecondition
            }
            E::NoGame(_) | E::NotFound { .. } => Code::NotFound,
            E::Unauthenticated(_) | E::PlayerUnauthenticated(_) | E::Credential { .. } => {
                Code::Unauthenticated
            }
            E::Denied { .. } => Code::PermissionDenied,
            E::Exhausted { .. } | E::RateLimited { .. } => Code::ResourceExhausted,
            // Another server moved first and the retries ran out: try again.
            E::Store(StoreError::Conflict { .. }) => Code::Aborted,
            E::Store(StoreError::Corrupt { .. } | StoreError::Gap { .. }) | E::Damaged { .. } => {
                Code::DataLoss
            }
            E::Store(StoreError::Unavailable(_)) | E::Stopping | E::Upstream { .. } => {
                Code::Unavailable
            }
        }
    }

    /// The stable reason of the ErrorInfo.
    pub fn reason(&self) -> Reason {
        use ServiceError as E;
        match self {
            E::Invalid { reason, .. }
            | E::Precondition { reason, .. }
            | E::Denied { reason, .. }
            | E::Exhausted { reason, .. }
            | E::RateLimited { reason, .. }
            | E::Credential { reason, .. }
            | E::Upstream { reason, .. }
            | E::NotFound { reason, .. } => *reason,
            E::PlayerUnauthenticated(_) => Reason::PlayerTokenInvalid,
            E::Rule(e) => Reason::from(e),
            E::Setup(e) => Reason::from(e),
            E::NoGame(_) => Reason::GameNotFound,
            E::Unauthenticated(_) => Reason::SeatTokenInvalid,
            E::VersionMismatch { .. } => Reason::VersionMismatch,
            E::Store(StoreError::Conflict { .. }) => Reason::StoreConflict,
            E::Store(StoreError::Corrupt { .. } | StoreError::Gap { .. }) => {
                Reason::StoreDataDamaged
            }
            E::Store(StoreError::Unavailable(_)) => Reason::StoreUnavailable,
            E::Damaged { .. } => Reason::GameDataDamaged,
            E::Stopping => Reason::ServerStopping,
        }
    }

    /// Words for a person.
    pub fn message(&self) -> String {
        use ServiceError as E;
        match self {
            E::Invalid { message, .. }
            | E::Precondition { message, .. }
            | E::Denied { message, .. }
            | E::Exhausted { message, .. }
            | E::RateLimited { message, .. }
            | E::Credential { message, .. }
            | E::Upstream { message, .. }
            | E::NotFound { message, .. }
            | E::PlayerUnauthenticated(message)
            | E::Unauthenticated(message) => message.clone(),
            E::Rule(e) => e.to_string(),
            E::Setup(e) => e.to_string(),
            E::NoGame(name) => format!("no game {}", quote(name)),
            E::VersionMismatch { expected, actual } => {
                format!("expected version {expected}, the game is at {actual}")
            }
            E::Store(e @ StoreError::Conflict { .. }) => {
                format!("{e}; another server moved the game first, try again")
            }
            E::Store(e) => e.to_string(),
            E::Damaged { game, error } => format!("the stored data of {game} is damaged: {error}"),
            E::Stopping => "the server is stopping; try again on another".to_owned(),
        }
    }
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({:?}): {}",
            self.reason(),
            self.code(),
            self.message()
        )
    }
}

impl std::error::Error for ServiceError {}

impl From<RuleError> for ServiceError {
    fn from(e: RuleError) -> Self {
        ServiceError::Rule(e)
    }
}

impl From<SetupError> for ServiceError {
    fn from(e: SetupError) -> Self {
        ServiceError::Setup(e)
    }
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        ServiceError::Store(e)
    }
}

impl From<ServiceError> for Status {
    fn from(e: ServiceError) -> Self {
        let mut details = ErrorDetails::with_error_info(
            e.reason().as_str(),
            ERROR_DOMAIN,
            std::collections::HashMap::new(),
        );
        if let ServiceError::RateLimited { retry_after, .. } = &e {
            details.set_retry_info(Some(*retry_after));
        }
        Status::with_error_details(e.code(), e.message(), details)
    }
}
