//! What several benchmarks share besides the test kit (tests/kit): their settings from the
//! environment, and a process's memory and CPU time from `/proc`. Each benchmark uses some of it.
#![allow(dead_code)]

/// The number in environment variable `name`, else `default`.
pub fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
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
