//! The response view of a non-streaming Messages response (or error body).
//!
//! Read by the SIMD scanner first ([`fast`]: a response's text and tool
//! inputs are skipped 64 bytes at a time, its few fields read as the
//! request view's fast path reads a block's), else by serde, which gives
//! the exact error; both fill the same [`Parts`]. Property-tested against
//! each other below, and fuzzed (`response_view`).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use super::model::{BlockClass, classify};
use crate::{
    ResponseView, Usage, WireError,
    scan::{Bail, Fast, Scanner, Seen},
};

/// `usage` of a message or a `message_delta`.
#[derive(Debug, Deserialize, Default)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
}

pub(super) use crate::api_error::ApiError;

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Vec<RespBlock<'a>>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(borrow, default)]
    error: Option<ApiError<'a>>,
}

#[derive(Deserialize)]
struct RespBlock<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

pub(super) fn usage(u: Option<WireUsage>) -> Usage {
    let u = u.unwrap_or_default();
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
    }
}

/// The response's view: `tool_use` blocks and the server tools'
/// (`server_tool_use`, `mcp_tool_use`, which Anthropic answers in the same
/// message; a result for one of them would be refused) as its calls, the
/// latter marked in `server_calls`.
pub(crate) fn response_view(body: &[u8]) -> Result<ResponseView, WireError> {
    let fast = std::str::from_utf8(body).ok().and_then(|t| fast(t).ok());
    let parts = match fast {
        Some(parts) => parts,
        None => serde_json::from_slice::<Body<'_>>(body)?.into(),
    };
    Ok(view_of(parts))
}

/// What the view keeps of a response body, from either path.
#[derive(Debug)]
struct Parts<'a> {
    id: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    content: Option<Vec<Part<'a>>>,
    stop_reason: Option<Cow<'a, str>>,
    usage: Option<WireUsage>,
    /// `type: message` of an error body.
    error: Option<String>,
}

/// A content block's fields the view reads; `input` raw.
#[derive(Debug)]
struct Part<'a> {
    kind: Cow<'a, str>,
    id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    input: Option<&'a str>,
}

impl<'a> From<Body<'a>> for Parts<'a> {
    fn from(b: Body<'a>) -> Self {
        Parts {
            id: b.id,
            model: b.model,
            content: b.content.map(|blocks| {
                blocks
                    .into_iter()
                    .map(|blk| Part {
                        kind: blk.kind,
                        id: blk.id,
                        name: blk.name,
                        input: blk.input.map(RawValue::get),
                    })
                    .collect()
            }),
            stop_reason: b.stop_reason,
            usage: b.usage,
            error: b.error.map(|e| e.describe()),
        }
    }
}

fn view_of(b: Parts<'_>) -> ResponseView {
    let mut calls = Vec::new();
    let mut server_calls = Vec::new();
    for blk in b.content.unwrap_or_default() {
        match classify(&blk.kind) {
            BlockClass::Call => {}
            BlockClass::ServerCall => server_calls.push(calls.len()),
            _ => continue,
        }
        calls.push(ToolCall {
            id: blk.id.unwrap_or_default().into_owned(),
            name: blk.name.unwrap_or_default().into_owned(),
            arguments: blk.input.unwrap_or("{}").to_string(),
        });
    }
    ResponseView {
        id: b.id.map(Cow::into_owned),
        model: b.model.map(Cow::into_owned),
        calls,
        server_calls,
        call_kinds: Vec::new(),
        usage: usage(b.usage),
        stop_reason: b.stop_reason.map(Cow::into_owned),
        incomplete_reason: None,
        last_call_completed: false,
        error: b.error,
        error_status: None,
        truncated: false,
        ended_early: false,
    }
}

