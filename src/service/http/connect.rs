//! The Connect protocol (<https://connectrpc.com/docs/protocol>) and JSON on the gRPC port, for
//! clients without gRPC: curl, game engines speaking HTTP and JSON, and Connect's own libraries.
//!
//! A Connect call becomes a gRPC call to the same tonic service (so every method has one
//! implementation, behind the same reasons, rate limits and metrics), and its gRPC answer is
//! turned back:
//! - unary: `POST /package.Service/Method` with `application/json` (proto3's canonical JSON) or
//!   `application/proto`; or `GET` with `?message=` (and `encoding=json|proto`, `base64=1`) for
//!   the methods marked `NO_SIDE_EFFECTS` in the proto. An error is Connect's error JSON with
//!   the `google.rpc.ErrorInfo` detail gRPC sends (its `debug` shows it as JSON).
//! - server streams: `application/connect+json` or `+proto`, enveloped, ending with the
//!   end-of-stream message (which carries any error).
//! - NDJSON, for `curl -N`: a stream asked for in plain JSON (`POST` with `application/json`, or
//!   `GET`) answers `application/x-ndjson`, one message per line, heartbeats included; an error
//!   after the first line is a last line `{"error": {...}}`.
//!
//! Compression is not offered (`ENCODING_UNSUPPORTED`); gRPC and grpc-web requests pass through
//! untouched. The framing is written here because no maintained Rust crate serves Connect in
//! front of a tonic service; the JSON mapping is pbjson's generated code for our messages
//! (`grpc/json.rs`), prost-reflect's for others (`schema.rs`).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, Full, Limited};
use prost::Message;
use serde_json::{Value, json};
use tonic::body::Body;
use tonic::{Code, Status};
use tower::{Layer, Service};

use crate::service::error::quote;
use crate::service::http::reasons::{count_status, status};
use crate::service::http::schema::{JsonCodec, Schema};
use crate::service::metrics::Metrics;
use crate::service::reason::Reason;

/// The content type of NDJSON streams.
pub const NDJSON: &str = "application/x-ndjson";

/// How a message is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Json,
    Proto,
}

/// How the answer is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    /// One message, or Connect's error JSON.
    Unary,
    /// Connect's envelopes and end-of-stream message.
    Stream,
    /// One JSON message per line.
    Ndjson,
}

/// A Connect call, read from its request line and headers.
struct Plan {
    /// The method's JSON mapping.
    json: Arc<dyn JsonCodec>,
    /// The request type's name, for messages.
    input: String,
    encoding: Encoding,
    framing: Framing,
    /// The message of a `GET`, from its query.
    query_message: Option<Vec<u8>>,
}

/// See the module's documentation.
#[derive(Clone)]
pub struct ConnectLayer {
    schema: Arc<Schema>,
    metrics: Arc<Metrics>,
    max_request_bytes: usize,
}

impl ConnectLayer {
    /// Serves the methods of `schema`, refusing bodies over `max_request_bytes`; refusals made
    /// here are counted in `metrics`.
    pub(crate) fn new(
        schema: Arc<Schema>,
        metrics: Arc<Metrics>,
        max_request_bytes: usize,
    ) -> ConnectLayer {
        ConnectLayer {
            schema,
            metrics,
            max_request_bytes,
        }
    }
}

impl<S> Layer<S> for ConnectLayer {
    type Service = Connect<S>;

    fn layer(&self, inner: S) -> Connect<S> {
        Connect {
            inner,
            schema: self.schema.clone(),
            metrics: self.metrics.clone(),
            max_request_bytes: self.max_request_bytes,
        }
    }
}

/// A service behind [`ConnectLayer`].
#[derive(Clone)]
pub struct Connect<S> {
    inner: S,
    schema: Arc<Schema>,
    metrics: Arc<Metrics>,
    max_request_bytes: usize,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> Service<Request<B>> for Connect<S>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The inner service was made ready by `poll_ready`: call that one, keep a clone.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        if is_grpc(request.headers()) || request.method() == Method::OPTIONS {
            return Box::pin(inner.call(request.map(Body::new)));
        }
        let schema = self.schema.clone();
        let metrics = self.metrics.clone();
        let path = request.uri().path().to_owned();
        let plan = plan(&request, &schema);
        let limit = self.max_request_bytes;
        Box::pin(async move {
            let plan = match plan {
                Ok(plan) => plan,
                Err(refused) => {
                    count_status(&metrics, path, &refused);
                    return Ok(error_response(&refused, &schema));
                }
            };
            let (parts, body) = request.into_parts();
            let grpc = match read_message(&plan, body, limit)
                .await
                .and_then(|message| grpc_request(parts, message))
            {
                Ok(grpc) => grpc,
                Err(refused) => {
                    count_status(&metrics, path, &refused);
                    return Ok(refusal(&plan, &refused, &schema));
                }
            };
            let response = inner.call(grpc).await?;
            Ok(match plan.framing {
                Framing::Unary => unary_answer(response, &plan, &schema).await,
                Framing::Stream | Framing::Ndjson => stream_answer(response, plan, schema),
            })
        })
    }
}

