//! Accounts: registered players and their tokens, invite codes, and ratings.

pub mod players;
pub mod ratings;
pub mod secret;
