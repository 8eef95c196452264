//! Crate-wide rules on the source tree itself.

use std::path::Path;

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source tree") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// One test layout (docs/architecture.md, "Tests"): a module's tests are its child module
/// `tests` at Rust's default path (`m/tests.rs`, or `tests/` with one file per theme), never
/// inline and never redirected with `#[path]`.
#[test]
fn tests_live_in_one_layout() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "the source tree was not found at {}", src.display());
    let mut wrong = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable file");
        let name = f.strip_prefix(&src).unwrap().display().to_string();
        if text.contains(concat!("#[pa", "th =")) {
            wrong.push(format!("{name}: #[path] redirects a module"));
        }
        let lines: Vec<&str> = text.lines().collect();
        for w in lines.windows(2) {
            if w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod ") && w[1].trim_end().ends_with('{')
            {
                wrong.push(format!("{name}: inline test module `{}`", w[1].trim()));
            }
        }
        if name.ends_with("_tests.rs") {
            wrong.push(format!("{name}: a test file outside a `tests` module"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What each top-level module may import (`crate::X`), the layers of docs/architecture.md:
/// a new arrow must be added here and explained there.
const MAY_IMPORT: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("rational", &["error"]),
    ("units", &["error", "rational"]),
    ("progress", &[]),
    ("budget", &["error"]),
    ("parallel", &[]),
    ("hash", &[]),
    ("protocol", &["error"]),
    ("topology", &["error", "rational", "units", "budget"]),
    ("flow", &["error", "rational", "topology"]),
    ("ir", &["error", "rational", "budget", "topology"]),
    ("bound", &["error", "rational", "units", "budget", "topology", "flow", "ir"]),
    ("import", &["error", "rational", "topology", "input"]),
    ("zoo", &["error", "rational", "units", "budget", "topology", "import"]),
    // Synthesizers measure their own candidates with the cost layer's pure measures of a
    // schedule (never the simulator, the tuner, the verifier or an exporter).
    (
        "synth",
        &[
            "error",
            "rational",
            "units",
            "progress",
            "budget",
            "parallel",
            "hash",
            "topology",
            "flow",
            "ir",
            "bound",
            "zoo",
            "cost::alpha_beta",
            "cost::latency_bandwidth",
            "cost::route_latency",
        ],
    ),
    // The finder measures candidate topologies by BFB's plans: it sits above the synthesizers.
    ("find", &["error", "rational", "units", "progress", "parallel", "topology", "flow", "bound", "zoo", "synth::bfb"]),
    // The value and race passes of a large reduction run side by side (`parallel::threads`).
    ("verify", &["error", "rational", "parallel", "topology", "ir"]),
    // The runtime model runs a schedule in the thread blocks MSCCL's lowering gives it.
    (
        "cost",
        &[
            "error",
            "rational",
            "units",
            "budget",
            "parallel",
            "hash",
            "protocol",
            "topology",
            "flow",
            "bound",
            "ir",
            "msccl::lower",
            "msccl::model",
        ],
    ),
    ("msccl", &["error", "rational", "units", "parallel", "hash", "protocol", "topology", "ir"]),
    // MSCCL++ plans share the MSCCL lowering's chunk grid.
    ("mscclpp", &["error", "topology", "ir", "msccl::lower", "msccl::Buf"]),
];

/// The import graph follows the layers: every `crate::X` path outside tests and comments
/// is one the importing module may use (`api`, the pipeline, and `testing` may use all).
#[test]
fn imports_follow_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts.iter().any(|p| p == "tests" || p == "tests.rs") {
            continue;
        }
        let top = parts[0].trim_end_matches(".rs");
        let Some((_, allowed)) = MAY_IMPORT.iter().find(|(m, _)| *m == top) else { continue };
        let text = std::fs::read_to_string(f).expect("readable file");
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let path: String = line[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut segs = path.split("::");
                let first = segs.next().unwrap_or("");
                // the module itself, the `bad_input!` macro, lib.rs's `Result` / `VERSION`
                if first == top || first == "bad_input" || !first.starts_with(|c: char| c.is_ascii_lowercase()) {
                    continue;
                }
                let two = format!("{first}::{}", segs.next().unwrap_or(""));
                if !allowed.contains(&first) && !allowed.contains(&two.as_str()) {
                    wrong.push(format!("{}: crate::{path}", rel.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers of docs/architecture.md:\n{}", wrong.join("\n"));
}
