//! Quick play (`FindMatch`): registered players queue for the options they want; players who
//! asked for the same options are grouped by rating, with a window that widens as they wait,
//! into a new game that starts at once. A player who allows it gets built-in bots in the seats
//! nobody took once it waited as long as it asked.
//!
//! The queue lives in the memory of the server that matches (`serve --matchmaking`, on by
//! default): several servers on one store name one of them to match and the others refuse
//! `FindMatch` (`MATCHMAKING_ELSEWHERE`); the games it makes are in the store, playable through
//! any server. A restart empties the queue: the waiting streams end with `SERVER_STOPPING` and
//! their clients ask again.

use crate::service::reason::Reason;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use rand::seq::SliceRandom;

use crate::bots::Level;
use crate::rules::{Seat, Setup};
use crate::service::accounts::players::Caller;
use crate::service::accounts::ratings::ruleset_key;
use crate::service::error::ServiceError;
use crate::service::games::lobby::GameInfo;
use crate::service::games::{NewGame, Registry};

/// How often the queue is looked at, besides when someone joins it.
const TICK: Duration = Duration::from_millis(250);
/// Rating points (mu) of the window at first, and added per second waited.
const WINDOW_START: f64 = 5.0;
const WINDOW_PER_SECOND: f64 = 2.5;

/// What a queued player gets: the game, its seat and the seat's token.
pub type Found = Result<(GameInfo, Seat, String), ServiceError>;

/// One player waiting.
struct Entry {
    id: u64,
    /// `players/{id}`.
    player: String,
    /// The player, as it proved to be (its seat tokens derive from its seat key).
    caller: Caller,
    /// Its rating in the ruleset asked for.
    mu: f64,
    /// The options, as a key: only equal keys are grouped.
    key: String,
    new: NewGame,
    /// Built-in bots fill the empty seats after this wait, if allowed.
    bot_fill_after: Option<Duration>,
    /// The levels of the bots that fill: each level once (in random order), then again.
    fill_levels: Vec<Level>,
    since: Instant,
    found: oneshot::Sender<Found>,
}

impl Entry {
    /// The rating window after waiting until `now`.
    fn window(&self, now: Instant) -> f64 {
        WINDOW_START + WINDOW_PER_SECOND * now.duration_since(self.since).as_secs_f64()
    }
}

/// A player's place in the queue; leaving it (dropping this) leaves the queue.
pub struct Ticket {
    id: u64,
    matchmaker: Weak<Matchmaker>,
    /// The match, once found.
    pub found: oneshot::Receiver<Found>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(m) = self.matchmaker.upgrade() {
            m.leave(self.id);
        }
    }
}

/// The queue.
#[derive(Default)]
pub struct Matchmaker {
    queue: Mutex<Vec<Entry>>,
    next: std::sync::atomic::AtomicU64,
    wake: Notify,
}

/// How the queue looks to one player.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Waiting {
    /// Players queued for the same options, this one included.
    pub queued: u32,
    /// How long it has waited.
    pub waited: Duration,
    /// The rating window now.
    pub window: f64,
}

impl Matchmaker {
    /// An empty queue, matched by a task that stops with `registry`.
    pub fn start(registry: Weak<Registry>) -> Arc<Matchmaker> {
        let matchmaker = Arc::new(Matchmaker::default());
        tokio::spawn(run(Arc::downgrade(&matchmaker), registry));
        matchmaker
    }

    /// Queues the (authenticated) `caller` for games like `new`.
    /// Registered bots are matched with bots only (the bot ladder); the seats bots fill play
    /// at `fill_levels` (the options' level when empty).
    pub fn join(
        self: &Arc<Self>,
        caller: Caller,
        new: NewGame,
        bot_fill_after: Option<Duration>,
        fill_levels: Vec<Level>,
    ) -> Result<Ticket, ServiceError> {
        check(&new)?;
        let player = &caller.player;
        let mu = player
            .ratings
            .get(ruleset_key(new.ruleset))
            .copied()
            .unwrap_or_default()
            .mu;
        let player_name = player.name.clone();
        let key = format!(
            "{}|{}",
            if player.bot { "bots" } else { "people" },
            key(&new)
        );
        let mut queue = self
            .queue
            .lock()
            .map_err(|_| ServiceError::unavailable("matchmaking queue lock poisoned"))?;
        if queue
            .iter()
            .any(|e| e.player == player_name && !e.found.is_closed())
        {
            return Err(ServiceError::precondition(
                Reason::AlreadyMatching,
                "this player is already looking for a game: close that FindMatch first",
            ));
        }
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (found, receiver) = oneshot::channel();
        queue.push(Entry {
            id,
            player: player_name,
            caller,
            mu,
            key,
            new,
            bot_fill_after,
            fill_levels,
            since: Instant::now(),
            found,
        });
        drop(queue);
        self.wake.notify_one();
        Ok(Ticket {
            id,
            matchmaker: Arc::downgrade(self),
            found: receiver,
        })
    }

