//! The service's errors and their one mapping to gRPC statuses with a google.rpc.ErrorInfo
//! reason.

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::rules::{RuleError, SetupError};

/// The `domain` of every ErrorInfo this service sends.
pub const ERROR_DOMAIN: &str = "unoflip";

/// Why a call was refused. Every refusal leaves every game as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    /// gRPC status code.
    pub code: Code,
    /// Stable UPPER_SNAKE reason.
    pub reason: &'static str,
    /// Words for a person.
    pub message: String,
}

impl ServiceError {
    fn new(code: Code, reason: &'static str, message: impl Into<String>) -> ServiceError {
        ServiceError {
            code,
            reason,
            message: message.into(),
        }
    }

    /// A malformed request.
    pub fn invalid(reason: &'static str, message: impl Into<String>) -> ServiceError {
        ServiceError::new(Code::InvalidArgument, reason, message)
    }

    /// A request that is well formed but not allowed in the current state.
    pub fn precondition(reason: &'static str, message: impl Into<String>) -> ServiceError {
        ServiceError::new(Code::FailedPrecondition, reason, message)
    }

    /// No such game.
    pub fn no_game(name: &str) -> ServiceError {
        ServiceError::new(
            Code::NotFound,
            "GAME_NOT_FOUND",
            format!("no game {name:?}"),
        )
    }

    /// No token, or a token no game knows.
    pub fn unauthenticated(message: impl Into<String>) -> ServiceError {
        ServiceError::new(Code::Unauthenticated, "SEAT_TOKEN_INVALID", message)
    }

    /// A token for another game, or an admin call without the admin token.
    pub fn denied(reason: &'static str, message: impl Into<String>) -> ServiceError {
        ServiceError::new(Code::PermissionDenied, reason, message)
    }

    /// The store failed.
    pub fn unavailable(message: impl Into<String>) -> ServiceError {
        ServiceError::new(Code::Unavailable, "STORE_UNAVAILABLE", message)
    }

    /// A store error: damaged data is DATA_LOSS (the message names game and version), anything
    /// else is the store being unavailable.
    pub fn store(error: &crate::store::StoreError) -> ServiceError {
        use crate::store::StoreError as E;
        match error {
            E::Corrupt { .. } | E::Gap { .. } => {
                ServiceError::new(Code::DataLoss, "STORE_DATA_DAMAGED", error.to_string())
            }
            _ => ServiceError::unavailable(error.to_string()),
        }
    }
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({:?}): {}", self.reason, self.code, self.message)
    }
}

impl std::error::Error for ServiceError {}

impl From<RuleError> for ServiceError {
    fn from(e: RuleError) -> Self {
        let code = match e {
            RuleError::UnknownCard { .. } | RuleError::NoSuchSeat { .. } => Code::InvalidArgument,
            _ => Code::FailedPrecondition,
        };
        ServiceError::new(code, e.reason(), e.to_string())
    }
}

impl From<SetupError> for ServiceError {
    fn from(e: SetupError) -> Self {
        ServiceError::invalid(e.reason(), e.to_string())
    }
}

impl From<ServiceError> for Status {
    fn from(e: ServiceError) -> Self {
        Status::with_error_details(
            e.code,
            e.message,
            ErrorDetails::with_error_info(e.reason, ERROR_DOMAIN, std::collections::HashMap::new()),
        )
    }
}
