//! `unoflip play`: a terminal client for a person. It talks to a server over gRPC like any other
//! client: creates or joins a game (optionally with bot seats), follows the seat's stream, shows
//! the table and offers the legal actions the server lists, by number. When the connection drops
//! (a server restart, say) it resumes the stream from the last event it saw.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio_stream::StreamExt;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

use crate::proto as pb;
use crate::proto::action::Kind as A;
use crate::proto::event::Kind as E;
use crate::proto::subscribe_response::Kind as S;
use crate::proto::uno_flip_service_client::UnoFlipServiceClient;

type Client = UnoFlipServiceClient<Channel>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Events kept on screen.
const LOG_LINES: usize = 8;

/// What `unoflip play` was asked to do.
#[derive(Clone, Debug)]
pub struct PlayOptions {
    /// The server, e.g. `http://127.0.0.1:50051`.
    pub server: String,
    /// Join this game (`games/{id}`) instead of creating one.
    pub game: Option<String>,
    /// The seat wanted when joining.
    pub seat: Option<u32>,
    /// Come back to a seat joined earlier with its token.
    pub token: Option<String>,
    /// The player's display name.
    pub name: String,
    /// `true` for classic UNO when creating a game.
    pub classic: bool,
    /// Seats of a created game.
    pub seats: u32,
    /// Bot seats of a created game (the last ones); `seats - 1` when absent.
    pub bots: Option<u32>,
    /// How the bots of a created game play.
    pub bot_level: crate::bots::Level,
    /// Card colors as ANSI colors.
    pub color: bool,
}

/// The seat being played.
struct Seat {
    game: String,
    seat: u32,
    token: String,
}

impl Seat {
    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        if let Ok(value) = MetadataValue::try_from(format!("Bearer {}", self.token)) {
            request.metadata_mut().insert("authorization", value);
        }
        request
    }
}

/// The reason code of a refusal (its ErrorInfo), or the status message.
fn reason(status: &Status) -> String {
    use tonic_types::StatusExt;
    match status.get_error_details().error_info() {
        Some(info) => format!("{}: {}", info.reason, status.message()),
        None => format!("{:?}: {}", status.code(), status.message()),
    }
}

/// Runs the client until the match ends or the player quits, reading moves from `input`.
pub async fn run(options: PlayOptions, input: impl AsyncBufRead + Unpin) -> Result<(), BoxError> {
    let channel = Endpoint::from_shared(options.server.clone())?
        .connect_timeout(Duration::from_secs(5))
        .connect_lazy();
    let mut client = UnoFlipServiceClient::new(channel);
    let seat = take_seat(&mut client, &options).await?;
    say(&format!(
        "{}, seat {}. Come back to this seat with:\n  unoflip play --server {} --game {} --token {}\n",
        seat.game, seat.seat, options.server, seat.game, seat.token
    ));
    let mut table = Table::new(&seat, options.color);
    table.play(&mut client, &seat, input).await
}

