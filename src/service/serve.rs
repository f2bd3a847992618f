//! The edge put together: one port serving gRPC, grpc-web, Connect (and JSON, NDJSON), the page,
//! the probes and the metrics, behind the transport's limits, the reasons layer and CORS.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer, ExposeHeaders};

use crate::proto::uno_flip_service_server::UnoFlipServiceServer;
use crate::service::games::Registry;
use crate::service::grpc::Service;
use crate::service::http::connect::ConnectLayer;
use crate::service::http::schema::Schema;
use crate::service::http::tls::Certificates;
use crate::service::http::{ConnectionLimits, RateLimitLayer, RateLimits, conn, reasons, web};

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
    /// The certificate to serve TLS with; none: plain TCP.
    pub tls: Option<Arc<Certificates>>,
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
            tls: None,
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
    let accepted = conn::accept(listener, limits.connections, registry.hooks.metrics.clone());
    let incoming: std::pin::Pin<Box<dyn tokio_stream::Stream<Item = _> + Send>> = match &limits.tls
    {
        Some(certificates) => {
            certificates.watch();
            Box::pin(conn::secure(
                accepted,
                certificates.acceptor()?,
                limits.connections.handshake_timeout,
            ))
        }
        None => Box::pin(conn::plain(accepted)),
    };
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
    // The methods Connect and JSON clients may call, and the error details they may be shown.
    let schema = Schema::new(
        &[
            crate::proto::FILE_DESCRIPTOR_SET,
            tonic_health::pb::FILE_DESCRIPTOR_SET,
            tonic_types::pb::FILE_DESCRIPTOR_SET,
        ],
        crate::service::grpc::json::codecs(),
    )?;
    let connect = ConnectLayer::new(
        Arc::new(schema),
        registry.hooks.metrics.clone(),
        MAX_REQUEST_BYTES,
    );
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
        .layer(connect)
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
