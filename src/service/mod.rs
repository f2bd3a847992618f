//! The service: the edge that speaks the wire, and below it the live games and the accounts.
//!
//! Layers, each importing only those below it:
//! - [`grpc`] and [`http`]: the edge. Only they name protobuf types; [`serve`] puts them on one
//!   port. [`publish`] sends the public events to NATS.
//! - [`matchmaker`]: quick play, which creates games.
//! - [`games`]: the directory of live games, one task per game ([`games::task`]).
//! - [`accounts`]: players, their secrets and ratings.
//! - [`error`] (with the [`Reason`] catalogue) and [`metrics`], used by every layer.

pub mod accounts;
mod error;
pub mod games;
pub mod grpc;
pub mod http;
pub mod matchmaker;
pub mod metrics;
pub mod notify;
pub mod publish;
pub(crate) mod reason;
mod serve;

pub use error::{ERROR_DOMAIN, ServiceError, quote};
pub use games::task::{Lifecycle, Submitted};
pub use games::{Config, GameInfo, NewGame, Registry, Status, game_id};
pub use grpc::Service;
pub use http::{ConnectionLimits, RateLimitLayer, RateLimits};
pub use reason::Reason;
pub use serve::{Limits, MAX_REQUEST_BYTES, serve};
