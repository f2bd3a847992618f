//! The Connect protocol and JSON on the built server's port: unary calls in JSON and binary, by
//! POST and GET; Connect streams and NDJSON; errors as Connect's error JSON with the same reason
//! as gRPC's; every kind of bad input refused with a reason and changing nothing; and the
//! streams showing each seat exactly what its gRPC stream shows.

use std::time::Duration;

use base64::Engine;
use bytes::{Buf, Bytes};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage};
use serde_json::{Value, json};
use unoflip::proto as pb;

use super::harness::*;

const API: &str = "/unoflip.v1.UnoFlipService";

/// An HTTP/2 answer: status, headers and the body stream.
pub(super) struct Open {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: h2::RecvStream,
}

/// A request over HTTP/2 (prior knowledge) on a fresh connection; the answer's head.
pub(super) async fn h2_open(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Open {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("http://127.0.0.1:{port}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let (response, mut send) = client
        .send_request(request.body(()).unwrap(), body.is_empty())
        .unwrap();
    if !body.is_empty() {
        // The server may answer (and close the stream) before reading a body it refuses.
        let _ = send.send_data(Bytes::from(body), true);
    }
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let (parts, body) = response.into_parts();
    Open {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
    }
}

/// The next chunk of a body, `None` at its end, panicking after 10 s.
pub(super) async fn chunk(body: &mut h2::RecvStream) -> Option<Bytes> {
    let data = tokio::time::timeout(Duration::from_secs(10), body.data())
        .await
        .expect("more of the body within 10 s")?
        .unwrap();
    let _ = body.flow_control().release_capacity(data.len());
    Some(data)
}

/// A whole answer: status, content type and body.
pub(super) async fn h2_call(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    let mut open = h2_open(port, method, path, headers, body).await;
    let mut all = Vec::new();
    while let Some(data) = chunk(&mut open.body).await {
        all.extend_from_slice(&data);
    }
    let content_type = open
        .headers
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (open.status, content_type, all)
}

/// A unary Connect call in JSON.
pub(super) async fn json_call(
    port: u16,
    rpc: &str,
    auth: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let bearer = auth.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer));
    }
    let (status, content_type, body) = h2_call(
        port,
        "POST",
        &format!("{API}/{rpc}"),
        &headers,
        serde_json::to_vec(&body).unwrap(),
    )
    .await;
    assert_eq!(content_type, "application/json", "{rpc}: {status}");
    (status, serde_json::from_slice(&body).unwrap())
}

/// A Connect error's code and the reason of its ErrorInfo detail, checking that the detail's
/// bytes and its `debug` JSON agree.
pub(super) fn connect_error(error: &Value) -> (String, String) {
    let code = error["code"].as_str().expect("an error code").to_owned();
    // The server puts it first, so that `details[0].debug.reason` finds it.
    let detail = &error["details"][0];
    assert_eq!(detail["type"], "google.rpc.ErrorInfo", "{error}");
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(detail["value"].as_str().unwrap())
        .unwrap();
    let info = tonic_types::pb::ErrorInfo::decode(&bytes[..]).unwrap();
    assert_eq!(info.domain, "unoflip");
    assert_eq!(detail["debug"]["reason"], info.reason.as_str(), "{error}");
    (code, info.reason)
}

/// The services' descriptors, for the JSON form of what gRPC sends.
fn pool() -> DescriptorPool {
    DescriptorPool::decode(pb::FILE_DESCRIPTOR_SET).unwrap()
}

