//! Fuzzing the built server on the wire. proptest makes the inputs: for every RPC, random bytes
//! and mutations of a valid request (bytes flipped, set, cut or inserted), with or without a
//! frame header around them, with no token, a seat's, the admin's or a garbled one, sent as
//! gRPC over HTTP/2 (with the `h2` crate, so that even the framing can be wrong), as grpc-web over
//! HTTP/1.1, or over the Connect protocol: JSON (the valid request in canonical JSON, mutated),
//! binary, a Connect stream's envelope, NDJSON, or a GET with the message in the query. For each: the server answers (no hang, no crash), every refusal carries an
//! `ErrorInfo` reason and is never `INTERNAL` or `UNKNOWN`, and a refused call changes nothing
//! (the games' versions, a lobby's seats, the live game count). At the end the server still
//! serves and its log has no panic.

use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;
use unoflip::proto as pb;

use super::harness::*;

/// The RPCs: path and whether the answer is a stream.
const RPCS: [(&str, bool); 19] = [
    ("GetDecks", false),
    ("CreateGame", false),
    ("GetGame", false),
    ("ListGames", false),
    ("JoinGame", false),
    ("StartGame", false),
    ("SubmitAction", false),
    ("GetView", false),
    ("LeaveGame", false),
    ("Subscribe", true),
    ("SubscribeAll", true),
    ("ExportGame", false),
    ("GetReplay", false),
    ("Rematch", false),
    ("RegisterPlayer", false),
    ("GetPlayer", false),
    ("ListMyGames", false),
    ("GetLeaderboard", false),
    ("FindMatch", true),
];

/// Calls made, spread over the RPCs and transports.
const CASES: u32 = 1800;

/// What the fuzz plays against: a started game and a lobby with open seats.
struct Fixture {
    port: u16,
    game: String,
    tokens: Vec<String>,
    lobby: String,
    lobby_token: String,
    /// A registered player and its token.
    player: String,
    player_token: String,
}

impl Fixture {
    /// A valid request of RPC `rpc`, encoded.
    fn valid(&self, rpc: usize, action: Option<pb::Action>, version: u64) -> Vec<u8> {
        let game = self.game.clone();
        match RPCS[rpc].0 {
            "GetDecks" => pb::GetDecksRequest {}.encode_to_vec(),
            "CreateGame" => pb::CreateGameRequest {
                options: Some(options(3)),
            }
            .encode_to_vec(),
            "GetGame" => pb::GetGameRequest { name: game }.encode_to_vec(),
            "ListGames" => pb::ListGamesRequest {
                open_only: true,
                page_size: 10,
            }
            .encode_to_vec(),
            "JoinGame" => pb::JoinGameRequest {
                game: self.lobby.clone(),
                seat: Some(1),
                player_name: "fuzz".into(),
                player: String::new(),
            }
            .encode_to_vec(),
            "StartGame" => pb::StartGameRequest {
                game: self.lobby.clone(),
            }
            .encode_to_vec(),
            "SubmitAction" => pb::SubmitActionRequest {
                game,
                action,
                request_id: String::new(),
                expected_version: Some(version),
            }
            .encode_to_vec(),
            "GetView" => pb::GetViewRequest { game }.encode_to_vec(),
            "LeaveGame" => pb::LeaveGameRequest { game }.encode_to_vec(),
            "Subscribe" => pb::SubscribeRequest {
                game,
                after_version: 0,
                include_view: true,
            }
            .encode_to_vec(),
            "SubscribeAll" => pb::SubscribeAllRequest { after_position: 0 }.encode_to_vec(),
            "GetReplay" => pb::GetReplayRequest { game, version: 1 }.encode_to_vec(),
            "Rematch" => pb::RematchRequest { game }.encode_to_vec(),
            "RegisterPlayer" => pb::RegisterPlayerRequest {
                display_name: "fuzz".into(),
                bot: true,
            }
            .encode_to_vec(),
            "GetPlayer" => pb::GetPlayerRequest {
                name: self.player.clone(),
            }
            .encode_to_vec(),
            "ListMyGames" => pb::ListMyGamesRequest {
                player: self.player.clone(),
                page_size: 10,
            }
            .encode_to_vec(),
            "GetLeaderboard" => pb::GetLeaderboardRequest {
                ruleset: pb::Ruleset::Flip as i32,
                bots: false,
                page_size: 10,
                page_token: String::new(),
            }
            .encode_to_vec(),
            "FindMatch" => pb::FindMatchRequest {
                player: self.player.clone(),
                options: Some(options(2)),
                bot_fill: false,
                bot_fill_after_seconds: 0,
                fill_levels: Vec::new(),
            }
            .encode_to_vec(),
            _ => pb::ExportGameRequest { game }.encode_to_vec(),
        }
    }
}

