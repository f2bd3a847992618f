//! Refusals: each comes with its status code and ErrorInfo reason, and changes nothing.

use tonic::{Code, Request};
use unoflip::proto as pb;
use unoflip::proto::action::Kind;

use super::common::Table;
use super::harness::*;

fn play(card: unoflip::rules::CardId, color: pb::Color) -> pb::Action {
    pb::Action {
        kind: Some(Kind::PlayCard(pb::PlayCard {
            card: u32::from(card.0),
            color: color as i32,
            uno: false,
            more_cards: Vec::new(),
        })),
    }
}

/// [H-MULTI]: `cards` played together, in order.
fn play_many(cards: &[unoflip::rules::CardId]) -> pb::Action {
    pb::Action {
        kind: Some(Kind::PlayCard(pb::PlayCard {
            card: u32::from(cards[0].0),
            color: pb::Color::Unspecified as i32,
            uno: false,
            more_cards: cards[1..].iter().map(|c| u32::from(c.0)).collect(),
        })),
    }
}

/// A game dealt from the table's fixed deck (admin), dealer 0, every seat joined, started.
/// Returns its name and the seat tokens.
async fn dealt(
    client: &mut Client,
    t: &mut Table,
    house: Option<pb::HouseRules>,
) -> (String, Vec<String>) {
    let setup = t.setup();
    let seats = u32::try_from(t.seats).unwrap();
    let options = pb::GameOptions {
        first_dealer: Some(0),
        deck_order: setup.deck.unwrap().iter().map(|c| u32::from(c.0)).collect(),
        house_rules: house,
        ..options(pb::Ruleset::Flip, seats)
    };
    let created = client
        .create_game(authed(
            pb::CreateGameRequest {
                options: Some(options),
            },
            ADMIN,
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert!(
        created.options.unwrap().deck_order.is_empty(),
        "the deck order is never shown back"
    );
    let mut tokens = Vec::new();
    for seat in 0..seats {
        let joined = client
            .join_game(pb::JoinGameRequest {
                game: created.name.clone(),
                seat: Some(seat),
                player_name: String::new(),
                player: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        tokens.push(joined.seat_token);
    }
    client
        .start_game(authed(
            pb::StartGameRequest {
                game: created.name.clone(),
            },
            &tokens[0],
        ))
        .await
        .unwrap();
    (created.name, tokens)
}

/// A four-seat game: seat 1 starts on red 5 holding red 7, blue 2 and a wild; seat 2 holds
/// green 9.
async fn arranged(client: &mut Client) -> (String, Vec<String>, [unoflip::rules::CardId; 4]) {
    let mut t = Table::flip(4);
    let [top, r7, b2, w, g9] = t.cards(["red 5", "red 7", "blue 2", "wild", "green 9"]);
    t.hand(1, &[r7, b2, w]).hand(2, &[g9]).top(top);
    let (game, tokens) = dealt(client, &mut t, None).await;
    (game, tokens, [r7, b2, w, g9])
}

#[tokio::test]
async fn refused_moves_carry_their_reason_and_change_nothing() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens, [r7, b2, w, g9]) = arranged(&mut client).await;
    let version = game_version(&mut client, &game).await;
    let cases = [
        (
            2,
            play(g9, pb::Color::Unspecified),
            Code::FailedPrecondition,
            "NOT_YOUR_TURN",
        ),
        (
            1,
            play(g9, pb::Color::Unspecified),
            Code::FailedPrecondition,
            "CARD_NOT_IN_HAND",
        ),
        (
            1,
            play(b2, pb::Color::Unspecified),
            Code::FailedPrecondition,
            "CARD_DOES_NOT_MATCH",
        ),
        (
            1,
            play(w, pb::Color::Unspecified),
            Code::FailedPrecondition,
            "COLOR_REQUIRED",
        ),
        (
            1,
            play(r7, pb::Color::Blue),
            Code::FailedPrecondition,
            "COLOR_NOT_ALLOWED",
        ),
        (
            1,
            pb::Action {
                kind: Some(Kind::Challenge(pb::Challenge {})),
            },
            Code::FailedPrecondition,
            "NO_CHALLENGE_PENDING",
        ),
        (
            1,
            pb::Action { kind: None },
            Code::InvalidArgument,
            "ACTION_MISSING",
        ),
        (
            1,
            pb::Action {
                kind: Some(Kind::PlayCard(pb::PlayCard {
                    card: 999,
                    ..Default::default()
                })),
            },
            Code::InvalidArgument,
            "UNKNOWN_CARD",
        ),
        (
            1,
            pb::Action {
                kind: Some(Kind::PlayCard(pb::PlayCard {
                    card: 200,
                    ..Default::default()
                })),
            },
            Code::InvalidArgument,
            "UNKNOWN_CARD",
        ),
        (
            1,
            pb::Action {
                kind: Some(Kind::PlayCard(pb::PlayCard {
                    card: u32::from(r7.0),
                    color: 77,
                    ..Default::default()
                })),
            },
            Code::InvalidArgument,
            "UNKNOWN_COLOR",
        ),
        (
            1,
            pb::Action {
                kind: Some(Kind::PlayCard(pb::PlayCard {
                    card: u32::from(r7.0),
                    more_cards: vec![1, 2, 3, 4],
                    ..Default::default()
                })),
            },
            Code::InvalidArgument,
            "TOO_MANY_CARDS",
        ),
        (
            1,
            pb::Action {
                kind: Some(Kind::PlayCard(pb::PlayCard {
                    card: u32::from(r7.0),
                    more_cards: vec![300],
                    ..Default::default()
                })),
            },
            Code::InvalidArgument,
            "UNKNOWN_CARD",
        ),
        (
            1,
            pb::Action {
                kind: Some(Kind::PlayCard(pb::PlayCard {
                    card: u32::from(r7.0),
                    more_cards: vec![1],
                    ..Default::default()
                })),
            },
            Code::FailedPrecondition,
            "MULTI_PLAY_OFF",
        ),
    ];
    for (seat, action, code, expected) in cases {
        let status = submit(&mut client, &game, &tokens[seat], action)
            .await
            .unwrap_err();
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (code, expected),
            "{status:?}"
        );
        assert_eq!(
            game_version(&mut client, &game).await,
            version,
            "{expected} changed the game"
        );
    }
    submit(
        &mut client,
        &game,
        &tokens[1],
        play(r7, pb::Color::Unspecified),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn tokens_authenticate_one_seat_of_one_game() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, _tokens, [r7, ..]) = arranged(&mut client).await;
    let (_other, other_tokens) = started(&mut client, options(pb::Ruleset::Flip, 2)).await;
    let version = game_version(&mut client, &game).await;
    let action = play(r7, pb::Color::Unspecified);
    let status = submit(&mut client, &game, "not-a-token", action.clone())
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Unauthenticated, "SEAT_TOKEN_INVALID")
    );
    let status = submit(&mut client, &game, &other_tokens[0], action.clone())
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::PermissionDenied, "SEAT_TOKEN_OTHER_GAME")
    );
    let status = client
        .submit_action(Request::new(pb::SubmitActionRequest {
            game: game.clone(),
            action: Some(action),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert_eq!(game_version(&mut client, &game).await, version);
}

#[tokio::test]
async fn malformed_and_unknown_games_and_admin_only_options_are_refused() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let status = client
        .get_game(pb::GetGameRequest {
            name: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::InvalidArgument, "INVALID_GAME_NAME")
    );
    let status = client
        .get_game(pb::GetGameRequest {
            name: "games/nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::NotFound, "GAME_NOT_FOUND")
    );
    let fixed = pb::GameOptions {
        deck_order: (0..112).collect(),
        ..options(pb::Ruleset::Flip, 2)
    };
    let status = client
        .create_game(pb::CreateGameRequest {
            options: Some(fixed),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::PermissionDenied, "ADMIN_TOKEN_REQUIRED")
    );
    let status = client
        .create_game(pb::CreateGameRequest {
            options: Some(options(pb::Ruleset::Flip, 11)),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::InvalidArgument, "SEAT_COUNT_OUT_OF_RANGE")
    );
    let short = pb::GameOptions {
        deck_order: vec![1, 2, 3],
        ..options(pb::Ruleset::Flip, 2)
    };
    let status = client
        .create_game(authed(
            pb::CreateGameRequest {
                options: Some(short),
            },
            ADMIN,
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&status), "DECK_INCOMPLETE");
    let listed = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(listed.games.is_empty(), "no refused game was created");
}

#[tokio::test]
async fn a_retried_request_id_returns_the_first_answer_and_adds_nothing() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens, [r7, ..]) = arranged(&mut client).await;
    let request = || {
        authed(
            pb::SubmitActionRequest {
                game: game.clone(),
                action: Some(play(r7, pb::Color::Unspecified)),
                request_id: "move-1".into(),
                expected_version: None,
            },
            &tokens[1],
        )
    };
    let first = client.submit_action(request()).await.unwrap().into_inner();
    let version = game_version(&mut client, &game).await;
    let again = client.submit_action(request()).await.unwrap().into_inner();
    assert_eq!(first, again);
    assert_eq!(game_version(&mut client, &game).await, version);
}