/// `message` as canonical JSON.
fn as_json<M: Message>(pool: &DescriptorPool, name: &str, message: &M) -> Value {
    let descriptor = pool.get_message_by_name(name).unwrap();
    let dynamic = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice()).unwrap();
    serde_json::to_value(&dynamic).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unary_calls_in_json_and_binary_by_post_and_get() {
    let server = Server::start("memory", &["--bot-delay-ms", "3600000"]).await;
    let port = server.port;
    let mut client = server.client().await;
    let (game, tokens) = started(&mut client, options(2)).await;

    // POST in JSON: the same game gRPC shows, in canonical JSON.
    let (status, answer) = json_call(port, "GetGame", None, json!({ "name": game })).await;
    assert_eq!(status, 200);
    let pool = pool();
    let grpc = get_game(&mut client, &game).await;
    assert_eq!(answer["game"], as_json(&pool, "unoflip.v1.Game", &grpc));
    assert_eq!(answer["game"]["status"], "GAME_STATUS_PLAYING");
    assert!(answer["game"]["version"].is_string(), "64-bit as strings");

    // POST in binary.
    let (status, content_type, body) = h2_call(
        port,
        "POST",
        &format!("{API}/GetGame"),
        &[("content-type", "application/proto")],
        pb::GetGameRequest { name: game.clone() }.encode_to_vec(),
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "application/proto"));
    assert_eq!(
        pb::GetGameResponse::decode(&body[..])
            .unwrap()
            .game
            .unwrap(),
        grpc
    );

    // GET with the message in the query, in JSON and in base64url binary; a seat's view with
    // its token.
    let query = format!(
        "{API}/GetView?encoding=json&message={}",
        urlencode(&json!({ "game": game }).to_string())
    );
    let bearer = format!("Bearer {}", tokens[0]);
    let (status, _, body) =
        h2_call(port, "GET", &query, &[("authorization", &bearer)], vec![]).await;
    assert_eq!(status, 200);
    let seat_view: Value = serde_json::from_slice(&body).unwrap();
    let grpc_view = view(&mut client, &game, Some(&tokens[0])).await;
    assert_eq!(
        seat_view["view"],
        as_json(&pool, "unoflip.v1.View", &grpc_view)
    );
    assert_eq!(seat_view["view"]["hand"].as_array().unwrap().len(), 7);
    let message = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(pb::GetGameRequest { name: game.clone() }.encode_to_vec());
    let (status, content_type, body) = h2_call(
        port,
        "GET",
        &format!("{API}/GetGame?encoding=proto&base64=1&message={message}&connect=v1"),
        &[],
        vec![],
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "application/proto"));
    assert_eq!(
        pb::GetGameResponse::decode(&body[..])
            .unwrap()
            .game
            .unwrap(),
        grpc
    );

    // Over HTTP/1.1 too (curl's default): a move, then its refusal when repeated.
    let (token, action, version) = next_move(&mut client, &game, &tokens).await.unwrap();
    let action = as_json(&pool, "unoflip.v1.Action", &action);
    let body = json!({ "game": game, "action": action, "expectedVersion": version.to_string() })
        .to_string();
    let headers = format!(
        "Content-Type: application/json\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n",
        body.len()
    );
    let (status, answer) = super::edge::http_body(
        port,
        "POST",
        &format!("{API}/SubmitAction"),
        &headers,
        &body,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let after: u64 = answer["version"].as_str().unwrap().parse().unwrap();
    assert!(after > version, "{answer}");
    let (status, answer) = super::edge::http_body(
        port,
        "POST",
        &format!("{API}/SubmitAction"),
        &headers,
        &body,
    )
    .await;
    assert_eq!(
        status, 400,
        "a version mismatch is FAILED_PRECONDITION: {answer}"
    );
    let error: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        connect_error(&error),
        (
            "failed_precondition".to_owned(),
            "VERSION_MISMATCH".to_owned()
        )
    );
}