/// One change to a valid request's bytes.
#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Set(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(i, m)| Mutation::Flip(i, m)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        any::<usize>().prop_map(Mutation::Cut),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
        match m {
            Mutation::Flip(i, mask) if !bytes.is_empty() => {
                let i = at(*i, bytes.len());
                bytes[i] ^= mask;
            }
            Mutation::Set(i, b) if !bytes.is_empty() => {
                let i = at(*i, bytes.len());
                bytes[i] = *b;
            }
            Mutation::Cut(i) => bytes.truncate(at(*i, bytes.len() + 1)),
            Mutation::Insert(i, extra) => {
                let i = at(*i, bytes.len() + 1);
                bytes.splice(i..i, extra.iter().copied());
            }
            _ => {}
        }
    }
    bytes
}

/// The body of one call.
#[derive(Clone, Debug)]
enum Body {
    /// Random bytes, sent as the whole body (no frame header, unless by chance).
    Raw(Vec<u8>),
    /// Random bytes in a well-formed frame.
    RawFramed(Vec<u8>),
    /// A valid request, mutated, in a well-formed frame.
    Mutated(Vec<Mutation>),
    /// A valid request, mutated, then its frame too.
    MutatedFrame(Vec<Mutation>),
}

/// Which authorization header the call carries.
#[derive(Clone, Copy, Debug)]
enum Token {
    None,
    Seat(usize),
    Lobby,
    Admin,
    Player,
    Garbled,
}

/// How the call is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Grpc,
    GrpcWeb,
    /// Connect in JSON: unary, or a Connect stream (enveloped) for streaming methods.
    ConnectJson,
    /// Connect in binary: unary, or a Connect stream for streaming methods.
    ConnectProto,
    /// A POST in plain JSON: unary, or NDJSON for streaming methods.
    PlainJson,
    /// A GET with the message (JSON) in the query.
    Get,
}

#[derive(Clone, Debug)]
struct Case {
    rpc: usize,
    body: Body,
    token: Token,
    transport: Transport,
}

fn case() -> impl Strategy<Value = Case> {
    let body = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200).prop_map(Body::Raw),
        prop::collection::vec(any::<u8>(), 0..200).prop_map(Body::RawFramed),
        prop::collection::vec(mutation(), 0..4).prop_map(Body::Mutated),
        prop::collection::vec(mutation(), 1..4).prop_map(Body::MutatedFrame),
    ];
    let token = prop_oneof![
        Just(Token::None),
        (0..2usize).prop_map(Token::Seat),
        Just(Token::Lobby),
        Just(Token::Admin),
        Just(Token::Player),
        Just(Token::Garbled),
    ];
    let transport = prop_oneof![
        Just(Transport::Grpc),
        Just(Transport::GrpcWeb),
        Just(Transport::ConnectJson),
        Just(Transport::ConnectProto),
        Just(Transport::PlainJson),
        Just(Transport::Get),
    ];
    (0..RPCS.len(), body, token, transport).prop_map(|(rpc, body, token, transport)| Case {
        rpc,
        body,
        token,
        transport,
    })
}

fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8];
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

/// How the server answered a call.
#[derive(Debug)]
struct Answer {
    /// The gRPC status, `None` while a stream stays open (it answered with messages).
    code: Option<Code>,
    /// The ErrorInfo reason of a refusal.
    reason: String,
}

