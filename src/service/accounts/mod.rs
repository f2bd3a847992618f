//! Accounts: registered players and their tokens, invite codes, and ratings (the rater turns
//! the finishes games report into them).

pub mod players;
pub mod rater;
pub mod ratings;
pub mod secret;
