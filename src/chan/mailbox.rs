//! A live game's command channel: bounded, closed by the game's task when it leaves memory, and
//! small, since every live game holds one for as long as it lives, idle or not.
//!
//! tokio's `mpsc` channel costs an idle game 800 bytes: its shared part is padded to cache lines
//! (512 bytes) and its first block holds 32 slots (288). This one is a mutex-guarded queue, a
//! semaphore that counts the free slots (fair and cancel-safe, as tokio's bounded send is) and the
//! receiver's waker, kept under the queue's lock: about 130 bytes, and the queue holds storage
//! only while commands wait in it. Waiting in `recv` costs the waiting task only a pointer (a
//! `Notify`'s wait would cost it 80 bytes more, in every idle game's task).
//!
//! What the game's task relies on, as with tokio's channel:
//! - `send` waits while the queue is full, and gives the value back once the channel is closed;
//! - `close` refuses every later send, and `recv` still hands out what was queued before it, then
//!   `None`;
//! - `recv` answers `None` once every sender is gone and the queue is empty;
//! - a `recv` dropped while waiting (a `select!` that took another branch) loses nothing.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::sync::Semaphore;

/// A queue whose storage grew past this many slots (a burst of commands) gives it back once
/// empty; smaller storage is kept for the next command.
const KEEP_SLOTS: usize = 8;

/// A channel that holds at most `bound` values.
pub(crate) fn channel<T>(bound: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue {
            values: VecDeque::new(),
            closed: false,
            receiver: None,
        }),
        space: Semaphore::new(bound),
        senders: AtomicUsize::new(1),
    });
    (Sender(shared.clone()), Receiver(shared))
}

struct Shared<T> {
    queue: Mutex<Queue<T>>,
    /// One permit per free slot; closed with the channel, which ends every waiting send.
    space: Semaphore,
    /// Live `Sender`s.
    senders: AtomicUsize,
}

struct Queue<T> {
    values: VecDeque<T>,
    /// Set by the receiver: no value is taken from then on. Checked under the lock by every
    /// push, so none gets in after it.
    closed: bool,
    /// The receiver waiting for a value (or for the last sender to leave), woken by either.
    receiver: Option<Waker>,
}

impl<T> Shared<T> {
    /// The queue. Nothing panics while holding the lock, and a queue is consistent after every
    /// operation, so a poisoned lock's queue is still good.
    fn queue(&self) -> MutexGuard<'_, Queue<T>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the receiver if it waits.
    fn wake_receiver(&self) {
        // Woken outside the lock: the receiver's task may run at once and take it.
        let waiting = self.queue().receiver.take();
        if let Some(waker) = waiting {
            waker.wake();
        }
    }
}

/// The sending half; clones share the channel.
pub(crate) struct Sender<T>(Arc<Shared<T>>);

impl<T> Sender<T> {
    /// Queues `value`, waiting while the queue is full; gives it back if the channel is closed.
    /// Cancel-safe: dropped while waiting, it queues nothing and holds no slot.
    pub async fn send(&self, value: T) -> Result<(), T> {
        match self.0.space.acquire().await {
            Ok(permit) => {
                // The slot is given back by the receiver when it takes the value.
                permit.forget();
                self.push(value)
            }
            Err(_closed) => Err(value),
        }
    }

    /// Queues `value` if there is room at once; gives it back otherwise.
    pub fn try_send(&self, value: T) -> Result<(), T> {
        match self.0.space.try_acquire() {
            Ok(permit) => {
                permit.forget();
                self.push(value)
            }
            Err(_) => Err(value),
        }
    }

    /// Queues `value` in a slot already taken.
    fn push(&self, value: T) -> Result<(), T> {
        let mut queue = self.0.queue();
        if queue.closed {
            return Err(value);
        }
        queue.values.push_back(value);
        let waiting = queue.receiver.take();
        drop(queue);
        if let Some(waker) = waiting {
            waker.wake();
        }
        Ok(())
    }

    /// Whether the receiver closed the channel or is gone.
    pub fn is_closed(&self) -> bool {
        self.0.queue().closed
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.senders.fetch_add(1, Ordering::Relaxed);
        Sender(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.0.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The receiver may be waiting for a value that can no longer come. It reads the count
            // under the lock, so it either sees none left or has its waker there to be taken.
            self.0.wake_receiver();
        }
    }
}

/// The receiving half, the game's task's.
pub(crate) struct Receiver<T>(Arc<Shared<T>>);

