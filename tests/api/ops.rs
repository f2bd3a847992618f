//! Operations and the lobby: grpc-web over HTTP/1.1, health, reflection, deck tables, joining,
//! starting, leaving, and the turn timer (with paused time).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;
use unoflip::proto as pb;
use unoflip::rules::Viewer;
use unoflip::service::{Config, Lifecycle};
use unoflip::store::MemoryStore;

use super::harness::*;

/// A plain HTTP/1.1 request to the server; the whole response as text.
async fn http_get(addr: std::net::SocketAddr, method: &str, path: &str) -> String {
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut response))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&response).into_owned()
}

/// The web client is served from the binary on the gRPC port: the page, its script (the
/// committed build in clients/web/dist) and its style, byte for byte.
#[tokio::test]
async fn the_web_client_is_served_on_the_grpc_port() {
    let server = InProcess::start().await;
    let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/web");
    for (path, file, mime) in [
        ("/", "index.html", "text/html"),
        ("/index.html", "index.html", "text/html"),
        ("/app.js", "dist/app.js", "text/javascript"),
        ("/style.css", "style.css", "text/css"),
    ] {
        let text = http_get(server.addr, "GET", path).await;
        assert!(text.starts_with("HTTP/1.1 200"), "{path}: {text}");
        let lower = text.to_lowercase();
        assert!(lower.contains(&format!("content-type: {mime}")), "{path}");
        let body = text.split_once("\r\n\r\n").unwrap().1;
        assert_eq!(
            body,
            std::fs::read_to_string(web.join(file)).unwrap(),
            "{path}"
        );
    }
    let head = http_get(server.addr, "HEAD", "/app.js").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.ends_with("\r\n\r\n"), "no body for HEAD");
    // Anything else is not a page file: it goes on to gRPC, which knows no such path.
    let other = http_get(server.addr, "GET", "/secret.txt").await;
    assert!(!other.contains("<html"), "{other}");
}

#[tokio::test]
async fn a_grpc_web_request_over_http_1_1_works() {
    let server = InProcess::start().await;
    let mut socket = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    // An empty GetDecksRequest: one uncompressed frame of length zero.
    let body = [0u8, 0, 0, 0, 0];
    let head = format!(
        "POST /unoflip.v1.UnoFlipService/GetDecks HTTP/1.1\r\nHost: {}\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\nOrigin: http://example.test\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        server.addr,
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut response))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.to_lowercase()
            .contains("content-type: application/grpc-web+proto"),
        "{text}"
    );
    assert!(
        text.to_lowercase()
            .contains("access-control-allow-origin: http://example.test"),
        "CORS: {text}"
    );
    // The trailers travel in the body, in a frame flagged 0x80.
    assert!(text.contains("grpc-status:0"), "{text}");
    assert!(response.len() > 2_000, "both deck tables are in the body");
}

#[tokio::test]
async fn health_and_reflection_answer() {
    let server = InProcess::start().await;
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    for service in ["", "unoflip.v1.UnoFlipService"] {
        let answer = health
            .check(tonic_health::pb::HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            answer.status,
            tonic_health::pb::health_check_response::ServingStatus::Serving as i32
        );
    }
    use tonic_reflection::pb::v1 as r;
    let mut reflection = r::server_reflection_client::ServerReflectionClient::new(channel.clone());
    let request = r::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(r::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let mut answers = reflection
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let answer = answers.message().await.unwrap().unwrap();
    let Some(r::server_reflection_response::MessageResponse::ListServicesResponse(list)) =
        answer.message_response
    else {
        panic!("a service list");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(
        names.contains(&"unoflip.v1.UnoFlipService".to_string()),
        "{names:?}"
    );
    use tonic_reflection::pb::v1alpha as ra;
    let mut alpha = ra::server_reflection_client::ServerReflectionClient::new(channel);
    let request = ra::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            ra::server_reflection_request::MessageRequest::FileContainingSymbol(
                "unoflip.v1.UnoFlipService".into(),
            ),
        ),
    };
    let mut answers = alpha
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let answer = answers.message().await.unwrap().unwrap();
    assert!(matches!(
        answer.message_response,
        Some(ra::server_reflection_response::MessageResponse::FileDescriptorResponse(_))
    ));
}

