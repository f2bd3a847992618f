//! The `unoflip serve` binary: it serves on the address it is given and stops cleanly on SIGTERM.

use unoflip::proto as pb;

use crate::kit::Server;

// Multi-threaded: `stop` blocks its thread while the client's connection closes on another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_and_stops_cleanly_on_sigterm() {
    let server = Server::start("memory", &[]).await;
    let decks = server
        .client()
        .await
        .get_decks(pb::GetDecksRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(decks.flip.len(), 112);
    // Waits for the exit and asserts that it is clean.
    server.stop();
}
