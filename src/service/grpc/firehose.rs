//! The firehose (`SubscribeAll`): every game's events, projected for a spectator, in the store's
//! global order.
//!
//! Projecting an event needs the state of its game, so one process-wide [`Hub`] does it once for
//! every stream: it follows the store from the position it started at, keeps a replica of each
//! unfinished game, and keeps the last [`RING`] projected events. A stream holds only its
//! position: it sends what the ring holds after it. A stream that starts further back, or falls
//! behind the ring, catches up from the store with a few replicas of its own
//! ([`CATCH_UP_REPLICAS`]), then follows the ring again. The hub runs while a stream needs it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;

use crate::proto as pb;
use crate::proto::subscribe_all_response::Kind;
use crate::rules::{Event, Game, Viewer, project, project_lobby};
use crate::service::error::ServiceError;
use crate::service::games::{Registry, StreamSlot};
use crate::service::grpc::convert;
use crate::service::grpc::stream::Stream;
use crate::store::{Committed, StoreError};

/// Projected events the hub keeps for its streams.
const RING: usize = 4096;

/// Events read from the store per query.
const BATCH: usize = 512;

/// Games a stream catching up from the store keeps a replica of (the least recently used goes).
const CATCH_UP_REPLICAS: usize = 16;

/// Events a stream catching up reads from the store and projects at a time.
const CATCH_UP_BATCH: usize = 64;

/// Streams that may read and project from the store at once: catching up costs CPU, and a flood
/// of streams starting from the beginning must not starve the calls of everyone else. The others
/// wait their turn (a permit is held only while reading and projecting, never while sending).
const CATCH_UPS_AT_ONCE: usize = 2;

/// How often the hub of a shared store looks for events without a wake-up: an append there
/// becomes readable only once older transactions end, which no notification announces.
const SHARED_POLL: Duration = Duration::from_millis(200);

/// How long the hub waits before reading again after the store failed.
const RETRY: Duration = Duration::from_secs(1);

/// Projects events in global order for a spectator, from a replica of each game.
pub(crate) struct Projector {
    /// Each game's state after its last projected event, and when it was last used.
    replicas: HashMap<String, (Game, u64)>,
    /// Replicas kept at most.
    cap: usize,
    /// Counts uses, for the least recently used.
    tick: u64,
}

impl Projector {
    pub(crate) fn new(cap: usize) -> Projector {
        Projector {
            replicas: HashMap::new(),
            cap,
            tick: 0,
        }
    }

    /// `committed` as a spectator sees it, or `None` for an event a spectator is not sent.
    pub(crate) async fn project(
        &mut self,
        registry: &Registry,
        committed: &Committed,
    ) -> Result<Option<pb::GameEvent>, StoreError> {
        self.tick += 1;
        let name = &committed.game;
        let known = self
            .replicas
            .get(name)
            .map_or(0, |(game, _)| game.version());
        if known + 1 != committed.version {
            // The state before this event: the game's earlier events read from the store.
            let earlier = registry.hooks.store.read(name, 0).await?;
            let before = usize::try_from(committed.version.saturating_sub(1))
                .unwrap_or(usize::MAX)
                .min(earlier.len());
            match Game::replay(&earlier[..before]) {
                Ok(game) => self.keep(name, game),
                Err(_) => {
                    self.replicas.remove(name);
                }
            }
        }
        match self.replicas.get_mut(name) {
            Some((game, used)) => {
                game.apply(&committed.event);
                *used = self.tick;
            }
            None => {
                if let Ok(game) = Game::replay([&committed.event]) {
                    self.keep(name, game);
                }
            }
        }
        let event = match self.replicas.get(name) {
            Some((game, _)) => {
                // Only the creation event carries the options.
                let lobby = if matches!(committed.event, Event::GameCreated { .. }) {
                    registry.lobby(name).await
                } else {
                    None
                };
                let seen = project(game, &committed.event, Viewer::Spectator);
                let over = game.is_over();
                let event = convert::event(committed.version, &seen, lobby.as_ref());
                if over {
                    self.replicas.remove(name);
                }
                Some(event)
            }
            None => project_lobby(&committed.event)
                .map(|seen| convert::event(committed.version, &seen, None)),
        };
        Ok(event.map(|event| pb::GameEvent {
            game: name.clone(),
            position: committed.position,
            event: Some(event),
        }))
    }