#[tokio::test]
async fn an_expected_version_that_is_not_current_is_refused() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens, [r7, ..]) = arranged(&mut client).await;
    let version = game_version(&mut client, &game).await;
    let stale = authed(
        pb::SubmitActionRequest {
            game: game.clone(),
            action: Some(play(r7, pb::Color::Unspecified)),
            request_id: String::new(),
            expected_version: Some(version - 1),
        },
        &tokens[1],
    );
    let status = client.submit_action(stale).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "VERSION_MISMATCH")
    );
    let current = authed(
        pb::SubmitActionRequest {
            game: game.clone(),
            action: Some(play(r7, pb::Color::Unspecified)),
            request_id: String::new(),
            expected_version: Some(version),
        },
        &tokens[1],
    );
    let answer = client.submit_action(current).await.unwrap().into_inner();
    assert!(answer.version > version);
    assert!(matches!(
        answer.events[0].kind,
        Some(pb::event::Kind::CardPlayed(_))
    ));
}

/// [H-JUMP] over the API: two seats race to jump in on the same table; exactly one is accepted,
/// the other is refused with its reason and keeps its card.
#[tokio::test]
async fn two_seats_racing_to_jump_in_get_exactly_one_acceptance() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let mut t = Table::flip(3);
    let [top, w0, w2] = t.cards(["wild", "wild", "wild"]);
    t.hand(0, &[w0]).hand(2, &[w2]).top(top);
    let house = pb::HouseRules {
        jump_in: true,
        ..Default::default()
    };
    let (game, tokens) = dealt(&mut client, &mut t, Some(house)).await;
    // The first discard is a wild: seat 1 declares red, then may play.
    let choose = pb::Action {
        kind: Some(Kind::ChooseColor(pb::ChooseColor {
            color: pb::Color::Red as i32,
        })),
    };
    submit(&mut client, &game, &tokens[1], choose)
        .await
        .unwrap();
    let version = game_version(&mut client, &game).await;
    // Seats 0 and 2 hold a plain wild each: both may jump in, out of turn.
    for (seat, card) in [(0, w0), (2, w2)] {
        let v = view(&mut client, &game, Some(&tokens[seat])).await;
        assert_eq!(v.turn, 1);
        assert!(v.legal_actions.contains(&play(card, pb::Color::Blue)));
    }
    let jump = |seat: usize, card| {
        let mut client = client.clone();
        let token = tokens[seat].clone();
        let game = game.clone();
        async move {
            client
                .submit_action(authed(
                    pb::SubmitActionRequest {
                        game,
                        action: Some(play(card, pb::Color::Blue)),
                        request_id: format!("jump-{seat}"),
                        expected_version: Some(version),
                    },
                    &token,
                ))
                .await
        }
    };
    let (a, b) = tokio::join!(jump(0, w0), jump(2, w2));
    assert!(a.is_ok() != b.is_ok(), "exactly one jump-in is accepted");
    let (winner, loser, loser_card, refusal) = match (a, b) {
        (Ok(_), Err(e)) => (0, 2, w2, e),
        (Err(e), Ok(_)) => (2, 0, w0, e),
        _ => unreachable!(),
    };
    assert_eq!(refusal.code(), Code::FailedPrecondition);
    assert_eq!(reason(&refusal), "VERSION_MISMATCH");
    let spectator = view(&mut client, &game, None).await;
    assert_eq!(
        spectator.discard.last().map(|c| c.id),
        Some(u32::from(if winner == 0 { w0.0 } else { w2.0 }))
    );
    assert_eq!(spectator.players[winner].card_count, 6);
    assert_eq!(spectator.players[loser].card_count, 7);
    assert_eq!(
        spectator.turn,
        (winner as u32 + 1) % 3,
        "play goes on from the jumper"
    );
    let kept = view(&mut client, &game, Some(&tokens[loser])).await;
    assert!(
        kept.hand.iter().any(|c| c.id == u32::from(loser_card.0)),
        "the refused seat keeps its card"
    );
}

