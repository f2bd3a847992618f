//! UNO Flip turns, action cards and the flip: [F-TURN-1..5], [F-ACT-1..12], [F-FLIP-1..5].

use crate::common::*;
use unoflip::rules::*;

#[test]
fn f_turn_1_play_a_matching_card_or_draw() {
    let mut t = Table::flip(4);
    let [top, r7, g5, b2] = t.cards(["red 5", "red 7", "green 5", "blue 2"]);
    t.hand(1, &[r7, g5, b2]).top(top);
    let (mut game, _) = t.position(1, None);
    assert_eq!(
        game.legal_actions(1),
        vec![plain(r7), plain(g5), Action::Draw]
    );
    let events = play(&mut game, 1, r7);
    assert_eq!(
        events,
        vec![
            Event::CardPlayed {
                seat: 1,
                card: r7,
                color: None,
                uno: false
            },
            Event::TurnStarted { seat: 2 }
        ]
    );
    assert_eq!(game.hand(1), &[g5, b2]);
    assert_eq!(game.top_card(), Some(r7));
    assert_eq!(game.color(), Some(Color::Red));
    assert_turn(&game, 2);
}

// [F-TURN-2]
#[test]
fn f_turn_2_color_number_symbol_or_wild_match() {
    let mut t = Table::flip(3);
    let [
        top,
        same_color,
        same_number,
        same_symbol,
        a_wild,
        none,
        other_symbol,
    ] = t.cards([
        "yellow skip",
        "yellow 9",
        "blue 9",
        "green skip",
        "wild",
        "green 4",
        "red reverse",
    ]);
    t.hand(
        1,
        &[
            same_color,
            same_number,
            same_symbol,
            a_wild,
            none,
            other_symbol,
        ],
    )
    .top(top);
    let (mut game, _) = t.position(1, None);
    assert!(game.matches(same_color));
    assert!(
        !game.matches(same_number),
        "blue 9 on yellow skip: neither color nor symbol"
    );
    assert!(game.matches(same_symbol));
    assert!(game.matches(a_wild));
    assert!(!game.matches(none));
    assert!(!game.matches(other_symbol));
    assert_refused(&mut game, 1, plain(none), "CARD_DOES_NOT_MATCH");
    assert_refused(&mut game, 1, plain(a_wild), "COLOR_REQUIRED");
    assert_refused(
        &mut game,
        1,
        wild(same_color, Color::Red),
        "COLOR_NOT_ALLOWED",
    );
    // Numbers match numbers.
    play(&mut game, 1, same_color);
    act(&mut game, 2, Action::Draw);
    act(&mut game, 2, Action::Keep);
    assert!(game.matches(same_number), "blue 9 on yellow 9: same number");
}

#[test]
fn f_turn_3_a_drawn_match_may_be_played_at_once_and_no_other_card() {
    let mut t = Table::flip(4);
    let [top, held, drawn] = t.cards(["red 5", "red 8", "red 2"]);
    t.hand(1, &[held]).top(top).draw(&[drawn]);
    let (mut game, _) = t.position(1, None);
    let events = act(&mut game, 1, Action::Draw);
    assert_eq!(
        events,
        vec![Event::CardsDrawn {
            seat: 1,
            cards: vec![drawn].into(),
            cause: DrawCause::Turn
        }]
    );
    assert_eq!(game.phase(), Phase::PlayDrawn { card: drawn });
    assert_eq!(
        game.legal_actions(1),
        vec![
            plain(drawn),
            Action::Play {
                card: drawn,
                color: None,
                uno: true
            },
            Action::Keep
        ]
    );
    assert_refused(&mut game, 1, plain(held), "ONLY_DRAWN_CARD_PLAYABLE");
    assert_refused(&mut game, 1, Action::Draw, "ALREADY_DREW");
    play(&mut game, 1, drawn);
    assert_eq!(game.hand(1), &[held]);
    assert_eq!(game.top_card(), Some(drawn));
    assert_turn(&game, 2);
}