/// Creates or joins the game, starts it when every seat is taken.
async fn take_seat(client: &mut Client, options: &PlayOptions) -> Result<Seat, BoxError> {
    if let Some(token) = &options.token {
        let game = options
            .game
            .clone()
            .ok_or("--token needs --game, the game the seat is in")?;
        let mut seat = Seat {
            game: game.clone(),
            seat: 0,
            token: token.clone(),
        };
        let view = client
            .get_view(seat.request(pb::GetViewRequest { game }))
            .await
            .map_err(|s| reason(&s))?
            .into_inner()
            .view
            .unwrap_or_default();
        seat.seat = view.seat.ok_or("the token is not a seat of this game")?;
        return Ok(seat);
    }
    let game = match &options.game {
        Some(game) => game.clone(),
        None => {
            let bots = options.bots.unwrap_or(options.seats.saturating_sub(1));
            let first_bot = options.seats.saturating_sub(bots);
            let game_options = pb::GameOptions {
                ruleset: if options.classic {
                    pb::Ruleset::Classic
                } else {
                    pb::Ruleset::Flip
                } as i32,
                seats: options.seats,
                bot_seats: (first_bot..options.seats).collect(),
                bot_level: crate::service::grpc::convert::bot_level(options.bot_level) as i32,
                ..Default::default()
            };
            let name = client
                .create_game(pb::CreateGameRequest {
                    options: Some(game_options),
                })
                .await
                .map_err(|s| reason(&s))?
                .into_inner()
                .game
                .ok_or("the server sent no game")?
                .name;
            if bots > 0 {
                say(&format!(
                    "Created {name} with {bots} {} bot{}.\n",
                    options.bot_level.name(),
                    if bots == 1 { "" } else { "s" }
                ));
            }
            name
        }
    };
    let joined = client
        .join_game(pb::JoinGameRequest {
            game: game.clone(),
            seat: options.seat,
            player_name: options.name.clone(),
            player: String::new(),
        })
        .await
        .map_err(|s| reason(&s))?
        .into_inner();
    let seat = Seat {
        game,
        seat: joined.seat,
        token: joined.seat_token,
    };
    // The waiting room: the game's stream sends the lobby whenever a seat is taken, then the
    // game once it starts.
    let mut stream = client
        .subscribe(seat.request(pb::SubscribeRequest {
            game: seat.game.clone(),
            after_version: 0,
            include_view: false,
        }))
        .await
        .map_err(|s| reason(&s))?
        .into_inner();
    let mut said = None;
    while let Some(message) = stream.next().await {
        let message = message.map_err(|s| reason(&s))?;
        match message.kind {
            Some(S::Lobby(info)) => {
                let taken = info.seats.iter().filter(|s| s.taken).count();
                if taken == info.seats.len() {
                    // Someone must deal; a refusal means another seat already did.
                    let _ = client
                        .start_game(seat.request(pb::StartGameRequest {
                            game: seat.game.clone(),
                        }))
                        .await;
                } else if said != Some(taken) {
                    said = Some(taken);
                    say(&format!(
                        "waiting for players: {taken} of {} seats taken\n",
                        info.seats.len()
                    ));
                }
            }
            Some(S::Heartbeat(_)) | None => {}
            Some(_) => return Ok(seat),
        }
    }
    Err("the server ended the game's stream before the game started".into())
}