/// Whether a request is gRPC or grpc-web (served as it is).
fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"))
}

/// A refusal made here.
fn refused(code: Code, reason: Reason, message: impl Into<String>) -> Status {
    status(code, reason, message.into())
}

/// What the call asks for, or why it cannot be served.
fn plan<B>(request: &Request<B>, schema: &Schema) -> Result<Plan, Status> {
    let path = request.uri().path();
    let Some(method) = schema.method(path) else {
        return Err(refused(
            Code::Unimplemented,
            Reason::UnknownMethod,
            format!("no method {}", quote(path)),
        ));
    };
    let headers = request.headers();
    for name in ["content-encoding", "connect-content-encoding"] {
        if let Some(value) = headers.get(name).filter(|v| *v != "identity") {
            return Err(refused(
                Code::Unimplemented,
                Reason::EncodingUnsupported,
                format!(
                    "{name} {} is not supported: send the request uncompressed",
                    quote(value.to_str().unwrap_or("?"))
                ),
            ));
        }
    }
    let (encoding, framing, query_message) = if request.method() == Method::GET {
        if !method.safe {
            return Err(refused(
                Code::Unimplemented,
                Reason::HttpMethodNotAllowed,
                format!("{path} has side effects: call it with POST"),
            ));
        }
        let query = get_query(request.uri().query().unwrap_or(""))?;
        let framing = if method.streaming {
            if query.encoding == Encoding::Proto {
                return Err(refused(
                    Code::InvalidArgument,
                    Reason::ContentTypeUnsupported,
                    "a stream read with GET is NDJSON: its message is JSON",
                ));
            }
            Framing::Ndjson
        } else {
            Framing::Unary
        };
        (query.encoding, framing, Some(query.message))
    } else if request.method() == Method::POST {
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let (encoding, framing) = match (essence.as_str(), method.streaming) {
            ("application/json", false) => (Encoding::Json, Framing::Unary),
            ("application/proto", false) => (Encoding::Proto, Framing::Unary),
            ("application/json", true) => (Encoding::Json, Framing::Ndjson),
            ("application/connect+json", true) => (Encoding::Json, Framing::Stream),
            ("application/connect+proto", true) => (Encoding::Proto, Framing::Stream),
            _ => {
                let served = if method.streaming {
                    "application/connect+json, application/connect+proto, or application/json \
                     for NDJSON"
                } else {
                    "application/json or application/proto"
                };
                return Err(refused(
                    Code::InvalidArgument,
                    Reason::ContentTypeUnsupported,
                    format!(
                        "content type {} is not served for {path}: send {served}",
                        quote(content_type)
                    ),
                ));
            }
        };
        (encoding, framing, None)
    } else {
        return Err(refused(
            Code::Unimplemented,
            Reason::HttpMethodNotAllowed,
            format!(
                "{} is not served: call with POST (or GET)",
                request.method()
            ),
        ));
    };
    Ok(Plan {
        json: method.json.clone(),
        input: method.input.clone(),
        encoding,
        framing,
        query_message,
    })
}

/// What a `GET`'s query says.
struct GetQuery {
    encoding: Encoding,
    message: Vec<u8>,
}

