//! Wild draws, challenges, no stacking, UNO calls and the empty draw pile: [F-WDRAW-1..2],
//! [F-CHAL-1..5], [F-STACK-1], [F-UNO-1..4], [F-EMPTY-1..2].

use crate::common::*;
use unoflip::rules::*;

/// Seat 1 holds `hand1` and plays on `top` (red); seat 2 is next. Four seats.
fn light(top: &str, hand1: &[&str]) -> (Game, Vec<CardId>) {
    let mut t = Table::flip(4);
    let top = t.card(top);
    let hand: Vec<CardId> = hand1.iter().map(|s| t.card(s)).collect();
    t.hand(1, &hand).top(top);
    let (game, _) = t.position(1, None);
    (game, hand)
}

// [F-WDRAW-1] [F-CHAL-2]
#[test]
fn f_wdraw_1_only_color_counts_for_guilt() {
    // Seat 1 holds a red 5's number twin (blue 5) and another wild but no red: not guilty.
    let (mut game, h) = light("red 5", &["wild-draw-two", "blue 5", "wild", "green 2"]);
    play_wild(&mut game, 1, h[0], Color::Blue);
    assert!(matches!(
        game.phase(),
        Phase::Penalty(Penalty { guilty: false, .. })
    ));
    let (mut game, h) = light("red 5", &["wild-draw-two", "red 9", "green 2"]);
    play_wild(&mut game, 1, h[0], Color::Blue);
    assert!(matches!(
        game.phase(),
        Phase::Penalty(Penalty { guilty: true, .. })
    ));
}

// [F-WDRAW-2]
#[test]
fn f_wdraw_2_a_bluff_is_accepted() {
    let (mut game, h) = light("red 5", &["wild-draw-two", "red 9", "green 2"]);
    assert!(game.legal_actions(1).contains(&wild(h[0], Color::Green)));
    play_wild(&mut game, 1, h[0], Color::Green);
    assert_eq!(game.top_card(), Some(h[0]));
}

// [F-CHAL-1] [F-CHAL-2] [F-CHAL-3]
#[test]
fn f_chal_1_2_3_guilty_wild_draw_two() {
    let (mut game, h) = light("red 5", &["wild-draw-two", "red 9", "green 2"]);
    play_wild(&mut game, 1, h[0], Color::Green);
    let two = draw_top(&game, 2);
    let hand2 = game.hand(2).to_vec();
    let events = act(&mut game, 2, Action::Challenge);
    assert_eq!(
        events[0],
        Event::Challenged {
            seat: 2,
            target: 1,
            guilty: true
        }
    );
    assert_eq!(
        events[1],
        Event::HandShown {
            seat: 1,
            to: 2,
            cards: vec![h[1], h[2]]
        }
    );
    assert_eq!(
        events[2],
        Event::CardsDrawn {
            seat: 1,
            cards: two.clone().into(),
            cause: DrawCause::Challenge
        }
    );
    assert_eq!(game.hand(1), [vec![h[1], h[2]], two].concat().as_slice());
    assert_eq!(game.hand(2), hand2.as_slice());
    // The challenger takes the turn normally, on the declared color.
    assert_turn(&game, 2);
    assert_eq!(game.color(), Some(Color::Green));
}

#[test]
fn f_chal_3_not_guilty_challenger_draws_four_and_loses_the_turn() {
    let (mut game, h) = light("red 5", &["wild-draw-two", "blue 9", "green 2"]);
    play_wild(&mut game, 1, h[0], Color::Green);
    let four = draw_top(&game, 4);
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Challenge);
    assert_eq!(game.hand(2), [hand2, four].concat().as_slice());
    assert_eq!(game.hand(1), &[h[1], h[2]]);
    assert_turn(&game, 3);
}

/// Dark side: seat 1 plays a wild draw color on orange 3, declaring teal; seat 2 is next.
fn dark_wdc(hand1: &[&str], draw: &[&str]) -> (Game, Vec<CardId>, Vec<CardId>) {
    let mut t = Table::flip(4).dark();
    let top = t.card("orange 3");
    let hand: Vec<CardId> = hand1.iter().map(|s| t.card(s)).collect();
    let draw: Vec<CardId> = draw.iter().map(|s| t.card(s)).collect();
    t.hand(1, &hand).top(top).draw(&draw);
    let (mut game, _) = t.position(1, None);
    play_wild(&mut game, 1, hand[0], Color::Teal);
    (game, hand, draw)
}

// [F-CHAL-4]
#[test]
fn f_chal_4_guilty_wild_draw_color_the_player_draws_until_the_color() {
    let (mut game, h, d) = dark_wdc(
        &["wild-draw-color", "orange 9", "pink 2"],
        &["pink 1", "teal 4", "pink 5"],
    );
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Challenge);
    assert_eq!(game.hand(1), &[h[1], h[2], d[0], d[1]]);
    assert_eq!(game.hand(2), hand2.as_slice());
    assert_turn(&game, 2);
    assert_eq!(game.color(), Some(Color::Teal));
}