/// `text` percent-encoded for a query.
pub(super) fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// What is sent (what, HTTP method, path, headers, body) and what comes back (HTTP status,
/// Connect code, reason).
type BadCase<'a> = (
    &'a str,
    &'a str,
    String,
    Vec<(&'a str, &'a str)>,
    Vec<u8>,
    u16,
    &'a str,
    &'a str,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_connect_error_with_a_reason_and_changes_nothing() {
    let server = Server::start("memory", &["--bot-delay-ms", "3600000"]).await;
    let port = server.port;
    let mut client = server.client().await;
    let (game, tokens) = started(&mut client, options(2)).await;
    let before = get_game(&mut client, &game).await;
    let (token, action, _) = next_move(&mut client, &game, &tokens).await.unwrap();
    let pool = pool();
    let action = as_json(&pool, "unoflip.v1.Action", &action);
    let valid = json!({ "game": game, "action": action }).to_string();
    let bearer = format!("Bearer {token}");
    let auth = ("authorization", bearer.as_str());
    let json_type = ("content-type", "application/json");
    let submit = format!("{API}/SubmitAction");
    let cases: Vec<BadCase> = vec![
        (
            "malformed JSON",
            "POST",
            submit.clone(),
            vec![json_type, auth],
            b"{\"game\": }".to_vec(),
            400,
            "invalid_argument",
            "UNDECODABLE_REQUEST",
        ),
        (
            "truncated JSON",
            "POST",
            submit.clone(),
            vec![json_type, auth],
            valid.as_bytes()[..valid.len() / 2].to_vec(),
            400,
            "invalid_argument",
            "UNDECODABLE_REQUEST",
        ),
        (
            "an unknown field",
            "POST",
            submit.clone(),
            vec![json_type, auth],
            json!({ "game": game, "action": action, "cheat": true })
                .to_string()
                .into_bytes(),
            400,
            "invalid_argument",
            "UNDECODABLE_REQUEST",
        ),
        (
            "a wrong type",
            "POST",
            submit.clone(),
            vec![json_type, auth],
            json!({ "game": 12, "action": action })
                .to_string()
                .into_bytes(),
            400,
            "invalid_argument",
            "UNDECODABLE_REQUEST",
        ),
        (
            "JSON after the message",
            "POST",
            submit.clone(),
            vec![json_type, auth],
            format!("{valid}{valid}").into_bytes(),
            400,
            "invalid_argument",
            "UNDECODABLE_REQUEST",
        ),
        (
            "a JSON body as proto",
            "POST",
            submit.clone(),
            vec![("content-type", "application/proto"), auth],
            valid.clone().into_bytes(),
            400,
            "invalid_argument",
            "UNDECODABLE_REQUEST",
        ),
        (
            "an oversized body",
            "POST",
            submit.clone(),
            vec![json_type, auth],
            vec![b' '; 70 * 1024],
            400,
            "out_of_range",
            "MESSAGE_TOO_LARGE",
        ),
        (
            "an unknown method",
            "POST",
            format!("{API}/Cheat"),
            vec![json_type, auth],
            b"{}".to_vec(),
            501,
            "unimplemented",
            "UNKNOWN_METHOD",
        ),
        (
            "a GET with side effects",
            "GET",
            format!("{submit}?message={}", urlencode(&valid)),
            vec![auth],
            vec![],
            405,
            "unimplemented",
            "HTTP_METHOD_NOT_ALLOWED",
        ),
        (
            "a PUT",
            "PUT",
            submit.clone(),
            vec![json_type, auth],
            valid.clone().into_bytes(),
            405,
            "unimplemented",
            "HTTP_METHOD_NOT_ALLOWED",
        ),
        (
            "an unserved content type",
            "POST",
            submit.clone(),
            vec![("content-type", "text/plain"), auth],
            valid.clone().into_bytes(),
            415,
            "invalid_argument",
            "CONTENT_TYPE_UNSUPPORTED",
        ),
        (
            "a stream's content type on a unary method",
            "POST",
            submit.clone(),
            vec![("content-type", "application/connect+json"), auth],
            valid.clone().into_bytes(),
            415,
            "invalid_argument",
            "CONTENT_TYPE_UNSUPPORTED",
        ),
        (
            "a compressed body",
            "POST",
            submit.clone(),
            vec![json_type, ("content-encoding", "gzip"), auth],
            valid.clone().into_bytes(),
            501,
            "unimplemented",
            "ENCODING_UNSUPPORTED",
        ),
        (
            "a bad timeout",
            "POST",
            submit.clone(),
            vec![json_type, ("connect-timeout-ms", "soon"), auth],
            valid.clone().into_bytes(),
            400,
            "invalid_argument",
            "MALFORMED_REQUEST",
        ),
        (
            "no token",
            "POST",
            submit.clone(),
            vec![json_type],
            valid.clone().into_bytes(),
            401,
            "unauthenticated",
            "SEAT_TOKEN_INVALID",
        ),
        (
            "a bad base64 message",
            "GET",
            format!("{API}/GetGame?base64=1&message=%%%"),
            vec![],
            vec![],
            400,
            "invalid_argument",
            "MALFORMED_REQUEST",
        ),
        (
            "an unknown encoding",
            "GET",
            format!("{API}/GetGame?encoding=xml&message=x"),
            vec![],
            vec![],
            415,
            "invalid_argument",
            "CONTENT_TYPE_UNSUPPORTED",
        ),
    ];
    for (what, method, path, headers, body, http_status, code, reason) in cases {
        let (status, content_type, answer) = h2_call(port, method, &path, &headers, body).await;
        assert_eq!(content_type, "application/json", "{what}");
        let error: Value = serde_json::from_slice(&answer)
            .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {answer:?}"));
        assert_eq!(
            (status, connect_error(&error)),
            (http_status, (code.to_owned(), reason.to_owned())),
            "{what}: {error}"
        );
        assert!(!error["message"].as_str().unwrap().is_empty(), "{what}");
        assert_eq!(
            get_game(&mut client, &game).await,
            before,
            "{what} changed the game"
        );
    }
    // A Connect stream's bad request ends its stream with the error, as the protocol says.
    let open = h2_open(
        port,
        "POST",
        &format!("{API}/Subscribe"),
        &[("content-type", "application/connect+json")],
        b"\x00\x00\x00\x00\x09{\"game\":".to_vec(),
    )
    .await;
    assert_eq!(open.status, 200);
    let (messages, end) = read_envelopes(open).await;
    assert!(messages.is_empty());
    let (code, reason) = connect_error(&end["error"]);
    assert_eq!(
        (code.as_str(), reason.as_str()),
        ("invalid_argument", "MALFORMED_REQUEST")
    );
    let metrics = super::edge::http(port, "GET", "/metrics", "").await.1;
    assert!(
        super::edge::metric(
            &metrics,
            "unoflip_refusals_total{reason=\"UNDECODABLE_REQUEST\"}"
        ) >= 6.0,
        "Connect's refusals are counted"
    );
    assert_eq!(get_game(&mut client, &game).await, before);
}

