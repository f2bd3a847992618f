//! The rule book's scenarios, one module per section of docs/rules.md: each test sets an exact
//! deck order (`common::Table`), plays, and asserts the exact state after, naming the rule id
//! it checks. One test binary, so that they build and link once.

#[path = "../common/mod.rs"]
mod common;

mod classic;
mod deck;
mod flip_end;
mod flip_penalties;
mod flip_start;
mod flip_turns;
mod house_rules;
mod views;