/// The fast path: [`Body`]'s fields, each at most once (serde refuses a
/// repeated one), the rest skipped; an `error` that is not `null` bails
/// (serde reads error bodies), as does any value of another type.
fn fast(text: &str) -> Fast<Parts<'_>> {
    let mut s = Scanner::new(text);
    let mut parts = Parts {
        id: None,
        model: None,
        content: None,
        stop_reason: None,
        usage: None,
        error: None,
    };
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "id" => parts.id = seen.once(0, s.opt_string())?,
            "model" => parts.model = seen.once(1, s.opt_string())?,
            "content" => parts.content = seen.once(2, opt(s, blocks))?,
            "stop_reason" => parts.stop_reason = seen.once(3, s.opt_string())?,
            "usage" => parts.usage = seen.once(4, opt(s, fast_usage))?,
            "error" => seen.once(5, if s.null()? { Ok(()) } else { Err(Bail) })?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    s.end()?;
    Ok(parts)
}

/// `null`, or what `read` reads.
fn opt<'a, T>(s: &mut Scanner<'a>, read: fn(&mut Scanner<'a>) -> Fast<T>) -> Fast<Option<T>> {
    if s.null()? {
        Ok(None)
    } else {
        read(s).map(Some)
    }
}

fn blocks<'a>(s: &mut Scanner<'a>) -> Fast<Vec<Part<'a>>> {
    let mut blocks = Vec::new();
    s.array(|s| {
        let (mut kind, mut id, mut name, mut input) = (None, None, None, None);
        let mut seen = Seen::default();
        s.object(|s, key| {
            match key {
                "type" => kind = Some(seen.once(0, s.string())?),
                "id" => id = seen.once(1, s.opt_string())?,
                "name" => name = seen.once(2, s.opt_string())?,
                "input" => input = seen.once(3, s.opt_raw())?,
                _ => s.skip()?,
            }
            Ok(())
        })?;
        blocks.push(Part {
            kind: kind.ok_or(Bail)?,
            id,
            name,
            input,
        });
        Ok(())
    })?;
    Ok(blocks)
}

fn fast_usage(s: &mut Scanner<'_>) -> Fast<WireUsage> {
    let mut u = WireUsage::default();
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "input_tokens" => u.input_tokens = seen.once(0, opt(s, count))?,
            "output_tokens" => u.output_tokens = seen.once(1, opt(s, count))?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(u)
}

/// A `u64` written as digits alone; anything else (a sign, a fraction, an
/// exponent, past `u64::MAX`) bails, for serde to accept or refuse.
fn count(s: &mut Scanner<'_>) -> Fast<u64> {
    let raw = s.raw()?;
    if !raw.bytes().all(|b| b.is_ascii_digit()) || (raw.len() > 1 && raw.starts_with('0')) {
        return Err(Bail);
    }
    raw.parse().map_err(|_| Bail)
}

