//! The pure game: UNO Flip and classic UNO as docs/rules.md describes them.
//!
//! No I/O, no async, no protobuf. A game is built from a [`Setup`] by [`Game::new`]; a seat's
//! [`Action`] becomes [`Event`]s through [`decide`] (or [`Game::act`], the same in place), and
//! [`Game::apply`] folds events into the state, so a game is exactly the fold of its log
//! ([`Game::replay`]). [`Game::legal_actions`] lists what a seat may do; [`Game::view`] and
//! [`project`] give each viewer what docs/rules.md V-* lets it see.
//!
//! Where each rule lives:
//! - `card`, `deck`: faces, colors, point values, the two deck tables [F-DECK], [C-DECK-1].
//! - `setup`: seats, options, first dealer, fixed deck [F-SETUP-1], [F-END-8].
//! - `legal`: matching and the legal actions [F-TURN-2], [F-TURN-5], [F-WDRAW].
//! - `decide`: turns, drawing on a turn, challenges, UNO calls and catches [F-TURN], [F-CHAL],
//!   [F-UNO].
//! - `effect`: action cards, the flip, the first discard, the end of a round and scoring
//!   [F-ACT], [F-FLIP], [F-START], [F-END], [C-*].
//! - `draw`: draws, drawing until a color, reshuffles [F-ACT-11], [F-EMPTY].
//! - `state`: the state and `apply`; `event`: the events; `view`: views and projections [V];
//!   `world`: worlds a seat's view allows, for search bots.
//! - House rules [H], switched on in `setup`'s `HouseRules`: what may be played in `legal`
//!   ([H-STRICT], [H-JUMP], [H-STACK], [H-MULTI], [H-FALSEUNO]); what a play does in `effect`
//!   ([H-SEVEN0], [H-STACK], [H-MULTI], [H-LAST]); [H-DRAWMATCH] in `draw`; false calls and
//!   jump-ins in `decide`; seats out of the round in `state` ([H-LAST]).

mod action;
mod card;
mod decide;
mod deck;
mod draw;
mod effect;
mod event;
mod legal;
mod setup;
mod snapshot;
mod state;
mod tell;
mod view;
mod world;

pub use action::{Action, Cards, MAX_TOGETHER, RuleError};
pub use card::{BySide, CardId, Color, Face, FaceParseError, Kind, Seat, Side};
pub use decide::decide;
pub use deck::{Card, Deck, Ruleset};
pub use event::{DecodeError, DrawCause, Drawn, EVENT_FORMAT, Event, decode, encode};
pub use legal::timeout_move;
pub use setup::{
    DEFAULT_TARGET, HAND_SIZE, HouseRules, MAX_SEATS, MIN_SEATS, Options, Scoring, Setup,
    SetupError,
};
pub use snapshot::{SNAPSHOT_FORMAT, SnapshotError};
pub use state::{Direction, Game, Penalty, Phase, ReplayError, RoundResult};
pub use tell::DrawTell;
pub use view::{
    Awaiting, CardView, PlayerView, RoundSummary, SeenEvent, View, Viewer, project, project_lobby,
};
pub use world::Knowledge;
