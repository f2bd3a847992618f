//! The built `unoflip serve`, started as a user starts it, on a free port, with its stderr kept
//! for the test; killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use unoflip::proto::uno_flip_service_client::UnoFlipServiceClient;

use super::client::Client;

/// The admin token every kit server is started with.
pub const ADMIN: &str = "process-admin";

/// The binary under test: `UNOFLIP_SERVER_BIN` if set (another build, for before-and-after
/// measurements), else the one cargo built.
pub fn binary() -> String {
    std::env::var("UNOFLIP_SERVER_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_unoflip").to_owned())
}

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

/// How to start the binary: [`Server::launch`].
pub struct Launch<'a> {
    /// The port to listen on (0: any free port).
    pub port: u16,
    /// `--store`.
    pub store: &'a str,
    /// More flags.
    pub flags: &'a [&'a str],
    /// `--rate-limit` and `--join-rate-limit` are 0 unless set in `flags` (tests call faster than
    /// the shipped limits allow); false keeps the shipped limits.
    pub unlimited: bool,
    /// An open-file limit (soft and hard) for the process.
    pub open_files: Option<u32>,
    /// `RUST_LOG`; it must let `unoflip::cli::serve`'s "unoflip serving" line through.
    pub log_filter: &'a str,
}

impl Default for Launch<'_> {
    fn default() -> Self {
        Launch {
            port: 0,
            store: "memory",
            flags: &[],
            unlimited: true,
            open_files: None,
            log_filter: "info,unoflip=debug",
        }
    }
}

impl Server {
    /// `unoflip serve --store <store> <flags>` on a free port, with the admin token and no rate
    /// limit; waits until it answers.
    pub async fn start(store: &str, flags: &[&str]) -> Server {
        Server::launch(Launch {
            store,
            flags,
            ..Launch::default()
        })
        .await
    }

    /// The same on a given port (a restart on the port clients know; 0: any free port, which the
    /// server picks and logs). Waits for this process's own "serving" line, so that a client
    /// can never reach another test's server on a port that was taken in between.
    pub async fn start_on(port: u16, store: &str, flags: &[&str]) -> Server {
        Server::launch(Launch {
            port,
            store,
            flags,
            ..Launch::default()
        })
        .await
    }

    /// The same with an open-file limit (soft and hard) of `files`, set by the shell that
    /// starts it.
    pub async fn start_with_open_files(files: u32, store: &str, flags: &[&str]) -> Server {
        Server::launch(Launch {
            store,
            flags,
            open_files: Some(files),
            ..Launch::default()
        })
        .await
    }

    /// Starts the binary as `launch` says; waits until it answers.
    pub async fn launch(launch: Launch<'_>) -> Server {
        let Launch {
            port,
            store,
            flags,
            unlimited,
            open_files,
            log_filter,
        } = launch;
        let unlimited = ["--rate-limit", "--join-rate-limit"]
            .into_iter()
            .filter(|flag| unlimited && !flags.contains(flag))
            .flat_map(|flag| [flag, "0"]);
        let mut command = match open_files {
            Some(files) => {
                let mut sh = Command::new("sh");
                sh.args([
                    "-c",
                    &format!("ulimit -n {files} && exec \"$0\" \"$@\""),
                    &binary(),
                ]);
                sh
            }
            None => Command::new(binary()),
        };
        let mut child = command
            .arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--store", store, "--admin-token", ADMIN])
            .args(unlimited)
            .args(flags)
            .env("RUST_LOG", log_filter)
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

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server with SIGKILL and waits for it to be gone.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
