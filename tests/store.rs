//! One conformance suite for every event store backend, then what only a file store can show:
//! data survives reopening, and damaged data is refused by name.

#[path = "kit/mod.rs"]
mod kit;

use std::sync::Arc;

use unoflip::rules::{Event, Options, Ruleset, Seat};
use unoflip::store::{Committed, EntryKind, EventStore, MemoryStore, SqliteStore, StoreError};
use unoflip::store::{Events, Records};

/// The PostgreSQL tests share one database: the test that damages rows must not overlap the
/// ones reading every game's events.
static POSTGRES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn created() -> Event {
    Event::GameCreated {
        ruleset: Ruleset::Flip,
        seats: 2,
        options: Options::default(),
    }
}

fn turn(seat: Seat) -> Event {
    Event::TurnStarted { seat }
}

/// The refusal of an append to `game` that expected `expected` while the store is at `actual`.
fn conflict(game: &str, expected: u64, actual: u64) -> Result<u64, StoreError> {
    Err(StoreError::Conflict {
        game: game.into(),
        expected,
        actual,
    })
}

/// Every event after global position `after`, read `page` at a time.
async fn read_all(store: &dyn EventStore, mut after: u64, page: usize) -> Vec<Committed> {
    let mut all = Vec::new();
    loop {
        let batch = store.read_all(after, page).await.unwrap();
        assert!(batch.len() <= page);
        let Some(last) = batch.last() else {
            return all;
        };
        after = last.position;
        all.extend(batch);
    }
}

