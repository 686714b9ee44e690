//! A streamed `functionCall`, read by hand from the chunk's bytes.
//!
//! The object has a fixed, small schema (`name`, `id`, `args`,
//! `willContinue`, `partialArgs` [{`jsonPath`, `stringValue` |
//! `numberValue` | `boolValue` | `nullValue`, `willContinue`}]); reading it
//! directly is several times cheaper than a serde pass. Anything unexpected
//! (escaped keys, wrong types, broken JSON) returns `None`, and the caller
//! falls back to the full serde parse of the chunk.

use std::borrow::Cow;

use super::scan::{string_end, value_end};

/// One `functionCall` of a stream chunk.
#[derive(Debug, Default, PartialEq)]
pub(super) struct StreamCall<'a> {
    pub name: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    /// `args` as JSON text.
    pub args: Option<&'a str>,
    pub partial: Vec<Update<'a>>,
    pub will_continue: Option<bool>,
}

/// One `partialArgs` entry.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Update<'a> {
    pub path: Option<Cow<'a, str>>,
    pub value: Option<UpdateValue<'a>>,
    pub will_continue: bool,
}

/// The value of a `partialArgs` entry.
#[derive(Debug, PartialEq)]
pub(super) enum UpdateValue<'a> {
    Str(Cow<'a, str>),
    /// A number, `true`, `false` or `null`, as JSON text.
    Raw(&'a str),
}

/// Read the `functionCall` object at `at`: the call and where it ends.
pub(super) fn read_call(data: &[u8], at: usize) -> Option<(StreamCall<'_>, usize)> {
    let mut call = StreamCall::default();
    let end = read_object(data, at, |key, v| {
        Some(match key {
            b"name" => {
                let (s, e) = string(data, v)?;
                call.name = Some(s);
                e
            }
            b"id" => {
                let (s, e) = string(data, v)?;
                call.id = Some(s);
                e
            }
            b"args" => {
                let e = any_end(data, v)?;
                call.args = Some(std::str::from_utf8(&data[v..e]).ok()?);
                e
            }
            b"willContinue" => {
                let (b, e) = boolean(data, v)?;
                call.will_continue = Some(b);
                e
            }
            b"partialArgs" => read_array(data, v, |at| {
                call.partial.reserve(2);
                let (u, e) = read_update(data, at)?;
                call.partial.push(u);
                Some(e)
            })?,
            _ => any_end(data, v)?,
        })
    })?;
    Some((call, end))
}

fn read_update(data: &[u8], at: usize) -> Option<(Update<'_>, usize)> {
    let mut u = Update::default();
    let end = read_object(data, at, |key, v| {
        Some(match key {
            b"jsonPath" => {
                let (s, e) = string(data, v)?;
                u.path = Some(s);
                e
            }
            b"stringValue" => {
                let (s, e) = string(data, v)?;
                u.value = Some(UpdateValue::Str(s));
                e
            }
            b"numberValue" | b"boolValue" => {
                let e = scalar_end(data, v);
                let raw = std::str::from_utf8(&data[v..e]).ok()?;
                // JSON's grammar, not Rust's: `raw.parse::<f64>()` took
                // `NaN`, `inf` and `+1`, and wrote them into the arguments.
                let ok = match key {
                    b"boolValue" => raw == "true" || raw == "false",
                    _ => crate::scan::is_json_number(raw),
                };
                if !ok {
                    return None;
                }
                u.value = Some(UpdateValue::Raw(raw));
                e
            }
            b"nullValue" => {
                u.value = Some(UpdateValue::Raw("null"));
                any_end(data, v)?
            }
            b"willContinue" => {
                let (b, e) = boolean(data, v)?;
                u.will_continue = b;
                e
            }
            _ => any_end(data, v)?,
        })
    })?;
    Some((u, end))
}

fn skip_ws(data: &[u8], mut i: usize) -> usize {
    while data.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Walk the object at `at`, calling `field(key, value_offset)` for each
/// member; `field` returns where the value ends.
fn read_object<'d>(
    data: &'d [u8],
    at: usize,
    mut field: impl FnMut(&'d [u8], usize) -> Option<usize>,
) -> Option<usize> {
    if data.get(at) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(data, at + 1);
    if data.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if data.get(i) != Some(&b'"') {
            return None;
        }
        let k_end = string_end(data, i + 1)?;
        let key = &data[i + 1..k_end];
        if key.contains(&b'\\') {
            return None;
        }
        i = skip_ws(data, k_end + 1);
        if data.get(i) != Some(&b':') {
            return None;
        }
        let v = skip_ws(data, i + 1);
        i = skip_ws(data, field(key, v)?);
        match data.get(i) {
            Some(b',') => i = skip_ws(data, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Walk the array at `at`, calling `elem(offset)` for each element.
fn read_array(
    data: &[u8],
    at: usize,
    mut elem: impl FnMut(usize) -> Option<usize>,
) -> Option<usize> {
    if data.get(at) != Some(&b'[') {
        return None;
    }
    let mut i = skip_ws(data, at + 1);
    if data.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        i = skip_ws(data, elem(i)?);
        match data.get(i) {
            Some(b',') => i = skip_ws(data, i + 1),
            Some(b']') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The string at `at`: borrowed when it has no escapes.
fn string(data: &[u8], at: usize) -> Option<(Cow<'_, str>, usize)> {
    if data.get(at) != Some(&b'"') {
        return None;
    }
    let end = string_end(data, at + 1)?;
    let inner = &data[at + 1..end];
    let s = if inner.contains(&b'\\') {
        Cow::Owned(serde_json::from_slice::<String>(&data[at..=end]).ok()?)
    } else {
        Cow::Borrowed(std::str::from_utf8(inner).ok()?)
    };
    Some((s, end + 1))
}

fn boolean(data: &[u8], at: usize) -> Option<(bool, usize)> {
    let rest = data.get(at..)?;
    if rest.starts_with(b"true") {
        Some((true, at + 4))
    } else if rest.starts_with(b"false") {
        Some((false, at + 5))
    } else {
        None
    }
}

/// The end of a number or literal.
fn scalar_end(data: &[u8], mut i: usize) -> usize {
    while data
        .get(i)
        .is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
    {
        i += 1;
    }
    i
}

/// The end of any value.
fn any_end(data: &[u8], at: usize) -> Option<usize> {
    match data.get(at)? {
        b'"' => Some(string_end(data, at + 1)? + 1),
        b'{' | b'[' => value_end(data, at),
        _ => {
            let e = scalar_end(data, at);
            (e > at).then_some(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_calls_like_serde_does() {
        let d = br#"{ "name" : "f", "id":"a\"b", "args": {"x": [1, "}"]}, "willContinue": true,
            "partialArgs": [{"jsonPath":"$.a","stringValue":"x\ny","willContinue":true},
                            {"jsonPath":"$.n","numberValue":-1.5e3},{"jsonPath":"$.b","boolValue":false},
                            {"jsonPath":"$.z","nullValue":null}], "other": [ {} ] }tail"#;
        let (c, end) = read_call(d, 0).unwrap();
        assert_eq!(&d[end..], b"tail");
        assert_eq!(c.name.as_deref(), Some("f"));
        assert_eq!(c.id.as_deref(), Some("a\"b"));
        assert_eq!(c.args, Some(r#"{"x": [1, "}"]}"#));
        assert_eq!(c.will_continue, Some(true));
        let values: Vec<_> = c
            .partial
            .iter()
            .map(|u| (u.path.as_deref(), &u.value, u.will_continue))
            .collect();
        assert_eq!(
            values,
            vec![
                (
                    Some("$.a"),
                    &Some(UpdateValue::Str(Cow::Borrowed("x\ny"))),
                    true
                ),
                (Some("$.n"), &Some(UpdateValue::Raw("-1.5e3")), false),
                (Some("$.b"), &Some(UpdateValue::Raw("false")), false),
                (Some("$.z"), &Some(UpdateValue::Raw("null")), false),
            ]
        );
        assert_eq!(read_call(b"{}", 0), Some((StreamCall::default(), 2)));
        for bad in [
            &b"{\"name\":1}"[..],
            b"{\"name\":\"x\"",
            b"{\"a\\u0041\":1}",
            b"{\"willContinue\":yes}",
            b"{\"partialArgs\":[{\"jsonPath\":\"$.n\",\"numberValue\":\"1\"}]}",
        ] {
            assert!(
                read_call(bad, 0).is_none(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A `numberValue` must be a JSON number: `NaN`, `inf`, `+1`, which
    /// Rust's float parser takes, went into the call's arguments as they
    /// were, and the recorded arguments were not JSON (review finding 8).
    #[test]
    fn numbers_that_are_not_json_are_refused() {
        let update =
            |n: &str| format!(r#"{{"partialArgs":[{{"jsonPath":"$.n","numberValue":{n}}}]}}"#);
        let refused = [
            "NaN", "nan", "inf", "-inf", "infinity", "+1", ".5", "1.", "01", "-", "1e", "1e+",
        ];
        for bad in refused {
            assert!(read_call(update(bad).as_bytes(), 0).is_none(), "{bad}");
        }
        for good in ["0", "-0", "7", "1.5", "-1.5e3", "1E+2", "2e-07", "1e400"] {
            let data = update(good);
            let (call, _) = read_call(data.as_bytes(), 0).expect(good);
            assert_eq!(call.partial[0].value, Some(UpdateValue::Raw(good)));
        }
    }

    /// Through the whole stream: the chunk goes to the serde path, which
    /// refuses it; the arguments stay JSON.
    #[test]
    fn a_stream_never_records_a_number_that_is_not_json() {
        for bad in ["NaN", "inf", "+1"] {
            let chunk = format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"f","id":"a","partialArgs":[{{"jsonPath":"$.n","numberValue":{bad}}}]}}}}]}}}}]}}"#
            );
            let stream = format!("data: {chunk}\n\n");
            let view = crate::testutil::parse_stream(crate::Dialect::Gemini, stream.as_bytes());
            for c in &view.calls {
                let args: Result<serde_json::Value, _> = serde_json::from_str(&c.arguments);
                assert!(args.is_ok(), "{bad}: {}", c.arguments);
            }
        }
    }
}
