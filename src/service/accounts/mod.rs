//! Accounts: registered players and their tokens, the host app's sign-in (its JWTs stand for
//! players), invite codes, and ratings (the rater turns the finishes games report into them).

pub mod players;
pub mod rater;
pub mod ratings;
pub mod secret;
pub mod sign_in;
