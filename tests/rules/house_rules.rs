//! The house rules, each from an exact position: [H-STRICT], [H-DRAWMATCH], [H-FALSEUNO],
//! [H-JUMP], [H-SEVEN0], [H-STACK], [H-MULTI] and [H-LAST].

use crate::common::*;
use unoflip::rules::*;

fn with(house: HouseRules) -> Options {
    Options {
        house,
        ..Options::default()
    }
}

const STRICT: HouseRules = HouseRules {
    stacking: false,
    jump_in: false,
    seven_zero: false,
    draw_to_match: false,
    multi: false,
    false_uno: false,
    strict_wild_draw: true,
    play_to_last: false,
};

const DRAW_TO_MATCH: HouseRules = HouseRules {
    draw_to_match: true,
    strict_wild_draw: false,
    ..STRICT
};

/// Four seats, seat 1 to play on `top` (red) holding `hand1`.
fn position(house: HouseRules, top: &str, hand1: &[&str], draw: &[&str]) -> (Game, Vec<CardId>) {
    let mut t = Table::flip(4).options(with(house));
    let top = t.card(top);
    let hand: Vec<CardId> = hand1.iter().map(|s| t.card(s)).collect();
    let pile: Vec<CardId> = draw.iter().map(|s| t.card(s)).collect();
    t.hand(1, &hand).top(top).draw(&pile);
    let (game, _) = t.position(1, None);
    (game, hand)
}

// [H-STRICT]
#[test]
fn h_strict_refuses_a_wild_draw_while_holding_the_current_color() {
    let (mut game, h) = position(STRICT, "red 5", &["wild-draw-two", "red 9", "green 2"], &[]);
    let legal = game.legal_actions(1);
    assert!(legal.contains(&plain(h[1])));
    assert!(
        !legal
            .iter()
            .any(|a| matches!(a, Action::Play { card, .. } if *card == h[0])),
        "{legal:?}"
    );
    assert_refused(
        &mut game,
        1,
        wild(h[0], Color::Green),
        "WILD_DRAW_FORBIDDEN",
    );
    assert_eq!(game.hand(1), h.as_slice());
}

// [H-STRICT]
#[test]
fn h_strict_offers_no_challenge_and_the_next_seat_takes_the_penalty() {
    let (mut game, h) = position(
        STRICT,
        "red 5",
        &["wild-draw-two", "blue 9", "green 2"],
        &[],
    );
    play_wild(&mut game, 1, h[0], Color::Green);
    assert_eq!(game.legal_actions(2), vec![Action::Accept]);
    assert_refused(&mut game, 2, Action::Challenge, "CHALLENGE_NOT_OFFERED");
    let two = draw_top(&game, 2);
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Accept);
    assert_eq!(game.hand(2), [hand2, two].concat().as_slice());
    assert_eq!(game.hand(1), &h[1..]);
    assert_eq!(game.top_card(), Some(h[0]));
    assert_eq!(game.color(), Some(Color::Green));
    assert_turn(&game, 3);
    assert_conserved(&game);
}

// [H-STRICT] on the classic deck: Wild Draw Four.
#[test]
fn h_strict_classic_wild_draw_four() {
    let mut t = Table::classic(3).options(with(STRICT));
    let top = t.card("red 5");
    let h = t.cards(["wild-draw-four", "red 1"]);
    t.hand(1, &h).top(top);
    let (mut game, _) = t.position(1, None);
    assert_refused(&mut game, 1, wild(h[0], Color::Blue), "WILD_DRAW_FORBIDDEN");
    play(&mut game, 1, h[1]);
    assert_turn(&game, 2);
}

// [H-DRAWMATCH]
#[test]
fn h_drawmatch_draws_until_a_playable_card_and_offers_it() {
    let (mut game, h) = position(
        DRAW_TO_MATCH,
        "red 5",
        &["blue 2"],
        &["green 3", "yellow 7", "red 8", "blue 9"],
    );
    let pile = draw_top(&game, 4);
    let events = act(&mut game, 1, Action::Draw);
    assert_eq!(
        events,
        vec![Event::CardsDrawn {
            seat: 1,
            cards: pile[..3].to_vec().into(),
            cause: DrawCause::Turn
        }]
    );
    assert_eq!(
        game.hand(1),
        [h.clone(), pile[..3].to_vec()].concat().as_slice()
    );
    assert_eq!(game.phase(), Phase::PlayDrawn { card: pile[2] });
    assert_eq!(game.legal_actions(1), vec![plain(pile[2]), Action::Keep]);
    assert_eq!(draw_top(&game, 1), vec![pile[3]]);
    // Playing it goes on as any play.
    play(&mut game, 1, pile[2]);
    assert_eq!(game.top_card(), Some(pile[2]));
    assert_turn(&game, 2);
    assert_conserved(&game);
}

// [H-DRAWMATCH] with [H-STRICT]: a wild draw the seat may not play does not stop the draw.
#[test]
fn h_drawmatch_passes_over_a_forbidden_wild_draw() {
    let both = HouseRules {
        strict_wild_draw: true,
        ..DRAW_TO_MATCH
    };
    let (mut game, h) = position(both, "red 5", &["red 9"], &["wild-draw-two", "blue 5"]);
    let pile = draw_top(&game, 2);
    act(&mut game, 1, Action::Draw);
    assert_eq!(game.hand(1), [h, pile.clone()].concat().as_slice());
    assert_eq!(game.phase(), Phase::PlayDrawn { card: pile[1] });
    assert_eq!(game.legal_actions(1), vec![plain(pile[1]), Action::Keep]);
}

