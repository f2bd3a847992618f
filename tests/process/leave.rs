//! Leaving: on one's own turn the server's bot moves after the bot delay; the old token is
//! refused from then on; leaving a finished game is refused; bot seats are checked.

use std::time::Duration;

use tonic::Code;
use unoflip::proto as pb;

use super::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_on_ones_own_turn_lets_the_servers_bot_move_and_the_old_token_is_refused() {
    let server = Server::start("memory", &["--bot-delay-ms", "300"]).await;
    let mut client = server.client().await;
    let (game, tokens) = started(&mut client, options(2)).await;
    let v = view(&mut client, &game, None).await;
    let mover = v.turn as usize;
    leave(&mut client, &game, &tokens[mover]).await.unwrap();
    eventually(
        Duration::from_secs(5),
        "the bot moved for the seat that left",
        || {
            let (mut c, g) = (client.clone(), game.clone());
            async move { view(&mut c, &g, None).await.version > v.version }
        },
    )
    .await;
    // The old token no longer acts, nor reads the seat's hand.
    let refused = client
        .submit_action(authed(
            pb::SubmitActionRequest {
                game: game.clone(),
                action: Some(pb::Action {
                    kind: Some(pb::action::Kind::DrawCard(pb::DrawCard {})),
                }),
                ..Default::default()
            },
            &tokens[mover],
        ))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::PermissionDenied, "SEAT_LEFT")
    );
    let refused = client
        .get_view(authed(
            pb::GetViewRequest { game: game.clone() },
            &tokens[mover],
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "SEAT_LEFT");
    let refused = leave(&mut client, &game, &tokens[mover]).await.unwrap_err();
    assert_eq!(reason(&refused), "SEAT_LEFT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_a_finished_game_and_duplicate_bot_seats_are_refused() {
    let server = Server::start("memory", &["--bot-delay-ms", "0"]).await;
    let mut client = server.client().await;
    // One person and a bot; the person leaves, the bot plays both seats to the end.
    let (game, tokens) = started(
        &mut client,
        pb::GameOptions {
            bot_seats: vec![1],
            single_round: true,
            ..options(2)
        },
    )
    .await;
    leave(&mut client, &game, &tokens[0]).await.unwrap();
    let over = get_game(&mut client, &game).await;
    assert_eq!(over.status, pb::GameStatus::Finished as i32);
    // A game of two people: one leaves, the other plays the round out against the server's bot,
    // then tries to leave the finished game.
    let (game, tokens) = started(
        &mut client,
        pb::GameOptions {
            single_round: true,
            ..options(2)
        },
    )
    .await;
    leave(&mut client, &game, &tokens[0]).await.unwrap();
    // Seat 1 plays plain moves against the server's bot until the round (the match) ends.
    for _ in 0..2000 {
        let v = view(&mut client, &game, Some(&tokens[1])).await;
        if v.awaiting == pb::Awaiting::MatchOver as i32 {
            break;
        }
        if v.turn != 1 {
            continue;
        }
        let action = v
            .legal_actions
            .iter()
            .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
            .cloned()
            .or_else(|| plain_move(&v));
        let _ = client
            .submit_action(authed(
                pb::SubmitActionRequest {
                    game: game.clone(),
                    action,
                    expected_version: Some(v.version),
                    ..Default::default()
                },
                &tokens[1],
            ))
            .await;
    }
    assert_eq!(
        get_game(&mut client, &game).await.status,
        pb::GameStatus::Finished as i32
    );
    let refused = leave(&mut client, &game, &tokens[1]).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "GAME_OVER")
    );
    // Bot seats named twice, or out of range, are refused and create nothing.
    for (bots, why) in [
        (vec![1, 1], "BOT_SEAT_DUPLICATE"),
        (vec![5], "BOT_SEAT_OUT_OF_RANGE"),
    ] {
        let refused = create(
            &mut client,
            pb::GameOptions {
                bot_seats: bots,
                ..options(3)
            },
        )
        .await
        .unwrap_err();
        assert_eq!(
            (refused.code(), reason(&refused).as_str()),
            (Code::InvalidArgument, why)
        );
    }
}