    /// How the queue looks to the holder of `ticket` (`None` once it left it).
    pub fn waiting(&self, ticket: &Ticket) -> Option<Waiting> {
        let queue = self.queue.lock().ok()?;
        let me = queue.iter().find(|e| e.id == ticket.id)?;
        let now = Instant::now();
        Some(Waiting {
            queued: u32::try_from(queue.iter().filter(|e| e.key == me.key).count())
                .unwrap_or(u32::MAX),
            waited: now.duration_since(me.since),
            window: me.window(now),
        })
    }

    fn leave(&self, id: u64) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.retain(|e| e.id != id);
        }
    }

    /// Takes the groups that can play now out of the queue.
    fn groups(&self) -> Vec<Vec<Entry>> {
        let Ok(mut queue) = self.queue.lock() else {
            return Vec::new();
        };
        queue.retain(|e| !e.found.is_closed());
        let now = Instant::now();
        let mut groups = Vec::new();
        while let Some(group) = next_group(&queue, now) {
            let mut taken = Vec::new();
            let mut rest = Vec::new();
            for entry in queue.drain(..) {
                if group.contains(&entry.id) {
                    taken.push(entry);
                } else {
                    rest.push(entry);
                }
            }
            *queue = rest;
            groups.push(taken);
        }
        groups
    }
}

/// Refuses options no quick-play game can have.
fn check(new: &NewGame) -> Result<(), ServiceError> {
    if new.deck_order.is_some() || !new.bot_seats.is_empty() || new.first_dealer.is_some() {
        return Err(ServiceError::invalid(
            Reason::MatchOptionsInvalid,
            "FindMatch takes no deck_order, bot_seats or first_dealer: the matchmaker sets them",
        ));
    }
    let setup = Setup {
        ruleset: new.ruleset,
        seats: new.seats,
        options: new.options,
        first_dealer: None,
        deck: None,
    };
    setup.check()?;
    Ok(())
}

/// The options that must be equal for two players to be grouped.
fn key(new: &NewGame) -> String {
    format!(
        "{:?}|{}|{:?}|{:?}|{:?}|{}|{:?}",
        new.ruleset,
        new.seats,
        new.options,
        new.turn_timer,
        new.bot_level,
        new.rated,
        new.bot_think
    )
}

/// The ids of one group that can play now, if any: `seats` players with the same options
/// whose ratings are all within each one's window; or a player whose bot-fill wait is over,
/// with the others who allow bots within its window, and bots for the rest.
fn next_group(queue: &[Entry], now: Instant) -> Option<Vec<u64>> {
    for first in queue {
        let seats = first.new.seats;
        let mut near: Vec<&Entry> = queue
            .iter()
            .filter(|e| e.key == first.key && e.id != first.id)
            .filter(|e| (e.mu - first.mu).abs() <= first.window(now).min(e.window(now)))
            .collect();
        near.sort_by(|a, b| (a.mu - first.mu).abs().total_cmp(&(b.mu - first.mu).abs()));
        let full: Vec<&Entry> = std::iter::once(first)
            .chain(near.iter().copied())
            .take(seats)
            .collect();
        let within = |group: &[&Entry]| {
            group.iter().all(|a| {
                group
                    .iter()
                    .all(|b| (a.mu - b.mu).abs() <= a.window(now).min(b.window(now)))
            })
        };
        if full.len() == seats && within(&full) {
            return Some(full.iter().map(|e| e.id).collect());
        }
        if first
            .bot_fill_after
            .is_some_and(|wait| now.duration_since(first.since) >= wait)
        {
            let mut group = vec![first];
            for e in near.iter().filter(|e| e.bot_fill_after.is_some()) {
                if group.len() >= seats {
                    break;
                }
                group.push(e);
                if !within(&group) {
                    group.pop();
                }
            }
            return Some(group.iter().map(|e| e.id).collect());
        }
    }
    None
}

