//! On a store other servers append to, a server follows their appends through the store's
//! announcements. An announcement of another server's move that arrives while this server is
//! committing a move of its own must not be lost: the game catches up with it at once, not at
//! the next move.

use std::sync::Arc;
use std::time::Duration;

use unoflip::proto as pb;
use unoflip::rules::{Action, Game, Viewer, decide};
use unoflip::service::Config;
use unoflip::store::{Change, Events, MemoryStore};

use super::harness::*;
use super::tampered::Tampered;

/// Appends the next legal move of `game`, as another server would; its new version.
async fn other_server_moves(store: &MemoryStore, game: &str) -> u64 {
    let events = store.read(game, 0).await.unwrap();
    let state = Game::replay(&events).unwrap();
    let (seat, action) = next_move(&state);
    let next = decide(&state, seat, action, &mut rand::rng()).unwrap();
    store
        .append(game, events.len() as u64, &next, None)
        .await
        .unwrap()
}

/// A seat that may move, and its first legal move that is not a call or a catch of UNO.
fn next_move(state: &Game) -> (usize, Action) {
    (0..state.seats())
        .find_map(|seat| {
            state
                .legal_actions(seat)
                .into_iter()
                .find(|a| !matches!(a, Action::CallUno | Action::Catch { .. }))
                .map(|a| (seat, a))
        })
        .expect("someone can move")
}

/// A store announcing its games started: a game on it, two seats.
async fn two_seats(store: &Arc<Tampered>) -> (Direct, String) {
    let server = Direct::new(store.clone(), Config::default());
    let game = server.create(&options(pb::Ruleset::Flip, 2)).await;
    server.join(&game, Some(0), "a").await;
    server.join(&game, Some(1), "b").await;
    server.start(&game).await;
    (server, game)
}

fn shared_store() -> Arc<Tampered> {
    Arc::new(Tampered {
        shared: true,
        ..Tampered::new()
    })
}

/// Waits up to 2 s for the game's view to reach `version`; the version it shows.
async fn view_reaches(server: &Direct, game: &str, version: u64) -> u64 {
    let mut seen = 0;
    for _ in 0..100 {
        seen = server.view(game, Viewer::Spectator).await.version;
        if seen == version {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_servers_move_announced_during_a_commit_is_caught_up_with() {
    let store = shared_store();
    let (server, game) = two_seats(&store).await;
    let dealt = server.view(&game, Viewer::Spectator).await.version;

    // This server's move, and during its commit, another server's.
    *store.after_next_append.lock().unwrap() = Some(Box::new(|inner, changes, game| {
        Box::pin(async move {
            let theirs = other_server_moves(&inner, &game).await;
            let _ = changes.send(Change::Appended {
                game,
                version: theirs,
            });
            // The announcement is taken in while this server's append has not returned.
            tokio::time::sleep(Duration::from_millis(200)).await;
        })
    }));
    let state = Game::replay(&store.inner.read(&game, 0).await.unwrap()).unwrap();
    let (seat, action) = next_move(&state);
    let ours = server.submit(&game, seat, action).await.unwrap().version;
    assert!(ours > dealt, "our move was appended: {dealt} -> {ours}");
    let stored = store.inner.read(&game, 0).await.unwrap().len() as u64;
    assert!(stored > ours, "the other server's move is in the store");

    // No other move comes: the game must catch up on the announcement alone.
    let seen = view_reaches(&server, &game, stored).await;
    assert_eq!(
        seen, stored,
        "the view stays at our move, {ours}, short of the store's {stored}"
    );
}

/// A store that lost track of what moved (its notifications lagged or reconnected) says only
/// that something did: every game reads the store again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announcement_that_names_no_game_makes_every_game_catch_up() {
    let store = shared_store();
    let (server, game) = two_seats(&store).await;
    let dealt = server.view(&game, Viewer::Spectator).await.version;
    let stored = other_server_moves(&store.inner, &game).await;
    assert!(stored > dealt);
    let _ = store.changes.send(Change::Any);
    assert_eq!(view_reaches(&server, &game, stored).await, stored);
}
