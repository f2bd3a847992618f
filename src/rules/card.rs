//! Cards: ids, sides, colors, faces and their point values ([F-DECK], [C-DECK-1], [F-END-4/5]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::Ruleset;

/// A physical card. Ids are fixed by the deck tables (`data/*.tsv`) and never change in a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CardId(pub u8);

impl CardId {
    /// The id as an index into the deck table.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for CardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A seat at the table, `0..seats`. Clockwise is `seat + 1`.
pub type Seat = usize;

/// Which face of the cards is being played. Classic UNO is always on the light side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The side every round starts on.
    Light,
    /// The side reached by a Flip.
    Dark,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::Light => Side::Dark,
            Side::Dark => Side::Light,
        }
    }
}

/// Per-side data, as shakmaty's `ByColor`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BySide<T> {
    /// The light side's value.
    pub light: T,
    /// The dark side's value.
    pub dark: T,
}

impl<T> BySide<T> {
    /// The value for `side`.
    pub fn get(&self, side: Side) -> &T {
        match side {
            Side::Light => &self.light,
            Side::Dark => &self.dark,
        }
    }
}

/// The eight card colors: four light, four dark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    /// Light.
    Red,
    /// Light.
    Yellow,
    /// Light.
    Green,
    /// Light.
    Blue,
    /// Dark.
    Pink,
    /// Dark.
    Teal,
    /// Dark.
    Orange,
    /// Dark.
    Purple,
}

impl Color {
    /// The colors a card can have on `side` (and so the colors a wild may declare there).
    pub fn of_side(side: Side) -> [Color; 4] {
        match side {
            Side::Light => [Color::Red, Color::Yellow, Color::Green, Color::Blue],
            Side::Dark => [Color::Pink, Color::Teal, Color::Orange, Color::Purple],
        }
    }

    /// The side this color is printed on.
    pub fn side(self) -> Side {
        match self {
            Color::Red | Color::Yellow | Color::Green | Color::Blue => Side::Light,
            _ => Side::Dark,
        }
    }

    /// Lower-case name, as in the deck tables.
    pub fn name(self) -> &'static str {
        match self {
            Color::Red => "red",
            Color::Yellow => "yellow",
            Color::Green => "green",
            Color::Blue => "blue",
            Color::Pink => "pink",
            Color::Teal => "teal",
            Color::Orange => "orange",
            Color::Purple => "purple",
        }
    }
}

impl FromStr for Color {
    type Err = FaceParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Color::of_side(Side::Light)
            .into_iter()
            .chain(Color::of_side(Side::Dark))
            .find(|c| c.name() == s)
            .ok_or_else(|| FaceParseError(s.to_owned()))
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is printed on a face besides its color.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A number: 1..9 on UNO Flip, 0..9 in classic UNO.
    Number(u8),
    /// Light side [F-ACT-1].
    DrawOne,
    /// Classic [C-ACT-1].
    DrawTwo,
    /// Dark side [F-ACT-7].
    DrawFive,
    /// Both sides and classic [F-ACT-2].
    Reverse,
    /// Light side and classic [F-ACT-3].
    Skip,
    /// Dark side [F-ACT-9].
    SkipEveryone,
    /// Both sides of UNO Flip [F-ACT-6].
    Flip,
    /// Any side [F-ACT-4], [F-ACT-10].
    Wild,
    /// Light side [F-ACT-5].
    WildDrawTwo,
    /// Classic [C-ACT-1].
    WildDrawFour,
    /// Dark side [F-ACT-11].
    WildDrawColor,
}

impl Kind {
    /// Wilds have no color and match anything [F-TURN-2].
    pub fn is_wild(self) -> bool {
        matches!(
            self,
            Kind::Wild | Kind::WildDrawTwo | Kind::WildDrawFour | Kind::WildDrawColor
        )
    }

    /// The cards a draw card makes its victim take (0 for Wild Draw Color, which draws until a
    /// color, and for every other card).
    pub fn penalty_cards(self) -> u32 {
        match self {
            Kind::DrawOne => 1,
            Kind::DrawTwo | Kind::WildDrawTwo => 2,
            Kind::WildDrawFour => 4,
            Kind::DrawFive => 5,
            _ => 0,
        }
    }

