//! Small channels built for a live game's footprint: a game's command [`mailbox`] and the version
//! [`signal`] its streams wait on. Each idle game holds one of each, so they cost a few words
//! where tokio's take hundreds of bytes.

pub mod mailbox;
pub mod signal;
