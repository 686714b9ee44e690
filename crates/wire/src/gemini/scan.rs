//! Cheap, exact lookups in a JSON object's bytes, used to read the few
//! fields of a streamed Gemini chunk without parsing all of it.
//!
//! A quote in JSON text is structural unless preceded by an odd number of
//! backslashes, and a string followed by `:` is a key; so `"name"` + `:` found
//! with memchr is a key named `name` (at some depth: callers take the first
//! or last one according to the layout of the object).

/// The fields of a Gemini stream chunk that matter, read from the chunk's
/// bytes (objects parsed in place, strings borrowed).
#[derive(Debug)]
pub(super) struct ChunkFields<'d> {
    /// Where the chunk's tail starts: the first string after its last
    /// call. `None` when the tail was the previous chunk's (or is empty).
    pub tail_from: Option<usize>,
    /// The tail was the previous chunk's, and was not read again.
    pub tail_reused: bool,
    /// Each `functionCall` object (no allocation for one per chunk).
    pub calls: Few<StreamCall<'d>>,
    /// `usageMetadata.promptTokenCount` and `.candidatesTokenCount`.
    pub prompt_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub finish: Option<&'d str>,
    pub model: Option<&'d str>,
    pub id: Option<&'d str>,
    pub block_reason: Option<&'d str>,
    /// A `candidates` key whose array holds an object: the chunk holds a
    /// candidate (the fast path reads only chunks whose candidates are all
    /// candidate 0).
    pub candidate: bool,
}

use super::call::{StreamCall, read_call};

/// One pass over a chunk's strings: each key that matters is read, every
/// other value skipped (strings by memchr, the rest by not being quotes).
/// `None` when the chunk needs a full parse: an `error` key, a candidate
/// `index` other than 0, snake_case keys, escaped values, or broken JSON.
pub(super) fn chunk_fields<'d>(data: &'d [u8], previous_tail: &[u8]) -> Option<ChunkFields<'d>> {
    let mut out = ChunkFields {
        tail_from: None,
        tail_reused: false,
        calls: Few::None,
        prompt_tokens: None,
        output_tokens: None,
        finish: None,
        model: None,
        id: None,
        block_reason: None,
        candidate: false,
    };
    // Strings and the gaps between them are mostly a few bytes long: a
    // plain loop finds them faster than vectorised searches restarted at
    // every quote; long strings (signatures) go to `memchr`.
    let n = data.len();
    let mut i = 0;
    loop {
        while i < n && data[i] != b'"' {
            i += 1;
        }
        if i >= n {
            break;
        }
        if out.tail_from.is_none() {
            out.tail_from = Some(i);
        }
        // The rest is byte for byte the previous chunk's tail, read from the
        // same kind of position (a string start, after the last call): it
        // says nothing new.
        if n - i == previous_tail.len() && data[i..] == *previous_tail {
            out.tail_from = None;
            out.tail_reused = true;
            break;
        }
        let start = i + 1;
        let end = string_end(data, start)?;
        i = end + 1;
        let mut v = end + 1;
        while data.get(v).is_some_and(u8::is_ascii_whitespace) {
            v += 1;
        }
        if data.get(v) != Some(&b':') {
            continue; // a string value
        }
        v += 1;
        while data.get(v).is_some_and(u8::is_ascii_whitespace) {
            v += 1;
        }
        let key = &data[start..end];
        if key.len() < 5 || key.len() > 20 {
            continue; // no key that matters has another length
        }
        match key {
            b"functionCall" => {
                let (call, e) = read_call(data, v)?;
                out.calls.push(call);
                out.tail_from = None;
                i = e;
            }
            b"promptTokenCount" | b"candidatesTokenCount" => {
                let e = v + data[v..].iter().take_while(|b| b.is_ascii_digit()).count();
                let n = std::str::from_utf8(&data[v..e]).ok()?.parse().ok()?;
                if key == b"promptTokenCount" {
                    out.prompt_tokens = Some(n);
                } else {
                    out.output_tokens = Some(n);
                }
                i = e;
            }
            b"finishReason" | b"modelVersion" | b"responseId" | b"blockReason" => {
                let value = plain_string(data, v)?;
                i = v + value.len() + 2;
                match key {
                    b"finishReason" => out.finish = Some(value),
                    b"modelVersion" => out.model = Some(value),
                    b"responseId" => out.id = Some(value),
                    _ => out.block_reason = Some(value),
                }
            }
            b"candidates" => {
                let mut at = v;
                for expect in [b'[', b'{'] {
                    while data.get(at).is_some_and(u8::is_ascii_whitespace) {
                        at += 1;
                    }
                    if data.get(at) != Some(&expect) {
                        break;
                    }
                    at += 1;
                    out.candidate |= expect == b'{';
                }
            }
            b"index" => {
                let zero =
                    data.get(v) == Some(&b'0') && !data.get(v + 1).is_some_and(u8::is_ascii_digit);
                if !zero {
                    return None;
                }
            }
            b"error" | b"function_call" | b"usage_metadata" | b"finish_reason"
            | b"model_version" | b"response_id" | b"prompt_feedback" | b"block_reason" => {
                return None;
            }
            _ => {}
        }
    }
    Some(out)
}

