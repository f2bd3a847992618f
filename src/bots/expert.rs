//! The expert bot: determinized Monte Carlo search over the seat's view.
//!
//! Each iteration samples a world the view allows ([`Game::sample_world`]: the hidden cards
//! dealt so that every opponent's inactive faces and the draw pile's top face agree with what the
//! table shows, docs/rules.md V-2, V-3), chooses one of the view's legal actions by UCB1, plays it
//! in that world and plays the round out with a fast rollout policy; the reward is 1 when this
//! seat wins the round. Statistics are kept per root action across worlds (one information set),
//! and the action with the best mean is played. Every listed action is searched alike: the UNO
//! call, catches, challenges and color choices are chosen by the same playouts as the cards.
//!
//! The bot is given a [`View`] only, so it never sees a hidden card: the worlds it searches are
//! its own guesses.

use std::time::Instant;

use rand::{Rng, RngExt};

use super::Think;
use crate::rules::{Action, CardId, Color, Event, Game, Kind, Phase, Seat, View, Viewer};

/// A rollout that reaches this many actions is scored as a loss (a round practically never
/// lasts so long when seats play cards rather than draw).
const MAX_ROLLOUT: usize = 2_000;

/// UCB1's exploration constant for rewards in 0..=1.
const EXPLORATION: f64 = 0.7;

#[derive(Clone, Copy, Default)]
struct Arm {
    visits: u32,
    wins: f64,
}

pub(super) fn choose<R: Rng + ?Sized>(view: &View, think: Think, rng: &mut R) -> Option<Action> {
    let legal = &view.legal_actions;
    let Viewer::Seat(me) = view.viewer else {
        return legal.first().copied();
    };
    match legal.len() {
        0 => return None,
        1 => return legal.first().copied(),
        _ => {}
    }
    let start = Instant::now();
    let mut arms = vec![Arm::default(); legal.len()];
    let mut buffers = Buffers::default();
    let mut total = 0u32;
    while total < think.playouts {
        if total.is_multiple_of(8) && total > 0 && start.elapsed() >= think.time {
            break;
        }
        let Some(mut world) = Game::sample_world(view, think.knowledge, rng) else {
            break;
        };
        let arm = pick(&arms, total, rng);
        let (Some(&action), Some(stats)) = (legal.get(arm), arms.get_mut(arm)) else {
            break;
        };
        let reward = match play_out(&mut world, me, action, rng, &mut buffers) {
            Some(winner) if winner == me => 1.0,
            _ => 0.0,
        };
        stats.visits += 1;
        stats.wins += reward;
        total += 1;
    }
    let best = arms
        .iter()
        .enumerate()
        .filter(|(_, a)| a.visits > 0)
        .max_by(|(_, a), (_, b)| {
            let (ma, mb) = (mean(a), mean(b));
            ma.total_cmp(&mb).then(a.visits.cmp(&b.visits))
        })
        .map(|(i, _)| i);
    match best {
        Some(i) => legal.get(i).copied(),
        // No world could be sampled (a view no game can have): any listed action.
        None => super::heuristic::choose(view, rng),
    }
}

fn mean(arm: &Arm) -> f64 {
    arm.wins / f64::from(arm.visits.max(1))
}

/// UCB1: every arm once (in random order among the untried), then the best upper bound.
fn pick<R: Rng + ?Sized>(arms: &[Arm], total: u32, rng: &mut R) -> usize {
    let untried = arms.iter().filter(|a| a.visits == 0).count();
    if untried > 0 {
        let nth = rng.random_range(0..untried);
        return arms
            .iter()
            .enumerate()
            .filter(|(_, a)| a.visits == 0)
            .nth(nth)
            .map_or(0, |(i, _)| i);
    }
    let log_total = f64::from(total.max(1)).ln();
    arms.iter()
        .enumerate()
        .max_by(|(_, a), (_, b)| {
            let ucb = |x: &Arm| mean(x) + EXPLORATION * (log_total / f64::from(x.visits)).sqrt();
            ucb(a).total_cmp(&ucb(b))
        })
        .map_or(0, |(i, _)| i)
}

/// Reused between playouts so that a playout allocates only its world.
#[derive(Default)]
struct Buffers {
    legal: Vec<Action>,
    events: Vec<Event>,
}

/// Plays `action` for `me` in `world`, then the round out with [`rollout_action`] for every
/// seat; returns the round's winner (`None` if the rollout was cut short).
fn play_out<R: Rng + ?Sized>(
    world: &mut Game,
    me: Seat,
    action: Action,
    rng: &mut R,
    buffers: &mut Buffers,
) -> Option<Seat> {
    buffers.events.clear();
    world.act_into(me, action, rng, &mut buffers.events).ok()?;
    for _ in 0..MAX_ROLLOUT {
        if let Some(winner) = round_winner(&buffers.events) {
            return Some(winner);
        }
        if world.is_over() {
            return None;
        }
        let seat = world.turn();
        world.legal_actions_into(seat, &mut buffers.legal);
        let action = rollout_action(world, seat, &buffers.legal, rng)?;
        buffers.events.clear();
        world.act_listed_into(seat, action, rng, &mut buffers.events);
    }
    None
}

fn round_winner(events: &[Event]) -> Option<Seat> {
    events.iter().find_map(|e| match e {
        Event::RoundEnded { winner, .. } => Some(*winner),
        _ => None,
    })
}