/// Reads `encoding`, `message`, `base64`, `compression` (and ignores `connect`).
fn get_query(query: &str) -> Result<GetQuery, Status> {
    let mut encoding = Encoding::Json;
    let mut message: Option<String> = None;
    let mut base64 = false;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "encoding" => {
                encoding = match value.as_ref() {
                    "json" => Encoding::Json,
                    "proto" => Encoding::Proto,
                    other => {
                        return Err(refused(
                            Code::InvalidArgument,
                            Reason::ContentTypeUnsupported,
                            format!("encoding {} is not served: json or proto", quote(other)),
                        ));
                    }
                }
            }
            "message" => message = Some(value.into_owned()),
            "base64" => base64 = value == "1",
            "compression" if value != "identity" && !value.is_empty() => {
                return Err(refused(
                    Code::Unimplemented,
                    Reason::EncodingUnsupported,
                    format!("compression {} is not supported", quote(&value)),
                ));
            }
            _ => {}
        }
    }
    let message = match (message, base64) {
        (None, _) => match encoding {
            Encoding::Json => b"{}".to_vec(),
            Encoding::Proto => Vec::new(),
        },
        (Some(text), true) => URL_SAFE_NO_PAD
            .decode(text.trim_end_matches('='))
            .map_err(|e| {
                refused(
                    Code::InvalidArgument,
                    Reason::MalformedRequest,
                    format!("message is not base64url: {e}"),
                )
            })?,
        (Some(text), false) => text.into_bytes(),
    };
    Ok(GetQuery { encoding, message })
}

/// The request's message in binary, from its body or query.
async fn read_message<B>(plan: &Plan, body: B, limit: usize) -> Result<Bytes, Status>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let raw = match &plan.query_message {
        Some(message) => Bytes::from(message.clone()),
        None => read_body(body, limit).await?,
    };
    let raw = if plan.framing == Framing::Stream {
        unenvelope(raw)?
    } else {
        raw
    };
    match plan.encoding {
        Encoding::Proto => Ok(raw),
        // An empty body is the empty message, as in binary (`curl -X POST` with no data).
        Encoding::Json if raw.is_empty() => Ok(Bytes::new()),
        Encoding::Json => plan
            .json
            .request_to_proto(&raw)
            .map(Bytes::from)
            .map_err(|e| {
                refused(
                    Code::InvalidArgument,
                    Reason::UndecodableRequest,
                    format!("the body is not a {} in JSON: {e}", plan.input),
                )
            }),
    }
}

/// The whole body, if within the limit.
async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, Status>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(refused(
            Code::OutOfRange,
            Reason::MessageTooLarge,
            format!("the request is over {} KiB", limit / 1024),
        )),
        Err(e) => Err(refused(
            Code::InvalidArgument,
            Reason::MalformedRequest,
            format!("the request body could not be read: {e}"),
        )),
    }
}

/// The one message of a Connect stream request's body.
fn unenvelope(mut body: Bytes) -> Result<Bytes, Status> {
    let malformed = |what: &str| {
        refused(
            Code::InvalidArgument,
            Reason::MalformedRequest,
            format!("the request is not one Connect envelope: {what}"),
        )
    };
    if body.len() < 5 {
        return Err(malformed("shorter than its 5-byte prefix"));
    }
    let flags = body.get_u8();
    let length = body.get_u32() as usize;
    if flags & 0x01 != 0 {
        return Err(refused(
            Code::Unimplemented,
            Reason::EncodingUnsupported,
            "compressed envelopes are not supported",
        ));
    }
    if flags != 0 {
        return Err(malformed("unexpected flags"));
    }
    if body.len() != length {
        return Err(malformed("its length does not match the body"));
    }
    Ok(body)
}

/// The gRPC call for a Connect call: the same path, headers (authorization among them) and
/// connection facts, the message in one gRPC frame, and Connect's timeout as gRPC's.
fn grpc_request(mut parts: http::request::Parts, message: Bytes) -> Result<Request<Body>, Status> {
    let headers = &mut parts.headers;
    let timeout = headers.remove("connect-timeout-ms");
    for name in [
        header::CONTENT_TYPE,
        header::CONTENT_LENGTH,
        header::CONTENT_ENCODING,
        header::ACCEPT_ENCODING,
        header::ACCEPT,
    ] {
        headers.remove(name);
    }
    headers.remove("connect-protocol-version");
    headers.remove("connect-accept-encoding");
    headers.remove("connect-content-encoding");
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    headers.insert(header::TE, HeaderValue::from_static("trailers"));
    if let Some(timeout) = timeout {
        let millis = timeout
            .to_str()
            .ok()
            .filter(|t| (1..=10).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| {
                refused(
                    Code::InvalidArgument,
                    Reason::MalformedRequest,
                    "connect-timeout-ms is not a number of milliseconds (at most 10 digits)",
                )
            })?;
        // gRPC's timeout has at most 8 digits: larger ones in seconds.
        let value = match millis.parse::<u64>() {
            Ok(ms) if ms < 100_000_000 => format!("{ms}m"),
            Ok(ms) => format!("{}S", (ms / 1000).min(99_999_999)),
            Err(_) => "99999999S".to_owned(),
        };
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert("grpc-timeout", value);
        }
    }
    parts.method = Method::POST;
    // gRPC is HTTP/2 whatever the client's connection was (tonic-web refuses other HTTP/1 calls).
    parts.version = http::Version::HTTP_2;
    let path = parts.uri.path().to_owned();
    parts.uri = path.parse().map_err(|_| {
        refused(
            Code::InvalidArgument,
            Reason::MalformedRequest,
            "the path is not a valid URI",
        )
    })?;
    let mut framed = BytesMut::with_capacity(5 + message.len());
    framed.put_u8(0);
    framed.put_u32(message.len() as u32);
    framed.put(message);
    Ok(Request::from_parts(
        parts,
        Body::new(Full::new(framed.freeze())),
    ))
}