/// The conformance suite. Game names start with `p` so that runs sharing a database do not meet;
/// `start` is a global position before any event of this run.
async fn conformance(store: Arc<dyn EventStore>, p: &str, start: u64) {
    let g = |name: &str| format!("games/{p}{name}");
    let (a, b) = (g("a"), g("b"));
    // Appends from 0 and reads back; each append wakes those waiting for new events.
    let mut wake = store.changes();
    assert_eq!(
        store.append(&a, 0, &[created(), turn(1)], None).await,
        Ok(2)
    );
    let expected = format!("2 {a}");
    let woken = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            // Other tests may share the store; "*" may come first on a shared one.
            match wake.recv().await {
                Ok(note) if note.to_note() == expected => return true,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return false,
            }
        }
    })
    .await;
    assert_eq!(woken, Ok(true), "no wake-up for the append");
    assert_eq!(store.read(&a, 0).await.unwrap(), vec![created(), turn(1)]);
    assert_eq!(store.read(&a, 1).await.unwrap(), vec![turn(1)]);
    assert_eq!(store.read(&a, 2).await.unwrap(), vec![]);
    assert_eq!(store.read(&g("none"), 0).await.unwrap(), vec![]);
    // A stale expected version is refused and appends nothing.
    assert_eq!(
        store.append(&a, 1, &[turn(0)], None).await,
        conflict(&a, 1, 2)
    );
    assert_eq!(
        store.append(&a, 5, &[turn(0)], None).await,
        conflict(&a, 5, 2)
    );
    assert_eq!(store.read(&a, 0).await.unwrap().len(), 2);
    assert_eq!(store.append(&a, 2, &[turn(0)], None).await, Ok(3));
    // Games are independent.
    assert_eq!(store.append(&b, 0, &[created()], None).await, Ok(1));
    assert_eq!(store.read(&b, 0).await.unwrap(), vec![created()]);
    // A request id is kept with the events it produced, per game; a refused append keeps none.
    let r = g("requests");
    assert_eq!(store.append(&r, 0, &[created()], Some("r1")).await, Ok(1));
    assert_eq!(
        store.append(&r, 1, &[turn(1), turn(0)], Some("r2")).await,
        Ok(3)
    );
    assert!(matches!(
        store.append(&r, 1, &[turn(1)], Some("r3")).await,
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(store.request(&r, "r1").await, Ok(Some((1, 1))));
    assert_eq!(store.request(&r, "r2").await, Ok(Some((2, 3))));
    assert_eq!(store.request(&r, "r3").await, Ok(None));
    assert_eq!(store.request(&b, "r2").await, Ok(None));
    let mut ids = store.requests(&r, 0).await.unwrap();
    ids.sort();
    assert_eq!(ids, ["r1", "r2"]);
    assert_eq!(store.requests(&r, 1).await, Ok(vec!["r2".to_owned()]));
    assert_eq!(store.requests(&r, 3).await, Ok(vec![]));
    assert_eq!(store.requests(&b, 0).await, Ok(vec![]));
    assert_eq!(store.requests(&g("none"), 0).await, Ok(vec![]));
    // Two writers racing for the same version: exactly one wins.
    let (first, second) = ([turn(0)], [turn(1)]);
    let (x, y) = tokio::join!(
        store.append(&b, 1, &first, None),
        store.append(&b, 1, &second, None)
    );
    assert!(x.is_ok() != y.is_ok(), "{x:?} {y:?}");
    assert_eq!(store.read(&b, 0).await.unwrap().len(), 2);
    // A long append (more events than one SQL statement takes) goes in whole; one that is
    // refused leaves nothing, however long.
    let long = g("long");
    let many: Vec<Event> = std::iter::once(created())
        .chain((0..99).map(|i| turn(i % 2)))
        .collect();
    assert_eq!(store.append(&long, 0, &many, Some("l1")).await, Ok(100));
    assert_eq!(store.read(&long, 0).await.unwrap(), many);
    assert_eq!(store.request(&long, "l1").await, Ok(Some((1, 100))));
    assert!(matches!(
        store.append(&long, 99, &many[1..], None).await,
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(store.read(&long, 0).await.unwrap().len(), 100);
    // Many games at once (group commit in the SQLite and PostgreSQL stores).
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let store = store.clone();
            let game = format!("games/{p}many-{i}");
            tokio::spawn(async move {
                store.append(&game, 0, &[created()], None).await?;
                store
                    .append(&game, 1, &[turn(i % 2), turn(1 - i % 2)], None)
                    .await
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), Ok(3));
    }
    assert_eq!(
        store.read(&g("many-7"), 0).await.unwrap(),
        vec![created(), turn(1), turn(0)]
    );
    // The global order: every event of this run once, positions increasing, each game's events
    // in version order; paging gives the same order and resumes after any position.
    let prefix = format!("games/{p}");
    let all: Vec<Committed> = read_all(&*store, start, 1000)
        .await
        .into_iter()
        .filter(|c| c.game.starts_with(&prefix))
        .collect();
    assert_eq!(all.len(), 3 + 2 + 3 + 100 + 200 * 3);
    assert!(all.windows(2).all(|w| w[0].position < w[1].position));
    for game in [&a, &b, &g("many-7")] {
        let mine: Vec<(u64, Event)> = all
            .iter()
            .filter(|c| &c.game == game)
            .map(|c| (c.version, c.event.clone()))
            .collect();
        let stored = store.read(game, 0).await.unwrap();
        assert_eq!(mine, (1..).zip(stored).collect::<Vec<_>>(), "{game}");
    }
    let paged: Vec<Committed> = read_all(&*store, start, 7)
        .await
        .into_iter()
        .filter(|c| c.game.starts_with(&prefix))
        .collect();
    assert_eq!(paged, all);
    let resumed: Vec<Committed> = read_all(&*store, all[100].position, 50)
        .await
        .into_iter()
        .filter(|c| c.game.starts_with(&prefix))
        .collect();
    assert_eq!(resumed, all[101..].to_vec());
    // The last position: nothing of this run's lies after it.
    let last = store.last_position().await.unwrap();
    assert!(last >= all[all.len() - 1].position, "{last}");
    assert!(
        read_all(&*store, last, 100)
            .await
            .iter()
            .all(|c| !c.game.starts_with(&prefix))
    );
    // Snapshots: the newest one stays.
    assert_eq!(store.snapshot(&a).await.unwrap(), None);
    store.save_snapshot(&a, 2, "two").await.unwrap();
    assert_eq!(store.snapshot(&a).await.unwrap(), Some((2, "two".into())));
    store.save_snapshot(&a, 1, "one").await.unwrap();
    assert_eq!(store.snapshot(&a).await.unwrap(), Some((2, "two".into())));
    store.save_snapshot(&a, 3, "three").await.unwrap();
    assert_eq!(store.snapshot(&a).await.unwrap(), Some((3, "three".into())));
    assert_eq!(store.snapshot(&b).await.unwrap(), None);
    // Lobby records: saved, replaced, and listed while unfinished, oldest first.
    store.save_game(&a, "{\"a\":1}", false).await.unwrap();
    store.save_game(&b, "{\"b\":1}", false).await.unwrap();
    store.save_game(&a, "{\"a\":2}", false).await.unwrap();
    let mine = |list: Vec<(String, String)>| -> Vec<(String, String)> {
        let prefix = format!("games/{p}");
        list.into_iter()
            .filter(|(game, _)| game.starts_with(&prefix))
            .collect()
    };
    assert_eq!(
        mine(store.unfinished().await.unwrap()),
        vec![
            (a.clone(), "{\"a\":2}".to_owned()),
            (b.clone(), "{\"b\":1}".to_owned())
        ]
    );
    assert_eq!(
        store.record(&a).await.unwrap(),
        Some(("{\"a\":2}".to_owned(), false))
    );
    assert_eq!(store.record(&g("none")).await.unwrap(), None);
    store.save_game(&a, "{\"a\":3}", true).await.unwrap();
    assert_eq!(
        mine(store.unfinished().await.unwrap()),
        vec![(b.clone(), "{\"b\":1}".to_owned())]
    );
    // Counting what a reader after a position has still to read, up to a cap.
    let behind = store.count_after(start, u64::MAX).await.unwrap();
    let read = read_all(&*store, start, 1000).await.len() as u64;
    if store.shared() {
        // Other tests may append to a shared store in between.
        assert!(behind >= 200 && read >= 200, "{behind} {read}");
    } else {
        assert_eq!(behind, read);
    }
    assert_eq!(store.count_after(start, 3).await, Ok(3));
    let last = store.last_position().await.unwrap();
    if !store.shared() {
        assert_eq!(store.count_after(last, 10).await, Ok(0));
    }
    // Cursors: none until saved, then the last one saved, each name its own.
    let (c, d) = (format!("{p}nats:A"), format!("{p}nats:B"));
    assert_eq!(store.cursor(&c).await, Ok(None));
    store.save_cursor(&c, 17).await.unwrap();
    store.save_cursor(&c, 42).await.unwrap();
    store.save_cursor(&d, 7).await.unwrap();
    assert_eq!(store.cursor(&c).await, Ok(Some(42)));
    assert_eq!(store.cursor(&d).await, Ok(Some(7)));
    // A lease: granted; on a shared store nobody else gets it until it is dropped.
    let lease = format!("{p}publisher");
    let mut held = store
        .lease(&lease)
        .await
        .unwrap()
        .expect("a free lease is granted");
    assert_eq!(held.check().await, Ok(()));
    if store.shared() {
        assert!(
            store.lease(&lease).await.unwrap().is_none(),
            "a held lease is refused"
        );
        let other = store.lease(&format!("{p}other")).await.unwrap();
        assert!(other.is_some(), "another name is another lease");
        drop(held);
        let mut again = None;
        for _ in 0..100 {
            again = store.lease(&lease).await.unwrap();
            if again.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(again.is_some(), "a dropped lease is granted again");
    }
    entries_conform(&store, p).await;
    players_conform(store, p).await;
}

/// Entries (players, codes, a player's games): written, replaced, refused when taken, listed by
/// prefix in key order. Keys start with `p`, so that runs on a shared PostgreSQL stay apart.
async fn entries_conform(store: &Arc<dyn EventStore>, p: &str) {
    let kind = EntryKind::PlayerGames;
    let k = |key: &str| format!("{p}{key}");
    assert_eq!(store.entry(kind, &k("a/1")).await, Ok(None));
    assert_eq!(
        store.put_entry(kind, &k("a/1"), "one", true).await,
        Ok(true)
    );
    assert_eq!(
        store.put_entry(kind, &k("a/1"), "uno", true).await,
        Ok(false),
        "create_only refuses a taken key"
    );
    assert_eq!(store.entry(kind, &k("a/1")).await, Ok(Some("one".into())));
    assert_eq!(
        store.put_entry(kind, &k("a/1"), "uno", false).await,
        Ok(true)
    );
    assert_eq!(store.entry(kind, &k("a/1")).await, Ok(Some("uno".into())));
    for key in ["a/3", "a/2", "ab/1", "b/1", "a"] {
        assert_eq!(store.put_entry(kind, &k(key), key, true).await, Ok(true));
    }
    // Another kind is another table: the same key there is another entry.
    let other = EntryKind::InviteCodes;
    assert_eq!(store.put_entry(other, &k("a/0"), "x", true).await, Ok(true));
    assert_eq!(store.put_entry(other, &k("a/1"), "x", true).await, Ok(true));
    assert_eq!(store.entry(kind, &k("a/0")).await, Ok(None));
    assert_eq!(store.entry(other, &k("a/1")).await, Ok(Some("x".into())));
    let listed = store.entries(kind, &k("a/"), 10).await.unwrap();
    assert_eq!(
        listed,
        vec![
            (k("a/1"), "uno".to_owned()),
            (k("a/2"), "a/2".to_owned()),
            (k("a/3"), "a/3".to_owned()),
        ]
    );
    assert_eq!(
        store.entries(kind, &k("a/"), 2).await.unwrap(),
        listed[..2].to_vec()
    );
    assert_eq!(store.entries(kind, &k(""), 100).await.unwrap().len(), 6);
    assert_eq!(store.entries(kind, &k("c"), 100).await, Ok(vec![]));
    // Removed only while it holds the value named: an entry taken again since stays.
    assert_eq!(
        store.remove_entry(kind, &k("a/2"), "other").await,
        Ok(false)
    );
    assert_eq!(store.entry(kind, &k("a/2")).await, Ok(Some("a/2".into())));
    assert_eq!(store.remove_entry(kind, &k("a/2"), "a/2").await, Ok(true));
    assert_eq!(store.entry(kind, &k("a/2")).await, Ok(None));
    assert_eq!(store.remove_entry(kind, &k("a/2"), "a/2").await, Ok(false));
    assert_eq!(
        store.entries(kind, &k("a/"), 10).await.unwrap(),
        vec![listed[0].clone(), listed[2].clone()]
    );
    // A removed key is free again.
    assert_eq!(
        store.put_entry(kind, &k("a/2"), "again", true).await,
        Ok(true)
    );
    assert_eq!(store.entry(kind, &k("a/2")).await, Ok(Some("again".into())));
}

/// Players, the seats they took and invite codes, as the service keeps them in a store.
async fn players_conform(store: Arc<dyn EventStore>, p: &str) {
    use unoflip::service::accounts::players::{Players, as_code};
    let players = Players::new(store.clone(), None);
    let (ada, token) = players.register("  Ada  ", false).await.unwrap();
    assert_eq!(ada.display_name, "Ada");
    assert!(!ada.bot);
    assert!(
        !ada.token_hash.contains(&token),
        "only the token's hash is kept"
    );
    assert_eq!(players.get(&ada.name).await.unwrap(), ada);
    assert_eq!(
        players
            .authenticate(&ada.name, Some(&token))
            .await
            .unwrap()
            .player,
        ada
    );
    // players/me finds the player by its token alone.
    assert_eq!(
        players
            .authenticate("players/me", Some(&token))
            .await
            .unwrap()
            .player,
        ada
    );
    let (bot, bot_token) = players.register("Robo", true).await.unwrap();
    assert!(bot.bot);
    assert_ne!(bot.name, ada.name);
    let refused = players.authenticate(&ada.name, Some(&bot_token)).await;
    assert_eq!(
        refused.map(|c| c.player).map_err(|e| e.reason().as_str()),
        Err("PLAYER_TOKEN_INVALID")
    );
    let nobody = players
        .authenticate("players/me", Some(&"0".repeat(64)))
        .await;
    assert_eq!(
        nobody.map(|c| c.player).map_err(|e| e.reason().as_str()),
        Err("PLAYER_TOKEN_INVALID")
    );
    assert_eq!(
        players
            .get("players/0123456789abcdef")
            .await
            .map_err(|e| e.reason().as_str()),
        Err("PLAYER_NOT_FOUND")
    );
    // A player stored before player tokens were indexed is still found by players/me: the
    // server indexes such players once.
    let old_token = format!("{p}-an-old-token");
    let old_id = hex::encode(unoflip::service::accounts::secret::hash(p))[..16].to_owned();
    let old = unoflip::service::accounts::players::Player {
        name: format!("players/{old_id}"),
        display_name: "Old".into(),
        bot: false,
        token_hash: hex::encode(unoflip::service::accounts::secret::hash(&old_token)),
        created_unix: 1,
        ratings: Default::default(),
        seat_key: None,
    };
    store
        .put_entry(
            EntryKind::Players,
            &old_id,
            &serde_json::to_string(&old).unwrap(),
            false,
        )
        .await
        .unwrap();
    let fresh_server = Players::new(store.clone(), None);
    let me = fresh_server
        .authenticate("players/me", Some(&old_token))
        .await
        .unwrap();
    assert_eq!((me.player, me.seat_key), (old, old_token));
    // Seats, newest first.
    let (g1, g2) = (format!("games/{p}x1"), format!("games/{p}x2"));
    players.note_seat(&ada.name, &g1, 2).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    players.note_seat(&ada.name, &g2, 0).await.unwrap();
    let seats = players.games(&ada.name, 10).await.unwrap();
    assert_eq!(
        seats
            .iter()
            .map(|s| (s.game.as_str(), s.seat))
            .collect::<Vec<_>>(),
        vec![(g2.as_str(), 0), (g1.as_str(), 2)]
    );
    assert_eq!(players.games(&bot.name, 10).await.unwrap(), vec![]);
    // Codes.
    let code = players.new_code(&g1).await.unwrap();
    assert_eq!(as_code(&code), Some(code.clone()));
    assert_eq!(players.code(&code).await.unwrap(), Some(g1.clone()));
    let other = players.new_code(&g2).await.unwrap();
    assert_ne!(other, code);
    assert_eq!(players.code(&other).await.unwrap(), Some(g2.clone()));

    // Ratings: an outcome is stored once; the players' records follow it, and replaying the
    // stored outcomes gives the same ratings.
    use unoflip::service::accounts::ratings::{Outcome, Rating};
    let heuristic = players
        .builtin(unoflip::bots::Level::Heuristic)
        .await
        .unwrap();
    assert!(heuristic.bot);
    assert_eq!(heuristic.display_name, "Built-in heuristic");
    // (The built-in players are shared by every run on a shared store: outcomes here rate
    // players of this run only.)
    let (cy, _) = players.register("Cy", false).await.unwrap();
    let outcome = |game: &str, places: Vec<(String, usize)>| Outcome {
        game: game.to_owned(),
        ruleset: unoflip::rules::Ruleset::Flip,
        finished_millis: 1,
        places,
    };
    let one = outcome(
        &g1,
        vec![
            (ada.name.clone(), 1),
            (cy.name.clone(), 2),
            (bot.name.clone(), 2),
        ],
    );
    assert!(players.record_outcome(&one).await.unwrap());
    assert!(
        !players.record_outcome(&one).await.unwrap(),
        "a game's outcome counts once"
    );
    let two = outcome(&g2, vec![(bot.name.clone(), 1), (ada.name.clone(), 2)]);
    assert!(players.record_outcome(&two).await.unwrap());
    let rated = players.get(&ada.name).await.unwrap().ratings["flip"];
    assert_eq!((rated.games, rated.wins), (2, 1));
    assert!(rated.sigma < Rating::default().sigma);
    let mut history: Vec<Outcome> = players
        .outcomes()
        .await
        .unwrap()
        .into_iter()
        .filter(|o| o.game.starts_with(&format!("games/{p}")))
        .collect();
    assert_eq!(history.len(), 2);
    let replayed = unoflip::service::accounts::ratings::replay(&mut history);
    for who in [&ada, &bot, &cy] {
        let stored = players.get(&who.name).await.unwrap().ratings["flip"];
        assert_eq!(stored, replayed["flip"][&who.name], "{}", who.display_name);
    }
    if !store_is_shared_by_runs(p) {
        // Recomputing from the history changes nothing that was kept in step.
        let before = players.get(&ada.name).await.unwrap();
        assert_eq!(players.recompute().await.unwrap(), 2);
        assert_eq!(players.get(&ada.name).await.unwrap(), before);
    }
}

/// Whether this run's store holds other runs' data too (the built-in players are shared).
fn store_is_shared_by_runs(p: &str) -> bool {
    !p.is_empty()
}

#[tokio::test]
async fn the_memory_store_conforms() {
    let store = Arc::new(MemoryStore::new());
    assert_eq!(
        store.last_position().await.unwrap(),
        0,
        "nothing stored yet"
    );
    conformance(store, "", 0).await;
}

#[tokio::test]
async fn the_memory_store_forgets_the_games_that_finished_first_past_its_bound() {
    let store = MemoryStore::keeping(2);
    // "live" interleaves its events with every other game's and never finishes.
    store.save_game("games/live", "{}", false).await.unwrap();
    store
        .append("games/live", 0, &[created()], None)
        .await
        .unwrap();
    for (i, game) in ["games/a", "games/b", "games/c"].iter().enumerate() {
        store.save_game(game, "{}", false).await.unwrap();
        store
            .append(game, 0, &[created(), turn(0)], Some("r1"))
            .await
            .unwrap();
        store.save_snapshot(game, 2, "state").await.unwrap();
        store
            .append("games/live", 1 + i as u64, &[turn(1)], None)
            .await
            .unwrap();
        store.save_game(game, "{\"done\":1}", true).await.unwrap();
        // Marked finished again (a rematch link): still counted once.
        store.save_game(game, "{\"done\":2}", true).await.unwrap();
    }
    // "a" finished first and is gone, everything of it; "b" and "c" stay.
    assert_eq!(store.record("games/a").await, Ok(None));
    assert_eq!(store.read("games/a", 0).await, Ok(vec![]));
    assert_eq!(store.request("games/a", "r1").await, Ok(None));
    assert_eq!(store.snapshot("games/a").await, Ok(None));
    for game in ["games/b", "games/c"] {
        assert_eq!(
            store.record(game).await,
            Ok(Some(("{\"done\":2}".into(), true)))
        );
        assert_eq!(store.read(game, 0).await.unwrap().len(), 2);
        assert_eq!(store.request(game, "r1").await, Ok(Some((1, 2))));
        assert_eq!(store.snapshot(game).await, Ok(Some((2, "state".into()))));
    }
    assert_eq!(
        store.unfinished().await,
        Ok(vec![("games/live".into(), "{}".into())])
    );
    // The global order skips the forgotten game's events and keeps every position.
    let all = read_all(&store, 0, 2).await;
    let seen: Vec<(u64, &str, u64)> = all
        .iter()
        .map(|c| (c.position, c.game.as_str(), c.version))
        .collect();
    assert_eq!(
        seen,
        vec![
            (1, "games/live", 1),
            (4, "games/live", 2),
            (5, "games/b", 1),
            (6, "games/b", 2),
            (7, "games/live", 3),
            (8, "games/c", 1),
            (9, "games/c", 2),
            (10, "games/live", 4),
        ]
    );
    assert_eq!(store.last_position().await, Ok(10));
    // A game that finishes does not take a forgotten game's place in the order.
    store.save_game("games/live", "{}", true).await.unwrap();
    assert_eq!(store.record("games/b").await, Ok(None));
    let after: Vec<u64> = read_all(&store, 0, 100)
        .await
        .iter()
        .map(|c| c.position)
        .collect();
    assert_eq!(after, vec![1, 4, 7, 8, 9, 10]);
    // Once the games at the front of the order are all forgotten, their positions are let go of;
    // later positions go on from where they were.
    for game in ["games/d", "games/e"] {
        store.save_game(game, "{}", false).await.unwrap();
        store.append(game, 0, &[created()], None).await.unwrap();
        store.save_game(game, "{}", true).await.unwrap();
    }
    assert_eq!(store.record("games/live").await, Ok(None));
    let left: Vec<(u64, String)> = read_all(&store, 0, 100)
        .await
        .into_iter()
        .map(|c| (c.position, c.game))
        .collect();
    assert_eq!(
        left,
        vec![(11, "games/d".to_owned()), (12, "games/e".to_owned())]
    );
    assert_eq!(store.last_position().await, Ok(12));
    assert_eq!(store.read_all(5, 1).await.unwrap()[0].position, 11);
    assert_eq!(store.count_after(11, 100).await, Ok(1));
}

#[tokio::test]
async fn a_memory_store_url_names_its_bound() {
    for good in [
        "memory",
        "memory?keep-finished-games=5",
        "memory?keep-finished-games=all",
    ] {
        assert!(unoflip::store::open(good).await.is_ok(), "{good}");
    }
    for bad in [
        "memory?keep=5",
        "memory?keep-finished-games=-1",
        "memory?keep-finished-games=",
    ] {
        let Err(StoreError::Unavailable(why)) = unoflip::store::open(bad).await else {
            panic!("{bad} was taken");
        };
        assert!(why.contains("keep-finished-games"), "{why}");
    }
}

#[tokio::test]
async fn the_sqlite_store_conforms() {
    let dir = tempdir();
    conformance(
        Arc::new(SqliteStore::open(&dir.join("events.sqlite3")).unwrap()),
        "",
        0,
    )
    .await;
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "unoflip-test-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        ^ u64::from(std::process::id())
}

#[tokio::test]
async fn a_sqlite_store_keeps_its_events_across_reopening() {
    let path = tempdir().join("events.sqlite3");
    let a = "games/a".to_owned();
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .append(&a, 0, &[created(), turn(1)], None)
            .await
            .unwrap();
        store.save_game(&a, "{}", false).await.unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.read(&a, 0).await.unwrap(), vec![created(), turn(1)]);
    assert_eq!(store.unfinished().await.unwrap().len(), 1);
    assert_eq!(store.append(&a, 2, &[turn(0)], None).await, Ok(3));
}

#[tokio::test]
async fn damaged_sqlite_data_is_refused_with_the_game_and_version() {
    let path = tempdir().join("events.sqlite3");
    let store = SqliteStore::open(&path).unwrap();
    store
        .append("games/bad", 0, &[created(), turn(1), turn(0)], None)
        .await
        .unwrap();
    store
        .append("games/gap", 0, &[created(), turn(1), turn(0)], None)
        .await
        .unwrap();
    store
        .append("games/good", 0, &[created()], None)
        .await
        .unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("UPDATE events SET body = '{\"v\":7,\"type\":\"turn_started\",\"seat\":0}' WHERE game = 'games/bad' AND version = 2", []).unwrap();
        conn.execute(
            "DELETE FROM events WHERE game = 'games/gap' AND version = 2",
            [],
        )
        .unwrap();
    }
    match store.read("games/bad", 0).await {
        Err(e @ StoreError::Corrupt { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("games/bad")
                    && text.contains("event 2")
                    && text.contains("version 7"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store.read("games/gap", 0).await,
        Err(StoreError::Gap {
            game: "games/gap".into(),
            expected: 2,
            found: 3
        })
    );
    assert_eq!(store.read("games/good", 0).await.unwrap(), vec![created()]);
}

#[tokio::test]
async fn the_postgres_store_conforms() {
    let Some(store) = kit::test_postgres().await else {
        return;
    };
    let _alone = POSTGRES.lock().await;
    let start = kit::postgres_position().await;
    conformance(Arc::new(store), &format!("t{}-", rand_suffix()), start).await;
}

/// Earlier versions indexed request ids in PostgreSQL too: a server starting drops the index,
/// and request ids are still found.
#[tokio::test]
async fn a_postgres_server_starting_drops_the_old_request_index() {
    let Some(_) = kit::test_postgres().await else {
        return;
    };
    let _alone = POSTGRES.lock().await;
    let pool = sqlx::PgPool::connect(&kit::test_postgres_url())
        .await
        .unwrap();
    sqlx::query(
        "CREATE INDEX IF NOT EXISTS unoflip_events_request ON unoflip_events (game, request)
         WHERE request IS NOT NULL",
    )
    .execute(&pool)
    .await
    .unwrap();
    let store = kit::test_postgres().await.unwrap();
    let (index,): (bool,) = sqlx::query_as(
        "SELECT EXISTS (SELECT 1 FROM pg_indexes
                        WHERE schemaname = current_schema()
                          AND indexname = 'unoflip_events_request')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(!index, "the index is gone");
    let game = format!("games/t{}-ids", rand_suffix());
    assert_eq!(
        store.append(&game, 0, &[created()], Some("r0")).await,
        Ok(1)
    );
    assert_eq!(store.append(&game, 1, &[turn(1)], Some("r1")).await, Ok(2));
    assert_eq!(store.request(&game, "r1").await, Ok(Some((2, 2))));
    assert_eq!(store.requests(&game, 1).await, Ok(vec!["r1".to_owned()]));
}

/// [Issue: a firehose position that never skips an event committed out of order.] A transaction
/// that took its position first but commits last holds back every event after it; once it
/// commits, both come in position order.
#[tokio::test]
async fn the_postgres_global_order_never_skips_an_event_committed_late() {
    let Some(store) = kit::test_postgres().await else {
        return;
    };
    let _alone = POSTGRES.lock().await;
    let pool = sqlx::PgPool::connect(&kit::test_postgres_url())
        .await
        .unwrap();
    let start = kit::postgres_position().await;
    let (slow, fast) = (
        format!("games/t{}-slow", rand_suffix()),
        format!("games/t{}-fast", rand_suffix()),
    );
    // The slow append's transaction starts (and takes its id) first and stays open.
    let mut open = pool.begin().await.unwrap();
    sqlx::query(
        "INSERT INTO unoflip_events (game, version, body, pos)
         VALUES ($1, 1, $2, pg_current_xact_id()::TEXT::BIGINT << 16)",
    )
    .bind(&slow)
    .bind(unoflip::rules::encode(&created()))
    .execute(&mut *open)
    .await
    .unwrap();
    // A later append commits at once.
    store.append(&fast, 0, &[created()], None).await.unwrap();
    let ours = |all: Vec<Committed>| -> Vec<String> {
        all.into_iter()
            .filter(|c| c.game == slow || c.game == fast)
            .map(|c| c.game)
            .collect()
    };
    assert_eq!(
        ours(read_all(&store, start, 100).await),
        Vec::<String>::new(),
        "the committed event waits behind the open transaction's position"
    );
    open.commit().await.unwrap();
    assert_eq!(
        ours(read_all(&store, start, 100).await),
        vec![slow.clone(), fast.clone()]
    );
}

#[tokio::test]
async fn damaged_postgres_data_is_refused_with_the_game_and_version() {
    let Some(store) = kit::test_postgres().await else {
        return;
    };
    let _alone = POSTGRES.lock().await;
    let game = format!("games/t{}-bad", rand_suffix());
    store
        .append(&game, 0, &[created(), turn(1)], None)
        .await
        .unwrap();
    let pool = sqlx::PgPool::connect(&kit::test_postgres_url())
        .await
        .unwrap();
    let (position,): (i64,) =
        sqlx::query_as("SELECT pos FROM unoflip_events WHERE game = $1 AND version = 1")
            .bind(&game)
            .fetch_one(&pool)
            .await
            .unwrap();
    sqlx::query("UPDATE unoflip_events SET body = 'garbage' WHERE game = $1 AND version = 2")
        .bind(&game)
        .execute(&pool)
        .await
        .unwrap();
    match store.read(&game, 0).await {
        Err(StoreError::Corrupt {
            game: g,
            version: 2,
            ..
        }) => assert_eq!(g, game),
        other => panic!("{other:?}"),
    }
    // The global order stops at the damaged event, naming it.
    match store.read_all(u64::try_from(position).unwrap(), 10).await {
        Err(StoreError::Corrupt {
            game: g,
            version: 2,
            ..
        }) => assert_eq!(g, game),
        other => panic!("{other:?}"),
    }
    // The database is shared: take the damage away again.
    sqlx::query("DELETE FROM unoflip_events WHERE game = $1")
        .bind(&game)
        .execute(&pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn two_sqlite_stores_on_one_file_never_write_over_each_other() {
    // Two servers on one file: each store's writer must see the other's appends, so a stale
    // expected version is refused and nothing is written twice or over.
    let path = tempdir().join("events.sqlite3");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    let g = "games/shared";
    assert_eq!(a.append(g, 0, &[created(), turn(1)], None).await, Ok(2));
    assert_eq!(b.append(g, 2, &[turn(0)], None).await, Ok(3));
    // a last wrote version 2; the file is at 3.
    assert_eq!(a.append(g, 2, &[turn(1)], None).await, conflict(g, 2, 3));
    assert_eq!(a.append(g, 3, &[turn(1)], None).await, Ok(4));
    // b last wrote 3, the file is at 4.
    assert!(matches!(
        b.append(g, 3, &[turn(0)], None).await,
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(b.append(g, 4, &[turn(0)], None).await, Ok(5));
    // b appends two at once: a, which last wrote 4, is told exactly where the file is.
    assert_eq!(b.append(g, 5, &[turn(1), turn(0)], None).await, Ok(7));
    assert_eq!(a.append(g, 5, &[turn(1)], None).await, conflict(g, 5, 7));
    assert_eq!(a.append(g, 7, &[turn(1)], None).await, Ok(8));
    // a's writer holds 8 as the game's version (its tail); b moves it on by two, and a, which
    // sees that another connection wrote, refuses its stale append with where the game now is.
    assert_eq!(b.append(g, 8, &[turn(0), turn(1)], None).await, Ok(10));
    assert_eq!(a.append(g, 8, &[turn(0)], None).await, conflict(g, 8, 10));
    let expected = vec![
        created(),
        turn(1),
        turn(0),
        turn(1),
        turn(0),
        turn(1),
        turn(0),
        turn(1),
        turn(0),
        turn(1),
    ];
    assert_eq!(a.read(g, 0).await.unwrap(), expected);
    assert_eq!(b.read(g, 0).await.unwrap(), expected);
    let all = read_all(&a, 0, 100).await;
    let versions: Vec<u64> = all.iter().map(|c| c.version).collect();
    assert_eq!(versions, (1..=10).collect::<Vec<u64>>());
    assert!(all.windows(2).all(|w| w[0].position < w[1].position));
}

/// The number `sql` reads from the SQLite file at `path`, through a connection of its own.
fn in_file(path: &std::path::Path, sql: &str) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row(sql, [], |row| row.get(0))
        .unwrap()
}

/// A SQLite file an earlier version made: its events table, with `columns` besides the first
/// ones, then `more`.
fn old_sqlite_file(columns: &str, more: &str) -> std::path::PathBuf {
    let path = tempdir().join("events.sqlite3");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE events (
             position INTEGER PRIMARY KEY AUTOINCREMENT,
             game TEXT NOT NULL,
             version INTEGER NOT NULL,
             body TEXT NOT NULL,
             {columns}
             UNIQUE (game, version)
         );
         {more}"
    ))
    .unwrap();
    path
}

#[tokio::test]
async fn a_new_sqlite_file_numbers_events_without_a_counter_and_never_twice() {
    // A new file's positions are rowids, with no `AUTOINCREMENT` counter (whose page every
    // commit rewrote): positions still go up across a reopening, and none is given twice.
    let path = tempdir().join("events.sqlite3");
    {
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(
            store
                .append("games/a", 0, &[created(), turn(1)], None)
                .await,
            Ok(2)
        );
        assert_eq!(store.append("games/b", 0, &[created()], None).await, Ok(1));
    }
    let counters = in_file(
        &path,
        "SELECT COUNT(*) FROM sqlite_master WHERE name = 'sqlite_sequence'",
    );
    assert_eq!(counters, 0, "no AUTOINCREMENT counter");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.append("games/a", 2, &[turn(0)], None).await, Ok(3));
    let all = read_all(&store, 0, 10).await;
    let positions: Vec<u64> = all.iter().map(|c| c.position).collect();
    assert_eq!(positions, vec![1, 2, 3, 4]);
    assert_eq!(
        all.iter()
            .map(|c| (c.game.as_str(), c.version))
            .collect::<Vec<_>>(),
        vec![
            ("games/a", 1),
            ("games/a", 2),
            ("games/b", 1),
            ("games/a", 3)
        ]
    );
}

#[tokio::test]
async fn a_sqlite_file_made_before_request_ids_gains_them_on_opening() {
    // Files made before request ids were kept have no `request` column: opening adds it.
    let path = old_sqlite_file("", "");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        store.append("games/old", 0, &[created()], None).await,
        Ok(1)
    );
    assert_eq!(
        store.append("games/old", 1, &[turn(1)], Some("r1")).await,
        Ok(2)
    );
    assert_eq!(store.request("games/old", "r1").await, Ok(Some((2, 2))));
    assert_eq!(store.request("games/old", "r0").await, Ok(None));
}

#[tokio::test]
async fn a_sqlite_file_with_the_old_request_index_loses_it_and_keeps_its_request_ids() {
    // Earlier versions indexed request ids; opening drops the index (every append paid a page
    // of it) and the ids are still found, through the `(game, version)` key.
    let path = old_sqlite_file(
        "request TEXT,",
        "CREATE INDEX events_request ON events (game, request) WHERE request IS NOT NULL;",
    );
    {
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(
            store.append("games/old", 0, &[created()], Some("r0")).await,
            Ok(1)
        );
        assert_eq!(
            store.append("games/old", 1, &[turn(1)], Some("r1")).await,
            Ok(2)
        );
    }
    let index = in_file(
        &path,
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_request'",
    );
    assert_eq!(index, 0, "the index is gone");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.request("games/old", "r1").await, Ok(Some((2, 2))));
    assert_eq!(
        store.requests("games/old", 1).await,
        Ok(vec!["r1".to_owned()])
    );
}

/// Each of `games` reads back as `whole` (1,000 events appended a hundred at a time, with
/// request ids `r0`..`r9`), and refuses a stale append.
async fn every_game_whole(store: &SqliteStore, games: &[String], whole: &[Event]) {
    for game in games {
        assert_eq!(store.read(game, 0).await.unwrap(), whole, "{game}");
        assert_eq!(store.read(game, 950).await.unwrap(), whole[950..], "{game}");
        assert_eq!(store.request(game, "r3").await, Ok(Some((301, 400))));
        assert_eq!(store.requests(game, 900).await, Ok(vec!["r9".to_owned()]));
        assert_eq!(
            store.append(game, 999, &[turn(0)], None).await,
            conflict(game, 999, 1000)
        );
    }
}

#[tokio::test]
async fn a_sqlite_store_keys_events_by_game_later_and_still_reads_every_game_whole() {
    // The file keys events by game (`event_keys`) only once more than 131,072 have gone in
    // without, a game at a time; until then the writer keeps their keys. 140 games of 1,000
    // events, appended a hundred at a time in turns, cross that: some games are keyed in part,
    // and every game still reads back whole, with its request ids, and refuses a stale append,
    // before and after reopening (which reads the unkeyed tail from the file).
    let path = tempdir().join("events.sqlite3");
    let games: Vec<String> = (0..140).map(|i| format!("games/k{i}")).collect();
    let hundred: Vec<Event> = (0..100).map(|i| turn(i % 2)).collect();
    let whole: Vec<Event> = (0..10).flat_map(|_| hundred.clone()).collect();
    {
        let store = SqliteStore::open(&path).unwrap();
        for round in 0..10u64 {
            for game in &games {
                let request = format!("r{round}");
                assert_eq!(
                    store
                        .append(game, round * 100, &hundred, Some(&request))
                        .await,
                    Ok(round * 100 + 100)
                );
            }
        }
        every_game_whole(&store, &games, &whole).await;
    }
    let keyed = in_file(&path, "SELECT COUNT(*) FROM event_keys");
    let upto = in_file(&path, "SELECT upto FROM event_keys_upto");
    assert!(
        (1..140_000).contains(&keyed) && upto > 0,
        "{keyed} keys, keyed up to {upto}"
    );
    let store = SqliteStore::open(&path).unwrap();
    every_game_whole(&store, &games, &whole).await;
    for game in &games {
        assert_eq!(store.append(game, 1000, &[turn(0)], None).await, Ok(1001));
    }
    let all = read_all(&store, 0, 5_000).await;
    assert_eq!(all.len(), 140_140);
    assert!(all.windows(2).all(|w| w[0].position < w[1].position));
}

#[tokio::test]
async fn a_sqlite_file_keyed_the_old_way_is_made_again_and_keeps_its_positions() {
    // Files made before 2026-12-07 have a unique index on `(game, version)`: opening makes the
    // events table again without it, keeping every event where it was.
    let path = old_sqlite_file(
        "request TEXT,",
        "INSERT INTO events (position, game, version, body, request) VALUES
             (5, 'games/x', 1, '{\"v\":1,\"type\":\"turn_started\",\"seat\":1}', 'rx'),
             (9, 'games/y', 1, '{\"v\":1,\"type\":\"turn_started\",\"seat\":0}', NULL);",
    );
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.read("games/x", 0).await.unwrap(), vec![turn(1)]);
    assert_eq!(store.read("games/y", 0).await.unwrap(), vec![turn(0)]);
    assert_eq!(store.request("games/x", "rx").await, Ok(Some((1, 1))));
    assert_eq!(
        store.append("games/x", 0, &[turn(0)], None).await,
        conflict("games/x", 0, 1)
    );
    assert_eq!(store.append("games/x", 1, &[turn(0)], None).await, Ok(2));
    let positions: Vec<(String, u64, u64)> = read_all(&store, 0, 10)
        .await
        .into_iter()
        .map(|c| (c.game, c.version, c.position))
        .collect();
    assert_eq!(
        positions[..2],
        [("games/x".to_owned(), 1, 5), ("games/y".to_owned(), 1, 9)]
    );
    assert_eq!(positions.len(), 3);
    assert!(positions[2].2 > 9, "{positions:?}");
    let old_index = in_file(
        &path,
        "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_events%'",
    );
    assert_eq!(old_index, 0);
}

/// Several servers (here three stores, each with its own pool and writer) append to the same
/// games at once, their writers batching several games per statement in whatever order the
/// appends came: every append ends as stored or as a conflict naming the game's version, never
/// as an outage (a deadlock between two batches taking the same games' keys in opposite
/// orders would be one), and each game's log is whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_postgres_appends_to_the_same_games_never_deadlock() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let mut stores = Vec::new();
    for _ in 0..3 {
        let Some(store) = kit::test_postgres().await else {
            return;
        };
        stores.push(Arc::new(store));
    }
    let _alone = POSTGRES.lock().await;
    let pool = sqlx::PgPool::connect(&kit::test_postgres_url())
        .await
        .unwrap();
    let deadlocks = || async {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        n
    };
    let deadlocks_before = deadlocks().await;
    let p = format!("race{}-", rand_suffix());
    let games: Arc<Vec<String>> = Arc::new((0..6).map(|i| format!("games/{p}{i}")).collect());
    let known: Arc<Vec<AtomicU64>> = Arc::new(games.iter().map(|_| AtomicU64::new(0)).collect());
    let stored = Arc::new(AtomicU64::new(0));
    let conflicts = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for (s, store) in stores.iter().enumerate() {
        for t in 0..24 {
            let (store, games, known) = (store.clone(), games.clone(), known.clone());
            let (stored, conflicts) = (stored.clone(), conflicts.clone());
            tasks.push(tokio::spawn(async move {
                let mut failures = Vec::new();
                for i in 0..600usize {
                    let g = (s * 7 + t * 3 + i * 5) % games.len();
                    let expected = known[g].load(Ordering::SeqCst);
                    match store
                        .append(&games[g], expected, &[turn(i % 4)], None)
                        .await
                    {
                        Ok(version) => {
                            stored.fetch_add(1, Ordering::SeqCst);
                            known[g].fetch_max(version, Ordering::SeqCst);
                        }
                        Err(StoreError::Conflict { actual, .. }) => {
                            conflicts.fetch_add(1, Ordering::SeqCst);
                            known[g].fetch_max(actual, Ordering::SeqCst);
                        }
                        Err(other) => failures.push(other.to_string()),
                    }
                }
                failures
            }));
        }
    }
    let mut failures = Vec::new();
    for task in tasks {
        failures.extend(task.await.unwrap());
    }
    assert!(
        failures.is_empty(),
        "{} appends failed: {:?}",
        failures.len(),
        &failures[..failures.len().min(3)]
    );
    // Every stored append is in the logs, each log whole (versions 1..n).
    let mut in_logs = 0;
    for game in games.iter() {
        in_logs += stores[0].read(game, 0).await.unwrap().len() as u64;
    }
    let stored = stored.load(Ordering::SeqCst);
    assert_eq!(in_logs, stored);
    assert!(
        stored > 0 && conflicts.load(Ordering::SeqCst) > 0,
        "both outcomes happened"
    );
    // Not even one retried: no two batches waited for each other in a circle (each such wait
    // lasts PostgreSQL's deadlock timeout, a second, before it is broken).
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    assert_eq!(
        deadlocks().await - deadlocks_before,
        0,
        "deadlocks detected"
    );
}
