//! Properties of every game, checked over thousands of random games of both rulesets and 2..10
//! seats: legal actions are accepted and others refused without change, cards are conserved, the
//! fold of the events is the state, every round ends, events survive encoding, and no view or
//! projected event shows a viewer a card id or active face it may not see [V-1..7].

mod common;

use std::collections::HashSet;

use common::assert_conserved;
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use unoflip::rules::*;

/// Steps within one round before the test calls it stuck (random rounds of two seats can take a
/// few thousand; seed 4631651250674125966, seven classic seats drawing as often as playing,
/// took between 20,000 and 40,000 and then ended). Every invariant is still checked at every
/// step; this only tells a round that never ends from a long one.
const MAX_STEPS: usize = 100_000;

fn arbitrary_action(rng: &mut SmallRng, seats: usize) -> Action {
    let colors = [
        Color::Red,
        Color::Yellow,
        Color::Green,
        Color::Blue,
        Color::Pink,
        Color::Teal,
        Color::Orange,
        Color::Purple,
    ];
    let color = colors[rng.random_range(0..8)];
    match rng.random_range(0..9) {
        8 => {
            let n = rng.random_range(1..=MAX_TOGETHER);
            let ids: Vec<CardId> = (0..n).map(|_| CardId(rng.random_range(0..120))).collect();
            Action::PlayMany {
                cards: Cards::new(&ids).expect("at most MAX_TOGETHER"),
                uno: rng.random_bool(0.2),
            }
        }
        0 | 1 => Action::Play {
            card: CardId(rng.random_range(0..120)),
            color: if rng.random_bool(0.5) {
                Some(color)
            } else {
                None
            },
            uno: rng.random_bool(0.2),
        },
        2 => Action::Draw,
        3 => Action::Keep,
        4 => Action::ChooseColor { color },
        5 => Action::Accept,
        6 => Action::Challenge,
        _ => {
            if rng.random_bool(0.5) {
                Action::CallUno
            } else {
                Action::Catch {
                    seat: rng.random_range(0..seats + 2),
                }
            }
        }
    }
}

/// The card ids a projected event mentions.
fn seen_ids(event: &SeenEvent) -> Vec<CardId> {
    match event {
        SeenEvent::DealerChosen { draws, .. } => draws.iter().map(|d| d.1).collect(),
        SeenEvent::RoundStarted { hand, starter, .. } => {
            hand.iter().map(|c| c.id).chain([starter.id]).collect()
        }
        SeenEvent::StarterReturned { card, turned, .. } => vec![*card, turned.id],
        SeenEvent::CardPlayed { card, .. } => vec![card.id],
        SeenEvent::CardsDrawn { cards, .. } | SeenEvent::HandShown { cards, .. } => {
            cards.iter().map(|c| c.id).collect()
        }
        SeenEvent::PenaltyPending { card, .. } => vec![*card],
        SeenEvent::HandsSwapped { hand, .. } | SeenEvent::HandsPassed { hand, .. } => {
            hand.iter().map(|c| c.id).collect()
        }
        _ => Vec::new(),
    }
}

fn sorted_backs(game: &Game, cards: &[CardId]) -> Vec<Face> {
    // Computed from the table directly: the face opposite the active side; none in classic.
    let mut backs: Vec<Face> = cards
        .iter()
        .filter_map(|&c| {
            let card = game.deck().cards()[c.index()];
            match game.side() {
                Side::Light => card.dark,
                Side::Dark => Some(card.light),
            }
        })
        .collect();
    backs.sort();
    backs
}

