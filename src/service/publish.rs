//! The NATS JetStream publisher (`serve --publish nats://...`): every event's public projection,
//! the `GameEvent` that `SubscribeAll` sends, goes to JetStream subject
//! `unoflip.v1.games.<game id>.events`, exactly once and in the store's global order.
//!
//! It runs behind the store, never in a move's path: it reads the store's global order after
//! its place, projects each event for a spectator (as the firehose does) and publishes a batch,
//! then waits for the acknowledgements. A slow or absent broker only makes it fall behind (the
//! lag is logged and exported as `unoflip_publish_lag_events`); it catches up from the store.
//!
//! Exactly once, in order:
//! - Each message carries `Nats-Msg-Id: <game id>/<version>` (JetStream drops a duplicate within
//!   the stream's duplicate window) and `Nats-Expected-Last-Sequence`: the stream sequence the
//!   message before it got. JetStream refuses a message unless the stream's last one is the one
//!   before it in the store's order, so the stream always holds a prefix of that order: never a
//!   gap, never a message twice, even when acknowledgements are lost or two servers briefly
//!   both publish. (Not `Nats-Expected-Last-Msg-Id`: a restarted nats-server forgets the last
//!   message id once it is older than the duplicate window, and would refuse every message.)
//! - Where to go on from is read off the stream itself: the last message's headers name its
//!   store position. The store keeps a cursor too (saved after acknowledged batches), used when
//!   the stream's last message is gone (aged out) or is not this store's.
//! - With several servers on one PostgreSQL store, one of them publishes: the one holding the
//!   store's lease (an advisory lock). When it dies the lock goes with its connection, and
//!   another server takes the lease within a second.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::context::PublishAckFuture;
use async_nats::jetstream::{self, message::PublishMessage, stream};
use prost::Message as _;

use crate::service::games::Registry;
use crate::service::grpc::firehose::Projector;
use crate::store::{EventStore, StoreError};

/// Events read from the store and published at a time.
const BATCH: usize = 512;

/// Batches sent whose acknowledgements may still be awaited.
const IN_FLIGHT: usize = 8;

/// How often a server that does not hold the lease tries to take it, and how often the holder
/// checks that it still does.
const LEASE_POLL: Duration = Duration::from_secs(1);

/// How long a publish may wait for its acknowledgement.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest pause between attempts after the broker or the store failed.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How often the cursor is saved at most (the stream's last message is the first authority).
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// How often a server following a shared store looks for events without a wake-up.
const SHARED_POLL: Duration = Duration::from_millis(200);

/// Events counted at most when measuring the lag (a bigger lag shows as this).
const LAG_CAP: u64 = 1_000_000;

/// How long the publisher may stay behind before it says so in the log (then every as long).
const LAG_WARNING: Duration = Duration::from_secs(10);

/// Message headers, beside JetStream's own.
pub const HEADER_GAME: &str = "Unoflip-Game";
/// The event's number in its game.
pub const HEADER_VERSION: &str = "Unoflip-Version";
/// The event's position in the store's global order.
pub const HEADER_POSITION: &str = "Unoflip-Position";
/// The event's kind, as its stored JSON names it (`card_played`).
pub const HEADER_EVENT: &str = "Unoflip-Event";

/// What the stream keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Retention {
    /// Until the age or size limits (JetStream's `limits`).
    Limits,
    /// Until every consumer has acknowledged it (JetStream's `interest`).
    Interest,
}

/// Where a publisher with no place yet (a new stream, a new store) starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Start {
    /// Every stored event, from the first.
    Beginning,
    /// Only events stored from now on.
    Now,
}

/// `serve --publish` and its companions.
#[derive(Clone, Debug)]
pub struct PublishConfig {
    /// The NATS server, `nats://host:port`.
    pub url: String,
    /// The JetStream stream, created if missing.
    pub stream: String,
    /// What the stream keeps.
    pub retention: Retention,
    /// Messages older than this go (zero: kept however old).
    pub max_age: Duration,
    /// The stream's size limit in bytes (zero: none).
    pub max_bytes: u64,
    /// JetStream's de-duplication window.
    pub duplicate_window: Duration,
    /// Where to start with no place saved.
    pub start: Start,
}

/// The subject of `game`'s events (`games/{id}`): `unoflip.v1.games.<id>.events`.
pub fn subject(game: &str) -> String {
    format!("unoflip.v1.games.{}.events", token(game))
}

