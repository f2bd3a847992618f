//! Players and invite codes, kept in the store's entry tables so that every server sharing the
//! store sees them and a restart keeps them.
//!
//! - A player (`players/{id}`) has a display name, a bot flag and a token whose hash only is
//!   kept. A seat taken with a player token gets a seat token derived from the player token,
//!   the game and the seat: the player token gives it back at any time (`ListMyGames`), while
//!   the store still keeps no secret.
//! - A player signed in by the host app (a bearer JWT, [`SignIn`]) is created on first use,
//!   its id derived from the token's issuer and subject. It has no player token: its seat tokens
//!   derive from a random seat key kept in its record instead (the store keeps that one secret,
//!   which lets whoever reads the store act in that player's seats, as whoever writes it could
//!   anyway).
//! - `players/me` names the caller's own player, by its JWT or its player token.
//! - The games a player sat at are listed newest first (`player_games`).
//! - An invite code is six characters without ambiguous ones (no I, L, O, 0, 1), naming a game
//!   while its lobby is open.

use crate::service::reason::Reason;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rand::RngExt;
use sha2::{Digest, Sha256};

use crate::bots::Level;
use crate::rules::Ruleset;
use crate::rules::Seat;
use crate::service::accounts::ratings::{self, Outcome, Rating};
use crate::service::accounts::secret::{TokenHash, hash, new_token, now_unix};
use crate::service::accounts::sign_in::{self, Identity, SignIn};
use crate::service::error::{ServiceError, quote};
use crate::store::{EntryKind, EventStore};

/// The entry table of players, by id.
const PLAYERS: EntryKind = EntryKind::Players;
/// The entry table of a player's games: `{id}/{newest first}/{game}` -> seat.
const PLAYER_GAMES: EntryKind = EntryKind::PlayerGames;
/// The entry table of player tokens: the token's hash (hex) -> the player's id.
const PLAYER_TOKENS: EntryKind = EntryKind::PlayerTokens;
/// The entry table of invite codes: code -> game.
const CODES: EntryKind = EntryKind::InviteCodes;
/// The entry table of rated games' outcomes: game -> [`Outcome`].
const RATED: EntryKind = EntryKind::RatedGames;

/// The letters of an invite code: capitals and digits without I, L, O, 0 and 1.
pub const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// The length of an invite code.
pub const CODE_LEN: usize = 6;
/// The name that stands for the caller's own player.
pub const ME: &str = "players/me";
/// The longest display name, in characters.
pub const MAX_NAME_CHARS: usize = 32;

/// A registered player, as stored.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Player {
    /// `players/{id}`.
    pub name: String,
    /// The display name.
    pub display_name: String,
    /// Registered as a bot.
    pub bot: bool,
    /// The hash of the player token, hex.
    pub token_hash: String,
    /// When the player registered (Unix seconds).
    pub created_unix: u64,
    /// Its ratings by ruleset (`flip`, `classic`), once it played a rated game.
    #[serde(default)]
    pub ratings: BTreeMap<String, Rating>,
    /// For a player signed in by the host: the secret its seat tokens derive from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat_key: Option<String>,
}

/// A player a request proved to be: by its player token or the host's JWT.
#[derive(Clone, Debug)]
pub struct Caller {
    /// The player, as stored.
    pub player: Player,
    /// The secret its seat tokens derive from: its player token, or its seat key.
    pub seat_key: String,
}

/// A seat a player took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerSeat {
    /// `games/{id}`.
    pub game: String,
    /// The seat.
    pub seat: Seat,
}

/// Players and invite codes in a store.
#[derive(Clone)]
pub struct Players {
    store: Arc<dyn EventStore>,
    /// The host's sign-in, if its JWTs are taken.
    sign_in: Option<Arc<SignIn>>,
    /// Whether this server indexed the player tokens of players registered before the index.
    indexed: Arc<tokio::sync::OnceCell<()>>,
    /// One outcome rated at a time on this server, so that its players' records are read and
    /// written in turn.
    rating: Arc<tokio::sync::Mutex<()>>,
}

