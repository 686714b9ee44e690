//! Test helpers: the shared corpus, located at run time.

use std::path::{Path, PathBuf};

/// The directory `shared/corpus`, found by walking up from the crate.
pub(crate) fn corpus_dir() -> PathBuf {
    let start = Path::new(env!("CARGO_MANIFEST_DIR"));
    start
        .ancestors()
        .map(|a| a.join("shared/corpus"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| {
            panic!(
                "shared/corpus not found above {}: the corpus must be checked out beside the repository",
                start.display()
            )
        })
}

/// The bytes of a corpus file (path relative to `shared/corpus`).
pub(crate) fn corpus(rel: &str) -> Vec<u8> {
    let p = corpus_dir().join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// A `.chunks.txt` recording (one JSON event per line) as SSE bytes, with
/// an `event:` line named after each event's `type`.
pub(crate) fn chunks_as_sse(chunks: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in chunks.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        #[derive(serde::Deserialize)]
        struct T {
            #[serde(rename = "type", default)]
            kind: Option<String>,
        }
        if let Ok(T { kind: Some(k) }) = serde_json::from_slice::<T>(line) {
            out.extend_from_slice(b"event: ");
            out.extend_from_slice(k.as_bytes());
            out.push(b'\n');
        }
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.extend_from_slice(b"\n\n");
    }
    out
}

/// A stub content rule for tests that must not depend on the detector.
pub(crate) fn starts_with_error(content: &str) -> bool {
    content.starts_with("Error")
}

/// A whole recorded stream parsed at once.
pub(crate) fn parse_stream(dialect: crate::Dialect, stream: &[u8]) -> crate::ResponseView {
    let mut p = crate::StreamParser::new(dialect);
    p.feed(stream);
    p.finish()
}
