//! Notifications for players who are not connected, produced from the store's events and
//! delivered to the host's webhooks (`serve --webhook-url`, signed as Standard Webhooks says)
//! and to NATS (`serve --publish`, subject `unoflip.v1.players.<id>.notifications`).
//!
//! - **What**: it is your turn (`your_turn`), a penalty waits for you to take it or challenge it
//!   (`penalty_waiting`), your game started (`game_started`: a match made by quick play starts
//!   at once, so this is also "you were matched"), your game is over (`game_over`, with the
//!   winners). Only seats of registered players get them, and not while the server plays the
//!   seat (it left). They carry no card: nothing a seat may not see.
//! - **From the store**: each sink reads the store's global order after its cursor, derives the
//!   notifications of each event ([`derive`]) and delivers them, then saves its cursor. A crash
//!   between a delivery and the cursor delivers again, with the same id (`<game id>.<version>.
//!   <player id>`): at least once, and a receiver that keeps the ids it saw sees each once. A
//!   new sink starts at the store's end (old events are no news).
//! - **Never in a move's way**: the sinks run on their own tasks behind the store; a slow or dead
//!   receiver makes them fall behind (`unoflip_notify_lag_events{sink}`), never the games.
//! - **In order per player**: one batch of events at a time; within it, each player's
//!   notifications go in order, players side by side.
//! - **One server per sink** in a fleet sharing PostgreSQL: the holder of the sink's lease.

pub mod nats;
pub mod webhook;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::rules::{Event, Seat};
use crate::service::games::Registry;
use crate::service::games::lobby::Lobby;
use crate::service::metrics::{DeliveryLabels, Metrics, SinkLabels};
use crate::store::{Committed, StoreError};

/// Events read from the store at a time.
const BATCH: usize = 256;
/// Players whose notifications are delivered side by side.
const PLAYERS_AT_ONCE: usize = 16;
/// How often a sink without the lease tries to take it.
const LEASE_POLL: Duration = Duration::from_secs(1);
/// How often a sink of a shared store looks for events without a wake-up.
const SHARED_POLL: Duration = Duration::from_millis(200);
/// The longest pause between attempts after the store failed.
const STORE_BACKOFF: Duration = Duration::from_secs(5);
/// Games whose seats a sink remembers (the least recently used goes).
const SEATS_KEPT: usize = 4096;

/// What a notification says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The player is to play or draw.
    YourTurn,
    /// A wild draw waits for the player to take it or challenge it.
    PenaltyWaiting,
    /// The game was dealt.
    GameStarted,
    /// The match is over (or was given up).
    GameOver,
}

impl Kind {
    /// The notification's `type`: `unoflip.your_turn`.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::YourTurn => "unoflip.your_turn",
            Kind::PenaltyWaiting => "unoflip.penalty_waiting",
            Kind::GameStarted => "unoflip.game_started",
            Kind::GameOver => "unoflip.game_over",
        }
    }
}

/// A notification for one player.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// Stable: `<game id>.<version>.<player id>`.
    pub id: String,
    /// What it says.
    pub kind: Kind,
    /// `players/{id}`.
    pub player: String,
    /// `games/{id}`.
    pub game: String,
    /// The game's version after the event.
    pub version: u64,
    /// The player's seat.
    pub seat: Seat,
    /// For `game_over`: the winning seats (none when the match was given up).
    pub winners: Option<Vec<Seat>>,
    /// The event's position in the store's global order.
    pub position: u64,
}

impl Notification {
    /// The JSON body: Standard Webhooks' `{type, timestamp, data}`.
    pub fn body(&self, timestamp: &str) -> String {
        let mut data = serde_json::json!({
            "id": self.id,
            "player": self.player,
            "game": self.game,
            "game_version": self.version,
            "seat": self.seat,
        });
        if let Some(winners) = &self.winners {
            data["winners"] = serde_json::json!(winners);
            data["won"] = serde_json::json!(winners.contains(&self.seat));
        }
        serde_json::json!({
            "type": self.kind.type_name(),
            "timestamp": timestamp,
            "data": data,
        })
        .to_string()
    }
}

