//! Test helpers: fixtures, the recorded corpus, views read eagerly.

pub(crate) use toolwarden_testkit::fixture;

/// The bytes of a file of the recorded corpus (path relative to the corpus
/// folder), or `None` after the visible skip line when the corpus is not
/// there (an error under `CI=true`): see `toolwarden_testkit`.
pub(crate) fn corpus(rel: &str) -> Option<Vec<u8>> {
    toolwarden_testkit::corpus_file(&toolwarden_testkit::current_test(module_path!()), rel)
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
pub(crate) fn starts_with_error(content: &str) -> toolwarden_core::Verdict {
    if content.starts_with("Error") {
        toolwarden_core::Verdict::heuristic_failure()
    } else {
        toolwarden_core::Verdict::NONE
    }
}

/// A whole recorded stream parsed at once.
pub(crate) fn parse_stream(dialect: crate::Dialect, stream: &[u8]) -> crate::ResponseView {
    let mut p = crate::StreamParser::new(dialect);
    p.feed(stream);
    p.finish()
}

/// A tool result read eagerly (content and verdict filled in), as the
/// views returned them before contents became lazy: lets the tests keep
/// their expectations as plain fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EagerResult<'a> {
    pub call_id: std::borrow::Cow<'a, str>,
    pub tool: Option<std::borrow::Cow<'a, str>>,
    pub content: std::borrow::Cow<'a, str>,
    pub verdict: toolwarden_core::Verdict,
    pub message_index: usize,
    pub new: bool,
}

/// A request view with every result read ([`EagerResult`]); derefs to the
/// [`crate::RequestView`] for everything else.
#[derive(Debug)]
pub(crate) struct EagerView<'a> {
    pub view: crate::RequestView<'a>,
    pub results: Vec<EagerResult<'a>>,
}

impl<'a> std::ops::Deref for EagerView<'a> {
    type Target = crate::RequestView<'a>;
    fn deref(&self) -> &Self::Target {
        &self.view
    }
}

/// [`crate::request_view`], then every result read with `judge` as the
/// content detector.
pub(crate) fn eager_view<'a>(
    dialect: crate::Dialect,
    body: &'a [u8],
    judge: crate::text::Judge<'_>,
) -> Result<EagerView<'a>, crate::WireError> {
    let view = crate::request_view(dialect, body)?;
    let results = view
        .results
        .iter()
        .map(|r| {
            let read = r.read_with(judge)?;
            Ok(EagerResult {
                call_id: r.call_id.clone(),
                tool: r.tool.clone(),
                content: read.text,
                verdict: read.verdict,
                message_index: r.message_index,
                new: r.new,
            })
        })
        .collect::<Result<_, crate::WireError>>()?;
    Ok(EagerView { view, results })
}

/// [`crate::inspect`] of `body` gives what [`crate::request_view`] and
/// [`crate::validate`] give on their own: the same view, and the same
/// defects or a failure on both sides.
pub(crate) fn inspect_agrees(
    dialect: crate::Dialect,
    body: &[u8],
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::{prop_assert, prop_assert_eq};
    let both = crate::inspect(dialect, body);
    let view = crate::request_view(dialect, body);
    prop_assert_eq!(format!("{:?}", both.view), format!("{view:?}"));
    match (&both.defects, &crate::validate(dialect, body)) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        (a, b) => prop_assert!(
            false,
            "inspect ok: {}, validate ok: {}",
            a.is_ok(),
            b.is_ok()
        ),
    }
    Ok(())
}

/// One of `options`, as the fast paths' differential proptests pick a
/// field's value: mostly one of the first two (so that most bodies are
/// valid and the fast path answers often).
pub(crate) fn pick<'a>(choice: u8, options: &[&'a str]) -> &'a str {
    let n = if choice < 160 { 2 } else { options.len() };
    options[usize::from(choice) % n.min(options.len())]
}

/// The fast paths' differential check, as each dialect's proptests make it:
/// `agrees` (that dialect's `fast_path_agrees`) holds on `text` and on
/// `text` [`damaged`] by `damage`.
pub(crate) fn agrees_whole_and_damaged(
    agrees: fn(&[u8]) -> Result<(), String>,
    text: &str,
    damage: (usize, u8, u8),
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prop_assert_eq;
    prop_assert_eq!(agrees(text.as_bytes()), Ok(()), "{}", text);
    let bad = damaged(text, damage);
    prop_assert_eq!(agrees(&bad), Ok(()), "{}", String::from_utf8_lossy(&bad));
    Ok(())
}

/// `text` damaged as the fast paths' differential proptests damage bodies:
/// by `(at, byte, how)`, either the byte at `at % len` replaced by `byte %
/// 128` (kept ASCII, so still UTF-8) or the text cut there.
pub(crate) fn damaged(text: &str, (at, byte, how): (usize, u8, u8)) -> Vec<u8> {
    let mut bad = text.as_bytes().to_vec();
    let at = at % bad.len();
    if how % 2 == 0 {
        bad[at] = byte % 128;
    } else {
        bad.truncate(at);
    }
    bad
}
