//! A request id is looked up in the store only when it is a retry the game's task holds no
//! answer for: a new id is known to be new from memory alone (a game this server started knows
//! every id; a game rebuilt from the store reads its ids once), and a retry is still answered
//! with its first answer once the task has forgotten it, after a restart, and on a store other
//! servers share.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use unoflip::proto as pb;

use super::common::plain_move;
use super::harness::*;
use super::tampered::{Tampered, start_server};

/// A two-seat game long enough for thousands of moves.
async fn long_game(client: &mut Client) -> (String, Vec<String>) {
    started(
        client,
        pb::GameOptions {
            target_score: 100_000,
            single_round: false,
            ..options(pb::Ruleset::Flip, 2)
        },
    )
    .await
}

/// The seat to move's request to make one move (a card when it has one) with request id `id`.
async fn next_move(
    client: &mut Client,
    game: &str,
    tokens: &[String],
    id: &str,
) -> tonic::Request<pb::SubmitActionRequest> {
    let public = view(client, game, None).await;
    let token = &tokens[public.turn as usize];
    let mine = view(client, game, Some(token)).await;
    let action = mine
        .legal_actions
        .iter()
        .find(|a| matches!(a.kind, Some(pb::action::Kind::PlayCard(_))))
        .cloned()
        .or_else(|| {
            let dark = public.side == pb::Side::Dark as i32;
            let awaiting = pb::Awaiting::try_from(public.awaiting).ok()?;
            plain_move(awaiting, dark).map(unoflip::service::grpc::convert::action)
        });
    assert!(action.is_some(), "no move for {id}: {public:?}");
    authed(
        pb::SubmitActionRequest {
            game: game.to_owned(),
            action,
            request_id: id.to_owned(),
            expected_version: Some(mine.version),
        },
        token,
    )
}

/// Sends `request` (again, for a retry) and returns its answer.
async fn answer(
    client: &mut Client,
    request: &tonic::Request<pb::SubmitActionRequest>,
) -> pb::SubmitActionResponse {
    client
        .submit_action(again(request))
        .await
        .unwrap()
        .into_inner()
}

/// The same request again, for a retry.
fn again(
    request: &tonic::Request<pb::SubmitActionRequest>,
) -> tonic::Request<pb::SubmitActionRequest> {
    let mut retry = tonic::Request::new(request.get_ref().clone());
    *retry.metadata_mut() = request.metadata().clone();
    retry
}

#[tokio::test]
async fn a_game_this_server_started_looks_up_only_a_retry_it_forgot() {
    let store = Arc::new(Tampered::new());
    let server = start_server(&store).await;
    let mut client = client(server.addr).await;
    let (game, tokens) = long_game(&mut client).await;
    let first_request = next_move(&mut client, &game, &tokens, "m0").await;
    let first = answer(&mut client, &first_request).await;
    // The task keeps the last 1,024 answers: until then no id is looked up in the store.
    for i in 1..1024 {
        let request = next_move(&mut client, &game, &tokens, &format!("m{i}")).await;
        client.submit_action(request).await.unwrap();
    }
    assert_eq!(store.request_reads.load(Ordering::Relaxed), 0);
    // The 1,025th answer makes it forget the others' answers, not their ids: new ids are
    // still new without a read.
    for i in 1024..1100 {
        let request = next_move(&mut client, &game, &tokens, &format!("m{i}")).await;
        client.submit_action(request).await.unwrap();
    }
    assert_eq!(store.request_reads.load(Ordering::Relaxed), 0);
    let version = game_version(&mut client, &game).await;
    let retried = answer(&mut client, &first_request).await;
    assert_eq!(retried, first, "the first answer, from the store");
    assert_eq!(store.request_reads.load(Ordering::Relaxed), 1, "the retry");
    assert_eq!(store.requests_reads.load(Ordering::Relaxed), 0);
    assert_eq!(
        game_version(&mut client, &game).await,
        version,
        "nothing changed"
    );
}

/// A game after a restart: one move made (request id `before`) on a server that then stopped,
/// and a new server on the same store, where the game comes back from the store.
struct Restarted {
    _server: InProcess,
    client: Client,
    game: String,
    tokens: Vec<String>,
    /// The move made before the restart, and its answer.
    before: tonic::Request<pb::SubmitActionRequest>,
    first: pb::SubmitActionResponse,
}

async fn restarted(store: &Arc<Tampered>) -> Restarted {
    let server = start_server(store).await;
    let mut client = client(server.addr).await;
    let (game, tokens) = long_game(&mut client).await;
    let before = next_move(&mut client, &game, &tokens, "before").await;
    let first = answer(&mut client, &before).await;
    assert_eq!(store.request_reads.load(Ordering::Relaxed), 0);
    drop(server);
    let server = start_server(store).await;
    Restarted {
        client: super::harness::client(server.addr).await,
        _server: server,
        game,
        tokens,
        before,
        first,
    }
}

