//! The `unoflip serve` binary: it serves on the address it is given and stops cleanly on SIGTERM.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use unoflip::proto as pb;
use unoflip::proto::uno_flip_service_client::UnoFlipServiceClient;

#[tokio::test]
async fn serve_answers_and_stops_cleanly_on_sigterm() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_unoflip"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--store",
            "memory",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut client = loop {
        match UnoFlipServiceClient::connect(format!("http://127.0.0.1:{port}")).await {
            Ok(c) => break c,
            Err(_) if started.elapsed() < Duration::from_secs(20) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the server did not come up: {e}"),
        }
    };
    let decks = client
        .get_decks(pb::GetDecksRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(decks.flip.len(), 112);
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let stopped = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "a clean exit on SIGTERM: {status}");
            return;
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(10),
            "still running after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