/// A checked display name: trimmed, 1 to 32 letters, digits, spaces and `_-.'`.
pub fn check_name(name: &str) -> Result<String, ServiceError> {
    let name = name.trim();
    let count = name.chars().count();
    if count == 0 || count > MAX_NAME_CHARS {
        return Err(ServiceError::invalid(
            Reason::PlayerNameInvalid,
            format!("a display name has 1 to {MAX_NAME_CHARS} characters"),
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|&c| !(c.is_alphanumeric() || c == ' ' || "_-.'".contains(c)))
    {
        return Err(ServiceError::invalid(
            Reason::PlayerNameInvalid,
            format!("a display name has letters, digits, spaces and _-.' only, not {bad:?}"),
        ));
    }
    Ok(name.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The id part of `players/{id}`, refused when malformed.
pub fn player_id(name: &str) -> Result<&str, ServiceError> {
    name.strip_prefix("players/")
        .filter(|id| !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| {
            ServiceError::invalid(
                Reason::PlayerNameMalformed,
                format!("a player is named players/{{id}}, not {}", quote(name)),
            )
        })
}

/// The player a host's identity is: `players/{32 hex digits of a hash of issuer and subject}`.
pub fn identity_player(identity: &Identity) -> String {
    let mut digest = Sha256::new();
    digest.update(b"unoflip sign-in\0");
    digest.update(identity.issuer.as_bytes());
    digest.update(b"\0");
    digest.update(identity.subject.as_bytes());
    format!("players/{}", &hex::encode(digest.finalize())[..32])
}

/// A display name from the host's claim: checked, or tidied into one (characters not allowed
/// dropped, cut to the longest), or none.
fn tidy_name(claim: &str) -> Option<String> {
    check_name(claim).ok().or_else(|| {
        let kept: String = claim
            .chars()
            .filter(|&c| c.is_alphanumeric() || c == ' ' || "_-.'".contains(c))
            .take(MAX_NAME_CHARS)
            .collect();
        check_name(&kept).ok()
    })
}

/// The seat token of `seat` of `game` taken by the player whose seat key (its player token, or
/// a signed-in player's stored key) is `seat_key`.
pub fn seat_token(seat_key: &str, game: &str, seat: Seat) -> String {
    let mut digest = Sha256::new();
    digest.update(b"unoflip seat token\0");
    digest.update(seat_key.as_bytes());
    digest.update(b"\0");
    digest.update(game.as_bytes());
    digest.update(b"\0");
    digest.update(seat.to_string().as_bytes());
    hex::encode(digest.finalize())
}

/// `text` as an invite code, if it can be one: letters of the code's alphabet, any case, with
/// spaces and dashes ignored.
pub fn as_code(text: &str) -> Option<String> {
    let code: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '-'))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    (code.len() == CODE_LEN && code.bytes().all(|b| CODE_ALPHABET.contains(&b))).then_some(code)
}

/// A new random invite code.
fn new_code() -> String {
    let mut rng = rand::rng();
    (0..CODE_LEN)
        .map(|_| char::from(CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())]))
        .collect()
}

impl Players {
    /// Players and codes kept in `store`; the host's JWTs are taken when `sign_in` is given.
    pub fn new(store: Arc<dyn EventStore>, sign_in: Option<Arc<SignIn>>) -> Players {
        Players {
            store,
            sign_in,
            indexed: Arc::default(),
            rating: Arc::default(),
        }
    }

    /// Registers a player; returns it and its token (shown once: only its hash is kept).
    pub async fn register(
        &self,
        display_name: &str,
        bot: bool,
    ) -> Result<(Player, String), ServiceError> {
        let display_name = check_name(display_name)?;
        let token = new_token();
        let player = Player {
            name: format!("players/{}", &new_token()[..16]),
            display_name,
            bot,
            token_hash: hex::encode(hash(&token)),
            created_unix: now_unix(),
            ratings: BTreeMap::new(),
            seat_key: None,
        };
        // The index first: a player is never stored without it.
        self.store
            .put_entry(
                PLAYER_TOKENS,
                &player.token_hash,
                player_id(&player.name)?,
                false,
            )
            .await?;
        self.save(&player, true).await?;
        tracing::info!(player = %player.name, bot, "player registered");
        Ok((player, token))
    }

    /// Stores `player` (only if new, when `create_only`).
    async fn save(&self, player: &Player, create_only: bool) -> Result<(), ServiceError> {
        let id = player_id(&player.name)?;
        let text =
            serde_json::to_string(player).map_err(|e| ServiceError::unavailable(e.to_string()))?;
        if self
            .store
            .put_entry(PLAYERS, id, &text, create_only)
            .await?
        {
            Ok(())
        } else {
            Err(ServiceError::unavailable(
                "a player id was drawn twice; try again",
            ))
        }
    }