/// [V-1..7]: the view holds exactly what the viewer may see.
fn check_view(game: &Game, viewer: Viewer) {
    let view = game.view(viewer);
    let own: &[CardId] = match viewer {
        Viewer::Seat(s) => game.hand(s),
        Viewer::Spectator => &[],
    };
    let hand_ids: Vec<CardId> = view.hand.iter().map(|c| c.id).collect();
    assert_eq!(hand_ids, own, "V-1: own hand");
    let discard_ids: Vec<CardId> = view.discard.iter().map(|c| c.id).collect();
    assert_eq!(discard_ids, game.discard_pile(), "V-4: discard pile");
    for p in &view.players {
        assert_eq!(p.cards, game.hand(p.seat).len(), "V-2: count");
        assert_eq!(
            p.backs,
            sorted_backs(game, game.hand(p.seat)),
            "V-2: inactive faces, sorted"
        );
    }
    assert_eq!(view.draw_count, game.draw_pile().len(), "V-3");
    assert_eq!(
        view.draw_top,
        game.draw_pile()
            .last()
            .and_then(|&c| game.deck().cards()[c.index()].back(game.side())),
        "V-3: the draw pile's top inactive face"
    );
    let allowed: HashSet<CardId> = own.iter().chain(game.discard_pile()).copied().collect();
    let mut mentioned: Vec<CardId> = view.drawn_card.into_iter().collect();
    if let Awaiting::Penalty { card, .. } = view.awaiting {
        mentioned.push(card);
    }
    for action in &view.legal_actions {
        if let Action::Play { card, .. } = action {
            mentioned.push(*card);
        }
    }
    for id in mentioned {
        assert!(allowed.contains(&id), "{viewer:?} may not see card {id}");
    }
    if viewer == Viewer::Spectator {
        assert!(view.legal_actions.is_empty() && view.hand.is_empty(), "V-6");
    }
}

/// [V-1..7]: a projected event mentions only ids the viewer may see once it happened.
fn check_projection(after: &Game, event: &Event, viewer: Viewer) {
    let seen = project(after, event, viewer);
    let own: &[CardId] = match viewer {
        Viewer::Seat(s) => after.hand(s),
        Viewer::Spectator => &[],
    };
    let mut allowed: HashSet<CardId> = own.iter().chain(after.discard_pile()).copied().collect();
    match event {
        // Public when they happened: the dealer draw, and the first discard sent back.
        Event::DealerChosen { draws, .. } => allowed.extend(draws.iter().map(|d| d.1)),
        Event::StarterReturned { card, .. } => {
            allowed.insert(*card);
        }
        // [V-5]: the challenger sees the shown hand.
        Event::HandShown { to, cards, .. } if viewer == Viewer::Seat(*to) => {
            allowed.extend(cards.iter().copied())
        }
        _ => {}
    }
    for id in seen_ids(&seen) {
        assert!(
            allowed.contains(&id),
            "{viewer:?} sees card {id} in {seen:?}"
        );
    }
    if let SeenEvent::CardsDrawn {
        backs,
        seat,
        cards,
        count,
        ..
    } = &seen
    {
        assert!(backs.is_sorted(), "V-2: backs tell nothing of order");
        if viewer != Viewer::Seat(*seat) {
            assert!(cards.is_empty());
        }
        let Event::CardsDrawn { cards: real, .. } = event else {
            unreachable!()
        };
        assert_eq!(*count, real.len());
    }
    if let (
        SeenEvent::HandShown {
            cards, to, seat, ..
        },
        Viewer::Seat(v),
    ) = (&seen, viewer)
        && v != *to
        && v != *seat
    {
        assert!(cards.is_empty(), "V-5: shown to the challenger alone");
    }
    // [H-SEVEN0]: after a swap, only the two seats of it see a hand, each its own new one.
    if let SeenEvent::HandsSwapped {
        seat, with, hand, ..
    } = &seen
    {
        match viewer {
            Viewer::Seat(v) if v == *seat || v == *with => {
                assert_eq!(hand.iter().map(|c| c.id).collect::<Vec<_>>(), own);
            }
            _ => assert!(hand.is_empty()),
        }
    }
    if let SeenEvent::Reshuffled { count, .. } = &seen {
        assert_eq!(*count, after.draw_pile().len());
    }
}