/// A status from its code and `grpc-status-details-bin` value: its ErrorInfo reason.
fn reason_of(code: i32, details: Option<&[u8]>) -> String {
    let Some(details) = details else {
        return String::new();
    };
    let text = String::from_utf8_lossy(details);
    let Ok(bytes) =
        base64::engine::general_purpose::STANDARD_NO_PAD.decode(text.trim().trim_end_matches('='))
    else {
        return String::new();
    };
    reason(&tonic::Status::with_details(
        Code::from_i32(code),
        "",
        Bytes::from(bytes),
    ))
}

/// A call over HTTP/2 on a fresh connection, with `body` as the request body as it is.
async fn h2_call(port: u16, rpc: usize, auth: Option<&str>, body: Vec<u8>) -> Answer {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let mut request = http::Request::builder()
        .method("POST")
        .uri(format!(
            "http://127.0.0.1:{port}/unoflip.v1.UnoFlipService/{}",
            RPCS[rpc].0
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(auth) = auth {
        request = request.header("authorization", auth);
    }
    let (response, mut send) = client
        .send_request(request.body(()).unwrap(), false)
        .unwrap();
    send.send_data(Bytes::from(body), true).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("response headers within 10 s")
        .unwrap();
    let status = |headers: &http::HeaderMap| {
        let code: i32 = headers.get("grpc-status")?.to_str().ok()?.parse().ok()?;
        let details = headers
            .get("grpc-status-details-bin")
            .map(|v| v.as_bytes().to_vec());
        Some((code, details))
    };
    if let Some((code, details)) = status(response.headers()) {
        return answer(code, details.as_deref());
    }
    let mut body = response.into_body();
    // A stream that answers with a message and stays open is served.
    loop {
        match tokio::time::timeout(Duration::from_secs(2), body.data()).await {
            Err(_) => {
                return Answer {
                    code: None,
                    reason: String::new(),
                };
            }
            Ok(Some(Ok(data))) => {
                let _ = body.flow_control().release_capacity(data.len());
                if RPCS[rpc].1 {
                    return Answer {
                        code: None,
                        reason: String::new(),
                    };
                }
            }
            Ok(Some(Err(error))) => panic!("the response body failed: {error}"),
            Ok(None) => break,
        }
    }
    let trailers = tokio::time::timeout(Duration::from_secs(10), body.trailers())
        .await
        .expect("trailers within 10 s")
        .unwrap()
        .expect("trailers with a status");
    let (code, details) = status(&trailers).expect("a grpc-status in the trailers");
    answer(code, details.as_deref())
}

fn answer(code: i32, details: Option<&[u8]>) -> Answer {
    Answer {
        code: Some(Code::from_i32(code)),
        reason: reason_of(code, details),
    }
}

/// Decodes an HTTP/1.1 chunked body.
fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        let end = (start + size).min(body.len());
        out.extend_from_slice(&body[start..end]);
        body = &body[(end + 2).min(body.len())..];
    }
    out
}

