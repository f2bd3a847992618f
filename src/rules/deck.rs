//! The two decks, read from the tables shipped in `data/` ([F-DECK-1..4], [C-DECK-1]).
//!
//! The UNO Flip table is the physical deck's pairing of light and dark faces; card ids are the
//! table's row ids and are part of the API.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::card::{CardId, Face, Side};

/// Which game is played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ruleset {
    /// UNO Flip: 112 two-sided cards.
    Flip,
    /// Classic UNO: 108 one-sided cards, always on the light side.
    Classic,
}

/// One physical card of a deck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Card {
    /// Its id, the row of the deck table.
    pub id: CardId,
    /// The light face (the only face of a classic card).
    pub light: Face,
    /// The dark face; `None` in classic UNO.
    pub dark: Option<Face>,
}

impl Card {
    /// The face shown on `side`. Classic cards have one face, which every side reads.
    pub fn face(&self, side: Side) -> Face {
        match side {
            Side::Light => self.light,
            Side::Dark => self.dark.unwrap_or(self.light),
        }
    }

    /// The face turned away when `side` is active: what opponents see of a card in a hand and
    /// everybody sees of the draw pile's top card [V-2], [V-3]. Classic backs show no face.
    pub fn back(&self, side: Side) -> Option<Face> {
        self.dark.map(|_| self.face(side.other()))
    }
}

/// A deck table: every card of one ruleset, indexed by id.
#[derive(Debug, PartialEq, Eq)]
pub struct Deck {
    ruleset: Ruleset,
    cards: Vec<Card>,
    /// Every card's face on each side (light, dark), indexed by id: the engine's hottest lookup,
    /// one load instead of a match on the side and the card's optional dark face.
    faces: [Vec<Face>; 2],
}

static FLIP: LazyLock<Deck> = LazyLock::new(|| {
    Deck::parse(Ruleset::Flip, include_str!("../../data/flip-deck.tsv"))
        .unwrap_or_else(|e| panic!("shipped data/flip-deck.tsv is invalid: {e}"))
});

static CLASSIC: LazyLock<Deck> = LazyLock::new(|| {
    Deck::parse(
        Ruleset::Classic,
        include_str!("../../data/classic-deck.tsv"),
    )
    .unwrap_or_else(|e| panic!("shipped data/classic-deck.tsv is invalid: {e}"))
});

impl Deck {
    /// The deck of a ruleset.
    pub fn of(ruleset: Ruleset) -> &'static Deck {
        match ruleset {
            Ruleset::Flip => &FLIP,
            Ruleset::Classic => &CLASSIC,
        }
    }

    /// The ruleset this deck belongs to.
    pub fn ruleset(&self) -> Ruleset {
        self.ruleset
    }

    /// Number of cards: 112 or 108.
    pub fn len(&self) -> usize {
        self.cards.len()
    }

    /// Never true for the shipped decks.
    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }

    /// Every card, in id order.
    pub fn cards(&self) -> &[Card] {
        &self.cards
    }

    /// The card with this id, if the deck has it.
    pub fn get(&self, id: CardId) -> Option<&Card> {
        self.cards.get(id.index())
    }

    /// Face of a card on a side. Ids that are not in the deck read as a plain wild, which the
    /// engine never produces: it only ever handles ids it checked with [`Deck::get`].
    #[inline]
    pub fn face(&self, id: CardId, side: Side) -> Face {
        let faces = match side {
            Side::Light => &self.faces[0],
            Side::Dark => &self.faces[1],
        };
        faces
            .get(id.index())
            .copied()
            .unwrap_or(Face::wild(super::Kind::Wild))
    }

    /// Every id of this deck, in order.
    pub fn ids(&self) -> impl Iterator<Item = CardId> + '_ {
        self.cards.iter().map(|c| c.id)
    }

    /// Reads a deck table: a header line, then `id<TAB>light[<TAB>dark]` with ids 0.. in order.
    pub fn parse(ruleset: Ruleset, tsv: &str) -> Result<Deck, String> {
        let mut cards = Vec::new();
        for (n, line) in tsv.lines().enumerate().skip(1) {
            if line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            let at = |what: &str| format!("line {}: {what}: {line:?}", n + 1);
            let id: u8 = cols
                .first()
                .and_then(|c| c.trim().parse().ok())
                .ok_or_else(|| at("bad id"))?;
            if usize::from(id) != cards.len() {
                return Err(at("ids must be 0, 1, 2, ... in order"));
            }
            let face = |i: usize| -> Result<Face, String> {
                cols.get(i)
                    .ok_or_else(|| at("missing face"))?
                    .parse()
                    .map_err(|e| at(&format!("{e}")))
            };
            let light = face(1)?;
            let dark = match ruleset {
                Ruleset::Flip => Some(face(2)?),
                Ruleset::Classic => None,
            };
            cards.push(Card {
                id: CardId(id),
                light,
                dark,
            });
        }
        let faces =
            [Side::Light, Side::Dark].map(|side| cards.iter().map(|c| c.face(side)).collect());
        Ok(Deck {
            ruleset,
            cards,
            faces,
        })
    }
}