/// Writes to standard output through `anstream`, which drops colors and screen clearing when
/// the output is not a terminal or `NO_COLOR` is set.
fn say(text: &str) {
    let mut out = anstream::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// ANSI: erase the screen, cursor to the top left.
const CLEAR: &str = "\x1b[2J\x1b[H";

/// Whether the table is painted and redrawn: not with `--no-color`, nor when standard output is
/// not a terminal or `NO_COLOR` is set (`anstream`'s choice, which also honours
/// `CLICOLOR_FORCE`).
pub fn colors_wanted(no_color_flag: bool) -> bool {
    !no_color_flag
        && anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// What the client knows of the table.
struct Table {
    me: u32,
    color: bool,
    view: pb::View,
    version: u64,
    log: VecDeque<String>,
    prompt: Option<pb::Prompt>,
    status: String,
    over: bool,
    /// How each other seat is called, as the web page calls it: `bot 2`, `Ann 1`, `seat 3`.
    names: HashMap<u32, String>,
    /// The result of the round that just ended, shown until the player presses Enter.
    held: Option<String>,
}

impl Table {
    fn new(seat: &Seat, color: bool) -> Table {
        Table {
            me: seat.seat,
            color,
            view: pb::View::default(),
            version: 0,
            log: VecDeque::new(),
            prompt: None,
            status: String::new(),
            over: false,
            names: HashMap::new(),
            held: None,
        }
    }

    /// Follows the stream and the keyboard until the match is over or the player quits.
    async fn play(
        &mut self,
        client: &mut Client,
        seat: &Seat,
        input: impl AsyncBufRead + Unpin,
    ) -> Result<(), BoxError> {
        let mut lines = input.lines();
        let mut input_open = true;
        'connect: loop {
            let request = seat.request(pb::SubscribeRequest {
                game: seat.game.clone(),
                after_version: self.version,
                include_view: true,
            });
            let mut stream = match client.subscribe(request).await {
                Ok(s) => s.into_inner(),
                Err(status) if resumable(&status) => {
                    self.reconnecting(&status);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue 'connect;
                }
                Err(status) => return Err(reason(&status).into()),
            };
            let mut caught_up = false;
            loop {
                tokio::select! {
                    message = stream.next() => match message {
                        Some(Ok(message)) => {
                            let Some(kind) = message.kind else { continue };
                            match kind {
                                S::View(view) => {
                                    self.version = view.version;
                                    self.view = view;
                                }
                                S::Event(event) => {
                                    if event.version <= self.version {
                                        continue;
                                    }
                                    self.version = event.version;
                                    self.prompt = None;
                                    if let Some(kind) = &event.kind {
                                        if matches!(kind, E::MatchEnded(_) | E::MatchAbandoned(_) | E::LobbyExpired(_)) {
                                            self.over = true;
                                        }
                                        if caught_up && matches!(kind, E::RoundStarted(_)) {
                                            self.load_names(client, seat).await;
                                        }
                                        let line = self.describe(kind);
                                        if caught_up && matches!(kind, E::RoundEnded(_)) {
                                            self.held = Some(line.clone());
                                        }
                                        self.log.push_back(line);
                                        while self.log.len() > LOG_LINES {
                                            self.log.pop_front();
                                        }
                                    }
                                    if caught_up {
                                        self.refresh(client, seat).await;
                                    }
                                }
                                S::CaughtUp(_) => {
                                    caught_up = true;
                                    self.status.clear();
                                    self.load_names(client, seat).await;
                                    self.refresh(client, seat).await;
                                }
                                S::Prompt(prompt) => {
                                    if prompt.version == self.version {
                                        self.prompt = Some(prompt);
                                        // Before the catch-up, the caught-up screen shows it.
                                        if caught_up {
                                            self.render();
                                        }
                                    }
                                }
                                S::Heartbeat(_) | S::Lobby(_) => {}
                            }
                            if self.over && caught_up {
                                self.refresh(client, seat).await;
                                say("The match is over.\n");
                                return Ok(());
                            }
                        }
                        Some(Err(status)) if resumable(&status) => {
                            self.reconnecting(&status);
                            tokio::time::sleep(Duration::from_millis(500)).await;
                            continue 'connect;
                        }
                        Some(Err(status)) => return Err(reason(&status).into()),
                        None => {
                            self.reconnecting(&Status::unavailable("the stream ended"));
                            tokio::time::sleep(Duration::from_millis(500)).await;
                            continue 'connect;
                        }
                    },
                    line = lines.next_line(), if input_open => match line {
                        Ok(Some(line)) => {
                            if self.command(client, seat, line.trim()).await {
                                return Ok(());
                            }
                        }
                        Ok(None) | Err(_) => input_open = false,
                    },
                }
            }
        }
    }

    fn reconnecting(&mut self, status: &Status) {
        self.status = format!("connection lost ({}); resuming...", status.message());
        self.prompt = None;
        say(&format!("{}\n", self.status));
    }

    /// Reads who sits where: players' names, and which seats the server plays.
    async fn load_names(&mut self, client: &mut Client, seat: &Seat) {
        let request = pb::GetGameRequest {
            name: seat.game.clone(),
        };
        if let Ok(reply) = client.get_game(request).await
            && let Some(game) = reply.into_inner().game
        {
            self.names = game
                .seats
                .iter()
                .map(|s| {
                    let name = if s.played_by_server {
                        format!("bot {}", s.seat)
                    } else if !s.player_name.is_empty() {
                        format!("{} {}", s.player_name, s.seat)
                    } else {
                        format!("seat {}", s.seat)
                    };
                    (s.seat, name)
                })
                .collect();
        }
    }

    /// Reloads the view (legal actions included) and draws the table.
    async fn refresh(&mut self, client: &mut Client, seat: &Seat) {
        let request = seat.request(pb::GetViewRequest {
            game: seat.game.clone(),
        });
        if let Ok(reply) = client.get_view(request).await
            && let Some(view) = reply.into_inner().view
            && view.version >= self.version
        {
            self.view = view;
        }
        self.render();
    }

    /// Handles a typed line; true to quit.
    async fn command(&mut self, client: &mut Client, seat: &Seat, line: &str) -> bool {
        if line == "q" || line == "quit" {
            say("Bye. Your seat waits for you (a bot plays it only if you leave).\n");
            return true;
        }
        if self.held.is_some() {
            if line.is_empty() {
                // Enter after a round's result: back to the table.
                self.held = None;
                self.status.clear();
            } else {
                // A move typed before the round ended is not the Enter the result waits for.
                self.status = "the round is over: press Enter for the next round".into();
            }
            self.render();
            return false;
        }
        let Some(prompt) = self.prompt.clone() else {
            self.status = "not your move now".into();
            self.render();
            return false;
        };
        let Some(action) = line
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| prompt.legal_actions.get(i))
        else {
            self.status = format!(
                "type a number from 1 to {}, or q to quit",
                prompt.legal_actions.len()
            );
            self.render();
            return false;
        };
        let request = seat.request(pb::SubmitActionRequest {
            game: seat.game.clone(),
            action: Some(action.clone()),
            request_id: format!("play-{}-{}", prompt.version, line),
            expected_version: Some(prompt.version),
        });
        match client.submit_action(request).await {
            Ok(_) => {
                self.status.clear();
                self.prompt = None;
            }
            Err(status) => {
                self.status = format!("refused: {}", reason(&status));
                self.render();
            }
        }
        false
    }

    fn paint(&self, text: &str, color: i32) -> String {
        use anstyle::{Ansi256Color, AnsiColor, Effects, Style};
        if !self.color {
            return text.to_owned();
        }
        let style = match pb::Color::try_from(color).unwrap_or(pb::Color::Unspecified) {
            pb::Color::Red => AnsiColor::Red.on_default(),
            pb::Color::Yellow => AnsiColor::Yellow.on_default(),
            pb::Color::Green => AnsiColor::Green.on_default(),
            pb::Color::Blue => AnsiColor::Blue.on_default(),
            pb::Color::Pink => AnsiColor::BrightMagenta.on_default(),
            pb::Color::Teal => AnsiColor::Cyan.on_default(),
            pb::Color::Orange => Ansi256Color(208).on_default(),
            pb::Color::Purple => AnsiColor::Magenta.on_default(),
            pb::Color::Unspecified => Style::new().effects(Effects::BOLD),
        };
        format!("{style}{text}{style:#}")
    }

    fn dark(&self) -> bool {
        self.view.side == pb::Side::Dark as i32
    }

    /// A face in words, painted in its color.
    fn face(&self, face: Option<&pb::Face>) -> String {
        let Some(face) = face else {
            return "?".into();
        };
        self.paint(&face_text(face), face.color)
    }

    /// A card's active face, then its other face in brackets (UNO Flip).
    fn card(&self, card: &pb::Card) -> String {
        let (active, other) = if self.dark() {
            (card.dark.as_ref(), card.light.as_ref())
        } else {
            (card.light.as_ref(), card.dark.as_ref())
        };
        match other {
            Some(other) if self.view.ruleset != pb::Ruleset::Classic as i32 => {
                format!("{} [{}]", self.face(active), self.face(Some(other)))
            }
            _ => self.face(active),
        }
    }

    fn card_by_id(&self, id: u32) -> String {
        self.view
            .hand
            .iter()
            .chain(self.view.discard.iter())
            .find(|c| c.id == id)
            .map_or_else(|| format!("card #{id}"), |c| self.card(c))
    }

    /// A seat as the web page names it: `you`, `bot 2`, `Ann 1`, `seat 3`.
    fn who(&self, seat: u32) -> String {
        if seat == self.me {
            "you".into()
        } else {
            self.names
                .get(&seat)
                .cloned()
                .unwrap_or_else(|| format!("seat {seat}"))
        }
    }

    fn color_name(&self, color: i32) -> String {
        let name = pb::Color::try_from(color)
            .map(|c| c.as_str_name().trim_start_matches("COLOR_").to_lowercase())
            .unwrap_or_default();
        self.paint(&name, color)
    }

    /// An event in words.
    fn describe(&self, kind: &E) -> String {
        match kind {
            E::GameCreated(_) => "the game was created".into(),
            E::DealerChosen(d) => format!("{} deals", self.who(d.dealer)),
            E::RoundStarted(r) => format!("round {} dealt by {}", r.round, self.who(r.dealer)),
            E::StarterReturned(_) => "the first discard went back; another was turned".into(),
            E::TurnStarted(t) if t.seat == self.me => "your turn".into(),
            E::TurnStarted(t) => format!("seat {}'s turn", t.seat),
            E::CardPlayed(p) => {
                let card = p.card.as_ref().map_or_else(String::new, |c| self.card(c));
                let mut line = format!("{} played {card}", self.who(p.seat));
                if p.color != 0 {
                    let _ = write!(line, ", declaring {}", self.color_name(p.color));
                }
                if p.uno {
                    line.push_str(", UNO!");
                }
                line
            }
            E::ColorChosen(c) => format!("{} chose {}", self.who(c.seat), self.color_name(c.color)),
            E::ColorRequested(c) => format!("{} must choose a color", self.who(c.seat)),
            E::DirectionReversed(_) => "the direction reversed".into(),
            E::SwapRequested(s) => {
                format!("{} must choose whom to swap hands with", self.who(s.seat))
            }
            E::HandsSwapped(s) => format!(
                "{} swapped hands with {}",
                self.who(s.seat),
                self.who(s.with)
            ),
            E::HandsPassed(_) => "every hand passed to the next player".into(),
            E::WentOut(w) => format!("{} went out; the round goes on", self.who(w.seat)),
            E::Flipped(_) => "the table flipped".into(),
            E::CardsDrawn(d) => {
                let cards: Vec<String> = d.cards.iter().map(|c| self.card(c)).collect();
                let why = match pb::DrawCause::try_from(d.cause).unwrap_or_default() {
                    pb::DrawCause::Penalty => " (penalty)",
                    pb::DrawCause::Challenge => " (lost the challenge)",
                    pb::DrawCause::UnoCaught => " (caught without UNO)",
                    pb::DrawCause::FirstDiscard => " (first discard)",
                    _ => "",
                };
                if cards.is_empty() {
                    format!("{} drew {}{why}", self.who(d.seat), d.count)
                } else {
                    format!("{} drew {}{why}", self.who(d.seat), cards.join(", "))
                }
            }
            E::DrawnCardKept(k) => format!("{} kept the drawn card", self.who(k.seat)),
            E::Reshuffled(r) => format!("the discards were shuffled into {} cards", r.count),
            E::PenaltyPending(p) => format!(
                "{} must take or challenge {}'s wild draw",
                self.who(p.seat),
                self.who(p.from)
            ),
            E::PenaltyAccepted(p) => format!("{} took the penalty", self.who(p.seat)),
            E::Challenged(c) => format!(
                "{} challenged {}: {}",
                self.who(c.seat),
                self.who(c.target),
                if c.guilty { "guilty" } else { "not guilty" }
            ),
            E::HandShown(h) => {
                let cards: Vec<String> = h.cards.iter().map(|c| self.card(c)).collect();
                format!(
                    "{} showed their hand: {}",
                    self.who(h.seat),
                    cards.join(", ")
                )
            }
            E::UnoCalled(u) => format!("{} called UNO", self.who(u.seat)),
            E::UnoCaught(u) => {
                format!("{} caught {} without UNO", self.who(u.by), self.who(u.seat))
            }
            E::RoundEnded(r) => {
                let result = r.result.clone().unwrap_or_default();
                let mut line = format!(
                    "round {} won by {}; totals {:?}",
                    result.round,
                    self.who(result.winner),
                    result.totals
                );
                if result.order.len() > 1 {
                    let order: Vec<String> = result.order.iter().map(|s| self.who(*s)).collect();
                    let _ = write!(line, "; finishing order {}", order.join(", "));
                }
                line
            }
            E::MatchEnded(m) => {
                let winners: Vec<String> = m.winners.iter().map(|w| self.who(*w)).collect();
                format!("the match is over: {} won", winners.join(" and "))
            }
            E::MatchAbandoned(_) => {
                "the match was abandoned: nobody but the server played for too long".to_owned()
            }
            E::LobbyExpired(_) => "the lobby expired before anyone started it".to_owned(),
        }
    }

    /// An action in words.
    fn action(&self, action: &pb::Action) -> String {
        match &action.kind {
            Some(A::PlayCard(p)) => {
                let mut line = format!("play {}", self.card_by_id(p.card));
                for &more in &p.more_cards {
                    let _ = write!(line, " and {}", self.card_by_id(more));
                }
                if p.color != 0 {
                    let _ = write!(line, ", declare {}", self.color_name(p.color));
                }
                if p.uno {
                    line.push_str(", call UNO");
                }
                line
            }
            Some(A::DrawCard(_)) => "draw a card".into(),
            Some(A::KeepCard(_)) => "keep the drawn card".into(),
            Some(A::ChooseColor(c)) => format!("choose {}", self.color_name(c.color)),
            Some(A::AcceptPenalty(_)) => "take the penalty".into(),
            Some(A::Challenge(_)) => "challenge the wild draw".into(),
            Some(A::CallUno(_)) => "call UNO".into(),
            Some(A::CatchUno(c)) => format!("catch {} without UNO", self.who(c.seat)),
            Some(A::SwapHands(s)) => format!("swap hands with {}", self.who(s.seat)),
            None => "?".into(),
        }
    }

    /// Draws the whole table.
    fn render(&self) {
        let v = &self.view;
        let mut out = String::new();
        if self.color {
            // Clear the screen and go home (only on a terminal that takes colors).
            out.push_str(CLEAR);
        }
        let side = if v.ruleset == pb::Ruleset::Classic as i32 {
            "classic"
        } else if self.dark() {
            "dark side"
        } else {
            "light side"
        };
        let direction = if v.direction == pb::Direction::CounterClockwise as i32 {
            "counter-clockwise"
        } else {
            "clockwise"
        };
        let _ = writeln!(
            out,
            "== {} · round {} · {side} · {direction} · event {}",
            v.game, v.round, v.version
        );
        let top = v
            .discard
            .last()
            .map_or_else(|| "none".into(), |c| self.card(c));
        let _ = writeln!(
            out,
            "top discard: {top}   color: {}   draw pile: {} (top shows {})",
            self.color_name(v.color),
            v.draw_count,
            self.face(v.draw_top.as_ref())
        );
        let turn = if v.turn == self.me {
            "YOUR TURN".to_owned()
        } else {
            format!("{}'s turn", self.who(v.turn))
        };
        let _ = writeln!(out, "{turn}");
        if v.pending_draw > 0 {
            let _ = writeln!(
                out,
                "pending penalty: {} cards for {}",
                v.pending_draw,
                self.who(v.turn)
            );
        }
        for p in &v.players {
            if p.seat == self.me {
                continue;
            }
            let backs: Vec<String> = p.backs.iter().map(|f| self.face(Some(f))).collect();
            let flag = if p.uno_exposed {
                "  (no UNO called!)".to_string()
            } else if p.out_place > 0 {
                format!("  (out, place {})", p.out_place)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {}: {} cards{}{}  score {}{flag}",
                self.who(p.seat),
                p.card_count,
                if backs.is_empty() { "" } else { ": " },
                backs.join(", "),
                p.score,
            );
        }
        let my_score = v
            .players
            .iter()
            .find(|p| p.seat == self.me)
            .map_or(0, |p| p.score);
        let _ = writeln!(out, "your hand ({} cards, score {my_score}):", v.hand.len());
        for card in &v.hand {
            let _ = writeln!(out, "  {}", self.card(card));
        }
        if !self.log.is_empty() {
            let _ = writeln!(out, "last events:");
            for line in &self.log {
                let _ = writeln!(out, "  - {line}");
            }
        }
        if !v.winners.is_empty() {
            let totals: Vec<String> = v
                .players
                .iter()
                .map(|p| format!("{}: {}", self.who(p.seat), p.score))
                .collect();
            let _ = writeln!(out, "final scores: {}", totals.join(", "));
        }
        if let Some(result) = &self.held {
            let _ = writeln!(out, "*** {result} ***");
            let _ = writeln!(out, "press Enter for the next round");
        } else if let Some(prompt) = &self.prompt {
            let _ = writeln!(out, "your move:");
            for (i, action) in prompt.legal_actions.iter().enumerate() {
                let _ = writeln!(out, "  {}) {}", i + 1, self.action(action));
            }
            let _ = writeln!(out, "type a number and Enter (q to quit)");
        }
        if !self.status.is_empty() {
            let _ = writeln!(out, "{}", self.status);
        }
        say(&out);
    }
}

fn resumable(status: &Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unavailable
            | tonic::Code::Unknown
            | tonic::Code::Internal
            | tonic::Code::Cancelled
            | tonic::Code::DeadlineExceeded
    )
}

/// A face in words: "red 5", "pink skip everyone", "wild draw two".
pub fn face_text(face: &pb::Face) -> String {
    let kind = pb::Kind::try_from(face.kind).unwrap_or(pb::Kind::Unspecified);
    let what = match kind {
        pb::Kind::Number => face.number.to_string(),
        other => other
            .as_str_name()
            .trim_start_matches("KIND_")
            .to_lowercase()
            .replace('_', " "),
    };
    let color = pb::Color::try_from(face.color).unwrap_or(pb::Color::Unspecified);
    if color == pb::Color::Unspecified {
        what
    } else {
        format!(
            "{} {what}",
            color
                .as_str_name()
                .trim_start_matches("COLOR_")
                .to_lowercase()
        )
    }
}
