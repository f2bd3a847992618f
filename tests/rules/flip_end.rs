//! End of a round, scoring and the match: [F-END-1..9].

use crate::common::*;
use unoflip::rules::*;

fn points(game: &Game, cards: &[CardId]) -> u32 {
    cards
        .iter()
        .map(|&c| game.face(c).points(game.ruleset()))
        .sum()
}

/// Seat 1 holds `last` only and plays it on `top`; four seats with known hands.
fn last_card(top: &str, last: &str, options: Options, dark: bool) -> (Game, CardId) {
    let mut t = Table::flip(4).options(options);
    if dark {
        t = t.dark();
    }
    let top = t.card(top);
    let last = t.card(last);
    let [a, b, c, d, e, f] = if dark {
        t.cards([
            "teal 2",
            "purple 4",
            "pink skip-everyone",
            "teal 8",
            "orange 1",
            "wild-draw-color",
        ])
    } else {
        t.cards([
            "blue 2",
            "green 4",
            "yellow draw-one",
            "blue 8",
            "green 1",
            "wild-draw-two",
        ])
    };
    t.hand(1, &[last])
        .hand(0, &[a, b])
        .hand(2, &[c])
        .hand(3, &[d, e, f])
        .top(top);
    let (game, _) = t.position(1, None);
    (game, last)
}

// [F-END-1] [F-END-3] [F-END-6] [F-END-9]
#[test]
fn f_end_1_3_6_the_round_ends_on_the_last_card_and_the_winner_scores_the_other_hands() {
    let (mut game, last) = last_card("red 5", "red 9", Options::default(), false);
    let hands: Vec<Vec<CardId>> = game.hands().to_vec();
    let mut hand_points: Vec<u32> = hands.iter().map(|h| points(&game, h)).collect();
    hand_points[1] = 0; // the last card leaves the hand
    let total: u32 = hand_points.iter().sum();
    let events = play(&mut game, 1, last);
    assert_eq!(
        events[1],
        Event::RoundEnded {
            round: 1,
            winner: 1,
            hand_points: hand_points.clone().into(),
            points: vec![0, total, 0, 0].into(),
            totals: vec![0, total, 0, 0].into(),
            order: vec![1].into(),
        }
    );
    assert_eq!(hand_points[1], 0);
    assert_eq!(game.scores(), &[0, total, 0, 0]);
    // [F-END-9]: a new round is dealt, the deal passes to the left, on the light side.
    assert!(matches!(
        events[2],
        Event::RoundStarted {
            round: 2,
            dealer: 1,
            ..
        }
    ));
    assert_eq!(game.round(), 2);
    assert_eq!(game.dealer(), 1);
    assert_eq!(game.side(), Side::Light);
    assert!(game.hands().iter().all(|h| h.len() >= 7));
    assert_conserved(&game);
}

#[test]
fn f_end_2_a_last_draw_card_still_makes_the_next_player_draw() {
    let (mut game, last) = last_card("red 5", "red draw-one", Options::default(), false);
    let drawn = draw_top(&game, 1);
    let mut hand2 = game.hand(2).to_vec();
    hand2.extend(&drawn);
    let expected = points(&game, &hand2);
    let events = play(&mut game, 1, last);
    assert_eq!(
        events[1],
        Event::CardsDrawn {
            seat: 2,
            cards: drawn.into(),
            cause: DrawCause::Penalty
        }
    );
    assert_eq!(game.last_round().unwrap().hand_points[2], expected);
}

// [F-END-2] [F-END-3]
#[test]
fn f_end_2_3_a_last_flip_flips_and_hands_score_on_the_new_side() {
    let (mut game, last) = last_card("red 5", "red flip", Options::default(), false);
    let hands = game.hands().to_vec();
    let deck = Deck::of(Ruleset::Flip);
    let mut dark_points: Vec<u32> = hands
        .iter()
        .map(|h| {
            h.iter()
                .map(|&c| deck.cards()[c.index()].dark.unwrap().points(Ruleset::Flip))
                .sum()
        })
        .collect();
    dark_points[1] = 0;
    let events = play(&mut game, 1, last);
    assert_eq!(events[1], Event::Flipped);
    assert!(
        matches!(&events[2], Event::RoundEnded { hand_points, .. } if **hand_points == dark_points)
    );
}

