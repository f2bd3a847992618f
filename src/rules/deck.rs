//! The two decks, read from the tables shipped in `data/` ([F-DECK-1..4], [C-DECK-1]).
//!
//! The UNO Flip table is the physical deck's pairing of light and dark faces; card ids are the
//! table's row ids and are part of the API.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::card::{CardId, Color, Face, Kind, Side};

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
    /// The same faces as [`MatchKey`]s, for the matching test of every card of a hand.
    keys: [Vec<MatchKey>; 2],
}

/// A face reduced to what [F-TURN-2]'s matching test reads, in two bytes: its color (0 for a
/// wild, which has none) and its kind. Listing the plays of a hand compares these instead of
/// whole faces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MatchKey {
    color: u8,
    kind: u8,
}

impl MatchKey {
    /// What an id that is not in the deck reads as (a plain wild, as [`Deck::face`] says).
    pub(super) const WILD: MatchKey = MatchKey {
        color: 0,
        kind: 255,
    };
    /// The kind code that no face has: there is no top discard.
    pub(super) const NO_KIND: u8 = 254;

    fn of(face: Face) -> MatchKey {
        MatchKey {
            color: MatchKey::color_code(face.color),
            kind: MatchKey::kind_code(face.kind),
        }
    }

    /// The code of a color to match, 0 when there is none (a color is to be declared).
    pub(super) fn color_code(color: Option<Color>) -> u8 {
        color.map_or(0, |c| c as u8 + 1)
    }

    /// The code of a kind: the number itself, or 16 and up for the symbols.
    pub(super) fn kind_code(kind: Kind) -> u8 {
        match kind {
            Kind::Number(n) => n,
            Kind::DrawOne => 16,
            Kind::DrawTwo => 17,
            Kind::DrawFive => 18,
            Kind::Reverse => 19,
            Kind::Skip => 20,
            Kind::SkipEveryone => 21,
            Kind::Flip => 22,
            Kind::Wild => 23,
            Kind::WildDrawTwo => 24,
            Kind::WildDrawFour => 25,
            Kind::WildDrawColor => 26,
        }
    }

    /// The kind's code ([`MatchKey::kind_code`]).
    #[inline]
    pub(super) fn kind(self) -> u8 {
        self.kind
    }

    /// Wilds have no color and match anything [F-TURN-2].
    #[inline]
    pub(super) fn is_wild(self) -> bool {
        self.color == 0
    }

    /// [F-TURN-2]: this face may be played when `color` is the current color's code and `kind`
    /// the top discard's kind code: it is a wild, or has that color, or that number or symbol.
    #[inline]
    pub(super) fn matches(self, color: u8, kind: u8) -> bool {
        // `|`, not `||`: one hard-to-predict branch on the outcome instead of three.
        (self.color == 0) | (self.color == color) | (self.kind == kind)
    }
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

    /// Every card's [`MatchKey`] on `side`, indexed by id.
    #[inline]
    pub(super) fn keys(&self, side: Side) -> &[MatchKey] {
        match side {
            Side::Light => &self.keys[0],
            Side::Dark => &self.keys[1],
        }
    }

    /// A card's [`MatchKey`] on `side` (a plain wild's for an id not in the deck).
    #[inline]
    pub(super) fn key(&self, id: CardId, side: Side) -> MatchKey {
        self.keys(side)
            .get(id.index())
            .copied()
            .unwrap_or(MatchKey::WILD)
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
        let faces: [Vec<Face>; 2] =
            [Side::Light, Side::Dark].map(|side| cards.iter().map(|c| c.face(side)).collect());
        let keys = faces
            .each_ref()
            .map(|f| f.iter().map(|&face| MatchKey::of(face)).collect());
        Ok(Deck {
            ruleset,
            cards,
            faces,
            keys,
        })
    }
}
