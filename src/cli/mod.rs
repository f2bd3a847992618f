//! The `unoflip` command's subcommands, each in its own module: `serve` (the gRPC server), `play`
//! (a terminal client for a person) and `arena` (bots against bots in process). `main.rs` only
//! parses the command line and calls them.

pub mod arena;
pub mod play;
pub mod serve;