/// The id of a resource name (`games/{id}`, `players/{id}`) as one subject token: ids the
/// server makes are hexadecimal; anything a subject cannot hold is replaced, so no game (or
/// player) can publish into another's subject.
pub fn token(name: &str) -> String {
    name.rsplit_once('/')
        .map_or(name, |(_, id)| id)
        .chars()
        .map(|c| match c {
            '.' | '*' | '>' => '_',
            c if c.is_whitespace() || c.is_control() => '_',
            c => c,
        })
        .collect()
}

/// The `Nats-Msg-Id` of event `version` of `game`: `<game id>/<version>`.
pub fn message_id(game: &str, version: u64) -> String {
    format!("{}/{version}", token(game))
}

/// What the publisher shares with its lag watcher.
#[derive(Default)]
struct Progress {
    /// Whether this server holds the lease (and publishes, or tries to).
    holder: AtomicBool,
    /// The store position up to which every event is in the stream.
    position: AtomicU64,
}

/// Starts the publisher; it runs until the server stops.
///
/// It runs on a thread of its own (with its own single-threaded runtime, which also drives its
/// NATS connection): on a busy server it gets the share of the CPU of one thread among the
/// runtime's workers, not that of one task among thousands of streams, and keeps up.
pub fn spawn(
    registry: Arc<Registry>,
    config: PublishConfig,
) -> Result<std::thread::JoinHandle<()>, std::io::Error> {
    let progress = Arc::new(Progress::default());
    tokio::spawn(watch_lag(registry.clone(), progress.clone()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("unoflip-publisher".into())
        .spawn(move || runtime.block_on(run(registry, config, progress)))
}

/// Why publishing stopped.
#[derive(Debug, thiserror::Error)]
enum Stop {
    #[error("the server is stopping")]
    Stopping,
    #[error("the lease was lost: {0}")]
    LeaseLost(StoreError),
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error("NATS: {0}")]
    Nats(String),
}

fn nats(e: impl std::fmt::Display) -> Stop {
    Stop::Nats(e.to_string())
}

/// Takes the lease, publishes while it holds it, and starts over after any failure.
async fn run(registry: Arc<Registry>, config: PublishConfig, progress: Arc<Progress>) {
    let store = registry.hooks.store.clone();
    let lease_name = format!("nats-publisher:{}", config.stream);
    let mut stopping = registry.stopping.subscribe();
    let client = match async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .name("unoflip publisher")
        .connect(config.url.as_str())
        .await
    {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(url = %config.url, %error, "publisher: cannot use the NATS address");
            return;
        }
    };
    let context = jetstream::ContextBuilder::new()
        .timeout(ACK_TIMEOUT)
        .max_ack_inflight(BATCH * (IN_FLIGHT + 1))
        .build(client);
    let mut announced_waiting = false;
    loop {
        if *stopping.borrow() {
            return;
        }
        let mut lease = match store.lease(&lease_name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                if !announced_waiting {
                    tracing::info!(
                        stream = %config.stream,
                        "publisher: another server publishes; taking over when it stops"
                    );
                    announced_waiting = true;
                }
                tokio::select! {
                    () = tokio::time::sleep(LEASE_POLL) => {}
                    _ = stopping.wait_for(|s| *s) => return,
                }
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "publisher: cannot take the lease; retrying");
                tokio::select! {
                    () = tokio::time::sleep(MAX_BACKOFF) => {}
                    _ = stopping.wait_for(|s| *s) => return,
                }
                continue;
            }
        };
        announced_waiting = false;
        progress.holder.store(true, Ordering::Relaxed);
        registry.hooks.metrics.publishing.set(1);
        // Publishes until the lease is lost, starting over after a failure of the broker or of
        // the store (quickly after a run that went well for a while, backing off otherwise).
        let mut backoff = Duration::from_millis(100);
        let lost = loop {
            let started = Instant::now();
            match publish(&registry, &config, &context, &mut *lease, &progress).await {
                Stop::Stopping => return,
                Stop::LeaseLost(error) => break error,
                error => {
                    if started.elapsed() > MAX_BACKOFF {
                        backoff = Duration::from_millis(100);
                    }
                    registry.hooks.metrics.publish_errors.inc();
                    tracing::warn!(%error, retry_in = ?backoff, "publisher: stopped; starting over");
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        _ = stopping.wait_for(|s| *s) => return,
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        };
        progress.holder.store(false, Ordering::Relaxed);
        registry.hooks.metrics.publishing.set(0);
        registry.hooks.metrics.publish_lag.set(0);
        tracing::warn!(error = %lost, "publisher: the lease was lost; trying to take it again");
    }
}

