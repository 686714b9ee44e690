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
    /// Each `functionCall` object (no allocation for one per chunk).
    pub calls: Few<C>,
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
        calls: Few::None,
        usage: None,
        finish: None,
        model: None,
        id: None,
        block_reason: None,
    };
    // Every quote and backslash, found by one vectorised iterator; a tiny
    // state machine tells keys, values and escapes apart.
    let mut in_string = false;
    let mut start = 0;
    let mut escaped = usize::MAX; // the byte a backslash escapes
    let mut resume = 0; // hits before this are inside something already read
    for p in memchr::memchr2_iter(b'"', b'\\', data) {
        if p < resume || p == escaped {
            continue;
        }
        if data[p] == b'\\' {
            if !in_string {
                return None;
            }
            escaped = p + 1;
            continue;
        }
        if !in_string {
            in_string = true;
            start = p + 1;
            continue;
        }
        in_string = false;
        let end = p;
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
        if key.len() < 5 || key.len() > 15 {
            continue; // no key that matters has another length
        }
        match key {
            b"functionCall" => {
                let (call, e) = object_at(data, v)?;
                out.calls.push(call);
                resume = e;
            }
            b"usageMetadata" => {
                // Most chunks carry no counts yet: parse only those that do.
                let e = value_end(data, v)?;
                if memchr::memmem::find(&data[v..e], b"Count").is_some() {
                    out.usage = Some(object_at(data, v)?.0);
                }
                resume = e;
            }
            b"finishReason" | b"modelVersion" | b"responseId" | b"blockReason" => {
                let value = plain_string(data, v)?;
                resume = v + value.len() + 2;
                match key {
                    b"finishReason" => out.finish = Some(value),
                    b"modelVersion" => out.model = Some(value),
                    b"responseId" => out.id = Some(value),
                    _ => out.block_reason = Some(value),
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
    if in_string {
        return None;
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
fn value_end(data: &[u8], start: usize) -> Option<usize> {
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
            Few::One(serde_json::json!({"name":"a","args":{"functionCall":{"x":"}"}}}))
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
    }
}
