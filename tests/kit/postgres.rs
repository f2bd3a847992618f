//! The tests' PostgreSQL: `UNOFLIP_TEST_POSTGRES`, else the local server at 127.0.0.1:5432 that
//! CI starts. Without one a test says so and skips, except under CI (`CI` set), where it must run.

/// Its URL.
pub fn test_postgres_url() -> String {
    std::env::var("UNOFLIP_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// The store on it, or `None` (saying so) where there is none.
pub async fn test_postgres() -> Option<unoflip::store::PostgresStore> {
    let url = test_postgres_url();
    match unoflip::store::PostgresStore::connect(&url).await {
        Ok(store) => Some(store),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("PostgreSQL at {url} is required in CI: {e}")
        }
        Err(e) => {
            eprintln!(
                "SKIPPED: no PostgreSQL at {url} ({e}); set UNOFLIP_TEST_POSTGRES to run this test"
            );
            None
        }
    }
}

/// The highest firehose position in the tests' PostgreSQL: a test that reads every game's
/// events starts there, past what earlier runs left.
pub async fn postgres_position() -> u64 {
    let pool = sqlx::PgPool::connect(&test_postgres_url()).await.unwrap();
    let (max,): (Option<i64>,) = sqlx::query_as("SELECT MAX(pos) FROM unoflip_events")
        .fetch_one(&pool)
        .await
        .unwrap();
    u64::try_from(max.unwrap_or(0)).unwrap()
}

/// A new, empty database on the PostgreSQL server of [`test_postgres_url`], dropped with this guard.
/// A run then starts from an empty store, as SQLite's does from a new file: the shared test
/// database keeps what every earlier run and test wrote (millions of events), and appends to
/// it slow down as it grows.
pub struct FreshPostgres {
    /// The database's URL.
    pub url: String,
    admin: String,
    name: String,
}

impl FreshPostgres {
    /// Makes the database; an error if the server is not there or refuses (no `CREATEDB`).
    pub fn create() -> Result<FreshPostgres, String> {
        let admin = test_postgres_url();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("unoflip_bench_{}_{nanos}", std::process::id());
        let url = with_database(&admin, &name)?;
        run_sql(&admin, format!("CREATE DATABASE {name}"))?;
        Ok(FreshPostgres { url, admin, name })
    }
}

impl Drop for FreshPostgres {
    fn drop(&mut self) {
        if let Err(e) = run_sql(
            &self.admin,
            format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        ) {
            eprintln!("database {} left behind: {e}", self.name);
        }
    }
}

/// The PostgreSQL URL for one run: a new database of its own (the guard, which the caller keeps
/// until the run is over), else the shared one as it is, saying so.
pub fn postgres_for_run() -> (String, Option<FreshPostgres>) {
    match FreshPostgres::create() {
        Ok(fresh) => (fresh.url.clone(), Some(fresh)),
        Err(e) => {
            let url = test_postgres_url();
            eprintln!("postgres: no database of its own ({e}), so on {url} as it is");
            (url, None)
        }
    }
}

/// `url` with its database replaced by `name` (its parameters kept).
fn with_database(url: &str, name: &str) -> Result<String, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("not a PostgreSQL URL: {url}"))?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let query = path
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    Ok(format!("{scheme}://{authority}/{name}{query}"))
}

/// Runs `sql` on its own connection, from a thread of its own (callers may be inside a runtime
/// or not, and `Drop` cannot wait).
fn run_sql(url: &str, sql: String) -> Result<(), String> {
    let url = url.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            use sqlx::Connection;
            let mut conn = sqlx::postgres::PgConnection::connect(&url)
                .await
                .map_err(|e| e.to_string())?;
            sqlx::raw_sql(&sql)
                .execute(&mut conn)
                .await
                .map_err(|e| e.to_string())?;
            conn.close().await.map_err(|e| e.to_string())
        })
    })
    .join()
    .map_err(|_| "the SQL thread panicked".to_owned())?
}
