//! Notifications on the binary: players' games make signed webhook POSTs (Standard Webhooks) and
//! NATS messages, derived from the store's events. A receiver that fails, is slow, redirects and
//! goes away for a while gets every notification in the end, in order per player; a server
//! SIGKILLed between sending and recording sends again with the same id; NATS holds each
//! notification once; nothing carries a card.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use tokio_stream::StreamExt;
use unoflip::proto as pb;

use super::harness::*;
use crate::kit::{ADMIN, Answer, Endpoint, Nats, Received};

/// The webhook secret, as Standard Webhooks writes it.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// A game of two registered players; its name, the players by seat and the seat tokens.
async fn players_game(client: &mut Client) -> (String, Vec<String>, Vec<String>) {
    players_game_of(client, options(2)).await
}

/// The same with these options.
async fn players_game_of(
    client: &mut Client,
    options: pb::GameOptions,
) -> (String, Vec<String>, Vec<String>) {
    let game = create(client, options).await.unwrap().name;
    let (mut players, mut tokens) = (Vec::new(), Vec::new());
    for name in ["Ann", "Bo"] {
        let (player, player_token) = register(client, name).await;
        let joined = client
            .join_game(authed(
                pb::JoinGameRequest {
                    game: game.clone(),
                    seat: None,
                    player_name: String::new(),
                    player: player.clone(),
                },
                &player_token,
            ))
            .await
            .unwrap()
            .into_inner();
        players.push(player);
        tokens.push(joined.seat_token);
    }
    client
        .start_game(authed(
            pb::StartGameRequest { game: game.clone() },
            &tokens[0],
        ))
        .await
        .unwrap();
    (game, players, tokens)
}

async fn play(client: &mut Client, game: &str, tokens: &[String], moves: usize) {
    for _ in 0..moves {
        if move_once(client, game, tokens).await.is_none() {
            return;
        }
    }
}

fn id_of(name: &str) -> &str {
    name.rsplit('/').next().unwrap()
}

/// The notifications `game`'s stored events make (id -> type), read with the admin token.
async fn expected(client: &mut Client, game: &str, players: &[String]) -> BTreeMap<String, String> {
    let events = client
        .export_game(authed(
            pb::ExportGameRequest {
                game: game.to_owned(),
            },
            ADMIN,
        ))
        .await
        .unwrap()
        .into_inner()
        .events;
    let mut out = BTreeMap::new();
    for event in events {
        let json: serde_json::Value = serde_json::from_str(&event.json).unwrap();
        let seat = json["seat"].as_u64().map(|s| s as usize);
        let (kind, seats): (&str, Vec<usize>) = match json["type"].as_str().unwrap() {
            "turn_started" => ("unoflip.your_turn", seat.into_iter().collect()),
            "penalty_pending" => ("unoflip.penalty_waiting", seat.into_iter().collect()),
            "round_started" if json["round"] == 1 => ("unoflip.game_started", vec![0, 1]),
            "match_ended" | "match_abandoned" => ("unoflip.game_over", vec![0, 1]),
            _ => continue,
        };
        for seat in seats {
            out.insert(
                format!(
                    "{}.{}.{}",
                    id_of(game),
                    event.version,
                    id_of(&players[seat])
                ),
                kind.to_owned(),
            );
        }
    }
    out
}