// [H-DRAWMATCH] without the rule: one card, as F-TURN-3 says.
#[test]
fn without_drawmatch_a_draw_is_one_card() {
    let (mut game, _) = position(
        HouseRules::default(),
        "red 5",
        &["blue 2"],
        &["green 3", "red 8"],
    );
    let pile = draw_top(&game, 1);
    act(&mut game, 1, Action::Draw);
    assert_eq!(game.phase(), Phase::PlayDrawn { card: pile[0] });
    assert_eq!(game.legal_actions(1), vec![Action::Keep]);
}

/// Every combination of the eight house rules is a game, on both decks. [H-SEVEN0] on the UNO
/// Flip deck, which has no 0, plays its 7s only; [H-LAST] with two seats ends the round when the
/// first seat goes out, as without it.
#[test]
fn every_combination_of_house_rules_is_accepted_at_setup() {
    for bits in 0u32..256 {
        let on = |i: u32| bits & (1 << i) != 0;
        let house = HouseRules {
            stacking: on(0),
            jump_in: on(1),
            seven_zero: on(2),
            draw_to_match: on(3),
            multi: on(4),
            false_uno: on(5),
            strict_wild_draw: on(6),
            play_to_last: on(7),
        };
        for ruleset in [Ruleset::Flip, Ruleset::Classic] {
            let setup = Setup {
                options: with(house),
                ..Setup::new(ruleset, 3)
            };
            assert_eq!(setup.check(), Ok(()), "{house:?}");
            assert_eq!(house.enabled().len(), bits.count_ones() as usize);
        }
    }
}

const FALSE_UNO: HouseRules = HouseRules {
    false_uno: true,
    strict_wild_draw: false,
    ..STRICT
};

// [H-FALSEUNO]
#[test]
fn h_falseuno_a_call_without_one_card_costs_two() {
    let (mut game, h) = position(
        FALSE_UNO,
        "red 5",
        &["red 9", "green 2"],
        &["blue 1", "blue 2"],
    );
    // Any seat may call at any time: it is listed, out of turn too.
    assert!(game.legal_actions(3).contains(&Action::CallUno));
    assert!(game.legal_actions(1).contains(&Action::CallUno));
    let two = draw_top(&game, 2);
    let hand3 = game.hand(3).to_vec();
    let events = act(&mut game, 3, Action::CallUno);
    assert_eq!(
        events,
        vec![Event::CardsDrawn {
            seat: 3,
            cards: two.clone().into(),
            cause: DrawCause::FalseUno
        }]
    );
    assert_eq!(game.hand(3), [hand3, two].concat().as_slice());
    // The turn is untouched.
    assert_turn(&game, 1);
    assert_eq!(game.hand(1), h.as_slice());
    assert_conserved(&game);
}

// [H-FALSEUNO]
#[test]
fn h_falseuno_a_catch_of_a_seat_that_called_costs_the_catcher_two() {
    let (mut game, h) = position(
        FALSE_UNO,
        "red 5",
        &["red 9", "green 2"],
        &["blue 1", "blue 2"],
    );
    // Seat 1 goes down to one card and calls with the play: not vulnerable.
    act(
        &mut game,
        1,
        Action::Play {
            card: h[0],
            color: None,
            uno: true,
        },
    );
    let two = draw_top(&game, 2);
    let hand3 = game.hand(3).to_vec();
    let events = act(&mut game, 3, Action::Catch { seat: 1 });
    assert_eq!(
        events,
        vec![Event::CardsDrawn {
            seat: 3,
            cards: two.clone().into(),
            cause: DrawCause::FalseCatch
        }]
    );
    assert_eq!(game.hand(3), [hand3, two].concat().as_slice());
    assert_eq!(game.hand(1), &h[1..]);
    assert_turn(&game, 2);
}

// [H-FALSEUNO] leaves a true catch as F-UNO-2 says.
#[test]
fn h_falseuno_a_true_catch_still_costs_the_caught_seat_two() {
    let (mut game, h) = position(
        FALSE_UNO,
        "red 5",
        &["red 9", "green 2"],
        &["blue 1", "blue 2"],
    );
    play(&mut game, 1, h[0]);
    let two = draw_top(&game, 2);
    let hand3 = game.hand(3).to_vec();
    let events = act(&mut game, 3, Action::Catch { seat: 1 });
    assert_eq!(events[0], Event::UnoCaught { seat: 1, by: 3 });
    assert_eq!(
        events[1],
        Event::CardsDrawn {
            seat: 1,
            cards: two.clone().into(),
            cause: DrawCause::UnoCaught
        }
    );
    assert_eq!(game.hand(1), [vec![h[1]], two].concat().as_slice());
    assert_eq!(game.hand(3), hand3.as_slice());
}

// Without H-FALSEUNO, the same call and catch are refused and cost nothing [F-UNO-3].
#[test]
fn without_falseuno_a_false_call_or_catch_is_refused() {
    let (mut game, h) = position(
        HouseRules::default(),
        "red 5",
        &["red 9", "green 2"],
        &["blue 1", "blue 2"],
    );
    assert_refused(&mut game, 3, Action::CallUno, "UNO_NOT_DUE");
    act(
        &mut game,
        1,
        Action::Play {
            card: h[0],
            color: None,
            uno: true,
        },
    );
    assert_refused(&mut game, 3, Action::Catch { seat: 1 }, "NOT_CATCHABLE");
}

const JUMP: HouseRules = HouseRules {
    jump_in: true,
    strict_wild_draw: false,
    ..STRICT
};

