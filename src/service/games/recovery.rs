//! Rebuilding at start every unfinished game of the store, and following the writes of other
//! servers sharing it.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A game's log from the store: its latest snapshot and the events after it, or every event when
/// it has no snapshot or the snapshot cannot be used (then it says so).
pub(super) async fn stored_log(store: &dyn EventStore, name: &str) -> Result<EventLog, StoreError> {
    if let Some((version, state)) = store.snapshot(name).await? {
        match Game::restore(&state) {
            Ok(game) if game.version() == version => {
                let tail = store.read(name, version).await?;
                return Ok(EventLog::from_snapshot(version, game, tail));
            }
            Ok(_) => {
                tracing::warn!(game = %name, version, "snapshot version mismatch; replaying the whole log");
            }
            Err(error) => {
                tracing::warn!(game = %name, version, %error, "snapshot not usable; replaying the whole log");
            }
        }
    }
    Ok(EventLog::new(store.read(name, 0).await?))
}

/// Follows the writes of other servers sharing the store: tells the task of each live game
/// another server wrote to, and wakes the firehose.
pub(super) async fn follow(
    registry: Weak<Registry>,
    mut changes: tokio::sync::broadcast::Receiver<Change>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let change = match changes.recv().await {
            Ok(change) => change,
            Err(RecvError::Lagged(_)) => Change::Any,
            Err(RecvError::Closed) => return,
        };
        let Some(registry) = registry.upgrade() else {
            return;
        };
        registry.hooks.appended.send_modify(|n| *n += 1);
        let Ok(table) = registry.table.lock() else {
            return;
        };
        match change {
            Change::Appended { game, version } => {
                if let Some(slot) = table.by_name.get(game.as_str())
                    && version > slot.game.version.get()
                    && let Some(store_version) = &slot.game.store_version
                {
                    store_version.send_replace(version);
                }
            }
            Change::Any => {
                for store_version in table
                    .by_name
                    .values()
                    .filter_map(|s| s.game.store_version.as_ref())
                {
                    store_version.send_replace(task::UNKNOWN_VERSION);
                }
            }
        }
    }
}

impl Registry {
    /// Rebuilds every unfinished game of the store, so that its timers and server moves go on.
    /// A game whose data is damaged is left out with an error naming it; the others are served.
    /// Returns the number of games rebuilt.
    pub async fn recover(self: &Arc<Self>) -> Result<usize, StoreError> {
        /// Logs read from the store at once, ahead of the games being rebuilt in order.
        const READ_AHEAD: usize = 64;
        let mut rebuilt = 0;
        let mut records = self.hooks.store.unfinished().await?.into_iter();
        let mut pending = std::collections::VecDeque::new();
        loop {
            while pending.len() < READ_AHEAD
                && let Some((name, record)) = records.next()
            {
                let store = self.hooks.store.clone();
                let game = name.clone();
                let log = tokio::spawn(async move { stored_log(&*store, &game).await });
                pending.push_back((name, record, log));
            }
            let Some((name, record, log)) = pending.pop_front() else {
                break;
            };
            let loaded = match log.await {
                Ok(Ok(log)) => {
                    let _guard = self.loading.lock().await;
                    self.install(&name, &record, log, None, &mut None)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                }
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match loaded {
                Ok(()) => rebuilt += 1,
                Err(error) => {
                    tracing::error!(game = %name, %error, "game not recovered: its stored data is damaged");
                }
            }
        }
        Ok(rebuilt)
    }
}
