//! Secrets and their hashes: seat and player tokens are random, and the store and the tasks keep
//! only their SHA-256.

use std::time::{SystemTime, UNIX_EPOCH};

use rand::Rng;
use sha2::{Digest, Sha256};

/// A seat token's hash: the store and the tasks keep only this.
pub type TokenHash = [u8; 32];

/// The hash of `token`.
pub fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// A new random secret (256 bits, hex).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Seconds since the Unix epoch.
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