#[test]
fn f_chal_4_not_guilty_challenger_draws_until_the_color_and_two_more() {
    let (mut game, h, d) = dark_wdc(
        &["wild-draw-color", "purple 9", "pink 2"],
        &["pink 1", "teal 4", "pink 5", "purple 1", "orange 2"],
    );
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Challenge);
    assert_eq!(game.hand(2), [hand2, d[..4].to_vec()].concat().as_slice());
    assert_eq!(game.hand(1), &[h[1], h[2]]);
    assert_turn(&game, 3);
}

// [F-CHAL-5]
#[test]
fn f_chal_5_a_wild_draw_as_last_card_cannot_be_challenged() {
    let (mut game, h) = light("red 5", &["wild-draw-two"]);
    let two = draw_top(&game, 2);
    let hand2 = game.hand(2).to_vec();
    let events = play_wild(&mut game, 1, h[0], Color::Blue);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PenaltyPending { .. }))
    );
    assert_eq!(
        events[1],
        Event::CardsDrawn {
            seat: 2,
            cards: two.clone().into(),
            cause: DrawCause::Penalty
        }
    );
    assert!(matches!(events[2], Event::RoundEnded { winner: 1, .. }));
    // The drawn cards count in the loser's hand [F-END-2].
    let mut all = hand2;
    all.extend(&two);
    let points: u32 = all
        .iter()
        .map(|&c| game.face(c).points(Ruleset::Flip))
        .sum();
    assert_eq!(game.last_round().unwrap().hand_points[2], points);
}

#[test]
fn f_stack_1_draw_penalties_do_not_stack() {
    let mut t = Table::flip(4);
    let [top, d1, x, y] = t.cards(["red 5", "red draw-one", "blue 3", "blue 4"]);
    let victim = t.card("yellow draw-one");
    t.hand(1, &[d1, x, y]).hand(2, &[victim]).top(top);
    let (mut game, _) = t.position(1, None);
    play(&mut game, 1, d1);
    // Seat 2 drew at once and lost the turn; its own Draw One could not pass the penalty on.
    assert_eq!(game.hand(2).len(), 2);
    assert_turn(&game, 3);
    // A pending wild draw offers only taking it or challenging it.
    let (mut game, h) = light("red 5", &["wild-draw-two", "green 3", "green 4"]);
    play_wild(&mut game, 1, h[0], Color::Green);
    assert_eq!(
        game.legal_actions(2),
        vec![Action::Accept, Action::Challenge]
    );
    assert_refused(&mut game, 2, Action::Draw, "PENALTY_PENDING");
}

#[test]
fn f_uno_1_the_call_goes_with_the_play_or_after_it() {
    let (mut game, h) = light("red 5", &["red 7", "blue 2"]);
    let with = Action::Play {
        card: h[0],
        color: None,
        uno: true,
    };
    assert!(game.legal_actions(1).contains(&with));
    let mut called_with = game.clone();
    act(&mut called_with, 1, with);
    assert_eq!(called_with.uno_exposed(), None);
    assert!(
        !called_with
            .legal_actions(2)
            .iter()
            .any(|a| matches!(a, Action::Catch { .. }))
    );

    play(&mut game, 1, h[0]);
    assert_eq!(game.uno_exposed(), Some(1));
    assert_eq!(game.legal_actions(1), vec![Action::CallUno]);
    act(&mut game, 1, Action::CallUno);
    assert_eq!(game.uno_exposed(), None);
    assert_eq!(game.hand(1), &[h[1]]);
}

#[test]
fn f_uno_1_the_call_is_late_once_the_next_player_acts() {
    let (mut game, h) = light("red 5", &["red 7", "blue 2"]);
    play(&mut game, 1, h[0]);
    act(&mut game, 2, Action::Draw);
    assert_eq!(game.uno_exposed(), None);
    assert_refused(&mut game, 1, Action::CallUno, "UNO_NOT_DUE");
    assert_refused(&mut game, 3, Action::Catch { seat: 1 }, "NOT_CATCHABLE");
}

#[test]
fn f_uno_2_a_caught_player_draws_two() {
    let (mut game, h) = light("red 5", &["red 7", "blue 2"]);
    play(&mut game, 1, h[0]);
    let two = draw_top(&game, 2);
    // Any other player may catch, out of turn.
    assert!(game.legal_actions(3).contains(&Action::Catch { seat: 1 }));
    let events = act(&mut game, 3, Action::Catch { seat: 1 });
    assert_eq!(
        events,
        vec![
            Event::UnoCaught { seat: 1, by: 3 },
            Event::CardsDrawn {
                seat: 1,
                cards: two.clone().into(),
                cause: DrawCause::UnoCaught
            }
        ]
    );
    assert_eq!(game.hand(1), [vec![h[1]], two].concat().as_slice());
    // The turn is unchanged.
    assert_turn(&game, 2);
    assert_refused(&mut game, 0, Action::Catch { seat: 1 }, "NOT_CATCHABLE");
}

