//! Server streams: one game's events for a seat or a spectator (`Subscribe`), and every game's
//! public events (`SubscribeAll`).
//!
//! Each stream is a bounded channel fed by its own task. The task reads the game's log from its
//! own cursor and folds its own copy of the state to project each event, so a slow client only
//! slows its own task: the game never waits for a stream, and a stream that fell behind simply
//! reads on from the log. The task stops when the client goes away.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use crate::proto as pb;
use crate::proto::subscribe_all_response::Kind as AllKind;
use crate::proto::subscribe_response::Kind;
use crate::rules::{Event, Game, Viewer, project};

use super::convert;
use super::error::ServiceError;
use super::games::{GameHandle, Games};

/// A stream of messages or a status ending it.
pub type Stream<T> = ReceiverStream<Result<T, Status>>;

/// Starts a game stream for `viewer` after event `after` (0: from the current state, with a
/// view), starting with a view at `after` when `include_view`.
pub async fn subscribe(
    games: Arc<Games>,
    handle: Arc<GameHandle>,
    viewer: Viewer,
    after: u64,
    include_view: bool,
) -> Result<Stream<pb::SubscribeResponse>, ServiceError> {
    let len = handle.entry.lock().await.log.len();
    if after > len {
        return Err(ServiceError::invalid(
            "AFTER_VERSION_AHEAD",
            format!("after_version {after} is past the game's last event, {len}"),
        ));
    }
    let (tx, rx) = mpsc::channel(games.config.stream_buffer.max(1));
    tokio::spawn(async move {
        let heartbeat = games.config.heartbeat;
        let store = games.store().clone();
        let _ = game_stream(
            &handle,
            &*store,
            viewer,
            after,
            include_view,
            heartbeat,
            &tx,
        )
        .await;
    });
    Ok(ReceiverStream::new(rx))
}

/// Feeds one game stream until the client leaves. `None` when it has.
async fn game_stream(
    handle: &GameHandle,
    store: &dyn crate::store::EventStore,
    viewer: Viewer,
    mut after: u64,
    include_view: bool,
    heartbeat: std::time::Duration,
    tx: &mpsc::Sender<Result<pb::SubscribeResponse, Status>>,
) -> Option<()> {
    let send = |kind: Kind| async move {
        tx.send(Ok(pb::SubscribeResponse { kind: Some(kind) }))
            .await
            .ok()
    };
    let mut version_rx = handle.version.subscribe();
    let from_now = after == 0;
    let mut view_due = include_view || from_now;
    let mut replica: Option<Game> = None;
    let mut cursor: u64 = 0;
    let mut caught_up = false;
    loop {
        version_rx.borrow_and_update();
        let (held, version, options, deadline) = {
            let entry = handle.entry.lock().await;
            // Start from the latest snapshot when the stream needs nothing before it.
            if replica.is_none()
                && let (base, Some(state)) = entry.log.base()
                && (from_now || base <= after)
            {
                replica = Some(state.clone());
                cursor = base;
            }
            (
                entry.log.since(cursor).map(<[Event]>::to_vec),
                entry.log.len(),
                entry.options.clone(),
                entry.deadline,
            )
        };
        // Events before the snapshot this server holds come from the store.
        let batch = match held {
            Some(batch) => batch,
            None => match store.read(&handle.name, cursor).await {
                Ok(mut events) => {
                    events.truncate(usize::try_from(version - cursor).unwrap_or(usize::MAX));
                    events
                }
                Err(error) => {
                    let _ = tx.send(Err(ServiceError::store(&error).into())).await;
                    return None;
                }
            },
        };
        let fresh = !batch.is_empty();
        if from_now && view_due && (fresh || replica.is_some()) {
            after = cursor + batch.len() as u64;
        }
        // The view, when the stream starts exactly at the snapshot it holds.
        if view_due
            && cursor == after
            && (!from_now || batch.is_empty())
            && let Some(game) = replica.as_ref()
        {
            view_due = false;
            send(Kind::View(convert::view(
                &handle.name,
                &game.view(viewer),
                None,
            )))
            .await?;
        }
        for event in batch {
            cursor += 1;
            match replica.as_mut() {
                Some(game) => game.apply(&event),
                None => replica = Game::replay([&event]).ok(),
            }
            let Some(game) = replica.as_ref() else {
                continue;
            };
            if cursor == after && view_due {
                view_due = false;
                send(Kind::View(convert::view(
                    &handle.name,
                    &game.view(viewer),
                    None,
                )))
                .await?;
            }
            if cursor > after {
                let seen = convert::event(cursor, &project(game, &event, viewer), &options);
                send(Kind::Event(seen)).await?;
            }
        }
        // A prompt after new events, and once when the stream starts (a client resuming at the
        // current version learns that it may act).
        let prompt_due = (fresh || !caught_up) && cursor >= after;
        if let (true, Viewer::Seat(seat), Some(game)) = (prompt_due, viewer, &replica) {
            let legal = game.legal_actions(seat);
            if !legal.is_empty() {
                let prompt = pb::Prompt {
                    version: cursor,
                    legal_actions: legal.into_iter().map(convert::action).collect(),
                    turn_deadline: super::games::deadline_timestamp(deadline),
                };
                send(Kind::Prompt(prompt)).await?;
            }
        }
        if !caught_up && cursor >= after && !(view_due && from_now) {
            caught_up = true;
            send(Kind::CaughtUp(pb::CaughtUp { version: cursor })).await?;
        }
        tokio::select! {
            changed = version_rx.changed() => changed.ok()?,
            () = tokio::time::sleep(heartbeat) => send(Kind::Heartbeat(pb::Heartbeat {})).await?,
            () = tx.closed() => return None,
        }
    }
}