/// A grpc-web call over HTTP/1.1 on a fresh connection.
async fn web_call(port: u16, rpc: usize, auth: Option<&str>, body: Vec<u8>) -> Answer {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let auth = auth.map_or(String::new(), |a| format!("authorization: {a}\r\n"));
    let head = format!(
        "POST /unoflip.v1.UnoFlipService/{} HTTP/1.1\r\nHost: localhost\r\n\
         content-type: application/grpc-web+proto\r\nx-grpc-web: 1\r\n{auth}\
         content-length: {}\r\nConnection: close\r\n\r\n",
        RPCS[rpc].0,
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body).await.unwrap();
    let mut raw = Vec::new();
    let read = tokio::time::timeout(
        Duration::from_secs(if RPCS[rpc].1 { 2 } else { 10 }),
        socket.read_to_end(&mut raw),
    )
    .await;
    let stream_open = read.is_err();
    assert!(!stream_open || RPCS[rpc].1, "no answer within 10 s");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let headers = String::from_utf8_lossy(&raw[..split]).into_owned();
    let header = |name: &str| {
        headers.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    let mut body = raw[split + 4..].to_vec();
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        body = unchunk(&body);
    }
    if let Some(code) = header("grpc-status") {
        let details = header("grpc-status-details-bin");
        return answer(
            code.trim().parse().unwrap(),
            details.as_deref().map(str::as_bytes),
        );
    }
    // The trailers are the frame flagged 0x80.
    let mut rest = &body[..];
    while rest.len() >= 5 {
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let end = (5 + len).min(rest.len());
        if rest[0] & 0x80 != 0 {
            let text = String::from_utf8_lossy(&rest[5..end]).into_owned();
            let field = |name: &str| {
                text.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    (k.trim().eq_ignore_ascii_case(name)).then(|| v.trim().to_owned())
                })
            };
            let code = field("grpc-status").expect("grpc-status in the trailers");
            let details = field("grpc-status-details-bin");
            return answer(code.parse().unwrap(), details.as_deref().map(str::as_bytes));
        }
        rest = &rest[end..];
    }
    assert!(
        stream_open,
        "a grpc-web answer without a status: {headers}\n{body:?}"
    );
    Answer {
        code: None,
        reason: String::new(),
    }
}

/// The Connect code named `name`.
fn code_named(name: &str) -> Code {
    match name {
        "canceled" => Code::Cancelled,
        "invalid_argument" => Code::InvalidArgument,
        "deadline_exceeded" => Code::DeadlineExceeded,
        "not_found" => Code::NotFound,
        "already_exists" => Code::AlreadyExists,
        "permission_denied" => Code::PermissionDenied,
        "resource_exhausted" => Code::ResourceExhausted,
        "failed_precondition" => Code::FailedPrecondition,
        "aborted" => Code::Aborted,
        "out_of_range" => Code::OutOfRange,
        "unimplemented" => Code::Unimplemented,
        "internal" => Code::Internal,
        "unavailable" => Code::Unavailable,
        "data_loss" => Code::DataLoss,
        "unauthenticated" => Code::Unauthenticated,
        _ => Code::Unknown,
    }
}

/// A Connect error JSON as an answer.
fn connect_answer(error: &serde_json::Value) -> Answer {
    Answer {
        code: Some(code_named(error["code"].as_str().unwrap_or("?"))),
        reason: error["details"][0]["debug"]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// A Connect, JSON or NDJSON call over HTTP/1.1 on a fresh connection.
async fn connect_call(
    port: u16,
    rpc: usize,
    transport: Transport,
    auth: Option<&str>,
    body: Vec<u8>,
) -> Answer {
    let streaming = RPCS[rpc].1;
    let content_type = match (transport, streaming) {
        (Transport::ConnectJson, true) => "application/connect+json",
        (Transport::ConnectProto, true) => "application/connect+proto",
        (Transport::ConnectProto, false) => "application/proto",
        _ => "application/json",
    };
    let auth = auth.map_or(String::new(), |a| format!("authorization: {a}\r\n"));
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    if transport == Transport::Get {
        let query: String = body.iter().map(|b| format!("%{b:02X}")).collect();
        let head = format!(
            "GET /unoflip.v1.UnoFlipService/{}?encoding=json&message={query} HTTP/1.1\r\n\
             Host: localhost\r\n{auth}Connection: close\r\n\r\n",
            RPCS[rpc].0
        );
        socket.write_all(head.as_bytes()).await.unwrap();
    } else {
        let head = format!(
            "POST /unoflip.v1.UnoFlipService/{} HTTP/1.1\r\nHost: localhost\r\n\
             content-type: {content_type}\r\n{auth}content-length: {}\r\n\
             Connection: close\r\n\r\n",
            RPCS[rpc].0,
            body.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        // The server may answer before reading a body it refuses.
        let _ = socket.write_all(&body).await;
    }
    let mut raw = Vec::new();
    let read = tokio::time::timeout(
        Duration::from_secs(if streaming { 2 } else { 10 }),
        socket.read_to_end(&mut raw),
    )
    .await;
    let stream_open = read.is_err();
    assert!(!stream_open || streaming, "no answer within 10 s");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_owned())
        })
    };
    let mut body = raw[split + 4..].to_vec();
    if header("transfer-encoding").is_some_and(|v| v == "chunked") {
        body = unchunk(&body);
    }
    let answered_type = header("content-type").unwrap_or_default();
    let open = Answer {
        code: None,
        reason: String::new(),
    };
    match answered_type.as_str() {
        "application/json" if status == 200 => Answer {
            code: Some(Code::Ok),
            reason: String::new(),
        },
        "application/json" => connect_answer(
            &serde_json::from_slice(&body)
                .unwrap_or_else(|e| panic!("an error that is not JSON ({e}): {head}")),
        ),
        "application/proto" => {
            assert_eq!(status, 200, "{head}");
            Answer {
                code: Some(Code::Ok),
                reason: String::new(),
            }
        }
        "application/x-ndjson" => {
            let last = body
                .split(|b| *b == b'\n')
                .rfind(|l| !l.is_empty())
                .map(|l| serde_json::from_slice::<serde_json::Value>(l).unwrap());
            match last {
                Some(line) if line.get("error").is_some() => connect_answer(&line["error"]),
                _ if stream_open => open,
                _ => Answer {
                    code: Some(Code::Ok),
                    reason: String::new(),
                },
            }
        }
        "application/connect+json" | "application/connect+proto" => {
            let mut rest = &body[..];
            while rest.len() >= 5 {
                let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
                let end = (5 + len).min(rest.len());
                if rest[0] & 0x02 != 0 {
                    let last: serde_json::Value = serde_json::from_slice(&rest[5..end]).unwrap();
                    return match last.get("error") {
                        Some(error) => connect_answer(error),
                        None => Answer {
                            code: Some(Code::Ok),
                            reason: String::new(),
                        },
                    };
                }
                rest = &rest[end..];
            }
            assert!(stream_open, "a Connect stream without its end: {head}");
            open
        }
        other => panic!("an answer of content type {other:?}: {head}"),
    }
}

