//! End-to-end tests of the gRPC service over real TCP on port 0 with tonic clients.

mod announced;
#[path = "../common/mod.rs"]
mod common;
mod fold;
mod games;
mod harness;
#[path = "../kit/mod.rs"]
mod kit;
mod limits;
mod ops;
mod recovery;
mod refusals;
mod request_ids;
mod streams;
mod tampered;
mod two_servers;
