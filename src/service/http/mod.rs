//! The HTTP edge, under every call: connections accepted within limits, the request rate limit,
//! a reason on every refusal, and the plain HTTP routes (the page, probes, metrics).

pub(crate) mod conn;
mod limit;
pub(crate) mod reasons;
pub(crate) mod web;

pub use conn::ConnectionLimits;
pub use limit::{RateLimitLayer, RateLimits};
