//! What several benchmarks that start `unoflip serve` share.

/// The resident memory of process `pid` in KiB (0 when it cannot be read).
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// The peak resident memory of process `pid` in KiB (0 when it cannot be read).
#[allow(dead_code)]
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
