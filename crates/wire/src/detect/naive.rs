//! The baseline rule other gateways use, for comparison in evaluations.

/// What the baseline looks for in the first 100 characters.
const NEEDLES: &[&[u8]] = &[
    b"error:",
    b"failed:",
    b"exception:",
    b"traceback:",
    b"not found:",
    b"invalid:",
    b"cannot ",
    b"unable to",
];

/// `true` when the first 100 characters contain one of [`NEEDLES`],
/// ignoring ASCII case.
pub(super) fn is_failure(content: &str) -> bool {
    let end = content
        .char_indices()
        .nth(100)
        .map_or(content.len(), |(i, _)| i);
    let head = &content.as_bytes()[..end];
    NEEDLES.iter().any(|n| contains_ignore_ascii_case(head, n))
}

/// `haystack` contains `needle` (lowercase ASCII) ignoring ASCII case.
pub(super) fn contains_ignore_ascii_case(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty()
        || haystack
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}
