//! What a client keeps by folding its stream: a table rebuilt from the view and events it
//! received, compared with the server's view at the same version.

use unoflip::proto as pb;
use unoflip::proto::event::Kind;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    pub version: u64,
    pub hand: Vec<u32>,
    pub counts: Vec<u32>,
    pub backs: Vec<Vec<pb::Face>>,
    pub discard: Vec<pb::Card>,
    pub draw_count: u32,
    pub draw_top: Option<pb::Face>,
    pub side: i32,
    pub direction: i32,
    pub color: i32,
    pub turn: u32,
    pub scores: Vec<u32>,
}

fn key(f: &pb::Face) -> (i32, i32, u32) {
    (f.color, f.kind, f.number)
}

fn sort(faces: &mut [pb::Face]) {
    faces.sort_by_key(key);
}

impl Table {
    pub fn from_view(v: &pb::View) -> Table {
        let mut t = Table {
            version: v.version,
            hand: v.hand.iter().map(|c| c.id).collect(),
            counts: v.players.iter().map(|p| p.card_count).collect(),
            backs: v.players.iter().map(|p| p.backs.clone()).collect(),
            discard: v.discard.clone(),
            draw_count: v.draw_count,
            draw_top: v.draw_top,
            side: v.side,
            direction: v.direction,
            color: v.color,
            turn: v.turn,
            scores: v.players.iter().map(|p| p.score).collect(),
        };
        for b in &mut t.backs {
            sort(b);
        }
        t
    }

    fn face_of(&self, card: &pb::Card, side: i32) -> Option<pb::Face> {
        if side == pb::Side::Dark as i32 {
            card.dark
        } else {
            card.light
        }
    }

    fn other_side(&self) -> i32 {
        if self.side == pb::Side::Dark as i32 {
            pb::Side::Light as i32
        } else {
            pb::Side::Dark as i32
        }
    }

    fn top_color(&self) -> i32 {
        self.discard
            .last()
            .and_then(|c| self.face_of(c, self.side))
            .map_or(0, |f| f.color)
    }

    /// Folds one event; `me` is the viewer's seat.
    pub fn apply(&mut self, e: &pb::Event, me: Option<u32>) {
        assert_eq!(e.version, self.version + 1, "gapless");
        self.version = e.version;
        match e.kind.as_ref().unwrap() {
            Kind::RoundStarted(r) => {
                self.hand = r.hand.iter().map(|c| c.id).collect();
                self.counts = r.players.iter().map(|p| p.card_count).collect();
                self.backs = r.players.iter().map(|p| p.backs.clone()).collect();
                self.backs.iter_mut().for_each(|b| sort(b));
                self.discard = vec![r.starter.unwrap()];
                self.draw_count = r.draw_count;
                self.draw_top = r.draw_top;
                self.side = pb::Side::Light as i32;
                self.direction = pb::Direction::Clockwise as i32;
                self.color = self.top_color();
                self.turn = (r.dealer + 1) % self.counts.len() as u32;
                self.scores.resize(self.counts.len(), 0);
            }
            Kind::StarterReturned(s) => {
                self.discard = vec![s.turned.unwrap()];
                self.draw_top = s.draw_top;
                self.color = self.top_color();
            }
            Kind::TurnStarted(t) => self.turn = t.seat,
            Kind::CardPlayed(p) => {
                let card = p.card.unwrap();
                let seat = p.seat as usize;
                if me == Some(p.seat) {
                    let at = self
                        .hand
                        .iter()
                        .position(|&c| c == card.id)
                        .expect("played from hand");
                    self.hand.remove(at);
                }
                self.counts[seat] -= 1;
                if let Some(back) = self
                    .face_of(&card, self.other_side())
                    .filter(|_| card.dark.is_some())
                {
                    let at = self.backs[seat]
                        .iter()
                        .position(|b| *b == back)
                        .expect("its back was shown");
                    self.backs[seat].remove(at);
                }
                self.discard.push(card);
                self.color = if p.color != 0 {
                    p.color
                } else {
                    self.top_color()
                };
            }
            Kind::ColorChosen(c) => self.color = c.color,
            Kind::ColorRequested(c) => self.turn = c.seat,
            Kind::DirectionReversed(_) => {
                self.direction = if self.direction == pb::Direction::Clockwise as i32 {
                    pb::Direction::CounterClockwise as i32
                } else {
                    pb::Direction::Clockwise as i32
                }
            }
            Kind::Flipped(f) => {
                self.side = self.other_side();
                self.backs = f.players.iter().map(|p| p.backs.clone()).collect();
                self.backs.iter_mut().for_each(|b| sort(b));
                self.draw_top = f.draw_top;
                self.discard.reverse();
                self.color = self.top_color();
            }
            Kind::CardsDrawn(d) => {
                let seat = d.seat as usize;
                self.counts[seat] += d.count;
                self.backs[seat].extend(d.backs.iter().copied());
                sort(&mut self.backs[seat]);
                if me == Some(d.seat) {
                    assert_eq!(d.cards.len() as u32, d.count);
                    self.hand.extend(d.cards.iter().map(|c| c.id));
                } else {
                    assert!(d.cards.is_empty(), "another seat's drawn cards are hidden");
                }
                self.draw_count -= d.count;
                self.draw_top = d.draw_top;
            }
            Kind::Reshuffled(r) => {
                let top = self.discard.pop().unwrap();
                self.discard = vec![top];
                self.draw_count = r.count;
                self.draw_top = r.draw_top;
            }
            Kind::PenaltyPending(p) => self.turn = p.seat,
            Kind::RoundEnded(r) => self.scores = r.result.as_ref().unwrap().totals.clone(),
            _ => {}
        }
    }
}