/// A Connect stream's messages (JSON) and its end-of-stream message, to its end.
async fn read_envelopes(mut open: Open) -> (Vec<Value>, Value) {
    let mut buffer = Vec::new();
    let mut messages = Vec::new();
    loop {
        while buffer.len() >= 5 {
            let length = u32::from_be_bytes([buffer[1], buffer[2], buffer[3], buffer[4]]) as usize;
            if buffer.len() < 5 + length {
                break;
            }
            let flags = buffer[0];
            let payload: Value = serde_json::from_slice(&buffer[5..5 + length]).unwrap();
            buffer.drain(..5 + length);
            if flags & 0x02 != 0 {
                assert!(buffer.is_empty(), "nothing after the end of the stream");
                assert!(chunk(&mut open.body).await.is_none());
                return (messages, payload);
            }
            messages.push(payload);
        }
        let data = chunk(&mut open.body)
            .await
            .expect("an end-of-stream message");
        buffer.extend_from_slice(data.chunk());
    }
}

/// A stream's messages as JSON, read as Connect envelopes or NDJSON lines as they come.
struct JsonStream {
    open: Open,
    buffer: Vec<u8>,
    ndjson: bool,
}

impl JsonStream {
    async fn next(&mut self) -> Value {
        loop {
            if self.ndjson {
                if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = self.buffer.drain(..=end).collect();
                    return serde_json::from_slice(&line).unwrap();
                }
            } else if self.buffer.len() >= 5 {
                let length = u32::from_be_bytes([
                    self.buffer[1],
                    self.buffer[2],
                    self.buffer[3],
                    self.buffer[4],
                ]) as usize;
                if self.buffer.len() >= 5 + length {
                    assert_eq!(
                        self.buffer[0],
                        0,
                        "a message, not the end of the stream: {}",
                        String::from_utf8_lossy(&self.buffer[5..5 + length])
                    );
                    let message = serde_json::from_slice(&self.buffer[5..5 + length]).unwrap();
                    self.buffer.drain(..5 + length);
                    return message;
                }
            }
            let data = chunk(&mut self.open.body)
                .await
                .expect("the stream goes on");
            self.buffer.extend_from_slice(&data);
        }
    }
}