/// Publishes while `lease` holds: finds its place, then follows the store. Two halves run
/// together: one reads, projects and sends (up to [`IN_FLIGHT`] batches ahead), the other
/// awaits the acknowledgements in order and moves the publisher's place. Either failing ends
/// both; the next run finds its place again from the stream.
async fn publish(
    registry: &Arc<Registry>,
    config: &PublishConfig,
    context: &jetstream::Context,
    lease: &mut dyn crate::store::Lease,
    progress: &Progress,
) -> Stop {
    let store = registry.hooks.store.clone();
    let cursor = format!("nats:{}", config.stream);
    if let Err(e) = lease.check().await {
        return Stop::LeaseLost(e);
    }
    let mut stream = match context.get_or_create_stream(stream_config(config)).await {
        Ok(stream) => stream,
        Err(e) => return nats(format!("stream {}: {e}", config.stream)),
    };
    let (start, last_sequence) = match place(&*store, &mut stream, &cursor, config).await {
        Ok(place) => place,
        Err(stop) => return stop,
    };
    progress.position.store(start, Ordering::Relaxed);
    tracing::info!(
        stream = %config.stream,
        after_position = start,
        "publisher: publishing to NATS JetStream"
    );
    let (sent, acks) = tokio::sync::mpsc::channel::<Sent>(IN_FLIGHT);
    let send = send(registry, context, lease, start, last_sequence, sent);
    let acknowledge = acknowledge(registry, &cursor, start, progress, acks);
    tokio::select! {
        stop = send => stop,
        stop = acknowledge => stop,
    }
}

/// One batch sent: its acknowledgements to await, and the store position it ends at.
struct Sent {
    acks: Vec<PublishAckFuture>,
    to: u64,
}

/// Reads the store after `position`, projects, and sends each batch, every message chained to
/// the one before by its stream sequence (`last_sequence`, the stream's last, to begin with).
async fn send(
    registry: &Arc<Registry>,
    context: &jetstream::Context,
    lease: &mut dyn crate::store::Lease,
    mut position: u64,
    mut last_sequence: u64,
    sent: tokio::sync::mpsc::Sender<Sent>,
) -> Stop {
    let store = registry.hooks.store.clone();
    let mut projector = Projector::new(usize::MAX);
    let mut wake = registry.hooks.appended.subscribe();
    let mut stopping = registry.stopping.subscribe();
    let shared = store.shared();
    let mut checked = Instant::now();
    loop {
        if *stopping.borrow() {
            return Stop::Stopping;
        }
        if checked.elapsed() >= LEASE_POLL {
            if let Err(e) = lease.check().await {
                return Stop::LeaseLost(e);
            }
            checked = Instant::now();
        }
        wake.borrow_and_update();
        let batch = match store.read_all(position, BATCH).await {
            Ok(batch) => batch,
            Err(e) => return e.into(),
        };
        let Some(to) = batch.last().map(|c| c.position) else {
            let poll = if shared { SHARED_POLL } else { LEASE_POLL };
            tokio::select! {
                _ = wake.changed() => {}
                () = tokio::time::sleep(poll) => {}
                _ = stopping.wait_for(|s| *s) => {}
            }
            continue;
        };
        let mut acks = Vec::with_capacity(batch.len());
        for committed in &batch {
            let event = match projector.project(registry, committed).await {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(e) => return e.into(),
            };
            let id = message_id(&committed.game, committed.version);
            let mut headers = HeaderMap::new();
            headers.insert(HEADER_GAME, committed.game.as_str());
            headers.insert(HEADER_VERSION, committed.version.to_string().as_str());
            headers.insert(HEADER_POSITION, committed.position.to_string().as_str());
            headers.insert(HEADER_EVENT, committed.event.kind());
            let message = PublishMessage::build()
                .payload(event.encode_to_vec().into())
                .headers(headers)
                .message_id(&id)
                .expected_last_sequence(last_sequence);
            match context
                .send_publish(subject(&committed.game), message)
                .await
            {
                Ok(ack) => acks.push(ack),
                Err(e) => return nats(e),
            }
            last_sequence += 1;
        }
        position = to;
        if sent.send(Sent { acks, to }).await.is_err() {
            // The other half has stopped, and says why.
            return std::future::pending().await;
        }
    }
}

/// Awaits the acknowledgements of each batch in order; once a batch is in the stream, moves the
/// publisher's place to its end (and saves it in the store now and then).
async fn acknowledge(
    registry: &Arc<Registry>,
    cursor: &str,
    mut saved: u64,
    progress: &Progress,
    mut batches: tokio::sync::mpsc::Receiver<Sent>,
) -> Stop {
    let store = registry.hooks.store.clone();
    let mut saved_at = Instant::now();
    loop {
        let next = tokio::time::timeout(SAVE_EVERY, batches.recv()).await;
        if let Ok(next) = next {
            let Some(Sent { acks, to }) = next else {
                return std::future::pending().await;
            };
            for ack in acks {
                match ack.await {
                    Ok(ack) if ack.duplicate => {
                        registry.hooks.metrics.publish_duplicates.inc();
                    }
                    Ok(_) => {
                        registry.hooks.metrics.published.inc();
                    }
                    Err(e) => return nats(e),
                }
            }
            progress.position.store(to, Ordering::Relaxed);
        }
        let at = progress.position.load(Ordering::Relaxed);
        if at != saved && saved_at.elapsed() >= SAVE_EVERY {
            if let Err(e) = store.save_cursor(cursor, at).await {
                return e.into();
            }
            (saved, saved_at) = (at, Instant::now());
        }
    }
}

