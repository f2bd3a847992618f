//! `unoflip play` driven in a pseudo-terminal against a real `unoflip serve` with bot seats: the
//! table shows, moves are taken by number, a bad number is explained, and a server restart is
//! survived by resuming the stream. The tests block on the terminal, each on a thread of a
//! multi-threaded runtime of its own.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rexpect::reader::Options;
use rexpect::session::PtySession;

use crate::kit::{Server, temp_sqlite};

/// The server's flags: its bots move after 20 ms, so a person can follow in the terminal.
const FLAGS: &[&str] = &["--bot-delay-ms", "20"];

/// `command` in a pseudo-terminal, its output kept as it is (escape codes included).
fn terminal(command: Command) -> PtySession {
    rexpect::session::spawn_with_options(
        command,
        Options::new()
            .timeout_ms(Some(30_000))
            .strip_ansi_escape_codes(false),
    )
    .unwrap()
}

/// Waits for the move list and picks the first action; returns the screen before it.
fn move_first(play: &mut PtySession) -> String {
    let screen = play.exp_string("type a number and Enter").unwrap();
    play.send_line("1").unwrap();
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_in_a_terminal_against_server_bots_and_survive_a_restart() {
    let store = temp_sqlite("play");
    let server = Server::start(&store, FLAGS).await;
    let port = server.port;

    let mut command = Command::new(crate::kit::binary::binary());
    command.args([
        "play",
        "--server",
        &format!("http://127.0.0.1:{port}"),
        "--name",
        "tester",
        "--seats",
        "3",
        "--bot-level",
        "expert",
    ]);
    let mut play = terminal(command);

    // The bots play at the level asked for (the search bot, thinking on the server).
    play.exp_regex("Created games/[^ ]+ with 2 expert bots.")
        .unwrap();
    play.exp_string("seat 0. Come back to this seat with:")
        .unwrap();
    let first = move_first(&mut play);
    assert!(first.contains("YOUR TURN"), "{first}");
    assert!(
        first.contains("light side") || first.contains("dark side"),
        "{first}"
    );
    assert!(first.contains("top discard: "), "{first}");
    assert!(first.contains("your hand ("), "{first}");
    assert!(first.contains("color: "), "{first}");
    // The opponents' counts and visible (dark) faces, and the numbered legal actions. Seats
    // are named as on the web page: the server's bots are "bot <seat>".
    assert!(first.contains("  bot 1: "), "{first}");
    assert!(first.contains("  bot 2: "), "{first}");
    assert!(first.contains("your move:\r\n  1) "), "{first}");
    // Card colors are painted with ANSI colors, and the screen is redrawn.
    assert!(first.contains("\x1b[2J\x1b[H"), "{first}");
    assert!(
        ["\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[34m"]
            .iter()
            .any(|c| first.contains(c)),
        "{first}"
    );

    // The first action was taken: the log says what it was. A wild turned up first
    // [F-START-4] makes the first prompt a color; then the turn's move is the next prompt.
    let (_, first_action) = play.exp_regex("you (played|drew|kept|chose) ").unwrap();
    if first_action.starts_with("you chose") {
        move_first(&mut play);
    }
    play.exp_regex("you (played|drew|kept) ").unwrap();

    // A number out of range is explained and changes nothing.
    play.exp_string("type a number and Enter").unwrap();
    play.send_line("99").unwrap();
    play.exp_string("type a number from 1 to").unwrap();

    // The server dies and comes back on the same store: the client resumes and plays on.
    server.kill();
    play.exp_string("connection lost").unwrap();
    let _server = Server::start_on(port, &store, FLAGS).await;
    let after = move_first(&mut play);
    assert!(after.contains("YOUR TURN"), "{after}");
    play.exp_regex("you (played|drew|kept) ").unwrap();

    play.exp_string("type a number and Enter").unwrap();
    play.send_line("q").unwrap();
    play.exp_string("Bye.").unwrap();
    play.exp_eof().unwrap();
}

/// `unoflip play`'s command against a server on `port`: seat 0 of three, against two bots.
fn play_command(port: u16) -> Command {
    let mut command = Command::new(crate::kit::binary::binary());
    command.args([
        "play",
        "--server",
        &format!("http://127.0.0.1:{port}"),
        "--seats",
        "3",
    ]);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_color_or_an_output_that_is_not_a_terminal_gets_plain_text() {
    let server = Server::start(&temp_sqlite("play-plain"), FLAGS).await;
    let port = server.port;

    // NO_COLOR in a terminal: the table without colors or screen clearing.
    let mut command = play_command(port);
    command.env("NO_COLOR", "1");
    let mut play = terminal(command);
    let screen = play.exp_string("type a number and Enter").unwrap();
    assert!(screen.contains("your hand ("), "{screen}");
    assert!(
        !screen.contains('\x1b'),
        "escape codes with NO_COLOR: {screen:?}"
    );
    play.send_line("q").unwrap();
    play.exp_string("Bye.").unwrap();

    // Output to a pipe: plain text too.
    let mut child = play_command(port)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::{BufRead, Write};
        let mut seen = String::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("type a number and Enter") {
                let _ = stdin.write_all(b"q\n");
            }
        }
        seen
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "play did not quit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = reader.join().unwrap();
    assert!(seen.contains("your hand ("), "{seen}");
    assert!(seen.contains("Bye."), "{seen}");
    assert!(!seen.contains('\x1b'), "escape codes in a pipe: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_result_stays_on_screen_until_enter() {
    let server = Server::start(&temp_sqlite("play-round"), FLAGS).await;
    let port = server.port;
    let mut play = terminal(play_command(port));
    // Take the first action offered until the first round ends: once per event number, since
    // the same prompt may be drawn again (a line typed ahead would be taken as the Enter).
    let mut moves = 0;
    let mut answered = 0;
    let result = loop {
        let (screen, said) = play
            .exp_regex("type a number and Enter|press Enter for the next round")
            .unwrap();
        if said.starts_with("press") {
            break screen;
        }
        let event = screen
            .rsplit("== games/")
            .next()
            .and_then(|header| header.split(" event ").nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .expect("the table's event number");
        if event > answered {
            answered = event;
            moves += 1;
            assert!(moves < 2_000, "no round ended in {moves} moves");
            play.send_line("1").unwrap();
        }
    };
    let last_screen = result.rsplit("\x1b[2J\x1b[H").next().unwrap();
    assert!(
        last_screen.contains("*** round 1 won by "),
        "the result box: {last_screen}"
    );
    // The next round goes on (the bots play until it is this seat's turn), but every screen
    // drawn meanwhile keeps the result and offers no move, until Enter.
    let mut held = String::new();
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        match play.try_read() {
            Some(c) => held.push(c),
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    assert!(
        !held.contains("your move:"),
        "a move offered before Enter: {held}"
    );
    for screen in held
        .split("\x1b[2J\x1b[H")
        .filter(|s| s.contains("== games/"))
    {
        assert!(
            screen.contains("press Enter for the next round"),
            "a screen without the result before Enter: {screen}"
        );
    }
    // A move typed while the result shows (say, just before the round ended) is not the Enter.
    play.send_line("1").unwrap();
    let typed = play
        .exp_string("the round is over: press Enter for the next round")
        .unwrap();
    let typed = typed.rsplit("\x1b[2J\x1b[H").next().unwrap();
    assert!(
        typed.contains("*** round 1 won by ") && !typed.contains("your move:"),
        "{typed}"
    );
    play.send_line("").unwrap();
    let (after_enter, _) = play.exp_regex("your move:").unwrap();
    let after_enter = after_enter.rsplit("\x1b[2J\x1b[H").next().unwrap();
    assert!(
        !after_enter.contains("press Enter for the next round") && after_enter.contains("round 2"),
        "{after_enter}"
    );
    play.exp_string("type a number and Enter").unwrap();
    play.send_line("q").unwrap();
    play.exp_string("Bye.").unwrap();
}
