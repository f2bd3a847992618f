//! UNO Flip set-up and first discard: [F-SETUP-1..5], [F-START-1..6].

use crate::common::*;
use unoflip::rules::*;

#[test]
fn f_setup_1_two_to_ten_seats() {
    for seats in [0, 1, 11] {
        let err = Game::new(&Setup::new(Ruleset::Flip, seats), &mut rng()).unwrap_err();
        assert_eq!(err, SetupError::SeatCount { seats });
        assert_eq!(err.reason(), "SEAT_COUNT_OUT_OF_RANGE");
    }
    for seats in 2..=10 {
        let (game, _) = Game::new(&Setup::new(Ruleset::Flip, seats), &mut rng()).unwrap();
        assert_eq!(game.seats(), seats);
        assert_eq!(game.round(), 1);
        assert_conserved(&game);
    }
}

/// Re-runs the dealer draw of [F-SETUP-2] from the recorded draws.
fn dealer_from_draws(seats: usize, draws: &[(Seat, CardId)]) -> Seat {
    let deck = Deck::of(Ruleset::Flip);
    let value = |c: CardId| match deck.cards()[c.index()].light.kind {
        Kind::Number(n) => n,
        _ => 0,
    };
    let mut contenders: Vec<Seat> = (0..seats).collect();
    let mut at = 0;
    while contenders.len() > 1 {
        let drawn = &draws[at..at + contenders.len()];
        assert_eq!(
            drawn.iter().map(|d| d.0).collect::<Vec<_>>(),
            contenders,
            "who draws"
        );
        at += contenders.len();
        let best = drawn.iter().map(|d| value(d.1)).max().unwrap();
        contenders = drawn
            .iter()
            .filter(|d| value(d.1) == best)
            .map(|d| d.0)
            .collect();
    }
    assert_eq!(at, draws.len(), "no extra draws");
    contenders[0]
}

#[test]
fn f_setup_2_highest_number_deals_and_ties_draw_again() {
    use rand::SeedableRng;
    let mut ties = 0;
    for seed in 0..300u64 {
        let seats = 2 + (seed as usize % 9);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let (game, events) = Game::new(&Setup::new(Ruleset::Flip, seats), &mut rng).unwrap();
        let Event::DealerChosen { draws, dealer } = &events[1] else {
            panic!("second event is the dealer draw");
        };
        assert_eq!(dealer_from_draws(seats, draws), *dealer);
        assert_eq!(game.dealer(), *dealer);
        if draws.len() > seats {
            ties += 1;
        }
    }
    assert!(ties > 0, "some draws tie and draw again");
}

#[test]
fn f_setup_2_named_dealer_is_used() {
    let setup = Setup {
        first_dealer: Some(3),
        ..Setup::new(Ruleset::Flip, 5)
    };
    let (game, events) = Game::new(&setup, &mut rng()).unwrap();
    assert_eq!(
        events[1],
        Event::DealerChosen {
            draws: vec![],
            dealer: 3
        }
    );
    assert_eq!(game.dealer(), 3);
    let bad = Setup {
        first_dealer: Some(5),
        ..Setup::new(Ruleset::Flip, 5)
    };
    assert_eq!(
        Game::new(&bad, &mut rng()).unwrap_err().reason(),
        "DEALER_NOT_A_SEAT"
    );
}

// [F-SETUP-3] [F-SETUP-4] [F-SETUP-5]
#[test]
fn f_setup_3_4_5_deal_one_at_a_time_from_the_dealers_left() {
    let order: Vec<CardId> = Deck::of(Ruleset::Flip).ids().collect();
    let setup = Setup {
        first_dealer: Some(2),
        deck: Some(order),
        ..Setup::new(Ruleset::Flip, 4)
    };
    let (game, events) = Game::new(&setup, &mut rng()).unwrap();
    let dealt = Game::replay(&events[..3]).unwrap();
    // [F-SETUP-3]: seat 3 (the dealer's left) takes cards 0, 4, 8, ...; the dealer takes the last.
    for (k, seat) in [3, 0, 1, 2].into_iter().enumerate() {
        let expected: Vec<CardId> = (0..7).map(|i| CardId((4 * i + k) as u8)).collect();
        assert_eq!(dealt.hand(seat), expected.as_slice(), "hand of seat {seat}");
    }
    // [F-SETUP-4]: card 28 (yellow 2) is turned light side up; the rest is the draw pile.
    assert_eq!(dealt.discard_pile(), &[CardId(28)]);
    assert_eq!(dealt.top_face(), Some(face("yellow 2")));
    assert_eq!(
        draw_top_first(&dealt),
        (29..112).map(CardId).collect::<Vec<_>>()
    );
    assert_eq!(dealt.side(), Side::Light);
    // The dark face of the draw pile's top card is what everyone sees of it.
    let view = game.view(Viewer::Spectator);
    assert_eq!(view.draw_top, Deck::of(Ruleset::Flip).cards()[29].dark);
    assert_eq!(view.draw_count, 83);
    // [F-SETUP-5]: the dealer's left plays first, clockwise.
    assert_turn(&game, 3);
    assert_eq!(game.direction(), Direction::Clockwise);
    assert_eq!(game.color(), Some(Color::Yellow));
    assert_eq!(events.len(), 4);
}

