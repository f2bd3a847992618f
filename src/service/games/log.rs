//! A game's log as one server holds it: the state at a base version (the latest snapshot) and
//! the events after it. A long game keeps only its recent events in memory; anything older is
//! read from the store, which has every event.

use crate::rules::{Event, Game};

/// Events between snapshots: after this many events beyond the base, the game's state is
/// written to the store as a snapshot and the events before it leave memory.
pub(crate) const SNAPSHOT_EVERY: usize = 256;

/// The state at `base` and the events after it.
#[derive(Default)]
pub(crate) struct EventLog {
    base: u64,
    /// Boxed: most games never reach a snapshot, and an unboxed `None` is as large as a `Game`.
    base_state: Option<Box<Game>>,
    events: Vec<Event>,
}

impl EventLog {
    /// A whole log from event 1.
    pub(crate) fn new(events: Vec<Event>) -> EventLog {
        EventLog {
            base: 0,
            base_state: None,
            events,
        }
    }

    /// The state after event `base` and the events after it.
    pub(crate) fn from_snapshot(base: u64, state: Game, events: Vec<Event>) -> EventLog {
        EventLog {
            base,
            base_state: Some(Box::new(state)),
            events,
        }
    }

    /// The number of events in the game's log (its version).
    pub(crate) fn len(&self) -> u64 {
        self.base + self.events.len() as u64
    }

    /// Appends one event.
    pub(crate) fn push(&mut self, event: Event) {
        self.events.push(event);
    }

    /// The events after `after` held in memory, if `after` is not before the base.
    pub(crate) fn since(&self, after: u64) -> Option<&[Event]> {
        let from = usize::try_from(after.checked_sub(self.base)?).ok()?;
        self.events.get(from..)
    }

    /// The base version and the state at it (`None` at version 0).
    pub(crate) fn base(&self) -> (u64, Option<&Game>) {
        (self.base, self.base_state.as_deref())
    }

    /// Whether enough events have come since the base to take a snapshot.
    pub(crate) fn snapshot_due(&self) -> bool {
        self.events.len() >= SNAPSHOT_EVERY
    }

    /// After a snapshot of `state` at the current version was stored: it becomes the base.
    pub(crate) fn rebase(&mut self, state: Game) {
        self.base = self.len();
        self.base_state = Some(Box::new(state));
        self.events.clear();
    }
}
