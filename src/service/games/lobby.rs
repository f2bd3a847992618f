//! What a game is besides its events: its setup, its seats and who holds them (token hashes),
//! its timer and bot level, when it was created and whether its lobby expired. The store keeps
//! it as the game's record (JSON), so that any server can rebuild the game; [`GameInfo`] is a
//! game's public description, which `convert` turns into a message.

use std::time::Duration;

use crate::bots::Level;
use crate::rules::{Game, Seat, Setup};
use crate::service::games::Unloadable;

pub use crate::service::accounts::secret::{TokenHash, hash, new_token, now_unix};

/// One seat of the table.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeatState {
    /// The hash of the seat's token, once a person joined.
    #[serde(with = "token_hash_hex")]
    pub token_hash: Option<TokenHash>,
    /// The player's name at the table.
    pub name: String,
    /// The server plays this seat (a bot seat, or a seat whose player left).
    pub server_played: bool,
    /// Taken by a person or a bot.
    pub taken: bool,
    /// The player left: the seat's token no longer acts.
    #[serde(default)]
    pub left: bool,
    /// The registered player who took it (`players/{id}`), if taken with a player token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<String>,
}

/// A game's record.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Lobby {
    /// Ruleset, seats, options, dealer, deck.
    pub setup: Setup,
    /// The turn timer.
    #[serde(rename = "timer_secs", with = "secs")]
    pub timer: Option<Duration>,
    /// The level of the server's bots.
    pub bot_level: Level,
    /// Milliseconds its searching bots think per move; 0: the server's default.
    #[serde(default)]
    pub bot_think_ms: u32,
    /// The seats the server played from the start.
    #[serde(default)]
    pub bot_seats: Vec<Seat>,
    /// Server seats that play at another level than `bot_level` (quick play's bot fill).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seat_levels: Vec<(Seat, Level)>,
    /// The seats.
    pub seats: Vec<SeatState>,
    /// When the lobby was created (Unix seconds).
    #[serde(default)]
    pub created_unix: u64,
    /// The lobby was never started and expired.
    #[serde(default)]
    pub expired: bool,
    /// The game that follows this one, once a player asked for a rematch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rematch: Option<String>,
    /// Finishing updates its players' ratings; every seat is a registered player's or the
    /// server's.
    #[serde(default)]
    pub rated: bool,
    /// The invite code that names the game while its lobby is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite_code: Option<String>,
    /// With a turn timer of a minute or more: the version at which the running turn's deadline
    /// was set, and the deadline (Unix milliseconds), so that a restart keeps it. Boxed: every
    /// live game holds a lobby, and few have such a timer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_deadline: Option<Box<(u64, u64)>>,
}

impl Lobby {
    /// The record as stored.
    pub fn to_record(&self) -> String {
        // Plain data with string keys: serializing it cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a stored record.
    pub fn from_record(text: &str) -> Result<Lobby, Unloadable> {
        Ok(serde_json::from_str(text)?)
    }

    /// The level the server plays `seat` at.
    pub fn level_of(&self, seat: Seat) -> Level {
        self.seat_levels
            .iter()
            .find(|(s, _)| *s == seat)
            .map_or(self.bot_level, |(_, level)| *level)
    }

    /// Whether every seat was the server's from the start (a game of bots, which ends by
    /// itself and is never abandoned).
    pub fn all_bots(&self) -> bool {
        self.bot_seats.len() == self.seats.len()
    }

    /// The seat `token` holds, and whether its player left.
    pub fn seat_of(&self, token: &TokenHash) -> Option<(Seat, bool)> {
        self.seats
            .iter()
            .position(|s| s.token_hash.as_ref() == Some(token))
            .map(|seat| (seat, self.seats[seat].left))
    }
}

/// Where a game is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Seats are open.
    Waiting,
    /// Being played.
    Playing,
    /// Over, with winners.
    Finished,
    /// Over without winners: abandoned.
    Abandoned,
    /// A lobby that was never started and expired.
    Expired,
}

impl Status {
    /// The status of a game with this lobby and state.
    pub fn of(lobby: &Lobby, game: Option<&Game>) -> Status {
        match game {
            None if lobby.expired => Status::Expired,
            None => Status::Waiting,
            Some(g) if !g.is_over() => Status::Playing,
            Some(g) if g.winners().is_empty() => Status::Abandoned,
            Some(_) => Status::Finished,
        }
    }

    /// Over: nothing will change any more.
    pub fn is_final(self) -> bool {
        matches!(self, Status::Finished | Status::Abandoned | Status::Expired)
    }

    /// A lobby of this status with this record can be joined: waiting, with a seat nobody took.
    pub fn open(self, lobby: &Lobby) -> bool {
        self == Status::Waiting && lobby.seats.iter().any(|s| !s.taken)
    }
}

/// A game's public description.
#[derive(Clone, Debug)]
pub struct GameInfo {
    /// `games/{id}`.
    pub name: String,
    /// Its record.
    pub lobby: Lobby,
    /// Where it is in its life.
    pub status: Status,
    /// Its version (events in its log).
    pub version: u64,
    /// The winners, once over.
    pub winners: Vec<Seat>,
}

/// Seat token hashes as hex in records.
mod token_hash_hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(hash: &Option<[u8; 32]>, s: S) -> Result<S::Ok, S::Error> {
        match hash {
            Some(h) => s.serialize_some(&hex::encode(h)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<[u8; 32]>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| {
            let bytes = hex::decode(t).map_err(serde::de::Error::custom)?;
            <[u8; 32]>::try_from(bytes.as_slice()).map_err(serde::de::Error::custom)
        })
        .transpose()
    }
}

/// A duration as whole seconds in records.
mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_secs))
    }
}