/// Plays one random match and checks every property at every step.
fn random_match(seed: u64, seats: usize, ruleset: Ruleset, scoring: Scoring, single_round: bool) {
    let mut rng = SmallRng::seed_from_u64(seed);
    // Any combination of the house rules the engine plays.
    let house = HouseRules {
        strict_wild_draw: rng.random_bool(0.3),
        draw_to_match: rng.random_bool(0.3),
        false_uno: rng.random_bool(0.3),
        jump_in: rng.random_bool(0.3),
        seven_zero: rng.random_bool(0.3),
        stacking: rng.random_bool(0.3),
        multi: rng.random_bool(0.3),
        play_to_last: rng.random_bool(0.3),
    };
    let setup = Setup {
        options: Options {
            scoring,
            target: 150,
            single_round,
            house,
        },
        ..Setup::new(ruleset, seats)
    };
    let (mut game, mut log) = Game::new(&setup, &mut rng).expect("valid setup");
    // Half the matches prefer playing to drawing. Under draw-to-match and false UNO every match
    // does: there a uniformly random player gains cards faster than it sheds them (each draw
    // brings several, each wrong call two) until every card is in a hand, and its rounds run on
    // for tens of thousands of moves without being stuck. Under play-to-the-last a round lasts
    // until all but one seat have gone out, so there too every match prefers playing.
    let eager =
        house.draw_to_match || house.false_uno || house.play_to_last || rng.random_bool(0.5);
    let mut steps = 0;
    let mut round = game.round();
    while !game.is_over() {
        if game.round() != round {
            round = game.round();
            steps = 0;
        }
        steps += 1;
        assert!(steps < MAX_STEPS, "round {round} did not end");
        assert_conserved(&game);
        // [H-LAST]: a seat that went out holds nothing and plays no more this round; it is
        // only asked for the color its last card, a Flip, calls for.
        for &out in game.out() {
            assert!(game.hand(out).is_empty(), "seat {out} went out");
            assert!(game.turn() != out || matches!(game.phase(), Phase::ChooseColor { .. }));
        }
        assert!(game.players_in() >= 2 || game.is_over());
        // Sometimes an out-of-turn seat acts (UNO calls and catches).
        let seat = if rng.random_bool(0.2) {
            rng.random_range(0..seats)
        } else {
            game.turn()
        };
        let legal = game.legal_actions(seat);
        // A sample of unlisted actions is refused and changes nothing.
        for _ in 0..3 {
            let action = arbitrary_action(&mut rng, seats);
            if !legal.contains(&action) {
                assert!(
                    decide(&game, seat, action, &mut rng).is_err(),
                    "{action:?} accepted"
                );
                let before = game.clone();
                assert!(game.act(seat, action, &mut rng).is_err());
                assert_eq!(game, before, "a refused action changed the game");
            }
        }
        // Under false UNO, calls and catches that are not due are always listed; a player makes
        // one now and then (one time in ten), not at every chance.
        let legal: Vec<Action> = if house.false_uno && rng.random_bool(0.9) {
            let exposed = game.uno_exposed();
            legal
                .into_iter()
                .filter(|a| match a {
                    Action::CallUno => exposed == Some(seat),
                    Action::Catch { seat: s } => exposed == Some(*s),
                    _ => true,
                })
                .collect()
        } else {
            legal
        };
        if legal.is_empty() {
            continue;
        }
        let plays: Vec<Action> = legal
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Play { .. } | Action::PlayMany { .. }))
            .collect();
        let action = if eager && !plays.is_empty() && rng.random_bool(0.8) {
            plays[rng.random_range(0..plays.len())]
        } else {
            legal[rng.random_range(0..legal.len())]
        };
        // `decide`, `act` and a playout's `act_listed_into` agree, and the fold of the events
        // is the new state.
        let before = game.clone();
        let mut r1 = rng.clone();
        let decided = decide(&game, seat, action, &mut r1).expect("a listed action is accepted");
        let (mut listed, mut r2, mut listed_events) = (game.clone(), rng.clone(), Vec::new());
        listed.act_listed_into(seat, action, &mut r2, &mut listed_events);
        let events = game
            .act(seat, action, &mut rng)
            .expect("a listed action is accepted");
        assert_eq!(decided, events);
        assert_eq!(listed_events, events, "act_listed_into");
        assert_eq!(listed, game, "act_listed_into");
        let mut folded = before;
        for event in &events {
            // [H-LAST]: every seat is in the finishing order, the winner first.
            if let Event::RoundEnded { winner, order, .. } = event {
                assert_eq!(order.first(), Some(winner));
                let mut sorted = (**order).clone();
                sorted.sort_unstable();
                if house.play_to_last {
                    assert_eq!(sorted, (0..seats).collect::<Vec<_>>());
                } else {
                    assert_eq!(**order, vec![*winner]);
                }
            }
            folded.apply(event);
            let viewer = if rng.random_bool(0.5) {
                Viewer::Spectator
            } else {
                Viewer::Seat(rng.random_range(0..seats))
            };
            check_projection(&folded, event, viewer);
            check_projection(&folded, event, Viewer::Seat(seat));
        }
        assert_eq!(folded, game, "fold of the events");
        // A snapshot restores the same state, and play goes on from it the same way.
        if rng.random_bool(0.05) {
            let restored = Game::restore(&game.snapshot()).expect("restores");
            assert_eq!(restored, game, "snapshot round trip");
        }
        check_view(&game, Viewer::Seat(rng.random_range(0..seats)));
        check_view(&game, Viewer::Spectator);
        log.extend(events);
    }
    assert!(!game.winners().is_empty());
    // The whole log replays to the same state, also after a trip through the stored encoding.
    assert_eq!(Game::replay(&log).expect("replays"), game);
    let decoded: Vec<Event> = log
        .iter()
        .map(|e| decode(&encode(e)).expect("decodes"))
        .collect();
    assert_eq!(decoded, log);
    // Each event's kind (a header of the NATS publisher) is its stored `type` tag.
    for event in &log {
        let json: serde_json::Value = serde_json::from_str(&encode(event)).expect("JSON");
        assert_eq!(json["type"], event.kind(), "{event:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn flip_games_keep_every_invariant(seed: u64, seats in 2usize..=10, alternative: bool, single: bool) {
        let scoring = if alternative { Scoring::Alternative } else { Scoring::Standard };
        random_match(seed, seats, Ruleset::Flip, scoring, single);
    }

    #[test]
    fn classic_games_keep_every_invariant(seed: u64, seats in 2usize..=10, alternative: bool, single: bool) {
        let scoring = if alternative { Scoring::Alternative } else { Scoring::Standard };
        random_match(seed, seats, Ruleset::Classic, scoring, single);
    }
}

