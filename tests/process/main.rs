//! Tests of the binary as shipped: each starts `unoflip serve` (`CARGO_BIN_EXE_unoflip`) as a
//! user would, with flags, and talks to it over gRPC: restarts, several servers on one
//! PostgreSQL, leaving, cancelled requests, durable request ids, a SIGKILL under load, the
//! terminal client, and the games' lifecycle. Every test that starts the binary lives here.

mod attacks;
mod cancelled;
#[path = "../common/mod.rs"]
mod common;
mod connect;
mod correspondence;
mod crash;
mod edge;
mod expert;
mod fuzz;
mod harness;
#[path = "../kit/mod.rs"]
mod kit;
mod leave;
mod lifecycle;
mod matchmaking;
mod notify;
mod play;
mod players;
mod publish;
mod request_ids;
mod restart;
mod serve;
mod shutdown;
mod sign_in;
mod tls;
mod two_servers;
