//! The HTTP edge, under every call: connections accepted within limits, the request rate limit,
//! a reason on every refusal, the Connect protocol and JSON in front of the gRPC services, and
//! the plain HTTP routes (the page, probes, metrics).

pub(crate) mod conn;
pub(crate) mod connect;
mod limit;
pub(crate) mod reasons;
pub(crate) mod schema;
pub mod tls;
pub(crate) mod web;

pub use conn::ConnectionLimits;
pub use limit::{RateLimitLayer, RateLimits};
