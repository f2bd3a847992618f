//! A reason on every refusal: the statuses that tonic makes by itself (a request body that does
//! not decode, a message over the size limit, a method nobody serves) carry no
//! google.rpc.ErrorInfo, so this layer gives them one, with a code that says whether a retry can
//! help, and a message cut to a short prefix. It also bounds the time to a call's answer: the
//! server's request timeout or the client's `grpc-timeout`, whichever is shorter, answered
//! `DEADLINE_EXCEEDED` with a reason. (A move the call started is still committed by its game's
//! task.) Every answer is counted by method and code, and every refusal by reason, in the
//! metrics.

use crate::service::reason::Reason;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, Request, Response};
use tonic::body::Body;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};
use tower::{Layer, Service};

use crate::service::error::ERROR_DOMAIN;
use crate::service::metrics::{CallLabels, Metrics, ReasonLabels};

/// Longest message kept from a status tonic made (it may quote what the client sent).
const MESSAGE_CHARS: usize = 200;

/// See the module's documentation.
#[derive(Clone)]
pub struct ReasonLayer {
    /// Longest time to a unary call's answer, or a stream's first headers.
    pub timeout: Duration,
    /// Where answers and refusals are counted.
    pub metrics: Arc<Metrics>,
}

impl<S> Layer<S> for ReasonLayer {
    type Service = Reasons<S>;

    fn layer(&self, inner: S) -> Reasons<S> {
        Reasons {
            inner,
            timeout: self.timeout,
            metrics: self.metrics.clone(),
        }
    }
}

/// A service behind [`ReasonLayer`].
#[derive(Clone)]
pub struct Reasons<S> {
    inner: S,
    timeout: Duration,
    metrics: Arc<Metrics>,
}

impl<S, B> Service<Request<B>> for Reasons<S>
where
    S: Service<Request<B>, Response = Response<Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let limit = client_timeout(request.headers()).map_or(self.timeout, |t| t.min(self.timeout));
        let path = request.uri().path().to_owned();
        let answer = self.inner.call(request);
        let metrics = self.metrics.clone();
        Box::pin(async move {
            let response = match tokio::time::timeout(limit, answer).await {
                Ok(response) => with_reason(response?),
                Err(_) => refusal(
                    Code::DeadlineExceeded,
                    Reason::DeadlineExceeded,
                    format!("no answer within {} ms", limit.as_millis()),
                ),
            };
            count(&metrics, path, &response);
            Ok(response)
        })
    }
}

/// Counts an answer by method and code, and a refusal by reason. Paths nobody serves count as
/// one method, `unknown`, so that a client cannot grow the label set.
fn count(metrics: &Metrics, path: String, response: &Response<Body>) {
    match Status::from_header_map(response.headers()) {
        Some(status) => count_status(metrics, path, &status),
        // The status comes in the trailers: the call goes on (a stream).
        None => count_status(metrics, path, &Status::ok("")),
    }
}

/// Counts an answer with `status` to a call of `path`.
pub(crate) fn count_status(metrics: &Metrics, path: String, status: &Status) {
    let code = status.code();
    let reason = status.get_details_error_info().map(|info| info.reason);
    let method = if code == Code::Unimplemented {
        "unknown".to_owned()
    } else {
        path
    };
    metrics
        .calls
        .get_or_create(&CallLabels {
            method,
            code: format!("{code:?}"),
        })
        .inc();
    if let Some(reason) = reason.filter(|_| code != Code::Ok) {
        metrics
            .refusals
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }
}

