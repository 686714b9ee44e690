//! A Chat stream reads the same whatever order its servers write keys in
//! (openai-python's models write a choice's `delta` before its `index`,
//! others put `choices` before `id`): proptest over streams of several
//! choices, each with parallel calls whose arguments come in pieces,
//! interleaved, every object's keys in a random order.

use proptest::prelude::*;

use crate::{Dialect, testutil::parse_stream};

/// A tiny generator for the orders, from the test's seed.
struct Order(u64);

impl Order {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// An object of `members` (key, JSON value), in an order of its own
    /// when `shuffle`.
    fn object(&mut self, mut members: Vec<(&str, String)>, shuffle: bool) -> String {
        if shuffle {
            for i in (1..members.len()).rev() {
                let j = (self.next() % (i as u64 + 1)) as usize;
                members.swap(i, j);
            }
        }
        let inner: Vec<String> = (members.iter())
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        format!("{{{}}}", inner.join(","))
    }
}

/// One fragment of a call: its choice, its index, and whether it is the
/// first (with id and name); `piece` is its argument text.
#[derive(Debug, Clone)]
struct Fragment {
    choice: u64,
    index: u64,
    first: bool,
    piece: String,
}

fn chunk(f: &Fragment, order: &mut Order, shuffle: bool) -> String {
    let arguments = serde_json::Value::String(f.piece.clone()).to_string();
    let mut function = vec![("arguments", arguments)];
    let mut call = vec![("index", f.index.to_string())];
    if f.first {
        function.push(("name", format!("\"tool_{}\"", f.index)));
        call.push(("id", format!("\"call_{}_{}\"", f.choice, f.index)));
        call.push(("type", "\"function\"".into()));
    }
    call.push(("function", order.object(function, shuffle)));
    let call = order.object(call, shuffle);
    let delta = order.object(vec![("tool_calls", format!("[{call}]"))], shuffle);
    let choice = order.object(
        vec![
            ("index", f.choice.to_string()),
            ("delta", delta),
            ("finish_reason", "null".into()),
            ("logprobs", "null".into()),
        ],
        shuffle,
    );
    let chunk = order.object(
        vec![
            ("id", "\"chatcmpl-1\"".into()),
            ("object", "\"chat.completion.chunk\"".into()),
            ("created", "1".into()),
            ("model", "\"m\"".into()),
            ("choices", format!("[{choice}]")),
        ],
        shuffle,
    );
    format!("data: {chunk}\n\n")
}

/// Calls per choice (1–3 choices, 0–3 calls each, arguments in 1–3
/// pieces), their fragments interleaved in any order that keeps each
/// call's own.
fn fragments() -> impl Strategy<Value = Vec<Fragment>> {
    prop::collection::vec(prop::collection::vec(1usize..4, 0..4), 1..4)
        .prop_flat_map(|choices| {
            let mut calls = Vec::new();
            for (choice, pieces) in choices.iter().enumerate() {
                for (index, &n) in pieces.iter().enumerate() {
                    let args = format!("{{\"choice\":{choice},\"call\":{index}}}");
                    let step = args.len().div_ceil(n);
                    let parts: Vec<Fragment> = (args.as_bytes().chunks(step))
                        .enumerate()
                        .map(|(k, p)| Fragment {
                            choice: choice as u64,
                            index: index as u64,
                            first: k == 0,
                            piece: String::from_utf8_lossy(p).into_owned(),
                        })
                        .collect();
                    calls.push(parts);
                }
            }
            let total: usize = calls.iter().map(Vec::len).sum();
            (
                Just(calls),
                prop::collection::vec(any::<prop::sample::Index>(), total),
            )
        })
        .prop_map(|(mut calls, picks)| {
            // Take the next fragment of a call picked at random, until
            // every call's are out.
            let mut out = Vec::new();
            for pick in picks {
                let open: Vec<usize> = (0..calls.len()).filter(|&c| !calls[c].is_empty()).collect();
                let c = open[pick.index(open.len())];
                out.push(calls[c].remove(0));
            }
            out
        })
}

proptest! {
    #[test]
    fn a_chat_stream_reads_the_same_in_any_key_order(
        fragments in fragments(),
        seed in 1u64..,
    ) {
        let stream = |shuffle: bool| {
            let mut order = Order(seed);
            let mut s: String = fragments.iter().map(|f| chunk(f, &mut order, shuffle)).collect();
            s.push_str("data: {\"id\":\"chatcmpl-1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
            s
        };
        let plain = parse_stream(Dialect::OpenAiChat, stream(false).as_bytes());
        let mut want: Vec<(String, String, String)> = fragments
            .iter()
            .filter(|f| f.first)
            .map(|f| (
                format!("call_{}_{}", f.choice, f.index),
                format!("tool_{}", f.index),
                format!("{{\"choice\":{},\"call\":{}}}", f.choice, f.index),
            ))
            .collect();
        want.sort();
        let calls = |v: &crate::ResponseView| {
            let mut c: Vec<(String, String, String)> = (v.calls.iter())
                .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
                .collect();
            c.sort();
            c
        };
        prop_assert_eq!(calls(&plain), want.clone());
        let shuffled = parse_stream(Dialect::OpenAiChat, stream(true).as_bytes());
        prop_assert_eq!(calls(&shuffled), want);
        prop_assert_eq!(shuffled, plain);
    }
}

/// A stream of several choices (`n` > 1) is whole once its last choice
/// finishes: each choice opens with a content delta (as OpenAI and vLLM
/// write a choice's role first), gives its `finish_reason` in a chunk
/// placed at random after its last fragment, and the parser is complete
/// from the chunk that finishes the last one on, never before; what it
/// holds then ([`StreamParser::view_so_far`]) is what the whole stream
/// holds. Ended by the first `finish_reason`, a choice's call still
/// streaming was recorded from a copy with part of its arguments.
fn finish_chunk(choice: u64) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-1\",\"model\":\"m\",\"choices\":[{{\"index\":{choice},\"delta\":{{}},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}}]}}\n\n"
    )
}

