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

use super::card::{CardId, Color};
use super::deck::Ruleset;
use super::state::{Game, Penalty, Phase, RoundResult};
use super::view::{Awaiting, PlayerView, View, Viewer};

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
        // Takes the first of the shuffled unseen cards that is `wanted`: a uniform choice among
        // those cards.
        let take = |unseen: &mut Vec<CardId>, wanted: &dyn Fn(CardId) -> bool| -> Option<CardId> {
            let at = unseen.iter().position(|&c| wanted(c))?;
            Some(unseen.remove(at))
        };
        let read_backs = knowledge != Knowledge::Counts && view.ruleset == Ruleset::Flip;
        // The draw a seat's cards are guessed from, and how many of them it covers.
        let guess = |p: &PlayerView| match p.draw_tell {
            Some(tell) if knowledge == Knowledge::Draws => Some((tell, tell.held().min(p.cards))),
            _ => None,
        };
        let mut hands: Vec<Vec<CardId>> = vec![Vec::new(); seats];
        let mut draw_top = None;
        if read_backs {
            for player in view.players.iter().filter(|p| p.seat != me) {
                let guessed = guess(player);
                for (i, &face) in player.backs.iter().enumerate() {
                    let with_face = |c: CardId| back(c) == Some(face);
                    // Honoured while the unseen cards with this face allow it.
                    let card = match guessed {
                        Some((tell, held)) if i < held => {
                            take(&mut unseen, &|c| with_face(c) && !tell.playable(deck, c))
                        }
                        _ => None,
                    };
                    let card = card.or_else(|| take(&mut unseen, &with_face))?;
                    hands[player.seat].push(card);
                }
            }
            if let Some(face) = view.draw_top {
                draw_top = Some(take(&mut unseen, &|c| back(c) == Some(face))?);
            }
        }
        for player in view.players.iter().filter(|p| p.seat != me) {
            let dealt = hands[player.seat].len();
            let missing = player.cards.checked_sub(dealt)?;
            if missing > unseen.len() {
                return None;
            }
            if let Some((tell, held)) = guess(player) {
                for _ in dealt..held {
                    let card = take(&mut unseen, &|c| !tell.playable(deck, c));
                    // Honoured while the unseen cards allow it.
                    let card = card.or_else(|| unseen.pop())?;
                    hands[player.seat].push(card);
                }
            }
            let rest = player.cards.saturating_sub(hands[player.seat].len());
            hands[player.seat].extend(unseen.drain(..rest));
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
        game.last_round = view.last_round.as_ref().map(|r| {
            Box::new(RoundResult {
                round: r.round,
                winner: r.winner,
                hand_points: r.hand_points.clone(),
                points: r.points.clone(),
                order: r.order.clone(),
            })
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