/// Zero, one or more values, without allocating for zero or one.
#[derive(Debug, PartialEq)]
pub(super) enum Few<T> {
    None,
    One(T),
    Many(Vec<T>),
}

impl<T> Few<T> {
    fn push(&mut self, value: T) {
        *self = match std::mem::replace(self, Few::None) {
            Few::None => Few::One(value),
            Few::One(first) => Few::Many(vec![first, value]),
            Few::Many(mut all) => {
                all.push(value);
                Few::Many(all)
            }
        };
    }

    /// The values, in order.
    pub(super) fn into_vec_iter(self) -> impl Iterator<Item = T> {
        let (one, many) = match self {
            Few::None => (None, Vec::new()),
            Few::One(v) => (Some(v), Vec::new()),
            Few::Many(all) => (None, all),
        };
        one.into_iter().chain(many)
    }
}

/// The end (exclusive) of the object or array starting at `start`.
pub(super) fn value_end(data: &[u8], start: usize) -> Option<usize> {
    let (open, close) = match data.get(start)? {
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 0usize;
    let mut i = start;
    loop {
        let at = i + memchr::memchr3(b'"', open, close, data.get(i..)?)?;
        match data[at] {
            b'"' => i = string_end(data, at + 1)? + 1,
            b if b == open => {
                depth += 1;
                i = at + 1;
            }
            _ => {
                depth -= 1;
                i = at + 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
    }
}

/// Most strings and gaps in a chunk are a few bytes long: a plain loop
/// beats setting up a vectorised search for them.
const SHORT: usize = 24;

#[inline]
fn find2(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    let head = hay.len().min(SHORT);
    match hay[..head].iter().position(|&x| x == a || x == b) {
        Some(i) => Some(i),
        None if hay.len() > SHORT => memchr::memchr2(a, b, &hay[SHORT..]).map(|i| i + SHORT),
        None => None,
    }
}

/// The index of the closing quote of the string whose content starts at
/// `start`.
pub(super) fn string_end(data: &[u8], start: usize) -> Option<usize> {
    let mut j = start;
    loop {
        let q = j + find2(b'"', b'\\', data.get(j..)?)?;
        if data[q] == b'\\' {
            j = q + 2;
        } else {
            return Some(q);
        }
    }
}

/// The string starting at `at` when it has no escapes.
pub(super) fn plain_string(data: &[u8], at: usize) -> Option<&str> {
    let rest = data.get(at..)?.strip_prefix(b"\"")?;
    let end = find2(b'"', b'\\', rest)?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_tail_is_not_read_again() {
        let a = br#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}],"usageMetadata":{"promptTokenCount":2},"modelVersion":"m"}"#;
        let b = br#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"g","args":{}}}]}}],"usageMetadata":{"promptTokenCount":2},"modelVersion":"m"}"#;
        let fa = chunk_fields(a, b"").unwrap();
        let tail = &a[fa.tail_from.unwrap()..];
        assert!(tail.starts_with(b"\"usageMetadata\""));
        assert_eq!((fa.prompt_tokens, fa.model), (Some(2), Some("m")));
        let fb = chunk_fields(b, tail).unwrap();
        assert_eq!(fb.tail_from, None);
        assert!(fb.tail_reused);
        assert_eq!((fb.prompt_tokens, fb.model), (None, None));
        assert!(matches!(fb.calls, Few::One(_)));
        // A call inside the would-be tail is never skipped.
        let fc = chunk_fields(a, &a[a.len() - tail.len() - 30..]).unwrap();
        assert!(matches!(fc.calls, Few::One(_)));
    }

    #[test]
    fn reads_the_fields_of_a_chunk_and_skips_strings() {
        let d = br#"{"candidates":[{"content":{"parts":[{"text":"\"functionCall\": {\"x"},{"functionCall":{"name":"a","args":{"functionCall":{"x":"}"}}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1},"modelVersion":"m","responseId":"r"}"#;
        let f = chunk_fields(d, b"").unwrap();
        let Few::One(call) = &f.calls else {
            panic!("one call expected")
        };
        assert_eq!(call.args, Some(r#"{"functionCall":{"x":"}"}}"#));
        assert_eq!((f.prompt_tokens, f.output_tokens), (Some(1), None));
        assert_eq!(
            (f.finish, f.model, f.id),
            (Some("STOP"), Some("m"), Some("r"))
        );
        assert!(chunk_fields(br#"{"candidates":[{"index":1}]}"#, b"").is_none());
        // A chunk holds a candidate when its `candidates` hold an object.
        let holds = |d: &[u8]| chunk_fields(d, b"").map(|f| f.candidate);
        assert_eq!(holds(br#"{"candidates": [ {"index":0}]}"#), Some(true));
        assert_eq!(
            holds(br#"{"candidates":[],"usageMetadata":{}}"#),
            Some(false)
        );
        assert_eq!(
            holds(br#"{"usageMetadata":{"promptTokenCount":1}}"#),
            Some(false)
        );
        assert!(chunk_fields(br#"{"error":{"code":1}}"#, b"").is_none());
        assert!(chunk_fields(br#"{"responseId":"a\u0041"}"#, b"").is_none());
        assert!(
            chunk_fields(
                br#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"#,
                b""
            )
            .is_none()
        );
    }
}
