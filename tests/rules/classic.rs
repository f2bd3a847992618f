//! Classic UNO: [C-ACT-1], [C-CHAL-1], [C-START-1], [C-END-1] ([C-DECK-1] is in deck.rs).

use crate::common::*;
use unoflip::rules::*;

fn position(top: &str, hand1: &[&str]) -> (Game, Vec<CardId>) {
    let mut t = Table::classic(4);
    let top = t.card(top);
    let hand: Vec<CardId> = hand1.iter().map(|s| t.card(s)).collect();
    let others = t.cards(["blue 1", "green 2", "yellow 3"]);
    t.hand(1, &hand)
        .hand(0, &others[..1])
        .hand(2, &others[1..2])
        .hand(3, &others[2..])
        .top(top);
    let (game, _) = t.position(1, None);
    (game, hand)
}

#[test]
fn c_act_1_draw_two_next_draws_two_and_loses_the_turn() {
    let (mut game, h) = position("red 5", &["red draw-two", "blue 4", "blue 6"]);
    let two = draw_top(&game, 2);
    let hand2 = game.hand(2).to_vec();
    play(&mut game, 1, h[0]);
    assert_eq!(game.hand(2), [hand2, two].concat().as_slice());
    assert_turn(&game, 3);
}

#[test]
fn c_act_1_wild_draw_four_next_draws_four_and_loses_the_turn() {
    let (mut game, h) = position("red 5", &["wild-draw-four", "blue 4", "blue 6"]);
    play_wild(&mut game, 1, h[0], Color::Yellow);
    assert_eq!(
        game.legal_actions(2),
        vec![Action::Accept, Action::Challenge]
    );
    let four = draw_top(&game, 4);
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Accept);
    assert_eq!(game.hand(2), [hand2, four].concat().as_slice());
    assert_eq!(game.color(), Some(Color::Yellow));
    assert_turn(&game, 3);
}

#[test]
fn c_chal_1_guilty_the_player_draws_four_and_the_challenger_plays() {
    let (mut game, h) = position("red 5", &["wild-draw-four", "red 4", "blue 6"]);
    play_wild(&mut game, 1, h[0], Color::Yellow);
    let four = draw_top(&game, 4);
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Challenge);
    assert_eq!(game.hand(1), [vec![h[1], h[2]], four].concat().as_slice());
    assert_eq!(game.hand(2), hand2.as_slice());
    assert_turn(&game, 2);
}

#[test]
fn c_chal_1_not_guilty_the_challenger_draws_six_and_loses_the_turn() {
    let (mut game, h) = position("red 5", &["wild-draw-four", "green 5", "blue 6"]);
    play_wild(&mut game, 1, h[0], Color::Yellow);
    let six = draw_top(&game, 6);
    let hand2 = game.hand(2).to_vec();
    act(&mut game, 2, Action::Challenge);
    assert_eq!(game.hand(2), [hand2, six].concat().as_slice());
    assert_eq!(game.hand(1), &[h[1], h[2]]);
    assert_turn(&game, 3);
}

#[test]
fn c_start_1_draw_two_first_player_draws_two_and_is_skipped() {
    let mut t = Table::classic(3);
    let [d2, a, b] = t.cards(["green draw-two", "red 0", "red 1"]);
    t.top(d2).draw(&[a, b]);
    let (game, _) = t.start();
    assert_eq!(game.hand(1).len(), 9);
    assert_eq!(&game.hand(1)[7..], &[a, b]);
    assert_turn(&game, 2);
    assert_eq!(game.side(), Side::Light);
}

#[test]
fn c_start_1_wild_draw_four_goes_back_and_others_are_as_f_start() {
    let mut t = Table::classic(3);
    let [wd4, n] = t.cards(["wild-draw-four", "yellow 0"]);
    t.top(wd4).draw(&[n]);
    let (game, _) = t.start();
    assert_eq!(game.discard_pile(), &[n]);
    assert!(game.draw_pile().contains(&wd4));
    assert_eq!(game.color(), Some(Color::Yellow));
    assert_turn(&game, 1);

    let mut t = Table::classic(3);
    let r = t.card("blue reverse");
    t.top(r);
    let (game, _) = t.start();
    assert_turn(&game, 0);
    assert_eq!(game.direction(), Direction::CounterClockwise);
}

#[test]
fn c_end_1_classic_values() {
    let r = Ruleset::Classic;
    for (name, value) in [
        ("red 0", 0),
        ("red 7", 7),
        ("red skip", 20),
        ("red reverse", 20),
        ("red draw-two", 20),
        ("wild", 50),
        ("wild-draw-four", 50),
    ] {
        assert_eq!(face(name).points(r), value, "{name}");
    }
    let (mut game, h) = position("red 5", &["red 9"]);
    let expected: u32 = (0..4)
        .map(|s| {
            game.hand(s)
                .iter()
                .map(|&c| game.face(c).points(r))
                .sum::<u32>()
        })
        .sum::<u32>()
        - 9;
    play(&mut game, 1, h[0]);
    assert_eq!(game.scores()[1], expected);
}