#[test]
fn f_turn_3_a_drawn_card_that_does_not_match_is_kept_and_the_turn_ends() {
    let mut t = Table::flip(4);
    let [top, held, drawn] = t.cards(["red 5", "red 8", "blue 2"]);
    t.hand(1, &[held]).top(top).draw(&[drawn]);
    let (mut game, _) = t.position(1, None);
    act(&mut game, 1, Action::Draw);
    assert_eq!(game.legal_actions(1), vec![Action::Keep]);
    let events = act(&mut game, 1, Action::Keep);
    assert_eq!(
        events,
        vec![
            Event::DrawnCardKept { seat: 1 },
            Event::TurnStarted { seat: 2 }
        ]
    );
    assert_eq!(game.hand(1), &[held, drawn]);
    assert_eq!(game.top_card(), Some(top));
    assert_turn(&game, 2);
}

// [F-TURN-4]
#[test]
fn f_turn_4_may_draw_while_holding_a_playable_card() {
    let mut t = Table::flip(4);
    let [top, playable, drawn] = t.cards(["red 5", "red 8", "red 9"]);
    t.hand(1, &[playable]).top(top).draw(&[drawn]);
    let (mut game, _) = t.position(1, None);
    assert!(game.legal_actions(1).contains(&Action::Draw));
    act(&mut game, 1, Action::Draw);
    act(&mut game, 1, Action::Keep);
    assert_eq!(game.hand(1), &[playable, drawn]);
    assert_turn(&game, 2);
}

// [F-TURN-5]
#[test]
fn f_turn_5_only_the_turn_seat_acts() {
    let mut t = Table::flip(4);
    let [top, c2] = t.cards(["red 5", "red 8"]);
    t.hand(2, &[c2]).top(top);
    let (mut game, _) = t.position(1, None);
    assert_refused(&mut game, 2, plain(c2), "NOT_YOUR_TURN");
    assert_refused(&mut game, 2, Action::Draw, "NOT_YOUR_TURN");
    assert_refused(&mut game, 7, Action::Draw, "NO_SUCH_SEAT");
    assert!(game.legal_actions(2).is_empty());
}

#[test]
fn f_act_1_draw_one_next_draws_one_and_loses_the_turn() {
    let mut t = Table::flip(4);
    let [top, d1, x] = t.cards(["red 5", "red draw-one", "blue 7"]);
    t.hand(1, &[d1, x]).top(top);
    let (mut game, _) = t.position(1, None);
    let next_card = draw_top(&game, 1)[0];
    let hand2 = game.hand(2).to_vec();
    play(&mut game, 1, d1);
    assert_eq!(game.hand(2), [hand2, vec![next_card]].concat().as_slice());
    assert_turn(&game, 3);
}

// [F-ACT-2]
#[test]
fn f_act_2_reverse_changes_direction_and_acts_as_skip_with_two() {
    let game = after_playing(4, false, 1, "red 5", "red reverse");
    assert_eq!(game.direction(), Direction::CounterClockwise);
    assert_turn(&game, 0);
    // With two players the player plays again, and by the ruling the direction still reverses
    // (views show it), as for a Reverse turned up first [F-START-2].
    let game = after_playing(2, false, 1, "red 5", "red reverse");
    assert_eq!(game.direction(), Direction::CounterClockwise);
    assert_turn(&game, 1);
}

// [F-ACT-3]
#[test]
fn f_act_3_skip_next_loses_the_turn_and_with_two_the_player_plays_again() {
    let game = after_playing(4, false, 3, "red 5", "red skip");
    assert_turn(&game, 1);
    let game = after_playing(2, false, 0, "red 5", "red skip");
    assert_turn(&game, 0);
}

// [F-ACT-4]
#[test]
fn f_act_4_wild_declares_any_light_color_even_with_other_plays() {
    let mut t = Table::flip(4);
    let [top, w, same] = t.cards(["red 5", "wild", "red 8"]);
    t.hand(1, &[w, same]).top(top);
    let (mut game, _) = t.position(1, None);
    let legal = game.legal_actions(1);
    for color in Color::of_side(Side::Light) {
        assert!(legal.contains(&wild(w, color)));
    }
    assert_refused(
        &mut game,
        1,
        wild(w, Color::Pink),
        "COLOR_NOT_ON_ACTIVE_SIDE",
    );
    play_wild(&mut game, 1, w, Color::Red);
    assert_eq!(game.color(), Some(Color::Red));
    assert_turn(&game, 2);
}

