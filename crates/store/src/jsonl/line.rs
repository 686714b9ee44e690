//! An [`Event`]'s JSONL line, written field by field: the bytes
//! `serde_json::to_writer` writes for it (its serde attributes' order,
//! tag first, skipped fields skipped), without serde's dispatch.
//!
//! Why not serde_json itself (issue 14): an internally tagged enum is
//! serialized as a map, so each field's name goes through serde_json's
//! escaping loop on every line, byte by byte, as if it were data; the
//! names and the field dispatch were two thirds of the line's cost, about
//! 4 % of a request's instructions with the log on (BENCHMARKS.md, "The
//! JSONL line by hand"). Here a name is a constant, and a string value is
//! copied eight bytes at a time up to the next byte that needs escaping.
//!
//! The properties at the end hold it to serde_json's bytes for arbitrary
//! events, so a field added to a record and not here fails them.

use toolwarden_core::TraceParent;

use crate::event::{Event, RequestRecord, ToolCallRecord, ToolResultRecord, TurnRef};

/// A record's fields as `,"name":value`, in serde's order (its
/// declaration's): `name` always, `name: some` only when it is `Some` and
/// `name: set` only when it is `true` (serde's `skip_serializing_if`).
/// Each name and its punctuation is one constant: names are the records'
/// field names, with nothing to escape.
macro_rules! fields {
    ($out:ident, $r:ident; $($name:ident $(: $skip:ident)?),* $(,)?) => {
        $( fields!(@ $out, $r, $name $($skip)?); )*
    };
    (@ $out:ident, $r:ident, $name:ident) => {
        $out.extend_from_slice(concat!(",\"", stringify!($name), "\":").as_bytes());
        Value::write(&$r.$name, $out);
    };
    (@ $out:ident, $r:ident, $name:ident some) => {
        if let Some(v) = &$r.$name {
            $out.extend_from_slice(concat!(",\"", stringify!($name), "\":").as_bytes());
            Value::write(v, $out);
        }
    };
    (@ $out:ident, $r:ident, $name:ident set) => {
        if $r.$name {
            $out.extend_from_slice(concat!(",\"", stringify!($name), "\":true").as_bytes());
        }
    };
}

/// Appends `event`'s line (no newline) to `out`.
pub(crate) fn write(out: &mut Vec<u8>, event: &Event) {
    match event {
        Event::Request(r) => request(out, r),
        Event::ToolCall(c) => tool_call(out, c),
        Event::ToolResult(r) => tool_result(out, r),
    }
    out.push(b'}');
}

fn request(out: &mut Vec<u8>, r: &RequestRecord) {
    out.extend_from_slice(br#"{"type":"request""#);
    fields!(out, r;
        request_id, session_id, session_source, at_ms, provider, dialect, path,
        model, status, streaming, upstream_latency_ms, first_byte_ms,
        overhead_us, input_tokens, output_tokens, response_id, repairs,
        repair_mode, parse_error, error, calls_incomplete: set,
        trace_parent: some, trace_state: some, server_address: some,
        server_port: some,
    );
}

fn tool_call(out: &mut Vec<u8>, c: &ToolCallRecord) {
    out.extend_from_slice(br#"{"type":"tool_call""#);
    fields!(out, c;
        request_id, session_id, provider, model, response_id, dialect: some,
        call_index, call_id, tool, arguments_bytes, at_ms, turn: some,
    );
}

fn tool_result(out: &mut Vec<u8>, r: &ToolResultRecord) {
    out.extend_from_slice(br#"{"type":"tool_result""#);
    fields!(out, r;
        request_id, session_id, provider, model, call_id, message_index, tool,
        failed, basis, content_bytes, excerpt, at_ms, exec_ms,
        previous_response_id, answers: some, latest_of_its_id: set,
        first_turn: some, trace_parent: some, trace_state: some,
    );
}

/// A value as serde_json writes it.
trait Value {
    fn write(&self, out: &mut Vec<u8>);
}

impl Value for String {
    fn write(&self, out: &mut Vec<u8>) {
        string(out, self);
    }
}

impl<V: Value> Value for Option<V> {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Some(v) => v.write(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

impl<V: Value> Value for Vec<V> {
    fn write(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, v) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            v.write(out);
        }
        out.push(b']');
    }
}

impl Value for bool {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(itoa::Buffer::new().format(*self).as_bytes());
            }
        }
    )*};
}
integers!(i64, u64, u32, u16);