/// A seat's (or a spectator's) stream of `game` over Connect (JSON envelopes) or NDJSON.
async fn json_stream(port: u16, game: &str, token: Option<&str>, ndjson: bool) -> JsonStream {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let message = json!({ "game": game, "includeView": true }).to_string();
    let mut headers = vec![];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer.as_str()));
    }
    let open = if ndjson {
        headers.push(("content-type", "application/json"));
        h2_open(
            port,
            "POST",
            &format!("{API}/Subscribe"),
            &headers,
            message.into_bytes(),
        )
        .await
    } else {
        headers.push(("content-type", "application/connect+json"));
        let mut body = vec![0];
        body.extend_from_slice(&(message.len() as u32).to_be_bytes());
        body.extend_from_slice(message.as_bytes());
        h2_open(port, "POST", &format!("{API}/Subscribe"), &headers, body).await
    };
    assert_eq!(open.status, 200);
    let content_type = open.headers.get("content-type").unwrap().to_str().unwrap();
    assert_eq!(
        content_type,
        if ndjson {
            "application/x-ndjson"
        } else {
            "application/connect+json"
        }
    );
    JsonStream {
        open,
        buffer: Vec::new(),
        ndjson,
    }
}

/// A seat that may act, a move that keeps the game going, and the version it holds at; `None`
/// once no seat may act.
async fn next_move(
    client: &mut Client,
    game: &str,
    tokens: &[String],
) -> Option<(String, pb::Action, u64)> {
    for token in tokens {
        let seat_view = view(client, game, Some(token)).await;
        if let Some(action) = pick_move(&seat_view.legal_actions) {
            return Some((token.clone(), action, seat_view.version));
        }
    }
    None
}

/// Whether a stream message is a heartbeat (sent when idle, so at no fixed place).
fn is_heartbeat(message: &Value) -> bool {
    message.get("heartbeat").is_some()
}