/// For the fuzz target: whether the fast path, when it answers `body`,
/// gives the view serde gives.
pub(crate) fn response_fast_path_agrees(body: &[u8]) -> Result<(), String> {
    let Some(fast) = std::str::from_utf8(body).ok().and_then(|t| fast(t).ok()) else {
        return Ok(());
    };
    let fast = format!("{:?}", view_of(fast));
    let full = match serde_json::from_slice::<Body<'_>>(body) {
        Ok(b) => format!("{:?}", view_of(b.into())),
        Err(e) => format!("error: {e}"),
    };
    if fast == full {
        Ok(())
    } else {
        Err(format!("fast path: {fast}\nfull parser: {full}"))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::response_fast_path_agrees;
    use crate::testutil::pick;

    /// One member of a body: a field index and a value choice.
    fn member(f: u8, v: u8) -> String {
        let string = |v| {
            pick(
                v,
                &[
                    r#""msg_1""#,
                    r#""a\"b\u00e9""#,
                    "null",
                    "7",
                    r#""\ud800""#,
                    r#""é""#,
                ],
            )
        };
        match f % 9 {
            0 => format!(r#""id":{}"#, string(v)),
            1 => format!(r#""model":{}"#, string(v)),
            2 => format!(r#""stop_reason":{}"#, string(v)),
            3 => format!(
                r#""usage":{}"#,
                pick(
                    v,
                    &[
                        r#"{"input_tokens":12,"output_tokens":0}"#,
                        r#"{"input_tokens":null,"cache":{"a":[1]}}"#,
                        r#"{"input_tokens":1.5}"#,
                        r#"{"output_tokens":-1}"#,
                        r#"{"output_tokens":18446744073709551616}"#,
                        r#"{"input_tokens":01}"#,
                        r#"{"input_tokens":3,"input_tokens":4}"#,
                        "null",
                        "[]",
                    ]
                )
            ),
            4 => format!(
                r#""error":{}"#,
                pick(
                    v,
                    &[
                        "null",
                        r#"{"type":"overloaded_error","message":"busy"}"#,
                        "3"
                    ]
                )
            ),
            5 => r#""type":"message""#.into(),
            _ => format!(
                r#""content":[{}]"#,
                [v, v.wrapping_mul(7), v.wrapping_add(3)]
                    .iter()
                    .take(usize::from(v % 4))
                    .map(|&b| block(b))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }

    /// Any of the blocks, evenly (not [`pick`]'s first two mostly: the
    /// rare shapes are the ones the fast path must refuse).
    fn block(v: u8) -> String {
        const BLOCKS: &[&str] = &[
            r#"{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls\n","n":[1,2.5e3]}}"#,
            r#"{"input":{},"name":"Read","id":"toolu_2","type":"tool_use"}"#,
            r#"{"type":"text","text":"I'll run \"ls\".\n"}"#,
            r#"{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":null}"#,
            r#"{"type":"tool_use","id":null,"name":null}"#,
            r#"{"type":"tool_\u0075se","id":"t","input":[]}"#,
            r#"{"id":"no type"}"#,
            r#"{"type":"tool_use","id":"a","id":"b"}"#,
            r#"{"type":"text","type":"tool_use","id":"c"}"#,
            r#"{"type":null}"#,
            r#"{"type":"thinking","thinking":"hmm","signature":"x"}"#,
        ];
        BLOCKS[usize::from(v) % BLOCKS.len()].to_string()
    }

    proptest! {
        /// Whenever the fast path answers, serde reads the same view.
        #[test]
        fn fast_path_agrees_with_serde(
            members in proptest::collection::vec((any::<u8>(), any::<u8>()), 0..8),
            cut in any::<u16>(),
            damage in any::<bool>(),
        ) {
            let body = format!(
                "{{{}}}",
                members.iter().map(|&(f, v)| member(f, v)).collect::<Vec<_>>().join(",")
            );
            prop_assert!(response_fast_path_agrees(body.as_bytes()).is_ok(), "{}", body);
            if damage {
                // Cut short or with a byte changed: still the same answer.
                let mut bytes = body.into_bytes();
                let at = usize::from(cut) % bytes.len();
                if cut % 2 == 0 {
                    bytes.truncate(at);
                } else {
                    bytes[at] = b"{}[],:\\"[usize::from(cut >> 1) % 7];
                }
                let agrees = response_fast_path_agrees(&bytes);
                prop_assert!(agrees.is_ok(), "{:?}", agrees);
            }
        }
    }

    /// The fast path answers a real response (not only agrees by bailing).
    #[test]
    fn reads_a_response_with_calls() {
        let body = br#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Running it.\n"},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"cargo test"}}],"stop_reason":"tool_use","usage":{"input_tokens":2095,"output_tokens":503,"cache_read_input_tokens":0}}"#;
        let parts = super::fast(std::str::from_utf8(body).unwrap()).unwrap();
        let view = super::view_of(parts);
        assert_eq!(view.calls.len(), 1);
        assert_eq!(view.calls[0].arguments, r#"{"command":"cargo test"}"#);
        assert_eq!(view.usage.output_tokens, Some(503));
        assert!(response_fast_path_agrees(body).is_ok());
    }
}