/// The client's `grpc-timeout` header: digits and a unit (H, M, S, m, u, n).
fn client_timeout(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get("grpc-timeout")?.to_str().ok()?;
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// A trailers-only answer with `code`, `reason` and `message`.
fn refusal(code: Code, reason: Reason, message: String) -> Response<Body> {
    status(code, reason, message).into_http()
}

/// A refusal with `code`, `reason` and `message`.
pub(crate) fn status(code: Code, reason: Reason, message: String) -> Status {
    Status::with_error_details(
        code,
        message,
        ErrorDetails::with_error_info(
            reason.as_str(),
            ERROR_DOMAIN,
            std::collections::HashMap::new(),
        ),
    )
}

/// The code and reason for a status tonic made, from its code and words.
pub(crate) fn reason_for(code: Code, message: &str) -> (Code, Reason) {
    match code {
        // tonic answers INTERNAL when the request body does not decode: it is the client's.
        Code::Internal if message.contains("decode") => {
            (Code::InvalidArgument, Reason::UndecodableRequest)
        }
        // The same for a body that is not one whole gRPC frame (none, cut short, a bad flag).
        Code::Internal
            if [
                "protocol error",
                "Missing request message",
                "Unexpected EOF",
                "while sending request",
            ]
            .iter()
            .any(|m| message.contains(m)) =>
        {
            (Code::InvalidArgument, Reason::MalformedRequest)
        }
        Code::OutOfRange if message.contains("too large") => {
            (Code::OutOfRange, Reason::MessageTooLarge)
        }
        Code::Unimplemented => (Code::Unimplemented, Reason::UnknownMethod),
        Code::InvalidArgument => (code, Reason::InvalidRequest),
        Code::DeadlineExceeded => (code, Reason::DeadlineExceeded),
        Code::Cancelled => (code, Reason::Cancelled),
        Code::ResourceExhausted => (code, Reason::ResourceExhausted),
        Code::Unavailable => (code, Reason::Unavailable),
        _ => (code, Reason::InternalError),
    }
}

/// `response` with an ErrorInfo if it is a refusal in its headers without one.
fn with_reason(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    if headers.contains_key("grpc-status-details-bin") {
        return response;
    }
    let Some(found) = Status::from_header_map(headers) else {
        return response;
    };
    if found.code() == Code::Ok {
        return response;
    }
    let (code, reason) = reason_for(found.code(), found.message());
    let message: String = found.message().chars().take(MESSAGE_CHARS).collect();
    let message = if message.is_empty() {
        format!("{code:?}")
    } else {
        message
    };
    headers.remove("grpc-message");
    if status(code, reason, message).add_header(headers).is_err() {
        headers.insert("grpc-status", http::HeaderValue::from(code as i32));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_timeout_header_is_read_in_every_unit() {
        let mut headers = HeaderMap::new();
        for (value, expected) in [
            ("2S", Some(Duration::from_secs(2))),
            ("150m", Some(Duration::from_millis(150))),
            ("1H", Some(Duration::from_secs(3600))),
            ("7u", Some(Duration::from_micros(7))),
            ("5x", None),
            ("S", None),
            ("1234567890S", None),
        ] {
            headers.insert("grpc-timeout", http::HeaderValue::from_static(value));
            assert_eq!(client_timeout(&headers), expected, "{value}");
        }
    }

    #[test]
    fn a_status_tonic_made_gets_a_reason_and_keeps_only_a_short_message() {
        let long = format!("failed to decode Protobuf message: {}", "x".repeat(10_000));
        let response = with_reason(Status::internal(long).into_http());
        let status = Status::from_header_map(response.headers()).expect("a status");
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().chars().count() <= MESSAGE_CHARS);
        assert_eq!(
            status.get_details_error_info().expect("a reason").reason,
            "UNDECODABLE_REQUEST"
        );
        let response = with_reason(Status::internal("Missing request message.").into_http());
        let status = Status::from_header_map(response.headers()).expect("a status");
        assert_eq!(
            (
                status.code(),
                status.get_details_error_info().expect("a reason").reason
            ),
            (Code::InvalidArgument, "MALFORMED_REQUEST".to_owned())
        );
        let response = with_reason(Status::unimplemented("").into_http());
        let status = Status::from_header_map(response.headers()).expect("a status");
        assert_eq!(
            (
                status.code(),
                status.get_details_error_info().expect("a reason").reason
            ),
            (Code::Unimplemented, "UNKNOWN_METHOD".to_owned())
        );
    }
}
