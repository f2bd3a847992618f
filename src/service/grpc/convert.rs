//! Conversion between protobuf messages and the rules' domain types: the only place that knows
//! both. Domain to protobuf cannot fail; protobuf to domain refuses malformed input with an
//! INVALID_ARGUMENT error that names the field.

use crate::proto as pb;
use crate::rules::{
    Action, Awaiting, CardId, CardView, Cards, Color, Deck, Direction, DrawCause, Face, HouseRules,
    Kind, MAX_TOGETHER, Options, PlayerView, Ruleset, Scoring, Seat, SeenEvent, Side, View, Viewer,
};
use crate::service::reason::Reason;

use crate::service::accounts::players::Player;
use crate::service::accounts::ratings::{Rating, ruleset_key};
use crate::service::error::ServiceError;
use crate::service::games::NewGame;
use crate::service::games::lobby::{GameInfo, Lobby, Status};
use crate::service::games::task::Submitted;

/// `CreateGame`'s options to domain.
pub fn new_game(o: &pb::GameOptions) -> Result<NewGame, ServiceError> {
    Ok(NewGame {
        ruleset: ruleset_from(o.ruleset)?,
        seats: seat_from(o.seats),
        options: options_from(o)?,
        first_dealer: o.first_dealer.map(seat_from),
        deck_order: deck_order_from(&o.deck_order)?,
        bot_seats: o.bot_seats.iter().copied().map(seat_from).collect(),
        bot_level: bot_level_from(o.bot_level)?,
        bot_think: bot_think_from(o.bot_think_ms)?,
        turn_timer: (o.turn_timer_seconds > 0)
            .then(|| std::time::Duration::from_secs(u64::from(o.turn_timer_seconds))),
        rated: o.rated,
        seat_levels: Vec::new(),
    })
}