    /// Keeps `game`'s replica, making room by dropping the least recently used.
    fn keep(&mut self, name: &str, game: Game) {
        if self.replicas.len() >= self.cap
            && !self.replicas.contains_key(name)
            && let Some(oldest) = self
                .replicas
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(name, _)| name.clone())
        {
            self.replicas.remove(&oldest);
        }
        self.replicas.insert(name.to_owned(), (game, self.tick));
    }
}

/// The last projected events, after position `base`.
struct Ring {
    /// Every event after this position up to the last one held is in `events`.
    base: u64,
    events: VecDeque<Arc<pb::GameEvent>>,
}

/// The shared projection every firehose stream reads.
pub(crate) struct Hub {
    ring: Mutex<Ring>,
    /// Turns to read and project from the store ([`CATCH_UPS_AT_ONCE`]).
    catch_up: tokio::sync::Semaphore,
    /// The position the hub has read up to; changes with each batch.
    head: watch::Sender<u64>,
}

/// What the ring holds for a stream at some position.
enum Held {
    /// Events after it (none: the stream is at the hub's head).
    Events(Vec<Arc<pb::GameEvent>>),
    /// The ring no longer (or not yet) holds the event after it: read the store.
    Behind,
}

impl Hub {
    /// Up to `limit` events after `position`.
    fn after(&self, position: u64, limit: usize) -> Held {
        let Ok(ring) = self.ring.lock() else {
            return Held::Behind;
        };
        if position < ring.base {
            return Held::Behind;
        }
        let start = ring.events.partition_point(|e| e.position <= position);
        Held::Events(ring.events.range(start..).take(limit).cloned().collect())
    }

    fn push(&self, events: Vec<pb::GameEvent>, read_to: u64) {
        if let Ok(mut ring) = self.ring.lock() {
            for event in events {
                if ring.events.len() >= RING
                    && let Some(old) = ring.events.pop_front()
                {
                    ring.base = old.position;
                }
                ring.events.push_back(Arc::new(event));
            }
        }
        self.head.send_if_modified(|head| {
            let moved = *head != read_to;
            *head = read_to;
            moved
        });
    }
}

/// Where the server's one hub is found while a stream holds it.
pub(crate) type HubSlot = tokio::sync::Mutex<Weak<Hub>>;

/// The running hub, or a new one started at the store's last position.
async fn hub(registry: &Arc<Registry>, slot: &HubSlot) -> Result<Arc<Hub>, ServiceError> {
    let mut slot = slot.lock().await;
    if let Some(hub) = slot.upgrade() {
        return Ok(hub);
    }
    let start = registry
        .hooks
        .store
        .last_position()
        .await
        .map_err(|e| ServiceError::store(&e))?;
    let hub = Arc::new(Hub {
        ring: Mutex::new(Ring {
            base: start,
            events: VecDeque::new(),
        }),
        head: watch::channel(start).0,
        catch_up: tokio::sync::Semaphore::new(CATCH_UPS_AT_ONCE),
    });
    *slot = Arc::downgrade(&hub);
    tokio::spawn(run(Arc::downgrade(&hub), registry.clone(), start));
    Ok(hub)
}

/// Follows the store for the hub while any stream holds it.
async fn run(hub: Weak<Hub>, registry: Arc<Registry>, mut position: u64) {
    let store = registry.hooks.store.clone();
    let shared = store.shared();
    let mut wake = registry.hooks.appended.subscribe();
    let mut stopping = registry.stopping.subscribe();
    let mut projector = Projector::new(usize::MAX);
    loop {
        wake.borrow_and_update();
        let mut pause = None;
        loop {
            let Some(hub) = hub.upgrade() else { return };
            let batch = match store.read_all(position, BATCH).await {
                Ok(batch) => batch,
                Err(error) => {
                    tracing::warn!(%error, "firehose: reading the store failed; retrying");
                    pause = Some(RETRY);
                    break;
                }
            };
            let full = batch.len() == BATCH;
            let mut events = Vec::with_capacity(batch.len());
            let mut failed = false;
            for committed in &batch {
                match projector.project(&registry, committed).await {
                    Ok(event) => {
                        events.extend(event);
                        position = committed.position;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "firehose: reading a game failed; retrying");
                        failed = true;
                        break;
                    }
                }
            }
            hub.push(events, position);
            if failed {
                pause = Some(RETRY);
                break;
            }
            if !full {
                break;
            }
        }
        let poll = async {
            match pause {
                Some(pause) => tokio::time::sleep(pause).await,
                None if shared => tokio::time::sleep(SHARED_POLL).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            changed = wake.changed() => if changed.is_err() { return },
            () = poll => {}
            // Looks now and then whether any stream still holds the hub.
            () = tokio::time::sleep(Duration::from_secs(5)) => {}
            _ = stopping.wait_for(|s| *s) => return,
        }
    }
}