    /// A draw card: its victim draws and loses the turn.
    pub fn is_draw(self) -> bool {
        matches!(
            self,
            Kind::DrawOne
                | Kind::DrawTwo
                | Kind::DrawFive
                | Kind::WildDrawTwo
                | Kind::WildDrawFour
                | Kind::WildDrawColor
        )
    }

    /// The wilds that make the next player draw and that may be challenged [F-WDRAW].
    pub fn is_wild_draw(self) -> bool {
        matches!(
            self,
            Kind::WildDrawTwo | Kind::WildDrawFour | Kind::WildDrawColor
        )
    }

    fn name(self) -> String {
        match self {
            Kind::Number(n) => n.to_string(),
            Kind::DrawOne => "draw-one".into(),
            Kind::DrawTwo => "draw-two".into(),
            Kind::DrawFive => "draw-five".into(),
            Kind::Reverse => "reverse".into(),
            Kind::Skip => "skip".into(),
            Kind::SkipEveryone => "skip-everyone".into(),
            Kind::Flip => "flip".into(),
            Kind::Wild => "wild".into(),
            Kind::WildDrawTwo => "wild-draw-two".into(),
            Kind::WildDrawFour => "wild-draw-four".into(),
            Kind::WildDrawColor => "wild-draw-color".into(),
        }
    }
}

impl FromStr for Kind {
    type Err = FaceParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "draw-one" => Kind::DrawOne,
            "draw-two" => Kind::DrawTwo,
            "draw-five" => Kind::DrawFive,
            "reverse" => Kind::Reverse,
            "skip" => Kind::Skip,
            "skip-everyone" => Kind::SkipEveryone,
            "flip" => Kind::Flip,
            "wild" => Kind::Wild,
            "wild-draw-two" => Kind::WildDrawTwo,
            "wild-draw-four" => Kind::WildDrawFour,
            "wild-draw-color" => Kind::WildDrawColor,
            _ => match s.parse::<u8>() {
                Ok(n) if n <= 9 => Kind::Number(n),
                _ => return Err(FaceParseError(s.to_owned())),
            },
        })
    }
}

/// One printed face: a color (none for wilds) and a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Face {
    /// `None` exactly for wilds.
    pub color: Option<Color>,
    /// Number or symbol.
    pub kind: Kind,
}

impl Face {
    /// A colored face.
    pub const fn new(color: Color, kind: Kind) -> Face {
        Face {
            color: Some(color),
            kind,
        }
    }

    /// A wild face.
    pub const fn wild(kind: Kind) -> Face {
        Face { color: None, kind }
    }

    /// Points this face scores in a hand at the end of a round [F-END-4], [F-END-5], [C-END-1].
    pub fn points(self, ruleset: Ruleset) -> u32 {
        match self.kind {
            Kind::Number(n) => u32::from(n),
            Kind::DrawOne => 10,
            Kind::DrawTwo | Kind::DrawFive | Kind::Reverse | Kind::Skip | Kind::Flip => 20,
            Kind::SkipEveryone => 30,
            Kind::Wild => match ruleset {
                Ruleset::Flip => 40,
                Ruleset::Classic => 50,
            },
            Kind::WildDrawTwo | Kind::WildDrawFour => 50,
            Kind::WildDrawColor => 60,
        }
    }
}

impl FromStr for Face {
    type Err = FaceParseError;
    /// Parses the deck tables' notation: `red 5`, `pink skip-everyone`, `wild-draw-color`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s.split_once(' ') {
            Some((color, kind)) => {
                let kind: Kind = kind.parse()?;
                if kind.is_wild() {
                    return Err(FaceParseError(s.to_owned()));
                }
                Ok(Face::new(color.parse()?, kind))
            }
            None => {
                let kind: Kind = s.parse()?;
                if !kind.is_wild() {
                    return Err(FaceParseError(s.to_owned()));
                }
                Ok(Face::wild(kind))
            }
        }
    }
}

impl fmt::Display for Face {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.color {
            Some(c) => write!(f, "{c} {}", self.kind.name()),
            None => f.write_str(&self.kind.name()),
        }
    }
}

/// A face written in a way the deck tables do not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a card face: {0:?}")]
pub struct FaceParseError(pub String);
