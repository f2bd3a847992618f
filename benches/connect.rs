//! What the Connect protocol costs the server against gRPC, on one real `unoflip serve` (release
//! build, memory store, no rate limit) in one run: `GetView`, and a move (`GetView` for the seat
//! to move, then `SubmitAction` with one of its legal actions), over gRPC (tonic's client),
//! Connect in binary and Connect in JSON (both with the `h2` crate over HTTP/2, one connection per
//! client, as tonic has). Reported: the server's CPU time per call (from /proc), the median of
//! `CONNECT_ROUNDS` rounds whose protocol order rotates, and its ratio to gRPC's. The issue's
//! targets: Connect binary within 1.2x gRPC's CPU per call, JSON within 2x.
//!
//! `cargo bench --bench connect` (`CONNECT_CALLS` calls per measurement, default 20,000;
//! `CONNECT_ROUNDS`, default 3; `UNOFLIP_SERVER_BIN` another build of the server).

mod common;
#[path = "../tests/kit/mod.rs"]
mod kit;

use std::time::Duration;

use bytes::Bytes;
use common::env;
use kit::{Client, Launch, Server, authed, pick_move};
use prost::Message;
use unoflip::proto as pb;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Clients calling at once, each with its own game and connection.
const CLIENTS: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    Grpc,
    ConnectProto,
    ConnectJson,
}

const PROTOCOLS: [Protocol; 3] = [
    Protocol::Grpc,
    Protocol::ConnectProto,
    Protocol::ConnectJson,
];

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Grpc => "gRPC",
            Protocol::ConnectProto => "Connect binary",
            Protocol::ConnectJson => "Connect JSON",
        }
    }
}

/// One client's connection, in its protocol.
enum Caller {
    Grpc(Client),
    Connect {
        send: h2::client::SendRequest<Bytes>,
        json: bool,
    },
}

impl Caller {
    async fn new(protocol: Protocol, port: u16) -> Result<Caller, Error> {
        if protocol == Protocol::Grpc {
            return Ok(Caller::Grpc(
                kit::connect(format!("127.0.0.1:{port}")).await,
            ));
        }
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        tcp.set_nodelay(true)?;
        let (send, connection) = h2::client::handshake(tcp).await?;
        tokio::spawn(connection);
        Ok(Caller::Connect {
            send,
            json: protocol == Protocol::ConnectJson,
        })
    }

    /// A unary Connect call of `method` with `request`, decoded as `R`. The client's JSON is
    /// pbjson's typed code too, so that a slow client does not change how the server batches.
    async fn connect<
        M: Message + serde::Serialize,
        R: Message + Default + serde::de::DeserializeOwned,
    >(
        send: &mut h2::client::SendRequest<Bytes>,
        json: bool,
        method: &str,
        request: &M,
        token: &str,
    ) -> Result<R, Error> {
        let (content_type, body) = if json {
            ("application/json", serde_json::to_vec(request)?)
        } else {
            ("application/proto", request.encode_to_vec())
        };
        let http = http::Request::builder()
            .method("POST")
            .uri(format!(
                "http://localhost/unoflip.v1.UnoFlipService/{method}"
            ))
            .header("content-type", content_type)
            .header("authorization", format!("Bearer {token}"))
            .body(())?;
        let mut ready = send.clone().ready().await?;
        let (response, mut stream) = ready.send_request(http, false)?;
        stream.send_data(Bytes::from(body), true)?;
        let response = response.await?;
        let status = response.status();
        let mut body = response.into_body();
        let mut all = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk?;
            let _ = body.flow_control().release_capacity(chunk.len());
            all.extend_from_slice(&chunk);
        }
        if status != 200 {
            return Err(format!("{method}: {status} {}", String::from_utf8_lossy(&all)).into());
        }
        if json {
            Ok(serde_json::from_slice(&all)?)
        } else {
            Ok(R::decode(all.as_slice())?)
        }
    }

    async fn view(&mut self, game: &str, token: &str) -> Result<pb::View, Error> {
        let request = pb::GetViewRequest {
            game: game.to_owned(),
        };
        let answer: pb::GetViewResponse = match self {
            Caller::Grpc(client) => client.get_view(authed(request, token)).await?.into_inner(),
            Caller::Connect { send, json } => {
                Caller::connect(send, *json, "GetView", &request, token).await?
            }
        };
        answer.view.ok_or_else(|| "a view".into())
    }

    async fn submit(
        &mut self,
        game: &str,
        token: &str,
        action: pb::Action,
        version: u64,
    ) -> Result<(), Error> {
        let request = pb::SubmitActionRequest {
            game: game.to_owned(),
            action: Some(action),
            expected_version: Some(version),
            ..Default::default()
        };
        match self {
            Caller::Grpc(client) => {
                client.submit_action(authed(request, token)).await?;
            }
            Caller::Connect { send, json } => {
                let _: pb::SubmitActionResponse =
                    Caller::connect(send, *json, "SubmitAction", &request, token).await?;
            }
        }
        Ok(())
    }
}