/// Four seats, seat 1 to play on `top`; seat 3 holds `hand3`.
fn jump_position(top: &str, hand1: &[&str], hand3: &[&str]) -> (Game, Vec<CardId>, Vec<CardId>) {
    let mut t = Table::flip(4).options(with(JUMP));
    let top = t.card(top);
    let h1: Vec<CardId> = hand1.iter().map(|s| t.card(s)).collect();
    let h3: Vec<CardId> = hand3.iter().map(|s| t.card(s)).collect();
    t.hand(1, &h1).hand(3, &h3).top(top);
    let (game, _) = t.position(1, None);
    (game, h1, h3)
}

// [H-JUMP]
#[test]
fn h_jump_an_identical_card_is_played_out_of_turn_and_play_goes_on_from_the_jumper() {
    let (mut game, h1, h3) = jump_position(
        "red 5",
        &["red 9", "green 2"],
        &["red 5", "blue 5", "green 7"],
    );
    // Only the identical card is offered out of turn, not the one that merely matches.
    assert_eq!(game.legal_actions(3), vec![plain(h3[0])]);
    assert_refused(&mut game, 3, plain(h3[1]), "NOT_YOUR_TURN");
    let events = act(&mut game, 3, plain(h3[0]));
    assert_eq!(
        events,
        vec![
            Event::TurnStarted { seat: 3 },
            Event::CardPlayed {
                seat: 3,
                card: h3[0],
                color: None,
                uno: false
            },
            Event::TurnStarted { seat: 0 },
        ]
    );
    assert_eq!(game.top_card(), Some(h3[0]));
    assert_eq!(game.hand(3), &h3[1..]);
    assert_eq!(game.hand(1), h1.as_slice());
    assert_turn(&game, 0);
    assert_conserved(&game);
}

// [H-JUMP]: an action card's effect counts from the jumper.
#[test]
fn h_jump_a_skip_skips_the_seat_after_the_jumper() {
    let (mut game, _, h3) = jump_position("red skip", &["red 9"], &["red skip", "blue 1"]);
    act(&mut game, 3, plain(h3[0]));
    assert_turn(&game, 1);
    assert_eq!(game.direction(), Direction::Clockwise);
}

// [H-JUMP]: a plain Wild on a plain Wild, with a new color.
#[test]
fn h_jump_a_plain_wild_on_a_plain_wild() {
    let mut t = Table::flip(4).options(with(JUMP));
    let top = t.card("wild");
    let h3 = t.cards(["wild", "blue 1"]);
    t.hand(3, &h3).top(top);
    let (mut game, _) = t.position(1, Some(Color::Red));
    assert!(game.legal_actions(3).contains(&wild(h3[0], Color::Green)));
    act(&mut game, 3, wild(h3[0], Color::Green));
    assert_eq!(game.color(), Some(Color::Green));
    assert_turn(&game, 0);
}

// [H-JUMP]: never a wild draw; not while the turn seat decides on a drawn card.
#[test]
fn h_jump_never_with_a_wild_draw_nor_after_the_turn_seat_drew() {
    let mut t = Table::flip(4).options(with(JUMP));
    let top = t.card("wild-draw-two");
    let h3 = t.cards(["wild-draw-two", "blue 1"]);
    t.hand(3, &h3).top(top);
    let (game, _) = t.position(1, Some(Color::Red));
    assert_eq!(game.legal_actions(3), vec![]);

    let (mut game, _, h3) = jump_position("red 5", &["green 2"], &["red 5"]);
    act(&mut game, 1, Action::Draw);
    assert!(matches!(game.phase(), Phase::PlayDrawn { .. }));
    assert_refused(&mut game, 3, plain(h3[0]), "NOT_YOUR_TURN");
}

// Without H-JUMP an identical card waits for its turn.
#[test]
fn without_jump_an_identical_card_waits() {
    let mut t = Table::flip(4);
    let top = t.card("red 5");
    let h3 = t.cards(["red 5"]);
    t.hand(3, &h3).top(top);
    let (mut game, _) = t.position(1, None);
    assert_eq!(game.legal_actions(3), vec![]);
    assert_refused(&mut game, 3, plain(h3[0]), "NOT_YOUR_TURN");
}

const SEVEN_ZERO: HouseRules = HouseRules {
    seven_zero: true,
    strict_wild_draw: false,
    ..STRICT
};

// [H-SEVEN0]
#[test]
fn h_seven0_a_seven_swaps_hands_with_the_seat_chosen() {
    let mut t = Table::flip(4).options(with(SEVEN_ZERO));
    let top = t.card("red 5");
    let h1 = t.cards(["red 7", "green 2", "blue 3"]);
    let h3 = t.cards(["yellow 1", "yellow 2"]);
    t.hand(1, &h1).hand(3, &h3).top(top);
    let (mut game, _) = t.position(1, None);
    let events = act(&mut game, 1, plain(h1[0]));
    assert_eq!(events[1..], [Event::SwapRequested { seat: 1, then: 2 }]);
    assert_eq!(
        game.legal_actions(1),
        vec![
            Action::Swap { seat: 0 },
            Action::Swap { seat: 2 },
            Action::Swap { seat: 3 }
        ]
    );
    assert_refused(
        &mut game,
        1,
        Action::Swap { seat: 1 },
        "CANNOT_SWAP_WITH_YOURSELF",
    );
    assert_refused(&mut game, 1, Action::Draw, "SWAP_CHOICE_PENDING");
    assert_refused(&mut game, 2, Action::Swap { seat: 0 }, "NOT_YOUR_TURN");
    let events = act(&mut game, 1, Action::Swap { seat: 3 });
    assert_eq!(
        events,
        vec![
            Event::HandsSwapped { seat: 1, with: 3 },
            Event::TurnStarted { seat: 2 }
        ]
    );
    assert_eq!(game.hand(1), h3.as_slice());
    assert_eq!(game.hand(3), &h1[1..]);
    assert_turn(&game, 2);
    assert_conserved(&game);
    // Each of the two sees its new hand; the others only the counts and backs.
    let swapped = &Event::HandsSwapped { seat: 1, with: 3 };
    match project(&game, swapped, Viewer::Seat(3)) {
        SeenEvent::HandsSwapped { hand, .. } => {
            assert_eq!(hand.iter().map(|c| c.id).collect::<Vec<_>>(), &h1[1..])
        }
        other => panic!("{other:?}"),
    }
    match project(&game, swapped, Viewer::Seat(0)) {
        SeenEvent::HandsSwapped { hand, players, .. } => {
            assert!(hand.is_empty());
            assert_eq!(players[1].cards, 2);
            assert_eq!(players[3].cards, 2);
        }
        other => panic!("{other:?}"),
    }
    // No swap is pending any more.
    assert_refused(&mut game, 2, Action::Swap { seat: 0 }, "NO_SWAP_PENDING");
}

