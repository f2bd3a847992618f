//! The crate's layers import one way (docs/architecture.md): no concern (a folder of `src/`, or
//! one of `src/service/`) imports one that imports it back, and only the edge names the
//! protobuf types. Read from the sources' `crate::` paths, comments and test modules left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where protobuf types may be named: the gRPC edge, the server's assembly, and the command
/// line's clients (`unoflip play` is a gRPC client like any other).
const MAY_NAME_PROTO: &[&str] = &["service/grpc", "service/serve", "cli", "main"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's module path below `src/`: `service::games::task` for `src/service/games/task/mod.rs`.
fn module(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// A module's concern: `service/<part>` inside the service, else its top folder.
fn concern(module: &[String]) -> String {
    match module {
        [first, second, ..] if first == "service" => format!("service/{second}"),
        [first, ..] => first.clone(),
        [] => "lib".to_owned(),
    }
}

/// A file's code without comments and test modules.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `crate::a::b` paths a text names.
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == ':')
            .collect();
        out.push(
            path.split("::")
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect(),
        );
    }
    out
}

struct Crate {
    /// Concern -> the concerns it imports.
    imports: BTreeMap<String, BTreeSet<String>>,
    /// Concerns that name `crate::proto`.
    proto: BTreeSet<String>,
}

fn read_crate() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module(&src, f)).collect();
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut proto = BTreeSet::new();
    for file in &files {
        let me = concern(&module(&src, file));
        let text = code(&std::fs::read_to_string(file).unwrap());
        for mut path in crate_paths(&text) {
            if path.first().is_some_and(|p| p == "proto") {
                proto.insert(me.clone());
                continue;
            }
            while !path.is_empty() && !modules.contains(&path) {
                path.pop();
            }
            let other = concern(&path);
            if !path.is_empty() && other != me {
                imports.entry(me.clone()).or_default().insert(other);
            }
        }
    }
    Crate { imports, proto }
}

fn reaches(imports: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut next = vec![from.to_owned()];
    while let Some(at) = next.pop() {
        for other in imports.get(&at).into_iter().flatten() {
            if other == to {
                return true;
            }
            if seen.insert(other.clone()) {
                next.push(other.clone());
            }
        }
    }
    false
}

#[test]
fn no_concern_imports_one_that_imports_it_back() {
    let krate = read_crate();
    assert!(
        krate.imports.contains_key("service/grpc") && krate.imports.contains_key("service/games"),
        "the service's concerns were not found: {:?}",
        krate.imports.keys()
    );
    let circles: Vec<(String, String)> = krate
        .imports
        .iter()
        .flat_map(|(from, tos)| tos.iter().map(move |to| (from.clone(), to.clone())))
        .filter(|(from, to)| reaches(&krate.imports, to, from))
        .collect();
    assert!(circles.is_empty(), "imports in a circle: {circles:?}");
}

#[test]
fn the_layers_below_the_edge_import_no_edge() {
    let krate = read_crate();
    for lower in [
        "rules",
        "store",
        "chan",
        "service/accounts",
        "service/games",
        "service/error",
        "service/reason",
    ] {
        let above: Vec<_> = krate
            .imports
            .get(lower)
            .into_iter()
            .flatten()
            .filter(|c| {
                [
                    "service/grpc",
                    "service/http",
                    "service/serve",
                    "service/publish",
                    "cli",
                ]
                .contains(&c.as_str())
            })
            .collect();
        assert!(above.is_empty(), "{lower} imports the edge: {above:?}");
    }
}

#[test]
fn only_the_edge_names_protobuf_types() {
    let krate = read_crate();
    assert!(krate.proto.contains("service/grpc"), "{:?}", krate.proto);
    let elsewhere: Vec<_> = krate
        .proto
        .iter()
        .filter(|c| !MAY_NAME_PROTO.contains(&c.as_str()))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "protobuf types named in {elsewhere:?}"
    );
}