/// A Connect code's name.
fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "ok",
        Code::Cancelled => "canceled",
        Code::Unknown => "unknown",
        Code::InvalidArgument => "invalid_argument",
        Code::DeadlineExceeded => "deadline_exceeded",
        Code::NotFound => "not_found",
        Code::AlreadyExists => "already_exists",
        Code::PermissionDenied => "permission_denied",
        Code::ResourceExhausted => "resource_exhausted",
        Code::FailedPrecondition => "failed_precondition",
        Code::Aborted => "aborted",
        Code::OutOfRange => "out_of_range",
        Code::Unimplemented => "unimplemented",
        Code::Internal => "internal",
        Code::Unavailable => "unavailable",
        Code::DataLoss => "data_loss",
        Code::Unauthenticated => "unauthenticated",
    }
}

/// The HTTP status of a unary Connect error with `code`.
fn http_status(code: Code) -> StatusCode {
    match code {
        Code::Ok => StatusCode::OK,
        Code::Cancelled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => {
            StatusCode::BAD_REQUEST
        }
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::Unknown | Code::Internal | Code::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The reason of a refusal, if it has one.
fn reason_of(status: &Status) -> Option<String> {
    use tonic_types::StatusExt;
    status.get_details_error_info().map(|info| info.reason)
}

/// Connect's error JSON for `status`: code, message and details (each with its JSON as
/// `debug`), the ErrorInfo first.
fn error_json(status: &Status, schema: &Schema) -> Value {
    let mut error = json!({ "code": code_name(status.code()), "message": status.message() });
    let mut details = tonic_types::pb::Status::decode(status.details())
        .map(|s| s.details)
        .unwrap_or_default();
    // The ErrorInfo first, so that `details[0].debug.reason` is the reason (jq, curl users).
    details.sort_by_key(|any| !any.type_url.ends_with("/google.rpc.ErrorInfo"));
    if !details.is_empty() {
        let details: Vec<Value> = details
            .iter()
            .map(|any| {
                let name = any.type_url.rsplit('/').next().unwrap_or(&any.type_url);
                let mut detail =
                    json!({ "type": name, "value": STANDARD_NO_PAD.encode(&any.value) });
                if let Some(debug) = schema.debug(name, &any.value) {
                    detail["debug"] = debug;
                }
                detail
            })
            .collect();
        error["details"] = Value::Array(details);
    }
    error
}

/// A response with `status` code, `content_type` and `body`.
fn respond(code: StatusCode, content_type: &'static str, body: Bytes) -> Response<Body> {
    let length = body.len();
    let mut response = Response::new(Body::new(Full::new(body)));
    *response.status_mut() = code;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    response
}

/// A unary Connect error response.
fn error_response(status: &Status, schema: &Schema) -> Response<Body> {
    let body = serde_json::to_vec(&error_json(status, schema)).unwrap_or_default();
    let mut code = http_status(status.code());
    if reason_of(status).as_deref() == Some(Reason::HttpMethodNotAllowed.as_str()) {
        code = StatusCode::METHOD_NOT_ALLOWED;
    } else if reason_of(status).as_deref() == Some(Reason::ContentTypeUnsupported.as_str()) {
        code = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    }
    let mut response = respond(code, "application/json", Bytes::from(body));
    if code == StatusCode::METHOD_NOT_ALLOWED {
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, POST"));
    }
    response
}

/// A refusal in the framing the call asked for.
fn refusal(plan: &Plan, status: &Status, schema: &Schema) -> Response<Body> {
    match plan.framing {
        Framing::Unary | Framing::Ndjson => error_response(status, schema),
        Framing::Stream => {
            let mut end = BytesMut::new();
            end_of_stream(&mut end, Some(status), &HeaderMap::new(), schema);
            respond(StatusCode::OK, stream_type(plan.encoding), end.freeze())
        }
    }
}

fn stream_type(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Json => "application/connect+json",
        Encoding::Proto => "application/connect+proto",
    }
}

fn unary_type(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Json => "application/json",
        Encoding::Proto => "application/proto",
    }
}

