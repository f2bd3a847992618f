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

/// Joins `game` as `player` and starts it (the other seats are the server's); the seat token.
async fn join_and_start(client: &mut Client, game: &str, player: &str, token: &str) -> String {
    let seat_token = client
        .join_game(join_as(game, player, Some(token)))
        .await
        .unwrap()
        .into_inner()
        .seat_token;
    client
        .start_game(authed(
            pb::StartGameRequest {
                game: game.to_owned(),
            },
            &seat_token,
        ))
        .await
        .unwrap();
    seat_token
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

    // A rated game, played to its end before the restart: Ada's rating is kept.
    let rated = create(
        &mut client,
        pb::GameOptions {
            bot_seats: vec![1],
            single_round: true,
            rated: true,
            ..options(2)
        },
    )
    .await
    .unwrap();
    let rated_token = join_and_start(&mut client, &rated.name, &ada.name, &ada_token).await;
    play_randomly(
        &mut client,
        &rated.name,
        &rated_token,
        &mut 0x2545_f491_4f6c_dd1d,
    )
    .await;
    let mut rated_ada = None;
    for _ in 0..100 {
        let now = client
            .get_player(pb::GetPlayerRequest {
                name: ada.name.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .player
            .unwrap();
        if !now.ratings.is_empty() {
            rated_ada = Some(now);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let rated_ada = rated_ada.expect("the rated game rated Ada");
    assert_eq!(rated_ada.ratings[0].games, 1);
    // A finished game's invite code is let go of (just after the end): it names no game.
    assert_eq!(rated.invite_code.len(), 6);
    eventually(
        std::time::Duration::from_secs(5),
        "the finished game's code freed",
        || {
            let mut c = client.clone();
            let code = rated.invite_code.clone();
            async move {
                let refused = c.join_game(join_as(&code, "", None)).await.unwrap_err();
                assert_ne!(refused.code(), Code::Ok);
                (refused.code(), reason(&refused).as_str())
                    == (Code::NotFound, "INVITE_CODE_UNKNOWN")
            }
        },
    )
    .await;

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
    assert_eq!(
        game.seats[0].player_name, "Ada",
        "the player's name by default"
    );
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
    assert_eq!(found, rated_ada, "the player and its rating are kept");
    // The player token finds every seat again, newest first, with their tokens.
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
            (rated.name.as_str(), 0, rated_token.as_str()),
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

/// Plays `game` for the seat of `token` with uniformly random legal actions until it is over.
async fn play_randomly(client: &mut Client, game: &str, token: &str, seed: &mut u64) {
    loop {
        let seen = view(client, game, Some(token)).await;
        if seen.legal_actions.is_empty() {
            if get_game(client, game).await.status != pb::GameStatus::Playing as i32 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            continue;
        }
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let pick = (*seed % seen.legal_actions.len() as u64) as usize;
        let answer = client
            .submit_action(authed(
                pb::SubmitActionRequest {
                    game: game.to_owned(),
                    action: Some(seen.legal_actions[pick].clone()),
                    expected_version: Some(seen.version),
                    ..Default::default()
                },
                token,
            ))
            .await;
        if let Err(status) = answer {
            assert_eq!(reason(&status), "VERSION_MISMATCH", "{status:?}");
        }
    }
}

async fn leaderboard(
    client: &mut Client,
    bots: bool,
    page_token: &str,
) -> pb::GetLeaderboardResponse {
    client
        .get_leaderboard(pb::GetLeaderboardRequest {
            ruleset: pb::Ruleset::Flip as i32,
            bots,
            page_size: 1,
            page_token: page_token.into(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// [Issue 15: ratings] Rated one-on-one games between a registered player who plays at random
/// and the server's `heuristic` seat: the built-in heuristic player is rated above, with the
/// 95% intervals apart, both on the bots' leaderboard; a rated game refuses a seat without a
/// player and a fixed deck.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rated_games_rate_the_builtin_heuristic_above_a_random_player() {
    let server = Server::start("memory", &["--bot-delay-ms", "0"]).await;
    let mut client = server.client().await;
    let (rando, token) = register(&mut client, "Rando", true).await;
    let rated = pb::GameOptions {
        bot_seats: vec![1],
        bot_level: pb::BotLevel::Heuristic as i32,
        single_round: true,
        rated: true,
        ..options(2)
    };
    let refused = client
        .create_game(pb::CreateGameRequest {
            options: Some(pb::GameOptions {
                deck_order: (0..112).collect(),
                ..rated.clone()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "RATED_GAME_FIXED_DECK");

    let games = 60;
    let mut wins = 0;
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for n in 0..games {
        let game = create(&mut client, rated.clone()).await.unwrap();
        if n == 0 {
            let refused = client
                .join_game(join_as(&game.name, "", None))
                .await
                .unwrap_err();
            assert_eq!(reason(&refused), "RATED_GAME_NEEDS_PLAYER");
        }
        let seat_token = join_and_start(&mut client, &game.name, &rando.name, &token).await;
        play_randomly(&mut client, &game.name, &seat_token, &mut seed).await;
        let over = get_game(&mut client, &game.name).await;
        assert_eq!(over.status, pb::GameStatus::Finished as i32, "{over:?}");
        wins += u32::from(over.winners.contains(&0));
    }

    let me = client
        .get_player(pb::GetPlayerRequest {
            name: rando.name.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .player
        .unwrap();
    let mine = me.ratings[0];
    assert_eq!(
        (mine.ruleset, mine.games, mine.wins),
        (pb::Ruleset::Flip as i32, games, wins)
    );
    let first = leaderboard(&mut client, true, "").await;
    let second = leaderboard(&mut client, true, &first.next_page_token).await;
    let top = &first.entries[0];
    let next = &second.entries[0];
    assert_eq!((top.rank, next.rank), (1, 2));
    assert_eq!(
        top.player.as_ref().unwrap().display_name,
        "Built-in heuristic"
    );
    assert_eq!(next.player.as_ref().unwrap().name, rando.name);
    let (h, r) = (top.rating.unwrap(), next.rating.unwrap());
    assert_eq!((h.games, h.wins), (games, games - wins));
    eprintln!(
        "after {games} games: heuristic {:.1} +- {:.1}, random {:.1} +- {:.1} ({wins} wins)",
        h.rating,
        2.0 * h.uncertainty,
        r.rating,
        2.0 * r.uncertainty
    );
    assert!(
        h.rating - 2.0 * h.uncertainty > r.rating + 2.0 * r.uncertainty,
        "{h:?} {r:?}"
    );
    // People's leaderboard: nobody rated yet.
    assert!(leaderboard(&mut client, false, "").await.entries.is_empty());
    server.stop();
}
