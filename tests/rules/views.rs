//! What each viewer sees: [V-1..7] and [F-FLIP-5].

use crate::common::*;
use unoflip::rules::*;

fn table() -> (Game, Vec<Event>, [CardId; 4]) {
    let mut t = Table::flip(3);
    let [top, a, b, wd] = t.cards([
        "red 5|pink 2",
        "red 1|pink 3",
        "blue 4|teal draw-five",
        "wild-draw-two",
    ]);
    let [o1, o2] = t.cards(["yellow 2|teal 1", "green 2|teal skip-everyone"]);
    t.hand(1, &[a, b, wd]).hand(2, &[o1, o2]).top(top);
    let (game, log) = t.position(1, None);
    (game, log, [a, b, wd, top])
}

#[test]
fn v_1_own_hand_every_card_with_both_faces_and_id() {
    let (game, _, [a, b, wd, _]) = table();
    let view = game.view(Viewer::Seat(1));
    assert_eq!(
        view.hand,
        vec![
            CardView {
                id: a,
                light: face("red 1"),
                dark: Some(face("pink 3"))
            },
            CardView {
                id: b,
                light: face("blue 4"),
                dark: Some(face("teal draw-five"))
            },
            CardView {
                id: wd,
                light: face("wild-draw-two"),
                dark: game.deck().cards()[wd.index()].dark
            },
        ]
    );
    assert!(view.legal_actions.contains(&plain(a)));
}

#[test]
fn v_2_opponents_show_counts_and_sorted_inactive_faces_only() {
    let (game, _, _) = table();
    let view = game.view(Viewer::Seat(1));
    let p2 = &view.players[2];
    assert_eq!(p2.cards, 2);
    assert_eq!(p2.backs, vec![face("teal 1"), face("teal skip-everyone")]);
    let json = serde_json::to_string(&view.players).unwrap();
    assert!(
        !json.contains("yellow") && !json.contains("green"),
        "no active face of another hand: {json}"
    );
    // Classic backs show nothing.
    let mut t = Table::classic(2);
    let top = t.card("red 5");
    let r2 = t.card("red 2");
    t.hand(1, &[r2]).top(top);
    let (game, _) = t.position(0, None);
    assert_eq!(
        game.view(Viewer::Seat(0)).players[1].backs,
        Vec::<Face>::new()
    );
    assert_eq!(game.view(Viewer::Seat(0)).players[1].cards, 1);
}

#[test]
fn v_3_draw_pile_count_and_top_inactive_face() {
    let (game, _, _) = table();
    let view = game.view(Viewer::Spectator);
    assert_eq!(view.draw_count, game.draw_pile().len());
    let top = *game.draw_pile().last().unwrap();
    assert_eq!(view.draw_top, game.deck().cards()[top.index()].dark);
}

#[test]
fn v_4_the_discard_pile_color_side_direction_and_turn_are_public() {
    let (game, _, [.., top]) = table();
    let view = game.view(Viewer::Seat(0));
    assert_eq!(view.discard.last().map(|c| c.id), Some(top));
    assert_eq!(view.discard.len(), game.discard_pile().len());
    assert_eq!(
        (view.color, view.side, view.direction, view.turn),
        (Some(Color::Red), Side::Light, Direction::Clockwise, 1)
    );
    assert!(view.hand.iter().all(|c| game.hand(0).contains(&c.id)));
}

#[test]
fn v_5_a_challenged_hand_is_shown_to_the_challenger_alone() {
    let (mut game, _, [a, b, wd, _]) = table();
    play_wild(&mut game, 1, wd, Color::Blue);
    let events = act(&mut game, 2, Action::Challenge);
    let shown = &events[1];
    assert!(matches!(shown, Event::HandShown { seat: 1, to: 2, .. }));
    let SeenEvent::HandShown { cards, .. } = project(&game, shown, Viewer::Seat(2)) else {
        panic!()
    };
    // Guilty: seat 1 held red 1; it drew two more after showing.
    assert_eq!(cards.iter().map(|c| c.id).collect::<Vec<_>>(), vec![a, b]);
    for viewer in [Viewer::Seat(0), Viewer::Spectator] {
        let SeenEvent::HandShown { cards, .. } = project(&game, shown, viewer) else {
            panic!()
        };
        assert!(cards.is_empty(), "{viewer:?}");
    }
}

#[test]
fn v_6_a_spectator_sees_what_every_player_sees() {
    let (game, _, _) = table();
    let spectator = game.view(Viewer::Spectator);
    let seat0 = game.view(Viewer::Seat(0));
    assert!(spectator.hand.is_empty() && spectator.legal_actions.is_empty());
    assert_eq!(spectator.players, seat0.players);
    assert_eq!(spectator.discard, seat0.discard);
    assert_eq!(
        (spectator.draw_count, spectator.draw_top),
        (seat0.draw_count, seat0.draw_top)
    );
}

// [V-7]
#[test]
fn v_7_the_draw_pile_order_and_shuffles_are_never_sent() {
    let (_, log) = Game::new(&Setup::new(Ruleset::Flip, 4), &mut rng()).unwrap();
    let mut state = Game::replay(&log[..1]).unwrap();
    for event in &log[1..] {
        state.apply(event);
        for viewer in [Viewer::Seat(0), Viewer::Spectator] {
            let json = serde_json::to_string(&project(&state, event, viewer)).unwrap();
            assert!(
                !json.contains("\"deck\"")
                    && !json.contains("\"order\"")
                    && !json.contains("\"depth\""),
                "{json}"
            );
        }
    }
    // Two deals that differ only below the draw pile's top card look the same to every seat.
    let mut t = Table::flip(3);
    let top = t.card("red 5");
    t.top(top);
    let mut setup = t.setup();
    let (a, _) = Game::new(&setup, &mut rng()).unwrap();
    let order = setup.deck.as_mut().unwrap();
    let n = order.len();
    order.swap(n - 1, n - 2);
    let (b, _) = Game::new(&setup, &mut rng()).unwrap();
    assert_ne!(a, b);
    for viewer in [
        Viewer::Seat(0),
        Viewer::Seat(1),
        Viewer::Seat(2),
        Viewer::Spectator,
    ] {
        assert_eq!(a.view(viewer), b.view(viewer));
    }
    // Whether a wild draw was a bluff stays hidden until a challenge.
    let (mut game, _, [.., wd, _]) = table();
    let events = play_wild(&mut game, 1, wd, Color::Blue);
    let json = serde_json::to_string(&project(&game, &events[1], Viewer::Seat(2))).unwrap();
    assert!(!json.contains("guilty"), "{json}");
}

#[test]
fn f_flip_5_after_a_flip_opponents_see_the_faces_the_owner_saw() {
    let mut t = Table::flip(3);
    let [top, f, x] = t.cards(["red 5", "red flip", "blue 6"]);
    let [o1, o2] = t.cards(["yellow 2|teal 1", "green 2|teal skip-everyone"]);
    t.hand(1, &[f, x]).hand(2, &[o1, o2]).top(top);
    let (mut game, _) = t.position(1, None);
    let events = play(&mut game, 1, f);
    assert_eq!(
        game.view(Viewer::Seat(0)).players[2].backs,
        vec![face("yellow 2"), face("green 2")]
    );
    let SeenEvent::Flipped { players, .. } = project(&game, &events[1], Viewer::Seat(0)) else {
        panic!()
    };
    assert_eq!(
        players[2].backs,
        game.view(Viewer::Seat(0)).players[2].backs
    );
}
