//! The expert bot and the worlds it searches: every sampled world agrees with every public fact
//! of the view it was sampled from (docs/rules.md V-1..V-4), the bot answers with a listed
//! action within its budget, and it is stronger than the heuristic.

mod common;

use std::time::{Duration, Instant};

use common::{Table, act, assert_conserved, play};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use unoflip::bots::{self, Level, Think};
use unoflip::cli::arena::{self, ArenaConfig};
use unoflip::rules::*;

/// A game of `seats` seats with random house rules, played `steps` random legal actions in.
fn random_position(seed: u64, seats: usize, ruleset: Ruleset, steps: usize) -> Option<Game> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut setup = Setup::new(ruleset, seats);
    setup.options.house = HouseRules {
        stacking: rng.random_bool(0.3),
        jump_in: rng.random_bool(0.3),
        seven_zero: rng.random_bool(0.3),
        draw_to_match: rng.random_bool(0.3),
        multi: rng.random_bool(0.3),
        false_uno: rng.random_bool(0.2),
        strict_wild_draw: rng.random_bool(0.3),
        play_to_last: rng.random_bool(0.3),
    };
    let (mut game, _) = Game::new(&setup, &mut rng).ok()?;
    for _ in 0..steps {
        if game.is_over() {
            break;
        }
        let seat = game.turn();
        let legal = game.legal_actions(seat);
        let action = legal[rng.random_range(0..legal.len())];
        game.act(seat, action, &mut rng).ok()?;
    }
    Some(game)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// [V-1..V-4]: the world sampled from a seat's view, seen from that seat, is that view:
    /// its own hand, every count, every inactive face of every hand and of the draw pile's top,
    /// the discard pile, the phase, and the legal actions. And it holds every card once.
    #[test]
    fn every_sampled_world_agrees_with_every_public_fact(
        seed: u64, seats in 2usize..=6, classic: bool, steps in 0usize..300,
    ) {
        let ruleset = if classic { Ruleset::Classic } else { Ruleset::Flip };
        let Some(game) = random_position(seed, seats, ruleset, steps) else {
            return Ok(());
        };
        let mut rng = SmallRng::seed_from_u64(seed ^ 1);
        for seat in 0..seats {
            let view = game.view(Viewer::Seat(seat));
            for _ in 0..3 {
                // Public facts only, and with what draws suggest (the expert's worlds): a guess
                // changes which hidden cards are where, never what the table shows.
                for knowledge in [Knowledge::Backs, Knowledge::Draws] {
                    let world = Game::sample_world(&view, knowledge, &mut rng)
                        .expect("a real view has worlds");
                    assert_conserved(&world);
                    prop_assert_eq!(&world.view(Viewer::Seat(seat)), &view);
                    prop_assert_eq!(world.view(Viewer::Spectator), game.view(Viewer::Spectator));
                }
                // Blind to the backs: still the seat's hand, the discard pile and the counts.
                let blind = Game::sample_world(&view, Knowledge::Counts, &mut rng)
                    .expect("a real view has worlds");
                assert_conserved(&blind);
                let seen = blind.view(Viewer::Seat(seat));
                prop_assert_eq!(&seen.hand, &view.hand);
                prop_assert_eq!(&seen.discard, &view.discard);
                prop_assert_eq!(seen.draw_count, view.draw_count);
                prop_assert_eq!(
                    seen.players.iter().map(|p| p.cards).collect::<Vec<_>>(),
                    view.players.iter().map(|p| p.cards).collect::<Vec<_>>()
                );
            }
        }
    }

    /// The expert answers every position with one of the actions its view lists.
    #[test]
    fn the_expert_always_answers_with_a_legal_action(
        seed: u64, seats in 2usize..=5, classic: bool, steps in 0usize..200,
    ) {
        let ruleset = if classic { Ruleset::Classic } else { Ruleset::Flip };
        let Some(game) = random_position(seed, seats, ruleset, steps) else {
            return Ok(());
        };
        if game.is_over() {
            return Ok(());
        }
        let seat = game.turn();
        let view = game.view(Viewer::Seat(seat));
        let mut rng = SmallRng::seed_from_u64(seed);
        let action = bots::choose_thinking(Level::Expert, &view, Think::for_playouts(24), &mut rng);
        let action = action.expect("a seat to move has an action");
        prop_assert!(game.is_legal(seat, action), "{:?} in {:?}", action, view.legal_actions);
    }
}

