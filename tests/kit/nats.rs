//! A `nats-server` with JetStream of the test's own, on a free port, killed when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `nats-server` with JetStream of this test's own, killed when dropped.
pub struct Nats {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
    binary: PathBuf,
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `nats-server` binary: `UNOFLIP_NATS_SERVER`, else `nats-server` on the PATH, else
/// Debian's `/usr/sbin/nats-server`.
fn nats_binary() -> Option<PathBuf> {
    super::tools::find_tool(
        "UNOFLIP_NATS_SERVER",
        "nats-server",
        &[PathBuf::from("/usr/sbin/nats-server")],
    )
}

impl Nats {
    /// A new server, or `None` (saying so) where no `nats-server` is installed; under CI its
    /// absence fails the test.
    pub async fn start(label: &str) -> Option<Nats> {
        let Some(binary) = nats_binary() else {
            if std::env::var_os("CI").is_some() {
                panic!("nats-server is required in CI (apt-get install nats-server)");
            }
            eprintln!(
                "SKIPPED: no nats-server binary (install Debian's nats-server or set \
                 UNOFLIP_NATS_SERVER) to run this test"
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!(
            "unoflip-nats-{label}-{}-{port}",
            std::process::id()
        ));
        let mut nats = Nats {
            child: None,
            port,
            dir,
            binary,
        };
        nats.restart().await;
        Some(nats)
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts it again on the same port and with the same storage; waits until JetStream answers.
    pub async fn restart(&mut self) {
        self.kill();
        let child = Command::new(&self.binary)
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-js",
                "-sd",
            ])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let started = Instant::now();
        loop {
            let error = match async_nats::connect(self.url()).await {
                Ok(client) => match client.request("$JS.API.INFO", "".into()).await {
                    Ok(_) => return,
                    Err(e) => e.to_string(),
                },
                Err(e) => e.to_string(),
            };
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "nats-server did not come up on {}: {error}",
                self.port
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Kills it (SIGKILL).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