/// [H-MULTI] over the API: the pair is listed in both orders, played in one action (the second
/// card ends on top, each Skip skips one seat), and cards that are not identical are refused with
/// nothing changed.
#[tokio::test]
async fn identical_cards_are_played_together_over_the_api() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let mut t = Table::flip(4);
    let [top, s1, s2, b5, r5] = t.cards(["red 5", "red skip", "red skip", "blue 5", "red 5"]);
    t.hand(1, &[s1, s2, b5, r5]).top(top);
    let house = pb::HouseRules {
        multi: true,
        ..Default::default()
    };
    let (game, tokens) = dealt(&mut client, &mut t, Some(house)).await;
    let v = view(&mut client, &game, Some(&tokens[1])).await;
    assert_eq!(v.turn, 1);
    assert!(v.legal_actions.contains(&play_many(&[s1, s2])));
    assert!(v.legal_actions.contains(&play_many(&[s2, s1])));
    assert!(!v.legal_actions.contains(&play_many(&[b5, r5])));
    let refused = submit(&mut client, &game, &tokens[1], play_many(&[r5, b5]))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "CARDS_NOT_IDENTICAL");
    let refused = submit(&mut client, &game, &tokens[1], play_many(&[s1, s1]))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "CARD_NOT_IN_HAND");
    assert_eq!(game_version(&mut client, &game).await, v.version);
    let answer = submit(&mut client, &game, &tokens[1], play_many(&[s2, s1]))
        .await
        .unwrap();
    let played: Vec<u32> = answer
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(pb::event::Kind::CardPlayed(p)) => p.card.as_ref().map(|c| c.id),
            _ => None,
        })
        .collect();
    assert_eq!(played, vec![u32::from(s2.0), u32::from(s1.0)]);
    let after = view(&mut client, &game, Some(&tokens[1])).await;
    assert_eq!(after.hand.len(), 5);
    assert_eq!(after.discard.last().map(|c| c.id), Some(u32::from(s1.0)));
    // Seats 2 and 3 are skipped.
    assert_eq!(after.turn, 0);
}