#[tokio::test]
async fn the_deck_tables_are_public() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let decks = client
        .get_decks(pb::GetDecksRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!((decks.flip.len(), decks.classic.len()), (112, 108));
    let red1 = decks.flip[0];
    assert_eq!(
        red1.light.unwrap(),
        pb::Face {
            color: pb::Color::Red as i32,
            kind: pb::Kind::Number as i32,
            number: 1
        }
    );
    assert_eq!(
        red1.dark.unwrap(),
        pb::Face {
            color: pb::Color::Pink as i32,
            kind: pb::Kind::Number as i32,
            number: 3
        }
    );
    assert!(decks.classic.iter().all(|c| c.dark.is_none()));
}

#[tokio::test]
async fn seats_are_joined_once_and_the_game_starts_when_all_are_taken() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let game = created(&mut client, options(pb::Ruleset::Flip, 3)).await;
    let open = client
        .list_games(pb::ListGamesRequest {
            open_only: true,
            page_size: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(open.games.len(), 1);
    let join = |seat: Option<u32>| pb::JoinGameRequest {
        game: game.name.clone(),
        seat,
        player_name: "ann".into(),
        player: String::new(),
    };
    let first = client.join_game(join(Some(1))).await.unwrap().into_inner();
    let status = client.join_game(join(Some(1))).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "SEAT_TAKEN")
    );
    let status = client.join_game(join(Some(5))).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::InvalidArgument, "NO_SUCH_SEAT")
    );
    let status = client
        .start_game(authed(
            pb::StartGameRequest {
                game: game.name.clone(),
            },
            &first.seat_token,
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&status), "SEATS_OPEN");
    assert_eq!(
        client
            .join_game(join(None))
            .await
            .unwrap()
            .into_inner()
            .seat,
        0
    );
    assert_eq!(
        client
            .join_game(join(None))
            .await
            .unwrap()
            .into_inner()
            .seat,
        2
    );
    let status = client.join_game(join(None)).await.unwrap_err();
    assert_eq!(reason(&status), "NO_OPEN_SEAT");
    let status = client
        .start_game(pb::StartGameRequest {
            game: game.name.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    let started = client
        .start_game(authed(
            pb::StartGameRequest {
                game: game.name.clone(),
            },
            &first.seat_token,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(started.game.unwrap().status, pb::GameStatus::Playing as i32);
    let open = client
        .list_games(pb::ListGamesRequest {
            open_only: true,
            page_size: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(open.games.is_empty());
    let status = client
        .export_game(pb::ExportGameRequest {
            game: game.name.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::PermissionDenied, "GAME_NOT_FINISHED")
    );
    let export = client
        .export_game(authed(
            pb::ExportGameRequest {
                game: game.name.clone(),
            },
            ADMIN,
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(export.events[0].json.contains("game_created"));
}

#[tokio::test]
async fn a_seat_that_leaves_is_played_by_the_server() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let (game, tokens) = started(&mut client, options(pb::Ruleset::Flip, 2)).await;
    let left = client
        .leave_game(authed(
            pb::LeaveGameRequest { game: game.clone() },
            &tokens[1],
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(left.game.unwrap().seats[1].played_by_server);
    play_alone_to_the_end(&mut client, &game, &tokens[0], 0).await;
}

#[tokio::test(start_paused = true)]
async fn an_expired_turn_timer_draws_and_keeps_for_the_seat() {
    let games = Direct::new(Arc::new(MemoryStore::new()), Config::default());
    let options = pb::GameOptions {
        turn_timer_seconds: 30,
        first_dealer: Some(0),
        ..options(pb::Ruleset::Classic, 2)
    };
    let handle = games.create(&options).await;
    games.join(&handle, Some(0), "a").await;
    games.join(&handle, Some(1), "b").await;
    games.start(&handle).await;
    let before = games.view(&handle, Viewer::Spectator).await;
    assert!(
        before.turn_deadline.is_some(),
        "the deadline is part of every view"
    );
    let seat = before.turn as usize;
    let cards = before.players[seat].card_count;
    let waiting_for_color = before.awaiting == pb::Awaiting::ChooseColor as i32;
    tokio::time::sleep(Duration::from_secs(29)).await;
    assert_eq!(
        games.view(&handle, Viewer::Spectator).await.version,
        before.version,
        "not yet"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = games.view(&handle, Viewer::Spectator).await;
    assert!(
        after.version > before.version,
        "the server moved for the seat"
    );
    if waiting_for_color {
        assert_ne!(after.color, pb::Color::Unspecified as i32);
    } else {
        // Drew one card, kept it: the turn passed.
        assert_eq!(after.players[seat].card_count, cards + 1);
        assert_ne!(after.awaiting, pb::Awaiting::PlayOrKeepDrawn as i32);
    }
}

#[tokio::test(start_paused = true)]
async fn bots_move_after_the_bot_delay() {
    let config = Config {
        lifecycle: Lifecycle {
            bot_delay: Duration::from_secs(2),
            ..Lifecycle::default()
        },
        ..Config::default()
    };
    let games = Direct::new(Arc::new(MemoryStore::new()), config);
    let options = pb::GameOptions {
        bot_seats: vec![1],
        ..options(pb::Ruleset::Flip, 2)
    };
    let handle = games.create(&options).await;
    games.join(&handle, Some(0), "a").await;
    games.start(&handle).await;
    // Play seat 0 until the bot is to move.
    for _ in 0..50 {
        let v = games.view(&handle, Viewer::Seat(0)).await;
        if v.turn == 1 || v.awaiting == pb::Awaiting::MatchOver as i32 {
            break;
        }
        let Some(seat_action) = super::common::plain_move(
            pb::Awaiting::try_from(v.awaiting).unwrap(),
            v.side == pb::Side::Dark as i32,
        ) else {
            break;
        };
        games.submit(&handle, 0, seat_action).await.unwrap();
    }
    let before = games.view(&handle, Viewer::Spectator).await;
    assert_eq!(before.turn, 1, "the bot is to move");
    tokio::time::sleep(Duration::from_millis(1900)).await;
    assert_eq!(
        games.view(&handle, Viewer::Spectator).await.version,
        before.version,
        "not before the delay"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        games.view(&handle, Viewer::Spectator).await.version > before.version,
        "the bot moved"
    );
}

async fn replay_at(
    client: &mut Client,
    game: &str,
    version: u64,
    token: Option<&str>,
) -> Result<pb::GetReplayResponse, tonic::Status> {
    let message = pb::GetReplayRequest {
        game: game.into(),
        version,
    };
    let request = match token {
        Some(t) => authed(message, t),
        None => tonic::Request::new(message),
    };
    client.get_replay(request).await.map(|r| r.into_inner())
}

#[tokio::test]
async fn a_finished_games_replay_shows_every_event_and_every_hand() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let mut o = options(pb::Ruleset::Flip, 3);
    o.bot_seats = vec![1, 2];
    let (game, tokens) = started(&mut client, o).await;
    // A running game's replay would show hidden hands: only the admin token may see it.
    let status = replay_at(&mut client, &game, 1, None).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::PermissionDenied, "GAME_NOT_FINISHED")
    );
    let admin = replay_at(&mut client, &game, 2, Some(ADMIN)).await.unwrap();
    assert_eq!(admin.version, 2);
    play_alone_to_the_end(&mut client, &game, &tokens[0], 0).await;
    let last = game_version(&mut client, &game).await;
    for bad in [0, last + 1] {
        let status = replay_at(&mut client, &game, bad, None).await.unwrap_err();
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::InvalidArgument, "VERSION_OUT_OF_RANGE")
        );
    }
    // The last moment is the table as it is now, for the spectator and for seat 0.
    let end = replay_at(&mut client, &game, last, None).await.unwrap();
    assert_eq!((end.version, end.last_version), (last, last));
    assert_eq!(end.table, Some(view(&mut client, &game, None).await));
    assert_eq!(
        end.seats[0],
        view(&mut client, &game, Some(&tokens[0])).await
    );
    // Every event is the one a spectator's stream gave, and every moment shows each seat's
    // hand, as many cards as the table counts, no card in two hands.
    let mut stream = super::games::open_stream(&mut client, &game, None, 1).await;
    let mut seen = 1;
    while seen < last {
        let message = stream.message().await.unwrap().unwrap();
        let Some(pb::subscribe_response::Kind::Event(event)) = message.kind else {
            continue;
        };
        seen = event.version;
        let moment = replay_at(&mut client, &game, seen, None).await.unwrap();
        assert_eq!(moment.event.as_ref(), Some(&event));
        let table = moment.table.unwrap();
        assert_eq!(table.version, seen);
        assert_eq!(moment.seats.len(), 3);
        let mut ids = std::collections::HashSet::new();
        for (seat, v) in moment.seats.iter().enumerate() {
            assert_eq!(v.seat, Some(seat as u32));
            assert_eq!(v.hand.len() as u32, table.players[seat].card_count);
            for card in &v.hand {
                assert!(
                    ids.insert(card.id),
                    "card {} in two hands at {seen}",
                    card.id
                );
            }
        }
    }
}

async fn rematch(
    client: &mut Client,
    game: &str,
    token: Option<&str>,
) -> Result<pb::Game, tonic::Status> {
    let message = pb::RematchRequest { game: game.into() };
    let request = match token {
        Some(t) => authed(message, t),
        None => tonic::Request::new(message),
    };
    client
        .rematch(request)
        .await
        .map(|r| r.into_inner().game.unwrap())
}

#[tokio::test]
async fn the_players_of_a_finished_game_get_one_rematch_with_the_same_options() {
    let server = InProcess::start().await;
    let mut client = client(server.addr).await;
    let mut o = options(pb::Ruleset::Classic, 3);
    o.bot_seats = vec![2];
    o.bot_level = pb::BotLevel::Random as i32;
    o.turn_timer_seconds = 90;
    let (game, tokens) = started(&mut client, o.clone()).await;
    let (other, other_tokens) = started(&mut client, options(pb::Ruleset::Flip, 2)).await;
    let refused = rematch(&mut client, &game, Some(&tokens[0]))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "GAME_NOT_FINISHED")
    );
    // Both people play until the match is over.
    for _ in 0..5000 {
        let v = view(&mut client, &game, None).await;
        if v.awaiting == pb::Awaiting::MatchOver as i32 {
            break;
        }
        let token = &tokens[v.turn as usize];
        let mine = view(&mut client, &game, Some(token)).await;
        let Some(action) = mine
            .legal_actions
            .iter()
            .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
            .or_else(|| mine.legal_actions.first())
            .cloned()
        else {
            continue;
        };
        let _ = submit(&mut client, &game, token, action).await;
    }
    let before = get_game(&mut client, &game).await;
    assert_eq!(before.status, pb::GameStatus::Finished as i32);
    assert_eq!(before.rematch, "");
    // No token, or another game's token: refused, nothing created.
    let status = rematch(&mut client, &game, None).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    let status = rematch(&mut client, &game, Some(&other_tokens[0]))
        .await
        .unwrap_err();
    assert!(matches!(
        status.code(),
        Code::Unauthenticated | Code::PermissionDenied
    ));
    assert_eq!(get_game(&mut client, &game).await.rematch, "");
    // The first to ask creates it; the second gets the same game.
    let next = rematch(&mut client, &game, Some(&tokens[1])).await.unwrap();
    let again = rematch(&mut client, &game, Some(&tokens[0])).await.unwrap();
    assert_eq!(again.name, next.name);
    assert_ne!(next.name, game);
    assert_ne!(next.name, other);
    assert_eq!(get_game(&mut client, &game).await.rematch, next.name);
    assert_eq!(next.status, pb::GameStatus::Waiting as i32);
    let shown = next.options.unwrap();
    assert_eq!(shown.ruleset, pb::Ruleset::Classic as i32);
    assert_eq!(shown.seats, 3);
    assert!(shown.single_round);
    assert_eq!(shown.bot_seats, vec![2]);
    assert_eq!(shown.bot_level, pb::BotLevel::Random as i32);
    assert_eq!(shown.turn_timer_seconds, 90);
    assert_eq!(
        next.seats.iter().map(|s| s.taken).collect::<Vec<_>>(),
        [false, false, true]
    );
}

/// `ListGames` shows the newest games first, a page at a time, and with `open_only` exactly the
/// lobbies with a seat nobody took: not a full lobby, not a started game, and a lobby no longer
/// once its last seat is taken (the registry asks only the games whose task says a seat is open).
#[tokio::test]
async fn open_only_lists_the_lobbies_with_a_free_seat_newest_first() {
    let server = InProcess::start().await;
    let mut other = client(server.addr).await;
    let mut client = client(server.addr).await;
    let join = |game: &str| pb::JoinGameRequest {
        game: game.into(),
        seat: None,
        player_name: "ann".into(),
        player: String::new(),
    };
    // One seat of two taken.
    let half = created(&mut client, options(pb::Ruleset::Classic, 2))
        .await
        .name;
    client.join_game(join(&half)).await.unwrap();
    // Both seats taken, not started.
    let full = created(&mut client, options(pb::Ruleset::Classic, 2))
        .await
        .name;
    client.join_game(join(&full)).await.unwrap();
    client.join_game(join(&full)).await.unwrap();
    let (playing, _) = started(&mut client, options(pb::Ruleset::Flip, 2)).await;
    let empty = created(&mut client, options(pb::Ruleset::Flip, 3))
        .await
        .name;
    let mut list = async |open_only: bool, page_size: u32| -> Vec<String> {
        client
            .list_games(pb::ListGamesRequest {
                open_only,
                page_size,
            })
            .await
            .unwrap()
            .into_inner()
            .games
            .into_iter()
            .map(|g| g.name)
            .collect()
    };
    // Every game, newest first.
    let all = [
        empty.as_str(),
        playing.as_str(),
        full.as_str(),
        half.as_str(),
    ];
    assert_eq!(list(true, 0).await, [empty.as_str(), half.as_str()]);
    assert_eq!(list(true, 1).await, [empty.as_str()]);
    assert_eq!(list(false, 0).await, all);
    assert_eq!(list(false, 3).await, all[..3]);
    other.join_game(join(&half)).await.unwrap();
    assert_eq!(list(true, 0).await, [empty.as_str()]);
    assert_eq!(list(true, 1).await, [empty.as_str()]);
    for _ in 0..3 {
        other.join_game(join(&empty)).await.unwrap();
    }
    assert!(list(true, 0).await.is_empty());
    assert_eq!(list(false, 0).await, all);
}

/// `ListGames` with `open_only` asks only the lobbies that may be open, not every live game: a
/// started game whose task is busy (here, its move's append held up in the store) does not hold
/// up a client looking for a lobby.
#[tokio::test]
async fn open_only_does_not_wait_on_started_games() {
    let store = Arc::new(super::tampered::Tampered::new());
    let server = super::tampered::start_server(&store).await;
    let mut client = client(server.addr).await;
    let (playing, tokens) = started(&mut client, options(pb::Ruleset::Classic, 2)).await;
    let lobby = created(&mut client, options(pb::Ruleset::Classic, 2))
        .await
        .name;
    let (moving, release) = super::tampered::a_held_move(&store, &client, &playing, &tokens).await;
    let open = tokio::time::timeout(
        Duration::from_secs(10),
        client.list_games(pb::ListGamesRequest {
            open_only: true,
            page_size: 0,
        }),
    )
    .await
    .expect("ListGames waited on a started game's task")
    .unwrap()
    .into_inner();
    assert_eq!(
        open.games.into_iter().map(|g| g.name).collect::<Vec<_>>(),
        [lobby]
    );
    release.send(()).unwrap();
    moving.await.unwrap().unwrap();
}