fn role_chunk(choice: u64) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{{\"index\":{choice},\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
    )
}

proptest! {
    #[test]
    fn a_chat_stream_is_whole_when_its_last_choice_finishes(
        fragments in fragments(),
        choices in 1u64..4,
        delays in prop::collection::vec(0usize..6, 4),
        seed in 1u64..,
    ) {
        use crate::StreamParser;
        let mut order = Order(seed);
        // Every choice that has calls, and `choices` at least.
        let n = fragments.iter().map(|f| f.choice + 1).max().unwrap_or(0).max(choices);
        let mut events: Vec<String> = (0..n).map(role_chunk).collect();
        let mut finishes: Vec<(usize, u64)> = Vec::new();
        for choice in 0..n {
            let last = fragments.iter().rposition(|f| f.choice == choice);
            let after = last.map_or(0, |at| at + 1) + delays[choice as usize];
            finishes.push((after.min(fragments.len()), choice));
        }
        finishes.sort();
        let mut last_finish = 0;
        for at in 0..=fragments.len() {
            for &(_, choice) in finishes.iter().filter(|(after, _)| *after == at) {
                events.push(finish_chunk(choice));
                last_finish = events.len();
            }
            if let Some(f) = fragments.get(at) {
                events.push(chunk(f, &mut order, seed % 2 == 0));
            }
        }
        events.push("data: [DONE]\n\n".into());
        whole_after(StreamParser::new(Dialect::OpenAiChat), &events, last_finish)?;
    }
}

/// Feeds `events` to `parser`, checking that it is complete from event
/// `last_finish` on and not before, and that the view it gave then has
/// the calls of the end's; the end's view.
fn whole_after(
    mut parser: crate::StreamParser,
    events: &[String],
    last_finish: usize,
) -> Result<crate::ResponseView, TestCaseError> {
    let mut whole = None;
    for (i, event) in events.iter().enumerate() {
        parser.feed(event.as_bytes());
        prop_assert_eq!(
            parser.is_complete(),
            i + 1 >= last_finish,
            "after event {}",
            i
        );
        if whole.is_none() && parser.is_complete() {
            whole = Some(parser.view_so_far());
        }
    }
    let end = parser.finish();
    let whole = whole.expect("complete by the end");
    prop_assert!(!whole.ended_early);
    prop_assert_eq!(&whole.calls, &end.calls);
    Ok(end)
}

proptest! {
    /// Told how many choices the request asked for
    /// ([`StreamParser::choices`]), a stream is whole once each of them
    /// has finished, also when one is named only after all the others
    /// finished (each choice's events — its role, its calls' fragments,
    /// its finish — interleaved with the others' at random), and its calls
    /// are the first choice's: those of the others, alternatives the
    /// client does not continue with, are not the response's, even under
    /// the same ids.
    #[test]
    fn a_chat_stream_told_its_choices_is_whole_when_each_has_finished(
        fragments in fragments(),
        asked in 2u64..5,
        picks in prop::collection::vec(any::<prop::sample::Index>(), 64),
        same_ids in any::<bool>(),
    ) {
        use crate::StreamParser;
        let n = fragments.iter().map(|f| f.choice + 1).max().unwrap_or(0).max(asked);
        let mut order = Order(7);
        let mut lanes: Vec<Vec<String>> = (0..n)
            .map(|choice| {
                let mut lane = vec![role_chunk(choice)];
                for f in fragments.iter().filter(|f| f.choice == choice) {
                    let mut f = f.clone();
                    if same_ids {
                        // Every choice numbers its calls alike (`call_0_k`).
                        f.choice = 0;
                        let mut event = chunk(&f, &mut order, false);
                        event = event.replacen("\"index\":0,\"delta\"", &format!("\"index\":{choice},\"delta\""), 1);
                        lane.push(event);
                    } else {
                        lane.push(chunk(&f, &mut order, false));
                    }
                }
                lane.push(finish_chunk(choice));
                lane
            })
            .collect();
        let mut events = Vec::new();
        let mut picks = picks.into_iter();
        while lanes.iter().any(|l| !l.is_empty()) {
            let open: Vec<usize> = (0..lanes.len()).filter(|&c| !lanes[c].is_empty()).collect();
            let lane = picks.next().map_or(0, |p| p.index(open.len()));
            events.push(lanes[open[lane]].remove(0));
        }
        let last_finish = events.len();
        events.push("data: [DONE]\n\n".into());
        let end = whole_after(StreamParser::new(Dialect::OpenAiChat).choices(n), &events, last_finish)?;
        let mut want: Vec<String> = (fragments.iter())
            .filter(|f| f.first && f.choice == 0)
            .map(|f| format!("call_0_{}", f.index))
            .collect();
        want.sort();
        let got: Vec<String> = end.calls.iter().map(|c| c.id.clone()).collect();
        prop_assert_eq!(got, want);
        for c in &end.calls {
            prop_assert!(c.arguments.starts_with("{\"choice\":0,"), "{:?}", c);
        }
    }
}