/// Headers of a gRPC answer that are the call's metadata (not the protocol's).
fn metadata(headers: &HeaderMap) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
    headers.iter().filter(|(name, _)| {
        let name = name.as_str();
        !(name.starts_with("grpc-")
            || name == "content-type"
            || name == "content-length"
            || name == "te"
            || name == "trailer")
    })
}

/// The answer to a unary call, from the gRPC one.
async fn unary_answer(response: Response<Body>, plan: &Plan, schema: &Schema) -> Response<Body> {
    let (parts, body) = response.into_parts();
    if let Some(status) = Status::from_header_map(&parts.headers)
        && status.code() != Code::Ok
    {
        return error_response(&status, schema);
    }
    let collected = match body.collect().await {
        Ok(collected) => collected,
        Err(status) => return error_response(&status, schema),
    };
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let status = Status::from_header_map(&trailers)
        .or_else(|| Status::from_header_map(&parts.headers))
        .unwrap_or_else(|| Status::internal("the call ended without a status"));
    if status.code() != Code::Ok {
        return error_response(&status, schema);
    }
    let mut data = collected.to_bytes();
    let message = match next_frame(&mut data) {
        Ok(Some(message)) => message,
        _ => {
            return error_response(
                &Status::internal("the answer was not one gRPC message"),
                schema,
            );
        }
    };
    let body = match plan.encoding {
        Encoding::Proto => message,
        Encoding::Json => match plan.json.response_to_json(&message) {
            Ok(json) => Bytes::from(json),
            Err(e) => return error_response(&Status::internal(e), schema),
        },
    };
    let mut answer = respond(StatusCode::OK, unary_type(plan.encoding), body);
    let headers = answer.headers_mut();
    for (name, value) in metadata(&parts.headers) {
        headers.append(name.clone(), value.clone());
    }
    for (name, value) in metadata(&trailers) {
        if let Ok(name) = HeaderName::try_from(format!("trailer-{name}")) {
            headers.append(name, value.clone());
        }
    }
    answer
}

/// One whole gRPC message off the front of `buffer`, if there is one.
fn next_frame(buffer: &mut Bytes) -> Result<Option<Bytes>, String> {
    if buffer.len() < 5 {
        return Ok(None);
    }
    if buffer[0] != 0 {
        return Err("a compressed gRPC message".into());
    }
    let length = u32::from_be_bytes([buffer[1], buffer[2], buffer[3], buffer[4]]) as usize;
    if buffer.len() < 5 + length {
        return Ok(None);
    }
    buffer.advance(5);
    Ok(Some(buffer.split_to(length)))
}

/// Writes Connect's end-of-stream envelope.
fn end_of_stream(
    out: &mut BytesMut,
    status: Option<&Status>,
    trailers: &HeaderMap,
    schema: &Schema,
) {
    let mut end = serde_json::Map::new();
    if let Some(status) = status.filter(|s| s.code() != Code::Ok) {
        end.insert("error".into(), error_json(status, schema));
    }
    let mut meta = serde_json::Map::new();
    for (name, value) in metadata(trailers) {
        if let Ok(value) = value.to_str() {
            let entry = meta
                .entry(name.as_str().to_owned())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(values) = entry {
                values.push(Value::String(value.to_owned()));
            }
        }
    }
    if !meta.is_empty() {
        end.insert("metadata".into(), Value::Object(meta));
    }
    let json = serde_json::to_vec(&Value::Object(end)).unwrap_or_default();
    out.put_u8(0x02);
    out.put_u32(json.len() as u32);
    out.put_slice(&json);
}

