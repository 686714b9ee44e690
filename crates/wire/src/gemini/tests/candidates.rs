//! A stream of several candidates (`candidateCount` > 1) is whole once its
//! last candidate finishes. Gemini streams the candidates side by side:
//! a chunk holds a piece of each candidate still open (candidate 0 with or
//! without its `index`: Vertex leaves the default out), a candidate's last
//! piece or a piece of its own holds its `finishReason`, and a finished
//! candidate is left out of the chunks after it. Ended by the first
//! `finishReason`, candidate 0's call still streaming was recorded from a
//! copy with part of its arguments, and a call begun afterwards apart.

use proptest::prelude::*;

use crate::{Dialect, StreamParser};

/// Candidate 0's parts, one per piece: text, whole calls, and calls whose
/// arguments stream over three pieces (`partialArgs`).
fn first_candidate() -> impl Strategy<Value = Vec<String>> {
    let item = prop_oneof![
        Just(vec![r#"{"text":"t"}"#.to_owned()]),
        (0u8..9).prop_map(|k| vec![format!(
            r#"{{"functionCall":{{"name":"f","args":{{"k":{k}}}}}}}"#
        )]),
        Just(vec![
            r#"{"functionCall":{"name":"g","willContinue":true}}"#.to_owned(),
            r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.q","stringValue":"ab","willContinue":true}],"willContinue":true}}"#.to_owned(),
            r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.q","stringValue":"c"},{"jsonPath":"$.n","numberValue":2}]}}"#.to_owned(),
        ]),
    ];
    prop::collection::vec(item, 1..4).prop_map(|items| items.concat())
}

/// Another candidate's parts: text and whole calls.
fn other_candidate() -> impl Strategy<Value = Vec<String>> {
    let part = prop_oneof![
        Just(r#"{"text":"u"}"#.to_owned()),
        Just(r#"{"functionCall":{"name":"h","args":{"index":1}}}"#.to_owned()),
    ];
    prop::collection::vec(part, 1..4)
}

/// One candidate's piece in a chunk.
fn candidate(index: u64, write_zero: bool, part: Option<&str>, finish: bool) -> String {
    let index = match index {
        0 if !write_zero => String::new(),
        i => format!(",\"index\":{i}"),
    };
    let finish = if finish {
        ",\"finishReason\":\"STOP\""
    } else {
        ""
    };
    format!(
        "{{\"content\":{{\"role\":\"model\",\"parts\":[{}]}}{finish}{index}}}",
        part.unwrap_or_default()
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_gemini_stream_is_whole_when_its_last_candidate_finishes(
        first in first_candidate(),
        others in prop::collection::vec(other_candidate(), 0..3),
        finish_apart in prop::collection::vec(any::<bool>(), 3),
        masks in prop::collection::vec(1u8..8, 0..24),
        write_zero in any::<bool>(),
        reversed in any::<bool>(),
    ) {
        // Each candidate's pieces: (part, finishes), the finish on the last
        // part or on an empty piece after it.
        let pieces: Vec<Vec<(Option<String>, bool)>> = std::iter::once(first)
            .chain(others)
            .zip(&finish_apart)
            .map(|(parts, &apart)| {
                let n = parts.len();
                let mut out: Vec<(Option<String>, bool)> = (parts.into_iter().enumerate())
                    .map(|(k, p)| (Some(p), !apart && k + 1 == n))
                    .collect();
                if apart {
                    out.push((None, true));
                }
                out
            })
            .collect();
        let mut next = vec![0usize; pieces.len()];
        let mut masks = masks.into_iter();
        let mut chunks: Vec<String> = Vec::new();
        let mut last_finish = 0;
        // The first chunk holds every candidate; each after it a random
        // choice of those still open (all once the choices run out).
        let mut mask = u8::MAX;
        while next.iter().zip(&pieces).any(|(&k, p)| k < p.len()) {
            let open: Vec<usize> = (0..pieces.len()).filter(|&c| next[c] < pieces[c].len()).collect();
            let mut chosen: Vec<usize> = (open.iter().enumerate())
                .filter(|(k, _)| mask & (1 << k) != 0)
                .map(|(_, &c)| c)
                .collect();
            if chosen.is_empty() {
                chosen = open;
            }
            if reversed {
                chosen.reverse();
            }
            let mut finished = false;
            let cands: Vec<String> = (chosen.iter())
                .map(|&c| {
                    let (part, finish) = &pieces[c][next[c]];
                    next[c] += 1;
                    finished |= *finish;
                    candidate(c as u64, write_zero, part.as_deref(), *finish)
                })
                .collect();
            chunks.push(format!(
                "data: {{\"candidates\":[{}],\"modelVersion\":\"m\",\"responseId\":\"r\"}}\n\n",
                cands.join(",")
            ));
            if finished {
                last_finish = chunks.len();
            }
            mask = masks.next().unwrap_or(u8::MAX);
        }
        let mut parser = StreamParser::new(Dialect::Gemini);
        let mut whole = None;
        for (i, chunk) in chunks.iter().enumerate() {
            parser.feed(chunk.as_bytes());
            prop_assert_eq!(parser.is_complete(), i + 1 >= last_finish, "after chunk {}: {:?}", i, chunks);
            if whole.is_none() && parser.is_complete() {
                whole = Some(parser.view_so_far());
            }
        }
        let end = parser.finish();
        let whole = whole.expect("complete by the end");
        prop_assert!(!end.ended_early);
        prop_assert_eq!(&whole.calls, &end.calls);
        prop_assert!(end.calls.iter().all(|c| c.name != "h"), "only candidate 0's calls: {:?}", end.calls);
    }
}

/// Told how many candidates the request asked for
/// ([`StreamParser::choices`]), a stream is whole once each has finished:
/// a candidate named only after the others finished holds it open; one
/// that never comes does not make the stream end early.
#[test]
fn a_stream_told_its_candidates_waits_for_one_named_late() {
    let chunk = |candidates: &[String]| {
        format!(
            "data: {{\"candidates\":[{}]}}\r\n\r\n",
            candidates.join(",")
        )
    };
    let call = r#"{"functionCall":{"name":"f","args":{"k":1}}}"#;
    let late = [
        chunk(&[candidate(0, false, Some(call), false)]),
        chunk(&[candidate(0, false, None, true)]),
        chunk(&[candidate(1, true, Some(r#"{"text":"u"}"#), false)]),
        chunk(&[candidate(1, true, None, true)]),
    ];
    let mut told = StreamParser::new(Dialect::Gemini).choices(2);
    let mut untold = StreamParser::new(Dialect::Gemini);
    let mut complete = Vec::new();
    for c in &late {
        told.feed(c.as_bytes());
        untold.feed(c.as_bytes());
        complete.push((told.is_complete(), untold.is_complete()));
    }
    assert_eq!(
        complete,
        [(false, false), (false, true), (false, true), (true, true)]
    );
    let view = told.finish();
    assert!(!view.ended_early);
    assert_eq!(view.calls.len(), 1, "candidate 0's");
    // The server gave one candidate of the two asked for.
    let mut told = StreamParser::new(Dialect::Gemini).choices(2);
    told.feed(late[0].as_bytes());
    told.feed(late[1].as_bytes());
    assert!(!told.is_complete());
    let view = told.finish();
    assert!(!view.ended_early, "each candidate it named finished");
    assert_eq!(view.calls.len(), 1);
}

/// `generationConfig.candidateCount` (or `candidate_count`) is the
/// request's count of candidates, read alike by the fast path and serde.
#[test]
fn the_request_names_its_candidate_count() {
    let cases: [(&str, Option<u64>); 6] = [
        (r#"{"contents":[]}"#, None),
        (
            r#"{"contents":[],"generationConfig":{"temperature":1}}"#,
            None,
        ),
        (
            r#"{"contents":[],"generationConfig":{"temperature":1,"candidateCount":3}}"#,
            Some(3),
        ),
        (
            r#"{"generation_config":{"candidate_count":2},"contents":[]}"#,
            Some(2),
        ),
        (
            r#"{"contents":[],"generationConfig":{"candidateCount":"2"}}"#,
            None,
        ),
        (r#"{"contents":[],"generationConfig":null}"#, None),
    ];
    for (body, want) in cases {
        let view = crate::request_view(Dialect::Gemini, body.as_bytes()).unwrap();
        assert_eq!(view.choices, want, "{body}");
        crate::fast_path_agrees(Dialect::Gemini, body.as_bytes()).unwrap();
    }
}