/// Checks a webhook request: its signature, and a body of the documented fields only (no
/// card); returns its id, type and (player, version).
fn check(request: &Received) -> (String, String, (String, u64)) {
    let id = request.header("webhook-id").expect("webhook-id").to_owned();
    let timestamp = request
        .header("webhook-timestamp")
        .expect("webhook-timestamp");
    let signature = request
        .header("webhook-signature")
        .expect("webhook-signature");
    let key = base64::engine::general_purpose::STANDARD
        .decode(SECRET.trim_start_matches("whsec_"))
        .unwrap();
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(&request.body);
    let expected = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    assert_eq!(signature, expected, "the signature of {id}");
    let sent: u64 = timestamp.parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now.abs_diff(sent) < 120, "a timestamp of this attempt");
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
    let data = body["data"].as_object().unwrap();
    assert_eq!(data["id"], id.as_str());
    let keys: BTreeSet<&str> = data.keys().map(String::as_str).collect();
    let allowed: BTreeSet<&str> = [
        "turn_deadline",
        "id",
        "player",
        "game",
        "game_version",
        "seat",
        "winners",
        "won",
    ]
    .into_iter()
    .collect();
    assert!(
        keys.is_subset(&allowed),
        "{body}: no other field, and no card"
    );
    let top: BTreeSet<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(top, ["data", "timestamp", "type"].into_iter().collect());
    (
        id,
        body["type"].as_str().unwrap().to_owned(),
        (
            data["player"].as_str().unwrap().to_owned(),
            data["game_version"].as_u64().unwrap(),
        ),
    )
}

/// The requests the receiver answered 2xx, in order, each checked: id, type, player, version.
fn accepted(receiver: &Endpoint) -> Vec<(String, String, (String, u64))> {
    receiver
        .received()
        .iter()
        .filter(|r| r.answered == 200)
        .map(check)
        .collect()
}

/// The ids the receiver answered 2xx, with their types.
fn delivered(receiver: &Endpoint) -> BTreeMap<String, String> {
    accepted(receiver)
        .into_iter()
        .map(|(id, kind, _)| (id, kind))
        .collect()
}