/// The last part of `games/{id}` or `players/{id}`.
fn id_of(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// A seat as notifications see it: its registered player, unless the server plays it.
#[derive(Clone, Debug, Default)]
pub struct SeatPlayers(pub Vec<Option<String>>);

impl SeatPlayers {
    /// The seats of `lobby`.
    pub fn of(lobby: &Lobby) -> SeatPlayers {
        SeatPlayers(
            lobby
                .seats
                .iter()
                .map(|s| s.player.clone().filter(|_| !s.server_played))
                .collect(),
        )
    }
}

/// The notifications `committed` makes, given who sits where.
pub fn derive(committed: &Committed, seats: &SeatPlayers) -> Vec<Notification> {
    let one = |kind: Kind, seat: Seat, winners: Option<Vec<Seat>>| {
        seats
            .0
            .get(seat)
            .cloned()
            .flatten()
            .map(|player| Notification {
                id: format!(
                    "{}.{}.{}",
                    id_of(&committed.game),
                    committed.version,
                    id_of(&player)
                ),
                kind,
                player,
                game: committed.game.clone(),
                version: committed.version,
                seat,
                winners,
                position: committed.position,
            })
    };
    let every = |kind: Kind, winners: Option<Vec<Seat>>| {
        (0..seats.0.len())
            .filter_map(|seat| one(kind, seat, winners.clone()))
            .collect::<Vec<_>>()
    };
    match &committed.event {
        Event::TurnStarted { seat } => one(Kind::YourTurn, *seat, None).into_iter().collect(),
        Event::PenaltyPending { seat, .. } => {
            one(Kind::PenaltyWaiting, *seat, None).into_iter().collect()
        }
        Event::RoundStarted { round: 1, .. } => every(Kind::GameStarted, None),
        Event::MatchEnded { winners } => every(Kind::GameOver, Some(winners.clone())),
        Event::MatchAbandoned => every(Kind::GameOver, Some(Vec::new())),
        _ => Vec::new(),
    }
}

/// Whether an event may make notifications (and so needs its game's seats).
fn notable(event: &Event) -> bool {
    matches!(
        event,
        Event::TurnStarted { .. }
            | Event::PenaltyPending { .. }
            | Event::RoundStarted { round: 1, .. }
            | Event::MatchEnded { .. }
            | Event::MatchAbandoned
    )
}

/// Why a delivery failed.
#[derive(Debug)]
pub struct Failed {
    /// What went wrong, for the log.
    pub error: String,
    /// Whether trying again may help (a refused request with 4xx other than 408 and 429 is
    /// given up at once).
    pub retry: bool,
}

/// Where notifications go.
#[async_trait::async_trait]
pub trait Sink: Send + Sync + 'static {
    /// The sink's name in metrics, the log, its cursor and its lease.
    fn name(&self) -> String;
    /// Delivers one notification (once: the caller retries).
    async fn deliver(&self, notification: &Notification) -> Result<(), Failed>;
}

/// How long a sink retries one notification before it gives it up, and how it backs off.
#[derive(Clone, Copy, Debug)]
pub struct Retries {
    /// The first pause.
    pub first: Duration,
    /// The longest pause.
    pub longest: Duration,
    /// Given up after this long (then counted as dropped).
    pub give_up_after: Duration,
}

impl Default for Retries {
    fn default() -> Self {
        Retries {
            first: Duration::from_millis(500),
            longest: Duration::from_secs(300),
            give_up_after: Duration::from_secs(25 * 3600),
        }
    }
}

/// Starts delivering to `sink` while the server runs.
pub fn spawn(registry: Arc<Registry>, sink: Arc<dyn Sink>, retries: Retries) {
    tokio::spawn(run(registry, sink, retries));
}