/// The rollout policy: a quick, sensible player that sees its sampled world's own hand. It calls
/// UNO and catches when due, plays rather than draws (a colored card before a wild, the color it
/// holds most), plays a drawn card that fits, challenges a wild draw whose player probably held
/// the previous color and accepts the others, and swaps with the smallest hand; ties are broken
/// at random.
fn rollout_action<R: Rng + ?Sized>(
    game: &Game,
    seat: Seat,
    legal: &[Action],
    rng: &mut R,
) -> Option<Action> {
    if legal.is_empty() {
        return None;
    }
    let exposed = game.uno_exposed();
    let hand = game.hand(seat);
    let favourite = favourite_color(game, hand);
    // Hit the next seat with action cards when it is close to going out.
    let next_close = game.hand(game.next_seat(seat)).len() <= 2;
    let mut best: Option<(u32, Action)> = None;
    let mut ties = 0u32;
    for &action in legal {
        let score = match action {
            Action::CallUno if exposed == Some(seat) => 100,
            Action::Catch { seat: caught } if exposed == Some(caught) => 90,
            Action::CallUno | Action::Catch { .. } => continue,
            Action::PlayMany { uno, .. } => 60 + u32::from(uno) * 20,
            Action::Play { card, color, uno } => {
                let wild = game.face(card).kind.is_wild();
                if wild && color != Some(favourite) {
                    continue;
                }
                let uno_bonus = if uno { 20 } else { 0 };
                let face = game.face(card);
                let kind_bonus = match face.kind {
                    Kind::Number(_) => 8,
                    k if k.is_wild() && next_close && k.is_wild_draw() => 14,
                    k if k.is_wild() => 0,
                    _ if next_close => 14,
                    _ => 6,
                };
                40 + uno_bonus + kind_bonus
            }
            Action::ChooseColor { color } if color == favourite => 50,
            Action::ChooseColor { .. } => continue,
            Action::Swap { seat: other } => {
                200u32.saturating_sub(u32::try_from(game.hand(other).len()).unwrap_or(200))
            }
            Action::Draw | Action::Keep | Action::Accept => 10,
            Action::Challenge if challenge_pays(game) => 12,
            Action::Challenge => 1,
        };
        match best {
            Some((s, _)) if s > score => {}
            Some((s, _)) if s == score => {
                ties += 1;
                if rng.random_range(0..=ties) == 0 {
                    best = Some((score, action));
                }
            }
            _ => {
                ties = 0;
                best = Some((score, action));
            }
        }
    }
    best.map(|(_, a)| a).or_else(|| legal.first().copied())
}

/// Whether a seat facing a wild draw should challenge it, judged as a player who sees only the
/// counts would: its player, holding three cards or more, most likely held the previous color
/// (no card of one color among `n` is about (3/4)^n). Without this the rollouts never challenge,
/// and a bluffed wild draw looks as safe as an honest one.
fn challenge_pays(game: &Game) -> bool {
    match game.phase() {
        Phase::Penalty(penalty) => game.hand(penalty.from).len() >= 3,
        _ => false,
    }
}

/// The active side's color `hand` holds most of (the side's first color for a hand of wilds).
fn favourite_color(game: &Game, hand: &[CardId]) -> Color {
    let colors = Color::of_side(game.side());
    let mut counts = [0u32; 4];
    for &card in hand {
        if let Some(color) = game.face(card).color
            && let Some(i) = colors.iter().position(|&c| c == color)
            && let Some(n) = counts.get_mut(i)
        {
            *n += 1;
        }
    }
    let mut best = 0;
    for (i, &n) in counts.iter().enumerate() {
        if n > counts[best] {
            best = i;
        }
    }
    colors.get(best).copied().unwrap_or(colors[0])
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    use super::*;
    use crate::rules::{Ruleset, Setup};

    /// In every wild-draw penalty that random four-seat Flip games reach, the rollout policy
    /// challenges exactly when the card's player holds three cards or more, and otherwise
    /// accepts (when no UNO is to be called or caught first).
    #[test]
    fn rollouts_challenge_a_wild_draw_from_a_hand_of_three_or_more() {
        let mut rng = SmallRng::seed_from_u64(19);
        let (mut challenged, mut accepted) = (0, 0);
        for _ in 0..200 {
            let Ok((mut game, _)) = Game::new(&Setup::new(Ruleset::Flip, 4), &mut rng) else {
                panic!("a four-seat Flip game starts");
            };
            while !game.is_over() {
                let seat = game.turn();
                let legal = game.legal_actions(seat);
                if let Phase::Penalty(penalty) = game.phase()
                    && legal.contains(&Action::Challenge)
                    && game.uno_exposed().is_none()
                {
                    let chosen = rollout_action(&game, seat, &legal, &mut rng);
                    if game.hand(penalty.from).len() >= 3 {
                        assert_eq!(chosen, Some(Action::Challenge));
                        challenged += 1;
                    } else {
                        assert_eq!(chosen, Some(Action::Accept));
                        accepted += 1;
                    }
                }
                let action = legal[rng.random_range(0..legal.len())];
                if game.act(seat, action, &mut rng).is_err() {
                    panic!("a listed action is legal");
                }
            }
        }
        assert!(challenged > 20 && accepted > 5, "{challenged} {accepted}");
    }
}