// [F-ACT-5]
#[test]
fn f_act_5_wild_draw_two_next_draws_two_and_loses_the_turn() {
    let mut t = Table::flip(4);
    let [top, wd, x, y] = t.cards(["red 5", "wild-draw-two", "blue 7", "blue 8"]);
    t.hand(1, &[wd, x, y]).top(top);
    let (mut game, _) = t.position(1, None);
    play_wild(&mut game, 1, wd, Color::Green);
    assert_eq!(game.turn(), 2);
    assert!(matches!(
        game.phase(),
        Phase::Penalty(Penalty {
            from: 1,
            previous_color: Color::Red,
            ..
        })
    ));
    assert_eq!(
        game.legal_actions(2),
        vec![Action::Accept, Action::Challenge]
    );
    let two = draw_top(&game, 2);
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Accept);
    assert_eq!(game.hand(2), [hand2, two].concat().as_slice());
    assert_eq!(game.color(), Some(Color::Green));
    assert_turn(&game, 3);
}

// [F-ACT-6]
#[test]
fn f_act_6_flip_then_the_next_player_plays_on_the_dark_side() {
    let mut t = Table::flip(4);
    let [top, f, x] = t.cards(["red 5", "red flip|pink 8", "blue 7"]);
    t.hand(1, &[f, x]).top(top);
    let (mut game, _) = t.position(1, None);
    play(&mut game, 1, f);
    assert_eq!(game.side(), Side::Dark);
    assert_turn(&game, 2);
}

// [F-ACT-7]
#[test]
fn f_act_7_draw_five_next_draws_five_and_loses_the_turn() {
    let mut t = Table::flip(4).dark();
    let [top, d5, x] = t.cards(["pink 3", "pink draw-five", "teal 7"]);
    t.hand(1, &[d5, x]).top(top);
    let (mut game, _) = t.position(1, None);
    assert_eq!(game.side(), Side::Dark);
    let hand2 = game.hand(2).to_vec();
    let five = draw_top(&game, 5);
    play(&mut game, 1, d5);
    assert_eq!(game.hand(2), [hand2, five].concat().as_slice());
    assert_turn(&game, 3);
    assert_conserved(&game);
}

// [F-ACT-8]
#[test]
fn f_act_8_dark_reverse_as_f_act_2() {
    let game = after_playing(5, true, 2, "pink 3", "pink reverse");
    assert_eq!(game.side(), Side::Dark);
    assert_eq!(game.direction(), Direction::CounterClockwise);
    assert_turn(&game, 1);
    let game = after_playing(2, true, 1, "pink 3", "pink reverse");
    assert_eq!(game.direction(), Direction::CounterClockwise);
    assert_turn(&game, 1);
}

// [F-ACT-9]
#[test]
fn f_act_9_skip_everyone_the_player_plays_again_even_another_skip_everyone() {
    let mut t = Table::flip(4).dark();
    let [top, s1, s2, x] = t.cards([
        "orange 3",
        "orange skip-everyone",
        "teal skip-everyone",
        "teal 7",
    ]);
    t.hand(1, &[s1, s2, x]).top(top);
    let (mut game, _) = t.position(1, None);
    play(&mut game, 1, s1);
    assert_turn(&game, 1);
    assert!(game.legal_actions(1).contains(&Action::Play {
        card: s2,
        color: None,
        uno: true
    }));
    play(&mut game, 1, s2);
    assert_turn(&game, 1);
    assert_eq!(game.hand(1), &[x]);
}

// [F-ACT-10]
#[test]
fn f_act_10_dark_wild_declares_a_dark_color() {
    let mut t = Table::flip(4).dark();
    let [top, w, x] = t.cards(["orange 3", "dark wild", "teal 7"]);
    t.hand(1, &[w, x]).top(top);
    let (mut game, _) = t.position(1, None);
    let colors: Vec<Color> = game
        .legal_actions(1)
        .iter()
        .filter_map(|a| match a {
            Action::Play {
                card,
                color,
                uno: false,
            } if *card == w => *color,
            _ => None,
        })
        .collect();
    assert_eq!(colors, Color::of_side(Side::Dark).to_vec());
    assert_refused(
        &mut game,
        1,
        wild(w, Color::Blue),
        "COLOR_NOT_ON_ACTIVE_SIDE",
    );
    play_wild(&mut game, 1, w, Color::Purple);
    assert_eq!(game.color(), Some(Color::Purple));
    assert_turn(&game, 2);
}