/// The version of an event message.
fn event_version(message: &Value) -> Option<u64> {
    message["event"]["version"].as_str()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ndjson_and_connect_streams_show_each_seat_exactly_what_its_grpc_stream_shows() {
    let server = Server::start("memory", &["--heartbeat-secs", "1"]).await;
    let port = server.port;
    let mut client = server.client().await;
    let pool = pool();
    let mut game_options = options(3);
    game_options.single_round = true;
    let (game, tokens) = table(&mut client, game_options).await;
    let viewers: Vec<Option<&str>> = tokens
        .iter()
        .map(|t| Some(t.as_str()))
        .chain([None])
        .collect();
    // Each seat and a spectator, over all three protocols, from before the first deal.
    let mut streams = Vec::new();
    for viewer in &viewers {
        let mut grpc = {
            let request = pb::SubscribeRequest {
                game: game.clone(),
                after_version: 0,
                include_view: true,
            };
            let request = match viewer {
                Some(token) => authed(request, token),
                None => tonic::Request::new(request),
            };
            client.subscribe(request).await.unwrap().into_inner()
        };
        let mut ndjson = json_stream(port, &game, *viewer, true).await;
        let mut connect = json_stream(port, &game, *viewer, false).await;
        // Each has sent the lobby (what it sends at once before the game starts).
        let first = tokio::time::timeout(Duration::from_secs(10), grpc.message())
            .await
            .expect("the lobby within 10 s")
            .unwrap()
            .unwrap();
        let first = as_json(&pool, "unoflip.v1.SubscribeResponse", &first);
        assert!(first["lobby"].is_object(), "{first}");
        for stream in [&mut ndjson, &mut connect] {
            let mut message = stream.next().await;
            while is_heartbeat(&message) {
                message = stream.next().await;
            }
            assert_eq!(message, first);
        }
        // Read as the game goes (a stream nobody reads falls behind and is ended), to the end
        // of the match.
        let grpc = tokio::spawn(async move {
            let pool = self::pool();
            let mut seen = Vec::new();
            loop {
                let message = tokio::time::timeout(Duration::from_secs(60), grpc.message())
                    .await
                    .expect("a gRPC message within 60 s")
                    .unwrap()
                    .expect("the gRPC stream goes on");
                let message = as_json(&pool, "unoflip.v1.SubscribeResponse", &message);
                if is_heartbeat(&message) {
                    continue;
                }
                let done = message["event"]["matchEnded"].is_object();
                seen.push(message);
                if done {
                    return seen;
                }
            }
        });
        let json = |mut stream: JsonStream| {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                loop {
                    let message = stream.next().await;
                    if is_heartbeat(&message) {
                        continue;
                    }
                    let done = message["event"]["matchEnded"].is_object();
                    seen.push(message);
                    if done {
                        return seen;
                    }
                }
            })
        };
        streams.push((grpc, json(ndjson), json(connect)));
    }
    client
        .start_game(authed(
            pb::StartGameRequest { game: game.clone() },
            &tokens[0],
        ))
        .await
        .unwrap();
    let mut moves = 0;
    while let Some((token, action, version)) = next_move(&mut client, &game, &tokens).await {
        client
            .submit_action(authed(
                pb::SubmitActionRequest {
                    game: game.clone(),
                    action: Some(action),
                    expected_version: Some(version),
                    ..Default::default()
                },
                &token,
            ))
            .await
            .unwrap();
        moves += 1;
        assert!(moves < 2000, "the round ends");
    }
    let last = get_game(&mut client, &game).await.version;
    assert_eq!(
        get_game(&mut client, &game).await.status,
        pb::GameStatus::Finished as i32
    );
    for (i, (grpc, ndjson, connect)) in streams.into_iter().enumerate() {
        let expected = grpc.await.unwrap();
        assert_eq!(event_version(expected.last().unwrap()), Some(last));
        assert!(
            expected.len() > moves,
            "viewer {i} saw the game: {}",
            expected.len()
        );
        for (protocol, stream) in [("NDJSON", ndjson), ("Connect", connect)] {
            let got = stream.await.unwrap();
            assert_eq!(got.len(), expected.len(), "viewer {i} over {protocol}");
            for (n, (a, b)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(a, b, "viewer {i}, message {n}, over {protocol}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ndjson_streams_start_with_an_http_error_and_end_with_an_error_line() {
    let server = Server::start("memory", &[]).await;
    let port = server.port;
    // A refusal before any message is an HTTP error, so that `curl -f` fails.
    let (status, content_type, body) = h2_call(
        port,
        "GET",
        &format!(
            "{API}/Subscribe?message={}",
            urlencode(r#"{"game":"games/none"}"#)
        ),
        &[],
        vec![],
    )
    .await;
    assert_eq!((status, content_type.as_str()), (404, "application/json"));
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(connect_error(&error).1, "GAME_NOT_FOUND");
    // The firehose by GET, live: a game created after it opened shows up as a line.
    let mut firehose = JsonStream {
        open: h2_open(port, "GET", &format!("{API}/SubscribeAll"), &[], vec![]).await,
        buffer: Vec::new(),
        ndjson: true,
    };
    assert_eq!(firehose.open.status, 200);
    assert!(firehose.next().await["caughtUp"].is_object());
    let mut client = server.client().await;
    let (game, _) = started(&mut client, options(2)).await;
    let mut line = firehose.next().await;
    while line.get("heartbeat").is_some() {
        line = firehose.next().await;
    }
    assert_eq!(line["event"]["game"], game.as_str(), "{line}");
    assert!(line["event"]["event"]["gameCreated"].is_object(), "{line}");
    // A server stopping ends the stream with an error line carrying its reason.
    server.stop();
    let mut line = firehose.next().await;
    while line.get("error").is_none() {
        assert!(
            line.get("event").is_some() || line.get("heartbeat").is_some(),
            "{line}"
        );
        line = firehose.next().await;
    }
    let mut rest = Vec::new();
    while let Some(data) = chunk(&mut firehose.open.body).await {
        rest.extend_from_slice(&data);
    }
    assert!(
        firehose.buffer.is_empty() && rest.is_empty(),
        "the error is the last line"
    );
    let (code, reason) = connect_error(&line["error"]);
    assert_eq!(
        (code.as_str(), reason.as_str()),
        ("unavailable", "SERVER_STOPPING")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_curl_bot_plays_a_whole_round_from_the_ndjson_stream() {
    let found = ["curl", "jq"].map(|tool| crate::kit::find_tool(&tool.to_uppercase(), tool, &[]));
    if found.iter().any(Option::is_none) {
        eprintln!(
            "SKIPPED: curl or jq was not found (run .ci/run); examples/curl-bot.sh was not run"
        );
        return;
    }
    let server = Server::start("memory", &["--bot-delay-ms", "0"]).await;
    let output = tokio::process::Command::new("bash")
        .arg("examples/curl-bot.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("ADDR", format!("http://127.0.0.1:{}", server.port))
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let game = stdout
        .lines()
        .find_map(|l| l.strip_prefix("playing "))
        .expect("the bot names its game")
        .to_owned();
    assert!(stdout.contains("round over after "), "{stdout}");
    // The round it played is over, in the store.
    let mut client = server.client().await;
    let status = get_game(&mut client, &game).await.status;
    assert_eq!(status, pb::GameStatus::Finished as i32, "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_calls_pass_the_same_cors_and_rate_limit_as_grpc() {
    let server = Server::start(
        "memory",
        &[
            "--cors-origin",
            "https://play.example.com",
            "--rate-limit",
            "20",
        ],
    )
    .await;
    let port = server.port;
    // A browser's preflight for a Connect call: its headers are allowed for the origin.
    let (_, head, _) = super::edge::http_full(
        port,
        "OPTIONS",
        &format!("{API}/GetGame"),
        "Origin: https://play.example.com\r\nAccess-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type,connect-protocol-version,connect-timeout-ms\r\n",
    )
    .await;
    assert!(
        head.contains("access-control-allow-origin: https://play.example.com")
            && head.contains("connect-protocol-version")
            && head.contains("connect-timeout-ms"),
        "{head}"
    );
    let (_, head, _) = super::edge::http_full(
        port,
        "GET",
        &format!("{API}/GetDecks"),
        "Origin: https://evil.example.net\r\n",
    )
    .await;
    assert!(!head.contains("access-control-allow-origin"), "{head}");
    // The client address's rate limit (20 a second, in bursts of 20) holds for Connect too.
    let mut limited = None;
    for _ in 0..60 {
        let (status, _, body) = h2_call(port, "GET", &format!("{API}/GetDecks"), &[], vec![]).await;
        if status != 200 {
            limited = Some((status, serde_json::from_slice::<Value>(&body).unwrap()));
            break;
        }
    }
    let (status, error) = limited.expect("60 calls at once are rate limited");
    assert_eq!(status, 429);
    assert_eq!(
        error["details"][1]["type"], "google.rpc.RetryInfo",
        "{error}"
    );
    assert_eq!(
        connect_error(&error),
        ("resource_exhausted".to_owned(), "RATE_LIMITED".to_owned())
    );
}
