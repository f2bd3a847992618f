//! Plain HTTP on the gRPC port: the web client and the operators' probes.
//!
//! - A `GET` (or `HEAD`) of `/`, `/index.html`, `/app.js`, `/style.css` or the favicon gets the
//!   page of `clients/web` (its script as built into `clients/web/dist`, committed, so serving it
//!   needs no Node); `/rules.md` gets the rule book, `docs/rules.md`, which the page links to.
//! - `GET /healthz`: 200 while the process serves; `GET /readyz`: 200 when the store answers,
//!   503 otherwise; `GET /metrics`: the Prometheus metrics (`metrics.rs`).
//! - gRPC and grpc-web requests (`application/grpc*` content types), calls of a method's path
//!   (`/package.Service/Method`, for Connect and JSON) and CORS preflights go on to the services.
//!   Anything else gets a plain 404 (`GET`, `HEAD`) or 415.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use tonic::body::Body;
use tower::{Layer, Service};

use crate::service::games::Registry;

/// One file of the page.
struct Asset {
    path: &'static str,
    mime: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $file:literal, $mime:literal) => {
        Asset {
            path: $path,
            mime: $mime,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/clients/web/", $file)),
        }
    };
}

const ASSETS: &[Asset] = &[
    asset!("/", "index.html", "text/html; charset=utf-8"),
    asset!("/index.html", "index.html", "text/html; charset=utf-8"),
    asset!("/app.js", "dist/app.js", "text/javascript; charset=utf-8"),
    asset!("/style.css", "style.css", "text/css; charset=utf-8"),
    asset!("/favicon.svg", "favicon.svg", "image/svg+xml"),
    asset!("/favicon.ico", "favicon.svg", "image/svg+xml"),
    // Plain text rather than text/markdown, which browsers offer to download instead of showing.
    asset!(
        "/rules.md",
        "../../docs/rules.md",
        "text/plain; charset=utf-8"
    ),
];

/// How long `/readyz` waits for the store.
const READY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A plain-text answer.
fn text(status: StatusCode, body: String, mime: &'static str) -> Response<Body> {
    let length = body.len();
    let mut response = Response::new(Body::new(Full::new(Bytes::from(body))));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

const PLAIN: &str = "text/plain; charset=utf-8";

/// Whether a request is for the services: gRPC, grpc-web, a CORS preflight, or a call of a
/// method's path (`/package.Service/Method`: two segments, the first with a dot), which the
/// Connect layer serves or refuses with a reason.
fn for_services<B>(request: &Request<B>) -> bool {
    let path = request.uri().path();
    let method_path = path
        .strip_prefix('/')
        .and_then(|p| p.split_once('/'))
        .is_some_and(|(service, method)| {
            service.contains('.') && !method.is_empty() && !method.contains('/')
        });
    request.method() == Method::OPTIONS
        || method_path
        || request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/grpc"))
}

/// The answer to a plain HTTP request: a probe, the metrics, or a 404/415.
async fn plain<B>(request: Request<B>, registry: Arc<Registry>) -> Response<Body> {
    let get = request.method() == Method::GET || request.method() == Method::HEAD;
    match (get, request.uri().path()) {
        (true, "/healthz") => text(StatusCode::OK, "ok\n".into(), PLAIN),
        (true, "/readyz") => {
            let probe = registry.hooks.store.record("games/readyz");
            match tokio::time::timeout(READY_WAIT, probe).await {
                Ok(Ok(_)) => text(StatusCode::OK, "ready\n".into(), PLAIN),
                Ok(Err(e)) => text(StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n"), PLAIN),
                Err(_) => text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the store did not answer within 2 s\n".into(),
                    PLAIN,
                ),
            }
        }
        (true, "/metrics") => text(
            StatusCode::OK,
            registry.hooks.metrics.render(),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        (true, _) => text(StatusCode::NOT_FOUND, "not found\n".into(), PLAIN),
        (false, _) => text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "this port serves gRPC, grpc-web and Connect (at /package.Service/Method), the page, \
             /healthz, /readyz and /metrics\n"
                .into(),
            PLAIN,
        ),
    }
}

/// The response for a request of one of the page's files, if it is one.
fn page_file<B>(request: &Request<B>) -> Option<Response<Body>> {
    let head = request.method() == Method::HEAD;
    if request.method() != Method::GET && !head {
        return None;
    }
    let asset = ASSETS.iter().find(|a| a.path == request.uri().path())?;
    let body = if head {
        Body::empty()
    } else {
        Body::new(Full::new(Bytes::from_static(asset.body)))
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.mime));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(asset.body.len()));
    // A new server version brings a new bundle: always revalidate.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Some(response)
}

/// Serves the page and the probes in front of the gRPC services.
#[derive(Clone)]
pub struct WebLayer {
    registry: Arc<Registry>,
}

impl WebLayer {
    /// Probes and metrics of `registry`.
    pub fn new(registry: Arc<Registry>) -> WebLayer {
        WebLayer { registry }
    }
}

impl<S> Layer<S> for WebLayer {
    type Service = Web<S>;

    fn layer(&self, inner: S) -> Web<S> {
        Web {
            inner,
            registry: self.registry.clone(),
        }
    }
}

/// See [`WebLayer`].
#[derive(Clone)]
pub struct Web<S> {
    inner: S,
    registry: Arc<Registry>,
}

impl<S, B> Service<Request<B>> for Web<S>
where
    S: Service<Request<B>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if let Some(response) = page_file(&request) {
            return Box::pin(std::future::ready(Ok(response)));
        }
        if !for_services(&request) {
            let registry = self.registry.clone();
            return Box::pin(async move { Ok(plain(request, registry).await) });
        }
        // The inner service was made ready by `poll_ready`: call that one, keep a clone.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(inner.call(request))
    }
}