/// The canonical JSON of RPC `rpc`'s request in binary (empty if it does not decode).
fn as_json(pool: &prost_reflect::DescriptorPool, rpc: usize, proto: &[u8]) -> Vec<u8> {
    let name = format!("unoflip.v1.{}Request", RPCS[rpc].0);
    let descriptor = pool.get_message_by_name(&name).unwrap();
    prost_reflect::DynamicMessage::decode(descriptor, proto)
        .map(|m| serde_json::to_vec(&m).unwrap())
        .unwrap_or_default()
}

/// What a refused call must leave as it was.
async fn fingerprint(client: &mut Client, fixture: &Fixture) -> (u64, pb::Game, String) {
    let game = get_game(client, &fixture.game).await;
    let lobby = get_game(client, &fixture.lobby).await;
    let (_, text) = super::edge::http(fixture.port, "GET", "/metrics", "").await;
    let live = text
        .lines()
        .find(|l| l.starts_with("unoflip_live_games "))
        .unwrap_or_default()
        .to_owned();
    (game.version, lobby, live)
}

#[test]
fn fuzzed_calls_on_every_rpc_are_answered_with_reasons_and_refusals_change_nothing() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Server moves wait an hour: nothing changes but by the fuzz's own calls.
    let server = runtime.block_on(Server::start("memory", &["--bot-delay-ms", "3600000"]));
    let fixture = runtime.block_on(async {
        let mut client = server.client().await;
        let (game, tokens) = started(&mut client, options(2)).await;
        let lobby = create(&mut client, options(4)).await.unwrap().name;
        let lobby_token = client
            .join_game(pb::JoinGameRequest {
                game: lobby.clone(),
                seat: Some(0),
                player_name: "host".into(),
                player: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .seat_token;
        let registered = client
            .register_player(pb::RegisterPlayerRequest {
                display_name: "fuzzer".into(),
                bot: false,
            })
            .await
            .unwrap()
            .into_inner();
        Fixture {
            port: server.port,
            game,
            tokens,
            lobby,
            lobby_token,
            player: registered.player.unwrap().name,
            player_token: registered.player_token,
        }
    });
    let client = std::cell::RefCell::new(runtime.block_on(server.client()));
    let refused = std::cell::Cell::new(0);
    let pool = prost_reflect::DescriptorPool::decode(pb::FILE_DESCRIPTOR_SET).unwrap();
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case(), |case| {
            let mut client = client.borrow_mut();
            let client = &mut *client;
            runtime.block_on(async {
                let before = fingerprint(client, &fixture).await;
                // Seat 0's first legal action, for SubmitAction to start from (none once a
                // fuzzed LeaveGame has made seat 0 leave).
                let seat_view = client
                    .get_view(authed(
                        pb::GetViewRequest {
                            game: fixture.game.clone(),
                        },
                        &fixture.tokens[0],
                    ))
                    .await
                    .ok()
                    .and_then(|answer| answer.into_inner().view);
                let valid = match seat_view {
                    Some(v) => fixture.valid(case.rpc, v.legal_actions.first().cloned(), v.version),
                    None => fixture.valid(case.rpc, None, before.0),
                };
                // In JSON, the valid request is mutated as text; a frame is gRPC's or a Connect
                // stream's envelope (the same five bytes), and only streams over Connect have one.
                let json = matches!(
                    case.transport,
                    Transport::ConnectJson | Transport::PlainJson | Transport::Get
                );
                let valid = if json {
                    as_json(&pool, case.rpc, &valid)
                } else {
                    valid
                };
                let enveloped = match case.transport {
                    Transport::Grpc | Transport::GrpcWeb => true,
                    Transport::ConnectJson | Transport::ConnectProto => RPCS[case.rpc].1,
                    Transport::PlainJson | Transport::Get => false,
                };
                let frame = |bytes: &[u8]| {
                    if enveloped {
                        framed(bytes)
                    } else {
                        bytes.to_vec()
                    }
                };
                let body = match &case.body {
                    Body::Raw(bytes) => bytes.clone(),
                    Body::RawFramed(bytes) => frame(bytes),
                    Body::Mutated(m) => frame(&mutate(valid, m)),
                    Body::MutatedFrame(m) => mutate(frame(&valid), m),
                };
                let auth = match case.token {
                    Token::None => None,
                    Token::Seat(seat) => Some(format!("Bearer {}", fixture.tokens[seat])),
                    Token::Lobby => Some(format!("Bearer {}", fixture.lobby_token)),
                    Token::Admin => Some(format!("Bearer {ADMIN}")),
                    Token::Player => Some(format!("Bearer {}", fixture.player_token)),
                    Token::Garbled => Some("Bearer !!not~a~token".into()),
                };
                let answer = match case.transport {
                    Transport::GrpcWeb => {
                        web_call(fixture.port, case.rpc, auth.as_deref(), body).await
                    }
                    Transport::Grpc => h2_call(fixture.port, case.rpc, auth.as_deref(), body).await,
                    transport => {
                        connect_call(fixture.port, case.rpc, transport, auth.as_deref(), body).await
                    }
                };
                let Some(code) = answer.code.filter(|c| *c != Code::Ok) else {
                    return Ok(());
                };
                refused.set(refused.get() + 1);
                prop_assert!(
                    !answer.reason.is_empty(),
                    "a refusal without a reason: {answer:?} for {case:?}"
                );
                prop_assert!(
                    !matches!(code, Code::Internal | Code::Unknown),
                    "{answer:?} for {case:?}"
                );
                let after = fingerprint(client, &fixture).await;
                prop_assert_eq!(&after, &before, "a refusal changed the state: {:?}", case);
                Ok::<(), TestCaseError>(())
            })
        })
        .unwrap();
    let refused = refused.get();
    assert!(
        refused > CASES / 2,
        "most fuzzed calls are refused: {refused}"
    );
    runtime.block_on(async {
        let mut client = server.client().await;
        client.get_decks(pb::GetDecksRequest {}).await.unwrap();
    });
    let log = server.log();
    assert!(!log.contains("panicked"), "the server panicked:\n{log}");
}