async fn run(registry: Arc<Registry>, sink: Arc<dyn Sink>, retries: Retries) {
    let name = sink.name();
    let store = registry.hooks.store.clone();
    let lease_name = format!("notify:{name}");
    let mut stopping = registry.stopping.subscribe();
    loop {
        if *stopping.borrow() {
            return;
        }
        let lease = match store.lease(&lease_name).await {
            Ok(Some(lease)) => lease,
            other => {
                if let Err(error) = other {
                    tracing::warn!(sink = %name, %error, "notifications: cannot take the lease");
                }
                tokio::select! {
                    () = tokio::time::sleep(LEASE_POLL) => {}
                    _ = stopping.wait_for(|s| *s) => return,
                }
                continue;
            }
        };
        tracing::info!(sink = %name, "notifications: delivering");
        let error = deliver_while_held(&registry, &*sink, retries, lease).await;
        match error {
            None => return,
            Some(error) => {
                tracing::warn!(sink = %name, %error, "notifications: starting over");
                tokio::select! {
                    () = tokio::time::sleep(STORE_BACKOFF) => {}
                    _ = stopping.wait_for(|s| *s) => return,
                }
            }
        }
    }
}

/// Follows the store and delivers while the lease holds: `None` when the server stops, else
/// the store's error.
async fn deliver_while_held(
    registry: &Arc<Registry>,
    sink: &dyn Sink,
    retries: Retries,
    mut lease: Box<dyn crate::store::Lease>,
) -> Option<StoreError> {
    let name = sink.name();
    let store = registry.hooks.store.clone();
    let cursor = format!("notify:{name}");
    let metrics = registry.hooks.metrics.clone();
    let labels = SinkLabels { sink: name.clone() };
    let mut position = match store.cursor(&cursor).await {
        Ok(Some(at)) => at,
        Ok(None) => match store.last_position().await {
            Ok(end) => {
                if let Err(e) = store.save_cursor(&cursor, end).await {
                    return Some(e);
                }
                end
            }
            Err(e) => return Some(e),
        },
        Err(e) => return Some(e),
    };
    let mut wake = registry.hooks.appended.subscribe();
    let mut stopping = registry.stopping.subscribe();
    let mut seats = Seats::default();
    let mut checked = Instant::now();
    loop {
        if *stopping.borrow() {
            return None;
        }
        if checked.elapsed() >= LEASE_POLL {
            if let Err(e) = lease.check().await {
                return Some(e);
            }
            checked = Instant::now();
            if let Ok(lag) = store.count_after(position, 1_000_000).await {
                metrics
                    .notify_lag
                    .get_or_create(&labels)
                    .set(i64::try_from(lag).unwrap_or(i64::MAX));
            }
        }
        wake.borrow_and_update();
        let batch = match store.read_all(position, BATCH).await {
            Ok(batch) => batch,
            Err(e) => return Some(e),
        };
        let Some(to) = batch.last().map(|c| c.position) else {
            metrics.notify_lag.get_or_create(&labels).set(0);
            let poll = if store.shared() {
                SHARED_POLL
            } else {
                LEASE_POLL
            };
            tokio::select! {
                _ = wake.changed() => {}
                () = tokio::time::sleep(poll) => {}
                _ = stopping.wait_for(|s| *s) => {}
            }
            continue;
        };
        let mut by_player: BTreeMap<String, Vec<Notification>> = BTreeMap::new();
        for committed in &batch {
            if !notable(&committed.event) {
                continue;
            }
            let players = seats.of(registry, &committed.game).await;
            for notification in derive(committed, &players) {
                by_player
                    .entry(notification.player.clone())
                    .or_default()
                    .push(notification);
            }
            if matches!(
                committed.event,
                Event::MatchEnded { .. } | Event::MatchAbandoned
            ) {
                seats.forget(&committed.game);
            }
        }
        // Each player's in order; players side by side. The server stopping ends the batch
        // where it is: its cursor is not saved, so it is delivered again (the same ids).
        let deliveries = futures_util::stream::iter(by_player.into_values())
            .map(|list| deliver_in_order(sink, &metrics, &name, retries, list))
            .buffer_unordered(PLAYERS_AT_ONCE)
            .collect::<Vec<()>>();
        tokio::select! {
            _ = deliveries => {}
            _ = stopping.wait_for(|s| *s) => return None,
        }
        if let Err(e) = store.save_cursor(&cursor, to).await {
            return Some(e);
        }
        position = to;
    }
}