/// The answer to a streaming call: Connect's envelopes or NDJSON, from the gRPC stream.
fn stream_answer(response: Response<Body>, plan: Plan, schema: Arc<Schema>) -> Response<Body> {
    let (parts, body) = response.into_parts();
    let trailers_only = Status::from_header_map(&parts.headers);
    if plan.framing == Framing::Ndjson
        && let Some(status) = &trailers_only
        && status.code() != Code::Ok
    {
        // Nothing was sent yet: curl sees the error as an HTTP status.
        return error_response(status, &schema);
    }
    let content_type = match plan.framing {
        Framing::Ndjson => NDJSON,
        _ => stream_type(plan.encoding),
    };
    let mut transcoded = Transcoded {
        inner: body,
        buffer: Bytes::new(),
        plan,
        schema,
        out: VecDeque::new(),
        finished: false,
    };
    if let Some(status) = trailers_only {
        transcoded.end(Some(&status), &parts.headers);
    }
    let mut answer = Response::new(Body::new(transcoded));
    let headers = answer.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Proxies (nginx) pass each line on at once.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    for (name, value) in metadata(&parts.headers) {
        headers.append(name.clone(), value.clone());
    }
    answer
}

/// A gRPC stream's body turned into Connect envelopes or NDJSON lines as it comes.
struct Transcoded {
    inner: Body,
    /// Bytes of a gRPC message not yet whole.
    buffer: Bytes,
    plan: Plan,
    schema: Arc<Schema>,
    /// Chunks ready to send.
    out: VecDeque<Bytes>,
    finished: bool,
}

impl Transcoded {
    /// Turns each whole message in the buffer into a chunk.
    fn drain(&mut self) -> Result<(), Status> {
        while let Some(message) = next_frame(&mut self.buffer).map_err(Status::internal)? {
            let payload = match self.plan.encoding {
                Encoding::Proto => message,
                Encoding::Json => Bytes::from(
                    self.plan
                        .json
                        .response_to_json(&message)
                        .map_err(Status::internal)?,
                ),
            };
            let chunk = match self.plan.framing {
                Framing::Ndjson => {
                    let mut line = BytesMut::with_capacity(payload.len() + 1);
                    line.put(payload);
                    line.put_u8(b'\n');
                    line.freeze()
                }
                _ => {
                    let mut envelope = BytesMut::with_capacity(payload.len() + 5);
                    envelope.put_u8(0);
                    envelope.put_u32(payload.len() as u32);
                    envelope.put(payload);
                    envelope.freeze()
                }
            };
            self.out.push_back(chunk);
        }
        Ok(())
    }

    /// Ends the stream with `status` (and the trailers' metadata).
    fn end(&mut self, status: Option<&Status>, trailers: &HeaderMap) {
        self.finished = true;
        let mut last = BytesMut::new();
        match self.plan.framing {
            Framing::Ndjson => {
                if let Some(status) = status.filter(|s| s.code() != Code::Ok) {
                    let error = json!({ "error": error_json(status, &self.schema) });
                    last.put_slice(&serde_json::to_vec(&error).unwrap_or_default());
                    last.put_u8(b'\n');
                }
            }
            _ => end_of_stream(&mut last, status, trailers, &self.schema),
        }
        if !last.is_empty() {
            self.out.push_back(last.freeze());
        }
    }
}

impl http_body::Body for Transcoded {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        loop {
            if let Some(chunk) = this.out.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(chunk))));
            }
            if this.finished {
                return Poll::Ready(None);
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        this.buffer = if this.buffer.is_empty() {
                            data
                        } else {
                            let mut joined =
                                BytesMut::with_capacity(this.buffer.len() + data.len());
                            joined.put(std::mem::take(&mut this.buffer));
                            joined.put(data);
                            joined.freeze()
                        };
                        if let Err(status) = this.drain() {
                            this.end(Some(&status), &HeaderMap::new());
                        }
                    }
                    Err(frame) => {
                        if let Ok(trailers) = frame.into_trailers() {
                            let status = Status::from_header_map(&trailers).unwrap_or_else(|| {
                                Status::internal("the stream ended without a status")
                            });
                            this.end(Some(&status), &trailers);
                        }
                    }
                },
                Some(Err(status)) => this.end(Some(&status), &HeaderMap::new()),
                None => this.end(
                    Some(&Status::internal("the stream ended without a status")),
                    &HeaderMap::new(),
                ),
            }
        }
    }
}
