//! Game streams (`Subscribe`): one game's events for a seat or a spectator, and `FindMatch`'s
//! stream. The firehose is in [`crate::service::grpc::firehose`].
//!
//! A stream is a [`Stream`] driven by its response body: the producer (an async block that
//! sends messages through a [`Sender`]) runs only when HTTP/2 asks for the next message, and
//! each message is handed over in a one-message slot. So a stream costs no task and no channel
//! of its own, a client that reads slowly holds its producer back through the connection's
//! flow control, and a client that goes away drops the producer with the body.
//!
//! A game stream reads the game's log from its own cursor and folds its own copy of the state
//! to project each event, so a slow client only slows its own stream: the game never waits for
//! a stream, and a stream that fell behind simply reads on from the log.

use crate::service::reason::Reason;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::SystemTime;

use tokio::time::Instant;
use tonic::Status;

use crate::proto as pb;
use crate::proto::subscribe_response::Kind;
use crate::rules::{Game, Viewer, project, project_lobby};
use crate::service::games::StreamSlot;
use crate::store::EventStore;

use crate::service::error::ServiceError;
use crate::service::games::Registry;
use crate::service::games::task::{Command, GameRef, Tail};
use crate::service::grpc::convert;

/// The one-message slot between a producer and its stream. Boxed: it lives as long as the
/// stream, and a message with a view inline takes hundreds of bytes.
type Slot<T> = Arc<Mutex<Option<Result<Box<T>, Box<Status>>>>>;

/// A stream of messages or a status ending it, made by a producer that sends them through a
/// [`Sender`]. Polling the stream polls the producer.
pub struct Stream<T> {
    slot: Slot<T>,
    producer: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl<T: Send + 'static> Stream<T> {
    /// The stream of what `produce` sends (it ends when `produce` returns).
    pub fn new<F, P>(produce: P) -> Stream<T>
    where
        P: FnOnce(Sender<T>) -> F,
        F: Future<Output = ()> + Send + 'static,
    {
        let slot: Slot<T> = Arc::new(Mutex::new(None));
        let producer = produce(Sender { slot: slot.clone() });
        Stream {
            slot,
            producer: Some(Box::pin(producer)),
        }
    }

    fn take(&self) -> Option<Result<T, Status>> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.take().map(|r| r.map(|m| *m).map_err(|s| *s))
    }
}

impl<T: Send + 'static> tokio_stream::Stream for Stream<T> {
    type Item = Result<T, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(item) = self.take() {
            return Poll::Ready(Some(item));
        }
        let Some(producer) = self.producer.as_mut() else {
            return Poll::Ready(None);
        };
        // The producer runs until it has put a message in the slot (then it waits for the slot
        // to be emptied, which the next poll does) or until it ends.
        let done = producer.as_mut().poll(cx).is_ready();
        if done {
            self.producer = None;
        }
        match self.take() {
            Some(item) => Poll::Ready(Some(item)),
            None if done => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

/// The producer's end of a [`Stream`].
pub struct Sender<T> {
    slot: Slot<T>,
}

/// The client went away: its [`Stream`] was dropped.
#[derive(Debug)]
pub struct Gone;

impl<T> Sender<T> {
    /// Sends a message or the status that ends the stream, and waits until the stream has
    /// taken it.
    pub async fn send(&self, item: Result<T, Status>) -> Result<(), Gone> {
        if Arc::strong_count(&self.slot) < 2 {
            return Err(Gone);
        }
        {
            let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
            *slot = Some(item.map(Box::new).map_err(Box::new));
        }
        Taken { slot: &self.slot }.await;
        Ok(())
    }
}

/// Waits until the stream has taken the message in the slot. It needs no waker: the stream
/// polls the producer again as soon as it is asked for the next message, right after it took
/// this one.
struct Taken<'a, T> {
    slot: &'a Slot<T>,
}

impl<T> Future for Taken<'_, T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// A turn deadline as a wall-clock timestamp.
pub(crate) fn deadline_timestamp(deadline: Option<Instant>) -> Option<pbjson_types::Timestamp> {
    let deadline = deadline?;
    let left = deadline.saturating_duration_since(Instant::now());
    Some(timestamp(SystemTime::now() + left))
}

/// `time` as a protobuf Timestamp (pbjson's, which has the JSON mapping).
pub(crate) fn timestamp(time: SystemTime) -> pbjson_types::Timestamp {
    let t = prost_types::Timestamp::from(time);
    pbjson_types::Timestamp {
        seconds: t.seconds,
        nanos: t.nanos,
    }
}

