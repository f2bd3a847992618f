//! The test kit: what the tests and the benches share to start a server (the built binary, or in
//! process), reach it, and set up PostgreSQL and NATS. A test binary includes it with
//! `#[path = "../kit/mod.rs"] mod kit;` (a bench with `#[path = "../tests/kit/mod.rs"]`).

// Each test binary uses some of it.
#![allow(dead_code, unused_imports)]

pub mod binary;
pub mod client;
pub mod endpoint;
pub mod in_process;
pub mod nats;
pub mod postgres;
pub mod tools;

pub use binary::{ADMIN, Launch, Server, binary, temp_sqlite};
pub use client::{Client, authed, connect, pick_move, reason};
pub use endpoint::{Answer, Endpoint, Received};
pub use in_process::{IN_PROCESS_ADMIN, InProcess};
pub use nats::Nats;
pub use postgres::{
    FreshPostgres, postgres_for_run, postgres_position, test_postgres, test_postgres_url,
};
pub use tools::find_tool;
