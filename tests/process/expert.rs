//! The expert bot in the shipped server: bot seats at `BOT_LEVEL_EXPERT` play a game to its end
//! with the think time the game or `serve --bot-think-ms` gives, their searches do not hold up
//! the server's other games, and a think time over the limit is refused.

use std::time::{Duration, Instant};

use unoflip::proto as pb;

use super::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expert_bot_seats_play_a_round_to_its_end() {
    let server = Server::start("memory", &["--bot-delay-ms", "0", "--bot-think-ms", "3"]).await;
    let mut client = server.client().await;
    let game = create(
        &mut client,
        pb::GameOptions {
            bot_seats: vec![0, 1, 2],
            bot_level: pb::BotLevel::Expert as i32,
            single_round: true,
            ..options(3)
        },
    )
    .await
    .unwrap();
    let options = game.options.clone().unwrap();
    assert_eq!(options.bot_level, pb::BotLevel::Expert as i32);
    assert_eq!(
        options.bot_think_ms, 0,
        "the server's default is not written in"
    );
    eventually(Duration::from_secs(120), "the experts finish the round", || {
        let mut client = client.clone();
        let name = game.name.clone();
        async move { get_game(&mut client, &name).await.status == pb::GameStatus::Finished as i32 }
    })
    .await;
    let over = get_game(&mut client, &game.name).await;
    assert_eq!(over.winners.len(), 1);
    assert!(
        !server.log().contains("the expert bot failed"),
        "{}",
        server.log()
    );
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thinking_expert_does_not_hold_up_other_games() {
    let server = Server::start("memory", &["--bot-delay-ms", "0"]).await;
    let mut client = server.client().await;
    // Two games of experts that think two seconds a move: their searches keep both cores busy.
    let mut thinking = Vec::new();
    for _ in 0..2 {
        let game = create(
            &mut client,
            pb::GameOptions {
                bot_seats: vec![0, 1],
                bot_level: pb::BotLevel::Expert as i32,
                bot_think_ms: 2_000,
                ..options(2)
            },
        )
        .await
        .unwrap();
        thinking.push(game.name);
    }
    // Meanwhile people play another game as usual.
    let (other, tokens) = started(&mut client, options(2)).await;
    for _ in 0..20 {
        let asked = Instant::now();
        let version = move_once(&mut client, &other, &tokens).await;
        assert!(version.is_some());
        // Generous: the bound is for a runtime thread held by a search (seconds), not speed.
        assert!(
            asked.elapsed() < Duration::from_millis(1_500),
            "{:?}",
            asked.elapsed()
        );
    }
    // The thinking games themselves answer while their bots think.
    for name in &thinking {
        let asked = Instant::now();
        let game = get_game(&mut client, name).await;
        assert_eq!(game.status, pb::GameStatus::Playing as i32);
        assert!(
            asked.elapsed() < Duration::from_millis(1_500),
            "{:?}",
            asked.elapsed()
        );
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_think_time_over_the_limit_is_refused() {
    let server = Server::start("memory", &[]).await;
    let mut client = server.client().await;
    let refused = create(
        &mut client,
        pb::GameOptions {
            bot_seats: vec![1],
            bot_level: pb::BotLevel::Expert as i32,
            bot_think_ms: 2_001,
            ..options(2)
        },
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert_eq!(reason(&refused), "BOT_THINK_TOO_LONG");
    assert!(refused.message().contains("2001"), "{}", refused.message());
    let listed = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(listed.games.is_empty(), "nothing was created: {listed:?}");
    server.stop();
}