/// Waits until every expected notification of `game` was delivered; none other was.
async fn all_delivered(
    receiver: &Endpoint,
    client: &mut Client,
    game: &str,
    players: &[String],
    within: Duration,
) -> BTreeMap<String, String> {
    let want = expected(client, game, players).await;
    let started = Instant::now();
    loop {
        let got = delivered(receiver);
        if want.iter().all(|(id, _)| got.contains_key(id)) {
            for (id, kind) in &got {
                assert_eq!(
                    want.get(id),
                    Some(kind),
                    "{id}: only the expected notifications"
                );
            }
            return want;
        }
        assert!(
            started.elapsed() < within,
            "not delivered within {within:?}: {:?}",
            want.keys()
                .filter(|id| !got.contains_key(*id))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_reach_every_player_signed_in_order_through_a_failing_receiver() {
    let receiver = Endpoint::start(Answer::Ok(String::new())).await;
    let server = Server::start(
        &temp_sqlite("webhooks"),
        &[
            "--webhook-url",
            &receiver.url("/hooks?key=kept-out-of-logs"),
            "--webhook-secret",
            SECRET,
            "--webhook-retry-max",
            "1s",
        ],
    )
    .await;
    let mut client = server.client().await;
    let (game, players, tokens) = players_game(&mut client).await;
    play(&mut client, &game, &tokens, 12).await;
    let want = all_delivered(
        &receiver,
        &mut client,
        &game,
        &players,
        Duration::from_secs(15),
    )
    .await;
    assert!(want.values().any(|k| k == "unoflip.game_started"));
    assert!(want.values().filter(|k| *k == "unoflip.your_turn").count() >= 4);
    assert!(
        receiver
            .received()
            .iter()
            .all(|r| r.path == "/hooks?key=kept-out-of-logs")
    );

    // The receiver fails (500) for a while: moves go on, and every notification arrives after.
    receiver.set(Answer::Status(500));
    play(&mut client, &game, &tokens, 6).await;
    eventually(Duration::from_secs(10), "failed attempts", || {
        let receiver = &receiver;
        async move {
            receiver
                .received()
                .iter()
                .filter(|r| r.answered == 500)
                .count()
                >= 2
        }
    })
    .await;
    receiver.set(Answer::Ok(String::new()));
    all_delivered(
        &receiver,
        &mut client,
        &game,
        &players,
        Duration::from_secs(15),
    )
    .await;

    // The receiver is slow (20 s an answer, past the server's 10 s): moves are not held up.
    receiver.set(Answer::Slow(Duration::from_secs(20), String::new()));
    for _ in 0..4 {
        let started = Instant::now();
        play(&mut client, &game, &tokens, 1).await;
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "a move waits for no receiver"
        );
    }
    receiver.set(Answer::Redirect("http://127.0.0.1:9/elsewhere".into()));
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert!(
        receiver.received().iter().any(|r| r.answered == 307),
        "redirected (and not followed: tried here again)"
    );
    receiver.set(Answer::Ok(String::new()));
    all_delivered(
        &receiver,
        &mut client,
        &game,
        &players,
        Duration::from_secs(20),
    )
    .await;

    // The receiver goes away (connections refused), then comes back on its port.
    let (port, log) = (receiver.port, receiver.log());
    drop(receiver);
    play(&mut client, &game, &tokens, 6).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let receiver = Endpoint::start_on(port, Answer::Ok(String::new()), log).await;
    all_delivered(
        &receiver,
        &mut client,
        &game,
        &players,
        Duration::from_secs(15),
    )
    .await;

    // In order per player: each player's first deliveries by version.
    let mut last: HashMap<String, u64> = HashMap::new();
    let mut seen = BTreeSet::new();
    for (id, _, (player, version)) in accepted(&receiver) {
        if !seen.insert(id.clone()) {
            continue;
        }
        let before = last.insert(player.clone(), version).unwrap_or(0);
        assert!(before < version, "{player}: {id} after version {before}");
    }

    // A receiver that refuses a notification for good (400) has it given up, not retried.
    receiver.set(Answer::Status(400));
    let (next, _, next_tokens) = players_game(&mut client).await;
    play(&mut client, &next, &next_tokens, 2).await;
    eventually(Duration::from_secs(10), "a refusal", || {
        let receiver = &receiver;
        async move { receiver.received().iter().any(|r| r.answered == 400) }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let text = super::edge::http(server.port, "GET", "/metrics", "")
        .await
        .1;
    let value = |result: &str| -> u64 {
        text.lines()
            .find(|l| {
                l.starts_with("unoflip_notify_deliveries_total{")
                    && l.contains(&format!("result=\"{result}\""))
            })
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0)
    };
    assert!(value("ok") >= want.len() as u64, "{text}");
    assert!(value("failed") >= 2, "{text}");
    assert!(value("dropped") >= 1, "{text}");
    let refused = receiver
        .received()
        .iter()
        .filter(|r| r.answered == 400)
        .map(|r| check(r).0)
        .collect::<Vec<_>>();
    let unique: BTreeSet<_> = refused.iter().collect();
    assert_eq!(unique.len(), refused.len(), "a 400 is not retried");
    assert!(
        text.contains("unoflip_notify_lag_events{sink=\"webhook:"),
        "{text}"
    );
    let log = server.log();
    let leaked: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("kept-out-of-logs"))
        .collect();
    assert!(
        leaked.is_empty(),
        "the URL's query is not logged: {leaked:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_between_sending_and_recording_sends_again_with_the_same_id() {
    // The receiver records each request as it comes and answers only 3 s later: the server
    // is killed in between, so it sent notifications it never recorded as delivered.
    let receiver = Endpoint::start(Answer::Slow(Duration::from_secs(3), String::new())).await;
    let store = temp_sqlite("webhook-kill");
    let flags = [
        "--webhook-url",
        &receiver.url("/hooks"),
        "--webhook-secret",
        SECRET,
        "--webhook-retry-max",
        "1s",
    ];
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;
    let (game, players, tokens) = players_game(&mut client).await;
    play(&mut client, &game, &tokens, 6).await;
    eventually(Duration::from_secs(10), "a notification sent", || {
        let receiver = &receiver;
        async move { !receiver.received().is_empty() }
    })
    .await;
    server.kill();
    let sent_before: BTreeSet<String> = receiver.received().iter().map(|r| check(r).0).collect();
    receiver.set(Answer::Ok(String::new()));
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;
    play(&mut client, &game, &tokens, 4).await;
    all_delivered(
        &receiver,
        &mut client,
        &game,
        &players,
        Duration::from_secs(20),
    )
    .await;
    let after: Vec<String> = accepted(&receiver).into_iter().map(|a| a.0).collect();
    assert!(
        sent_before
            .iter()
            .any(|id| after.iter().filter(|a| *a == id).count() >= 2),
        "what was sent but not recorded is sent again with the same id: {sent_before:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_holds_each_notification_once_on_its_players_subject() {
    let Some(nats) = Nats::start("notify").await else {
        return;
    };
    let store = temp_sqlite("notify-nats");
    let flags = ["--publish", &nats.url()];
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;
    let (game, players, tokens) = players_game(&mut client).await;
    play(&mut client, &game, &tokens, 8).await;
    // Killed mid-way: what it published but did not record goes again, and JetStream keeps
    // it once.
    server.kill();
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;
    play(&mut client, &game, &tokens, 8).await;
    let want = expected(&mut client, &game, &players).await;
    let js = jetstream::new(async_nats::connect(nats.url().as_str()).await.unwrap());
    let started = Instant::now();
    loop {
        let got = read_notifications(&js).await;
        let mut ids = BTreeMap::new();
        for (subject, id, kind, body) in &got {
            *ids.entry(id.clone()).or_insert(0) += 1;
            let data = &body["data"];
            assert_eq!(
                subject,
                &format!(
                    "unoflip.v1.players.{}.notifications",
                    id_of(data["player"].as_str().unwrap())
                )
            );
            assert_eq!(want.get(id), Some(kind), "{id} not in {want:?}");
        }
        assert!(ids.values().all(|n| *n == 1), "each once: {ids:?}");
        if want.keys().all(|id| ids.contains_key(id)) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not all in NATS: {} of {}",
            ids.len(),
            want.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The notifications stream's messages: subject, id, type header and body.
async fn read_notifications(
    js: &jetstream::Context,
) -> Vec<(String, String, String, serde_json::Value)> {
    let Ok(stream) = js.get_stream("UNOFLIP_NOTIFICATIONS").await else {
        return Vec::new();
    };
    let consumer = stream
        .create_consumer(jetstream::consumer::pull::Config {
            ack_policy: jetstream::consumer::AckPolicy::None,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut out = Vec::new();
    loop {
        let mut batch = consumer
            .fetch()
            .max_messages(1000)
            .expires(Duration::from_millis(300))
            .messages()
            .await
            .unwrap();
        let before = out.len();
        while let Some(message) = batch.next().await {
            let message = message.unwrap();
            let headers = message.headers.clone().unwrap_or_default();
            let header = |name: &str| {
                headers
                    .get(name)
                    .map(|v| v.as_str().to_owned())
                    .unwrap_or_default()
            };
            out.push((
                message.subject.to_string(),
                headers
                    .get(async_nats::header::NATS_MESSAGE_ID)
                    .map(|v| v.as_str().to_owned())
                    .unwrap_or_default(),
                header("Unoflip-Notification"),
                serde_json::from_slice(&message.payload).unwrap(),
            ));
        }
        if out.len() == before {
            return out;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correspondence_turn_is_reminded_before_it_runs_out_across_a_restart() {
    let receiver = Endpoint::start(Answer::Ok(String::new())).await;
    let store = temp_sqlite("webhook-reminder");
    // A 60 s turn, reminded with 85% of it left: 9 s after it began.
    let flags = [
        "--webhook-url",
        &receiver.url("/hooks"),
        "--webhook-secret",
        SECRET,
        "--turn-reminder-left",
        "0.85",
    ];
    let server = Server::start(&store, &flags).await;
    let mut client = server.client().await;
    let timed = pb::GameOptions {
        turn_timer_seconds: 60,
        ..options(2)
    };
    let (game, players, tokens) = players_game_of(&mut client, timed).await;
    let dealt = Instant::now();
    let want = all_delivered(
        &receiver,
        &mut client,
        &game,
        &players,
        Duration::from_secs(10),
    )
    .await;
    let (turn_id, _) = want
        .iter()
        .rev()
        .find(|(_, kind)| *kind == "unoflip.your_turn")
        .expect("a first turn");
    // The server stops before the reminder and starts again: the turn keeps its deadline and
    // is reminded on time.
    tokio::time::sleep(Duration::from_secs(3)).await;
    server.stop();
    let server = Server::start(&store, &flags).await;
    let reminder_id = format!("{turn_id}.reminder");
    let mut reminded = None;
    while reminded.is_none() {
        assert!(dealt.elapsed() < Duration::from_secs(30), "no reminder");
        reminded = accepted(&receiver)
            .into_iter()
            .find(|(id, _, _)| *id == reminder_id);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = dealt.elapsed();
    assert!(
        after >= Duration::from_secs(8),
        "reminded {after:?} after the deal, with 51 of 60 s left"
    );
    let (_, kind, (player, _)) = reminded.unwrap();
    assert_eq!(kind, "unoflip.turn_ending");
    assert!(players.contains(&player));
    let body = receiver
        .received()
        .iter()
        .find(|r| r.header("webhook-id") == Some(reminder_id.as_str()))
        .map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).unwrap())
        .unwrap();
    assert!(body["data"]["turn_deadline"].is_string(), "{body}");
    // The seat moves: its turn is over, and no other reminder comes for it.
    let mut client = server.client().await;
    play(&mut client, &game, &tokens, 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let reminders: Vec<String> = accepted(&receiver)
        .into_iter()
        .map(|a| a.0)
        .filter(|id| id.ends_with(".reminder"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(reminders, vec![reminder_id]);
}

/// Plays `game` to its end, each seat's first card play where it has one.
async fn play_to_the_end(client: &mut Client, game: &str, tokens: &[String]) {
    for _ in 0..2000 {
        if get_game(client, game).await.status != pb::GameStatus::Playing as i32 {
            return;
        }
        for token in tokens {
            let seen = view(client, game, Some(token)).await;
            let Some(action) = crate::kit::pick_move(&seen.legal_actions) else {
                continue;
            };
            let _ = client
                .submit_action(authed(
                    pb::SubmitActionRequest {
                        game: game.to_owned(),
                        action: Some(action),
                        expected_version: Some(seen.version),
                        ..Default::default()
                    },
                    token,
                ))
                .await;
        }
    }
    panic!("{game} did not end in 2000 rounds of moves");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_over_is_notified_to_its_players_with_the_result() {
    let receiver = Endpoint::start(Answer::Ok(String::new())).await;
    let server = Server::start(
        &temp_sqlite("webhook-rematch"),
        &[
            "--webhook-url",
            &receiver.url("/hooks"),
            "--webhook-secret",
            SECRET,
        ],
    )
    .await;
    let mut client = server.client().await;
    let one_round = pb::GameOptions {
        single_round: true,
        ..options(2)
    };
    let (game, players, tokens) = players_game_of(&mut client, one_round).await;
    play_to_the_end(&mut client, &game, &tokens).await;
    let want = all_delivered(
        &receiver,
        &mut client,
        &game,
        &players,
        Duration::from_secs(15),
    )
    .await;
    let over: Vec<&String> = want
        .iter()
        .filter(|(_, kind)| *kind == "unoflip.game_over")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(over.len(), 2, "each player hears the game is over");
    let winners = get_game(&mut client, &game).await.winners;
    for request in receiver.received() {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        if body["type"] == "unoflip.game_over" {
            let seat = body["data"]["seat"].as_u64().unwrap() as u32;
            assert_eq!(body["data"]["won"], winners.contains(&seat), "{body}");
        }
    }
}
