//! Tokens: the admin token, and which seat a seat token holds (and, when a game refuses one, whether
//! it belongs to another game).

#[allow(clippy::wildcard_imports)]
use super::*;

/// A seat token's key in [`Table::tokens`]: the first 8 bytes of its hash. The table only
/// explains a refusal (the token belongs to another game), so two tokens of one key, once in
/// about 2^64 pairs, would at worst explain one wrongly; the full hash would cost every live game
/// about 250 bytes more (its four tokens' keys, twice).
pub(super) type TokenKey = u64;

pub(super) fn token_key(hash: &TokenHash) -> TokenKey {
    let mut key = [0; 8];
    key.copy_from_slice(&hash[..8]);
    TokenKey::from_le_bytes(key)
}

impl Registry {
    /// Whether `token` is the admin token.
    pub fn is_admin(&self, token: Option<&str>) -> bool {
        match (&self.config.admin_token, token) {
            // Compare hashes so the comparison's time says nothing about the token.
            (Some(admin), Some(token)) => hash(admin) == hash(token),
            _ => false,
        }
    }

    /// Remembers a token joined through this server.
    pub(super) fn note_token(&self, token: TokenHash, name: &str) {
        let token = token_key(&token);
        if let Ok(mut table) = self.table.lock()
            && let Some(slot) = table.by_name.get_mut(name)
            && !slot.tokens.contains(&token)
        {
            slot.tokens.push(token);
            let seq = slot.seq;
            table.tokens.insert(token, seq);
        }
    }

    /// The seat `token` holds in game `name`.
    pub async fn seat_of(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<Seat, ServiceError> {
        let game = self.get(name).await?;
        let token = self.token(name, token)?;
        let found = game
            .ask(|reply| task::Command::SeatOf { token, reply })
            .await;
        self.explain(name, &token, found)
    }

    /// The viewer a request is: the seat its token holds, or a spectator without a token.
    pub async fn viewer(
        self: &Arc<Self>,
        name: &str,
        token: Option<&str>,
    ) -> Result<Viewer, ServiceError> {
        match token {
            Some(_) => Ok(Viewer::Seat(self.seat_of(name, token).await?)),
            None => Ok(Viewer::Spectator),
        }
    }

    /// The hash of a request's token; none is refused.
    pub(super) fn token(
        &self,
        _name: &str,
        token: Option<&str>,
    ) -> Result<TokenHash, ServiceError> {
        match token {
            Some(t) => Ok(hash(t)),
            None => Err(ServiceError::unauthenticated(
                "this call needs a seat token as `authorization: Bearer <token>`",
            )),
        }
    }

    /// A token refused by the game: said to belong to another game when this server knows it.
    pub(super) fn explain<T>(
        &self,
        name: &str,
        token: &TokenHash,
        result: Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        match result {
            Err(ServiceError::Unauthenticated(message)) => {
                let other = self
                    .table
                    .lock()
                    .ok()
                    .and_then(|t| {
                        let seq = t.tokens.get(&token_key(token))?;
                        t.order.get(seq).cloned()
                    })
                    .is_some_and(|game| &*game != name);
                if other {
                    Err(ServiceError::denied(
                        Reason::SeatTokenOtherGame,
                        format!("this seat token belongs to another game than {name}"),
                    ))
                } else {
                    Err(ServiceError::Unauthenticated(message))
                }
            }
            other => other,
        }
    }
}
