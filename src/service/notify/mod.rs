//! Notifications for players who are not connected, produced from the store's events and
//! delivered to the host's webhooks (`serve --webhook-url`, signed as Standard Webhooks says)
//! and to NATS (`serve --publish`, subject `unoflip.v1.players.<id>.notifications`).
//!
//! - **What**: it is your turn (`your_turn`), a penalty waits for you to take it or challenge it
//!   (`penalty_waiting`), your game started (`game_started`: a match made by quick play starts
//!   at once, so this is also "you were matched"), your game is over (`game_over`, with the
//!   winners). Only seats of registered players get them, and not while the server plays the
//!   seat (it left). They carry no card: nothing a seat may not see.
//! - **Reminders**: in a game whose turn timer is a minute or more (correspondence play), the
//!   seat to act is reminded (`turn_ending`) when a `reminder_left` share of its turn is left
//!   ([`Reminders`]). Reminders are kept in memory, and rebuilt from the live games when a sink
//!   starts (their deadlines survive restarts in the games' records), so one due while no
//!   server ran is sent when one starts, if the turn has not run out.
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
    /// The player's turn runs out soon.
    TurnEnding,
}

impl Kind {
    /// The notification's `type`: `unoflip.your_turn`.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::YourTurn => "unoflip.your_turn",
            Kind::PenaltyWaiting => "unoflip.penalty_waiting",
            Kind::GameStarted => "unoflip.game_started",
            Kind::GameOver => "unoflip.game_over",
            Kind::TurnEnding => "unoflip.turn_ending",
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
    /// For `turn_ending`: when the turn runs out.
    pub deadline: Option<std::time::SystemTime>,
}

impl Notification {
    /// The JSON body, sent at `at`: Standard Webhooks' `{type, timestamp, data}`.
    pub fn body(&self, at: std::time::SystemTime) -> String {
        let mut data = serde_json::json!({
            "id": self.id,
            "player": self.player,
            "game": self.game,
            "game_version": self.version,
            "seat": self.seat,
        });
        if let Some(deadline) = self.deadline {
            data["turn_deadline"] = serde_json::json!(rfc3339(deadline));
        }
        if let Some(winners) = &self.winners {
            data["winners"] = serde_json::json!(winners);
            data["won"] = serde_json::json!(winners.contains(&self.seat));
        }
        serde_json::json!({
            "type": self.kind.type_name(),
            "timestamp": rfc3339(at),
            "data": data,
        })
        .to_string()
    }
}

