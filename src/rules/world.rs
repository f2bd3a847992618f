//! Worlds a seat's view allows: the cards the seat cannot see dealt at random so that every
//! public fact holds. A search bot ([`crate::bots`]) plays its moves out in many such worlds; it is
//! given a [`View`] only, so it never learns a hidden card.
//!
//! What a sampled world agrees with ([`Knowledge::Backs`]): the seat's own hand, the discard
//! pile, every count, and in UNO Flip every opponent's inactive faces [V-2] and the draw pile's
//! top face [V-3]. Cards with the same inactive face are exchangeable, so each face's demand is
//! filled by a uniform choice among the unseen cards with that face, and the rest go to the draw
//! pile in a uniform order: every world the view allows is equally likely. The view of the
//! sampled world from the same seat is the view it was sampled from.
//!
//! With [`Knowledge::Draws`] (the expert's worlds) a world also follows a guess, which the view
//! does not prove: a seat that drew on its turn could not play the cards it held then
//! ([`crate::rules::DrawTell`]), so those of its cards are dealt from the unseen cards that would
//! not have gone there, while there are such cards. The view from the seat is unchanged; only
//! which hidden card is where changes.
//!
//! What is not known and is guessed: which card an opponent just drew (while it decides to play
//! or keep it, the last card of its sampled hand), and whether a pending wild draw was a bluff
//! (judged on the sampled hand of its player against the color of the card below it).

use rand::Rng;
use rand::seq::SliceRandom;

use super::card::{CardId, Color, Face};
use super::deck::Ruleset;
use super::state::{Game, Penalty, Phase, RoundResult};
use super::view::{Awaiting, View, Viewer};

/// What a sampled world must agree with besides the seat's hand, the discard pile and counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Knowledge {
    /// [`Knowledge::Backs`], and what draws suggest ([`crate::rules::DrawTell`]): of the cards a seat held
    /// when it drew on its turn and may still hold, none could have been played there, as far
    /// as the unseen cards allow. A guess, not a fact [F-TURN-4]: the expert's worlds.
    Draws,
    /// Also the inactive faces the table shows [V-2], [V-3]: every public fact, no guess.
    Backs,
    /// Counts only, the backs ignored: to measure what reading them is worth.
    Counts,
}