    /// The player `name` (`players/{id}`).
    pub async fn get(&self, name: &str) -> Result<Player, ServiceError> {
        let id = player_id(name)?;
        let text = self.store.entry(PLAYERS, id).await?.ok_or_else(|| {
            ServiceError::not_found(Reason::PlayerNotFound, format!("no player {}", quote(name)))
        })?;
        serde_json::from_str(&text).map_err(|e| ServiceError::Damaged {
            game: name.to_owned(),
            error: e.to_string(),
        })
    }

    /// The player `name` (or [`ME`]), if `bearer` is its player token or a JWT of the host
    /// that signs it in.
    pub async fn authenticate(
        &self,
        name: &str,
        bearer: Option<&str>,
    ) -> Result<Caller, ServiceError> {
        let Some(bearer) = bearer else {
            return Err(ServiceError::PlayerUnauthenticated(format!(
                "acting as {} needs its player token (or a JWT of the host's sign-in) as \
                 `authorization: Bearer <token>`",
                quote(name)
            )));
        };
        if name != ME {
            player_id(name)?;
        }
        let caller = if sign_in::looks_like_jwt(bearer) {
            let Some(sign_in) = &self.sign_in else {
                return Err(ServiceError::PlayerUnauthenticated(
                    "this server takes no JWT (serve --auth-jwks or --auth-hs256-secret); send \
                     a player token"
                        .to_owned(),
                ));
            };
            let identity = sign_in.verify(bearer).await?;
            self.signed_in(&identity).await?
        } else if name == ME {
            self.by_token(bearer).await?
        } else {
            let player = self.get(name).await?;
            let presented: TokenHash = hash(bearer);
            if hex::encode(presented) != player.token_hash {
                return Err(ServiceError::PlayerUnauthenticated(format!(
                    "this is not the player token of {}",
                    quote(name)
                )));
            }
            Caller {
                player,
                seat_key: bearer.to_owned(),
            }
        };
        if name != ME && name != caller.player.name {
            return Err(ServiceError::PlayerUnauthenticated(format!(
                "this token signs in {}, not {}",
                caller.player.name,
                quote(name)
            )));
        }
        Ok(caller)
    }

    /// The player whose player token is `token`.
    async fn by_token(&self, token: &str) -> Result<Caller, ServiceError> {
        let token_hash = hex::encode(hash(token));
        let mut id = self.store.entry(PLAYER_TOKENS, &token_hash).await?;
        if id.is_none() {
            // Players registered before the index: indexed once per server.
            self.indexed
                .get_or_try_init(|| async {
                    for player in self.all().await? {
                        if let Ok(id) = player_id(&player.name)
                            && !player.token_hash.is_empty()
                        {
                            self.store
                                .put_entry(PLAYER_TOKENS, &player.token_hash, id, false)
                                .await?;
                        }
                    }
                    Ok::<(), ServiceError>(())
                })
                .await?;
            id = self.store.entry(PLAYER_TOKENS, &token_hash).await?;
        }
        let player = match id {
            Some(id) => Some(self.get(&format!("players/{id}")).await?),
            None => None,
        };
        match player {
            Some(player) if player.token_hash == token_hash => Ok(Caller {
                player,
                seat_key: token.to_owned(),
            }),
            _ => Err(ServiceError::PlayerUnauthenticated(
                "this is no player's token".to_owned(),
            )),
        }
    }