// [H-SEVEN0]: a 0 in classic UNO passes every hand on, in the direction of play.
#[test]
fn h_seven0_a_zero_passes_every_hand_to_the_next_seat() {
    let mut t = Table::classic(3).options(with(SEVEN_ZERO));
    let top = t.card("red 5");
    let h0 = t.cards(["blue 1", "blue 2"]);
    let h1 = t.cards(["red 0", "green 2", "green 3"]);
    let h2 = t.cards(["yellow 4"]);
    t.hand(0, &h0).hand(1, &h1).hand(2, &h2).top(top);
    let (mut game, _) = t.position(1, None);
    let events = act(&mut game, 1, plain(h1[0]));
    assert_eq!(
        events[1..],
        [Event::HandsPassed, Event::TurnStarted { seat: 2 }]
    );
    assert_eq!(game.hand(2), &h1[1..]);
    assert_eq!(game.hand(0), h2.as_slice());
    assert_eq!(game.hand(1), h0.as_slice());
    assert_turn(&game, 2);
    assert_conserved(&game);
}

// [H-SEVEN0] ruling: a 7 played as the last card ends the round; there is no hand to swap.
#[test]
fn h_seven0_a_seven_as_the_last_card_ends_the_round() {
    let mut t = Table::flip(3).options(with(SEVEN_ZERO));
    let top = t.card("red 5");
    let h1 = t.cards(["red 7"]);
    t.hand(1, &h1).top(top);
    let (mut game, _) = t.position(1, None);
    let events = act(&mut game, 1, plain(h1[0]));
    assert!(matches!(events[1], Event::RoundEnded { winner: 1, .. }));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::SwapRequested { .. }))
    );
}

// Without H-SEVEN0 a 7 is a number like any other.
#[test]
fn without_seven0_a_seven_is_a_number() {
    let mut t = Table::flip(4);
    let top = t.card("red 5");
    let h1 = t.cards(["red 7", "green 2"]);
    t.hand(1, &h1).top(top);
    let (mut game, _) = t.position(1, None);
    let events = act(&mut game, 1, plain(h1[0]));
    assert_eq!(events[1..], [Event::TurnStarted { seat: 2 }]);
}

const STACK: HouseRules = HouseRules {
    stacking: true,
    strict_wild_draw: false,
    ..STRICT
};

/// Four seats on `top` (red), seat 1 to play; seats 1, 2, 3 hold the given hands.
fn stack_position(ruleset: Ruleset, top: &str, hands: [&[&str]; 3]) -> (Game, [Vec<CardId>; 3]) {
    let mut t = match ruleset {
        Ruleset::Flip => Table::flip(4),
        Ruleset::Classic => Table::classic(4),
    }
    .options(with(STACK));
    let top = t.card(top);
    let hs = hands.map(|h| h.iter().map(|s| t.card(s)).collect::<Vec<CardId>>());
    t.hand(1, &hs[0]).hand(2, &hs[1]).hand(3, &hs[2]).top(top);
    let (game, _) = t.position(1, None);
    (game, hs)
}

// [H-STACK]
#[test]
fn h_stack_draw_ones_add_up_and_the_first_who_does_not_stack_takes_them_all() {
    let (mut game, [h1, h2, h3]) = stack_position(
        Ruleset::Flip,
        "red 5",
        [
            &["red draw-one", "green 2", "green 3"],
            &["blue draw-one", "blue 7", "yellow 3"],
            &["yellow 1", "blue 9"],
        ],
    );
    act(&mut game, 1, plain(h1[0]));
    assert!(matches!(
        game.phase(),
        Phase::Penalty(Penalty {
            from: 1,
            total: 1,
            ..
        })
    ));
    assert_eq!(game.turn(), 2);
    // Seat 2 may take one card or pass it on with its Draw One; no challenge of a Draw One.
    assert_eq!(game.legal_actions(2), vec![Action::Accept, plain(h2[0])]);
    assert_refused(&mut game, 2, Action::Challenge, "NO_CHALLENGE_PENDING");
    assert_refused(&mut game, 2, plain(h2[1]), "CARD_DOES_NOT_STACK");
    act(&mut game, 2, plain(h2[0]));
    assert!(matches!(
        game.phase(),
        Phase::Penalty(Penalty {
            from: 2,
            total: 2,
            ..
        })
    ));
    assert_eq!(game.turn(), 3);
    assert_eq!(game.legal_actions(3), vec![Action::Accept]);
    let two = draw_top(&game, 2);
    act(&mut game, 3, Action::Accept);
    assert_eq!(game.hand(3), [h3, two].concat().as_slice());
    assert_eq!(game.hand(2), &h2[1..]);
    assert_eq!(game.hand(1), &h1[1..]);
    assert_eq!(game.top_card(), Some(h2[0]));
    assert_turn(&game, 0);
    assert_conserved(&game);
}