impl Game {
    /// A world `view` allows, drawn uniformly at random; `None` for a spectator's view or a view
    /// no game can have (cards seen twice, counts that do not add up).
    pub fn sample_world<R: Rng + ?Sized>(
        view: &View,
        knowledge: Knowledge,
        rng: &mut R,
    ) -> Option<Game> {
        let Viewer::Seat(me) = view.viewer else {
            return None;
        };
        let seats = view.players.len();
        if me >= seats || view.players.iter().enumerate().any(|(i, p)| p.seat != i) {
            return None;
        }
        let mut game = Game::created(view.ruleset, seats, view.options);
        let deck = game.deck;
        let side = view.side;
        let mut seen = vec![false; deck.len()];
        for card in view.hand.iter().chain(&view.discard) {
            let slot = seen.get_mut(card.id.index())?;
            if *slot {
                return None;
            }
            *slot = true;
        }
        let mut unseen: Vec<CardId> = deck.ids().filter(|c| !seen[c.index()]).collect();
        unseen.shuffle(rng);
        let back = |card: CardId| deck.get(card).and_then(|c| c.back(side));
        // Takes an unseen card whose inactive face is `face`: the first of the shuffled cards
        // with that face, a uniform choice among them.
        let take = |face: Face, unseen: &mut Vec<CardId>| -> Option<CardId> {
            let at = unseen.iter().position(|&c| back(c) == Some(face))?;
            Some(unseen.remove(at))
        };
        let read_backs = knowledge != Knowledge::Counts && view.ruleset == Ruleset::Flip;
        // How many of each seat's cards are still to be dealt unplayable where it drew.
        let mut unplayable: Vec<usize> = view
            .players
            .iter()
            .map(|p| match p.draw_tell {
                Some(tell) if knowledge == Knowledge::Draws => tell.held().min(p.cards),
                _ => 0,
            })
            .collect();
        // Takes the first of the shuffled unseen cards that `fits`, or else the first card that
        // `may` (a guess the unseen cards cannot honour is dropped): uniform among either.
        let take_fitting = |unseen: &mut Vec<CardId>,
                            fits: &dyn Fn(CardId) -> bool,
                            may: &dyn Fn(CardId) -> bool|
         -> Option<CardId> {
            let at = unseen
                .iter()
                .position(|&c| fits(c))
                .or_else(|| unseen.iter().position(|&c| may(c)))?;
            Some(unseen.remove(at))
        };
        let mut hands: Vec<Vec<CardId>> = vec![Vec::new(); seats];
        let mut draw_top = None;
        if read_backs {
            for player in view.players.iter().filter(|p| p.seat != me) {
                let tell = player.draw_tell;
                let owed = unplayable.get_mut(player.seat)?;
                for &face in &player.backs {
                    let card = match tell {
                        Some(tell) if *owed > 0 => {
                            let with_face = |c: CardId| back(c) == Some(face);
                            let fits = |c: CardId| with_face(c) && !tell.playable(deck, c);
                            take_fitting(&mut unseen, &fits, &with_face)?
                        }
                        _ => take(face, &mut unseen)?,
                    };
                    *owed = owed.saturating_sub(1);
                    hands[player.seat].push(card);
                }
            }
            if let Some(face) = view.draw_top {
                draw_top = Some(take(face, &mut unseen)?);
            }
        }
        for player in view.players.iter().filter(|p| p.seat != me) {
            let missing = player.cards.checked_sub(hands[player.seat].len())?;
            if missing > unseen.len() {
                return None;
            }
            let owed = unplayable
                .get(player.seat)
                .copied()
                .unwrap_or(0)
                .min(missing);
            if let (Some(tell), true) = (player.draw_tell, owed > 0) {
                let fits = |c: CardId| !tell.playable(deck, c);
                for _ in 0..owed {
                    let card = take_fitting(&mut unseen, &fits, &|_| true)?;
                    hands[player.seat].push(card);
                }
            }
            hands[player.seat].extend(unseen.drain(..missing - owed));
        }
        if unseen.len() + usize::from(draw_top.is_some()) != view.draw_count {
            return None;
        }
        hands[me] = view.hand.iter().map(|c| c.id).collect();
        game.draw = unseen;
        game.draw.extend(draw_top);
        game.discard = view.discard.iter().map(|c| c.id).collect();
        game.hands = hands;
        game.version = view.version;
        game.round = view.round;
        game.dealer = view.dealer;
        game.scores = view.players.iter().map(|p| p.score).collect();
        game.side = side;
        game.direction = view.direction;
        game.color = view.color;
        game.turn = view.turn;
        game.uno_exposed = view.players.iter().find(|p| p.uno_exposed).map(|p| p.seat);
        let mut out: Vec<(usize, usize)> = view
            .players
            .iter()
            .filter(|p| p.out_place > 0)
            .map(|p| (p.out_place, p.seat))
            .collect();
        out.sort_unstable();
        game.out = out.into_iter().map(|(_, seat)| seat).collect();
        game.last_round = view.last_round.as_ref().map(|r| RoundResult {
            round: r.round,
            winner: r.winner,
            hand_points: r.hand_points.clone(),
            points: r.points.clone(),
            order: r.order.clone(),
        });
        game.winners.clone_from(&view.winners);
        if view.players.iter().any(|p| p.draw_tell.is_some()) {
            game.tells = view.players.iter().map(|p| p.draw_tell).collect();
        }
        game.phase = match view.awaiting {
            Awaiting::Play => Phase::Play,
            Awaiting::PlayOrKeepDrawn => {
                let card = match view.drawn_card {
                    Some(card) => card,
                    None => *game.hands.get(view.turn)?.last()?,
                };
                Phase::PlayDrawn { card }
            }
            Awaiting::ChooseColor { then } => Phase::ChooseColor { then },
            Awaiting::ChooseSwap { then } => Phase::ChooseSwap { then },
            Awaiting::Penalty { from, card, total } => {
                // The color before the wild draw: the card below it, if it shows one.
                let below = view.discard.len().checked_sub(2);
                let previous_color = below
                    .and_then(|i| view.discard.get(i))
                    .and_then(|c| deck.face(c.id, side).color)
                    .unwrap_or(Color::of_side(side)[0]);
                let guilty = game
                    .hands
                    .get(from)?
                    .iter()
                    .any(|&c| deck.face(c, side).color == Some(previous_color));
                Phase::Penalty(Penalty {
                    from,
                    card,
                    previous_color,
                    guilty,
                    total,
                })
            }
            Awaiting::MatchOver => Phase::MatchOver,
        };
        Some(game)
    }
}
