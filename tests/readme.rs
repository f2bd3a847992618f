//! The README's buf curl session runs against a server in this process, so the README cannot drift. It needs
//! the buf CLI (`.ci/run` installs it); without it the test says so and skips.

#[path = "kit/mod.rs"]
mod kit;

use std::path::{Path, PathBuf};

use kit::InProcess;
use unoflip::service::{Config, Lifecycle};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The buf CLI: `$BUF`, then `buf` on the PATH, then the copy `.ci/run` installs (clients/web).
fn find_buf() -> Option<PathBuf> {
    kit::find_tool(
        "BUF",
        "buf",
        &[root().join("clients/web/node_modules/.bin/buf")],
    )
}

#[test]
fn the_readme_shows_the_session_script_verbatim() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let script = std::fs::read_to_string(root().join("examples/session.sh")).unwrap();
    assert!(
        readme.contains(&script),
        "README.md must show examples/session.sh exactly"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_session_plays_a_move_with_buf_curl() {
    let Some(buf) = find_buf() else {
        eprintln!(
            "SKIPPED: the buf CLI was not found (set BUF, put buf on PATH, or run .ci/run); the README session was not run"
        );
        return;
    };
    let config = Config {
        lifecycle: Lifecycle {
            bot_delay: std::time::Duration::from_millis(300),
            ..Lifecycle::default()
        },
        ..Config::default()
    };
    let server = InProcess::with_config(config).await;
    let mut path =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect::<Vec<_>>();
    path.insert(0, buf.parent().unwrap().to_path_buf());
    let output = tokio::process::Command::new("bash")
        .arg("examples/session.sh")
        .current_dir(root())
        .env("ADDR", format!("http://{}", server.addr))
        .env("PATH", std::env::join_paths(path).unwrap())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("my legal actions: ["), "{stdout}");
    assert!(
        stdout.contains("\"events\""),
        "the move was answered with its events: {stdout}"
    );
}
