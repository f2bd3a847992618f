//! Test support: arranging a table card by card, and reading cards by their printed faces.
//!
//! A [`Table`] arranges the deck so that the deal of [F-SETUP-3] gives each seat the cards a test
//! names, turns the named first discard and leaves the named cards on top of the draw pile.
//! - [`Table::start`] deals it through `Game::new`, first-discard rules included.
//! - [`Table::position`] reaches a mid-round position as `given(events)`: the deal, then plain
//!   `CardPlayed` events by which seats shed the filler cards they were dealt, so hands may hold
//!   fewer than seven cards; the last of them puts the named top card on the discard pile.

#![allow(dead_code, clippy::needless_range_loop)]

use std::collections::BTreeSet;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use unoflip::rules::{
    Action, CardId, Color, Deck, Event, Face, Game, HAND_SIZE, Options, Phase, Ruleset, Seat,
    Setup, Side,
};

/// The random source of every scenario: fixed, so runs repeat.
pub fn rng() -> SmallRng {
    SmallRng::seed_from_u64(7)
}

/// A deck arranged by a test.
pub struct Table {
    pub ruleset: Ruleset,
    pub seats: usize,
    pub dealer: Seat,
    pub options: Options,
    hands: Vec<Vec<CardId>>,
    dark: bool,
    top: Option<CardId>,
    draw: Vec<CardId>,
    used: BTreeSet<CardId>,
}

impl Table {
    pub fn flip(seats: usize) -> Table {
        Table::new(Ruleset::Flip, seats)
    }

    pub fn classic(seats: usize) -> Table {
        Table::new(Ruleset::Classic, seats)
    }

    fn new(ruleset: Ruleset, seats: usize) -> Table {
        Table {
            ruleset,
            seats,
            dealer: 0,
            options: Options::default(),
            hands: vec![Vec::new(); seats],
            dark: false,
            top: None,
            draw: Vec::new(),
            used: BTreeSet::new(),
        }
    }