// [F-ACT-11]
#[test]
fn f_act_11_wild_draw_color_draws_until_the_color_wilds_do_not_count() {
    let mut t = Table::flip(4).dark();
    let [top, wdc, x, a, wild, b, teal] = t.cards([
        "orange 3",
        "wild-draw-color",
        "teal 7",
        "pink 1",
        "dark wild",
        "orange 2",
        "teal 5",
    ]);
    let after = t.card("purple 4");
    t.hand(1, &[wdc, x])
        .top(top)
        .draw(&[a, wild, b, teal, after]);
    let (mut game, _) = t.position(1, None);
    play_wild(&mut game, 1, wdc, Color::Teal);
    let hand2 = game.hand(2).to_vec();
    let events = act(&mut game, 2, Action::Accept);
    assert_eq!(
        events,
        vec![
            Event::PenaltyAccepted { seat: 2 },
            Event::CardsDrawn {
                seat: 2,
                cards: vec![a, wild, b, teal].into(),
                cause: DrawCause::Penalty
            },
            Event::TurnStarted { seat: 3 }
        ]
    );
    assert_eq!(
        game.hand(2),
        [hand2, vec![a, wild, b, teal]].concat().as_slice()
    );
    assert_eq!(draw_top(&game, 1), vec![after]);
    assert_eq!(game.color(), Some(Color::Teal));
    assert_turn(&game, 3);
}

#[test]
fn f_act_11_drawing_stops_when_the_pile_and_the_reshuffle_run_out() {
    let mut t = Table::flip(2).dark();
    let hand0 = t.cards([
        "orange 1", "orange 2", "orange 4", "orange 5", "orange 6", "orange 7", "orange 8",
    ]);
    let [top, wdc, x1, x2, x3, x4, x5] = t.cards([
        "orange 3",
        "wild-draw-color",
        "pink 1",
        "pink 2",
        "pink 4",
        "pink 5",
        "pink 6",
    ]);
    t.hand(0, &hand0)
        .hand(1, &[wdc, x1, x2, x3, x4, x5])
        .top(top);
    let (game, mut log) = t.position(1, None);
    let starter = game.discard_pile()[0];
    assert_eq!(game.discard_pile(), &[starter, top]);
    let color = [Color::Teal, Color::Purple]
        .into_iter()
        .find(|&c| game.face(starter).color != Some(c))
        .unwrap();
    // Given: seat 0 drew every card of that color earlier in the round.
    let of_color: Vec<CardId> = draw_top_first(&game)
        .into_iter()
        .filter(|&c| game.face(c).color == Some(color))
        .collect();
    log.push(Event::CardsDrawn {
        seat: 0,
        cards: of_color.clone().into(),
        cause: DrawCause::Penalty,
    });
    let mut game = Game::replay(&log).unwrap();
    let rest = draw_top_first(&game);
    play_wild(&mut game, 1, wdc, color);
    let events = act(&mut game, 0, Action::Accept);
    // The whole pile, then the reshuffled discards (starter and orange 3), and no more.
    assert!(
        matches!(&events[1], Event::CardsDrawn { seat: 0, cards, .. } if cards[..] == rest[..])
    );
    assert!(matches!(&events[2], Event::Reshuffled { order } if order.len() == 2));
    assert!(matches!(&events[3], Event::CardsDrawn { seat: 0, cards, .. } if cards.len() == 2));
    assert_eq!(events[4], Event::TurnStarted { seat: 1 });
    assert!(game.draw_pile().is_empty());
    assert_eq!(game.discard_pile(), &[wdc]);
    assert_eq!(game.hand(0).len(), 7 + of_color.len() + rest.len() + 2);
    assert_conserved(&game);
}

// [F-ACT-12]
#[test]
fn f_act_12_a_card_turned_up_by_a_flip_does_nothing() {
    // The starter's dark face is a Draw Five; the flip brings it to the top and nobody draws.
    let mut t = Table::flip(4);
    let [f, x] = t.cards(["red flip|pink 8", "blue 7"]);
    let starter = t.card("red 2|purple draw-five");
    let mut hand1 = vec![f, x];
    hand1.extend(t.cards(["green 1", "green 2", "green 3", "green 4", "green 5"]));
    t.hand(1, &hand1).top(starter);
    let (mut game, _) = t.start();
    let counts: Vec<usize> = game.hands().iter().map(Vec::len).collect();
    play(&mut game, 1, f);
    assert_eq!(game.top_card(), Some(starter));
    assert_eq!(game.top_face(), Some(face("purple draw-five")));
    assert_eq!(game.color(), Some(Color::Purple));
    let after: Vec<usize> = game.hands().iter().map(Vec::len).collect();
    assert_eq!(
        after,
        vec![counts[0], counts[1] - 1, counts[2], counts[3]],
        "nobody draws"
    );
    assert_turn(&game, 2);
}

