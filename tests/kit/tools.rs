//! Finding the tools some tests run beside the server (nats-server, the buf CLI).

use std::path::PathBuf;

/// A tool the tests run: the path in environment variable `variable`, else `name` on the PATH,
/// else the first of `elsewhere` that exists.
pub fn find_tool(variable: &str, name: &str, elsewhere: &[PathBuf]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable) {
        return Some(PathBuf::from(path));
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| elsewhere.iter().find(|p| p.is_file()).cloned())
}