/// Starts the firehose after global position `after`.
pub fn subscribe_all(games: Arc<Games>, after: u64) -> Stream<pb::SubscribeAllResponse> {
    let (tx, rx) = mpsc::channel(games.config.stream_buffer.max(1));
    tokio::spawn(async move {
        let _ = firehose(&games, after, &tx).await;
    });
    ReceiverStream::new(rx)
}

/// Events read from the store per query.
const FIREHOSE_BATCH: usize = 512;

/// How often a firehose on a shared store looks for events without a wake-up: an append there
/// becomes readable only once older transactions end, which no notification announces.
const SHARED_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// Feeds the firehose from the store's global order, every game's events projected for a
/// spectator, until the client leaves.
async fn firehose(
    games: &Games,
    after: u64,
    tx: &mpsc::Sender<Result<pb::SubscribeAllResponse, Status>>,
) -> Option<()> {
    let send = |kind: AllKind| async move {
        tx.send(Ok(pb::SubscribeAllResponse { kind: Some(kind) }))
            .await
            .ok()
    };
    let fail = |error: crate::store::StoreError| async move {
        let _ = tx.send(Err(ServiceError::store(&error).into())).await;
    };
    let store = games.store().clone();
    let shared = store.shared();
    let mut wake = games.appended.subscribe();
    let mut replicas: HashMap<String, Game> = HashMap::new();
    let mut position = after;
    let mut caught_up = false;
    loop {
        wake.borrow_and_update();
        loop {
            let batch = match store.read_all(position, FIREHOSE_BATCH).await {
                Ok(batch) => batch,
                Err(error) => {
                    fail(error).await;
                    return None;
                }
            };
            let full = batch.len() == FIREHOSE_BATCH;
            for committed in batch {
                position = committed.position;
                let name = committed.game;
                // The state before this event, to project it: the replica, or the game's
                // earlier events read from the store.
                if replicas.get(&name).map_or(0, Game::version) + 1 != committed.version {
                    let earlier = match store.read(&name, 0).await {
                        Ok(events) => events,
                        Err(error) => {
                            fail(error).await;
                            return None;
                        }
                    };
                    let before = usize::try_from(committed.version.saturating_sub(1))
                        .unwrap_or(usize::MAX)
                        .min(earlier.len());
                    match Game::replay(&earlier[..before]) {
                        Ok(game) => {
                            replicas.insert(name.clone(), game);
                        }
                        Err(_) => {
                            replicas.remove(&name);
                        }
                    }
                }
                match replicas.get_mut(&name) {
                    Some(game) => game.apply(&committed.event),
                    None => {
                        if let Ok(game) = Game::replay([&committed.event]) {
                            replicas.insert(name.clone(), game);
                        }
                    }
                }
                let Some(game) = replicas.get(&name) else {
                    continue;
                };
                // Only the creation event carries the options.
                let options = if matches!(committed.event, Event::GameCreated { .. }) {
                    games.shown_options(&name).await
                } else {
                    pb::GameOptions::default()
                };
                let seen = convert::event(
                    committed.version,
                    &project(game, &committed.event, Viewer::Spectator),
                    &options,
                );
                send(AllKind::Event(pb::GameEvent {
                    game: name.clone(),
                    position,
                    event: Some(seen),
                }))
                .await?;
                if game.is_over() {
                    replicas.remove(&name);
                }
            }
            if !full {
                break;
            }
        }
        if !caught_up {
            caught_up = true;
            send(AllKind::CaughtUp(pb::CaughtUp { version: position })).await?;
        }
        let poll = async {
            if shared {
                tokio::time::sleep(SHARED_POLL).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            changed = wake.changed() => changed.ok()?,
            () = poll => {}
            () = tokio::time::sleep(games.config.heartbeat) => send(AllKind::Heartbeat(pb::Heartbeat {})).await?,
            () = tx.closed() => return None,
        }
    }
}