/// A view no game can have (the same card in the hand and on the discard pile) has no world.
#[test]
fn a_view_no_game_can_have_has_no_world() {
    let game = random_position(7, 3, Ruleset::Flip, 10).expect("a game");
    let mut view = game.view(Viewer::Seat(0));
    let mut rng = SmallRng::seed_from_u64(7);
    assert!(Game::sample_world(&view, Knowledge::Backs, &mut rng).is_some());
    view.hand.push(view.discard[0]);
    assert!(Game::sample_world(&view, Knowledge::Backs, &mut rng).is_none());
    let spectator = game.view(Viewer::Spectator);
    assert!(Game::sample_world(&spectator, Knowledge::Backs, &mut rng).is_none());
    let mut short = game.view(Viewer::Seat(0));
    short.draw_count += 1;
    assert!(Game::sample_world(&short, Knowledge::Backs, &mut rng).is_none());
}

/// [V-2]: in UNO Flip a world deals each opponent cards with exactly the faces the table shows:
/// where only one unseen card shows a face, every world puts that very card there.
#[test]
fn a_face_only_one_unseen_card_shows_pins_that_card_in_every_world() {
    let mut t = Table::flip(2);
    let [top, a, b] = t.cards(["red 5", "red 7", "blue 2"]);
    let rare = t.card("red draw-one|pink 3");
    t.hand(0, &[a, b]).hand(1, &[rare]).top(top);
    let (game, _) = t.position(0, None);
    let view = game.view(Viewer::Seat(0));
    let shown = view.players[1].backs[0];
    let deck = game.deck();
    let twins = deck
        .cards()
        .iter()
        .filter(|c| c.dark == Some(shown) && c.id != rare)
        .count();
    let mut rng = SmallRng::seed_from_u64(3);
    for _ in 0..50 {
        let world = Game::sample_world(&view, Knowledge::Backs, &mut rng).expect("a world");
        let held = world.hand(1)[0];
        assert_eq!(deck.face(held, Side::Dark), shown);
        if twins == 0 {
            assert_eq!(held, rare);
        }
    }
}

/// It goes out when it can: a last card that matches is played, never drawn over.
#[test]
fn the_expert_plays_its_last_card() {
    let mut t = Table::flip(3);
    let [top, last, x, y, z] = t.cards(["red 5", "red 7", "blue 2", "green 4", "yellow 3"]);
    t.hand(0, &[last]).hand(1, &[x, y]).hand(2, &[z]).top(top);
    let (game, _) = t.position(0, None);
    let view = game.view(Viewer::Seat(0));
    let mut rng = SmallRng::seed_from_u64(1);
    let action = bots::choose_thinking(Level::Expert, &view, Think::for_playouts(64), &mut rng);
    assert_eq!(
        action,
        Some(Action::Play {
            card: last,
            color: None,
            uno: false
        })
    );
}

/// [F-UNO-1]: playing down to one card, it calls UNO with the play (a seat left exposed is
/// caught and draws two, [F-UNO-2], and the search sees it).
#[test]
fn the_expert_calls_uno_with_the_play_that_leaves_one_card() {
    let mut t = Table::flip(2);
    let [top, a, b, x, y] = t.cards(["red 5", "red 7", "blue 2", "green 4", "yellow 3"]);
    t.hand(0, &[a, b]).hand(1, &[x, y]).top(top);
    let (game, _) = t.position(0, None);
    let view = game.view(Viewer::Seat(0));
    let mut rng = SmallRng::seed_from_u64(5);
    let action = bots::choose_thinking(Level::Expert, &view, Think::for_playouts(400), &mut rng);
    assert_eq!(
        action,
        Some(Action::Play {
            card: a,
            color: None,
            uno: true
        })
    );
}

/// It stops thinking when its time is up: with 20 ms per move it answers well within a second
/// even in a position with many actions (the bound is generous: these machines are shared).
#[test]
fn the_expert_answers_within_its_time() {
    for seed in 0..5 {
        let Some(game) = random_position(seed, 4, Ruleset::Flip, 40) else {
            continue;
        };
        if game.is_over() {
            continue;
        }
        let view = game.view(Viewer::Seat(game.turn()));
        let mut rng = SmallRng::seed_from_u64(seed);
        let started = Instant::now();
        let action = bots::choose_thinking(
            Level::Expert,
            &view,
            Think::for_time(Duration::from_millis(20)),
            &mut rng,
        );
        let took = started.elapsed();
        assert!(action.is_some_and(|a| game.is_legal(game.turn(), a)));
        assert!(took < Duration::from_millis(1_000), "took {took:?}");
    }
}

/// One on one in UNO Flip, the expert (a fixed 150 playouts per move, so that the result does
/// not depend on the machine) wins most rounds against the heuristic bot. (In classic UNO, with
/// no faces to read, its edge is smaller: the arena figures in the CHANGELOG.)
#[test]
fn the_expert_beats_the_heuristic_one_on_one() {
    {
        let config = ArenaConfig {
            ruleset: Ruleset::Flip,
            levels: vec![Level::Expert, Level::Heuristic],
            games: 200,
            seed: 9,
            think: Think::for_playouts(150),
            jobs: 2,
        };
        let report = arena::run(&config, |_| {}).expect("a valid arena");
        let expert = report
            .levels
            .iter()
            .find(|l| l.level == Level::Expert)
            .expect("the expert played");
        assert_eq!(expert.seat_games, 200);
        assert!(expert.win_rate_ci.0 > 0.5, "{expert:?}");
    }
}

