//! Test support shared by every crate's tests, benches and examples.
//!
//! - [`corpus_dir`] / [`corpus_or_skip!`]: the one place that finds the
//!   recorded corpus (`TOOLWARDEN_CORPUS`, else `../shared/corpus` beside the
//!   workspace). Without it a corpus test prints a visible
//!   `skipped: … corpus not found` line and returns; with `CI=true` a missing
//!   corpus fails the test instead, so CI always runs them.
//! - [`fixture`]: small recordings copied into this repository
//!   (`crates/testkit/fixtures`, licenses in its README) for the tests that
//!   only need realistic bodies; they never skip.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The variable that points at the corpus folder.
pub const CORPUS_VAR: &str = "TOOLWARDEN_CORPUS";

/// Where the corpus is, or why it is not there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorpusError {
    /// `TOOLWARDEN_CORPUS` names something that is not a folder.
    NotADirectory(PathBuf),
    /// Not set, and no `shared/corpus` beside the workspace.
    NotFound,
}

impl std::fmt::Display for CorpusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotADirectory(p) => write!(f, "{CORPUS_VAR}={} is not a directory", p.display()),
            Self::NotFound => write!(f, "corpus not found (set {CORPUS_VAR})"),
        }
    }
}

impl std::error::Error for CorpusError {}

/// The workspace root (this crate lives in `<root>/crates/testkit`).
pub fn workspace_root() -> &'static Path {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().and_then(Path::parent).unwrap_or(manifest)
}

/// The corpus folder: `TOOLWARDEN_CORPUS` when set (it must be a folder),
/// else `shared/corpus` beside the workspace root (`../shared/corpus`) or
/// beside one of its parent folders (so git worktrees nested one level
/// deeper find the same corpus).
pub fn corpus_dir() -> Result<PathBuf, CorpusError> {
    if let Some(v) = std::env::var_os(CORPUS_VAR).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v);
        return if p.is_dir() {
            Ok(p)
        } else {
            Err(CorpusError::NotADirectory(p))
        };
    }
    workspace_root()
        .ancestors()
        .skip(1)
        .map(|a| a.join("shared").join("corpus"))
        .find(|p| p.is_dir())
        .ok_or(CorpusError::NotFound)
}

/// Whether a missing corpus is an error: `CI` set to `true` or `1`, as
/// `.ci/run` does.
pub fn corpus_required() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The corpus folder for the test or bench `what`; `None` after printing
/// `skipped: <what>: corpus not found (set TOOLWARDEN_CORPUS)` when it is
/// missing. The line goes straight to the process's stderr, past the test
/// harness's output capture, so `cargo test` shows it.
///
/// # Panics
/// When the corpus is missing and [`corpus_required`] (CI), or when
/// `TOOLWARDEN_CORPUS` is set to something that is not a folder.
pub fn corpus_for(what: &str) -> Option<PathBuf> {
    match corpus_dir() {
        Ok(p) => Some(p),
        Err(e @ CorpusError::NotADirectory(_)) => panic!("{what}: {e}"),
        Err(e) if corpus_required() => {
            panic!("{what}: {e}; CI=true requires the corpus")
        }
        Err(e) => {
            // One write, so that the line is never split by the harness's
            // own lines (a pipe takes a write this short whole).
            let line = format!("skipped: {what}: {e}\n");
            let _ = std::io::stderr().write_all(line.as_bytes());
            None
        }
    }
}

/// The corpus folder, or return from the calling test (after the visible
/// skip line, see [`corpus_for`]). The line names the test (the harness
/// names each test's thread after it), else the module path.
///
/// ```
/// fn a_corpus_test() {
///     let dir = toolwarden_testkit::corpus_or_skip!();
///     assert!(dir.join("tool_results.jsonl").exists());
/// }
/// ```
#[macro_export]
macro_rules! corpus_or_skip {
    () => {
        match $crate::corpus_for(&$crate::current_test(module_path!())) {
            Some(dir) => dir,
            None => return,
        }
    };
}

/// The running test's name (libtest names each test's thread after it), or
/// `fallback` on the main thread.
pub fn current_test(fallback: &str) -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_string(),
        _ => fallback.to_string(),
    }
}

/// The bytes of a corpus file (path relative to the corpus folder), or
/// `None` after the skip line (see [`corpus_for`]).
///
/// # Panics
/// When the file cannot be read although the corpus folder exists.
pub fn corpus_file(what: &str, rel: &str) -> Option<Vec<u8>> {
    let p = corpus_for(what)?.join(rel);
    Some(std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display())))
}

/// The path of an in-repository fixture (relative to `crates/testkit/fixtures`).
pub fn fixture_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// The bytes of an in-repository fixture.
///
/// # Panics
/// When the file is missing: fixtures are part of the repository.
pub fn fixture(rel: &str) -> Vec<u8> {
    let p = fixture_path(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixtures_are_in_the_repository() {
        assert!(fixture("sse/anthropic-sdk-python__tool_use_response.sse").starts_with(b"event:"));
    }

    #[test]
    fn a_bad_variable_is_an_error_not_a_skip() {
        // The variable is set for a child run of this test binary only.
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tests::corpus_probe",
                "--nocapture",
                "--include-ignored",
            ])
            .env(CORPUS_VAR, "/nonexistent/toolwarden-corpus")
            .env_remove("CI")
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "a missing TOOLWARDEN_CORPUS folder fails"
        );
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tests::corpus_probe", "--include-ignored"])
            .env(CORPUS_VAR, "")
            .env("CI", "true")
            .current_dir("/")
            .output()
            .unwrap();
        // With the corpus present beside the workspace the probe passes;
        // without it, CI=true makes it fail.
        assert_eq!(out.status.success(), corpus_dir().is_ok());
    }

    #[test]
    #[ignore = "run by a_bad_variable_is_an_error_not_a_skip in a child process"]
    fn corpus_probe() {
        let _ = corpus_or_skip!();
    }
}