#[test]
fn f_uno_3_a_catch_of_a_player_who_called_is_refused_and_costs_nothing() {
    let (mut game, h) = light("red 5", &["red 7", "blue 2"]);
    act(
        &mut game,
        1,
        Action::Play {
            card: h[0],
            color: None,
            uno: true,
        },
    );
    assert_refused(&mut game, 2, Action::Catch { seat: 1 }, "NOT_CATCHABLE");
    assert_refused(&mut game, 2, Action::Catch { seat: 0 }, "NOT_CATCHABLE");
    assert_refused(
        &mut game,
        2,
        Action::Catch { seat: 2 },
        "CANNOT_CATCH_YOURSELF",
    );
    assert_refused(&mut game, 2, Action::Catch { seat: 9 }, "NO_SUCH_SEAT");
    assert_refused(&mut game, 0, Action::CallUno, "UNO_NOT_DUE");
    // A play that leaves more than one card cannot carry the call.
    let (mut game, h) = light("red 5", &["red 7", "blue 2", "blue 3"]);
    assert_refused(
        &mut game,
        1,
        Action::Play {
            card: h[0],
            color: None,
            uno: true,
        },
        "UNO_NOT_DUE",
    );
}

// [F-UNO-4]
#[test]
fn f_uno_4_the_duty_arises_again() {
    let mut t = Table::flip(2);
    let [top, a, b, s1a, drawn, s1b] =
        t.cards(["red 5", "red 7", "red 8", "green 1", "green 9", "green 2"]);
    t.hand(0, &[a, b]).top(top).draw(&[s1a, drawn, s1b]);
    let (mut game, _) = t.position(0, None);
    act(
        &mut game,
        0,
        Action::Play {
            card: a,
            color: None,
            uno: true,
        },
    );
    assert_eq!(game.uno_exposed(), None);
    // Seat 0 draws back up to two, then plays down to one again without calling.
    act(&mut game, 1, Action::Draw);
    act(&mut game, 1, Action::Keep);
    act(&mut game, 0, Action::Draw);
    assert_eq!(game.hand(0), &[b, drawn]);
    act(&mut game, 0, Action::Keep);
    act(&mut game, 1, Action::Draw);
    act(&mut game, 1, Action::Keep);
    play(&mut game, 0, b);
    assert_eq!(game.hand(0), &[drawn]);
    assert_eq!(game.uno_exposed(), Some(0));
    act(&mut game, 1, Action::Catch { seat: 0 });
    assert_eq!(game.hand(0).len(), 3);
}

/// Two seats, seat 0 to play on red 5 holding blue 3 and blue 4; given: seat 1 drew the whole
/// draw pile earlier. Returns the game, its log, and those three cards.
fn empty_draw_pile() -> (Game, Vec<Event>, [CardId; 3]) {
    let mut t = Table::flip(2);
    let [top, x, y] = t.cards(["red 5", "blue 3", "blue 4"]);
    t.hand(0, &[x, y]).top(top);
    let (game, mut log) = t.position(0, None);
    let pile = draw_top_first(&game);
    log.push(Event::CardsDrawn {
        seat: 1,
        cards: pile.into(),
        cause: DrawCause::Penalty,
    });
    let game = Game::replay(&log).unwrap();
    assert!(game.draw_pile().is_empty());
    (game, log, [top, x, y])
}

#[test]
fn f_empty_1_the_discards_but_the_top_are_shuffled_into_a_new_pile() {
    let (mut game, _, [top, _, _]) = empty_draw_pile();
    let below: Vec<CardId> = game.discard_pile()[..game.discard_pile().len() - 1].to_vec();
    let events = act(&mut game, 0, Action::Draw);
    let Event::Reshuffled { order } = &events[0] else {
        panic!("reshuffle first: {events:?}")
    };
    let mut sorted = order.clone();
    sorted.sort();
    let mut expected = below.clone();
    expected.sort();
    assert_eq!(sorted, expected, "every discard but the top");
    assert_eq!(
        events[1],
        Event::CardsDrawn {
            seat: 0,
            cards: vec![order[0]].into(),
            cause: DrawCause::Turn
        }
    );
    assert_eq!(game.discard_pile(), &[top]);
    assert_eq!(draw_top_first(&game), order[1..].to_vec());
    assert_conserved(&game);
}

// [F-EMPTY-2]
#[test]
fn f_empty_2_with_nothing_to_draw_the_draw_takes_nothing_and_play_goes_on() {
    let (game, mut log, [top, x, y]) = empty_draw_pile();
    // Given: every discard but the top went back into seat 1's hand by an earlier reshuffle.
    let below: Vec<CardId> = game.discard_pile()[..game.discard_pile().len() - 1].to_vec();
    log.push(Event::Reshuffled {
        order: below.clone(),
    });
    log.push(Event::CardsDrawn {
        seat: 1,
        cards: below.into(),
        cause: DrawCause::Penalty,
    });
    let mut game = Game::replay(&log).unwrap();
    assert!(game.draw_pile().is_empty());
    assert_eq!(game.discard_pile(), &[top]);
    let events = act(&mut game, 0, Action::Draw);
    assert_eq!(events, vec![Event::TurnStarted { seat: 1 }]);
    assert_eq!(game.hand(0), &[x, y]);
    assert_turn(&game, 1);
    assert_conserved(&game);
}