/// `at` as RFC 3339, UTC, to the second.
fn rfc3339(at: std::time::SystemTime) -> String {
    let seconds = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    time::OffsetDateTime::from_unix_timestamp(seconds)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// The last part of `games/{id}` or `players/{id}`.
fn id_of(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// A game's seats as notifications see them: each seat's registered player, unless the server
/// plays it; and the game's turn timer.
#[derive(Clone, Debug, Default)]
pub struct SeatPlayers {
    /// By seat.
    pub players: Vec<Option<String>>,
    /// The turn timer.
    pub timer: Option<Duration>,
}

impl SeatPlayers {
    /// The seats of `lobby`.
    pub fn of(lobby: &Lobby) -> SeatPlayers {
        SeatPlayers {
            players: lobby
                .seats
                .iter()
                .map(|s| s.player.clone().filter(|_| !s.server_played))
                .collect(),
            timer: lobby.timer,
        }
    }
}

/// The notifications `committed` makes, given who sits where.
pub fn derive(committed: &Committed, seats: &SeatPlayers) -> Vec<Notification> {
    let one = |kind: Kind, seat: Seat, winners: Option<Vec<Seat>>| {
        seats
            .players
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
                deadline: None,
            })
    };
    let every = |kind: Kind, winners: Option<Vec<Seat>>| {
        (0..seats.players.len())
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

/// How a sink delivers: its retries, and when it reminds a seat that its turn runs out.
#[derive(Clone, Copy, Debug)]
pub struct Delivery {
    /// Retries of one notification.
    pub retries: Retries,
    /// The share of a turn left when its seat is reminded (0: no reminders).
    pub reminder_left: f64,
}

/// Starts delivering to `sink` while the server runs.
pub fn spawn(registry: Arc<Registry>, sink: Arc<dyn Sink>, delivery: Delivery) {
    tokio::spawn(run(registry, sink, delivery));
}

async fn run(registry: Arc<Registry>, sink: Arc<dyn Sink>, delivery: Delivery) {
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
        let error = deliver_while_held(&registry, &*sink, delivery, lease).await;
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
    delivery: Delivery,
    mut lease: Box<dyn crate::store::Lease>,
) -> Option<StoreError> {
    let retries = delivery.retries;
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
    let mut reminders = Reminders::new(delivery.reminder_left);
    reminders.rebuild(registry).await;
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
        let due = reminders.due(registry).await;
        if !due.is_empty() && !deliver_all(sink, &metrics, retries, due, &mut stopping).await {
            return None;
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
            let until_reminder = reminders
                .next()
                .map_or(poll, |at| at.saturating_duration_since(Instant::now()));
            tokio::select! {
                _ = wake.changed() => {}
                () = tokio::time::sleep(poll.min(until_reminder)) => {}
                _ = stopping.wait_for(|s| *s) => {}
            }
            continue;
        };
        let mut notifications = Vec::new();
        for committed in &batch {
            if !notable(&committed.event) {
                continue;
            }
            let players = seats.of(registry, &committed.game).await;
            for notification in derive(committed, &players) {
                if matches!(notification.kind, Kind::YourTurn | Kind::PenaltyWaiting) {
                    reminders.turn(&notification, players.timer);
                }
                notifications.push(notification);
            }
            if matches!(
                committed.event,
                Event::MatchEnded { .. } | Event::MatchAbandoned
            ) {
                seats.forget(&committed.game);
                reminders.forget(&committed.game);
            }
        }
        // The server stopping ends the batch where it is: its cursor is not saved, so it is
        // delivered again (the same ids).
        if !deliver_all(sink, &metrics, retries, notifications, &mut stopping).await {
            return None;
        }
        if let Err(e) = store.save_cursor(&cursor, to).await {
            return Some(e);
        }
        position = to;
    }
}

/// Delivers `notifications`: each player's in order, players side by side. `false` when the
/// server began to stop first.
async fn deliver_all(
    sink: &dyn Sink,
    metrics: &Metrics,
    retries: Retries,
    notifications: Vec<Notification>,
    stopping: &mut tokio::sync::watch::Receiver<bool>,
) -> bool {
    let name = sink.name();
    let mut by_player: BTreeMap<String, Vec<Notification>> = BTreeMap::new();
    for notification in notifications {
        by_player
            .entry(notification.player.clone())
            .or_default()
            .push(notification);
    }
    let deliveries = futures_util::stream::iter(by_player.into_values())
        .map(|list| deliver_in_order(sink, metrics, &name, retries, list))
        .buffer_unordered(PLAYERS_AT_ONCE)
        .collect::<Vec<()>>();
    tokio::select! {
        _ = deliveries => true,
        _ = stopping.wait_for(|s| *s) => false,
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

/// The shortest turn timer whose turns are reminded (the one whose deadlines games keep).
pub const REMINDED_TIMER: Duration = Duration::from_secs(60);

/// A turn to remind: the latest of its game.
#[derive(Clone, Debug)]
struct Pending {
    /// The notification of the turn (`your_turn` or `penalty_waiting`).
    turn: Notification,
    /// When to look at the game again.
    at: Instant,
}

/// The turns of timed games a sink will remind, by game.
struct Reminders {
    left: f64,
    games: HashMap<String, Pending>,
}

impl Reminders {
    fn new(left: f64) -> Reminders {
        Reminders {
            left: left.clamp(0.0, 1.0),
            games: HashMap::new(),
        }
    }

    /// The part of `timer` left when a seat is reminded.
    fn left_of(&self, timer: Duration) -> Duration {
        timer.mul_f64(self.left)
    }

    /// A turn began: remind it (in place of the game's earlier one) when its timer is long.
    fn turn(&mut self, turn: &Notification, timer: Option<Duration>) {
        let Some(timer) = timer.filter(|t| *t >= REMINDED_TIMER && self.left > 0.0) else {
            return;
        };
        // A first look then; the game's own deadline decides.
        let at = Instant::now() + timer.saturating_sub(self.left_of(timer));
        self.games.insert(
            turn.game.clone(),
            Pending {
                turn: turn.clone(),
                at,
            },
        );
    }

    fn forget(&mut self, game: &str) {
        self.games.remove(game);
    }

    /// When the next look is due.
    fn next(&self) -> Option<Instant> {
        self.games.values().map(|p| p.at).min()
    }

    /// The turns of the unfinished timed games, as a sink starting finds them: each game's
    /// last turn event, with its seat's player, looked at now.
    async fn rebuild(&mut self, registry: &Registry) {
        if self.left <= 0.0 {
            return;
        }
        let Ok(unfinished) = registry.hooks.store.unfinished().await else {
            return;
        };
        for (game, record) in unfinished {
            let Ok(lobby) = Lobby::from_record(&record) else {
                continue;
            };
            if lobby.timer.is_none_or(|t| t < REMINDED_TIMER) {
                continue;
            }
            let Some(&(version, _)) = lobby.turn_deadline.as_deref() else {
                continue;
            };
            let first = version.saturating_sub(16);
            let Ok(events) = registry.hooks.store.read(&game, first).await else {
                continue;
            };
            let seats = SeatPlayers::of(&lobby);
            // The last event that began a turn (it may be no registered player's).
            let last = events.iter().enumerate().rev().find(|(_, event)| {
                matches!(
                    event,
                    Event::TurnStarted { .. } | Event::PenaltyPending { .. }
                )
            });
            let Some((i, event)) = last else {
                continue;
            };
            let committed = Committed {
                position: 0,
                game: game.clone(),
                version: first + i as u64 + 1,
                event: event.clone(),
            };
            if let Some(turn) = derive(&committed, &seats).into_iter().next() {
                self.games.insert(
                    game.clone(),
                    Pending {
                        turn,
                        at: Instant::now(),
                    },
                );
            }
        }
    }

    /// The reminders due now; the looks that came too early are put off to their time.
    async fn due(&mut self, registry: &Arc<Registry>) -> Vec<Notification> {
        let now = Instant::now();
        let looks: Vec<String> = self
            .games
            .iter()
            .filter(|(_, p)| p.at <= now)
            .map(|(game, _)| game.clone())
            .collect();
        let mut out = Vec::new();
        for game in looks {
            let Some(pending) = self.games.remove(&game) else {
                continue;
            };
            let Ok((view, Some(deadline))) =
                registry.view(&game, crate::rules::Viewer::Spectator).await
            else {
                continue;
            };
            let Some(timer) = registry.lobby(&game).await.and_then(|l| l.timer) else {
                continue;
            };
            // Still the turn notified (a later one of the game replaced this pending one).
            if view.turn != pending.turn.seat || view.version < pending.turn.version {
                continue;
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                continue;
            }
            let remind_in = left.saturating_sub(self.left_of(timer));
            if remind_in > Duration::from_millis(500) {
                self.games.insert(
                    game,
                    Pending {
                        at: Instant::now() + remind_in,
                        turn: pending.turn,
                    },
                );
                continue;
            }
            out.push(Notification {
                id: format!("{}.reminder", pending.turn.id),
                kind: Kind::TurnEnding,
                deadline: Some(std::time::SystemTime::now() + left),
                ..pending.turn
            });
        }
        out
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
        let seats = SeatPlayers {
            players: vec![Some("players/a1".into()), None, Some("players/c3".into())],
            timer: None,
        };
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
        let body: serde_json::Value =
            serde_json::from_str(&over[1].body(std::time::SystemTime::now())).expect("JSON");
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