#[test]
fn an_unknown_event_format_is_refused_by_name() {
    let text = encode(&Event::DirectionReversed);
    assert_eq!(decode(&text), Ok(Event::DirectionReversed));
    let future = text.replace("\"v\":1", "\"v\":99");
    assert_eq!(decode(&future), Err(DecodeError::UnknownVersion(99)));
    assert!(matches!(
        decode("{\"v\":1,\"type\":\"no_such_event\"}"),
        Err(DecodeError::Malformed(_))
    ));
    assert!(matches!(decode("not json"), Err(DecodeError::Malformed(_))));
}

#[test]
fn a_damaged_snapshot_is_refused_and_never_restored() {
    let mut rng = SmallRng::seed_from_u64(5);
    let (game, _) = Game::new(&Setup::new(Ruleset::Flip, 3), &mut rng).expect("valid setup");
    let text = game.snapshot();
    assert_eq!(Game::restore(&text), Ok(game.clone()));
    let future = text.replacen("\"v\":1", "\"v\":7", 1);
    assert_eq!(
        Game::restore(&future),
        Err(SnapshotError::UnknownVersion(7))
    );
    assert!(matches!(
        Game::restore("{\"v\":1}"),
        Err(SnapshotError::Malformed(_))
    ));
    assert!(matches!(
        Game::restore("garbage"),
        Err(SnapshotError::Malformed(_))
    ));
    // A card missing from the piles, or held twice.
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let card = value["draw"].as_array_mut().unwrap().pop().unwrap();
    let lost = value.to_string();
    assert!(matches!(
        Game::restore(&lost),
        Err(SnapshotError::Impossible(_))
    ));
    value["hands"][0].as_array_mut().unwrap().push(card.clone());
    value["hands"][1].as_array_mut().unwrap().push(card);
    assert!(matches!(
        Game::restore(&value.to_string()),
        Err(SnapshotError::Impossible(_))
    ));
    // A turn for a seat not at the table.
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["turn"] = serde_json::json!(9);
    assert!(matches!(
        Game::restore(&value.to_string()),
        Err(SnapshotError::Impossible(_))
    ));
}

