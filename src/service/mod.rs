//! The gRPC service (`unoflip.v1.UnoFlipService`) over the rules engine, with health checks,
//! server reflection, grpc-web and CORS.
//!
//! - `registry`: names to live games; creation, loading on demand, rebuilding at start,
//!   following a shared store.
//! - `game`: one task per live game, which owns it: moves, seats, server moves, clocks, lifecycle.
//! - `players`: registered players, the seats they took, invite codes.
//! - `matchmaker`: quick play, the queue of players looking for a game.
//! - `ratings`: players' ratings from rated games' finishing orders.
//! - `lobby`: a game's record (setup, seats, token hashes) and public description.
//! - `log`: the events a live game holds in memory; `mailbox`: a live game's command channel;
//!   `signal`: its version, which its streams wait on.
//! - `stream`: per-viewer game streams and the public firehose.
//! - `handlers`: the tonic handlers; `convert`: protobuf <-> domain; `error`: statuses.
//! - `conn`: client connections, accepted within limits and counted while open.
//! - `limit`: the request rate limit per connection; `web`: the web client's page.
//! - `metrics`: the Prometheus metrics of `GET /metrics`.
//! - `reasons`: a reason on the refusals tonic makes by itself, and the time limit of a call.
//! - `codec`: the protobuf codec of every method, with small starting buffers.

pub mod codec;
mod conn;
pub use conn::ConnectionLimits;
pub mod convert;
mod error;
mod firehose;
mod game;
mod handlers;
mod limit;
mod lobby;
mod log;
mod mailbox;
pub mod matchmaker;
pub mod metrics;
pub mod players;
pub mod publish;
pub mod ratings;
mod reasons;
mod registry;
mod signal;
mod stream;
mod web;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer, ExposeHeaders};

pub use error::{ERROR_DOMAIN, ServiceError};
pub use game::{Lifecycle, Submitted, timeout_move};
pub use handlers::Service;
pub use limit::{RateLimitLayer, RateLimits};
pub use lobby::{GameInfo, Status};
pub use registry::{Config, NewGame, Registry, game_id};

use crate::proto::uno_flip_service_server::UnoFlipServiceServer;

/// Largest request a client may send.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// Limits of the transport.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Requests handled at once on one connection.
    pub concurrency_per_connection: usize,
    /// Longest time a unary call may take.
    pub request_timeout: Duration,
    /// Requests per client address, across its connections (0: no limit).
    pub rates: RateLimits,
    /// Connections in all and per address, and the handshake timeout.
    pub connections: ConnectionLimits,
    /// How often an HTTP/2 connection is pinged; a peer that does not answer within as long
    /// again is closed.
    pub keepalive: Duration,
    /// Origins whose web pages may call the service (grpc-web, CORS); empty: any origin.
    pub cors_origins: Vec<http::HeaderValue>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            concurrency_per_connection: 256,
            request_timeout: Duration::from_secs(30),
            rates: RateLimits::default(),
            connections: ConnectionLimits::default(),
            keepalive: Duration::from_secs(60),
            cors_origins: Vec::new(),
        }
    }
}

/// Serves `registry` on `listener` until `shutdown` completes, then stops accepting calls and
/// lets running ones finish.
pub async fn serve(
    listener: TcpListener,
    registry: Arc<Registry>,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Small messages go out at once: without TCP_NODELAY, Nagle's algorithm and delayed ACKs
    // hold each event back by up to 40 ms.
    // On shutdown: no new connections or calls; streams end with SERVER_STOPPING so that their
    // clients go elsewhere; calls in flight finish (a move is committed before it is answered).
    let stopping = registry.clone();
    let stop = async move {
        shutdown.await;
        stopping.stop_streams();
    };
    let incoming = conn::accept(listener, limits.connections, registry.hooks.metrics.clone());
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<UnoFlipServiceServer<Service>>().await;
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection().build_v1()?;
    let reflection_v1alpha = reflection().build_v1alpha()?;
    let service = UnoFlipServiceServer::new(Service::new(registry.clone()))
        .max_decoding_message_size(MAX_REQUEST_BYTES);
    let cors = CorsLayer::new()
        .allow_origin(if limits.cors_origins.is_empty() {
            AllowOrigin::mirror_request()
        } else {
            AllowOrigin::list(limits.cors_origins.clone())
        })
        .allow_methods(AllowMethods::mirror_request())
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers(ExposeHeaders::list([
            http::HeaderName::from_static("grpc-status"),
            http::HeaderName::from_static("grpc-message"),
            http::HeaderName::from_static("grpc-status-details-bin"),
        ]))
        .max_age(Duration::from_secs(3600));
    tonic::transport::Server::builder()
        .accept_http1(true)
        .concurrency_limit_per_connection(limits.concurrency_per_connection)
        .http2_keepalive_interval(Some(limits.keepalive))
        .http2_keepalive_timeout(Some(limits.keepalive))
        .layer(web::WebLayer::new(registry.clone()))
        .layer(cors)
        .layer(tonic_web::GrpcWebLayer::new())
        .layer(reasons::ReasonLayer {
            timeout: limits.request_timeout,
            metrics: registry.hooks.metrics.clone(),
        })
        .layer(tower::util::option_layer(
            Some(RateLimitLayer::new(limits.rates)).filter(RateLimitLayer::any),
        ))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, stop)
        .await?;
    Ok(())
}
