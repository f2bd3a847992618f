//! `unoflip`: a game server for UNO Flip and classic UNO.
//!
//! # Layout
//! - [`rules`]: the pure game engine: cards, decks, state, legal actions, `decide` and `apply`,
//!   per-viewer views and event projections. No I/O.
//! - `store`, `service` (to come): the event store and the gRPC service built on the engine.

#![deny(clippy::unwrap_used)]

pub mod rules;

/// The README's examples run as doctests, so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