#[test]
fn f_flip_1_a_flip_plays_on_its_color_or_another_flip() {
    let mut t = Table::flip(4);
    let [top, yf, bf, x] = t.cards(["red flip", "yellow flip", "blue flip", "green 7"]);
    t.hand(1, &[yf, bf, x]).top(top);
    let (game, _) = t.position(1, None);
    assert!(game.matches(yf) && game.matches(bf), "a flip on a flip");

    let mut t = Table::flip(4);
    let [top, yf, bf, x] = t.cards(["yellow 5", "yellow flip", "blue flip", "green 7"]);
    t.hand(1, &[yf, bf, x]).top(top);
    let (mut game, _) = t.position(1, None);
    assert!(game.matches(yf), "a flip on its color");
    assert_refused(&mut game, 1, plain(bf), "CARD_DOES_NOT_MATCH");
}

// [F-FLIP-2] [F-FLIP-3]
#[test]
fn f_flip_2_3_piles_and_hands_turn_over_as_stacks() {
    let mut t = Table::flip(4);
    let [f, x] = t.cards(["yellow flip|pink 4", "blue 7"]);
    let draw = t.cards(["red 1|pink 3", "red 2|orange reverse", "red 3|pink 7"]);
    let starter = t.card("yellow 2|teal 8");
    let mut hand1 = vec![f, x];
    hand1.extend(t.cards(["green 1", "green 2", "green 3", "green 4", "green 5"]));
    t.hand(1, &hand1).top(starter).draw(&draw);
    let (mut game, _) = t.start();
    let discard_before = game.discard_pile().to_vec();
    let draw_before = game.draw_pile().to_vec();
    let hands_before = game.hands().to_vec();
    play(&mut game, 1, f);
    // The Flip just played is now at the bottom; the old bottom (the starter) is on top, dark.
    assert_eq!(game.discard_pile(), &[f, starter]);
    assert_eq!(discard_before, vec![starter]);
    assert_eq!(game.top_face(), Some(face("teal 8")));
    assert_eq!(game.color(), Some(Color::Teal));
    // The draw pile is upside down: its old bottom is the new top.
    let mut reversed = draw_before.clone();
    reversed.reverse();
    assert_eq!(game.draw_pile(), reversed.as_slice());
    assert_eq!(
        *game.draw_pile().first().unwrap(),
        draw[0],
        "the old top is now at the bottom"
    );
    // Hands keep their cards; their dark faces are now read [F-FLIP-3].
    for seat in [0, 2, 3] {
        assert_eq!(game.hand(seat), hands_before[seat].as_slice());
    }
    assert_eq!(game.side(), Side::Dark);
    assert!(
        game.hand(1)
            .iter()
            .all(|&c| game.face(c) == Deck::of(Ruleset::Flip).cards()[c.index()].dark.unwrap())
    );
    assert_turn(&game, 2);
}

// [F-FLIP-4]
#[test]
fn f_flip_4_a_wild_turned_up_makes_the_flipper_declare() {
    let mut t = Table::flip(4);
    let [f, x] = t.cards(["red flip|pink 8", "blue 7"]);
    let starter = t.card("red skip|wild");
    let mut hand1 = vec![f, x];
    hand1.extend(t.cards(["green 1", "green 2", "green 3", "green 4", "green 5"]));
    t.hand(1, &hand1).top(starter);
    // Dealer 3: red skip as the first discard skips seat 0, and seat 1 plays.
    let (mut game, _) = t.dealer(3).start();
    assert_turn(&game, 1);
    play(&mut game, 1, f);
    assert_eq!(game.top_card(), Some(starter));
    assert_eq!(game.color(), None);
    assert_eq!(
        (game.turn(), game.phase()),
        (1, Phase::ChooseColor { then: 2 })
    );
    assert_refused(&mut game, 2, Action::Draw, "NOT_YOUR_TURN");
    act(
        &mut game,
        1,
        Action::ChooseColor {
            color: Color::Orange,
        },
    );
    assert_eq!(game.color(), Some(Color::Orange));
    assert_turn(&game, 2);
}
