//! Correspondence play on the binary: turn timers up to 7 days, a turn's deadline kept across a
//! restart, a timed game not given up while a person thinks, and `ListMyGames` putting the
//! games where the player must act first.

use std::time::Duration;

use tonic::Code;
use unoflip::proto as pb;

use super::harness::*;

async fn join(client: &mut Client, game: &str, player: &(String, String)) -> String {
    client
        .join_game(authed(
            pb::JoinGameRequest {
                game: game.into(),
                seat: None,
                player_name: String::new(),
                player: player.0.clone(),
            },
            &player.1,
        ))
        .await
        .unwrap()
        .into_inner()
        .seat_token
}

async fn my_games(client: &mut Client, player: &(String, String)) -> Vec<pb::PlayerGame> {
    client
        .list_my_games(authed(
            pb::ListMyGamesRequest {
                player: player.0.clone(),
                page_size: 0,
            },
            &player.1,
        ))
        .await
        .unwrap()
        .into_inner()
        .games
}

fn timed(seconds: u32) -> pb::GameOptions {
    pb::GameOptions {
        turn_timer_seconds: seconds,
        ..options(2)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_timers_go_to_seven_days_and_a_deadline_survives_a_restart() {
    let store = temp_sqlite("correspondence");
    // Abandonment after 1 s of no person's move: a timed game waits for its timer instead.
    let flags = ["--abandon-after", "1s"];
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;

    let refused = create(&mut client, timed(7 * 24 * 3600 + 1))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused)),
        (Code::InvalidArgument, "TURN_TIMER_TOO_LONG".into())
    );
    let week = create(&mut client, timed(7 * 24 * 3600)).await.unwrap();
    assert_eq!(week.options.unwrap().turn_timer_seconds, 7 * 24 * 3600);

    let (ann, bo) = (
        register(&mut client, "Ann").await,
        register(&mut client, "Bo").await,
    );
    let game = create(&mut client, timed(3600)).await.unwrap().name;
    let tokens = [
        join(&mut client, &game, &ann).await,
        join(&mut client, &game, &bo).await,
    ];
    client
        .start_game(authed(
            pb::StartGameRequest { game: game.clone() },
            &tokens[0],
        ))
        .await
        .unwrap();
    let first = view(&mut client, &game, Some(&tokens[0])).await;
    let deadline = first
        .turn_deadline
        .expect("a deadline with a timer")
        .seconds;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((deadline - now - 3600).abs() <= 2, "an hour from the deal");

    // ListMyGames: the game where the player must act first, with its deadline; a newer lobby
    // after it. The other player sees the newer lobby first.
    let (to_act, waiting) = if first.turn == 0 {
        (&ann, &bo)
    } else {
        (&bo, &ann)
    };
    let lobby = create(&mut client, timed(3600)).await.unwrap().name;
    join(&mut client, &lobby, to_act).await;
    join(&mut client, &lobby, waiting).await;
    let listed = my_games(&mut client, to_act).await;
    let order: Vec<(&str, bool)> = listed
        .iter()
        .map(|g| (g.game.as_ref().unwrap().name.as_str(), g.your_turn))
        .collect();
    assert_eq!(order, vec![(game.as_str(), true), (lobby.as_str(), false)]);
    assert_eq!(
        listed[0].turn_deadline.as_ref().map(|t| t.seconds),
        Some(deadline)
    );
    let listed = my_games(&mut client, waiting).await;
    let order: Vec<(&str, bool)> = listed
        .iter()
        .map(|g| (g.game.as_ref().unwrap().name.as_str(), g.your_turn))
        .collect();
    assert_eq!(order, vec![(lobby.as_str(), false), (game.as_str(), false)]);

    // Nobody moves for longer than --abandon-after: a timed game is not given up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        get_game(&mut client, &game).await.status,
        pb::GameStatus::Playing as i32
    );

    // A restart keeps the turn's deadline (it does not give the seat a new hour).
    server.stop();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;
    let again = view(&mut client, &game, Some(&tokens[0])).await;
    assert_eq!(again.version, first.version);
    let kept = again.turn_deadline.expect("a deadline").seconds;
    assert!(
        (kept - deadline).abs() <= 1,
        "the deadline {kept} is the one set before the restart ({deadline})"
    );
}
