//! Whole games through the API: every seat chooses among the legal actions the server lists, and
//! every seat's stream, folded, agrees with its view at every step. A spectator and every seat
//! never receive another seat's active faces or card ids.

use std::collections::HashSet;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use tonic::Streaming;
use unoflip::proto as pb;
use unoflip::proto::subscribe_response::Kind;

use super::fold::Table;
use super::harness::*;

pub async fn open_stream(
    client: &mut Client,
    game: &str,
    token: Option<&str>,
    after: u64,
) -> Streaming<pb::SubscribeResponse> {
    let message = pb::SubscribeRequest {
        game: game.into(),
        after_version: after,
        include_view: after == 0,
    };
    let request = match token {
        Some(t) => authed(message, t),
        None => tonic::Request::new(message),
    };
    client.subscribe(request).await.unwrap().into_inner()
}

/// Reads `stream` until the folded table reaches `version`; returns every event seen.
pub async fn drain(
    stream: &mut Streaming<pb::SubscribeResponse>,
    table: &mut Option<Table>,
    me: Option<u32>,
    version: u64,
) -> Vec<pb::Event> {
    let mut seen = Vec::new();
    while table.as_ref().is_none_or(|t| t.version < version) {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("the stream delivers in time")
            .expect("the stream is healthy")
            .expect("the stream is open");
        match message.kind.unwrap() {
            Kind::View(v) => *table = Some(Table::from_view(&v)),
            Kind::Event(e) => {
                table.as_mut().expect("a view comes first").apply(&e, me);
                seen.push(e);
            }
            Kind::Heartbeat(_) | Kind::CaughtUp(_) | Kind::Prompt(_) => {}
            Kind::Lobby(_) => panic!("a started game's stream sends no lobby"),
        }
    }
    seen
}

/// Card ids a projected event shows.
fn ids(e: &pb::Event) -> Vec<u32> {
    use pb::event::Kind as K;
    match e.kind.as_ref().unwrap() {
        K::RoundStarted(r) => r
            .hand
            .iter()
            .map(|c| c.id)
            .chain(r.starter.map(|c| c.id))
            .collect(),
        K::CardsDrawn(d) => d.cards.iter().map(|c| c.id).collect(),
        K::HandShown(h) => h.cards.iter().map(|c| c.id).collect(),
        K::CardPlayed(p) => vec![p.card.unwrap().id],
        K::StarterReturned(s) => vec![s.card, s.turned.unwrap().id],
        K::PenaltyPending(p) => vec![p.card],
        K::DealerChosen(d) => d.draws.iter().map(|d| d.card).collect(),
        _ => vec![],
    }
}

async fn play_whole_game(ruleset: pb::Ruleset, seed: u64) {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens) = started(&mut client, options(ruleset, 4)).await;
    let mut streams = Vec::new();
    let mut tables = vec![None; 4];
    for token in &tokens {
        streams.push(open_stream(&mut client, &game, Some(token), 0).await);
    }
    let mut spectator = open_stream(&mut client, &game, None, 0).await;
    let mut spectator_table = None;
    // Ids each seat has legitimately seen: its own cards, and every card made public.
    let mut known: Vec<HashSet<u32>> = vec![HashSet::new(); 4];
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut actions = 0;
    loop {
        let version = game_version(&mut client, &game).await;
        for seat in 0..4 {
            let events = drain(
                &mut streams[seat],
                &mut tables[seat],
                Some(seat as u32),
                version,
            )
            .await;
            let view = view(&mut client, &game, Some(&tokens[seat])).await;
            assert_eq!(view.version, version);
            assert_eq!(
                tables[seat].as_ref().unwrap(),
                &Table::from_view(&view),
                "seat {seat}'s fold at {version}"
            );
            for id in view
                .hand
                .iter()
                .map(|c| c.id)
                .chain(view.discard.iter().map(|c| c.id))
            {
                known[seat].insert(id);
            }
            for e in &events {
                for id in ids(e) {
                    // An id a seat receives is its own, public, or shown to it in a challenge.
                    let public = matches!(
                        e.kind,
                        Some(
                            pb::event::Kind::CardPlayed(_)
                                | pb::event::Kind::StarterReturned(_)
                                | pb::event::Kind::PenaltyPending(_)
                                | pb::event::Kind::DealerChosen(_)
                        )
                    ) || matches!(&e.kind, Some(pb::event::Kind::RoundStarted(r)) if r.starter.map(|c| c.id) == Some(id));
                    let shown = matches!(&e.kind, Some(pb::event::Kind::HandShown(h)) if h.to == seat as u32 || h.seat == seat as u32);
                    let own = matches!(&e.kind, Some(pb::event::Kind::CardsDrawn(d)) if d.seat == seat as u32)
                        || matches!(&e.kind, Some(pb::event::Kind::RoundStarted(_)));
                    assert!(
                        public || shown || own,
                        "seat {seat} received card {id} in {e:?}"
                    );
                }
            }
        }
        let spectator_events = drain(&mut spectator, &mut spectator_table, None, version).await;
        for e in &spectator_events {
            if let Some(pb::event::Kind::CardsDrawn(d)) = &e.kind {
                assert!(d.cards.is_empty());
            }
            if let Some(pb::event::Kind::HandShown(h)) = &e.kind {
                assert!(h.cards.is_empty());
            }
            if let Some(pb::event::Kind::RoundStarted(r)) = &e.kind {
                assert!(r.hand.is_empty());
            }
        }
        let spectator_view = view(&mut client, &game, None).await;
        assert!(spectator_view.hand.is_empty() && spectator_view.legal_actions.is_empty());
        assert_eq!(
            spectator_table.as_ref().unwrap(),
            &Table::from_view(&spectator_view)
        );
        if spectator_view.awaiting == pb::Awaiting::MatchOver as i32 {
            assert!(!spectator_view.winners.is_empty());
            break;
        }
        // The turn seat acts; now and then another seat with something to do (a catch).
        let turn = spectator_view.turn as usize;
        let seat = if rng.random_bool(0.1) {
            rng.random_range(0..4)
        } else {
            turn
        };
        let legal = view(&mut client, &game, Some(&tokens[seat]))
            .await
            .legal_actions;
        if legal.is_empty() {
            continue;
        }
        let plays: Vec<&pb::Action> = legal
            .iter()
            .filter(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
            .collect();
        let action = if !plays.is_empty() && rng.random_bool(0.8) {
            plays[rng.random_range(0..plays.len())].clone()
        } else {
            legal[rng.random_range(0..legal.len())].clone()
        };
        let answer = submit(&mut client, &game, &tokens[seat], action)
            .await
            .expect("a listed action is accepted");
        assert!(answer.version > version);
        actions += 1;
        assert!(actions < 5000, "the game ends");
    }
    assert!(actions >= 10, "a whole game takes moves");
    let finished = get_game(&mut client, &game).await;
    assert_eq!(finished.status, pb::GameStatus::Finished as i32);
    // A finished game's whole log can be exported by anyone.
    let export = client
        .export_game(pb::ExportGameRequest { game })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(export.events.len() as u64, finished.version);
}

