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
