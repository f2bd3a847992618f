//! Players and invite codes on the binary: a player registers, takes seats with its player
//! token (by a game's name or its invite code), and after a restart still finds its player, its
//! seats and their tokens, and the codes of open lobbies still join. Refusals change nothing.

use tonic::Code;
use unoflip::proto as pb;

use super::harness::*;

async fn register(client: &mut Client, name: &str, bot: bool) -> (pb::Player, String) {
    let r = client
        .register_player(pb::RegisterPlayerRequest {
            display_name: name.into(),
            bot,
        })
        .await
        .unwrap()
        .into_inner();
    (r.player.unwrap(), r.player_token)
}

fn join_as(game: &str, player: &str, token: Option<&str>) -> tonic::Request<pb::JoinGameRequest> {
    let request = pb::JoinGameRequest {
        game: game.into(),
        seat: None,
        player_name: String::new(),
        player: player.into(),
    };
    match token {
        Some(t) => authed(request, t),
        None => tonic::Request::new(request),
    }
}

async fn my_games(client: &mut Client, player: &str, token: &str) -> Vec<pb::PlayerGame> {
    client
        .list_my_games(authed(
            pb::ListMyGamesRequest {
                player: player.into(),
                page_size: 0,
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
        .games
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_seats_and_invite_codes_survive_a_restart() {
    let store = temp_sqlite("players");
    let server = Server::start(&store, &[]).await;
    let port = server.port;
    let mut client = server.client().await;

    let (ada, ada_token) = register(&mut client, " Ada ", false).await;
    assert_eq!(ada.display_name, "Ada");
    assert!(ada.name.starts_with("players/"));
    let (bo, bo_token) = register(&mut client, "Bo", true).await;
    assert!(bo.bot);
    for bad in ["", "<b>", &"x".repeat(40)] {
        let refused = client
            .register_player(pb::RegisterPlayerRequest {
                display_name: bad.into(),
                bot: false,
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{bad:?}");
        assert_eq!(reason(&refused), "PLAYER_NAME_INVALID");
    }

    // A game's invite code: six characters without ambiguous ones; it joins, in any case.
    let first = create(&mut client, options(2)).await.unwrap();
    let code = first.invite_code.clone();
    assert_eq!(code.len(), 6, "{first:?}");
    assert!(!code.contains(['I', 'L', 'O', '0', '1']), "{code}");
    let joined = client
        .join_game(join_as(&code.to_lowercase(), &ada.name, Some(&ada_token)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(joined.seat, 0);
    let game = joined.game.unwrap();
    assert_eq!(game.name, first.name);
    assert_eq!(game.seats[0].player, ada.name);
    assert_eq!(game.seats[0].player_name, "Ada", "the player's name by default");
    let first_token = joined.seat_token;
    // Joining again as the same player (a retry, another phone) finds the same seat.
    let again = client
        .join_game(join_as(&first.name, &ada.name, Some(&ada_token)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((again.seat, &again.seat_token), (0, &first_token));
    // Someone else's player token, or none: refused, and the seat stays open.
    let refused = client
        .join_game(join_as(&code, &bo.name, Some(&ada_token)))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::Unauthenticated, "PLAYER_TOKEN_INVALID")
    );
    let refused = client
        .join_game(join_as(&code, &bo.name, None))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated);
    let refused = client
        .join_game(join_as(&code, "players/0000000000000000", Some(&bo_token)))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::NotFound, "PLAYER_NOT_FOUND")
    );
    assert!(!get_game(&mut client, &first.name).await.seats[1].taken);
    // A code no game has.
    let unknown = if code == "ZZZZZZ" { "YYYYYY" } else { "ZZZZZZ" };
    let refused = client
        .join_game(join_as(unknown, "", None))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::NotFound, "INVITE_CODE_UNKNOWN")
    );

    // A second lobby, joined by name as the player, stays open over the restart.
    let second = create(&mut client, options(3)).await.unwrap();
    let second_token = client
        .join_game(join_as(&second.name, &ada.name, Some(&ada_token)))
        .await
        .unwrap()
        .into_inner()
        .seat_token;
    server.stop();

    let server = Server::start_on(port, &store, &[]).await;
    let mut client = server.client().await;
    let found = client
        .get_player(pb::GetPlayerRequest {
            name: ada.name.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .player
        .unwrap();
    assert_eq!(found, ada);
    // The player token finds both seats again, newest first, with their tokens.
    let mine = my_games(&mut client, &ada.name, &ada_token).await;
    let listed: Vec<(&str, u32, &str)> = mine
        .iter()
        .map(|g| {
            (
                g.game.as_ref().unwrap().name.as_str(),
                g.seat,
                g.seat_token.as_str(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            (second.name.as_str(), 0, second_token.as_str()),
            (first.name.as_str(), 0, first_token.as_str()),
        ]
    );
    assert!(my_games(&mut client, &bo.name, &bo_token).await.is_empty());
    let refused = client
        .list_my_games(authed(
            pb::ListMyGamesRequest {
                player: ada.name.clone(),
                page_size: 0,
            },
            &bo_token,
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "PLAYER_TOKEN_INVALID");
    // The open lobby's code joins after the restart.
    let joined = client
        .join_game(join_as(&second.invite_code, &bo.name, Some(&bo_token)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(joined.game.unwrap().name, second.name);
    assert_eq!(joined.seat, 1);

    // The seat token found again acts for its seat: it starts the game and sees seat 0. Once
    // the game starts its code has expired.
    client
        .join_game(pb::JoinGameRequest {
            game: first.name.clone(),
            seat: None,
            player_name: "Cy".into(),
            player: String::new(),
        })
        .await
        .unwrap();
    client
        .start_game(authed(
            pb::StartGameRequest {
                game: first.name.clone(),
            },
            &first_token,
        ))
        .await
        .unwrap();
    let seen = view(&mut client, &first.name, Some(&first_token)).await;
    assert_eq!(seen.seat, Some(0), "{seen:?}");
    let refused = client
        .join_game(join_as(&code, "", None))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "INVITE_CODE_EXPIRED")
    );
    assert_eq!(get_game(&mut client, &first.name).await.invite_code, "");
    server.stop();
}