#[test]
fn f_start_1_draw_one_first_player_draws_and_is_skipped() {
    let mut t = Table::flip(4);
    let [d1, x] = t.cards(["red draw-one", "blue 9"]);
    t.top(d1).draw(&[x]);
    let (game, _) = t.start();
    assert_eq!(game.hand(1).len(), 8);
    assert_eq!(game.hand(1).last(), Some(&x));
    assert_turn(&game, 2);
    assert_eq!(game.color(), Some(Color::Red));
    assert_eq!(game.discard_pile(), &[d1]);
    assert_conserved(&game);
}

#[test]
fn f_start_2_reverse_dealer_plays_first_counter_clockwise() {
    let mut t = Table::flip(4);
    let r = t.card("green reverse");
    t.top(r);
    let (game, _) = t.start();
    assert_turn(&game, 0);
    assert_eq!(game.direction(), Direction::CounterClockwise);
    assert_eq!(game.next_seat(0), 3);
    assert!(game.hands().iter().all(|h| h.len() == 7));
}

// [F-START-3]
#[test]
fn f_start_3_skip_first_player_is_skipped() {
    let mut t = Table::flip(4).dealer(1);
    let s = t.card("blue skip");
    t.top(s);
    let (game, _) = t.start();
    // Dealer 1, first player 2 is skipped, seat 3 starts.
    assert_turn(&game, 3);
    assert_eq!(game.direction(), Direction::Clockwise);
}

// [F-START-4]
#[test]
fn f_start_4_wild_first_player_declares_then_plays() {
    let mut t = Table::flip(4);
    let w = t.card("wild");
    t.top(w);
    let (mut game, _) = t.start();
    assert_eq!(
        (game.turn(), game.phase()),
        (1, Phase::ChooseColor { then: 1 })
    );
    assert_eq!(game.color(), None);
    assert_refused(
        &mut game,
        2,
        Action::ChooseColor { color: Color::Red },
        "NOT_YOUR_TURN",
    );
    assert_refused(
        &mut game,
        1,
        Action::ChooseColor { color: Color::Pink },
        "COLOR_NOT_ON_ACTIVE_SIDE",
    );
    assert_refused(&mut game, 1, Action::Draw, "COLOR_CHOICE_PENDING");
    let events = act(&mut game, 1, Action::ChooseColor { color: Color::Blue });
    assert_eq!(
        events,
        vec![
            Event::ColorChosen {
                seat: 1,
                color: Color::Blue
            },
            Event::TurnStarted { seat: 1 }
        ]
    );
    assert_eq!(game.color(), Some(Color::Blue));
    assert_turn(&game, 1);
}

#[test]
fn f_start_5_wild_draw_two_goes_back_and_a_new_card_is_turned() {
    let mut t = Table::flip(4);
    let [wd, n] = t.cards(["wild-draw-two", "green 3"]);
    t.top(wd).draw(&[n]);
    let (game, events) = t.start();
    let Some(Event::StarterReturned {
        card,
        depth,
        turned,
    }) = events
        .iter()
        .find(|e| matches!(e, Event::StarterReturned { .. }))
        .cloned()
    else {
        panic!("the starter goes back");
    };
    assert_eq!((card, turned), (wd, n));
    assert!(depth >= 1);
    assert_eq!(game.discard_pile(), &[n]);
    assert_eq!(
        draw_top_first(&game)[depth - 1],
        wd,
        "wd is {depth} cards down (0-based {})",
        depth - 1
    );
    assert_eq!(game.draw_pile().len(), 112 - 28 - 1);
    assert_eq!(game.color(), Some(Color::Green));
    assert_turn(&game, 1);
    assert_conserved(&game);
}