    /// The player `identity` signs in: created on first use, its display name kept as the
    /// host's claim says.
    pub async fn signed_in(&self, identity: &Identity) -> Result<Caller, ServiceError> {
        let name = identity_player(identity);
        let display_name = identity.display_name.as_deref().and_then(tidy_name);
        for _ in 0..2 {
            match self.get(&name).await {
                Ok(mut player) => {
                    if let Some(fresh) = &display_name
                        && *fresh != player.display_name
                    {
                        player.display_name = fresh.clone();
                        self.save(&player, false).await?;
                    }
                    let Some(seat_key) = player.seat_key.clone() else {
                        return Err(ServiceError::Damaged {
                            game: name,
                            error: "a signed-in player's record has no seat key".to_owned(),
                        });
                    };
                    return Ok(Caller { player, seat_key });
                }
                Err(ServiceError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
            let seat_key = new_token();
            let player = Player {
                name: name.clone(),
                display_name: display_name
                    .clone()
                    .unwrap_or_else(|| format!("Player {}", &name["players/".len()..][..4])),
                bot: false,
                // No player token acts as it: no token hashes to the empty string.
                token_hash: String::new(),
                created_unix: now_unix(),
                ratings: BTreeMap::new(),
                seat_key: Some(seat_key.clone()),
            };
            let id = player_id(&player.name)?;
            let text = serde_json::to_string(&player)
                .map_err(|e| ServiceError::unavailable(e.to_string()))?;
            if self.store.put_entry(PLAYERS, id, &text, true).await? {
                tracing::info!(player = %player.name, "player signed in for the first time");
                return Ok(Caller { player, seat_key });
            }
            // Another server created it first: read it.
        }
        Err(ServiceError::unavailable(
            "the signed-in player could not be read or created; try again",
        ))
    }

    /// Notes that `player` took `seat` of `game` (listed by [`Players::games`]).
    pub async fn note_seat(
        &self,
        player: &str,
        game: &str,
        seat: Seat,
    ) -> Result<(), ServiceError> {
        let id = player_id(player)?;
        let newest_first = u64::MAX - now_millis();
        let key = format!("{id}/{newest_first:020}/{game}");
        self.store
            .put_entry(PLAYER_GAMES, &key, &seat.to_string(), false)
            .await?;
        Ok(())
    }

    /// Up to `limit` of the seats `player` took, newest first.
    pub async fn games(&self, player: &str, limit: usize) -> Result<Vec<PlayerSeat>, ServiceError> {
        let id = player_id(player)?;
        let rows = self
            .store
            .entries(PLAYER_GAMES, &format!("{id}/"), limit)
            .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(key, seat)| {
                let game = key.splitn(3, '/').nth(2)?;
                Some(PlayerSeat {
                    game: game.to_owned(),
                    seat: seat.parse().ok()?,
                })
            })
            .collect())
    }

    /// The player that stands for the built-in bot `level` in ratings (registered on first
    /// use; no token acts as it).
    pub async fn builtin(&self, level: Level) -> Result<Player, ServiceError> {
        let name = format!("players/{}", ratings::builtin_id(level));
        let player = Player {
            name: name.clone(),
            display_name: format!("Built-in {}", level.name()),
            bot: true,
            // No token hashes to the empty string.
            token_hash: String::new(),
            created_unix: now_unix(),
            ratings: BTreeMap::new(),
            seat_key: None,
        };
        let text =
            serde_json::to_string(&player).map_err(|e| ServiceError::unavailable(e.to_string()))?;
        self.store
            .put_entry(PLAYERS, player_id(&name)?, &text, true)
            .await?;
        self.get(&name).await
    }

    /// Stores a rated game's outcome and updates its players' ratings; `false` (and nothing
    /// changed) if the game's outcome was stored before.
    pub async fn record_outcome(&self, outcome: &Outcome) -> Result<bool, ServiceError> {
        let _one_at_a_time = self.rating.lock().await;
        let text =
            serde_json::to_string(outcome).map_err(|e| ServiceError::unavailable(e.to_string()))?;
        if !self
            .store
            .put_entry(RATED, &outcome.game, &text, true)
            .await?
        {
            return Ok(false);
        }
        let key = ratings::ruleset_key(outcome.ruleset);
        let mut records = Vec::new();
        let mut current = HashMap::new();
        for (name, _) in &outcome.places {
            let player = self.get(name).await?;
            current.insert(
                name.clone(),
                player.ratings.get(key).copied().unwrap_or_default(),
            );
            records.push(player);
        }
        ratings::rate(&mut current, outcome);
        for mut player in records {
            if let Some(r) = current.get(&player.name) {
                player.ratings.insert(key.to_owned(), *r);
            }
            self.save(&player, false).await?;
        }
        Ok(true)
    }

    /// Every stored outcome of a rated game.
    pub async fn outcomes(&self) -> Result<Vec<Outcome>, ServiceError> {
        let rows = self.store.entries(RATED, "", usize::MAX).await?;
        rows.into_iter()
            .map(|(game, text)| {
                serde_json::from_str(&text).map_err(|e| ServiceError::Damaged {
                    game,
                    error: e.to_string(),
                })
            })
            .collect()
    }