impl Value for f64 {
    /// Shortest round-trip form; `null` for NaN and the infinities (JSON
    /// has neither), as serde_json.
    fn write(&self, out: &mut Vec<u8>) {
        if self.is_finite() {
            out.extend_from_slice(zmij::Buffer::new().format_finite(*self).as_bytes());
        } else {
            out.extend_from_slice(b"null");
        }
    }
}

impl Value for TraceParent {
    /// Its text form (hex digits and dashes: nothing to escape).
    fn write(&self, out: &mut Vec<u8>) {
        string(out, &self.to_string());
    }
}

impl Value for TurnRef {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{"turn":"#);
        self.turn.write(out);
        out.extend_from_slice(br#","call_index":"#);
        self.call_index.write(out);
        out.push(b'}');
    }
}

/// `s` as a JSON string, escaped as serde_json escapes: `"`, `\` and the
/// control characters, the common ones by letter, the rest as `\u00xx`.
fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // The bytes from `start` on are not written yet; `at` is where the
    // search for the next byte to escape goes on.
    let (mut start, mut at) = (0, 0);
    loop {
        while let Some(word) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
            if needs_escape(u64::from_le_bytes(*word)) {
                break;
            }
            at += 8;
        }
        let Some(i) = bytes[at..].iter().position(|&b| escape_of(b).is_some()) else {
            break;
        };
        let i = at + i;
        out.extend_from_slice(&bytes[start..i]);
        if let Some(escape) = escape_of(bytes[i]) {
            escape.write(out, bytes[i]);
        }
        (start, at) = (i + 1, i + 1);
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether any of the word's eight bytes is `"`, `\` or below 0x20: the
/// usual SWAR tests for a zero byte (after XOR with the byte sought) and
/// for a byte below a bound, exact for "any".
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = word.wrapping_sub(0x20 * ONES) & !word & HIGH;
    below_space
        | zero_byte(word ^ (u64::from(b'"') * ONES))
        | zero_byte(word ^ (u64::from(b'\\') * ONES))
        != 0
}

/// How a byte is escaped, if it must be.
#[derive(Clone, Copy)]
enum Escape {
    /// A backslash and this letter (or the byte itself, for `"` and `\`).
    Short(u8),
    /// `\u00` and two lower-case hex digits.
    Unicode,
}

fn escape_of(b: u8) -> Option<Escape> {
    Some(match b {
        b'"' | b'\\' => Escape::Short(b),
        0x08 => Escape::Short(b'b'),
        0x09 => Escape::Short(b't'),
        0x0a => Escape::Short(b'n'),
        0x0c => Escape::Short(b'f'),
        0x0d => Escape::Short(b'r'),
        0..=0x1f => Escape::Unicode,
        _ => return None,
    })
}

