//! Following the other servers (LISTEN/NOTIFY as a wake-up) and the advisory-lock leases.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The advisory lock key of lease `name`: the first 8 bytes of its SHA-256, so that every server
/// computes the same key (and none collides with [`MIGRATION_LOCK`] but by a 2^-64 chance).
pub(super) fn lease_key(name: &str) -> i64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("unoflip lease {name}").as_bytes());
    let mut key = [0u8; 8];
    key.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(key)
}

/// A held advisory lock and the connection that holds it.
pub(super) struct AdvisoryLease(pub(super) sqlx::PgConnection);

impl Lease for AdvisoryLease {
    fn check(&mut self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let probe = sqlx::query("SELECT 1").execute(&mut self.0);
            match tokio::time::timeout(std::time::Duration::from_secs(5), probe).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(unavailable(e)),
                Err(_) => Err(unavailable("the lease's connection did not answer in 5 s")),
            }
        })
    }
}

/// Forwards `unoflip_events` notifications. After a lost connection (notifications may have been
/// missed) it sends [`Change::Any`]. Ends when nobody listens any more.
pub(super) async fn listen(pool: PgPool, changes: Announcer) {
    loop {
        if changes.unheard() {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        let mut listener = match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(l) => l,
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
        };
        if listener.listen("unoflip_events").await.is_err() {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            continue;
        }
        changes.relay(Change::Any);
        while let Ok(notification) = listener.recv().await {
            changes.relay(Change::from_note(notification.payload()));
        }
    }
}