// [H-STACK] in classic UNO: a Draw Two of the declared color answers a Wild Draw Four, and the
// chain goes on as Draw Twos.
#[test]
fn h_stack_classic_draw_two_answers_a_wild_draw_four() {
    let (mut game, [h1, h2, h3]) = stack_position(
        Ruleset::Classic,
        "red 5",
        [
            &["wild-draw-four", "green 2"],
            &["blue draw-two", "red draw-two", "yellow 3"],
            &["green draw-two", "blue 9"],
        ],
    );
    act(&mut game, 1, wild(h1[0], Color::Blue));
    // Only the Draw Two of the declared color (blue) answers; the challenge stays offered.
    let legal = game.legal_actions(2);
    assert!(legal.contains(&plain(h2[0])) && legal.contains(&Action::Challenge));
    assert!(!legal.contains(&plain(h2[1])));
    act(&mut game, 2, plain(h2[0]));
    assert!(matches!(
        game.phase(),
        Phase::Penalty(Penalty { total: 6, .. })
    ));
    // On from there as Draw Twos, of any color.
    act(&mut game, 3, plain(h3[0]));
    assert_eq!(game.turn(), 0);
    let eight = draw_top(&game, 8);
    let hand0 = game.hand(0).to_vec();
    act(&mut game, 0, Action::Accept);
    assert_eq!(game.hand(0), [hand0, eight].concat().as_slice());
    assert_turn(&game, 1);
    assert_conserved(&game);
}

// [H-STACK]: a Wild Draw Two on a Wild Draw Two; the last wild can still be challenged, and the
// loser of the challenge takes the whole stack.
#[test]
fn h_stack_a_stacked_wild_draw_is_challenged_about_the_last_wild_only() {
    let (mut game, [h1, h2, _]) = stack_position(
        Ruleset::Flip,
        "red 5",
        [
            &["wild-draw-two", "blue 2"],
            &["wild-draw-two", "red 7", "yellow 3"],
            &["green 4", "blue 9"],
        ],
    );
    // Seat 1 holds no red: not guilty. Seat 2 holds red 7 but the color is now blue: not guilty.
    act(&mut game, 1, wild(h1[0], Color::Blue));
    act(&mut game, 2, wild(h2[0], Color::Green));
    assert!(matches!(
        game.phase(),
        Phase::Penalty(Penalty {
            from: 2,
            total: 4,
            guilty: false,
            ..
        })
    ));
    // Not guilty: the challenger takes the four and two more, and loses the turn.
    let six = draw_top(&game, 6);
    let hand3 = game.hand(3).to_vec();
    act(&mut game, 3, Action::Challenge);
    assert_eq!(game.hand(3), [hand3, six].concat().as_slice());
    assert_turn(&game, 0);
}

// [H-STACK]: Wild Draw Color never stacks.
#[test]
fn h_stack_wild_draw_color_does_not_stack() {
    let mut t = Table::flip(4).options(with(STACK)).dark();
    let top = t.card("pink 5");
    let h1 = t.cards(["dark wild-draw-color", "dark pink 2", "dark pink 3"]);
    let h2 = t.cards(["dark wild-draw-color", "dark teal 7", "dark orange 3"]);
    t.hand(1, &h1).hand(2, &h2).top(top);
    let (mut game, _) = t.position(1, None);
    act(&mut game, 1, wild(h1[0], Color::Teal));
    assert_eq!(
        game.legal_actions(2),
        vec![Action::Accept, Action::Challenge]
    );
}

// Without H-STACK a Draw One is taken at once [F-STACK-1].
#[test]
fn without_stack_a_draw_one_is_taken_at_once() {
    let mut t = Table::flip(4);
    let top = t.card("red 5");
    let h1 = t.cards(["red draw-one", "green 2"]);
    let h2 = t.cards(["blue draw-one", "blue 7"]);
    t.hand(1, &h1).hand(2, &h2).top(top);
    let (mut game, _) = t.position(1, None);
    act(&mut game, 1, plain(h1[0]));
    assert_turn(&game, 3);
    assert_eq!(game.hand(2).len(), 3);
}

const MULTI: HouseRules = HouseRules {
    multi: true,
    strict_wild_draw: false,
    ..STRICT
};

const LAST: HouseRules = HouseRules {
    play_to_last: true,
    strict_wild_draw: false,
    ..STRICT
};

/// [H-MULTI]: several cards played in one action.
fn many(cards: &[CardId]) -> Action {
    Action::PlayMany {
        cards: Cards::new(cards).unwrap(),
        uno: false,
    }
}

/// A UNO Flip table of four, seat 1 to play on a red 5, holding `hand1`; every other seat holds
/// one plain card, so that nobody else can go out by accident of the arrangement.
fn table_of_four(house: HouseRules, hand1: &[&str], draw: &[&str]) -> (Game, Vec<CardId>) {
    let mut t = Table::flip(4).options(with(house));
    let top = t.card("red 5");
    let hand: Vec<CardId> = hand1.iter().map(|s| t.card(s)).collect();
    let pile: Vec<CardId> = draw.iter().map(|s| t.card(s)).collect();
    let others = t.cards(["green 3", "yellow 4", "blue 6"]);
    t.hand(1, &hand)
        .hand(0, &others[..1])
        .hand(2, &others[1..2])
        .hand(3, &others[2..])
        .top(top)
        .draw(&pile);
    let (game, _) = t.position(1, None);
    (game, hand)
}