#[test]
fn f_start_6_flip_starts_the_round_on_the_dark_side() {
    let mut t = Table::flip(4);
    let f = t.card("red flip|pink 8");
    let below = t.card("blue 5");
    t.top(f).draw(&[below]);
    let (game, _) = t.start();
    assert_eq!(game.side(), Side::Dark);
    assert_eq!(game.discard_pile(), &[f]);
    assert_eq!(game.top_face(), Some(face("pink 8")));
    assert_eq!(game.color(), Some(Color::Pink));
    assert_turn(&game, 1);
    // The draw pile was turned over too: its old bottom card is on top.
    assert_eq!(*draw_top_first(&game).last().unwrap(), below);
}

/// Starts with green flip|wild-draw-color, so the round flips and the dark wild draw goes back
/// ([F-START-6] with [F-START-5]); `turned` is the card turned in its place.
fn dark_start(turned_spec: &str) -> (Game, Vec<Event>, CardId) {
    let mut t = Table::flip(4);
    let f = t.card("green flip|wild-draw-color");
    let turned = t.card(turned_spec);
    // After the flip the draw pile is upside down: its bottom card comes on top. Put `turned`
    // at the bottom by naming every other card above it.
    t.top(f);
    let setup_without = t.setup();
    let mut order = setup_without.deck.clone().unwrap();
    order.retain(|&c| c != turned);
    order.push(turned);
    let setup = Setup {
        deck: Some(order),
        ..setup_without
    };
    let (game, events) = Game::new(&setup, &mut rng()).unwrap();
    (game, events, turned)
}

#[test]
fn f_start_6_dark_wild_draw_color_goes_back_like_f_start_5() {
    let (game, events, turned) = dark_start("pink 5");
    assert_eq!(game.side(), Side::Dark);
    assert_eq!(game.discard_pile(), &[turned]);
    assert_eq!(game.color(), Some(Color::Pink));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::StarterReturned {
            card: CardId(77),
            ..
        }
    )));
    assert!(game.draw_pile().contains(&CardId(77)));
    assert_turn(&game, 1);
    assert_conserved(&game);
}

#[test]
fn f_start_6_dark_draw_five_first_player_draws_five_and_is_skipped() {
    let (game, events, turned) = dark_start("pink draw-five");
    let at = events
        .iter()
        .position(|e| matches!(e, Event::StarterReturned { .. }))
        .unwrap();
    let before = Game::replay(&events[..=at]).unwrap();
    let mut expected = before.hand(1).to_vec();
    expected.extend(draw_top(&before, 5));
    assert_eq!(game.hand(1), expected.as_slice());
    assert_eq!(game.discard_pile(), &[turned]);
    assert_turn(&game, 2);
}

#[test]
fn f_start_6_dark_reverse_dealer_first_counter_clockwise() {
    let (game, _, _) = dark_start("orange reverse");
    assert_turn(&game, 0);
    assert_eq!(game.direction(), Direction::CounterClockwise);
}

#[test]
fn f_start_6_dark_skip_everyone_dealer_plays_first() {
    let (game, _, _) = dark_start("teal skip-everyone");
    assert_turn(&game, 0);
    assert_eq!(game.direction(), Direction::Clockwise);
}

#[test]
fn f_start_6_dark_wild_first_player_declares_a_dark_color() {
    let (mut game, _, _) = dark_start("dark wild");
    assert_eq!(
        (game.turn(), game.phase()),
        (1, Phase::ChooseColor { then: 1 })
    );
    assert_refused(
        &mut game,
        1,
        Action::ChooseColor { color: Color::Red },
        "COLOR_NOT_ON_ACTIVE_SIDE",
    );
    act(&mut game, 1, Action::ChooseColor { color: Color::Teal });
    assert_eq!(game.color(), Some(Color::Teal));
    assert_turn(&game, 1);
}

#[test]
fn f_start_6_dark_flip_flips_again_and_repeats() {
    // green 3|pink flip: on the dark side it is a Flip, so the table flips back and its light
    // face, green 3, starts the round.
    let (game, _, turned) = dark_start("green 3|pink flip");
    assert_eq!(game.side(), Side::Light);
    assert_eq!(game.discard_pile(), &[turned]);
    assert_eq!(game.color(), Some(Color::Green));
    assert_turn(&game, 1);
    assert_conserved(&game);
}
