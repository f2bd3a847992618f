//! The README's curl session and docs/api.md's curl examples run against the built
//! `unoflip serve`, as a user runs them, so the docs cannot drift. They need curl and jq (`.ci/run` makes sure of both);
//! without them the tests say so and skip.

#[path = "kit/mod.rs"]
mod kit;

use std::path::{Path, PathBuf};

use kit::Server;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// curl and jq, or why the examples cannot run.
fn tools() -> Result<(PathBuf, PathBuf), &'static str> {
    let curl = kit::find_tool("CURL", "curl", &[]).ok_or("curl was not found")?;
    let jq = kit::find_tool("JQ", "jq", &[]).ok_or("jq was not found")?;
    Ok((curl, jq))
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

#[test]
fn the_api_doc_shows_the_connect_script_verbatim() {
    let api = std::fs::read_to_string(root().join("docs/api.md")).unwrap();
    let script = std::fs::read_to_string(root().join("examples/connect.sh")).unwrap();
    assert!(
        api.contains(&script),
        "docs/api.md must show examples/connect.sh exactly"
    );
}

/// Runs `script` against the built server: its standard output.
async fn run(script: &str) -> Option<String> {
    let (curl, jq) = match tools() {
        Ok(found) => found,
        Err(why) => {
            eprintln!("SKIPPED: {why} (put it on PATH or run .ci/run); {script} was not run");
            return None;
        }
    };
    let server = Server::start("memory", &["--bot-delay-ms", "300"]).await;
    let mut path =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect::<Vec<_>>();
    path.insert(0, curl.parent().unwrap().to_path_buf());
    path.insert(0, jq.parent().unwrap().to_path_buf());
    let output = tokio::process::Command::new("bash")
        .arg(script)
        .current_dir(root())
        .env("ADDR", format!("http://127.0.0.1:{}", server.port))
        .env("PATH", std::env::join_paths(path).unwrap())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{script}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_session_plays_a_move_with_curl() {
    let Some(stdout) = run("examples/session.sh").await else {
        return;
    };
    assert!(stdout.contains("my legal actions: [{"), "{stdout}");
    assert!(
        stdout.contains("\"events\":[{"),
        "the move was answered with its events: {stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_doc_connect_examples_read_refuse_and_stream() {
    let Some(stdout) = run("examples/connect.sh").await else {
        return;
    };
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], r#"{"flip":112,"classic":108}"#, "{stdout}");
    assert!(
        lines[1].starts_with(r#"{"code":"not_found","#)
            && lines[1].contains(r#""reason":"GAME_NOT_FOUND""#)
            && lines[1].ends_with(" HTTP 404"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with(r#"{"lobby":{"name":"games/"#),
        "{stdout}"
    );
}