/// Delivers `list` in order, each retried with back-off until it is delivered or given up.
async fn deliver_in_order(
    sink: &dyn Sink,
    metrics: &Metrics,
    name: &str,
    retries: Retries,
    list: Vec<Notification>,
) {
    let count = |result: &'static str| {
        metrics
            .notify_deliveries
            .get_or_create(&DeliveryLabels {
                sink: name.to_owned(),
                result,
            })
            .inc();
    };
    for notification in list {
        let started = Instant::now();
        let mut pause = retries.first;
        loop {
            match sink.deliver(&notification).await {
                Ok(()) => {
                    count("ok");
                    break;
                }
                Err(failed) => {
                    let give_up = !failed.retry || started.elapsed() >= retries.give_up_after;
                    if give_up {
                        count("dropped");
                        tracing::error!(sink = %name, id = %notification.id, error = %failed.error,
                            "notification given up");
                        break;
                    }
                    count("failed");
                    tracing::warn!(sink = %name, id = %notification.id, error = %failed.error,
                        retry_in_ms = pause.as_millis() as u64, "notification not delivered; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(retries.longest);
                }
            }
        }
    }
}

/// The seats of the games a sink met lately.
#[derive(Default)]
struct Seats {
    games: HashMap<String, (SeatPlayers, u64)>,
    tick: u64,
}

impl Seats {
    /// Who sits where in `game` (nobody, when its lobby cannot be read).
    async fn of(&mut self, registry: &Registry, game: &str) -> SeatPlayers {
        self.tick += 1;
        if let Some((players, used)) = self.games.get_mut(game) {
            *used = self.tick;
            return players.clone();
        }
        let players = registry
            .lobby(game)
            .await
            .map(|lobby| SeatPlayers::of(&lobby))
            .unwrap_or_default();
        if self.games.len() >= SEATS_KEPT
            && let Some(oldest) = self
                .games
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(name, _)| name.clone())
        {
            self.games.remove(&oldest);
        }
        self.games
            .insert(game.to_owned(), (players.clone(), self.tick));
        players
    }

    fn forget(&mut self, game: &str) {
        self.games.remove(game);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(version: u64, event: Event) -> Committed {
        Committed {
            position: 100 + version,
            game: "games/abc".into(),
            version,
            event,
        }
    }

    #[test]
    fn each_kind_goes_to_the_players_it_concerns() {
        let seats = SeatPlayers(vec![
            Some("players/a1".into()),
            None,
            Some("players/c3".into()),
        ]);
        let turn = derive(&at(7, Event::TurnStarted { seat: 2 }), &seats);
        assert_eq!(turn.len(), 1);
        assert_eq!(
            (turn[0].kind, turn[0].player.as_str(), turn[0].id.as_str()),
            (Kind::YourTurn, "players/c3", "abc.7.c3")
        );
        // A seat the server plays, or no player's: nothing.
        assert!(derive(&at(8, Event::TurnStarted { seat: 1 }), &seats).is_empty());
        assert!(derive(&at(8, Event::TurnStarted { seat: 9 }), &seats).is_empty());
        let over = derive(&at(9, Event::MatchEnded { winners: vec![2] }), &seats);
        assert_eq!(
            over.iter()
                .map(|n| (n.player.as_str(), n.kind))
                .collect::<Vec<_>>(),
            vec![
                ("players/a1", Kind::GameOver),
                ("players/c3", Kind::GameOver)
            ]
        );
        let body: serde_json::Value = serde_json::from_str(&over[1].body("t")).expect("JSON");
        assert_eq!(body["type"], "unoflip.game_over");
        assert_eq!(body["data"]["won"], true);
        assert_eq!(body["data"]["winners"], serde_json::json!([2]));
        assert!(derive(&at(3, Event::Flipped), &seats).is_empty());
        let started = derive(
            &at(
                2,
                Event::RoundStarted {
                    round: 1,
                    dealer: 0,
                    deck: vec![],
                },
            ),
            &seats,
        );
        assert_eq!(started.len(), 2);
        assert!(
            derive(
                &at(
                    50,
                    Event::RoundStarted {
                        round: 2,
                        dealer: 0,
                        deck: vec![],
                    },
                ),
                &seats
            )
            .is_empty(),
            "only the first round starts the game"
        );
    }
}