// [H-MULTI]
#[test]
fn h_multi_two_skips_skip_two_seats_and_the_last_card_ends_on_top() {
    let (mut game, h) = table_of_four(MULTI, &["red skip", "red skip", "blue 4"], &[]);
    let legal = game.legal_actions(1);
    assert!(legal.contains(&many(&[h[0], h[1]])), "{legal:?}");
    assert!(legal.contains(&many(&[h[1], h[0]])), "{legal:?}");
    assert!(legal.contains(&plain(h[0])));
    let events = act(&mut game, 1, many(&[h[1], h[0]]));
    assert_eq!(
        events,
        vec![
            Event::CardPlayed {
                seat: 1,
                card: h[1],
                color: None,
                uno: false
            },
            Event::CardPlayed {
                seat: 1,
                card: h[0],
                color: None,
                uno: false
            },
            Event::TurnStarted { seat: 0 },
        ]
    );
    assert_eq!(game.hand(1), &h[2..]);
    assert_eq!(
        &game.discard_pile()[game.discard_pile().len() - 2..],
        &[h[1], h[0]]
    );
    assert_eq!(game.color(), Some(Color::Red));
    assert_eq!(game.direction(), Direction::Clockwise);
    assert_turn(&game, 0);
    assert_conserved(&game);
}

// [H-MULTI]
#[test]
fn h_multi_two_draw_ones_make_the_next_seat_draw_two() {
    let (mut game, h) = table_of_four(
        MULTI,
        &["red draw-one", "red draw-one", "blue 4"],
        &["green 8", "yellow 2"],
    );
    let pile = draw_top(&game, 2);
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 1, many(&[h[0], h[1]]));
    assert_eq!(game.hand(2), [hand2, pile].concat().as_slice());
    assert_eq!(game.hand(1), &h[2..]);
    assert_eq!(game.top_card(), Some(h[1]));
    assert_turn(&game, 3);
    assert_conserved(&game);
}

// [H-MULTI]
#[test]
fn h_multi_two_reverses_reverse_twice() {
    let (mut game, h) = table_of_four(MULTI, &["red reverse", "red reverse", "blue 4"], &[]);
    let events = act(&mut game, 1, many(&[h[0], h[1]]));
    assert_eq!(
        events[2..],
        [
            Event::DirectionReversed,
            Event::DirectionReversed,
            Event::TurnStarted { seat: 2 }
        ]
    );
    assert_eq!(game.direction(), Direction::Clockwise);
    assert_turn(&game, 2);
}

// [H-MULTI]
#[test]
fn h_multi_two_flips_flip_twice_back_to_the_light_side() {
    let (mut game, h) = table_of_four(MULTI, &["red flip", "red flip", "blue 4"], &[]);
    let events = act(&mut game, 1, many(&[h[0], h[1]]));
    assert_eq!(
        events[2..],
        [
            Event::Flipped,
            Event::Flipped,
            Event::TurnStarted { seat: 2 }
        ]
    );
    assert_eq!(game.side(), Side::Light);
    assert_eq!(game.top_card(), Some(h[1]));
    assert_eq!(game.color(), Some(Color::Red));
    assert_turn(&game, 2);
    assert_conserved(&game);
}

// [H-MULTI] with [H-STACK], classic: two Draw Twos pend four; a third passes six on.
#[test]
fn h_multi_classic_two_draw_twos_stack_four() {
    let house = HouseRules {
        stacking: true,
        ..MULTI
    };
    let mut t = Table::classic(3).options(with(house));
    let top = t.card("red 5");
    let h = t.cards(["red draw-two", "red draw-two", "blue 4"]);
    let h2 = t.cards(["green draw-two", "yellow 1"]);
    let h0 = t.cards(["green 9"]);
    t.hand(1, &h).hand(2, &h2).hand(0, &h0).top(top);
    let (mut game, _) = t.position(1, None);
    act(&mut game, 1, many(&[h[0], h[1]]));
    match game.phase() {
        Phase::Penalty(p) => assert_eq!((p.from, p.card, p.total), (1, h[1], 4)),
        other => panic!("{other:?}"),
    }
    assert_eq!(game.turn(), 2);
    // One card per turn on a stack: seat 2 passes it on with one Draw Two, not two.
    play(&mut game, 2, h2[0]);
    match game.phase() {
        Phase::Penalty(p) => assert_eq!(p.total, 6),
        other => panic!("{other:?}"),
    }
    let six = draw_top(&game, 6);
    act(&mut game, 0, Action::Accept);
    assert_eq!(game.hand(0), [h0.to_vec(), six].concat().as_slice());
    assert_turn(&game, 1);
    assert_conserved(&game);
}

