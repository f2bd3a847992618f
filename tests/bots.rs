//! Built-in bots and the arena.

mod common;

use common::Table;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use unoflip::bots::{self, Level, Think};
use unoflip::cli::arena::{self, ArenaConfig};
use unoflip::rules::{Ruleset, Viewer};

#[test]
fn bots_finish_thousands_of_games_of_both_rulesets_with_any_seat_count() {
    let mut played = 0;
    for ruleset in [Ruleset::Flip, Ruleset::Classic] {
        for seats in 2..=10 {
            let levels = (0..seats)
                .map(|s| {
                    if s % 2 == 0 {
                        Level::Heuristic
                    } else {
                        Level::Random
                    }
                })
                .collect();
            let config = ArenaConfig {
                ruleset,
                levels,
                games: 120,
                seed: seats as u64,
                think: Think::for_playouts(20),
                jobs: 2,
            };
            let report = arena::run(&config, |_| {}).unwrap();
            let wins: u64 = report.levels.iter().map(|l| l.wins).sum();
            assert_eq!(
                wins, 120,
                "every game of {seats} seats of {ruleset:?} ends with a winner"
            );
            played += 120;
        }
    }
    assert!(played >= 2000);
}

#[test]
fn the_heuristic_bot_beats_three_random_bots_well_above_a_fair_share() {
    for ruleset in [Ruleset::Flip, Ruleset::Classic] {
        let config = ArenaConfig {
            ruleset,
            levels: vec![
                Level::Heuristic,
                Level::Random,
                Level::Random,
                Level::Random,
            ],
            games: 2000,
            seed: 42,
            think: Think::default(),
            jobs: 2,
        };
        let report = arena::run(&config, |_| {}).unwrap();
        let heuristic = report
            .levels
            .iter()
            .find(|l| l.level == Level::Heuristic)
            .unwrap();
        assert_eq!(heuristic.seat_games, 2000);
        assert!(heuristic.win_rate_ci.0 > 0.25, "{ruleset:?}: {heuristic:?}");
        let random = report
            .levels
            .iter()
            .find(|l| l.level == Level::Random)
            .unwrap();
        assert_eq!(random.seat_games, 6000);
        assert!(heuristic.mean_score > random.mean_score);
    }
}

#[test]
fn the_wilson_interval_brackets_the_rate() {
    let (lo, hi) = arena::wilson(50, 100);
    assert!(lo < 0.5 && hi > 0.5 && lo > 0.39 && hi < 0.61, "{lo} {hi}");
    assert_eq!(arena::wilson(0, 0), (0.0, 1.0));
}

/// Two deals that differ only in hidden cards: seat 2 holds red 1|pink 3 in one and red
/// draw-one|pink 3 in the other, the other card lying second in the draw pile. Seat 1 sees the
/// same table in both.
#[test]
fn a_bot_chooses_the_same_action_when_only_hidden_cards_differ() {
    let deal = |swap: bool| {
        let mut t = Table::flip(3);
        let [top, a, b, c, next] = t.cards(["red 5", "red 7", "wild", "blue 2", "green 4"]);
        let [x, y] = t.cards(["red 1|pink 3", "red draw-one|pink 3"]);
        let (held, hidden) = if swap { (y, x) } else { (x, y) };
        t.hand(1, &[a, b, c])
            .hand(2, &[held])
            .top(top)
            .draw(&[next, hidden]);
        t.position(1, None).0
    };
    let (one, other) = (deal(false), deal(true));
    assert_ne!(one, other, "the games differ");
    assert_eq!(
        one.view(Viewer::Seat(1)),
        other.view(Viewer::Seat(1)),
        "seat 1 sees the same"
    );
    for level in Level::ALL {
        for seed in 0..20 {
            // A searching bot thinks for a number of playouts, not a time, so that both
            // searches are the same.
            let think = Think::for_playouts(50);
            let a = bots::choose_thinking(
                level,
                &one.view(Viewer::Seat(1)),
                think,
                &mut SmallRng::seed_from_u64(seed),
            );
            let b = bots::choose_thinking(
                level,
                &other.view(Viewer::Seat(1)),
                think,
                &mut SmallRng::seed_from_u64(seed),
            );
            assert_eq!(a, b, "{level:?}");
            assert!(a.is_some_and(|a| one.is_legal(1, a)));
        }
    }
}

