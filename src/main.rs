//! The `unoflip` binary: flags and wiring only.
//!
//! `unoflip serve` runs the gRPC server.

#![deny(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use unoflip::service::{self, Config, Games, Limits};
use unoflip::store::MemoryStore;

#[derive(Parser)]
#[command(
    name = "unoflip",
    version,
    about = "A game server for UNO Flip and classic UNO"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StoreKind {
    /// Events kept in memory: lost when the server stops.
    Memory,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the gRPC server (grpc-web and CORS included).
    Serve {
        /// Address to listen on.
        #[arg(long, env = "UNOFLIP_LISTEN", default_value = "127.0.0.1:50051")]
        listen: SocketAddr,
        /// The admin token (fixed decks, exports of running games). None: no admin calls.
        #[arg(long, env = "UNOFLIP_ADMIN_TOKEN")]
        admin_token: Option<String>,
        /// Where events are kept.
        #[arg(long, env = "UNOFLIP_STORE", value_enum, default_value = "memory")]
        store: StoreKind,
        /// Seconds an idle stream waits before a heartbeat.
        #[arg(long, env = "UNOFLIP_HEARTBEAT_SECS", default_value_t = 15)]
        heartbeat_secs: u64,
        /// Messages buffered per stream.
        #[arg(long, env = "UNOFLIP_STREAM_BUFFER", default_value_t = 256)]
        stream_buffer: usize,
        /// Most games held at once.
        #[arg(long, env = "UNOFLIP_MAX_GAMES", default_value_t = 100_000)]
        max_games: usize,
        /// Requests handled at once per connection.
        #[arg(long, env = "UNOFLIP_CONCURRENCY", default_value_t = 256)]
        concurrency_per_connection: usize,
        /// Seconds a unary call may take.
        #[arg(long, env = "UNOFLIP_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
        request_timeout_secs: u64,
        /// Requests per second one connection may send (0: no limit).
        #[arg(long, env = "UNOFLIP_RATE_LIMIT", default_value_t = 1000)]
        rate_limit: u64,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match Cli::parse().command {
        Command::Serve {
            listen,
            admin_token,
            store,
            heartbeat_secs,
            stream_buffer,
            max_games,
            concurrency_per_connection,
            request_timeout_secs,
            rate_limit,
        } => {
            let store = match store {
                StoreKind::Memory => Arc::new(MemoryStore::new()),
            };
            let config = Config {
                admin_token,
                heartbeat: Duration::from_secs(heartbeat_secs.max(1)),
                stream_buffer,
                max_games,
            };
            let limits = Limits {
                concurrency_per_connection,
                request_timeout: Duration::from_secs(request_timeout_secs.max(1)),
                requests_per_second_per_connection: rate_limit,
            };
            let listener = tokio::net::TcpListener::bind(listen).await?;
            tracing::info!(address = %listener.local_addr()?, "unoflip serving");
            service::serve(
                listener,
                Games::new(store, config),
                limits,
                shutdown_signal(),
            )
            .await?;
            tracing::info!("unoflip stopped");
        }
    }
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("shutting down");
}