/// Where to go on from, and the stream's last sequence (which the next message must follow):
/// after the stream's last message when it is this store's event, else after the store's cursor
/// (or where [`Start`] says).
async fn place(
    store: &dyn EventStore,
    stream: &mut stream::Stream,
    cursor: &str,
    config: &PublishConfig,
) -> Result<(u64, u64), Stop> {
    let info = stream.info().await.map_err(nats)?;
    let (messages, last_sequence) = (info.state.messages, info.state.last_sequence);
    if messages > 0 {
        match stream.get_raw_message(last_sequence).await {
            Ok(last) => {
                let id = last
                    .headers
                    .get(async_nats::header::NATS_MESSAGE_ID)
                    .map(|v| v.as_str().to_owned())
                    .unwrap_or_default();
                let position = last
                    .headers
                    .get(HEADER_POSITION)
                    .and_then(|v| v.as_str().parse::<u64>().ok())
                    .unwrap_or(0);
                let ours = position > 0
                    && store
                        .read_all(position - 1, 1)
                        .await?
                        .first()
                        .is_some_and(|c| {
                            c.position == position && message_id(&c.game, c.version) == id
                        });
                if ours {
                    return Ok((position, last_sequence));
                }
                tracing::warn!(
                    stream = %config.stream,
                    message = %id,
                    position,
                    "publisher: the stream's last message is not this store's event at its \
                     position; going on from the store's cursor"
                );
            }
            // Removed since: go by the cursor.
            Err(e) => tracing::debug!(error = %e, "publisher: the stream's last message"),
        }
    }
    if let Some(saved) = store.cursor(cursor).await? {
        return Ok((saved, last_sequence));
    }
    let start = match config.start {
        Start::Beginning => 0,
        Start::Now => store.last_position().await?,
    };
    store.save_cursor(cursor, start).await?;
    Ok((start, last_sequence))
}

/// The stream as `config` asks for it.
fn stream_config(config: &PublishConfig) -> stream::Config {
    stream::Config {
        name: config.stream.clone(),
        description: Some("unoflip: every game's public events".to_owned()),
        subjects: vec!["unoflip.v1.games.*.events".to_owned()],
        retention: match config.retention {
            Retention::Limits => stream::RetentionPolicy::Limits,
            Retention::Interest => stream::RetentionPolicy::Interest,
        },
        max_age: config.max_age,
        max_bytes: i64::try_from(config.max_bytes)
            .ok()
            .filter(|b| *b > 0)
            .unwrap_or(-1),
        duplicate_window: config.duplicate_window,
        storage: stream::StorageType::File,
        ..Default::default()
    }
}

/// Every second, while this server holds the lease: how many events the stream is behind the
/// store (up to [`LAG_CAP`]), in the metrics and, when it stays behind, in the log.
async fn watch_lag(registry: Arc<Registry>, progress: Arc<Progress>) {
    let store = registry.hooks.store.clone();
    let mut stopping = registry.stopping.subscribe();
    let mut behind_since: Option<Instant> = None;
    let mut warned = Instant::now();
    loop {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stopping.wait_for(|s| *s) => return,
        }
        if !progress.holder.load(Ordering::Relaxed) {
            behind_since = None;
            continue;
        }
        let published = progress.position.load(Ordering::Relaxed);
        let Ok(lag) = store.count_after(published, LAG_CAP).await else {
            continue;
        };
        registry
            .hooks
            .metrics
            .publish_lag
            .set(i64::try_from(lag).unwrap_or(i64::MAX));
        if lag == 0 {
            if behind_since
                .take()
                .is_some_and(|s| s.elapsed() >= LAG_WARNING)
            {
                tracing::info!("publisher: caught up with the store");
            }
            continue;
        }
        let since = *behind_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= LAG_WARNING && warned.elapsed() >= LAG_WARNING {
            warned = Instant::now();
            tracing::warn!(
                behind = lag,
                for_secs = since.elapsed().as_secs(),
                "publisher: the NATS stream is behind the store"
            );
        }
    }
}