#[test]
fn the_heuristic_bot_calls_uno_with_its_play_and_declares_the_color_it_holds_most() {
    let mut t = Table::flip(3);
    let [top, w, g] = t.cards(["red 5", "wild", "green 4"]);
    t.hand(1, &[w, g]).top(top);
    let (game, _) = t.position(1, None);
    let action = bots::choose(
        Level::Heuristic,
        &game.view(Viewer::Seat(1)),
        &mut SmallRng::seed_from_u64(1),
    );
    // It keeps the wild and plays... green 4 does not match red 5, so the wild it is, declaring
    // green (the color it holds), with the UNO call.
    assert_eq!(
        action,
        Some(unoflip::rules::Action::Play {
            card: w,
            color: Some(unoflip::rules::Color::Green),
            uno: true
        })
    );
}

/// [H-MULTI]: the heuristic bot plays identical cards together, calling UNO when they leave one.
#[test]
fn the_heuristic_bot_plays_identical_cards_together() {
    use unoflip::rules::{Action, HouseRules, Options};
    let mut t = Table::flip(3).options(Options {
        house: HouseRules {
            multi: true,
            ..HouseRules::default()
        },
        ..Options::default()
    });
    let [top, a, b, g] = t.cards(["red 5", "red 2", "red 2", "green 4"]);
    t.hand(1, &[a, b, g]).top(top);
    let (game, _) = t.position(1, None);
    let action = bots::choose(
        Level::Heuristic,
        &game.view(Viewer::Seat(1)),
        &mut SmallRng::seed_from_u64(1),
    );
    match action {
        Some(Action::PlayMany { cards, uno: true }) => {
            let mut played = cards.as_slice().to_vec();
            played.sort_unstable();
            let mut pair = vec![a, b];
            pair.sort_unstable();
            assert_eq!(played, pair);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_heuristic_bot_challenges_a_wild_draw_from_a_full_hand_and_not_from_a_short_one() {
    use unoflip::rules::{Action, Color};
    for (others, expected) in [(5usize, Action::Challenge), (1, Action::Accept)] {
        let mut t = Table::flip(3);
        let top = t.card("red 5");
        let wd = t.card("wild-draw-two");
        let specs = [
            "blue 1", "blue 2", "blue 3", "green 1", "green 2", "green 3",
        ];
        let mut hand1 = vec![wd];
        hand1.extend(specs[..others].iter().map(|s| t.card(s)));
        let victim = t.cards(["yellow 1", "yellow 2"]);
        t.hand(1, &hand1).hand(2, &victim).top(top);
        let (mut game, _) = t.position(1, None);
        // The offender calls UNO when it is down to one card, so there is nobody to catch.
        common::act(
            &mut game,
            1,
            Action::Play {
                card: wd,
                color: Some(Color::Blue),
                uno: others == 1,
            },
        );
        let action = bots::choose(
            Level::Heuristic,
            &game.view(Viewer::Seat(2)),
            &mut SmallRng::seed_from_u64(1),
        );
        assert_eq!(action, Some(expected), "offender holds {others} cards");
    }
}

#[test]
fn the_heuristic_bot_catches_a_player_who_forgot_uno() {
    use unoflip::rules::Action;
    let mut t = Table::flip(3);
    let [top, a, b] = t.cards(["red 5", "red 7", "blue 2"]);
    let mine = t.cards(["green 1", "green 2"]);
    t.hand(1, &[a, b]).hand(2, &mine).top(top);
    let (mut game, _) = t.position(1, None);
    common::play(&mut game, 1, a);
    let action = bots::choose(
        Level::Heuristic,
        &game.view(Viewer::Seat(2)),
        &mut SmallRng::seed_from_u64(1),
    );
    assert_eq!(action, Some(Action::Catch { seat: 1 }));
}