/// [F-TURN-4]: a seat's draw on its turn is noted for every viewer: what it drew on and how
/// many of its cards it held then. Keeping the drawn card counts it too; each card played from
/// the hand afterwards counts one fewer, a drawn card played at once does not, and a new round
/// forgets it. The expert's worlds ([`Knowledge::Draws`]) then deal none of those cards
/// playable there; worlds of public facts only ([`Knowledge::Backs`]) do.
#[test]
fn a_draw_on_the_turn_tells_the_table_what_the_seat_could_not_play() {
    let mut t = Table::classic(3);
    let [top, red7, blue2, y8, g4, y3, g9, b1, y6, r2, g7] = t.cards([
        "red 5", "red 7", "blue 2", "yellow 8", "green 4", "yellow 3", "green 9", "blue 1",
        "yellow 6", "red 2", "green 7",
    ]);
    t.hand(0, &[red7, blue2, y8])
        .hand(1, &[g4, y3, g9])
        .hand(2, &[y6, r2]);
    t.top(top).draw(&[b1, g7]);
    let (mut game, _) = t.position(0, None);
    let deck = game.deck();
    assert_eq!(game.draw_tell(1), None);
    play(&mut game, 0, red7);
    act(&mut game, 1, Action::Draw);
    let tell = game.view(Viewer::Seat(0)).players[1]
        .draw_tell
        .expect("the draw is noted");
    assert_eq!(tell.held(), 3, "the cards held before the draw");
    assert_eq!(
        game.view(Viewer::Spectator).players[1].draw_tell,
        Some(tell)
    );
    for card in [g4, y3, g9, b1, y6, y8] {
        assert!(
            !tell.playable(deck, card),
            "{card:?} does not go on a red 7"
        );
    }
    for card in [r2, g7] {
        assert!(tell.playable(deck, card), "{card:?} goes on a red 7");
    }
    act(&mut game, 1, Action::Keep);
    assert_eq!(
        game.draw_tell(1).map(|t| t.held()),
        Some(4),
        "the kept card too"
    );

    // The expert's worlds deal seat 1 nothing that goes on the red 7; public facts alone do.
    let view = game.view(Viewer::Seat(0));
    let mut rng = SmallRng::seed_from_u64(11);
    let mut some_playable = false;
    for _ in 0..100 {
        let world = Game::sample_world(&view, Knowledge::Draws, &mut rng).expect("a world");
        assert_conserved(&world);
        assert_eq!(world.view(Viewer::Seat(0)), view);
        assert!(world.hand(1).iter().all(|&c| !tell.playable(deck, c)));
        let plain = Game::sample_world(&view, Knowledge::Backs, &mut rng).expect("a world");
        some_playable |= plain.hand(1).iter().any(|&c| tell.playable(deck, c));
    }
    assert!(
        some_playable,
        "without the guess, some world deals a playable card"
    );

    // Seat 2 plays the red 2 (calling UNO), seat 0 the blue 2, seat 1 a card it held then or
    // drew: which, the table cannot tell, so one fewer counts.
    let uno = |card| Action::Play {
        card,
        color: None,
        uno: true,
    };
    act(&mut game, 2, uno(r2));
    play(&mut game, 0, blue2);
    play(&mut game, 1, b1);
    assert_eq!(game.draw_tell(1).map(|t| t.held()), Some(3));
    // A new round forgets every tell.
    game.apply(&Event::RoundStarted {
        round: 2,
        dealer: 0,
        deck: deck.ids().collect(),
    });
    assert_eq!(game.draw_tell(1), None);
}

/// A card drawn and played at once is not one of the cards held at the draw.
#[test]
fn a_drawn_card_played_at_once_leaves_the_tell_as_it_was() {
    let mut t = Table::classic(2);
    let [top, red7, blue2, g4, g3, r9] =
        t.cards(["red 5", "red 7", "blue 2", "green 4", "green 3", "red 9"]);
    t.hand(0, &[red7, blue2])
        .hand(1, &[g4, g3])
        .top(top)
        .draw(&[r9]);
    let (mut game, _) = t.position(0, None);
    play(&mut game, 0, red7);
    act(&mut game, 1, Action::Draw);
    assert_eq!(game.draw_tell(1).map(|t| t.held()), Some(2));
    play(&mut game, 1, r9);
    assert_eq!(game.draw_tell(1).map(|t| t.held()), Some(2), "r9 was drawn");
}
