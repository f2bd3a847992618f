//! `unoflip`: a game server for UNO Flip and classic UNO.
//!
//! # Layout
//! - [`rules`]: the pure game engine: cards, decks, state, legal actions, `decide` and `apply`,
//!   per-viewer views and event projections. No I/O.
//! - [`proto`]: the code generated from `proto/unoflip/v1/` (messages, client, server).
//! - [`service`]: the service: the edge (gRPC, HTTP), the live games, the accounts, `serve`.
//! - [`chan`]: the small channels a live game holds (its mailbox, its version signal).
//! - [`store`]: the event store behind the service (memory, SQLite, PostgreSQL).
//! - [`bots`]: built-in bots that play from a seat's view.
//! - [`cli`]: the subcommands: `serve`, `play` (a terminal client for a person, over gRPC like
//!   any client) and `arena` (bot against bot).

#![deny(clippy::unwrap_used)]

pub mod bots;
pub mod chan;
pub mod cli;
pub mod rules;
pub mod service;
pub mod store;

/// Generated protobuf and gRPC code for `unoflip.v1`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("unoflip.v1");
    // The proto3 JSON mapping of every message (pbjson), for Connect's JSON.
    include!(concat!(env!("OUT_DIR"), "/unoflip.v1.serde.rs"));

    /// The encoded descriptor set of `proto/`, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/unoflip_descriptor.bin"));
}

/// The Rust examples of the docs run as doctests, so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../docs/architecture.md")]
struct ArchitectureDoctests;
