//! `unoflip play` driven in a pseudo-terminal against a real `unoflip serve` with bot seats: the
//! table shows, moves are taken by number, a bad number is explained, and a server restart is
//! survived by resuming the stream.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rexpect::reader::Options;
use rexpect::session::PtySession;

struct Server {
    port: u16,
    db: std::path::PathBuf,
    child: Option<Child>,
}

impl Server {
    /// A server on a free port (see [`Server::port`]), its games in `db`.
    fn start(db: std::path::PathBuf) -> Server {
        // A port found free may be taken by another test's server before this one binds it:
        // then this server exits, and another port is tried.
        for _ in 0..5 {
            let mut server = Server {
                port: free_port(),
                db: db.clone(),
                child: None,
            };
            if server.try_spawn() {
                return server;
            }
        }
        panic!("no server could start on a free port");
    }

    /// Starts the server again on its port (after [`Server::kill`]).
    fn spawn(&mut self) {
        assert!(
            self.try_spawn(),
            "the server did not start again on its port"
        );
    }

    /// Starts the server; false if it exited before it listened (its port was taken).
    fn try_spawn(&mut self) -> bool {
        let mut child = Command::new(env!("CARGO_BIN_EXE_unoflip"))
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{}", self.port),
                "--store",
                &format!("sqlite:{}", self.db.display()),
                "--bot-delay-ms",
                "20",
            ])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        loop {
            // Exited: another process has the port (what answers there is not this server).
            if child.try_wait().unwrap().is_some() {
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // What answered may have been another server, this one failing to bind just after.
        std::thread::sleep(Duration::from_millis(100));
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        self.child = Some(child);
        true
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

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

#[test]
fn play_in_a_terminal_against_server_bots_and_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!("unoflip-play-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("games.sqlite3");
    let _ = std::fs::remove_file(&db);
    let mut server = Server::start(db);
    let port = server.port;

    let mut command = Command::new(env!("CARGO_BIN_EXE_unoflip"));
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
    server.spawn();
    let after = move_first(&mut play);
    assert!(after.contains("YOUR TURN"), "{after}");
    play.exp_regex("you (played|drew|kept) ").unwrap();

    play.exp_string("type a number and Enter").unwrap();
    play.send_line("q").unwrap();
    play.exp_string("Bye.").unwrap();
    play.exp_eof().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `unoflip play`'s command against a server on `port`: seat 0 of three, against two bots.
fn play_command(port: u16) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_unoflip"));
    command.args([
        "play",
        "--server",
        &format!("http://127.0.0.1:{port}"),
        "--seats",
        "3",
    ]);
    command
}

#[test]
fn no_color_or_an_output_that_is_not_a_terminal_gets_plain_text() {
    let dir = std::env::temp_dir().join(format!("unoflip-play-plain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(dir.join("games.sqlite3"));
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
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_round_result_stays_on_screen_until_enter() {
    let dir = std::env::temp_dir().join(format!("unoflip-play-round-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(dir.join("games.sqlite3"));
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
    let _ = std::fs::remove_dir_all(&dir);
}