// [H-MULTI]: what may not be played together is refused, and nothing changes.
#[test]
fn h_multi_refuses_cards_that_are_not_identical() {
    let (mut game, h) = table_of_four(
        MULTI,
        &["red 7", "blue 7", "wild", "wild", "blue 4", "blue 4"],
        &["green 8"],
    );
    assert_refused(&mut game, 1, many(&[h[0], h[1]]), "CARDS_NOT_IDENTICAL");
    assert_refused(&mut game, 1, many(&[h[2], h[3]]), "CARDS_NOT_IDENTICAL");
    assert_refused(&mut game, 1, many(&[h[0]]), "CARDS_NOT_IDENTICAL");
    assert_refused(&mut game, 1, many(&[h[4], h[4]]), "CARD_NOT_IN_HAND");
    assert_refused(&mut game, 1, many(&[h[4], h[5]]), "CARD_DOES_NOT_MATCH");
    let uno = Action::PlayMany {
        cards: Cards::new(&[h[4], h[5]]).unwrap(),
        uno: true,
    };
    assert_refused(&mut game, 1, uno, "UNO_NOT_DUE");
    assert_refused(&mut game, 2, many(&[h[4], h[5]]), "NOT_YOUR_TURN");
    act(&mut game, 1, Action::Draw);
    assert_refused(
        &mut game,
        1,
        many(&[h[4], h[5]]),
        "ONLY_DRAWN_CARD_PLAYABLE",
    );
    // Without the rule, several cards are refused by name.
    let (mut plain_game, h) = table_of_four(HouseRules::default(), &["red 2", "red 2"], &[]);
    assert!(
        !plain_game
            .legal_actions(1)
            .iter()
            .any(|a| matches!(a, Action::PlayMany { .. }))
    );
    assert_refused(&mut plain_game, 1, many(&[h[0], h[1]]), "MULTI_PLAY_OFF");
}

// [H-MULTI]: a pair that empties the hand ends the round; with one card left, UNO may be called.
#[test]
fn h_multi_a_pair_can_call_uno_or_go_out() {
    let (mut game, h) = table_of_four(MULTI, &["red 2", "red 2", "blue 4"], &[]);
    let uno = Action::PlayMany {
        cards: Cards::new(&[h[0], h[1]]).unwrap(),
        uno: true,
    };
    assert!(game.legal_actions(1).contains(&uno));
    act(&mut game, 1, uno);
    assert_eq!(game.uno_exposed(), None);
    let (mut game, h) = table_of_four(MULTI, &["red 2", "red 2"], &[]);
    let events = act(&mut game, 1, many(&[h[0], h[1]]));
    assert!(
        matches!(events[2], Event::RoundEnded { winner: 1, .. }),
        "{events:?}"
    );
    assert_eq!(game.scores()[1], 3 + 4 + 6);
}

// [H-MULTI] with [H-SEVEN0]: a 7 is a number, not an action card: two 7s swap hands once.
#[test]
fn h_multi_two_sevens_swap_once() {
    let house = HouseRules {
        seven_zero: true,
        ..MULTI
    };
    let (mut game, h) = table_of_four(house, &["red 7", "red 7", "blue 4"], &[]);
    let events = act(&mut game, 1, many(&[h[0], h[1]]));
    assert_eq!(events[2..], [Event::SwapRequested { seat: 1, then: 2 }]);
    let hand3 = game.hand(3).to_vec();
    act(&mut game, 1, Action::Swap { seat: 3 });
    assert_eq!(game.hand(1), hand3.as_slice());
    assert_eq!(game.hand(3), &h[2..]);
    assert_turn(&game, 2);
}

// [H-LAST]
#[test]
fn h_last_a_seat_that_goes_out_leaves_the_round_which_goes_on() {
    let (mut game, h) = table_of_four(LAST, &["red 9"], &[]);
    let (h0, h2, h3) = (game.hand(0)[0], game.hand(2)[0], game.hand(3)[0]);
    let events = play(&mut game, 1, h[0]);
    assert_eq!(
        events[1..],
        [Event::WentOut { seat: 1 }, Event::TurnStarted { seat: 2 }]
    );
    assert_eq!(game.out(), &[1]);
    assert_eq!(game.scores(), &[0, 0, 0, 0]);
    assert!(game.legal_actions(1).is_empty());
    assert_refused(&mut game, 1, Action::Draw, "OUT_OF_ROUND");
    let view = game.view(Viewer::Spectator);
    let places: Vec<usize> = view.players.iter().map(|p| p.out_place).collect();
    assert_eq!(places, vec![0, 1, 0, 0]);
    // Play passes over the seat that went out: 2, 3, 0, then 2 again.
    act(&mut game, 2, Action::Draw);
    act(&mut game, 2, Action::Keep);
    assert_turn(&game, 3);
    act(&mut game, 3, Action::Draw);
    act(&mut game, 3, Action::Keep);
    assert_turn(&game, 0);
    act(&mut game, 0, Action::Draw);
    act(&mut game, 0, Action::Keep);
    assert_turn(&game, 2);
    assert_eq!(game.hand(0)[0], h0);
    assert_eq!((game.hand(2)[0], game.hand(3)[0]), (h2, h3));
    assert_conserved(&game);
}

// [H-LAST]: the round ends when one seat is left; the order is the result, and the first out
// scores the hands left [F-END-6].
#[test]
fn h_last_the_round_ends_with_one_seat_left_and_the_first_out_scores() {
    let mut t = Table::flip(3).options(with(LAST));
    let top = t.card("red 5");
    let [a, b, c, d] = t.cards(["red 9", "red 8", "blue 7", "green 6"]);
    t.hand(1, &[a]).hand(2, &[b]).hand(0, &[c, d]).top(top);
    let (mut game, _) = t.position(1, None);
    play(&mut game, 1, a);
    assert_turn(&game, 2);
    let events = play(&mut game, 2, b);
    assert_eq!(
        events[1],
        Event::RoundEnded {
            round: 1,
            winner: 1,
            hand_points: vec![13, 0, 0].into(),
            points: vec![0, 13, 0].into(),
            totals: vec![0, 13, 0].into(),
            order: vec![1, 2, 0].into(),
        }
    );
    assert_eq!(
        game.last_round().map(|r| r.order.clone()),
        Some(vec![1, 2, 0])
    );
    assert!(game.out().is_empty(), "a new round deals everyone in");
}