impl<T> Receiver<T> {
    /// The next value; `None` once the channel is closed or every sender is gone, and nothing
    /// is queued. Cancel-safe: dropped while waiting, it has taken nothing.
    pub fn recv(&mut self) -> impl Future<Output = Option<T>> + '_ {
        std::future::poll_fn(|cx| self.poll_recv(cx))
    }

    /// [`Receiver::recv`], polled: the queue is looked at and the waker left under one lock, so
    /// a value pushed after the look finds the waker and wakes it.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut queue = self.0.queue();
        if let Some(value) = queue.values.pop_front() {
            if queue.values.is_empty() && queue.values.capacity() > KEEP_SLOTS {
                queue.values = VecDeque::new();
            }
            drop(queue);
            self.0.space.add_permits(1);
            return Poll::Ready(Some(value));
        }
        if queue.closed || self.0.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        match &mut queue.receiver {
            Some(waker) => waker.clone_from(cx.waker()),
            none => *none = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The first queued value that `pick` wants, taken out of its place (the others keep
    /// theirs); waits while there is none. It never ends otherwise: the caller waits for it
    /// beside other work. Cancel-safe, as [`Receiver::recv`].
    pub fn take_first(&mut self, pick: fn(&T) -> bool) -> impl Future<Output = T> + '_ {
        std::future::poll_fn(move |cx| {
            let mut queue = self.0.queue();
            if let Some(value) = queue
                .values
                .iter()
                .position(pick)
                .and_then(|i| queue.values.remove(i))
            {
                drop(queue);
                self.0.space.add_permits(1);
                return Poll::Ready(value);
            }
            match &mut queue.receiver {
                Some(waker) => waker.clone_from(cx.waker()),
                none => *none = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
    }

    /// Refuses every later send (each gets its value back); what was queued before is still
    /// received.
    pub fn close(&mut self) {
        let mut queue = self.0.queue();
        queue.closed = true;
        self.0.space.close();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.close();
        // Dropped outside the lock: a value's drop may do anything (answer a caller). The
        // waker goes too: it would keep the finished task's memory for as long as a sender
        // lives.
        let (queued, waker) = {
            let mut queue = self.0.queue();
            (std::mem::take(&mut queue.values), queue.receiver.take())
        };
        drop(queued);
        drop(waker);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn values_come_out_in_order() {
        let (tx, mut rx) = channel(4);
        for i in 0..3 {
            assert_eq!(tx.send(i).await, Ok(()));
        }
        for i in 0..3 {
            assert_eq!(rx.recv().await, Some(i));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_queue_makes_send_wait_until_a_value_is_taken() {
        let (tx, mut rx) = channel(2);
        assert_eq!(tx.try_send(1), Ok(()));
        assert_eq!(tx.try_send(2), Ok(()));
        assert_eq!(tx.try_send(3), Err(3));
        let waiting = tokio::time::timeout(Duration::from_secs(1), tx.send(3)).await;
        assert!(waiting.is_err(), "a send into a full queue must wait");
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(tx.send(3).await, Ok(()));
        assert_eq!(rx.recv().await, Some(2));
        assert_eq!(rx.recv().await, Some(3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancelled_send_holds_no_slot() {
        let (tx, mut rx) = channel(1);
        assert_eq!(tx.try_send(1), Ok(()));
        for _ in 0..3 {
            let cancelled = tokio::time::timeout(Duration::from_millis(10), tx.send(9)).await;
            assert!(cancelled.is_err());
        }
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(tx.try_send(2), Ok(()));
        assert_eq!(tx.try_send(3), Err(3), "the bound is still one");
        assert_eq!(rx.recv().await, Some(2));
    }

    #[tokio::test(start_paused = true)]
    async fn take_first_takes_the_first_value_wanted_and_leaves_the_others_in_order() {
        let (tx, mut rx) = channel(4);
        for i in [1, 2, 4, 6] {
            assert_eq!(tx.try_send(i), Ok(()));
        }
        assert_eq!(tx.try_send(8), Err(8), "the queue is full");
        assert_eq!(rx.take_first(|v| v % 2 == 0).await, 2);
        assert_eq!(tx.try_send(9), Ok(()), "the value taken gave its slot back");
        let none = tokio::time::timeout(Duration::from_secs(1), rx.take_first(|v| *v > 100)).await;
        assert!(none.is_err(), "nothing wanted is queued: it waits");
        assert_eq!(rx.recv().await, Some(1), "the others kept their order");
        let waiting = tokio::spawn(async move {
            let value = rx.take_first(|v| *v > 100).await;
            (value, rx)
        });
        tokio::task::yield_now().await;
        assert_eq!(tx.send(101).await, Ok(()));
        let (value, mut rx) = waiting.await.expect("the waiting task ends");
        assert_eq!(value, 101, "a value sent later wakes it");
        for i in [4, 6, 9] {
            assert_eq!(rx.recv().await, Some(i));
        }
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_for_a_value_from_another_task() {
        let (tx, mut rx) = channel(4);
        let receiving = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        assert_eq!(tx.send(7).await, Ok(()));
        assert_eq!(receiving.await.ok(), Some(Some(7)));
    }

    #[tokio::test]
    async fn close_refuses_later_sends_but_hands_out_what_was_queued() {
        let (tx, mut rx) = channel(4);
        assert_eq!(tx.send(1).await, Ok(()));
        assert!(!tx.is_closed());
        rx.close();
        assert!(tx.is_closed());
        assert_eq!(tx.send(2).await, Err(2));
        assert_eq!(tx.try_send(3), Err(3));
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn close_gives_a_waiting_send_its_value_back() {
        let (tx, mut rx) = channel(1);
        assert_eq!(tx.try_send(1), Ok(()));
        let waiting = tokio::spawn({
            let tx = tx.clone();
            async move { tx.send(2).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        rx.close();
        assert_eq!(waiting.await.ok(), Some(Err(2)));
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn recv_ends_once_every_sender_is_gone() {
        let (tx, mut rx) = channel(4);
        let other = tx.clone();
        assert_eq!(other.send(5).await, Ok(()));
        drop(tx);
        drop(other);
        assert_eq!(rx.recv().await, Some(5));
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn a_receiver_waiting_when_the_last_sender_leaves_wakes_with_none() {
        let (tx, mut rx) = channel::<u8>(4);
        let receiving = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        drop(tx);
        assert_eq!(receiving.await.ok(), Some(None));
    }

    #[tokio::test]
    async fn a_dropped_receiver_closes_the_channel_and_drops_the_queue() {
        let (tx, rx) = channel(4);
        let value = Arc::new(());
        assert!(tx.send(value.clone()).await.is_ok());
        drop(rx);
        assert!(tx.is_closed());
        assert_eq!(Arc::strong_count(&value), 1, "the queued value was dropped");
        assert!(tx.send(value).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_recv_dropped_while_waiting_loses_nothing() {
        let (tx, mut rx) = channel(4);
        let gave_up = tokio::time::timeout(Duration::from_millis(10), rx.recv()).await;
        assert!(gave_up.is_err());
        assert_eq!(tx.send(3).await, Ok(()));
        assert_eq!(rx.recv().await, Some(3));
    }

    #[tokio::test]
    async fn a_burst_of_values_leaves_no_storage_behind() {
        let (tx, mut rx) = channel(64);
        for i in 0..40 {
            assert_eq!(tx.try_send(i), Ok(()));
        }
        for i in 0..40 {
            assert_eq!(rx.recv().await, Some(i));
        }
        assert_eq!(rx.0.queue().values.capacity(), 0);
    }

    #[test]
    fn waiting_for_a_value_costs_the_waiting_task_a_pointer() {
        let (_tx, mut rx) = channel::<Box<u64>>(1);
        let waiting = rx.recv();
        assert_eq!(
            std::mem::size_of_val(&waiting),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn the_channel_is_small() {
        // The shared part, without `Arc`'s two counters: tokio's channel is 512 bytes and its
        // first block 288.
        assert!(
            std::mem::size_of::<Shared<Box<u64>>>() <= 112,
            "{} bytes",
            std::mem::size_of::<Shared<Box<u64>>>()
        );
    }

    #[test]
    fn a_dropped_receiver_lets_go_of_its_waker_while_senders_live() {
        struct Task;
        impl std::task::Wake for Task {
            fn wake(self: Arc<Self>) {}
        }
        let task = Arc::new(Task);
        let waker = Waker::from(task.clone());
        let (tx, mut rx) = channel::<u32>(2);
        let mut cx = Context::from_waker(&waker);
        assert_eq!(rx.poll_recv(&mut cx), Poll::Pending);
        drop(waker);
        assert_eq!(
            Arc::strong_count(&task),
            2,
            "the waiting receiver's waker is kept"
        );
        drop(rx);
        assert_eq!(Arc::strong_count(&task), 1, "and let go with the receiver");
        assert_eq!(tx.try_send(1), Err(1));
    }
}
