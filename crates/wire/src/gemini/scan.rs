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
pub(super) struct ChunkFields<'d, C, U> {
    /// Each `functionCall` object.
    pub calls: Vec<C>,
    /// The `usageMetadata` object.
    pub usage: Option<U>,
    pub finish: Option<&'d str>,
    pub model: Option<&'d str>,
    pub id: Option<&'d str>,
    pub block_reason: Option<&'d str>,
}

/// One pass over a chunk's strings: each key that matters is read, every
/// other value skipped (strings by memchr, the rest by not being quotes).
/// `None` when the chunk needs a full parse: an `error` key, a candidate
/// `index` other than 0, snake_case keys, escaped values, or broken JSON.
pub(super) fn chunk_fields<'d, C, U>(data: &'d [u8]) -> Option<ChunkFields<'d, C, U>>
where
    C: serde::Deserialize<'d>,
    U: serde::Deserialize<'d>,
{
    let mut out = ChunkFields {
        calls: Vec::new(),
        usage: None,
        finish: None,
        model: None,
        id: None,
        block_reason: None,
    };
    let mut i = 0;
    while let Some(q) = find1(b'"', data.get(i..)?) {
        let start = i + q + 1;
        let end = string_end(data, start)?;
        let mut v = end + 1;
        while data.get(v).is_some_and(u8::is_ascii_whitespace) {
            v += 1;
        }
        if data.get(v) != Some(&b':') {
            i = end + 1; // a string value
            continue;
        }
        v += 1;
        while data.get(v).is_some_and(u8::is_ascii_whitespace) {
            v += 1;
        }
        i = v;
        match &data[start..end] {
            b"functionCall" => {
                let (call, e) = object_at(data, v)?;
                out.calls.push(call);
                i = e;
            }
            b"usageMetadata" => {
                let (usage, e) = object_at(data, v)?;
                out.usage = Some(usage);
                i = e;
            }
            b"finishReason" => out.finish = Some(plain_string(data, v)?),
            b"modelVersion" => out.model = Some(plain_string(data, v)?),
            b"responseId" => out.id = Some(plain_string(data, v)?),
            b"blockReason" => out.block_reason = Some(plain_string(data, v)?),
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

/// Parse the object at `at` in place: the value and where it ends.
fn object_at<'d, T: serde::Deserialize<'d>>(data: &'d [u8], at: usize) -> Option<(T, usize)> {
    if data.get(at) != Some(&b'{') {
        return None;
    }
    let mut values = serde_json::Deserializer::from_slice(&data[at..]).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, at + values.byte_offset()))
}

/// Most strings and gaps in a chunk are a few bytes long: a plain loop
/// beats setting up a vectorised search for them.
const SHORT: usize = 24;

#[inline]
fn find1(a: u8, hay: &[u8]) -> Option<usize> {
    let head = hay.len().min(SHORT);
    match hay[..head].iter().position(|&b| b == a) {
        Some(i) => Some(i),
        None if hay.len() > SHORT => memchr::memchr(a, &hay[SHORT..]).map(|i| i + SHORT),
        None => None,
    }
}

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
fn string_end(data: &[u8], start: usize) -> Option<usize> {
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

/// The string starting at `at` when it has no escapes.
pub(super) fn plain_string(data: &[u8], at: usize) -> Option<&str> {
    let rest = data.get(at..)?.strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_of_a_chunk_and_skips_strings() {
        type V = serde_json::Value;
        let d = br#"{"candidates":[{"content":{"parts":[{"text":"\"functionCall\": {\"x"},{"functionCall":{"name":"a","args":{"functionCall":{"x":"}"}}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1},"modelVersion":"m","responseId":"r"}"#;
        let f = chunk_fields::<V, V>(d).unwrap();
        assert_eq!(
            f.calls,
            vec![serde_json::json!({"name":"a","args":{"functionCall":{"x":"}"}}})]
        );
        assert_eq!(f.usage, Some(serde_json::json!({"promptTokenCount":1})));
        assert_eq!(
            (f.finish, f.model, f.id),
            (Some("STOP"), Some("m"), Some("r"))
        );
        assert!(chunk_fields::<V, V>(br#"{"candidates":[{"index":1}]}"#).is_none());
        assert!(chunk_fields::<V, V>(br#"{"error":{"code":1}}"#).is_none());
        assert!(chunk_fields::<V, V>(br#"{"responseId":"a\u0041"}"#).is_none());
        assert!(
            chunk_fields::<V, V>(
                br#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"#
            )
            .is_none()
        );
        assert_eq!(value_end(b"{\"a\":\"x", 0), None);
        assert_eq!(value_end(b"{\"a\":\"\\", 0), None);
        assert_eq!(value_end(b"[1,[2],{\"]\":3}] ", 0), Some(15));
    }
}