/// A seat number or count from the wire; one past any table when it does not fit, which the
/// checks of the rules and the games refuse with their reasons.
pub fn seat_from(n: u32) -> Seat {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A fixed deck order from the wire (`None` when empty): card ids, each checked to be one.
fn deck_order_from(ids: &[u32]) -> Result<Option<Vec<CardId>>, ServiceError> {
    if ids.is_empty() {
        return Ok(None);
    }
    ids.iter()
        .map(|&id| {
            u8::try_from(id).map(CardId).map_err(|_| {
                ServiceError::invalid(
                    Reason::DeckCardUnknown,
                    format!("deck_order: {id} is not a card id"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The options a game was created with, as shown to clients (no deck order).
pub fn shown_options(lobby: &Lobby) -> pb::GameOptions {
    let setup = &lobby.setup;
    let h = &setup.options.house;
    pb::GameOptions {
        ruleset: ruleset(setup.ruleset) as i32,
        seats: count(setup.seats),
        scoring: match setup.options.scoring {
            Scoring::Standard => pb::Scoring::Standard,
            Scoring::Alternative => pb::Scoring::Alternative,
        } as i32,
        target_score: setup.options.target,
        single_round: setup.options.single_round,
        house_rules: (*h != HouseRules::default()).then_some(pb::HouseRules {
            stacking: h.stacking,
            jump_in: h.jump_in,
            seven_zero: h.seven_zero,
            draw_to_match: h.draw_to_match,
            multi: h.multi,
            false_uno: h.false_uno,
            strict_wild_draw: h.strict_wild_draw,
            play_to_last: h.play_to_last,
        }),
        turn_timer_seconds: lobby
            .timer
            .map_or(0, |t| u32::try_from(t.as_secs()).unwrap_or(u32::MAX)),
        bot_seats: seats(&lobby.bot_seats),
        first_dealer: setup.first_dealer.map(seat),
        deck_order: Vec::new(),
        bot_level: bot_level(lobby.bot_level) as i32,
        bot_think_ms: lobby.bot_think_ms,
        rated: lobby.rated,
    }
}

/// A game's public description.
pub fn game(info: &GameInfo) -> pb::Game {
    pb::Game {
        name: info.name.clone(),
        options: Some(shown_options(&info.lobby)),
        status: match info.status {
            Status::Waiting => pb::GameStatus::Waiting,
            Status::Playing => pb::GameStatus::Playing,
            Status::Finished => pb::GameStatus::Finished,
            Status::Abandoned => pb::GameStatus::Abandoned,
            Status::Expired => pb::GameStatus::Expired,
        } as i32,
        seats: info
            .lobby
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| pb::SeatInfo {
                seat: seat(i),
                taken: s.taken,
                player_name: s.name.clone(),
                played_by_server: s.server_played,
                player: s.player.clone().unwrap_or_default(),
                bot_level: if s.server_played {
                    bot_level(info.lobby.level_of(i)) as i32
                } else {
                    pb::BotLevel::Unspecified as i32
                },
            })
            .collect(),
        version: info.version,
        winners: seats(&info.winners),
        rematch: info.lobby.rematch.clone().unwrap_or_default(),
        invite_code: match info.status {
            Status::Waiting => info.lobby.invite_code.clone().unwrap_or_default(),
            _ => String::new(),
        },
    }
}

/// A registered player.
pub fn registered_player(p: &Player) -> pb::Player {
    pb::Player {
        name: p.name.clone(),
        display_name: p.display_name.clone(),
        bot: p.bot,
        create_time: Some(pbjson_types::Timestamp {
            seconds: i64::try_from(p.created_unix).unwrap_or(i64::MAX),
            nanos: 0,
        }),
        ratings: [Ruleset::Flip, Ruleset::Classic]
            .into_iter()
            .filter_map(|r| Some(rating(r, p.ratings.get(ruleset_key(r))?)))
            .collect(),
    }
}

/// A rating in `ruleset`.
pub fn rating(ruleset_of: Ruleset, r: &Rating) -> pb::Rating {
    pb::Rating {
        ruleset: ruleset(ruleset_of) as i32,
        rating: r.mu,
        uncertainty: r.sigma,
        games: r.games,
        wins: r.wins,
    }
}

/// A move's answer.
pub fn submitted(s: &Submitted) -> pb::SubmitActionResponse {
    pb::SubmitActionResponse {
        version: s.version,
        events: s
            .events
            .iter()
            .map(|(version, e)| event(*version, e, None))
            .collect(),
    }
}

/// Domain `Face` to protobuf.
pub fn face(f: Face) -> pb::Face {
    let (kind, number) = match f.kind {
        Kind::Number(n) => (pb::Kind::Number, u32::from(n)),
        Kind::DrawOne => (pb::Kind::DrawOne, 0),
        Kind::DrawTwo => (pb::Kind::DrawTwo, 0),
        Kind::DrawFive => (pb::Kind::DrawFive, 0),
        Kind::Reverse => (pb::Kind::Reverse, 0),
        Kind::Skip => (pb::Kind::Skip, 0),
        Kind::SkipEveryone => (pb::Kind::SkipEveryone, 0),
        Kind::Flip => (pb::Kind::Flip, 0),
        Kind::Wild => (pb::Kind::Wild, 0),
        Kind::WildDrawTwo => (pb::Kind::WildDrawTwo, 0),
        Kind::WildDrawFour => (pb::Kind::WildDrawFour, 0),
        Kind::WildDrawColor => (pb::Kind::WildDrawColor, 0),
    };
    pb::Face {
        color: color(f.color) as i32,
        kind: kind as i32,
        number,
    }
}

/// Domain color (none for wilds) to protobuf.
pub fn color(c: Option<Color>) -> pb::Color {
    match c {
        None => pb::Color::Unspecified,
        Some(Color::Red) => pb::Color::Red,
        Some(Color::Yellow) => pb::Color::Yellow,
        Some(Color::Green) => pb::Color::Green,
        Some(Color::Blue) => pb::Color::Blue,
        Some(Color::Pink) => pb::Color::Pink,
        Some(Color::Teal) => pb::Color::Teal,
        Some(Color::Orange) => pb::Color::Orange,
        Some(Color::Purple) => pb::Color::Purple,
    }
}

/// Protobuf color to domain; `COLOR_UNSPECIFIED` is `None`.
pub fn color_from(value: i32, field: &str) -> Result<Option<Color>, ServiceError> {
    Ok(match pb::Color::try_from(value) {
        Ok(pb::Color::Unspecified) => None,
        Ok(pb::Color::Red) => Some(Color::Red),
        Ok(pb::Color::Yellow) => Some(Color::Yellow),
        Ok(pb::Color::Green) => Some(Color::Green),
        Ok(pb::Color::Blue) => Some(Color::Blue),
        Ok(pb::Color::Pink) => Some(Color::Pink),
        Ok(pb::Color::Teal) => Some(Color::Teal),
        Ok(pb::Color::Orange) => Some(Color::Orange),
        Ok(pb::Color::Purple) => Some(Color::Purple),
        Err(_) => {
            return Err(ServiceError::invalid(
                Reason::UnknownColor,
                format!("{field}: no color {value}"),
            ));
        }
    })
}

/// A card the viewer may see in full.
pub fn card(c: CardView) -> pb::Card {
    pb::Card {
        id: u32::from(c.id.0),
        light: Some(face(c.light)),
        dark: c.dark.map(face),
    }
}

/// A deck table as protobuf cards.
pub fn deck(d: &Deck) -> Vec<pb::Card> {
    d.cards()
        .iter()
        .map(|c| {
            card(CardView {
                id: c.id,
                light: c.light,
                dark: c.dark,
            })
        })
        .collect()
}

fn cards(cs: &[CardView]) -> Vec<pb::Card> {
    cs.iter().copied().map(card).collect()
}

fn seat(s: usize) -> u32 {
    u32::try_from(s).unwrap_or(u32::MAX)
}

fn seats(ss: &[usize]) -> Vec<u32> {
    ss.iter().copied().map(seat).collect()
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Domain ruleset to protobuf.
pub fn ruleset(r: Ruleset) -> pb::Ruleset {
    match r {
        Ruleset::Flip => pb::Ruleset::Flip,
        Ruleset::Classic => pb::Ruleset::Classic,
    }
}

fn side(s: Side) -> pb::Side {
    match s {
        Side::Light => pb::Side::Light,
        Side::Dark => pb::Side::Dark,
    }
}

fn direction(d: Direction) -> pb::Direction {
    match d {
        Direction::Clockwise => pb::Direction::Clockwise,
        Direction::CounterClockwise => pb::Direction::CounterClockwise,
    }
}

fn draw_cause(c: DrawCause) -> pb::DrawCause {
    match c {
        DrawCause::Turn => pb::DrawCause::Turn,
        DrawCause::Penalty => pb::DrawCause::Penalty,
        DrawCause::FirstDiscard => pb::DrawCause::FirstDiscard,
        DrawCause::Challenge => pb::DrawCause::Challenge,
        DrawCause::UnoCaught => pb::DrawCause::UnoCaught,
        DrawCause::FalseUno => pb::DrawCause::FalseUno,
        DrawCause::FalseCatch => pb::DrawCause::FalseCatch,
    }
}

/// Protobuf house rules to domain.
pub fn house_rules_from(h: Option<&pb::HouseRules>) -> HouseRules {
    h.map_or_else(HouseRules::default, |h| HouseRules {
        stacking: h.stacking,
        jump_in: h.jump_in,
        seven_zero: h.seven_zero,
        draw_to_match: h.draw_to_match,
        multi: h.multi,
        false_uno: h.false_uno,
        strict_wild_draw: h.strict_wild_draw,
        play_to_last: h.play_to_last,
    })
}

/// Protobuf ruleset to domain (unspecified is UNO Flip).
pub fn ruleset_from(value: i32) -> Result<Ruleset, ServiceError> {
    match pb::Ruleset::try_from(value) {
        Ok(pb::Ruleset::Unspecified | pb::Ruleset::Flip) => Ok(Ruleset::Flip),
        Ok(pb::Ruleset::Classic) => Ok(Ruleset::Classic),
        Err(_) => Err(ServiceError::invalid(
            Reason::UnknownRuleset,
            format!("options.ruleset: no ruleset {value}"),
        )),
    }
}

/// Domain bot level to protobuf.
pub fn bot_level(level: crate::bots::Level) -> pb::BotLevel {
    match level {
        crate::bots::Level::Random => pb::BotLevel::Random,
        crate::bots::Level::Heuristic => pb::BotLevel::Heuristic,
        crate::bots::Level::Expert => pb::BotLevel::Expert,
    }
}

/// Protobuf bot level to domain (unspecified is the heuristic bot).
pub fn bot_level_from(value: i32) -> Result<crate::bots::Level, ServiceError> {
    match pb::BotLevel::try_from(value) {
        Ok(pb::BotLevel::Unspecified | pb::BotLevel::Heuristic) => {
            Ok(crate::bots::Level::Heuristic)
        }
        Ok(pb::BotLevel::Random) => Ok(crate::bots::Level::Random),
        Ok(pb::BotLevel::Expert) => Ok(crate::bots::Level::Expert),
        Err(_) => Err(ServiceError::invalid(
            Reason::UnknownBotLevel,
            format!("options.bot_level: no bot level {value}"),
        )),
    }
}

/// `GameOptions.bot_think_ms` to domain: `None` for the server's default.
pub fn bot_think_from(ms: u32) -> Result<Option<std::time::Duration>, ServiceError> {
    let think = std::time::Duration::from_millis(u64::from(ms));
    if think > crate::bots::MAX_THINK {
        return Err(ServiceError::invalid(
            Reason::BotThinkTooLong,
            format!(
                "options.bot_think_ms: {ms} ms is more than the {} ms a bot may think per move",
                crate::bots::MAX_THINK.as_millis()
            ),
        ));
    }
    Ok((ms > 0).then_some(think))
}

/// Protobuf scoring options to domain `Options` (target 0 means the default).
pub fn options_from(o: &pb::GameOptions) -> Result<Options, ServiceError> {
    let scoring = match pb::Scoring::try_from(o.scoring) {
        Ok(pb::Scoring::Unspecified | pb::Scoring::Standard) => Scoring::Standard,
        Ok(pb::Scoring::Alternative) => Scoring::Alternative,
        Err(_) => {
            return Err(ServiceError::invalid(
                Reason::UnknownScoring,
                format!("options.scoring: no scoring {}", o.scoring),
            ));
        }
    };
    Ok(Options {
        scoring,
        target: if o.target_score == 0 {
            crate::rules::DEFAULT_TARGET
        } else {
            o.target_score
        },
        single_round: o.single_round,
        house: house_rules_from(o.house_rules.as_ref()),
    })
}

/// Domain action to protobuf.
pub fn action(a: Action) -> pb::Action {
    use pb::action::Kind as K;
    let kind = match a {
        Action::Play {
            card,
            color: c,
            uno,
        } => K::PlayCard(pb::PlayCard {
            card: u32::from(card.0),
            color: color(c) as i32,
            uno,
            more_cards: Vec::new(),
        }),
        Action::PlayMany { cards, uno } => {
            let (first, more) = cards.as_slice().split_first().unwrap_or((&CardId(0), &[]));
            K::PlayCard(pb::PlayCard {
                card: u32::from(first.0),
                color: pb::Color::Unspecified as i32,
                uno,
                more_cards: more.iter().map(|c| u32::from(c.0)).collect(),
            })
        }
        Action::Draw => K::DrawCard(pb::DrawCard {}),
        Action::Keep => K::KeepCard(pb::KeepCard {}),
        Action::ChooseColor { color: c } => K::ChooseColor(pb::ChooseColor {
            color: color(Some(c)) as i32,
        }),
        Action::Accept => K::AcceptPenalty(pb::AcceptPenalty {}),
        Action::Challenge => K::Challenge(pb::Challenge {}),
        Action::CallUno => K::CallUno(pb::CallUno {}),
        Action::Catch { seat: s } => K::CatchUno(pb::CatchUno { seat: seat(s) }),
        Action::Swap { seat: s } => K::SwapHands(pb::SwapHands { seat: seat(s) }),
    };
    pb::Action { kind: Some(kind) }
}

/// A card id from the wire; `field` names it in the error.
fn card_id(id: u32, field: &str) -> Result<CardId, ServiceError> {
    u8::try_from(id)
        .map(CardId)
        .map_err(|_| ServiceError::invalid(Reason::UnknownCard, format!("{field}: no card {id}")))
}

/// Protobuf action to domain.
pub fn action_from(a: Option<&pb::Action>) -> Result<Action, ServiceError> {
    use pb::action::Kind as K;
    let Some(kind) = a.and_then(|a| a.kind.as_ref()) else {
        return Err(ServiceError::invalid(
            Reason::ActionMissing,
            "action: one of its kinds must be set",
        ));
    };
    Ok(match kind {
        K::PlayCard(p) if p.more_cards.is_empty() => Action::Play {
            card: card_id(p.card, "action.play_card.card")?,
            color: color_from(p.color, "action.play_card.color")?,
            uno: p.uno,
        },
        // [H-MULTI]: several identical cards; they take no color.
        K::PlayCard(p) => {
            if color_from(p.color, "action.play_card.color")?.is_some() {
                return Err(ServiceError::invalid(
                    Reason::ColorNotAllowed,
                    "action.play_card.color: cards played together are not wilds; they take no color",
                ));
            }
            let ids = std::iter::once(p.card)
                .chain(p.more_cards.iter().copied())
                .map(|c| card_id(c, "action.play_card.more_cards"))
                .collect::<Result<Vec<CardId>, ServiceError>>()?;
            let cards = Cards::new(&ids).ok_or_else(|| {
                ServiceError::invalid(
                    Reason::TooManyCards,
                    format!(
                        "action.play_card.more_cards: at most {} cards are played together",
                        MAX_TOGETHER
                    ),
                )
            })?;
            Action::PlayMany { cards, uno: p.uno }
        }
        K::DrawCard(_) => Action::Draw,
        K::KeepCard(_) => Action::Keep,
        K::ChooseColor(c) => match color_from(c.color, "action.choose_color.color")? {
            Some(color) => Action::ChooseColor { color },
            None => {
                return Err(ServiceError::invalid(
                    Reason::ColorRequired,
                    "action.choose_color.color must be set",
                ));
            }
        },
        K::AcceptPenalty(_) => Action::Accept,
        K::Challenge(_) => Action::Challenge,
        K::CallUno(_) => Action::CallUno,
        K::CatchUno(c) => Action::Catch {
            seat: usize::try_from(c.seat).unwrap_or(usize::MAX),
        },
        K::SwapHands(s) => Action::Swap {
            seat: usize::try_from(s.seat).unwrap_or(usize::MAX),
        },
    })
}

fn player(p: &PlayerView) -> pb::PlayerView {
    pb::PlayerView {
        seat: seat(p.seat),
        card_count: count(p.cards),
        backs: p.backs.iter().copied().map(face).collect(),
        uno_exposed: p.uno_exposed,
        score: p.score,
        out_place: count(p.out_place),
    }
}

fn players(ps: &[PlayerView]) -> Vec<pb::PlayerView> {
    ps.iter().map(player).collect()
}

/// A view, with the game's name and the turn deadline.
pub fn view(game: &str, v: &View, deadline: Option<pbjson_types::Timestamp>) -> pb::View {
    let (awaiting, penalty_from, then_turn) = match v.awaiting {
        Awaiting::Play => (pb::Awaiting::Play, 0, 0),
        Awaiting::PlayOrKeepDrawn => (pb::Awaiting::PlayOrKeepDrawn, 0, 0),
        Awaiting::ChooseColor { then } => (pb::Awaiting::ChooseColor, 0, seat(then)),
        Awaiting::ChooseSwap { then } => (pb::Awaiting::ChooseSwap, 0, seat(then)),
        Awaiting::Penalty { from, .. } => (pb::Awaiting::Penalty, seat(from), 0),
        Awaiting::MatchOver => (pb::Awaiting::MatchOver, 0, 0),
    };
    pb::View {
        game: game.to_owned(),
        version: v.version,
        seat: match v.viewer {
            Viewer::Seat(s) => Some(seat(s)),
            Viewer::Spectator => None,
        },
        ruleset: ruleset(v.ruleset) as i32,
        round: v.round,
        dealer: seat(v.dealer),
        side: side(v.side) as i32,
        direction: direction(v.direction) as i32,
        color: color(v.color) as i32,
        turn: seat(v.turn),
        awaiting: awaiting as i32,
        hand: cards(&v.hand),
        drawn_card: v.drawn_card.map(|c| u32::from(c.0)),
        players: players(&v.players),
        draw_count: count(v.draw_count),
        draw_top: v.draw_top.map(face),
        discard: cards(&v.discard),
        last_round: v.last_round.as_ref().map(|r| pb::RoundResult {
            round: r.round,
            winner: seat(r.winner),
            hand_points: r.hand_points.clone(),
            points: r.points.clone(),
            totals: v.players.iter().map(|p| p.score).collect(),
            order: seats(&r.order),
        }),
        winners: seats(&v.winners),
        legal_actions: v.legal_actions.iter().copied().map(action).collect(),
        turn_deadline: deadline,
        penalty_from,
        then_turn,
        pending_draw: match v.awaiting {
            Awaiting::Penalty { total, .. } => total,
            _ => 0,
        },
    }
}

/// A projected event with its number. The game's record fills `GameCreated` with the creation
/// options (without the deck order).
pub fn event(version: u64, e: &SeenEvent, lobby: Option<&Lobby>) -> pb::Event {
    use pb::event::Kind as K;
    let kind = match e {
        SeenEvent::GameCreated { .. } => K::GameCreated(pb::GameCreated {
            options: Some(lobby.map(shown_options).unwrap_or_default()),
        }),
        SeenEvent::DealerChosen { draws, dealer } => K::DealerChosen(pb::DealerChosen {
            draws: draws
                .iter()
                .map(|(s, c)| pb::DealerDraw {
                    seat: seat(*s),
                    card: u32::from(c.0),
                })
                .collect(),
            dealer: seat(*dealer),
        }),
        SeenEvent::RoundStarted {
            round,
            dealer,
            hand,
            players: ps,
            starter,
            draw_count,
            draw_top,
        } => K::RoundStarted(pb::RoundStarted {
            round: *round,
            dealer: seat(*dealer),
            hand: cards(hand),
            players: players(ps),
            starter: Some(card(*starter)),
            draw_count: count(*draw_count),
            draw_top: draw_top.map(face),
        }),
        SeenEvent::StarterReturned {
            card: c,
            turned,
            draw_top,
        } => K::StarterReturned(pb::StarterReturned {
            card: u32::from(c.0),
            turned: Some(card(*turned)),
            draw_top: draw_top.map(face),
        }),
        SeenEvent::TurnStarted { seat: s } => K::TurnStarted(pb::TurnStarted { seat: seat(*s) }),
        SeenEvent::CardPlayed {
            seat: s,
            card: c,
            color: col,
            uno,
        } => K::CardPlayed(pb::CardPlayed {
            seat: seat(*s),
            card: Some(card(*c)),
            color: color(*col) as i32,
            uno: *uno,
        }),
        SeenEvent::ColorChosen { seat: s, color: c } => K::ColorChosen(pb::ColorChosen {
            seat: seat(*s),
            color: color(Some(*c)) as i32,
        }),
        SeenEvent::ColorRequested { seat: s, then } => K::ColorRequested(pb::ColorRequested {
            seat: seat(*s),
            then_turn: seat(*then),
        }),
        SeenEvent::DirectionReversed => K::DirectionReversed(pb::DirectionReversed {}),
        SeenEvent::SwapRequested { seat: s, then } => K::SwapRequested(pb::SwapRequested {
            seat: seat(*s),
            then_turn: seat(*then),
        }),
        SeenEvent::HandsSwapped {
            seat: s,
            with,
            hand,
            players: ps,
        } => K::HandsSwapped(pb::HandsSwapped {
            seat: seat(*s),
            with: seat(*with),
            hand: cards(hand),
            players: players(ps),
        }),
        SeenEvent::HandsPassed { hand, players: ps } => K::HandsPassed(pb::HandsPassed {
            hand: cards(hand),
            players: players(ps),
        }),
        SeenEvent::Flipped {
            players: ps,
            draw_top,
        } => K::Flipped(pb::Flipped {
            players: players(ps),
            draw_top: draw_top.map(face),
        }),
        SeenEvent::CardsDrawn {
            seat: s,
            count: n,
            cards: cs,
            backs,
            cause,
            draw_top,
        } => K::CardsDrawn(pb::CardsDrawn {
            seat: seat(*s),
            count: count(*n),
            cards: cards(cs),
            backs: backs.iter().copied().map(face).collect(),
            cause: draw_cause(*cause) as i32,
            draw_top: draw_top.map(face),
        }),
        SeenEvent::DrawnCardKept { seat: s } => {
            K::DrawnCardKept(pb::DrawnCardKept { seat: seat(*s) })
        }
        SeenEvent::Reshuffled { count: n, draw_top } => K::Reshuffled(pb::Reshuffled {
            count: count(*n),
            draw_top: draw_top.map(face),
        }),
        SeenEvent::PenaltyPending {
            seat: s,
            from,
            card: c,
            previous_color,
            total,
        } => K::PenaltyPending(pb::PenaltyPending {
            seat: seat(*s),
            from: seat(*from),
            card: u32::from(c.0),
            previous_color: color(Some(*previous_color)) as i32,
            total: *total,
        }),
        SeenEvent::PenaltyAccepted { seat: s } => {
            K::PenaltyAccepted(pb::PenaltyAccepted { seat: seat(*s) })
        }
        SeenEvent::Challenged {
            seat: s,
            target,
            guilty,
        } => K::Challenged(pb::Challenged {
            seat: seat(*s),
            target: seat(*target),
            guilty: *guilty,
        }),
        SeenEvent::HandShown {
            seat: s,
            to,
            cards: cs,
        } => K::HandShown(pb::HandShown {
            seat: seat(*s),
            to: seat(*to),
            cards: cards(cs),
        }),
        SeenEvent::UnoCalled { seat: s } => K::UnoCalled(pb::UnoCalled { seat: seat(*s) }),
        SeenEvent::UnoCaught { seat: s, by } => K::UnoCaught(pb::UnoCaught {
            seat: seat(*s),
            by: seat(*by),
        }),
        SeenEvent::RoundEnded {
            round,
            winner,
            hand_points,
            points,
            totals,
            order,
        } => K::RoundEnded(pb::RoundEnded {
            result: Some(pb::RoundResult {
                round: *round,
                winner: seat(*winner),
                hand_points: hand_points.clone(),
                points: points.clone(),
                totals: totals.clone(),
                order: seats(order),
            }),
        }),
        SeenEvent::WentOut { seat: s } => K::WentOut(pb::WentOut { seat: seat(*s) }),
        SeenEvent::MatchEnded { winners } => K::MatchEnded(pb::MatchEnded {
            winners: seats(winners),
        }),
        SeenEvent::MatchAbandoned => K::MatchAbandoned(pb::MatchAbandoned {}),
        SeenEvent::LobbyExpired => K::LobbyExpired(pb::LobbyExpired {}),
    };
    pb::Event {
        version,
        kind: Some(kind),
    }
}
