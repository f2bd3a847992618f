//! The heuristic bot: a rule-aware player that uses only its view (docs/rules.md V-*): its hand's both
//! faces, opponents' counts and inactive faces, the draw pile's visible face, the discard pile.
//!
//! - UNO: calls it with the play that leaves one card; catches every seat it can.
//! - Challenges a wild draw when its player probably held the previous color: with `n` cards
//!   left, the chance of holding none of one color is about (3/4)^n, so it challenges from
//!   three cards on.
//! - Colors: declares the color it holds most of.
//! - Plays rather than draws; among plays it keeps its wilds for later, keeps colors it holds
//!   many of playable, hits the next player with action cards when that player is close to going
//!   out, dumps expensive cards when anyone is, and flips when its own other side is the better
//!   hand (fewer points, more action cards) or an opponent is about to go out.

use rand::Rng;

use crate::rules::{Action, Awaiting, CardView, Color, Direction, Face, Kind, Ruleset, Side, View};

fn face_on(card: &CardView, side: Side) -> Face {
    match side {
        Side::Light => card.light,
        Side::Dark => card.dark.unwrap_or(card.light),
    }
}

fn points(face: Face, ruleset: Ruleset) -> i32 {
    i32::try_from(face.points(ruleset)).unwrap_or(0)
}

fn is_action(kind: Kind) -> bool {
    !matches!(kind, Kind::Number(_))
}

/// The color most common among `cards` on `side` (the first of the side's colors on a tie).
fn favourite(cards: &[&CardView], side: Side) -> Color {
    let colors = Color::of_side(side);
    let count = |c: Color| {
        cards
            .iter()
            .filter(|x| face_on(x, side).color == Some(c))
            .count()
    };
    colors
        .into_iter()
        .max_by_key(|&c| (count(c), std::cmp::Reverse(c)))
        .unwrap_or(colors[0])
}

pub(super) fn choose<R: Rng + ?Sized>(view: &View, _rng: &mut R) -> Option<Action> {
    let legal = &view.legal_actions;
    if legal.is_empty() {
        return None;
    }
    // Calls and catches only when they are due: under H-FALSEUNO they are always listed, and
    // a wrong one costs two cards.
    let exposed = |seat: usize| view.players.get(seat).is_some_and(|p| p.uno_exposed);
    if legal.contains(&Action::CallUno)
        && matches!(view.viewer, crate::rules::Viewer::Seat(me) if exposed(me))
    {
        return Some(Action::CallUno);
    }
    if let Some(catch) = legal
        .iter()
        .find(|a| matches!(a, Action::Catch { seat } if exposed(*seat)))
    {
        return Some(*catch);
    }
    let hand: Vec<&CardView> = view.hand.iter().collect();
    match view.awaiting {
        // [H-STACK]: pass the penalty on when it can.
        Awaiting::Penalty { .. } if legal.iter().any(|a| matches!(a, Action::Play { .. })) => {
            best_play(view, &hand)
        }
        Awaiting::Penalty { from, .. } => {
            let held = view.players.get(from).map_or(0, |p| p.cards);
            let guilty_odds = 1.0 - 0.75f64.powi(i32::try_from(held).unwrap_or(i32::MAX));
            if guilty_odds > 0.5 && legal.contains(&Action::Challenge) {
                Some(Action::Challenge)
            } else {
                legal.iter().find(|a| **a == Action::Accept).copied()
            }
        }
        // [H-SEVEN0]: take the smallest hand.
        Awaiting::ChooseSwap { .. } => legal
            .iter()
            .filter(|a| matches!(a, Action::Swap { .. }))
            .min_by_key(|a| match a {
                Action::Swap { seat } => view.players.get(*seat).map_or(usize::MAX, |p| p.cards),
                _ => usize::MAX,
            })
            .copied(),
        Awaiting::ChooseColor { .. } => {
            let color = favourite(&hand, view.side);
            Some(Action::ChooseColor { color })
        }
        _ => best_play(view, &hand).or_else(|| {
            legal
                .iter()
                .find(|a| matches!(a, Action::Draw | Action::Keep))
                .copied()
        }),
    }
}

