//! Tests of the binary as shipped: each starts `unoflip serve` (`CARGO_BIN_EXE_unoflip`) as a
//! user would, with flags, and talks to it over gRPC: restarts, several servers on one
//! PostgreSQL, leaving, cancelled requests, durable request ids and the games' lifecycle.

mod attacks;
mod cancelled;
#[path = "../common/mod.rs"]
mod common;
mod edge;
mod expert;
mod fuzz;
mod harness;
mod leave;
mod lifecycle;
mod matchmaking;
mod players;
mod publish;
mod request_ids;
mod restart;
mod shutdown;
mod two_servers;