// [F-END-2] ruling: any other last action card has no effect; the round is over.
#[test]
fn f_end_2_a_last_reverse_skip_or_skip_everyone_does_nothing_the_round_is_over() {
    for (top, last, dark) in [
        ("red 5", "red reverse", false),
        ("red 5", "red skip", false),
        ("orange 3", "orange skip-everyone", true),
        ("orange 3", "orange reverse", true),
    ] {
        // A single round, so that no next round is dealt after it.
        let options = Options {
            single_round: true,
            ..Options::default()
        };
        let (mut game, card) = last_card(top, last, options, dark);
        let (direction, side) = (game.direction(), game.side());
        let events = play(&mut game, 1, card);
        assert!(
            matches!(events[0], Event::CardPlayed { seat: 1, .. }),
            "{last}: {events:?}"
        );
        assert!(
            matches!(&events[1], Event::RoundEnded { winner: 1, .. }),
            "{last}: {events:?}"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::DirectionReversed | Event::TurnStarted { .. })),
            "{last}: {events:?}"
        );
        assert_eq!(events.len(), 3, "{last}: {events:?}");
        assert!(matches!(events[2], Event::MatchEnded { .. }), "{events:?}");
        assert_eq!((game.direction(), game.side()), (direction, side), "{last}");
        assert!(game.hand(1).is_empty());
    }
}

// [F-END-4]
#[test]
fn f_end_4_light_values() {
    let r = Ruleset::Flip;
    for (name, value) in [
        ("red 7", 7),
        ("red draw-one", 10),
        ("red reverse", 20),
        ("red skip", 20),
        ("red flip", 20),
        ("wild", 40),
        ("wild-draw-two", 50),
    ] {
        assert_eq!(face(name).points(r), value, "{name}");
    }
}

// [F-END-5]
#[test]
fn f_end_5_dark_values() {
    let r = Ruleset::Flip;
    for (name, value) in [
        ("pink 7", 7),
        ("pink draw-five", 20),
        ("pink reverse", 20),
        ("pink flip", 20),
        ("pink skip-everyone", 30),
        ("wild", 40),
        ("wild-draw-color", 60),
    ] {
        assert_eq!(face(name).points(r), value, "{name}");
    }
}

#[test]
fn f_end_6_the_first_to_reach_the_target_wins_the_match() {
    let options = Options {
        target: 10,
        ..Options::default()
    };
    let (mut game, last) = last_card("red 5", "red 9", options, false);
    let events = play(&mut game, 1, last);
    assert_eq!(events.last(), Some(&Event::MatchEnded { winners: vec![1] }));
    assert!(game.is_over());
    assert_eq!(game.winners(), &[1]);
    for seat in 0..4 {
        assert!(game.legal_actions(seat).is_empty());
    }
    assert_refused(&mut game, 2, Action::Draw, "MATCH_OVER");
}

#[test]
fn f_end_7_alternative_scoring_each_scores_their_own_hand_and_the_lowest_wins() {
    let options = Options {
        scoring: Scoring::Alternative,
        target: 10,
        ..Options::default()
    };
    let (mut game, last) = last_card("red 5", "red 9", options, false);
    let mut hand_points: Vec<u32> = game.hands().iter().map(|h| points(&game, h)).collect();
    hand_points[1] = 0;
    let events = play(&mut game, 1, last);
    let Event::RoundEnded {
        points: p, totals, ..
    } = &events[1]
    else {
        panic!()
    };
    assert_eq!(**p, hand_points);
    assert_eq!(p[1], 0);
    assert_eq!(**totals, hand_points);
    // Everyone else is over ten: the match ends, and the lowest total (the winner's 0) wins.
    assert_eq!(events.last(), Some(&Event::MatchEnded { winners: vec![1] }));
}