/// The best of the listed plays, if any.
fn best_play(view: &View, hand: &[&CardView]) -> Option<Action> {
    let me = match view.viewer {
        crate::rules::Viewer::Seat(s) => s,
        crate::rules::Viewer::Spectator => return None,
    };
    let seats = view.players.len();
    let next = match view.direction {
        Direction::Clockwise => (me + 1) % seats,
        Direction::CounterClockwise => (me + seats - 1) % seats,
    };
    let next_count = view.players.get(next).map_or(7, |p| p.cards);
    let closest = view
        .players
        .iter()
        .filter(|p| p.seat != me)
        .map(|p| p.cards)
        .min()
        .unwrap_or(7);
    let side = view.side;
    let ruleset = view.ruleset;
    let plays = view.legal_actions.iter().filter_map(|a| match a {
        Action::Play { card, color, uno } => Some((*card, *color, *uno)),
        _ => None,
    });
    let mut best: Option<(i32, Action)> = None;
    for (card, color, uno) in plays {
        let Some(this) = hand.iter().find(|c| c.id == card) else {
            continue;
        };
        let rest: Vec<&CardView> = hand.iter().copied().filter(|c| c.id != card).collect();
        // Call UNO with the play whenever it is allowed.
        if rest.len() == 1 && !uno {
            continue;
        }
        let face = face_on(this, side);
        if face.kind.is_wild() && color != Some(favourite(&rest, side)) {
            continue;
        }
        let played_color = color.or(face.color);
        let same_color_left = rest
            .iter()
            .filter(|c| face_on(c, side).color == played_color && played_color.is_some())
            .count();
        let mut score = 2 * i32::try_from(same_color_left).unwrap_or(0);
        if rest.is_empty() {
            score += 1000;
        }
        match face.kind {
            Kind::Wild | Kind::WildDrawTwo | Kind::WildDrawFour | Kind::WildDrawColor => {
                score -= if rest.len() <= 2 { 0 } else { 12 };
                if face.kind.is_wild_draw() && next_count <= 2 {
                    score += 25;
                }
            }
            Kind::Flip => score += flip_gain(view, hand, closest),
            kind if is_action(kind) => score += if next_count <= 3 { 12 } else { 3 },
            _ => {}
        }
        score += points(face, ruleset) / if closest <= 2 { 2 } else { 10 };
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, Action::Play { card, color, uno }));
        }
    }
    let (_, best) = best?;
    // [H-MULTI]: the chosen card's identical twins go with it: more cards gone in one turn
    // (calling UNO when they leave one).
    if let Action::Play { card, .. } = best {
        let together = view
            .legal_actions
            .iter()
            .filter_map(|a| match a {
                Action::PlayMany { cards, uno }
                    if cards.as_slice().first() == Some(&card)
                        && *uno == (hand.len().saturating_sub(cards.as_slice().len()) == 1) =>
                {
                    Some((cards.as_slice().len(), *a))
                }
                _ => None,
            })
            .max_by_key(|(n, _)| *n);
        if let Some((_, many)) = together {
            return Some(many);
        }
    }
    Some(best)
}

/// How much better the table is for us after a flip: our other side against our side now, and
/// what the opponents would hold after it (the faces we see of their hands now).
fn flip_gain(view: &View, hand: &[&CardView], closest: usize) -> i32 {
    let side = view.side;
    let other = side.other();
    let value = |s: Side| {
        hand.iter()
            .map(|c| points(face_on(c, s), view.ruleset))
            .sum::<i32>()
    };
    let power = |s: Side| {
        hand.iter()
            .filter(|c| is_action(face_on(c, s).kind))
            .count() as i32
    };
    let mut gain = (value(side) - value(other)) / 10 + 3 * (power(other) - power(side));
    let me = match view.viewer {
        crate::rules::Viewer::Seat(s) => s,
        crate::rules::Viewer::Spectator => usize::MAX,
    };
    // The opponent closest to going out: after a flip it holds the faces we see now. Plain numbers
    // are harder to get rid of than actions and wilds, so a flip that hands it numbers helps us.
    if let Some(rival) = view
        .players
        .iter()
        .filter(|p| p.seat != me && !p.backs.is_empty())
        .min_by_key(|p| p.cards)
    {
        let easy = rival.backs.iter().filter(|f| is_action(f.kind)).count() as i32;
        let hard = rival.backs.len() as i32 - easy;
        let weight = if closest <= 2 { 4 } else { 1 };
        gain += weight * (hard - easy);
    }
    gain
}