#[tokio::test]
async fn four_seats_play_whole_uno_flip_games() {
    for seed in 0..10 {
        play_whole_game(pb::Ruleset::Flip, seed).await;
    }
}

#[tokio::test]
async fn four_seats_play_whole_classic_games() {
    for seed in 0..10 {
        play_whole_game(pb::Ruleset::Classic, seed).await;
    }
}

#[tokio::test]
async fn three_server_seats_and_one_remote_seat_play_to_the_end() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let options = pb::GameOptions {
        bot_seats: vec![1, 2, 3],
        ..options(pb::Ruleset::Flip, 4)
    };
    let (game, tokens) = started(&mut client, options).await;
    play_alone_to_the_end(&mut client, &game, &tokens[0], 0).await;
}

/// The house rules played so far are game options over the API: the game shows them, plays to
/// the end with all of them on (jump-ins and swaps included), never offers a challenge
/// [H-STRICT], and charges a false UNO call two cards [H-FALSEUNO]; a rule not played yet is
/// refused by name.
#[tokio::test]
async fn house_rules_over_the_api() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    for ruleset in [pb::Ruleset::Flip, pb::Ruleset::Classic] {
        let house = pb::HouseRules {
            strict_wild_draw: true,
            draw_to_match: true,
            false_uno: true,
            jump_in: true,
            seven_zero: true,
            stacking: true,
            multi: true,
            play_to_last: true,
        };
        let options = pb::GameOptions {
            house_rules: Some(house),
            bot_seats: vec![1, 2],
            ..options(ruleset, 3)
        };
        let (game, tokens) = started(&mut client, options).await;
        let shown = get_game(&mut client, &game).await;
        assert_eq!(
            shown.options.unwrap().house_rules,
            Some(house),
            "the game shows its house rules"
        );
        // A false UNO call, out of turn or not: two cards, nothing else.
        let before = view(&mut client, &game, Some(&tokens[0])).await;
        let call = pb::Action {
            kind: Some(pb::action::Kind::CallUno(pb::CallUno {})),
        };
        assert!(before.legal_actions.contains(&call));
        let answer = submit(&mut client, &game, &tokens[0], call).await.unwrap();
        assert_eq!(answer.version, before.version + 1);
        match &answer.events[..] {
            [
                pb::Event {
                    kind: Some(pb::event::Kind::CardsDrawn(d)),
                    ..
                },
            ] => {
                assert_eq!(d.cause, pb::DrawCause::FalseUno as i32);
                assert_eq!((d.seat, d.cards.len()), (0, 2));
            }
            other => panic!("{other:?}"),
        }
        let after = view(&mut client, &game, Some(&tokens[0])).await;
        assert_eq!(after.hand.len(), before.hand.len() + 2);
        assert_eq!(after.turn, before.turn);
        for _ in 0..5000 {
            let v = view(&mut client, &game, Some(&tokens[0])).await;
            if v.awaiting == pb::Awaiting::MatchOver as i32 {
                break;
            }
            assert!(
                !v.legal_actions
                    .iter()
                    .any(|a| matches!(a.kind, Some(pb::action::Kind::Challenge(_)))),
                "no challenge under strict wild draws"
            );
            let action = v
                .legal_actions
                .iter()
                .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
                .or_else(|| {
                    v.legal_actions.iter().find(|a| {
                        !matches!(
                            a.kind,
                            Some(pb::action::Kind::CallUno(_) | pb::action::Kind::CatchUno(_))
                        )
                    })
                })
                .cloned();
            let Some(action) = action else {
                continue; // Not our turn yet: only calls and catches are listed.
            };
            submit(&mut client, &game, &tokens[0], action)
                .await
                .unwrap();
        }
        let v = view(&mut client, &game, None).await;
        assert_eq!(v.awaiting, pb::Awaiting::MatchOver as i32);
        // [H-LAST]: the round went on until one seat was left; all three are in the order.
        let result = v.last_round.unwrap();
        let mut order = result.order.clone();
        assert_eq!(order.first(), Some(&result.winner));
        order.sort_unstable();
        assert_eq!(order, vec![0, 1, 2]);
    }
}