    pub fn deck(&self) -> &'static Deck {
        Deck::of(self.ruleset)
    }

    /// An unused card: `"red 5"` by its light face, `"pink 3"` by its dark face (dark colors and
    /// dark-only kinds say which side), `"dark wild"` for a dark wild, `"red flip|teal 3"` for
    /// an exact pairing, `"#12"` by id.
    pub fn card(&mut self, spec: &str) -> CardId {
        let deck = self.deck();
        let found = deck
            .ids()
            .find(|&id| !self.used.contains(&id) && matches_spec(deck, id, spec));
        let id = found
            .unwrap_or_else(|| panic!("no unused card {spec:?} in the {:?} deck", self.ruleset));
        self.used.insert(id);
        id
    }

    /// Several cards, as [`Table::card`].
    pub fn cards<const N: usize>(&mut self, specs: [&str; N]) -> [CardId; N] {
        specs.map(|s| self.card(s))
    }

    /// [`Table::position`] is on the dark side (the table flipped before the top card was played).
    pub fn dark(mut self) -> Table {
        self.dark = true;
        self
    }

    pub fn dealer(mut self, dealer: Seat) -> Table {
        self.dealer = dealer;
        self
    }

    pub fn options(mut self, options: Options) -> Table {
        self.options = options;
        self
    }

    /// Cards `seat` holds (the first ones dealt to it).
    pub fn hand(&mut self, seat: Seat, cards: &[CardId]) -> &mut Table {
        assert!(cards.len() <= HAND_SIZE);
        self.hands[seat] = cards.to_vec();
        self
    }

    /// The first discard ([`Table::start`]) or the top discard ([`Table::position`]).
    pub fn top(&mut self, card: CardId) -> &mut Table {
        self.top = Some(card);
        self
    }

    /// The top of the draw pile, top card first.
    pub fn draw(&mut self, cards: &[CardId]) -> &mut Table {
        self.draw = cards.to_vec();
        self
    }

    /// Unused cards to fill hands with: plain numbers first, so fillers rarely matter.
    fn fillers(&mut self, n: usize) -> Vec<CardId> {
        let deck = self.deck();
        let mut out: Vec<CardId> = deck
            .cards()
            .iter()
            .filter(|c| !self.used.contains(&c.id))
            .filter(|c| {
                matches!(c.light.kind, unoflip::rules::Kind::Number(_))
                    && c.dark
                        .is_none_or(|d| matches!(d.kind, unoflip::rules::Kind::Number(_)))
            })
            .map(|c| c.id)
            .take(n)
            .collect();
        if out.len() < n {
            let more: Vec<CardId> = deck
                .ids()
                .filter(|id| !self.used.contains(id) && !out.contains(id))
                .take(n - out.len())
                .collect();
            out.extend(more);
        }
        self.used.extend(out.iter().copied());
        out
    }

    /// The full deck order (top first) that deals the arranged hands; `full` gives each seat
    /// seven cards with fillers after the named ones.
    fn deck_order(&mut self, starter: CardId) -> (Vec<CardId>, Vec<Vec<CardId>>) {
        let n = self.seats;
        let mut hands = self.hands.clone();
        for hand in &mut hands {
            let missing = HAND_SIZE - hand.len();
            hand.extend(self.fillers(missing));
        }
        let mut order = Vec::new();
        for k in 0..HAND_SIZE {
            for j in 1..=n {
                order.push(hands[(self.dealer + j) % n][k]);
            }
        }
        order.push(starter);
        if self.dark {
            // The flip turns the draw pile over: the named cards go to the bottom, reversed.
            let rest: Vec<CardId> = self
                .deck()
                .ids()
                .filter(|id| !order.contains(id) && !self.draw.contains(id))
                .collect();
            order.extend(rest);
            order.extend(self.draw.iter().rev());
        } else {
            order.extend(&self.draw);
            let rest: Vec<CardId> = self.deck().ids().filter(|id| !order.contains(id)).collect();
            order.extend(rest);
        }
        (order, hands)
    }

    /// The setup that deals this table through `Game::new`.
    pub fn setup(&mut self) -> Setup {
        let starter = self.top.expect("a first discard");
        let (order, _) = self.deck_order(starter);
        Setup {
            ruleset: self.ruleset,
            seats: self.seats,
            options: self.options,
            first_dealer: Some(self.dealer),
            deck: Some(order),
        }
    }

    /// Deals through `Game::new`.
    pub fn start(&mut self) -> (Game, Vec<Event>) {
        let setup = self.setup();
        Game::new(&setup, &mut rng()).expect("valid setup")
    }

    /// The position where the named hands are held (on the dark side after [`Table::dark`]), the named card is on top of the discard pile
    /// with `color` current (for a wild), and `turn` is to play. Returns the game and its log.
    pub fn position(&mut self, turn: Seat, color: Option<Color>) -> (Game, Vec<Event>) {
        let top = self.top.expect("a top discard");
        // The seat that plays the top card last holds it among its dealt cards.
        let holder = (0..self.seats)
            .min_by_key(|&s| self.hands[s].len())
            .expect("seats");
        let starter = self.fillers(1)[0];
        let named = self.hands.clone();
        self.hands[holder].push(top);
        let (order, dealt) = self.deck_order(starter);
        let mut log = vec![
            Event::GameCreated {
                ruleset: self.ruleset,
                seats: self.seats,
                options: self.options,
            },
            Event::DealerChosen {
                draws: Vec::new(),
                dealer: self.dealer,
            },
            Event::RoundStarted {
                round: 1,
                dealer: self.dealer,
                deck: order,
            },
        ];
        for seat in 0..self.seats {
            for &card in &dealt[seat] {
                if !named[seat].contains(&card) && card != top {
                    log.push(Event::CardPlayed {
                        seat,
                        card,
                        color: None,
                        uno: true,
                    });
                }
            }
        }
        if self.dark {
            log.push(Event::Flipped);
        }
        log.push(Event::CardPlayed {
            seat: holder,
            card: top,
            color,
            uno: true,
        });
        log.push(Event::TurnStarted { seat: turn });
        let game = Game::replay(&log).expect("a valid log");
        for seat in 0..self.seats {
            assert_eq!(
                game.hand(seat),
                named[seat].as_slice(),
                "arranged hand of {seat}"
            );
        }
        (game, log)
    }
}

fn matches_spec(deck: &Deck, id: CardId, spec: &str) -> bool {
    let Some(card) = deck.get(id) else {
        return false;
    };
    if let Some(n) = spec.strip_prefix('#') {
        return n.parse::<u8>().is_ok_and(|n| n == id.0);
    }
    if let Some((light, dark)) = spec.split_once('|') {
        return face(light) == card.light && Some(face(dark)) == card.dark;
    }
    if let Some(dark) = spec.strip_prefix("dark ") {
        return Some(face(dark)) == card.dark;
    }
    let f = face(spec);
    let dark_only = f.color.is_some_and(|c| c.side() == Side::Dark)
        || matches!(
            f.kind,
            unoflip::rules::Kind::WildDrawColor
                | unoflip::rules::Kind::DrawFive
                | unoflip::rules::Kind::SkipEveryone
        );
    if dark_only {
        Some(f) == card.dark
    } else {
        f == card.light
    }
}

