//! Starting the built `unoflip serve` on a free port, with its stderr kept for the test, and
//! clients for it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Request, Status};
use unoflip::proto as pb;
use unoflip::proto::uno_flip_service_client::UnoFlipServiceClient;

pub type Client = UnoFlipServiceClient<Channel>;

pub const ADMIN: &str = "process-admin";

/// A running `unoflip serve`; killed when dropped (also when the test fails).
pub struct Server {
    child: Child,
    pub port: u16,
    log: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port of the server's "unoflip serving address=<ip>:<port>" log line.
fn serving_port(line: &str) -> Option<u16> {
    let (_, rest) = line.split_once("unoflip serving")?;
    let (_, address) = rest.split_once("address=")?;
    let address = address.split_whitespace().next()?;
    address.rsplit_once(':')?.1.parse().ok()
}

/// A fresh SQLite store in a temporary directory.
pub fn temp_sqlite(label: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("unoflip-{label}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    format!("sqlite:{}", dir.join("games.sqlite3").display())
}

impl Server {
    /// `unoflip serve --store <store> <flags>` on a free port, with the admin token and no rate
    /// limit; waits until it answers.
    pub async fn start(store: &str, flags: &[&str]) -> Server {
        Server::start_on(0, store, flags).await
    }

    /// The same on a given port (a restart on the port clients know; 0: any free port, which the
    /// server picks and logs). Waits for this process's own "serving" line, so that a client
    /// can never reach another test's server on a port that was taken in between.
    pub async fn start_on(port: u16, store: &str, flags: &[&str]) -> Server {
        Server::launch(port, store, flags, None).await
    }

    /// The same with an open-file limit (soft and hard) of `files`, set by the shell that
    /// starts it.
    pub async fn start_with_open_files(files: u32, store: &str, flags: &[&str]) -> Server {
        Server::launch(0, store, flags, Some(files)).await
    }

    async fn launch(port: u16, store: &str, flags: &[&str], files: Option<u32>) -> Server {
        // No rate limits, unless the test sets them.
        let unlimited = ["--rate-limit", "--join-rate-limit"]
            .into_iter()
            .filter(|flag| !flags.contains(flag))
            .flat_map(|flag| [flag, "0"]);
        let mut command = match files {
            Some(files) => {
                let mut sh = Command::new("sh");
                sh.args([
                    "-c",
                    &format!("ulimit -n {files} && exec \"$0\" \"$@\""),
                    env!("CARGO_BIN_EXE_unoflip"),
                ]);
                sh
            }
            None => Command::new(env!("CARGO_BIN_EXE_unoflip")),
        };
        let mut child = command
            .arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--store", store, "--admin-token", ADMIN])
            .args(unlimited)
            .args(flags)
            .env("RUST_LOG", "info,unoflip=debug")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let into = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = into.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let mut server = Server { child, port, log };
        let started = Instant::now();
        server.port = loop {
            if let Some(port) = server.log().lines().find_map(serving_port) {
                break port;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "the server exited ({status}) before serving; its log:\n{}",
                    server.log()
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the server did not come up; its log:\n{}",
                server.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        server.client().await;
        server
    }

    /// A client; waits for the server to answer.
    pub async fn client(&self) -> Client {
        let started = Instant::now();
        loop {
            if let Ok(c) =
                UnoFlipServiceClient::connect(format!("http://127.0.0.1:{}", self.port)).await
            {
                return c;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the server did not come up; its log:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A client whose connection comes from `ip` (any 127.x.y.z address works on Linux's
    /// loopback), to stand for another client address.
    pub async fn client_from(&self, ip: &str) -> Client {
        let local: std::net::SocketAddr = format!("{ip}:0").parse().unwrap();
        let server: std::net::SocketAddr = format!("127.0.0.1:{}", self.port).parse().unwrap();
        let channel = tonic::transport::Endpoint::from_static("http://127.0.0.1")
            .connect_with_connector(tower::service_fn(move |_| async move {
                let socket = tokio::net::TcpSocket::new_v4()?;
                socket.bind(local)?;
                let stream = socket.connect(server).await?;
                stream.set_nodelay(true)?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
            }))
            .await
            .unwrap();
        UnoFlipServiceClient::new(channel)
    }

    /// What the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Where the log is now: [`Server::live_games_since`] reads only what comes after.
    pub fn log_mark(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// The live game count the server last logged after `mark` (it logs the count at most once
    /// a second, so an older line may be stale).
    pub fn live_games_since(&self, mark: usize) -> Option<usize> {
        let log = self.log();
        let line = log
            .get(mark..)?
            .lines()
            .rev()
            .find(|l| l.contains("live_games="))?;
        let after = line.split("live_games=").nth(1)?;
        after
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    }

    /// The CPU time the server has used so far.
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // After the command name in parentheses: utime and stime are fields 14 and 15.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        // Linux reports in clock ticks of 1/100 s.
        Duration::from_millis(ticks * 10)
    }

    /// The server's resident memory in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    /// Stops the server with SIGTERM and waits for a clean exit.
    pub fn stop(mut self) {
        let term = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(term.success());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "a clean exit on SIGTERM: {status}");
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "still running after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A request with a bearer token.
pub fn authed<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    let value: MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
    request.metadata_mut().insert("authorization", value);
    request
}

/// The ErrorInfo reason of a refusal.
pub fn reason(status: &tonic::Status) -> String {
    use tonic_types::StatusExt;
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

/// Options for a game with `seats` seats.
pub fn options(seats: u32) -> pb::GameOptions {
    pb::GameOptions {
        ruleset: pb::Ruleset::Flip as i32,
        seats,
        ..Default::default()
    }
}

/// `CreateGame` with these options: the game, or the refusal.
pub async fn create(client: &mut Client, options: pb::GameOptions) -> Result<pb::Game, Status> {
    let game = client
        .create_game(pb::CreateGameRequest {
            options: Some(options),
        })
        .await?
        .into_inner()
        .game;
    Ok(game.expect("CreateGame answered without a game"))
}

/// `LeaveGame` for the seat of `token`.
pub async fn leave(client: &mut Client, game: &str, token: &str) -> Result<(), Status> {
    client
        .leave_game(authed(
            pb::LeaveGameRequest {
                game: game.to_owned(),
            },
            token,
        ))
        .await
        .map(|_| ())
}

/// Creates a game and joins every seat but the bot seats; returns its name and the tokens by
/// seat (empty for bot seats).
pub async fn table(client: &mut Client, options: pb::GameOptions) -> (String, Vec<String>) {
    let game = create(client, options.clone()).await.unwrap();
    let mut tokens = vec![String::new(); options.seats as usize];
    for seat in 0..options.seats {
        if options.bot_seats.contains(&seat) {
            continue;
        }
        tokens[seat as usize] = client
            .join_game(pb::JoinGameRequest {
                game: game.name.clone(),
                seat: Some(seat),
                player_name: format!("p{seat}"),
                player: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .seat_token;
    }
    (game.name, tokens)
}

/// Creates, joins and starts a game of people.
pub async fn started(client: &mut Client, options: pb::GameOptions) -> (String, Vec<String>) {
    let (game, tokens) = table(client, options).await;
    client
        .start_game(authed(
            pb::StartGameRequest { game: game.clone() },
            &tokens[0],
        ))
        .await
        .unwrap();
    (game, tokens)
}

/// A seat's stream of `game` from its current state (a view first when `include_view`).
pub async fn seat_stream(
    client: &mut Client,
    game: &str,
    token: &str,
    include_view: bool,
) -> tonic::Streaming<pb::SubscribeResponse> {
    client
        .subscribe(authed(
            pb::SubscribeRequest {
                game: game.to_owned(),
                after_version: 0,
                include_view,
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
}

/// The firehose from its start.
pub async fn firehose_stream(client: &mut Client) -> tonic::Streaming<pb::SubscribeAllResponse> {
    client
        .subscribe_all(pb::SubscribeAllRequest { after_position: 0 })
        .await
        .unwrap()
        .into_inner()
}

/// The firehose's next event, passing over heartbeats (a stream idle for the heartbeat interval
/// on a slow machine) and its caught-up mark.
pub async fn next_firehose_event(
    stream: &mut tonic::Streaming<pb::SubscribeAllResponse>,
) -> pb::GameEvent {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("a firehose message within 10 s")
            .unwrap()
            .expect("the firehose goes on");
        if let Some(pb::subscribe_all_response::Kind::Event(event)) = message.kind {
            return event;
        }
    }
}

pub async fn get_game(client: &mut Client, game: &str) -> pb::Game {
    client
        .get_game(pb::GetGameRequest {
            name: game.to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap()
}

pub async fn view(client: &mut Client, game: &str, token: Option<&str>) -> pb::View {
    let message = pb::GetViewRequest {
        game: game.to_owned(),
    };
    let request = match token {
        Some(t) => authed(message, t),
        None => Request::new(message),
    };
    client
        .get_view(request)
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap()
}

/// A move that is always legal for the seat to move and needs no card choice.
pub fn plain_move(v: &pb::View) -> Option<pb::Action> {
    let dark = v.side == pb::Side::Dark as i32;
    let action = super::common::plain_move(pb::Awaiting::try_from(v.awaiting).ok()?, dark)?;
    Some(unoflip::service::convert::action(action))
}

/// Polls `check` every 20 ms until it holds, for at most `within`.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < within, "not within {within:?}: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Plays one plain move of `game` for a seat that may act now (by its token in `tokens`).
/// Returns the new version, or `None` when no seat may act (the match is over).
pub async fn move_once(client: &mut Client, game: &str, tokens: &[String]) -> Option<u64> {
    for token in tokens.iter().filter(|t| !t.is_empty()) {
        let seat_view = view(client, game, Some(token)).await;
        if seat_view.legal_actions.is_empty() {
            continue;
        }
        let action = plain_move(&seat_view)?;
        let answer = client
            .submit_action(authed(
                pb::SubmitActionRequest {
                    game: game.to_owned(),
                    action: Some(action),
                    expected_version: Some(seat_view.version),
                    ..Default::default()
                },
                token,
            ))
            .await
            .unwrap();
        return Some(answer.into_inner().version);
    }
    None
}