#[tokio::test]
async fn a_game_rebuilt_from_the_store_reads_its_ids_once_and_looks_up_only_retries() {
    let store = Arc::new(Tampered::new());
    let mut r = restarted(&store).await;
    let retried = answer(&mut r.client, &r.before).await;
    assert_eq!(retried, r.first, "the first answer, after a restart");
    assert_eq!(
        store.requests_reads.load(Ordering::Relaxed),
        1,
        "the game's ids"
    );
    assert_eq!(
        store.request_reads.load(Ordering::Relaxed),
        1,
        "the retry's"
    );
    for i in 0..5 {
        let request = next_move(&mut r.client, &r.game, &r.tokens, &format!("after{i}")).await;
        let version = game_version(&mut r.client, &r.game).await;
        let answer = r.client.submit_action(request).await.unwrap().into_inner();
        assert!(answer.version > version, "a new id is a new move");
    }
    assert_eq!(store.requests_reads.load(Ordering::Relaxed), 1, "read once");
    assert_eq!(
        store.request_reads.load(Ordering::Relaxed),
        1,
        "new ids are not looked up"
    );
}

/// A game rebuilt from the store whose first request is new reads the game's ids once, then
/// knows a retry of a request made before the restart.
#[tokio::test]
async fn a_game_rebuilt_from_the_store_knows_its_ids_after_a_new_one() {
    let store = Arc::new(Tampered::new());
    let mut r = restarted(&store).await;
    let request = next_move(&mut r.client, &r.game, &r.tokens, "after").await;
    let made = answer(&mut r.client, &request).await;
    assert_eq!(store.requests_reads.load(Ordering::Relaxed), 1);
    assert_eq!(store.request_reads.load(Ordering::Relaxed), 0, "a new id");
    let version = game_version(&mut r.client, &r.game).await;
    assert_eq!(answer(&mut r.client, &request).await, made, "from memory");
    assert_eq!(
        answer(&mut r.client, &r.before).await,
        r.first,
        "from the store"
    );
    assert_eq!(store.request_reads.load(Ordering::Relaxed), 1);
    assert_eq!(store.requests_reads.load(Ordering::Relaxed), 1);
    assert_eq!(
        game_version(&mut r.client, &r.game).await,
        version,
        "nothing changed"
    );
}

#[tokio::test]
async fn on_a_shared_store_a_game_this_server_started_reads_no_request_id_either() {
    let store = Arc::new(Tampered {
        shared: true,
        ..Tampered::new()
    });
    let server = start_server(&store).await;
    let mut client = client(server.addr).await;
    let (game, tokens) = long_game(&mut client).await;
    for i in 0..3 {
        let request = next_move(&mut client, &game, &tokens, &format!("m{i}")).await;
        client.submit_action(request).await.unwrap();
    }
    assert_eq!(store.request_reads.load(Ordering::Relaxed), 0);
}

/// A request retried on server A after server B made it: A has not read B's move yet (B's
/// announcements do not reach it), finds the game moved on when it commits, reads B's move,
/// and answers with B's answer instead of making the move a second time.
#[tokio::test]
async fn a_request_another_server_made_first_gets_that_servers_answer() {
    let events = Arc::new(unoflip::store::MemoryStore::new());
    let on_store = || {
        Arc::new(Tampered {
            inner: events.clone(),
            shared: true,
            ..Tampered::new()
        })
    };
    let (store_a, store_b) = (on_store(), on_store());
    let server_a = start_server(&store_a).await;
    let mut a = client(server_a.addr).await;
    let (game, tokens) = long_game(&mut a).await;
    let opening = next_move(&mut a, &game, &tokens, "m0").await;
    a.submit_action(opening).await.unwrap();

    let server_b = start_server(&store_b).await;
    let mut b = super::harness::client(server_b.addr).await;
    let request = next_move(&mut b, &game, &tokens, "made-on-b").await;
    let made = answer(&mut b, &request).await;
    let version = game_version(&mut b, &game).await;

    let retried = answer(&mut a, &request).await;
    assert_eq!(retried, made, "B's answer, from the store");
    assert_eq!(
        game_version(&mut b, &game).await,
        version,
        "nothing changed"
    );
    assert_eq!(
        game_version(&mut a, &game).await,
        version,
        "A read B's move"
    );
    assert!(store_a.request_reads.load(Ordering::Relaxed) >= 1);
    assert!(
        store_a.requests_reads.load(Ordering::Relaxed) >= 1,
        "B's ids"
    );
}