// [H-LAST] with alternative scoring [F-END-7]: everyone scores their own hand; those out score 0.
#[test]
fn h_last_alternative_scoring_counts_the_hand_left() {
    let mut t = Table::flip(3).options(Options {
        scoring: Scoring::Alternative,
        ..with(LAST)
    });
    let top = t.card("red 5");
    let [a, b, c] = t.cards(["red 9", "red 8", "blue 7"]);
    t.hand(1, &[a]).hand(2, &[b]).hand(0, &[c]).top(top);
    let (mut game, _) = t.position(1, None);
    play(&mut game, 1, a);
    let events = play(&mut game, 2, b);
    assert!(
        matches!(&events[1], Event::RoundEnded { points, order, .. }
            if **points == vec![7, 0, 0] && **order == vec![1, 2, 0]),
        "{events:?}"
    );
}

// [H-LAST]: a draw card going out makes the next seat draw at once (no stacking, [F-END-2]).
#[test]
fn h_last_a_last_draw_card_makes_the_next_seat_draw_at_once() {
    let house = HouseRules {
        stacking: true,
        ..LAST
    };
    let (mut game, h) = table_of_four(house, &["red draw-one"], &["green 8"]);
    let pile = draw_top(&game, 1);
    let hand2 = game.hand(2).to_vec();
    let events = play(&mut game, 1, h[0]);
    assert_eq!(events[1], Event::WentOut { seat: 1 });
    assert_eq!(game.hand(2), [hand2, pile].concat().as_slice());
    assert_turn(&game, 3);
    assert_conserved(&game);
}

// [H-LAST]: a last Reverse with two seats left reverses; play goes on from the seat before.
#[test]
fn h_last_a_last_reverse_turns_play_around() {
    let mut t = Table::flip(3).options(with(LAST));
    let top = t.card("red 5");
    let [a, b, c] = t.cards(["red reverse", "blue 8", "blue 7"]);
    t.hand(1, &[a]).hand(2, &[b]).hand(0, &[c]).top(top);
    let (mut game, _) = t.position(1, None);
    let events = play(&mut game, 1, a);
    assert_eq!(
        events[1..],
        [
            Event::WentOut { seat: 1 },
            Event::DirectionReversed,
            Event::TurnStarted { seat: 0 }
        ]
    );
    assert_eq!(game.direction(), Direction::CounterClockwise);
    // Two seats are left: the next after 0 is 2, passing over 1.
    assert_eq!(game.next_seat(0), 2);
}

// [H-LAST] with [H-SEVEN0] (classic): nobody swaps with a seat that went out, and hands pass
// among the seats still in.
#[test]
fn h_last_swaps_and_passes_leave_out_seats_alone() {
    let house = HouseRules {
        seven_zero: true,
        ..LAST
    };
    let mut t = Table::classic(4).options(with(house));
    let top = t.card("red 5");
    let [a, s7, x2, z0, x3, x0] =
        t.cards(["red 9", "red 7", "blue 2", "red 0", "blue 3", "green 1"]);
    t.hand(1, &[a])
        .hand(2, &[s7, x2])
        .hand(3, &[z0, x3])
        .hand(0, &[x0])
        .top(top);
    let (mut game, _) = t.position(1, None);
    play(&mut game, 1, a);
    play(&mut game, 2, s7);
    // Seat 2 holds one card and may still call UNO; it may swap with 0 or 3, not with 1.
    assert_eq!(
        game.legal_actions(2),
        vec![
            Action::CallUno,
            Action::Swap { seat: 0 },
            Action::Swap { seat: 3 }
        ]
    );
    assert_refused(&mut game, 2, Action::Swap { seat: 1 }, "OUT_OF_ROUND");
    act(&mut game, 2, Action::Swap { seat: 0 });
    assert_eq!((game.hand(2), game.hand(0)), (&[x0][..], &[x2][..]));
    assert_turn(&game, 3);
    play(&mut game, 3, z0);
    // Clockwise among 0, 2, 3: 3's hand goes to 0, 0's to 2, 2's to 3; seat 1 stays out.
    assert!(game.hand(1).is_empty());
    assert_eq!(game.hand(0), &[x3]);
    assert_eq!(game.hand(2), &[x2]);
    assert_eq!(game.hand(3), &[x0]);
    assert_turn(&game, 0);
    assert_conserved(&game);
}

// [H-LAST] with [H-FALSEUNO]: a seat that went out calls and catches nothing, and is not caught.
#[test]
fn h_last_out_seats_take_no_part_in_uno_calls() {
    let house = HouseRules {
        false_uno: true,
        ..LAST
    };
    let (mut game, h) = table_of_four(house, &["red 9"], &[]);
    play(&mut game, 1, h[0]);
    assert!(game.legal_actions(1).is_empty());
    assert!(!game.legal_actions(2).contains(&Action::Catch { seat: 1 }));
    assert_refused(&mut game, 1, Action::CallUno, "OUT_OF_ROUND");
}

// [H-LAST] with two seats: the first out leaves one seat, so the round ends as without the rule.
#[test]
fn h_last_with_two_seats_ends_at_the_first_out() {
    let mut t = Table::flip(2).options(with(LAST));
    let top = t.card("red 5");
    let [a, c] = t.cards(["red 9", "blue 7"]);
    t.hand(1, &[a]).hand(0, &[c]).top(top);
    let (mut game, _) = t.position(1, None);
    let events = play(&mut game, 1, a);
    assert!(
        matches!(&events[1], Event::RoundEnded { winner: 1, order, .. } if **order == vec![1, 0]),
        "{events:?}"
    );
}
