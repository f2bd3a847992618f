//! The deck tables [F-DECK-1..4], [C-DECK-1].

use std::collections::HashMap;

use unoflip::rules::{Color, Deck, Face, Kind, Ruleset, Side};

fn count_by<F: Fn(&Face) -> bool>(faces: impl Iterator<Item = Face>, f: F) -> usize {
    faces.filter(|x| f(x)).count()
}

fn check_side(faces: Vec<Face>, side: Side, actions: [Kind; 4], wild_draw: Kind) {
    assert_eq!(faces.len(), 112);
    for color in Color::of_side(side) {
        for n in 1..=9 {
            let number = Face::new(color, Kind::Number(n));
            assert_eq!(
                count_by(faces.iter().copied(), |f| *f == number),
                2,
                "{number}"
            );
        }
        for kind in actions {
            let action = Face::new(color, kind);
            assert_eq!(
                count_by(faces.iter().copied(), |f| *f == action),
                2,
                "{action}"
            );
        }
    }
    assert_eq!(
        count_by(faces.iter().copied(), |f| *f == Face::wild(Kind::Wild)),
        4
    );
    assert_eq!(
        count_by(faces.iter().copied(), |f| *f == Face::wild(wild_draw)),
        4
    );
}

#[test]
fn f_deck_1_112_cards_each_with_a_light_and_a_dark_face() {
    let deck = Deck::of(Ruleset::Flip);
    assert_eq!(deck.len(), 112);
    assert!(deck.cards().iter().all(|c| c.dark.is_some()));
    let ids: Vec<u8> = deck.ids().map(|id| id.0).collect();
    assert_eq!(ids, (0..112).collect::<Vec<u8>>());
}

// [F-DECK-2]
#[test]
fn f_deck_2_light_faces() {
    let faces = Deck::of(Ruleset::Flip)
        .cards()
        .iter()
        .map(|c| c.light)
        .collect();
    check_side(
        faces,
        Side::Light,
        [Kind::DrawOne, Kind::Reverse, Kind::Skip, Kind::Flip],
        Kind::WildDrawTwo,
    );
}

// [F-DECK-3]
#[test]
fn f_deck_3_dark_faces() {
    let faces = Deck::of(Ruleset::Flip)
        .cards()
        .iter()
        .filter_map(|c| c.dark)
        .collect();
    check_side(
        faces,
        Side::Dark,
        [
            Kind::DrawFive,
            Kind::Reverse,
            Kind::SkipEveryone,
            Kind::Flip,
        ],
        Kind::WildDrawColor,
    );
}

// [F-DECK-4]
#[test]
fn f_deck_4_pairing_is_the_shipped_table() {
    let deck = Deck::of(Ruleset::Flip);
    let shipped = include_str!("../../data/flip-deck.tsv");
    let mut rows = 0;
    for line in shipped.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let id: usize = cols[0].parse().expect("id");
        let card = deck.cards()[id];
        assert_eq!(card.light.to_string(), cols[1], "light face of #{id}");
        assert_eq!(
            card.dark.map(|d| d.to_string()).as_deref(),
            Some(cols[2]),
            "dark face of #{id}"
        );
        rows += 1;
    }
    assert_eq!(rows, 112);
    // Spot checks against the physical deck's table.
    assert_eq!(deck.cards()[0].light.to_string(), "red 1");
    assert_eq!(
        deck.cards()[0].dark.map(|d| d.to_string()).as_deref(),
        Some("pink 3")
    );
    assert_eq!(deck.cards()[77].light.to_string(), "green flip");
    assert_eq!(
        deck.cards()[77].dark.map(|d| d.to_string()).as_deref(),
        Some("wild-draw-color")
    );
}

#[test]
fn f_deck_4_shipped_copy_matches_the_shared_table_when_present() {
    // CI has ../shared beside the project; a user's clone does not, and then this has nothing to
    // compare.
    for name in ["flip-deck.tsv", "classic-deck.tsv"] {
        let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared")
            .join(name);
        let Ok(text) = std::fs::read_to_string(&shared) else {
            eprintln!(
                "SKIPPED: {} not found; nothing to compare",
                shared.display()
            );
            continue;
        };
        let ours = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("data")
                .join(name),
        )
        .expect("shipped data");
        assert_eq!(ours, text, "data/{name} differs from ../shared/{name}");
    }
}

#[test]
fn c_deck_1_108_classic_cards() {
    let deck = Deck::of(Ruleset::Classic);
    assert_eq!(deck.len(), 108);
    let mut counts: HashMap<Face, usize> = HashMap::new();
    for card in deck.cards() {
        assert!(card.dark.is_none());
        *counts.entry(card.light).or_default() += 1;
    }
    for color in Color::of_side(Side::Light) {
        assert_eq!(counts[&Face::new(color, Kind::Number(0))], 1);
        for n in 1..=9 {
            assert_eq!(counts[&Face::new(color, Kind::Number(n))], 2);
        }
        for kind in [Kind::Skip, Kind::Reverse, Kind::DrawTwo] {
            assert_eq!(counts[&Face::new(color, kind)], 2);
        }
    }
    assert_eq!(counts[&Face::wild(Kind::Wild)], 4);
    assert_eq!(counts[&Face::wild(Kind::WildDrawFour)], 4);
}

#[test]
fn faces_print_and_parse_as_the_tables_write_them() {
    for text in [
        "red 5",
        "pink skip-everyone",
        "wild-draw-color",
        "blue draw-one",
        "wild",
    ] {
        let face: Face = text.parse().expect("parses");
        assert_eq!(face.to_string(), text);
    }
    for bad in ["red", "red 10", "wild 3", "red wild", "magenta 1", ""] {
        assert!(bad.parse::<Face>().is_err(), "{bad:?} should not parse");
    }
}
