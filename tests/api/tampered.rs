//! A memory store that tests slow down or step in on: its lobby records can take a while to
//! save, it can say that other servers share it, and a test can run another server's work
//! between one append's commit and its return, and it counts the request ids it is asked
//! for. Everything else goes straight to the memory store.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast;
use unoflip::rules::Event;
use unoflip::store::{
    Change, Committed, Coordination, EntryKind, Events, Lease, MemoryStore, Records, StoreFuture,
};

use super::harness::InProcess;

/// Work run after an append is committed and before it returns: given the memory store, the
/// store's announcements and the game.
pub type AfterAppend = Box<
    dyn FnOnce(
            Arc<MemoryStore>,
            broadcast::Sender<Change>,
            String,
        ) -> Pin<Box<dyn Future<Output = ()> + Send>>
        + Send,
>;

pub struct Tampered {
    pub inner: Arc<MemoryStore>,
    /// How long each lobby record takes to save.
    pub save_delay: Duration,
    /// Whether it says other servers append to it (the registry then follows its
    /// announcements).
    pub shared: bool,
    /// Its announcements: each append's, and whatever a test sends.
    pub changes: broadcast::Sender<Change>,
    /// Run once, after the next append.
    pub after_next_append: Mutex<Option<AfterAppend>>,
    /// How many times a request id was looked up ([`EventStore::request`]).
    pub request_reads: AtomicUsize,
    /// How many times a game's request ids were read ([`EventStore::requests`]).
    pub requests_reads: AtomicUsize,
}

impl Tampered {
    /// An empty store that behaves like the memory store.
    pub fn new() -> Tampered {
        Tampered {
            inner: Arc::new(MemoryStore::new()),
            save_delay: Duration::ZERO,
            shared: false,
            changes: broadcast::channel(64).0,
            after_next_append: Mutex::new(None),
            request_reads: AtomicUsize::new(0),
            requests_reads: AtomicUsize::new(0),
        }
    }
}

/// A server on `store`, with the unfinished games it holds recovered (as `serve` starts).
pub async fn start_server(store: &Arc<Tampered>) -> InProcess {
    let games = unoflip::service::Registry::new(store.clone(), unoflip::service::Config::default());
    games.recover().await.unwrap();
    InProcess::serve(games).await
}

/// A move of the turn seat's (not a UNO call or catch) under way on `client`, its commit held
/// in `store` once done, until the second half is sent (or dropped). Returns when it is held.
pub async fn a_held_move(
    store: &Tampered,
    client: &super::harness::Client,
    game: &str,
    tokens: &[String],
) -> (
    tokio::task::JoinHandle<Result<unoflip::proto::SubmitActionResponse, tonic::Status>>,
    tokio::sync::oneshot::Sender<()>,
) {
    use super::harness::{submit, view};
    use unoflip::proto::action::Kind;
    let (entered, held) = tokio::sync::oneshot::channel::<()>();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    *store
        .after_next_append
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Box::new(move |_, _, _| {
        Box::pin(async move {
            let _ = entered.send(());
            let _ = released.await;
        })
    }));
    let mut mover = client.clone();
    let turn = view(&mut mover, game, None).await.turn as usize;
    let token = tokens[turn].clone();
    let action = view(&mut mover, game, Some(&token))
        .await
        .legal_actions
        .into_iter()
        .find(|a| !matches!(a.kind, Some(Kind::CatchUno(_) | Kind::CallUno(_))))
        .unwrap();
    let game = game.to_owned();
    let moving = tokio::spawn(async move { submit(&mut mover, &game, &token, action).await });
    held.await.unwrap();
    (moving, release)
}

impl Events for Tampered {
    fn append<'a>(
        &'a self,
        game: &'a str,
        expected: u64,
        events: &'a [Event],
        request: Option<&'a str>,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let version = self.inner.append(game, expected, events, request).await?;
            let _ = self.changes.send(Change::Appended {
                game: game.to_owned(),
                version,
            });
            let hook = self
                .after_next_append
                .lock()
                .ok()
                .and_then(|mut h| h.take());
            if let Some(hook) = hook {
                hook(self.inner.clone(), self.changes.clone(), game.to_owned()).await;
            }
            Ok(version)
        })
    }

    fn request<'a>(
        &'a self,
        game: &'a str,
        request: &'a str,
    ) -> StoreFuture<'a, Option<(u64, u64)>> {
        self.request_reads.fetch_add(1, Ordering::Relaxed);
        self.inner.request(game, request)
    }

    fn requests<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<String>> {
        self.requests_reads.fetch_add(1, Ordering::Relaxed);
        self.inner.requests(game, after)
    }

    fn read<'a>(&'a self, game: &'a str, after: u64) -> StoreFuture<'a, Vec<Event>> {
        self.inner.read(game, after)
    }

    fn read_all(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<Committed>> {
        self.inner.read_all(after, limit)
    }

    fn last_position(&self) -> StoreFuture<'_, u64> {
        self.inner.last_position()
    }

    fn count_after(&self, after: u64, cap: u64) -> StoreFuture<'_, u64> {
        self.inner.count_after(after, cap)
    }

    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    fn shared(&self) -> bool {
        self.shared
    }
}

impl Records for Tampered {
    fn save_snapshot<'a>(
        &'a self,
        game: &'a str,
        version: u64,
        state: &'a str,
    ) -> StoreFuture<'a, ()> {
        self.inner.save_snapshot(game, version, state)
    }

    fn snapshot<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(u64, String)>> {
        self.inner.snapshot(game)
    }

    fn save_game<'a>(
        &'a self,
        game: &'a str,
        record: &'a str,
        finished: bool,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            tokio::time::sleep(self.save_delay).await;
            self.inner.save_game(game, record, finished).await
        })
    }

    fn record<'a>(&'a self, game: &'a str) -> StoreFuture<'a, Option<(String, bool)>> {
        self.inner.record(game)
    }

    fn unfinished(&self) -> StoreFuture<'_, Vec<(String, String)>> {
        self.inner.unfinished()
    }

    fn put_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
        create_only: bool,
    ) -> StoreFuture<'a, bool> {
        self.inner.put_entry(kind, key, value, create_only)
    }

    fn remove_entry<'a>(
        &'a self,
        kind: EntryKind,
        key: &'a str,
        value: &'a str,
    ) -> StoreFuture<'a, bool> {
        self.inner.remove_entry(kind, key, value)
    }

    fn entry<'a>(&'a self, kind: EntryKind, key: &'a str) -> StoreFuture<'a, Option<String>> {
        self.inner.entry(kind, key)
    }

    fn entries<'a>(
        &'a self,
        kind: EntryKind,
        prefix: &'a str,
        limit: usize,
    ) -> StoreFuture<'a, Vec<(String, String)>> {
        self.inner.entries(kind, prefix, limit)
    }
}

impl Coordination for Tampered {
    fn cursor<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<u64>> {
        self.inner.cursor(name)
    }

    fn save_cursor<'a>(&'a self, name: &'a str, position: u64) -> StoreFuture<'a, ()> {
        self.inner.save_cursor(name, position)
    }

    fn lease<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<Box<dyn Lease>>> {
        self.inner.lease(name)
    }
}
