//! The task's loop and command routing: each turn it takes the next command, clock wake-up,
//! search answer or store notice, and hands it to the job that does it.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Waits for a change of `version`; never, if there is none to follow. The wait is boxed: most
/// games follow nothing (their store has no other writer), and every game's task would hold its
/// 120 bytes otherwise.
pub(super) async fn changed_or_never(
    version: Option<&mut signal::Receiver>,
) -> Result<(), signal::Closed> {
    match version {
        Some(version) => Box::pin(version.changed()).await,
        None => std::future::pending().await,
    }
}

/// Waits for the store to do `work` for the task (an append), answering meanwhile the streams'
/// reads that come, from what the task holds: committed events only, since `work`'s are applied
/// after it. A durable store takes a commit's time (milliseconds) to append, and the next move
/// would otherwise hold up every stream that had not yet read the last one: a stream that the
/// scheduler woke after the next seat had already moved got the event that much later than its
/// move's acknowledgement. Every other command waits its turn.
pub(super) async fn answering_reads<T>(
    commands: &mut mailbox::Receiver<Box<Command>>,
    log: &EventLog,
    lobby: &Lobby,
    deadline: Option<Instant>,
    work: impl Future<Output = T>,
) -> T {
    let mut work = std::pin::pin!(work);
    loop {
        tokio::select! {
            biased;
            done = &mut work => return done,
            command = commands.take_first(|c| matches!(**c, Command::Read { .. })) => {
                if let Command::Read { after, with_base, reply } = *command {
                    let _ = reply.send(Ok(tail(log, lobby, deadline, after, with_base)));
                }
            }
        }
    }
}

impl Live {
    /// The loop: commands, the store moving on, and the clock, until the game leaves memory.
    pub(super) async fn run(&mut self, mut store_version: Option<signal::Receiver>) {
        let mut following = store_version.is_some();
        // The clock, armed for the next wake while there is one. Boxed: a game with nothing due
        // would hold a timer's 112 bytes in its task otherwise.
        let mut clock: Option<Pin<Box<tokio::time::Sleep>>> = None;
        Box::pin(self.settle()).await;
        loop {
            if self.gone() {
                // No command is taken from now on (a caller finds the game's next task); those
                // already taken are answered. A sender gets its command back from the close
                // on, so the queue holds all there is to answer.
                self.commands.close();
                while let Some(command) = self.commands.recv().await {
                    Box::pin(self.handle(*command)).await;
                }
                return;
            }
            // The clock moves only when the next wake comes sooner than it is set for, or once
            // it went off: a later wake (a person's move puts off the abandon time, a new turn's
            // deadline) is met by waking early, finding nothing due, and setting it again. Every
            // command would otherwise register a timer and take it back.
            match (self.next_wake(), clock.as_mut()) {
                (None, _) => clock = None,
                (Some(at), Some(set)) if !set.is_elapsed() && set.deadline() <= at => {}
                (Some(at), Some(set)) => set.as_mut().reset(at),
                (Some(at), None) => clock = Some(Box::pin(tokio::time::sleep_until(at))),
            }
            let sleep = async {
                match clock.as_mut() {
                    Some(set) => set.as_mut().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                command = self.commands.recv() => match command {
                    Some(command) => Box::pin(self.handle(*command)).await,
                    // The registry forgot this game: nobody can reach it any more.
                    None => return,
                },
                changed = changed_or_never(store_version.as_mut()), if following => {
                    if changed.is_ok() {
                        let announced = store_version
                            .as_mut()
                            .map_or(0, signal::Receiver::get_and_update);
                        // What the task holds already (its own appends are announced too)
                        // needs no read. What is past it does, even when it was announced
                        // while the task was committing a move of its own.
                        if announced > self.log.len() {
                            Box::pin(self.catch_up()).await;
                        }
                    } else {
                        following = false;
                    }
                }
                () = sleep => Box::pin(self.on_clock()).await,
                answer = async {
                    match self.search.as_mut() {
                        Some(search) => (&mut search.answer).await,
                        None => std::future::pending().await,
                    }
                } => Box::pin(self.on_search(answer)).await,
            }
            Box::pin(self.settle()).await;
        }
    }

    pub(super) async fn handle(&mut self, command: Command) {
        match command {
            Command::Describe { reply } => {
                if self.game.is_none() && self.hooks.store.shared() {
                    // Another server sharing the store may have seated someone, or started it.
                    let _ = self.reload_record().await;
                    self.catch_up().await;
                }
                let _ = reply.send(Ok(self.info()));
            }
            Command::SeatOf { token, reply } => {
                let _ = reply.send(self.acting_seat(&token).await);
            }
            Command::Join {
                seat,
                name,
                player,
                reply,
            } => {
                let _ = reply.send(self.join(seat, &name, player).await);
            }
            Command::Start { reply } => {
                let _ = reply.send(self.start().await);
            }
            Command::Submit {
                token,
                action,
                request_id,
                expected_version,
                reply,
            } => {
                let answer = self
                    .submit(&token, action, &request_id, expected_version)
                    .await;
                self.hooks.metrics.move_done(answer.is_ok());
                let _ = reply.send(answer);
            }
            Command::Leave { token, reply } => {
                let _ = reply.send(self.leave(&token).await);
            }
            Command::View { viewer, reply } => {
                let _ = reply.send(self.view(viewer).await);
            }
            Command::Read {
                after,
                with_base,
                reply,
            } => {
                let _ = reply.send(Ok(self.read(after, with_base)));
            }
            Command::LinkRematch { name, reply } => {
                let _ = reply.send(self.link_rematch(name).await);
            }
            Command::Export { admin, reply } => {
                let _ = reply.send(self.export(admin).await);
            }
        }
    }
}
