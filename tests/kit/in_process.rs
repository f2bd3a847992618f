//! A server in the test's own process, on a free loopback port: the service over any store,
//! wired as `unoflip serve` wires it. Stops when dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use unoflip::service::{self, Config, Limits, Registry};
use unoflip::store::MemoryStore;

use super::client::{Client, connect};

/// The admin token of [`InProcess::start`].
pub const IN_PROCESS_ADMIN: &str = "admin-secret";

/// A running in-process server; stops when dropped.
pub struct InProcess {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl InProcess {
    /// The memory store, the admin token, heartbeats every 200 ms.
    pub async fn start() -> InProcess {
        InProcess::with_config(Config {
            admin_token: Some(IN_PROCESS_ADMIN.into()),
            heartbeat: Duration::from_millis(200),
            ..Config::default()
        })
        .await
    }

    /// The memory store and `config`.
    pub async fn with_config(config: Config) -> InProcess {
        InProcess::serve(Registry::new(Arc::new(MemoryStore::new()), config)).await
    }

    /// Serves `games` (any store) with the default limits.
    pub async fn serve(games: Arc<Registry>) -> InProcess {
        InProcess::serve_with(games, Limits::default()).await
    }

    /// Serves `games` within `limits`.
    pub async fn serve_with(games: Arc<Registry>, limits: Limits) -> InProcess {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            service::serve(listener, games, limits, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        InProcess {
            addr,
            stop: Some(stop),
        }
    }

    /// A client of it.
    pub async fn client(&self) -> Client {
        connect(self.addr).await
    }
}
