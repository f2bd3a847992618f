//! One conformance suite for every event store backend, then what only a file store can show:
//! data survives reopening, and damaged data is refused by name.

mod common;

use std::sync::Arc;

use unoflip::rules::{Event, Options, Ruleset, Seat};
use unoflip::store::{EventStore, MemoryStore, SqliteStore, StoreError};

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

/// The conformance suite. Game names start with `p` so that runs sharing a database do not meet.
async fn conformance(store: Arc<dyn EventStore>, p: &str) {
    let g = |name: &str| format!("games/{p}{name}");
    let (a, b) = (g("a"), g("b"));
    // Appends from 0 and reads back.
    assert_eq!(store.append(&a, 0, &[created(), turn(1)]).await, Ok(2));
    assert_eq!(store.read(&a, 0).await.unwrap(), vec![created(), turn(1)]);
    assert_eq!(store.read(&a, 1).await.unwrap(), vec![turn(1)]);
    assert_eq!(store.read(&a, 2).await.unwrap(), vec![]);
    assert_eq!(store.read(&g("none"), 0).await.unwrap(), vec![]);
    // A stale expected version is refused and appends nothing.
    assert_eq!(
        store.append(&a, 1, &[turn(0)]).await,
        Err(StoreError::Conflict {
            game: a.clone(),
            expected: 1,
            actual: 2
        })
    );
    assert_eq!(
        store.append(&a, 5, &[turn(0)]).await,
        Err(StoreError::Conflict {
            game: a.clone(),
            expected: 5,
            actual: 2
        })
    );
    assert_eq!(store.read(&a, 0).await.unwrap().len(), 2);
    assert_eq!(store.append(&a, 2, &[turn(0)]).await, Ok(3));
    // Games are independent.
    assert_eq!(store.append(&b, 0, &[created()]).await, Ok(1));
    assert_eq!(store.read(&b, 0).await.unwrap(), vec![created()]);
    // Two writers racing for the same version: exactly one wins.
    let (first, second) = ([turn(0)], [turn(1)]);
    let (x, y) = tokio::join!(store.append(&b, 1, &first), store.append(&b, 1, &second));
    assert!(x.is_ok() != y.is_ok(), "{x:?} {y:?}");
    assert_eq!(store.read(&b, 0).await.unwrap().len(), 2);
    // Many games at once (group commit in the SQLite store).
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let store = store.clone();
            let game = format!("games/{p}many-{i}");
            tokio::spawn(async move {
                store.append(&game, 0, &[created()]).await?;
                store
                    .append(&game, 1, &[turn(i % 2), turn(1 - i % 2)])
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
}

#[tokio::test]
async fn the_memory_store_conforms() {
    conformance(Arc::new(MemoryStore::new()), "").await;
}

#[tokio::test]
async fn the_sqlite_store_conforms() {
    let dir = tempdir();
    conformance(
        Arc::new(SqliteStore::open(&dir.join("events.sqlite3")).unwrap()),
        "",
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
        store.append(&a, 0, &[created(), turn(1)]).await.unwrap();
        store.save_game(&a, "{}", false).await.unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.read(&a, 0).await.unwrap(), vec![created(), turn(1)]);
    assert_eq!(store.unfinished().await.unwrap().len(), 1);
    assert_eq!(store.append(&a, 2, &[turn(0)]).await, Ok(3));
}

#[tokio::test]
async fn damaged_sqlite_data_is_refused_with_the_game_and_version() {
    let path = tempdir().join("events.sqlite3");
    let store = SqliteStore::open(&path).unwrap();
    store
        .append("games/bad", 0, &[created(), turn(1), turn(0)])
        .await
        .unwrap();
    store
        .append("games/gap", 0, &[created(), turn(1), turn(0)])
        .await
        .unwrap();
    store.append("games/good", 0, &[created()]).await.unwrap();
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
    let Some(store) = common::test_postgres().await else {
        return;
    };
    conformance(Arc::new(store), &format!("t{}-", rand_suffix())).await;
}

#[tokio::test]
async fn damaged_postgres_data_is_refused_with_the_game_and_version() {
    let Some(store) = common::test_postgres().await else {
        return;
    };
    let game = format!("games/t{}-bad", rand_suffix());
    store.append(&game, 0, &[created(), turn(1)]).await.unwrap();
    let url = std::env::var("UNOFLIP_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
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
}