/// A face from its printed name.
pub fn face(s: &str) -> Face {
    s.parse().unwrap_or_else(|e| panic!("{e}"))
}

/// Plays `action` for `seat`, which must be legal, and returns its events.
pub fn act(game: &mut Game, seat: Seat, action: Action) -> Vec<Event> {
    assert!(
        game.legal_actions(seat).contains(&action),
        "{action:?} for seat {seat} is not listed: {:?}",
        game.legal_actions(seat)
    );
    game.act(seat, action, &mut rng())
        .unwrap_or_else(|e| panic!("{action:?} for seat {seat} refused: {e}"))
}

/// The action of playing a non-wild card without calling UNO.
pub fn plain(card: CardId) -> Action {
    Action::Play {
        card,
        color: None,
        uno: false,
    }
}

/// The action of playing a wild with `color`, without calling UNO.
pub fn wild(card: CardId, color: Color) -> Action {
    Action::Play {
        card,
        color: Some(color),
        uno: false,
    }
}

/// Plays a card (no color, no UNO call).
pub fn play(game: &mut Game, seat: Seat, card: CardId) -> Vec<Event> {
    act(game, seat, plain(card))
}

/// Plays a wild with a color.
pub fn play_wild(game: &mut Game, seat: Seat, card: CardId, color: Color) -> Vec<Event> {
    act(game, seat, wild(card, color))
}

/// Asserts that `action` is refused with `reason` and changes nothing.
pub fn assert_refused(game: &mut Game, seat: Seat, action: Action, reason: &str) {
    let before = game.clone();
    let err = game
        .act(seat, action, &mut rng())
        .expect_err("the action should be refused");
    assert_eq!(err.reason(), reason, "{err}");
    assert_eq!(*game, before, "a refused action changed the game");
}

/// The draw pile, top card first.
pub fn draw_top_first(game: &Game) -> Vec<CardId> {
    game.draw_pile().iter().rev().copied().collect()
}

/// The top `n` cards of the draw pile, top first.
pub fn draw_top(game: &Game, n: usize) -> Vec<CardId> {
    draw_top_first(game).into_iter().take(n).collect()
}

/// Asserts the game waits for `seat` to play or draw.
pub fn assert_turn(game: &Game, seat: Seat) {
    assert_eq!((game.turn(), game.phase()), (seat, Phase::Play));
}

/// Checks that every card of the deck is in exactly one place.
pub fn assert_conserved(game: &Game) {
    let mut seen = vec![0u8; game.deck().len()];
    let places = game
        .hands()
        .iter()
        .flatten()
        .chain(game.draw_pile())
        .chain(game.discard_pile());
    for id in places {
        seen[id.index()] += 1;
    }
    assert!(
        seen.iter().all(|&n| n == 1),
        "cards not conserved: {seen:?}"
    );
}

/// The game after `seat`, holding `card` and one other card, plays `card` on `top` (a UNO Flip
/// table of `seats`, on the dark side when `dark`). Every other hand is empty.
pub fn after_playing(seats: usize, dark: bool, seat: Seat, top: &str, card: &str) -> Game {
    let mut t = Table::flip(seats);
    if dark {
        t = t.dark();
    }
    let [top, card, other] = t.cards([top, card, if dark { "teal 7" } else { "blue 7" }]);
    t.hand(seat, &[card, other]).top(top);
    let (mut game, _) = t.position(seat, None);
    play(&mut game, seat, card);
    game
}

/// A move that is always legal for the seat to move and needs no choice of card: draw, keep,
/// take the penalty, or declare the first color of the active side. For tests that only need
/// the game to move on.
pub fn plain_move(awaiting: unoflip::proto::Awaiting, dark: bool) -> Option<Action> {
    use unoflip::proto::Awaiting as A;
    Some(match awaiting {
        A::Play => Action::Draw,
        A::PlayOrKeepDrawn => Action::Keep,
        A::Penalty => Action::Accept,
        A::ChooseColor if dark => Action::ChooseColor { color: Color::Pink },
        A::ChooseColor => Action::ChooseColor { color: Color::Red },
        _ => return None,
    })
}
