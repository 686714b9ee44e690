//! The Responses WebSocket mode's message scanner (`ws::turns`): what
//! the turns read of each message (its `type` and `stream_id`) and the SSE
//! event each upstream message becomes for the stream parser.

use crate::ws::turns::{Envelope, as_sse, edge_type, event_type, read_event};

/// Any bytes as WebSocket messages (cut at each `0xFF` byte, which text
/// messages, being UTF-8, never hold), the SSE they become fed whole and in
/// 3-byte reads: see [`ws_messages_cut`] (panics on a finding).
pub fn ws_messages(data: &[u8]) {
    let messages: Vec<&[u8]> = data.split(|&b| b == 0xff).collect();
    let sse_len: usize = messages.iter().map(|m| m.len() * 2 + 64).sum();
    ws_messages_cut(&messages, &[]);
    ws_messages_cut(&messages, &(0..sse_len).step_by(3).collect::<Vec<_>>());
}

/// Each message read, never a panic: its `type` and `stream_id`, where the
/// message is one JSON object whose `type` is a string (and neither key
/// repeats), are the object's own, by every reader the turns use; and the
/// messages as the SSE events the stream parser is fed (one after another,
/// read at `cuts`, offsets into the SSE) come back one event per message,
/// named by its `type`, with its bytes as the data (a line break `\r`
/// read as `\n`, which JSON allows between tokens).
pub fn ws_messages_cut(messages: &[&[u8]], cuts: &[usize]) {
    let mut sse = Vec::new();
    let mut expected = Vec::new();
    let mut one = Vec::new();
    for &m in messages {
        let head = read_event(m);
        let edge = edge_type(m);
        let kind = event_type(m);
        if let Some(envelope) = one_object(m) {
            let head = head.as_ref().expect("an object's head is read");
            assert_eq!(head.kind.as_deref(), Some(&*envelope.kind), "read_event");
            assert_eq!(head.lane.as_deref(), envelope.stream_id.as_deref());
            assert!(
                edge.is_none_or(|k| k == envelope.kind),
                "edge_type {edge:?}"
            );
            assert_eq!(kind.as_deref(), Some(&*envelope.kind), "event_type");
        }
        // As `Turns::event` feeds an upstream message.
        let kind = head.and_then(|h| h.kind);
        as_sse(kind.as_deref(), m, &mut one);
        sse.extend_from_slice(&one);
        let name = kind.filter(|k| !k.contains(['\n', '\r']));
        let data = m.iter().map(|&b| if b == b'\r' { b'\n' } else { b });
        expected.push((
            name.map_or_else(Vec::new, |k| k.as_bytes().to_vec()),
            data.collect::<Vec<u8>>(),
        ));
    }
    let mut framer = toolwarden_wire::sse::SseFramer::default();
    let mut events = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain([&sse.len()]) {
        let cut = cut.clamp(from, sse.len());
        framer.feed(&sse[from..cut], &mut |name, data| {
            events.push((name.to_vec(), data.to_vec()))
        });
        from = cut;
    }
    framer.finish(&mut |name, data| events.push((name.to_vec(), data.to_vec())));
    assert_eq!(
        events, expected,
        "the stream parser is fed each message as it came"
    );
}

/// `m`'s `type` and `stream_id`, if it is one JSON object whose `type` is
/// a string and in which neither key repeats.
fn one_object(m: &[u8]) -> Option<Envelope<'_>> {
    let value: serde_json::Value = serde_json::from_slice(m).ok()?;
    if !value.is_object() {
        return None;
    }
    serde_json::from_slice(m).ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A JSON object's text: members whose keys are `type`, `stream_id` (at
    /// times spelled with an escape), or others holding objects with those
    /// keys; string values with quotes, braces and escapes; any whitespace
    /// (`\r` and `\n` too) between tokens.
    fn object() -> impl Strategy<Value = Vec<u8>> {
        let key = prop::sample::select(vec![
            "type",
            "stream_id",
            "typ\\u0065",
            "stream\\u005fid",
            "a",
            "response",
        ]);
        let text = "[a-z.\"{}:,\\\\\n\u{e9}]{0,8}".prop_map(|t| serde_json::to_string(&t).unwrap());
        let value = prop_oneof![
            text.clone(),
            Just("null".to_string()),
            Just("12".to_string()),
            text.prop_map(|t| format!("{{\"type\":{t},\"x\":[{t}]}}")),
        ];
        let space = prop::sample::select(vec!["", " ", "\n", "\r\n", "\r", "\t"]);
        prop::collection::vec((key, value, space), 0..5).prop_map(|members| {
            let body: Vec<String> = members
                .into_iter()
                .map(|(k, v, s)| format!("{s}\"{k}\"{s}:{s}{v}{s}"))
                .collect();
            format!("{{{}}}", body.join(",")).into_bytes()
        })
    }

    fn cuts() -> impl Strategy<Value = Vec<usize>> {
        prop::collection::vec(0..600usize, 0..10).prop_map(|mut c| {
            c.sort_unstable();
            c
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Any bytes: never a panic; each message comes back as one event,
        /// whole and read in pieces cut anywhere.
        #[test]
        fn any_messages_cut_anywhere(
            messages in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..48), 0..5),
            cuts in cuts(),
        ) {
            let messages: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
            ws_messages_cut(&messages, &cuts);
        }

        /// JSON objects: their `type` and `stream_id` are read as a JSON
        /// parser reads them, wherever they stand and however spelled.
        #[test]
        fn objects_are_read_as_json_reads_them(
            messages in prop::collection::vec(object(), 1..4),
            cuts in cuts(),
        ) {
            let messages: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
            ws_messages_cut(&messages, &cuts);
        }
    }

    #[test]
    fn the_ws_messages_target_reads_messages_and_their_events() {
        for input in [
            &b""[..],
            br#"{"type":"response.create","model":"m","input":"hi"}"#,
            b"{\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\xff{\"stream_id\":\"l\",\"type\":\"x\"}",
            b"{\r\n\"type\" : \"a\\u0062\"\r}\xffnot json\xff\xff{\"type\":\"x\"",
            br#"{"a":{"type":"inner"},"type":"outer","stream_id":null}"#,
        ] {
            ws_messages(input);
        }
    }
}
