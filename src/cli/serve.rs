//! `unoflip serve`: its flags, and the wiring of store, registry and transport. At start it
//! rebuilds every unfinished game of the store (so that timers and server moves go on without a
//! client); it stops on SIGINT or SIGTERM, letting running calls finish.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::service::accounts::sign_in::{Settings, SettingsError, SignIn};
use crate::service::http::tls::Certificates;
use crate::service::notify::{
    self, Delivery, Retries, nats::NatsSink, webhook::Webhook, webhook::WebhookError,
};
use crate::service::publish::{PublishConfig, Retention, Start};
use crate::service::{self, Config, ConnectionLimits, Lifecycle, Limits, RateLimits, Registry};

/// The flags of `unoflip serve`.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "UNOFLIP_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// The admin token (fixed decks, exports of running games). None: no admin calls.
    #[arg(long, env = "UNOFLIP_ADMIN_TOKEN")]
    pub admin_token: Option<String>,
    /// Where games are kept: `sqlite:<path>` (an embedded file, created if missing),
    /// `postgres://...` (PostgreSQL, schema created at start; several servers may share it) or
    /// `memory` (lost when the server stops; it keeps every unfinished game and the 10,000
    /// most recently finished ones, `memory?keep-finished-games=N` for another number or `all`).
    #[arg(long, env = "UNOFLIP_STORE", default_value = "sqlite:unoflip.sqlite3")]
    pub store: String,
    /// Seconds an idle stream waits before a heartbeat.
    #[arg(long, env = "UNOFLIP_HEARTBEAT_SECS", default_value_t = 15)]
    pub heartbeat_secs: u64,
    /// Most live games at once (lobbies, games being played, finished games not yet let go);
    /// creating more is refused with TOO_MANY_GAMES.
    #[arg(long, env = "UNOFLIP_MAX_GAMES", default_value_t = 100_000)]
    pub max_games: usize,
    /// Most live games created from one client address; more is refused with
    /// CLIENT_GAME_LIMIT.
    #[arg(long, env = "UNOFLIP_MAX_GAMES_PER_CLIENT", default_value_t = 1_000)]
    pub max_games_per_client: usize,
    /// Most game and firehose streams open at once on one connection; more is refused with
    /// TOO_MANY_STREAMS.
    #[arg(
        long,
        env = "UNOFLIP_MAX_STREAMS_PER_CONNECTION",
        default_value_t = 100
    )]
    pub max_streams_per_connection: usize,
    /// Most client connections open at once; more are closed as they come.
    #[arg(long, env = "UNOFLIP_MAX_CONNECTIONS", default_value_t = 10_000)]
    pub max_connections: usize,
    /// Most connections open at once from one client address.
    #[arg(
        long,
        env = "UNOFLIP_MAX_CONNECTIONS_PER_ADDRESS",
        default_value_t = 512
    )]
    pub max_connections_per_address: usize,
    /// How long a new connection may take to send its first bytes (an HTTP/2 preface) before
    /// it is closed.
    #[arg(long, env = "UNOFLIP_HANDSHAKE_TIMEOUT", default_value = "10s", value_parser = duration)]
    pub handshake_timeout: Duration,
    /// How often an HTTP/2 connection is pinged; a peer that does not answer within as long
    /// again is closed.
    #[arg(long, env = "UNOFLIP_KEEPALIVE", default_value = "60s", value_parser = duration)]
    pub keepalive: Duration,
    /// An origin whose web pages may call the service through grpc-web (CORS), e.g.
    /// `https://play.example.com`; repeat for several. None given: pages of any origin may.
    #[arg(
        long = "cors-origin",
        env = "UNOFLIP_CORS_ORIGINS",
        value_delimiter = ','
    )]
    pub cors_origins: Vec<String>,
    /// A certificate chain (PEM) to serve TLS with, on the same port (ALPN h2 and http/1.1):
    /// https for gRPC, grpc-web, Connect, the page and the probes. Needs `--tls-key`. Read
    /// again on SIGHUP and whenever the file changes, without dropping connections.
    #[arg(long, env = "UNOFLIP_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The private key (PEM) of `--tls-cert`.
    #[arg(long, env = "UNOFLIP_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// The host app's sign-in: a JWKS (a file, or an http(s) URL such as
    /// `https://example.auth0.com/.well-known/jwks.json`) whose keys check bearer JWTs (RS, PS,
    /// ES, EdDSA), chosen by `kid`. Such a JWT stands for a player wherever a player token does.
    /// Needs `--auth-issuer` and `--auth-audience`.
    #[arg(long, env = "UNOFLIP_AUTH_JWKS")]
    pub auth_jwks: Option<String>,
    /// How often the JWKS is read again (also at once when a token names a key not seen yet).
    #[arg(long, env = "UNOFLIP_AUTH_JWKS_REFRESH", default_value = "10m", value_parser = duration)]
    pub auth_jwks_refresh: Duration,
    /// A shared secret (at least 32 bytes) checking HS256 bearer JWTs of the host's sign-in.
    #[arg(long, env = "UNOFLIP_AUTH_HS256_SECRET", hide_env_values = true)]
    pub auth_hs256_secret: Option<String>,
    /// The `iss` every bearer JWT must carry.
    #[arg(long, env = "UNOFLIP_AUTH_ISSUER")]
    pub auth_issuer: Option<String>,
    /// The `aud` every bearer JWT must carry.
    #[arg(long, env = "UNOFLIP_AUTH_AUDIENCE")]
    pub auth_audience: Option<String>,
    /// The claim a signed-in player's display name is taken from.
    #[arg(long, env = "UNOFLIP_AUTH_NAME_CLAIM", default_value = "name")]
    pub auth_name_claim: String,
    /// A URL players' notifications are POSTed to (your turn, a penalty waits, game started,
    /// game over), signed as Standard Webhooks says with `--webhook-secret`; repeat for several.
    #[arg(
        long = "webhook-url",
        env = "UNOFLIP_WEBHOOK_URLS",
        value_delimiter = ','
    )]
    pub webhook_urls: Vec<String>,
    /// The webhooks' signing secret: `whsec_` and base64, as Standard Webhooks writes it (or
    /// any text of at least 16 bytes).
    #[arg(long, env = "UNOFLIP_WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Option<String>,
    /// The longest pause between two attempts to deliver a notification.
    #[arg(long, env = "UNOFLIP_WEBHOOK_RETRY_MAX", default_value = "5m", value_parser = duration)]
    pub webhook_retry_max: Duration,
    /// How long a notification is retried before it is given up (and counted as dropped).
    #[arg(long, env = "UNOFLIP_WEBHOOK_GIVE_UP_AFTER", default_value = "25h", value_parser = duration)]
    pub webhook_give_up_after: Duration,
    /// In games with a turn timer of a minute or more, the share of a turn left when its seat is
    /// reminded (a `turn_ending` notification); 0: no reminders.
    #[arg(long, env = "UNOFLIP_TURN_REMINDER_LEFT", default_value_t = 0.25, value_parser = share)]
    pub turn_reminder_left: f64,
    /// Requests handled at once per connection.
    #[arg(long, env = "UNOFLIP_CONCURRENCY", default_value_t = 256)]
    pub concurrency_per_connection: usize,
    /// Seconds a unary call may take.
    #[arg(long, env = "UNOFLIP_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
    pub request_timeout_secs: u64,
    /// Milliseconds a bot waits before each move, so that people can follow the game.
    #[arg(long, env = "UNOFLIP_BOT_DELAY_MS", default_value_t = 800)]
    pub bot_delay_ms: u64,
    /// Milliseconds an expert bot thinks per move, unless its game says (GameOptions.bot_think_ms);
    /// 1..2000.
    #[arg(long, env = "UNOFLIP_BOT_THINK_MS", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(1..=2000))]
    pub bot_think_ms: u64,
    /// Requests per second one client address may send, across all of its connections, in
    /// bursts of as many (0: no limit). Over it: RESOURCE_EXHAUSTED / RATE_LIMITED.
    #[arg(long, env = "UNOFLIP_RATE_LIMIT", default_value_t = 1000)]
    pub rate_limit: u32,
    /// `JoinGame` and `RegisterPlayer` calls per minute one client address may make (one
    /// bucket), in bursts of as many (0: no limit). Over it: RESOURCE_EXHAUSTED / JOIN_RATE_LIMITED. Raise it (or turn it off) when
    /// many players reach the server through one address, such as your own backend.
    #[arg(long, env = "UNOFLIP_JOIN_RATE_LIMIT", default_value_t = 300)]
    pub join_rate_limit: u32,
    /// How long a finished game stays in memory (then it is read from the store when asked
    /// for), e.g. `10m`, `30s`.
    #[arg(long, env = "UNOFLIP_KEEP_FINISHED", default_value = "10m", value_parser = duration)]
    pub keep_finished: Duration,
    /// How long a lobby may wait to be started before it expires.
    #[arg(long, env = "UNOFLIP_LOBBY_TTL", default_value = "1h", value_parser = duration)]
    pub lobby_ttl: Duration,
    /// How long a started game may go on with no move but the server's (time-outs and bots)
    /// before it ends as abandoned. Games of bots only are never abandoned.
    #[arg(long, env = "UNOFLIP_ABANDON_AFTER", default_value = "10m", value_parser = duration)]
    pub abandon_after: Duration,
    /// Match players who ask for quick play (`FindMatch`). The queue is this server's: when
    /// several servers share one PostgreSQL, give `--matchmaking false` to all but one, and
    /// the others refuse FindMatch with MATCHMAKING_ELSEWHERE (the games it makes are
    /// playable through any of them). A restart empties the queue; waiting clients ask again.
    #[arg(long, env = "UNOFLIP_MATCHMAKING", default_value_t = true, action = clap::ArgAction::Set)]
    pub matchmaking: bool,
    /// Publish every event's public projection to this NATS JetStream server, e.g.
    /// `nats://127.0.0.1:4222`, on subject `unoflip.v1.games.<game id>.events`, exactly once
    /// and in the store's order. Off when not given.
    #[arg(long, env = "UNOFLIP_PUBLISH")]
    pub publish: Option<String>,
    /// The JetStream stream published to (created if missing, with the settings below; an
    /// existing stream is used as it is).
    #[arg(long, env = "UNOFLIP_PUBLISH_STREAM", default_value = "UNOFLIP_EVENTS")]
    pub publish_stream: String,
    /// What the stream keeps: `limits` (until --publish-max-age or --publish-max-bytes) or
    /// `interest` (until every consumer has acknowledged it).
    #[arg(
        long,
        env = "UNOFLIP_PUBLISH_RETENTION",
        value_enum,
        default_value = "limits"
    )]
    pub publish_retention: Retention,
    /// Messages older than this leave the stream, e.g. `168h` for a week (0: kept however old).
    #[arg(long, env = "UNOFLIP_PUBLISH_MAX_AGE", default_value = "0", value_parser = duration)]
    pub publish_max_age: Duration,
    /// The stream's size limit in bytes; the oldest messages go beyond it (0: no limit).
    #[arg(long, env = "UNOFLIP_PUBLISH_MAX_BYTES", default_value_t = 0)]
    pub publish_max_bytes: u64,
    /// JetStream's de-duplication window for the stream it creates.
    #[arg(
        long,
        env = "UNOFLIP_PUBLISH_DUPLICATE_WINDOW",
        default_value = "2m",
        value_parser = duration
    )]
    pub publish_duplicate_window: Duration,
    /// Where a publisher with no place yet (a new stream) starts: `beginning` (every stored
    /// event) or `now` (events stored from now on).
    #[arg(
        long,
        env = "UNOFLIP_PUBLISH_START",
        value_enum,
        default_value = "beginning"
    )]
    pub publish_start: Start,
    /// The JetStream stream players' notifications go to with `--publish` (subjects
    /// `unoflip.v1.players.<id>.notifications`), created if missing.
    #[arg(
        long,
        env = "UNOFLIP_PUBLISH_NOTIFICATIONS_STREAM",
        default_value = "UNOFLIP_NOTIFICATIONS"
    )]
    pub publish_notifications_stream: String,
}

