//! A request rate limit per connection: a token bucket for each client connection (told apart by
//! its remote address). A request over the limit is refused with RESOURCE_EXHAUSTED
//! (RATE_LIMITED) and touches nothing.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use tonic::server::NamedService;
use tonic::transport::server::TcpConnectInfo;
use tower::{Layer, Service};

use super::error::ServiceError;

/// Connections idle this long lose their bucket (it refills fully by then anyway).
const IDLE_SECS: f64 = 60.0;

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// Limits every connection to `per_second` requests per second, with bursts of as many.
#[derive(Clone)]
pub struct RateLimitLayer {
    per_second: f64,
    buckets: Arc<Mutex<HashMap<SocketAddr, Bucket>>>,
}

impl RateLimitLayer {
    /// `per_second` requests per second and connection.
    pub fn new(per_second: u64) -> RateLimitLayer {
        RateLimitLayer {
            per_second: per_second.max(1) as f64,
            buckets: Arc::default(),
        }
    }

    /// Takes one token for `peer`; false when its bucket is empty.
    fn admit(&self, peer: Option<SocketAddr>) -> bool {
        let Some(peer) = peer else { return true };
        let Ok(mut buckets) = self.buckets.lock() else {
            return true;
        };
        let now = Instant::now();
        if buckets.len() > 10_000 {
            buckets.retain(|_, b| now.duration_since(b.last).as_secs_f64() < IDLE_SECS);
        }
        let bucket = buckets.entry(peer).or_insert(Bucket {
            tokens: self.per_second,
            last: now,
        });
        let refill = now.duration_since(bucket.last).as_secs_f64() * self.per_second;
        bucket.tokens = (bucket.tokens + refill).min(self.per_second);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
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
            .and_then(TcpConnectInfo::remote_addr);
        if self.limit.admit(peer) {
            Box::pin(self.inner.call(request))
        } else {
            let status: tonic::Status = ServiceError::exhausted(
                "RATE_LIMITED",
                "too many requests on this connection; slow down",
            )
            .into();
            Box::pin(std::future::ready(Ok(status.into_http())))
        }
    }
}