#[test]
fn f_end_7_equal_lowest_totals_win_together() {
    // Seats 0 and 2 hold cards of equal value; one round, alternative scoring.
    let options = Options {
        scoring: Scoring::Alternative,
        single_round: true,
        ..Options::default()
    };
    let mut t = Table::flip(3).options(options);
    let [top, last, a, b, c] = t.cards(["red 5", "red 9", "blue 3", "green 3", "yellow 8"]);
    t.hand(1, &[last]).hand(0, &[a]).hand(2, &[b, c]).top(top);
    let (mut game, _) = t.position(1, None);
    let events = play(&mut game, 1, last);
    assert!(matches!(&events[1], Event::RoundEnded { points, .. } if **points == vec![3, 0, 11]));
    assert_eq!(events.last(), Some(&Event::MatchEnded { winners: vec![1] }));
    // A tie at the lowest: seats 0 and 1 both at zero... only the winner can hold zero on UNO
    // Flip (no zeros), so tie two non-winners above a higher total instead.
    let options = Options {
        scoring: Scoring::Alternative,
        target: 5,
        ..Options::default()
    };
    let mut t = Table::flip(3).options(options);
    let [top, last, a, b] = t.cards(["red 5", "red 9", "blue 6", "green 6"]);
    t.hand(1, &[last]).hand(0, &[a]).hand(2, &[b]).top(top);
    let (game, mut log) = t.position(1, None);
    // Given: an earlier round left seat 1 at 6 points.
    log.push(Event::RoundEnded {
        round: 0,
        winner: 0,
        hand_points: vec![0, 6, 0].into(),
        points: vec![0, 6, 0].into(),
        totals: vec![0, 6, 0].into(),
        order: vec![0].into(),
    });
    let _ = game;
    let mut game = Game::replay(&log).unwrap();
    let events = play(&mut game, 1, last);
    assert!(matches!(&events[1], Event::RoundEnded { totals, .. } if **totals == vec![6, 6, 6]));
    assert_eq!(
        events.last(),
        Some(&Event::MatchEnded {
            winners: vec![0, 1, 2]
        })
    );
}

// [F-END-8]
#[test]
fn f_end_8_target_and_single_round_are_options() {
    let options = Options {
        single_round: true,
        ..Options::default()
    };
    let (mut game, last) = last_card("red 5", "red 9", options, false);
    let events = play(&mut game, 1, last);
    assert_eq!(events.last(), Some(&Event::MatchEnded { winners: vec![1] }));
    let bad = Setup {
        options: Options {
            target: 0,
            ..Options::default()
        },
        ..Setup::new(Ruleset::Flip, 2)
    };
    assert_eq!(
        Game::new(&bad, &mut rng()).unwrap_err().reason(),
        "TARGET_OUT_OF_RANGE"
    );
}

#[test]
fn f_end_9_a_new_round_starts_on_the_light_side_with_all_cards() {
    let (mut game, last) = last_card("pink 5", "pink 9", Options::default(), true);
    assert_eq!(game.side(), Side::Dark);
    let events = play(&mut game, 1, last);
    let Some(Event::RoundStarted {
        round: 2,
        dealer: 1,
        deck,
    }) = events
        .iter()
        .find(|e| matches!(e, Event::RoundStarted { .. }))
    else {
        panic!("a new round");
    };
    let mut sorted = deck.clone();
    sorted.sort();
    assert_eq!(sorted, Deck::of(Ruleset::Flip).ids().collect::<Vec<_>>());
    assert_conserved(&game);
    // The new round starts light side up; a Flip first discard is the only way to be dark now.
    let flips_after = events
        .iter()
        .skip_while(|e| !matches!(e, Event::RoundStarted { .. }))
        .filter(|e| **e == Event::Flipped)
        .count();
    assert_eq!(game.side() == Side::Dark, flips_after % 2 == 1);
}
