//! SIGTERM under load: the server stops taking connections, ends its streams with
//! `UNAVAILABLE` / `SERVER_STOPPING`, answers the moves in flight and exits cleanly; after a
//! restart every acknowledged move is there.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tonic::Code;
use unoflip::proto as pb;

use super::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_streams_with_a_reason_and_loses_no_acknowledged_move() {
    let store = temp_sqlite("shutdown");
    let server = Server::start(&store, &["--bot-delay-ms", "0"]).await;
    let port = server.port;
    let mut client = server.client().await;
    // A person against a bot, moving as fast as it can; the bot answers at once.
    let (game, tokens) = started(
        &mut client,
        pb::GameOptions {
            bot_seats: vec![1],
            ..options(2)
        },
    )
    .await;
    let mut seat_stream = seat_stream(&mut client, &game, &tokens[0], true).await;
    let mut firehose = firehose_stream(&mut client).await;
    let acknowledged = Arc::new(AtomicU64::new(0));
    let mover = {
        let (mut c, game, token, acked) = (
            client.clone(),
            game.clone(),
            tokens[0].clone(),
            acknowledged.clone(),
        );
        tokio::spawn(async move {
            loop {
                let Ok(v) = c
                    .get_view(authed(pb::GetViewRequest { game: game.clone() }, &token))
                    .await
                else {
                    return;
                };
                let Some(v) = v.into_inner().view else {
                    return;
                };
                let Some(action) = plain_move(&v) else {
                    if v.awaiting == pb::Awaiting::MatchOver as i32 {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                };
                match c
                    .submit_action(authed(
                        pb::SubmitActionRequest {
                            game: game.clone(),
                            action: Some(action),
                            expected_version: Some(v.version),
                            ..Default::default()
                        },
                        &token,
                    ))
                    .await
                {
                    Ok(answer) => {
                        acked.fetch_max(answer.into_inner().version, Ordering::SeqCst);
                    }
                    Err(status) if status.code() == Code::FailedPrecondition => {}
                    Err(_) => return,
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(acknowledged.load(Ordering::SeqCst) > 0, "moves were made");
    // SIGTERM while moves are in flight: a clean exit.
    server.stop();
    let _ = mover.await;
    // Both streams were ended by the server, with a reason to go elsewhere.
    for ended in [drain(&mut seat_stream).await, drain(&mut firehose).await] {
        let status = ended.expect("the stream ended with a status, not silently");
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::Unavailable, "SERVER_STOPPING"),
            "{status:?}"
        );
    }
    let last = acknowledged.load(Ordering::SeqCst);
    let server = Server::start_on(port, &store, &["--bot-delay-ms", "0"]).await;
    let mut client = server.client().await;
    let version = get_game(&mut client, &game).await.version;
    assert!(
        version >= last,
        "acknowledged version {last}, stored only {version}"
    );
}

/// Reads a stream to its end: the status it ended with, if any.
async fn drain<T>(stream: &mut tonic::Streaming<T>) -> Option<tonic::Status> {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.message()).await {
            Ok(Ok(Some(_))) => {}
            Ok(Ok(None)) | Err(_) => return None,
            Ok(Err(status)) => return Some(status),
        }
    }
}