/// Matches until the registry or the matchmaker goes.
async fn run(matchmaker: Weak<Matchmaker>, registry: Weak<Registry>) {
    loop {
        let Some(m) = matchmaker.upgrade() else {
            return;
        };
        for group in m.groups() {
            let Some(registry) = registry.upgrade() else {
                return;
            };
            tokio::spawn(form(registry, group));
        }
        let wake = async { m.wake.notified().await };
        tokio::select! {
            () = wake => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

/// Creates a group's game: its players in the first seats, built-in bots in the others; it
/// starts at once. Each player's stream gets its seat, or the error.
async fn form(registry: Arc<Registry>, group: Vec<Entry>) {
    let result = async {
        let Some(first) = group.first() else {
            return Err(ServiceError::unavailable("an empty group"));
        };
        let mut new = first.new.clone();
        new.bot_seats = (group.len()..new.seats).collect();
        if !first.fill_levels.is_empty() {
            let mut levels = first.fill_levels.clone();
            levels.shuffle(&mut rand::rng());
            new.seat_levels = new
                .bot_seats
                .iter()
                .zip(levels.iter().cycle())
                .map(|(&seat, &level)| (seat, level))
                .collect();
        }
        let created = registry.create(new, false, None).await?;
        let mut seats = Vec::new();
        for (seat, entry) in group.iter().enumerate() {
            let joined = registry
                .join(&created.name, Some(seat), "", Some(entry.caller.clone()))
                .await?;
            seats.push((joined.0, joined.1));
        }
        let Some((_, token)) = seats.first() else {
            return Err(ServiceError::unavailable("an empty group"));
        };
        let info = registry.start(&created.name, Some(token)).await?;
        tracing::info!(game = %info.name, players = group.len(), "match made");
        Ok((info, seats))
    }
    .await;
    match result {
        Ok((info, seats)) => {
            for (entry, (seat, token)) in group.into_iter().zip(seats) {
                let _ = entry.found.send(Ok((info.clone(), seat, token)));
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "a match could not be made");
            for entry in group {
                let _ = entry.found.send(Err(e.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Options, Ruleset};

    fn entry(id: u64, mu: f64, waited: Duration, bot_fill_after: Option<Duration>) -> Entry {
        let new = NewGame {
            ruleset: Ruleset::Flip,
            seats: 2,
            options: Options::default(),
            first_dealer: None,
            deck_order: None,
            bot_seats: Vec::new(),
            bot_level: Level::Heuristic,
            bot_think: None,
            turn_timer: None,
            rated: true,
            seat_levels: Vec::new(),
        };
        Entry {
            id,
            player: format!("players/{id:016x}"),
            caller: Caller {
                player: crate::service::accounts::players::Player {
                    name: format!("players/{id:016x}"),
                    display_name: "P".into(),
                    bot: false,
                    token_hash: String::new(),
                    created_unix: 0,
                    ratings: std::collections::BTreeMap::new(),
                    seat_key: None,
                },
                seat_key: String::new(),
            },
            mu,
            key: key(&new),
            new,
            bot_fill_after,
            fill_levels: Vec::new(),
            since: Instant::now() - waited,
            found: oneshot::channel().0,
        }
    }

    #[test]
    fn players_far_apart_in_rating_are_grouped_once_their_windows_widen() {
        let now = Instant::now();
        let fresh = [
            entry(1, 25.0, Duration::ZERO, None),
            entry(2, 45.0, Duration::ZERO, None),
        ];
        assert_eq!(next_group(&fresh, now), None, "20 apart, windows of 5");
        let close = [
            entry(1, 25.0, Duration::ZERO, None),
            entry(2, 29.0, Duration::ZERO, None),
        ];
        assert_eq!(next_group(&close, now), Some(vec![1, 2]));
        // After 7 s each window is 5 + 2.5 x 7 = 22.5.
        let waited = [
            entry(1, 25.0, Duration::from_secs(7), None),
            entry(2, 45.0, Duration::from_secs(7), None),
        ];
        assert_eq!(next_group(&waited, now), Some(vec![1, 2]));
        // Both windows must hold: one fresh player keeps the pair apart.
        let one_fresh = [
            entry(1, 25.0, Duration::from_secs(7), None),
            entry(2, 45.0, Duration::ZERO, None),
        ];
        assert_eq!(next_group(&one_fresh, now), None);
    }

    #[test]
    fn bot_fill_takes_a_player_alone_once_its_wait_is_over() {
        let now = Instant::now();
        let waiting = [entry(
            1,
            25.0,
            Duration::from_millis(100),
            Some(Duration::from_secs(1)),
        )];
        assert_eq!(next_group(&waiting, now), None);
        let waited = [entry(
            1,
            25.0,
            Duration::from_secs(2),
            Some(Duration::from_secs(1)),
        )];
        assert_eq!(next_group(&waited, now), Some(vec![1]));
    }
}
