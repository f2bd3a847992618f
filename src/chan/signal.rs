//! A live game's version as its streams follow it: the number of events in its log, and a
//! wake-up for every change, or for a change of the lobby that leaves the number as it was.
//!
//! Every live game holds one for as long as it lives. tokio's `watch` channel would do, but it
//! costs 344 bytes a game (it spreads its waiters over eight `Notify`s, for channels with many
//! more receivers than a game's few streams); this is an atomic value, a change counter and one
//! `Notify`, about 60 bytes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

/// A signal holding `value`.
pub(crate) fn channel(value: u64) -> (Sender, Receiver) {
    let shared = Arc::new(Shared {
        value: AtomicU64::new(value),
        changes: AtomicU64::new(0),
        notify: Notify::new(),
    });
    let receiver = Receiver {
        shared: shared.clone(),
        seen: 0,
    };
    (Sender(shared), receiver)
}

struct Shared {
    value: AtomicU64,
    /// Twice the number of changes, plus [`CLOSED`] once the sender is gone.
    changes: AtomicU64,
    notify: Notify,
}

/// The low bit of `changes`: the sender is gone, no change will come.
const CLOSED: u64 = 1;

/// One change, in `changes`.
const CHANGE: u64 = 2;

/// The game's side; dropping it tells every receiver that no change will come.
pub(crate) struct Sender(Arc<Shared>);

impl Sender {
    /// Sets the value, and wakes every receiver.
    pub fn send_replace(&self, value: u64) {
        self.0.value.store(value, Ordering::Release);
        self.touch();
    }

    /// Wakes every receiver, the value unchanged.
    pub fn touch(&self) {
        self.0.changes.fetch_add(CHANGE, Ordering::AcqRel);
        self.0.notify.notify_waiters();
    }

    /// A receiver that has seen the value as it is now.
    pub fn subscribe(&self) -> Receiver {
        Receiver {
            shared: self.0.clone(),
            seen: self.0.changes.load(Ordering::Acquire) & !CLOSED,
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.0.changes.fetch_or(CLOSED, Ordering::AcqRel);
        self.0.notify.notify_waiters();
    }
}

/// A follower's side; clones have seen what the original had seen.
#[derive(Clone)]
pub(crate) struct Receiver {
    shared: Arc<Shared>,
    /// The changes this receiver has seen (without [`CLOSED`]).
    seen: u64,
}

/// The sender is gone, and every change it made was seen.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Closed;

impl Receiver {
    /// The value now.
    pub fn get(&self) -> u64 {
        self.shared.value.load(Ordering::Acquire)
    }

    /// The value now, counting every change so far as seen.
    pub fn get_and_update(&mut self) -> u64 {
        self.seen = self.shared.changes.load(Ordering::Acquire) & !CLOSED;
        self.get()
    }

    /// Waits for a change not yet seen, and counts it seen; `Err` once the sender is gone with
    /// nothing unseen. Cancel-safe.
    pub async fn changed(&mut self) -> Result<(), Closed> {
        loop {
            // Registered before the counter is read: a change made in between wakes it.
            let notified = self.shared.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let changes = self.shared.changes.load(Ordering::Acquire);
            if changes & !CLOSED != self.seen {
                self.seen = changes & !CLOSED;
                return Ok(());
            }
            if changes & CLOSED != 0 {
                return Err(Closed);
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn woken(receiver: &mut Receiver) -> Option<Result<(), Closed>> {
        tokio::time::timeout(Duration::from_millis(10), receiver.changed())
            .await
            .ok()
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_value_wakes_every_receiver_once() {
        let (tx, mut a) = channel(3);
        let mut b = tx.subscribe();
        assert_eq!(woken(&mut a).await, None, "nothing changed yet");
        tx.send_replace(5);
        assert_eq!(woken(&mut a).await, Some(Ok(())));
        assert_eq!(woken(&mut b).await, Some(Ok(())));
        assert_eq!((a.get(), b.get()), (5, 5));
        assert_eq!(woken(&mut a).await, None, "the change was seen");
    }

    #[tokio::test(start_paused = true)]
    async fn a_touch_wakes_with_the_value_unchanged() {
        let (tx, mut rx) = channel(7);
        tx.touch();
        assert_eq!(woken(&mut rx).await, Some(Ok(())));
        assert_eq!(rx.get(), 7);
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_for_a_change_from_another_task() {
        let (tx, mut rx) = channel(0);
        let waiting = tokio::spawn(async move {
            let changed = rx.changed().await;
            (changed, rx.get())
        });
        tokio::task::yield_now().await;
        tx.send_replace(9);
        assert_eq!(waiting.await.ok(), Some((Ok(()), 9)));
    }

    #[tokio::test(start_paused = true)]
    async fn get_and_update_counts_changes_seen() {
        let (tx, mut rx) = channel(1);
        tx.send_replace(2);
        assert_eq!(rx.get_and_update(), 2);
        assert_eq!(woken(&mut rx).await, None);
        let mut late = tx.subscribe();
        assert_eq!(
            woken(&mut late).await,
            None,
            "a new receiver has seen the value"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_clone_has_seen_what_its_original_had_seen() {
        let (tx, mut rx) = channel(0);
        tx.send_replace(1);
        let mut copy = rx.clone();
        assert_eq!(woken(&mut rx).await, Some(Ok(())));
        assert_eq!(woken(&mut copy).await, Some(Ok(())));
    }

    #[tokio::test(start_paused = true)]
    async fn the_sender_gone_ends_the_wait_after_the_last_change() {
        let (tx, mut rx) = channel(0);
        tx.send_replace(4);
        drop(tx);
        assert_eq!(woken(&mut rx).await, Some(Ok(())), "the last change first");
        assert_eq!(rx.get(), 4);
        assert_eq!(woken(&mut rx).await, Some(Err(Closed)));
    }

    #[tokio::test]
    async fn a_receiver_waiting_when_the_sender_leaves_wakes() {
        let (tx, mut rx) = channel(0);
        let waiting = tokio::spawn(async move { rx.changed().await });
        tokio::task::yield_now().await;
        drop(tx);
        assert_eq!(waiting.await.ok(), Some(Err(Closed)));
    }

    #[test]
    fn the_signal_is_small() {
        // tokio's watch channel: 344 bytes.
        assert!(
            std::mem::size_of::<Shared>() <= 64,
            "{} bytes",
            std::mem::size_of::<Shared>()
        );
    }
}
