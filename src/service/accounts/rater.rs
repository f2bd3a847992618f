//! The rater: the one place rated games' results turn into ratings. A game's task reports its
//! finish here on a channel ([`Finish`]) and waits for the answer, so a player who asks for their
//! rating once the last move is acknowledged sees it updated; the task itself knows nothing of
//! ratings.

use tokio::sync::{mpsc, oneshot};

use crate::bots::Level;
use crate::rules::Game;
use crate::service::accounts::players::{self, Players};
use crate::service::accounts::ratings;

/// Who sat at a seat of a rated game.
#[derive(Clone, Debug)]
pub enum Seated {
    /// A registered player, `players/{id}`.
    Player(String),
    /// The server, at a built-in level (rated as that level's player).
    Builtin(Level),
    /// Nobody registered: the game is not rated.
    Nobody,
}

/// A rated game that finished: its final state and who sat where.
pub struct Finish {
    /// `games/{id}`.
    pub game: String,
    /// The final state, for the places.
    pub state: Game,
    /// Each seat's occupant.
    pub seats: Vec<Seated>,
    /// Answered once the ratings are stored (or could not be).
    pub done: oneshot::Sender<()>,
}

/// Where finished rated games are reported.
pub type Finishes = mpsc::UnboundedSender<Finish>;

/// Starts the rater over `players`; it runs while anyone holds the sender.
pub fn start(players: Players) -> Finishes {
    let (finishes, mut reports) = mpsc::unbounded_channel::<Finish>();
    tokio::spawn(async move {
        while let Some(finish) = reports.recv().await {
            rate(&players, &finish).await;
            let _ = finish.done.send(());
        }
    });
    finishes
}

/// Stores a rated game's outcome and updates its players' ratings (once, whichever server sees
/// it finish first).
async fn rate(players: &Players, finish: &Finish) {
    let game = &finish.game;
    let mut seated = Vec::new();
    for (seat, place) in ratings::places(&finish.state).into_iter().enumerate() {
        let player = match finish.seats.get(seat) {
            Some(Seated::Player(name)) => name.clone(),
            Some(Seated::Builtin(level)) => match players.builtin(*level).await {
                Ok(p) => p.name,
                Err(e) => {
                    tracing::warn!(%game, error = %e, "not rated");
                    return;
                }
            },
            Some(Seated::Nobody) | None => {
                tracing::warn!(%game, seat, "not rated: a seat has no player");
                return;
            }
        };
        seated.push((player, place));
    }
    let outcome = ratings::Outcome {
        game: game.clone(),
        ruleset: finish.state.ruleset(),
        finished_millis: players::now_millis(),
        places: seated,
    };
    match players.record_outcome(&outcome).await {
        Ok(true) => tracing::info!(%game, "ratings updated"),
        Ok(false) => {}
        Err(e) => tracing::warn!(%game, error = %e, "ratings not updated"),
    }
}
