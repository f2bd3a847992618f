//! What several benchmarks share: their settings from the environment, and a process's memory
//! and CPU time from `/proc`. Each benchmark uses some of it.
#![allow(dead_code)]

/// The number in environment variable `name`, else `default`.
pub fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The PostgreSQL server the benchmarks use: `UNOFLIP_TEST_POSTGRES`, else the local one.
pub fn postgres_url() -> String {
    std::env::var("UNOFLIP_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A new, empty database on the PostgreSQL server of [`postgres_url`], dropped with this guard.
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
        let admin = postgres_url();
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
            let url = postgres_url();
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

/// The user and system CPU seconds of a `/proc/.../stat` text: its 14th and 15th fields, the
/// 12th and 13th after the name's closing parenthesis, in clock ticks (100 per second). Zero
/// when they cannot be read.
pub fn user_system(stat: &str) -> (f64, f64) {
    let ticks: Vec<f64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .skip(11)
                .take(2)
                .filter_map(|t| t.parse::<f64>().ok())
                .collect()
        })
        .unwrap_or_default();
    match ticks[..] {
        [user, system] => (user / 100.0, system / 100.0),
        _ => (0.0, 0.0),
    }
}

/// The resident memory of process `pid` in KiB (0 when it cannot be read).
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// The peak resident memory of process `pid` in KiB (0 when it cannot be read).
pub fn peak_kib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM:")
}

/// A KiB field of `/proc/<pid>/status`.
fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