/// Starts a firehose stream after global position `after`.
pub(crate) fn subscribe_all(
    registry: Arc<Registry>,
    hub: Arc<HubSlot>,
    after: u64,
    slot: StreamSlot,
) -> Stream<pb::SubscribeAllResponse> {
    Stream::new(move |tx| async move {
        let _slot = slot;
        let mut stopping = registry.stopping.subscribe();
        tokio::select! {
            _ = firehose(&registry, &hub, after, &tx) => {}
            _ = async { stopping.wait_for(|s| *s).await.is_ok() } => {
                let _ = tx.send(Err(ServiceError::Stopping.into())).await;
            }
        }
    })
}

/// Feeds one firehose stream until the client leaves.
async fn firehose(
    registry: &Arc<Registry>,
    hub_slot: &HubSlot,
    mut position: u64,
    tx: &crate::service::grpc::stream::Sender<pb::SubscribeAllResponse>,
) -> Option<()> {
    let send = |kind: Kind| async move {
        tx.send(Ok(pb::SubscribeAllResponse { kind: Some(kind) }))
            .await
            .ok()
    };
    let fail = |error: ServiceError| async move {
        let _ = tx.send(Err(error.into())).await;
    };
    let hub = match hub(registry, hub_slot).await {
        Ok(hub) => hub,
        Err(error) => {
            fail(error).await;
            return None;
        }
    };
    let store = registry.hooks.store.clone();
    let mut head = hub.head.subscribe();
    // Replicas for reading the store, only while behind the ring.
    let mut catching_up: Option<Projector> = None;
    let mut caught_up = false;
    loop {
        head.borrow_and_update();
        let held = hub.after(position, BATCH);
        if let Held::Events(events) = &held
            && !events.is_empty()
        {
            catching_up = None;
            registry.hooks.metrics.observe_lag(events.len());
            for event in events {
                position = event.position;
                send(Kind::Event(pb::GameEvent::clone(event))).await?;
            }
            continue;
        }
        // Before saying it is caught up, a stream makes sure the store holds nothing more (the
        // hub may not have read the newest events yet).
        let from_store = match held {
            Held::Behind => true,
            Held::Events(_) => !caught_up,
        };
        if from_store {
            let permit = tokio::select! {
                permit = hub.catch_up.acquire() => permit.ok()?,
            };
            let batch = match store.read_all(position, CATCH_UP_BATCH).await {
                Ok(batch) => batch,
                Err(error) => {
                    fail(ServiceError::store(&error)).await;
                    return None;
                }
            };
            if !batch.is_empty() {
                registry.hooks.metrics.firehose_store_reads.inc();
                registry.hooks.metrics.observe_lag(batch.len());
                let projector =
                    catching_up.get_or_insert_with(|| Projector::new(CATCH_UP_REPLICAS));
                let mut events = Vec::with_capacity(batch.len());
                for committed in &batch {
                    match projector.project(registry, committed).await {
                        Ok(event) => events.extend(event),
                        Err(error) => {
                            fail(ServiceError::store(&error)).await;
                            return None;
                        }
                    }
                }
                drop(permit);
                position = batch.last().map_or(position, |c| c.position);
                for event in events {
                    send(Kind::Event(event)).await?;
                }
                continue;
            }
            catching_up = None;
        }
        if !caught_up {
            caught_up = true;
            send(Kind::CaughtUp(pb::CaughtUp { version: position })).await?;
        }
        tokio::select! {
            changed = head.changed() => changed.ok()?,
            () = tokio::time::sleep(registry.config.heartbeat) => send(Kind::Heartbeat(pb::Heartbeat {})).await?,
        }
    }
}