/// Starts a game stream for `viewer` after event `after` (0: from the current state, with a
/// view), starting with a view at `after` when `include_view`.
pub async fn subscribe(
    registry: Arc<Registry>,
    name: &str,
    viewer: Viewer,
    after: u64,
    include_view: bool,
    slot: StreamSlot,
) -> Result<Stream<pb::SubscribeResponse>, ServiceError> {
    let game = registry.get(name).await?;
    let len = game.version.get();
    if after > len {
        return Err(ServiceError::invalid(
            Reason::AfterVersionAhead,
            format!("after_version {after} is past the game's last event, {len}"),
        ));
    }
    Ok(Stream::new(move |tx| async move {
        let _slot = slot;
        let heartbeat = registry.config.heartbeat;
        let mut stopping = registry.stopping.subscribe();
        tokio::select! {
            _ = game_stream(&game, &registry, viewer, after, include_view, heartbeat, &tx) => {}
            _ = async { stopping.wait_for(|s| *s).await.is_ok() } => {
                let _ = tx.send(Err(ServiceError::Stopping.into())).await;
            }
        }
    }))
}

/// What the game's task holds after `cursor`; once the task has stopped (the game is over and
/// left memory), the store's events instead.
async fn read_tail(
    game: &GameRef,
    store: &dyn EventStore,
    cursor: u64,
    with_base: bool,
) -> Result<Tail, ServiceError> {
    match game
        .ask(|reply| Command::Read {
            after: cursor,
            with_base,
            reply,
        })
        .await
    {
        Err(ServiceError::Stopping) => {
            let events = store.read(&game.name, cursor).await?;
            let lobby = match store.record(&game.name).await? {
                Some((record, _)) => crate::service::games::lobby::Lobby::from_record(&record)
                    .map_err(|error| error.refusal(&game.name))?,
                None => return Err(ServiceError::no_game(&game.name)),
            };
            Ok(Tail {
                version: cursor + events.len() as u64,
                events: Some(events),
                base: None,
                lobby: Some(Box::new(lobby)),
                deadline: None,
            })
        }
        other => other,
    }
}

/// Feeds one game stream until the client leaves. `None` when it has.
async fn game_stream(
    game: &GameRef,
    registry: &Registry,
    viewer: Viewer,
    mut after: u64,
    include_view: bool,
    heartbeat: std::time::Duration,
    tx: &Sender<pb::SubscribeResponse>,
) -> Option<()> {
    let store = &*registry.hooks.store;
    let metrics = &registry.hooks.metrics;
    // Boxed, like the catching up below: the heartbeat is sent from the waiting state.
    let send = |kind: Kind| {
        Box::pin(async move {
            tx.send(Ok(pb::SubscribeResponse { kind: Some(kind) }))
                .await
                .ok()
        })
    };
    let view_of = |state: &Game| Kind::View(convert::view(&game.name, &state.view(viewer), None));
    let mut version_rx = game.version.clone();
    // Boxed, as the replica below: they live as long as the stream, which waits most of its life.
    let mut lobby_sent: Option<Box<pb::Game>> = None;
    // While the game waits for players, a shared store's lobby is looked at again this often
    // (another server may seat someone).
    let lobby_poll = heartbeat.min(std::time::Duration::from_secs(1));
    let from_now = after == 0;
    let mut view_due = include_view || from_now;
    let mut replica: Option<Box<Game>> = None;
    let mut cursor: u64 = 0;
    let mut caught_up = false;
    let mut task_gone = false;
    loop {
        version_rx.get_and_update();
        // Catching up runs as a boxed future of its own: its state is large and needed only
        // while it runs, and the stream's task is left small while it waits, which is most of
        // its life (a task's size is its largest state at any await).
        let waiting = Box::pin(async {
            let tail = match read_tail(game, store, cursor, replica.is_none()).await {
                Ok(tail) => tail,
                Err(error) => {
                    let _ = tx.send(Err(error.into())).await;
                    return None;
                }
            };
            // Start from the latest snapshot when the stream needs nothing before it.
            let mut tail = tail;
            if replica.is_none()
                && let Some(snapshot) = tail.base.take()
                && (from_now || snapshot.0 <= after)
            {
                let (base, state) = *snapshot;
                replica = Some(Box::new(state));
                cursor = base;
                tail = match read_tail(game, store, cursor, false).await {
                    Ok(tail) => tail,
                    Err(error) => {
                        let _ = tx.send(Err(error.into())).await;
                        return None;
                    }
                };
            }
            // Events before the snapshot the task holds come from the store.
            let batch = match tail.events.take() {
                Some(batch) => batch,
                None => match store.read(&game.name, cursor).await {
                    Ok(mut events) => {
                        events
                            .truncate(usize::try_from(tail.version - cursor).unwrap_or(usize::MAX));
                        events
                    }
                    Err(error) => {
                        let _ = tx.send(Err(ServiceError::store(&error).into())).await;
                        return None;
                    }
                },
            };
            let fresh = !batch.is_empty();
            let waiting = replica.is_none() && tail.version == 0;
            if waiting && !task_gone {
                match game.ask(|reply| Command::Describe { reply }).await {
                    Ok(info) => {
                        let lobby = convert::game(&info);
                        if lobby_sent.as_deref() != Some(&lobby) {
                            lobby_sent = Some(Box::new(lobby.clone()));
                            send(Kind::Lobby(lobby)).await?;
                        }
                    }
                    Err(ServiceError::Stopping) => task_gone = true,
                    Err(error) => {
                        let _ = tx.send(Err(error.into())).await;
                        return None;
                    }
                }
            }
            if fresh {
                metrics.observe_lag(batch.len());
            }
            // A log with no game (an expired lobby's) has no view to start from: its events are sent.
            let lobby_only = replica.is_none() && batch.iter().all(|e| project_lobby(e).is_some());
            if from_now && view_due && !lobby_only {
                after = cursor + batch.len() as u64;
            }
            // The view, when the stream starts exactly at the snapshot it holds.
            if view_due
                && cursor == after
                && (!from_now || batch.is_empty())
                && let Some(state) = replica.as_ref()
            {
                view_due = false;
                send(view_of(state)).await?;
            }
            for event in batch {
                cursor += 1;
                match replica.as_mut() {
                    Some(state) => state.apply(&event),
                    None => replica = Game::replay([&event]).ok().map(Box::new),
                }
                let Some(state) = replica.as_ref() else {
                    if let (true, Some(seen)) = (cursor > after, project_lobby(&event)) {
                        send(Kind::Event(convert::event(
                            cursor,
                            &seen,
                            tail.lobby.as_deref(),
                        )))
                        .await?;
                    }
                    continue;
                };
                if cursor == after && view_due {
                    view_due = false;
                    send(view_of(state)).await?;
                }
                if cursor > after {
                    let seen = convert::event(
                        cursor,
                        &project(state, &event, viewer),
                        tail.lobby.as_deref(),
                    );
                    send(Kind::Event(seen)).await?;
                }
            }
            // A prompt after new events, and once when the stream starts (a client resuming at the
            // current version learns that it may act).
            let prompt_due = (fresh || !caught_up) && cursor >= after;
            if let (true, Viewer::Seat(seat), Some(state)) = (prompt_due, viewer, &replica) {
                let legal = state.legal_actions(seat);
                if !legal.is_empty() {
                    let prompt = pb::Prompt {
                        version: cursor,
                        legal_actions: legal.into_iter().map(convert::action).collect(),
                        turn_deadline: deadline_timestamp(tail.deadline),
                    };
                    send(Kind::Prompt(prompt)).await?;
                }
            }
            if !caught_up && cursor >= after && (lobby_only && fresh || !(view_due && from_now)) {
                caught_up = true;
                send(Kind::CaughtUp(pb::CaughtUp { version: cursor })).await?;
            }
            Some(waiting)
        })
        .await?;
        if task_gone {
            // The game is over and out of memory; everything was sent.
            return Some(());
        }
        tokio::select! {
            // New events, or a change of the lobby (the version as it was).
            changed = version_rx.changed() => {
                if changed.is_err() {
                    // The task stopped: read once more (from the store), then end.
                    task_gone = true;
                }
            }
            () = tokio::time::sleep(lobby_poll), if waiting && store.shared() => {}
            () = tokio::time::sleep(heartbeat) => send(Kind::Heartbeat(pb::Heartbeat {})).await?,
        }
    }
}