    /// Every registered player.
    async fn all(&self) -> Result<Vec<Player>, ServiceError> {
        let rows = self.store.entries(PLAYERS, "", usize::MAX).await?;
        rows.into_iter()
            .map(|(id, text)| {
                serde_json::from_str(&text).map_err(|e| ServiceError::Damaged {
                    game: format!("players/{id}"),
                    error: e.to_string(),
                })
            })
            .collect()
    }

    /// Recomputes every player's ratings from the stored outcomes (after a crash between an
    /// outcome and its players' records, say); returns how many outcomes were replayed.
    pub async fn recompute(&self) -> Result<usize, ServiceError> {
        let _one_at_a_time = self.rating.lock().await;
        let mut outcomes = self.outcomes().await?;
        let replayed = ratings::replay(&mut outcomes);
        for mut player in self.all().await? {
            let mut fresh = BTreeMap::new();
            for (key, by_player) in &replayed {
                if let Some(r) = by_player.get(&player.name) {
                    fresh.insert((*key).to_owned(), *r);
                }
            }
            if fresh != player.ratings {
                player.ratings = fresh;
                self.save(&player, false).await?;
            }
        }
        Ok(outcomes.len())
    }

    /// Players rated in `ruleset` (bots or people), best first by mu - 3 sigma: up to `limit`
    /// after the first `skip`, and whether more follow.
    pub async fn leaderboard(
        &self,
        ruleset: Ruleset,
        bots: bool,
        skip: usize,
        limit: usize,
    ) -> Result<(Vec<(Player, Rating)>, bool), ServiceError> {
        let key = ratings::ruleset_key(ruleset);
        let mut rated: Vec<(Player, Rating)> = self
            .all()
            .await?
            .into_iter()
            .filter(|p| p.bot == bots)
            .filter_map(|p| {
                let r = p.ratings.get(key).copied()?;
                Some((p, r))
            })
            .collect();
        rated.sort_by(|(pa, a), (pb, b)| {
            b.conservative()
                .total_cmp(&a.conservative())
                .then_with(|| pa.name.cmp(&pb.name))
        });
        let more = rated.len() > skip.saturating_add(limit);
        Ok((rated.into_iter().skip(skip).take(limit).collect(), more))
    }

    /// A new invite code for `game`.
    pub async fn new_code(&self, game: &str) -> Result<String, ServiceError> {
        for _ in 0..8 {
            let code = new_code();
            if self.store.put_entry(CODES, &code, game, true).await? {
                return Ok(code);
            }
        }
        Err(ServiceError::exhausted(
            Reason::InviteCodesExhausted,
            "no free invite code was found; try again",
        ))
    }

    /// Frees `game`'s invite code once the game is over, so that codes are not held by games
    /// long finished (and may be given out again).
    pub async fn forget_code(&self, code: &str, game: &str) -> Result<(), ServiceError> {
        self.store.remove_entry(CODES, code, game).await?;
        Ok(())
    }

    /// The game `code` names, if any.
    pub async fn code(&self, code: &str) -> Result<Option<String>, ServiceError> {
        Ok(self.store.entry(CODES, code).await?)
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_tidied() {
        assert_eq!(
            check_name("  Ada   Lovelace ").ok(),
            Some("Ada Lovelace".into())
        );
        assert_eq!(check_name("Zoë-2").ok(), Some("Zoë-2".into()));
        for bad in ["", "   ", "<script>", "a\u{0}b", &"x".repeat(33)] {
            assert_eq!(
                check_name(bad).map_err(|e| e.reason()),
                Err(Reason::PlayerNameInvalid),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn codes_avoid_ambiguous_letters_and_read_loosely() {
        for _ in 0..200 {
            let code = new_code();
            assert_eq!(code.len(), CODE_LEN);
            assert!(!code.contains(['I', 'L', 'O', '0', '1']), "{code}");
            assert_eq!(as_code(&code.to_lowercase()), Some(code.clone()));
        }
        assert_eq!(as_code("abc-def"), Some("ABCDEF".into()));
        assert_eq!(as_code("ABCDE0"), None);
        assert_eq!(as_code("games/abc"), None);
    }

    #[test]
    fn seat_tokens_differ_by_player_game_and_seat() {
        let a = seat_token("p", "games/1", 0);
        assert_eq!(a, seat_token("p", "games/1", 0));
        assert_ne!(a, seat_token("q", "games/1", 0));
        assert_ne!(a, seat_token("p", "games/2", 0));
        assert_ne!(a, seat_token("p", "games/1", 1));
    }
}