impl Escape {
    fn write(self, out: &mut Vec<u8>, b: u8) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        match self {
            Escape::Short(letter) => out.extend_from_slice(&[b'\\', letter]),
            Escape::Unicode => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn line(event: &Event) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, event);
        out
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            // Escapes and ASCII around the eight-byte words' edges.
            proptest::collection::vec(
                prop_oneof![
                    Just('"'),
                    Just('\\'),
                    Just('\n'),
                    Just('\u{7f}'),
                    Just('é'),
                    (0u8..0x20).prop_map(char::from),
                    (0x20u8..0x7f).prop_map(char::from),
                ],
                0..40
            )
            .prop_map(|c| c.into_iter().collect()),
        ]
    }

    fn float() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
            (0u32..100_000).prop_map(|n| f64::from(n) / 1000.0),
        ]
    }

    fn trace_parent() -> impl Strategy<Value = TraceParent> {
        (any::<[u8; 16]>(), any::<[u8; 8]>(), any::<u8>()).prop_map(
            |(trace_id, parent_id, flags)| TraceParent {
                trace_id,
                parent_id,
                flags,
            },
        )
    }

    prop_compose! {
        fn request()(
            ids in (text(), text(), text(), text(), text()),
            at_ms in any::<i64>(),
            names in (proptest::option::of(text()), proptest::option::of(text()), proptest::option::of(text())),
            status in any::<u16>(),
            streaming in any::<bool>(),
            times in (float(), proptest::option::of(float()), float()),
            tokens in (proptest::option::of(any::<u64>()), proptest::option::of(any::<u64>())),
            repairs in proptest::collection::vec(text(), 0..3),
            errors in (proptest::option::of(text()), proptest::option::of(text())),
            calls_incomplete in any::<bool>(),
            trace in (proptest::option::of(trace_parent()), proptest::option::of(text())),
            server in (proptest::option::of(text()), proptest::option::of(any::<u16>())),
        ) -> RequestRecord {
            RequestRecord {
                request_id: ids.0,
                session_id: ids.1,
                session_source: ids.2,
                at_ms,
                provider: ids.3,
                dialect: names.0,
                path: ids.4,
                model: names.1,
                status,
                streaming,
                upstream_latency_ms: times.0,
                first_byte_ms: times.1,
                overhead_us: times.2,
                input_tokens: tokens.0,
                output_tokens: tokens.1,
                response_id: names.2,
                repairs,
                repair_mode: "fix".into(),
                parse_error: errors.0,
                error: errors.1,
                calls_incomplete,
                trace_parent: trace.0,
                trace_state: trace.1,
                server_address: server.0,
                server_port: server.1,
            }
        }
    }

    prop_compose! {
        fn tool_call()(
            ids in (text(), text(), text(), text(), text()),
            names in (proptest::option::of(text()), proptest::option::of(text()), proptest::option::of(text())),
            call_index in any::<u32>(),
            arguments_bytes in any::<u64>(),
            at_ms in any::<i64>(),
            turn in proptest::option::of(any::<i64>()),
        ) -> ToolCallRecord {
            ToolCallRecord {
                threaded: false,
                request_id: ids.0,
                session_id: ids.1,
                provider: ids.2,
                model: names.0,
                response_id: names.1,
                dialect: names.2,
                call_index,
                call_id: ids.3,
                tool: ids.4,
                arguments_bytes,
                at_ms,
                turn,
            }
        }
    }

    prop_compose! {
        fn tool_result()(
            ids in (text(), text(), text(), text(), text()),
            names in (proptest::option::of(text()), proptest::option::of(text()), proptest::option::of(text()), proptest::option::of(text())),
            message_index in any::<u32>(),
            failed in any::<bool>(),
            content_bytes in any::<u64>(),
            at_ms in any::<i64>(),
            exec_ms in proptest::option::of(float()),
            answers in proptest::option::of((any::<i64>(), any::<u32>())),
            latest_of_its_id in any::<bool>(),
            first_turn in proptest::option::of(any::<i64>()),
            trace in (proptest::option::of(trace_parent()), proptest::option::of(text())),
        ) -> ToolResultRecord {
            ToolResultRecord {
                request_id: ids.0,
                session_id: ids.1,
                provider: ids.2,
                model: names.0,
                call_id: ids.3,
                message_index,
                tool: names.1,
                failed,
                basis: ids.4,
                content_bytes,
                excerpt: names.2,
                at_ms,
                exec_ms,
                previous_response_id: names.3,
                answers: answers.map(|(turn, call_index)| TurnRef { turn, call_index }),
                latest_of_its_id,
                first_turn,
                trace_parent: trace.0,
                trace_state: trace.1,
            }
        }
    }

    fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            request().prop_map(Event::Request),
            tool_call().prop_map(Event::ToolCall),
            tool_result().prop_map(Event::ToolResult),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Byte for byte serde_json's line.
        #[test]
        fn is_serde_jsons_line(event in event()) {
            let line = String::from_utf8(line(&event)).unwrap();
            prop_assert_eq!(line, serde_json::to_string(&event).unwrap());
        }

        /// A string escapes as serde_json escapes it.
        #[test]
        fn strings_escape_as_serde_json(s in text()) {
            let mut out = Vec::new();
            string(&mut out, &s);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&s).unwrap());
        }

        /// The word test says yes exactly when a byte of the word needs escaping.
        #[test]
        fn the_word_test_is_exact(word in any::<[u8; 8]>(), at in 0usize..8, b in any::<u8>()) {
            let mut word = word;
            // Often one byte to escape among bytes that need none.
            if b % 2 == 0 {
                for x in &mut word {
                    *x |= 0x40;
                    if *x == b'\\' { *x = b'a'; }
                }
                word[at] = b % 0x20;
            }
            let expected = word.iter().any(|&x| escape_of(x).is_some());
            prop_assert_eq!(needs_escape(u64::from_le_bytes(word)), expected);
        }
    }

    #[test]
    fn every_ascii_character_alone_and_between_words() {
        for b in 0u8..0x80 {
            let c = char::from(b);
            for s in [
                c.to_string(),
                format!("abcdefg{c}hijklmnopq"),
                format!("{c}{c}{c}{c}{c}{c}{c}{c}{c}"),
            ] {
                let mut out = Vec::new();
                string(&mut out, &s);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    serde_json::to_string(&s).unwrap(),
                    "{b:#x}"
                );
            }
        }
    }
}