/// A `FindMatch` stream: how the wait goes, at once and each second, then the match. Ends (and
/// leaves the queue) when the client goes or the server stops.
pub(crate) fn find_match(
    registry: Arc<Registry>,
    matchmaker: Arc<crate::service::matchmaker::Matchmaker>,
    mut ticket: crate::service::matchmaker::Ticket,
    slot: StreamSlot,
) -> Stream<pb::FindMatchResponse> {
    use pb::find_match_response::Update;
    Stream::new(move |tx| async move {
        let _slot = slot;
        let mut stopping = registry.stopping.subscribe();
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            tokio::select! {
                found = &mut ticket.found => {
                    let message = match found {
                        Ok(Ok((info, seat, token))) => Ok(pb::FindMatchResponse {
                            update: Some(Update::Found(pb::MatchFound {
                                game: Some(convert::game(&info)),
                                seat: u32::try_from(seat).unwrap_or(u32::MAX),
                                seat_token: token,
                            })),
                        }),
                        Ok(Err(e)) => Err(e.into()),
                        Err(_) => Err(ServiceError::Stopping.into()),
                    };
                    let _ = tx.send(message).await;
                    return;
                }
                _ = tick.tick() => {
                    let Some(waiting) = matchmaker.waiting(&ticket) else { continue };
                    let message = pb::FindMatchResponse {
                        update: Some(Update::Waiting(pb::MatchWaiting {
                            players_queued: waiting.queued,
                            waited_seconds: u32::try_from(waiting.waited.as_secs())
                                .unwrap_or(u32::MAX),
                            rating_window: waiting.window,
                        })),
                    };
                    if tx.send(Ok(message)).await.is_err() {
                        return;
                    }
                }
                _ = async { stopping.wait_for(|s| *s).await.is_ok() } => {
                    let _ = tx.send(Err(ServiceError::Stopping.into())).await;
                    return;
                }
            }
        }
    })
}
