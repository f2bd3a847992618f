//! Random playouts: rounds played to the end by uniformly random legal actions of the seat whose
//! turn it is, on one core. Reports rounds/s and actions/s per ruleset and seat count, each
//! action carried out as a search's playouts do (`act_listed_into`: taken from the listing, not
//! checked again), and actions/s with every action checked as a client's move is (`act_into`).
//!
//! `cargo bench --bench playout` (set `PLAYOUT_SECONDS` to change the time per case, default 3).
//!
//! Then the expert bot's search speed: playouts per second (each a world sampled from the seat's
//! view and a round played out from it) from the first position of four-seat games.
//!
//! `PLAYOUT_ROUNDS=n` plays exactly `n` rounds of four-seat UNO Flip instead and prints the
//! actions taken (`PLAYOUT_CHECKED=1`: checking each action): run it under `valgrind --tool=callgrind` to count instructions per action,
//! which, unlike time, does not depend on what else the machine is doing.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use unoflip::bots::{self, Level, Think};
use unoflip::rules::{Action, Game, Options, Ruleset, Setup, Viewer};

fn main() {
    let seconds: f64 = std::env::var("PLAYOUT_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    if let Some(rounds) = std::env::var("PLAYOUT_ROUNDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        let checked = std::env::var_os("PLAYOUT_CHECKED").is_some();
        let (rounds, actions, elapsed) = run(Ruleset::Flip, 4, Duration::MAX, rounds, checked);
        println!(
            "Flip 4 seats: {rounds} rounds, {actions} actions in {:.3} s",
            elapsed.as_secs_f64()
        );
        return;
    }
    println!(
        "{:<8} {:>5} {:>12} {:>14} {:>12} {:>16}",
        "ruleset", "seats", "rounds/s", "actions/s", "actions/rnd", "checked act/s"
    );
    let budget = Duration::from_secs_f64(seconds);
    for ruleset in [Ruleset::Flip, Ruleset::Classic] {
        for seats in [2, 4, 10] {
            let (rounds, actions, elapsed) = run(ruleset, seats, budget, u64::MAX, false);
            let secs = elapsed.as_secs_f64();
            let (_, checked, checked_time) = run(ruleset, seats, budget, u64::MAX, true);
            println!(
                "{:<8} {:>5} {:>12.0} {:>14.0} {:>12.1} {:>16.0}",
                format!("{ruleset:?}"),
                seats,
                rounds as f64 / secs,
                actions as f64 / secs,
                actions as f64 / rounds as f64,
                checked as f64 / checked_time.as_secs_f64()
            );
        }
    }
    for ruleset in [Ruleset::Flip, Ruleset::Classic] {
        let (playouts, elapsed) = search(ruleset, Duration::from_secs_f64(seconds));
        println!(
            "expert search, {ruleset:?} 4 seats: {:.0} playouts/s ({:.0} per 50 ms move)",
            playouts as f64 / elapsed.as_secs_f64(),
            playouts as f64 / elapsed.as_secs_f64() / 20.0
        );
    }
}

/// Runs the expert's search, 500 playouts a move, from first positions until `budget` is spent;
/// returns playouts made and the time taken.
fn search(ruleset: Ruleset, budget: Duration) -> (u64, Duration) {
    let mut rng = SmallRng::seed_from_u64(0x5ea4c4);
    let setup = Setup::new(ruleset, 4);
    let think = Think::for_playouts(500);
    let mut playouts = 0;
    let start = Instant::now();
    while start.elapsed() < budget {
        let Ok((game, _)) = Game::new(&setup, &mut rng) else {
            panic!("a default setup is valid");
        };
        let view = game.view(Viewer::Seat(game.turn()));
        if bots::choose_thinking(Level::Expert, &view, think, &mut rng).is_some() {
            playouts += 500;
        }
    }
    (playouts, start.elapsed())
}

/// A uniformly random index below `n` (Lemire's multiply-shift, whose bias for lists this short
/// is below 2^-25): the policy should cost little next to the engine it drives.
fn pick(rng: &mut SmallRng, n: usize) -> usize {
    let n = u64::try_from(n).unwrap_or(u64::MAX);
    usize::try_from((u64::from(rng.next_u32()) * n) >> 32).unwrap_or(0)
}

/// Plays single-round games until `budget` is spent or `max_rounds` are played (in hundreds
/// when timed), each action `checked` or carried out as listed; returns rounds, actions and time
/// taken.
fn run(
    ruleset: Ruleset,
    seats: usize,
    budget: Duration,
    max_rounds: u64,
    checked: bool,
) -> (u64, u64, Duration) {
    let mut rng = SmallRng::seed_from_u64(0x0f11b);
    let mut setup = Setup::new(ruleset, seats);
    setup.options = Options {
        single_round: true,
        ..Options::default()
    };
    let mut legal: Vec<Action> = Vec::new();
    let mut events = Vec::new();
    let (mut rounds, mut actions) = (0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < budget && rounds < max_rounds {
        for _ in 0..100.min(max_rounds) {
            let Ok((mut game, _)) = Game::new(&setup, &mut rng) else {
                panic!("a default setup is valid");
            };
            while !game.is_over() {
                let seat = game.turn();
                game.legal_actions_into(seat, &mut legal);
                let action = legal[pick(&mut rng, legal.len())];
                events.clear();
                if checked {
                    if game.act_into(seat, action, &mut rng, &mut events).is_err() {
                        panic!("a listed action was refused");
                    }
                } else {
                    game.act_listed_into(seat, action, &mut rng, &mut events);
                }
                actions += 1;
            }
            rounds += 1;
        }
    }
    (rounds, actions, start.elapsed())
}
