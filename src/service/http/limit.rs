//! Request rate limits per client address, across all of its connections: one bucket for every
//! request, and a slower one for `JoinGame` and `RegisterPlayer` (taking seats, making players). Both are `governor` keyed rate
//! limiters (GCRA). A request over a limit is refused with `RESOURCE_EXHAUSTED` (`RATE_LIMITED`
//! or `JOIN_RATE_LIMITED`, with a google.rpc.RetryInfo giving the wait) and touches nothing.

use crate::service::reason::Reason;
use std::future::Future;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tonic::server::NamedService;
use tonic::transport::server::TcpConnectInfo;
use tower::{Layer, Service};

use crate::service::error::ServiceError;

/// The path of `JoinGame` (grpc-web calls use the same path).
const JOIN_PATH: &str = "/unoflip.v1.UnoFlipService/JoinGame";
/// The path of `RegisterPlayer`, which counts with `JoinGame`.
const REGISTER_PATH: &str = "/unoflip.v1.UnoFlipService/RegisterPlayer";

/// Checks this many requests between sweeps of addresses whose buckets are full again.
const SWEEP_EVERY: u64 = 4096;

/// The limits per client address; 0 turns one off.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateLimits {
    /// Requests per second (bursts of as many).
    pub requests_per_second: u32,
    /// `JoinGame` calls per minute (bursts of as many).
    pub joins_per_minute: u32,
}

/// Refuses requests over the [`RateLimits`] of their client address.
#[derive(Clone)]
pub struct RateLimitLayer {
    requests: Option<Arc<DefaultKeyedRateLimiter<IpAddr>>>,
    joins: Option<Arc<DefaultKeyedRateLimiter<IpAddr>>>,
    checked: Arc<AtomicU64>,
}

impl RateLimitLayer {
    /// The limiters of `limits`.
    pub fn new(limits: RateLimits) -> RateLimitLayer {
        let requests = NonZeroU32::new(limits.requests_per_second)
            .map(|n| Arc::new(RateLimiter::keyed(Quota::per_second(n))));
        let joins = NonZeroU32::new(limits.joins_per_minute)
            .map(|n| Arc::new(RateLimiter::keyed(Quota::per_minute(n))));
        RateLimitLayer {
            requests,
            joins,
            checked: Arc::default(),
        }
    }

    /// Whether any limit is on.
    pub fn any(&self) -> bool {
        self.requests.is_some() || self.joins.is_some()
    }

    /// `None` when `peer` may send a request to `path` now, else the refusal.
    fn refuse(&self, peer: Option<IpAddr>, path: &str) -> Option<ServiceError> {
        let peer = peer?;
        if self.checked.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            for limiter in self.requests.iter().chain(&self.joins) {
                limiter.retain_recent();
            }
        }
        if let Some(requests) = &self.requests
            && let Err(not_until) = requests.check_key(&peer)
        {
            return Some(ServiceError::RateLimited {
                reason: Reason::RateLimited,
                message: "too many requests from this address; slow down".to_owned(),
                retry_after: not_until.wait_time_from(requests.clock().now()),
            });
        }
        if (path == JOIN_PATH || path == REGISTER_PATH)
            && let Some(joins) = &self.joins
            && let Err(not_until) = joins.check_key(&peer)
        {
            return Some(ServiceError::RateLimited {
                reason: Reason::JoinRateLimited,
                message:
                    "too many JoinGame and RegisterPlayer calls from this address; wait a minute"
                        .to_owned(),
                retry_after: not_until.wait_time_from(joins.clock().now()),
            });
        }
        None
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;
    fn layer(&self, inner: S) -> RateLimited<S> {
        RateLimited {
            inner,
            limit: self.clone(),
        }
    }
}

/// A service behind [`RateLimitLayer`].
#[derive(Clone)]
pub struct RateLimited<S> {
    inner: S,
    limit: RateLimitLayer,
}

impl<S: NamedService> NamedService for RateLimited<S> {
    const NAME: &'static str = S::NAME;
}

type Response = http::Response<tonic::body::Body>;

impl<S, B> Service<http::Request<B>> for RateLimited<S>
where
    S: Service<http::Request<B>, Response = Response>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let peer = request
            .extensions()
            .get::<TcpConnectInfo>()
            .and_then(TcpConnectInfo::remote_addr)
            .map(|a| a.ip());
        match self.limit.refuse(peer, request.uri().path()) {
            None => Box::pin(self.inner.call(request)),
            Some(refusal) => {
                let status: tonic::Status = refusal.into();
                Box::pin(std::future::ready(Ok(status.into_http())))
            }
        }
    }
}