/// A started two-seat game of people: its name and seat tokens.
async fn table(client: &mut Client) -> Result<(String, Vec<String>), Error> {
    let game = client
        .create_game(pb::CreateGameRequest {
            options: Some(pb::GameOptions {
                ruleset: pb::Ruleset::Flip as i32,
                seats: 2,
                single_round: true,
                ..Default::default()
            }),
        })
        .await?
        .into_inner()
        .game
        .ok_or("a game")?
        .name;
    let mut tokens = Vec::new();
    for seat in 0..2 {
        tokens.push(
            client
                .join_game(pb::JoinGameRequest {
                    game: game.clone(),
                    seat: Some(seat),
                    player_name: format!("p{seat}"),
                    player: String::new(),
                })
                .await?
                .into_inner()
                .seat_token,
        );
    }
    client
        .start_game(authed(
            pb::StartGameRequest { game: game.clone() },
            &tokens[0],
        ))
        .await?;
    Ok((game, tokens))
}

/// One client's share of a measurement: `calls` views, or `calls` moves (each with the view
/// that finds the move). Returns the calls made.
async fn client(protocol: Protocol, port: u16, moves: bool, calls: usize) -> Result<usize, Error> {
    let mut setup = kit::connect(format!("127.0.0.1:{port}")).await;
    let (mut game, mut tokens) = table(&mut setup).await?;
    let mut caller = Caller::new(protocol, port).await?;
    let mut made = 0;
    let mut seat = 0;
    let mut done = 0;
    while done < calls {
        let view = caller.view(&game, &tokens[seat]).await?;
        made += 1;
        if !moves {
            done += 1;
            continue;
        }
        match pick_move(&view.legal_actions) {
            Some(action) => {
                caller
                    .submit(&game, &tokens[seat], action, view.version)
                    .await?;
                made += 1;
                done += 1;
            }
            // The round (a single one) is over: a new table.
            None if !view.winners.is_empty() => {
                (game, tokens) = table(&mut setup).await?;
            }
            None => {}
        }
        // The other seat moves next (or may act, when this one may not).
        seat = 1 - seat;
    }
    Ok(made)
}

/// Server CPU per call for `protocol`: views only, or moves (view + submit).
async fn measure(
    server: &Server,
    protocol: Protocol,
    moves: bool,
    calls: usize,
) -> Result<Duration, Error> {
    let before = server.cpu_time();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        tasks.push(tokio::spawn(client(
            protocol,
            server.port,
            moves,
            calls / CLIENTS,
        )));
    }
    let mut made = 0;
    for task in tasks {
        made += task.await??;
    }
    // Each table's setup (create, two joins, start over gRPC) is a few calls per client.
    let spent = server.cpu_time() - before;
    let unit = if moves { calls } else { made };
    Ok(spent / unit.max(1) as u32)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort_unstable();
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let calls = env("CONNECT_CALLS", 20_000);
    let rounds = env("CONNECT_ROUNDS", 3);
    let server = Server::launch(Launch {
        store: "memory",
        flags: &[
            "--bot-delay-ms",
            "3600000",
            "--max-games-per-client",
            "1000000",
        ],
        log_filter: "warn,unoflip::cli::serve=info",
        ..Launch::default()
    })
    .await;
    // Warm the server up (allocator, connections) before measuring.
    for protocol in PROTOCOLS {
        measure(&server, protocol, true, 800).await?;
    }
    let mut views = vec![Vec::new(); PROTOCOLS.len()];
    let mut moves = vec![Vec::new(); PROTOCOLS.len()];
    for round in 0..rounds {
        for k in 0..PROTOCOLS.len() {
            let i = (k + round) % PROTOCOLS.len();
            views[i].push(measure(&server, PROTOCOLS[i], false, calls).await?);
            moves[i].push(measure(&server, PROTOCOLS[i], true, calls).await?);
        }
    }
    let views: Vec<Duration> = views.into_iter().map(median).collect();
    let moves: Vec<Duration> = moves.into_iter().map(median).collect();
    println!(
        "server CPU per call, median of {rounds} rounds of {calls} calls, {CLIENTS} clients at once"
    );
    println!("| protocol | GetView | x gRPC | move (GetView + SubmitAction) | x gRPC |");
    println!("|---|---|---|---|---|");
    for (i, protocol) in PROTOCOLS.iter().enumerate() {
        println!(
            "| {} | {:.1} us | {:.2} | {:.1} us | {:.2} |",
            protocol.name(),
            views[i].as_secs_f64() * 1e6,
            views[i].as_secs_f64() / views[0].as_secs_f64(),
            moves[i].as_secs_f64() * 1e6,
            moves[i].as_secs_f64() / moves[0].as_secs_f64(),
        );
    }
    Ok(())
}