#[test]
fn a_log_must_start_with_the_creation_event() {
    assert_eq!(
        Game::replay(&[Event::DirectionReversed]),
        Err(ReplayError::NoCreation)
    );
    let bad = Event::GameCreated {
        ruleset: Ruleset::Flip,
        seats: 1,
        options: Options::default(),
    };
    assert!(matches!(
        Game::replay(&[bad]),
        Err(ReplayError::InvalidCreation(_))
    ));
}

fn arbitrary_event(rng: &mut SmallRng) -> Event {
    let seat = |rng: &mut SmallRng| rng.random_range(0..14usize);
    let card = |rng: &mut SmallRng| CardId(rng.random_range(0..130u8));
    let cards = |rng: &mut SmallRng| {
        (0..rng.random_range(0..6))
            .map(|_| CardId(rng.random_range(0..130u8)))
            .collect::<Vec<_>>()
    };
    let color = Color::of_side(if rng.random_bool(0.5) {
        Side::Light
    } else {
        Side::Dark
    })[rng.random_range(0..4)];
    match rng.random_range(0..18) {
        16 => Event::WentOut { seat: seat(rng) },
        17 => Event::HandsPassed,
        0 => Event::DealerChosen {
            draws: vec![],
            dealer: seat(rng),
        },
        1 => {
            let mut deck: Vec<CardId> = (0..rng.random_range(0..130u8)).map(CardId).collect();
            deck.reverse();
            Event::RoundStarted {
                round: 2,
                dealer: seat(rng),
                deck,
            }
        }
        2 => Event::StarterReturned {
            card: card(rng),
            depth: rng.random_range(0..200),
            turned: card(rng),
        },
        3 => Event::TurnStarted { seat: seat(rng) },
        4 => Event::CardPlayed {
            seat: seat(rng),
            card: card(rng),
            color: Some(color),
            uno: rng.random_bool(0.5),
        },
        5 => Event::ColorRequested {
            seat: seat(rng),
            then: seat(rng),
        },
        6 => Event::Flipped,
        7 => Event::CardsDrawn {
            seat: seat(rng),
            cards: cards(rng).into(),
            cause: DrawCause::Turn,
        },
        8 => Event::Reshuffled { order: cards(rng) },
        9 => Event::PenaltyPending {
            seat: seat(rng),
            from: seat(rng),
            card: card(rng),
            previous_color: color,
            guilty: rng.random_bool(0.5),
        },
        10 => Event::HandShown {
            seat: seat(rng),
            to: seat(rng),
            cards: cards(rng),
        },
        11 => Event::UnoCaught {
            seat: seat(rng),
            by: seat(rng),
        },
        12 => Event::RoundEnded {
            round: 1,
            winner: seat(rng),
            hand_points: vec![].into(),
            points: vec![].into(),
            totals: vec![1; seat(rng)].into(),
            order: vec![seat(rng)].into(),
        },
        13 if rng.random_bool(0.05) => Event::MatchEnded {
            winners: vec![seat(rng)],
        },
        13 => Event::UnoCalled { seat: seat(rng) },
        14 => Event::DirectionReversed,
        _ => Event::ColorChosen {
            seat: seat(rng),
            color,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A damaged log never makes `apply`, `legal_actions`, `act`, `view` or `project` panic.
    #[test]
    fn damaged_logs_never_panic(seed: u64, seats in 2usize..=10, classic: bool) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let ruleset = if classic { Ruleset::Classic } else { Ruleset::Flip };
        let (mut game, _) = Game::new(&Setup::new(ruleset, seats), &mut rng).expect("valid setup");
        for _ in 0..200 {
            let event = if rng.random_bool(0.3) { arbitrary_event(&mut rng) } else { Event::TurnStarted { seat: game.turn() } };
            game.apply(&event);
            let _ = project(&game, &event, Viewer::Seat(0));
            let _ = game.view(Viewer::Spectator);
            for seat in 0..seats + 1 {
                let legal = game.legal_actions(seat);
                let _ = game.act(seat, arbitrary_action(&mut rng, seats), &mut rng);
                if let Some(&action) = legal.first() {
                    let _ = game.act(seat, action, &mut rng);
                }
            }
        }
    }
}