/// Parses a share, 0 to 1.
pub fn share(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "{text:?}: expected a share from 0 to 1, such as 0.25"
        )),
    }
}

/// Parses `250ms`, `30s`, `10m`, `1h` or a number of seconds.
pub fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: expected a duration such as 250ms, 30s, 10m or 1h"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "" | "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n.saturating_mul(60))),
        "h" => Ok(Duration::from_secs(n.saturating_mul(3600))),
        _ => Err(format!("{text:?}: the unit must be ms, s, m or h")),
    }
}

/// Runs the server until SIGINT or SIGTERM.
pub async fn run(args: ServeArgs) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let sign_in = sign_in(&args)?;
    let webhooks = args
        .webhook_urls
        .iter()
        .map(|url| match &args.webhook_secret {
            Some(secret) => Webhook::new(url, secret),
            None => Err(WebhookError::NoSecret),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let store = crate::store::open(&args.store).await?;
    let config = Config {
        admin_token: args.admin_token,
        heartbeat: Duration::from_secs(args.heartbeat_secs.max(1)),
        max_games: args.max_games,
        max_games_per_client: args.max_games_per_client,
        max_streams_per_connection: args.max_streams_per_connection,
        lifecycle: Lifecycle {
            bot_delay: Duration::from_millis(args.bot_delay_ms),
            keep_finished: args.keep_finished,
            lobby_ttl: args.lobby_ttl,
            abandon_after: args.abandon_after,
            bot_think: Duration::from_millis(args.bot_think_ms),
        },
        matchmaking: args.matchmaking,
        sign_in,
    };
    let limits = Limits {
        concurrency_per_connection: args.concurrency_per_connection,
        request_timeout: Duration::from_secs(args.request_timeout_secs.max(1)),
        rates: RateLimits {
            requests_per_second: args.rate_limit,
            joins_per_minute: args.join_rate_limit,
        },
        connections: ConnectionLimits {
            max_total: args.max_connections,
            max_per_address: args.max_connections_per_address,
            handshake_timeout: args.handshake_timeout,
        },
        keepalive: args.keepalive.max(Duration::from_secs(1)),
        cors_origins: args
            .cors_origins
            .iter()
            .map(|o| {
                http::HeaderValue::from_str(o.trim_end_matches('/'))
                    .map_err(|_| format!("--cors-origin {o:?} is not an origin"))
            })
            .collect::<Result<_, _>>()?,
        tls: match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(Certificates::load(cert, key)?),
            _ => None,
        },
    };
    raise_open_file_limit();
    let registry = Registry::new(store, config);
    let rebuilt = registry.recover().await?;
    tracing::info!(games = rebuilt, "unfinished games rebuilt from the store");
    let retries = Retries {
        longest: args.webhook_retry_max.max(Duration::from_millis(100)),
        give_up_after: args.webhook_give_up_after,
        ..Retries::default()
    };
    let delivery = Delivery {
        retries,
        reminder_left: args.turn_reminder_left,
    };
    for webhook in webhooks {
        notify::spawn(registry.clone(), Arc::new(webhook), delivery);
    }
    if let Some(url) = args.publish {
        if !url.starts_with("nats://") && !url.starts_with("tls://") {
            return Err(format!("--publish {url:?}: expected nats://host:port").into());
        }
        if args.publish_stream.is_empty()
            || args
                .publish_stream
                .contains(|c: char| c == '.' || c == '*' || c == '>' || c.is_whitespace())
        {
            return Err(format!(
                "--publish-stream {:?}: a stream name has no spaces, '.', '*' or '>'",
                args.publish_stream
            )
            .into());
        }
        notify::spawn(
            registry.clone(),
            Arc::new(NatsSink::new(
                &url,
                &args.publish_notifications_stream,
                args.publish_duplicate_window,
            )),
            delivery,
        );
        service::publish::spawn(
            registry.clone(),
            PublishConfig {
                url,
                stream: args.publish_stream,
                retention: args.publish_retention,
                max_age: args.publish_max_age,
                max_bytes: args.publish_max_bytes,
                duplicate_window: args.publish_duplicate_window,
                start: args.publish_start,
            },
        )?;
    }
    let mut live = registry.live_games();
    tokio::spawn(async move {
        // The live count, for operators (and the lifecycle tests), at most once a second.
        while live.changed().await.is_ok() {
            let n = *live.borrow_and_update();
            tracing::debug!(live_games = n, "live games");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let tls_on = limits.tls.is_some();
    tracing::info!(address = %listener.local_addr()?, tls = tls_on, "unoflip serving");
    service::serve(listener, registry, limits, shutdown_signal()).await?;
    tracing::info!("unoflip stopped");
    Ok(())
}

/// The host's sign-in the `--auth-*` flags ask for, its keys read (and, from a URL, kept
/// fresh).
fn sign_in(args: &ServeArgs) -> Result<Option<Arc<SignIn>>, SettingsError> {
    let any = args.auth_jwks.is_some()
        || args.auth_hs256_secret.is_some()
        || args.auth_issuer.is_some()
        || args.auth_audience.is_some();
    if !any {
        return Ok(None);
    }
    let sign_in = Arc::new(SignIn::load(Settings {
        jwks: args.auth_jwks.clone(),
        hs256_secret: args.auth_hs256_secret.clone(),
        issuer: args.auth_issuer.clone().unwrap_or_default(),
        audience: args.auth_audience.clone().unwrap_or_default(),
        name_claim: args.auth_name_claim.clone(),
        refresh: args.auth_jwks_refresh,
    })?);
    sign_in.start();
    tracing::info!(
        jwks = args.auth_jwks.as_deref().unwrap_or("-"),
        hs256 = args.auth_hs256_secret.is_some(),
        issuer = args.auth_issuer.as_deref().unwrap_or_default(),
        "the host's sign-in is on"
    );
    Ok(Some(sign_in))
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

/// Raises the soft limit of open files to the hard limit, so that connections are limited by
/// `--max-connections` rather than by a low default.
fn raise_open_file_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => tracing::debug!(limit, "open file limit"),
        Err(error) => tracing::warn!(%error, "could not raise the open file limit"),
    }
}
