//! The web client, served from the binary on the gRPC port: a `GET` (or `HEAD`) of `/`,
//! `/index.html`, `/app.js` or `/style.css` gets the page of `clients/web` (its script as built
//! into `clients/web/dist`, committed, so serving it needs no Node); every other request goes on
//! to the gRPC services, grpc-web included.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use tonic::body::Body;
use tower::{Layer, Service};

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
];

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

/// Serves the page in front of the gRPC services.
#[derive(Clone, Copy, Debug, Default)]
pub struct WebLayer;

impl<S> Layer<S> for WebLayer {
    type Service = Web<S>;

    fn layer(&self, inner: S) -> Web<S> {
        Web { inner }
    }
}

/// See [`WebLayer`].
#[derive(Clone, Debug)]
pub struct Web<S> {
    inner: S,
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
        // The inner service was made ready by `poll_ready`: call that one, keep a clone.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(inner.call(request))
    }
}
