//! The request view of a Gemini body, and the reading of a
//! `functionResponse.response` when its result is read.

use std::borrow::Cow;

use serde::Deserialize;
use toolwarden_core::Verdict;

use super::{
    model::{Body, Content, Entries, GenerationConfig},
    turns::{defects, turns},
};
use crate::{
    CallView, RequestView, ResultView, WireError,
    raw_result::RawResult,
    scan::Bail,
    splice::{Raw, fnv1a},
    text::Fnv64,
    text_answers::{self, TextSteps},
};

/// See [`crate::request_view`]; verdicts are decided by [`read_result`].
pub(crate) fn request_view<'a>(bytes: &'a [u8]) -> Result<RequestView<'a>, WireError> {
    read(bytes, false).map(|(view, _)| view)
}

/// See [`crate::inspect`]: the view and the defects [`validate`](crate::validate()) finds,
/// from one parse and one pairing of the turns.
pub(crate) fn inspect(bytes: &[u8]) -> crate::Inspection<'_> {
    crate::Inspection::of(read(bytes, true), || super::validate(bytes))
}

/// The view; with `check`, also the pairing defects once the turns are paired.
/// The fast path ([`super::fast`]) reads the body first; a body it does
/// not take is read by serde, from the start.
fn read<'a>(bytes: &'a [u8], check: bool) -> crate::Pass<'a> {
    crate::splice::expect_object(bytes)?;
    let text = crate::splice::utf8(bytes)?;
    let body = match super::fast::body(text) {
        Ok(body) => body,
        Err(Bail) => serde_json::from_str(text)?,
    };
    view_of(&body, check)
}

/// See [`crate::fast_path_agrees`].
pub(crate) fn fast_path_agrees(body: &[u8]) -> Result<(), String> {
    let Ok(text) = crate::splice::utf8(body) else {
        return Ok(());
    };
    fast_then_serde(text).unwrap_or(Ok(()))
}

/// `None` when the fast path does not take `text`; else whether serde
/// reads the same view and defects (see [`crate::same_pass`]).
pub(super) fn fast_then_serde(text: &str) -> Option<Result<(), String>> {
    let fast = super::fast::body(text)
        .ok()
        .map(|body| view_of(&body, true));
    crate::same_pass(fast, || {
        let full = serde_json::from_str::<Body<'_>>(text).map_err(WireError::from);
        format!("{:?}", full.and_then(|body| view_of(&body, true)))
    })
}

/// `generationConfig.candidateCount`: the small object is parsed only
/// when it names the key (most requests' do not).
fn candidate_count(config: Raw<'_>) -> Option<u64> {
    let text = config.0;
    if !text.contains("candidateCount") && !text.contains("candidate_count") {
        return None;
    }
    serde_json::from_str::<GenerationConfig>(text)
        .ok()?
        .candidate_count
}

/// The view of a read body.
fn view_of<'a>(body: &Body<'a>, check: bool) -> crate::Pass<'a> {
    let contents = &body.contents.list;
    let paired = turns(contents);
    let found = check.then(|| defects(&paired));
    let last_model = contents.iter().rposition(|c| c.is_model());
    let mut view = RequestView {
        message_count: contents.len(),
        choices: body.generation.and_then(candidate_count),
        ..RequestView::default()
    };
    if let Some(first) = body.contents.first {
        let system = body.system.map(|s| s.0.as_bytes()).unwrap_or(b"");
        view.first_turn_hash = Some(
            opening_contents_hash(system, contents)
                .unwrap_or_else(|| first_turn_hash(system, first)),
        );
    }
    // A client that answers calls in text (`crate::text_answers`).
    let mut steps = TextSteps::default();
    for (k, (content, turn)) in contents.iter().zip(&paired).enumerate() {
        let new = last_model.is_none_or(|m| k > m);
        match (content.is_model(), content.parts.has_calls_or_responses()) {
            (true, false) => steps.assistant(content.parts.raw, k, &mut view.calls),
            (false, false) => steps.user(content.parts.raw, k, new, &mut view.results),
            _ => steps.other(),
        }
        for c in &turn.calls {
            let call = content.parts[c.part].call.as_ref();
            view.calls.push(CallView {
                id: owned_or(&c.id, content_id(call.and_then(|f| f.id.as_ref()))),
                name: borrow_cow(call.and_then(|f| f.name.as_ref())),
                arguments: Cow::Borrowed(call.and_then(|f| f.args).map_or("{}", |a| a.0)),
                message_index: k,
            });
        }
        for r in &turn.responses {
            let resp = content.parts[r.part].response.as_ref();
            view.results.push(ResultView {
                call_id: owned_or(&r.id, content_id(resp.and_then(|f| f.id.as_ref()))),
                tool: resp.and_then(|f| f.name.as_ref()).map(|n| clone_cow(n)),
                message_index: k,
                new,
                raw: RawResult::Gemini {
                    response: resp.and_then(|f| f.response).map(|r| r.0),
                },
            });
        }
    }
    Ok((view, found))
}

/// The first-turn fingerprint of a conversation that opens with more than
/// one content of the client's before the model's first: the system
/// instruction and each of those contents (its role and its parts' raw
/// text, or the text beside its reminders), a content of reminders alone
/// left out. Frameworks whose Gemini formatter sends the system prompt as
/// the opening user content and the user's message as the next one
/// (AgentScope's; Haystack's for a system prompt passed back) open every
/// conversation with the same first content, which alone would merge them
/// into one session. `None` when one such content or none opens it, or
/// when one may hold a failed step's joined errors: [`first_turn_hash`]
/// reads the first content alone, as it always did.
fn opening_contents_hash<'a>(system: &[u8], contents: &[Content<'a>]) -> Option<u64> {
    let opening = || {
        contents
            .iter()
            .take_while(|c| !c.is_model() && !c.parts.has_calls_or_responses())
            .filter(|c| !crate::opening::is_reminders_only(c.parts.raw))
    };
    // Two at least.
    opening().nth(1)?;
    let raw = |c: &Content<'a>| c.parts.raw.unwrap_or("");
    if opening().any(|c| text_answers::may_hold_errors(raw(c))) {
        return None;
    }
    let mut hash = Fnv64::default();
    hash.field(system);
    hash.field(b"opening contents");
    for c in opening() {
        hash.field(c.role.as_deref().unwrap_or("").as_bytes());
        match crate::opening::without_reminders(c.parts.raw) {
            Ok(Some(kept)) => hash.field(kept.as_bytes()),
            _ => hash.field(raw(c).as_bytes()),
        }
    }
    Some(hash.finish())
}

/// The first-turn fingerprint: the system instruction and the first
/// content, as their raw text; a first content whose text parts hold a
/// harness's reminders beside other text by its role and that other text
/// (see [`crate::opening`]); a first content a failed step's error was
/// joined to as it was before ([`joined_errors`]).
fn first_turn_hash(system: &[u8], first: &str) -> u64 {
    if let Some(joined) = joined_errors(first) {
        let mut hash = Fnv64::default();
        hash.field(system);
        hash.write(&first.as_bytes()[..joined.start]);
        hash.write(&first.as_bytes()[joined.end..]);
        return hash.finish();
    }
    #[derive(Deserialize)]
    struct Opening<'a> {
        #[serde(borrow, default)]
        role: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        parts: Option<&'a serde_json::value::RawValue>,
    }
    let opening = || {
        // Most first contents hold no reminder: one SIMD search.
        memchr::memmem::find(first.as_bytes(), b"<system-reminder>")?;
        let o: Opening<'_> = serde_json::from_str(first).ok()?;
        let text = crate::opening::without_reminders(o.parts.map(|p| p.get())).ok()??;
        Some((o.role, text))
    };
    match opening() {
        Some((role, text)) => fnv1a(&[
            system,
            b"opening",
            role.as_deref().unwrap_or("").as_bytes(),
            text.as_bytes(),
        ]),
        None => fnv1a(&[system, first.as_bytes()]),
    }
}

/// Where, in a first content's raw text, the errors a client joined to its
/// last text part lie (smolagents joins a failed step's error to the task,
/// with a newline: [`text_answers::user_words`]): the escaped text from
/// that newline to the string's closing quote. Without them the content
/// reads byte for byte as the client sent it before the error.
fn joined_errors(first: &str) -> Option<std::ops::Range<usize>> {
    #[derive(Deserialize)]
    struct Opening<'a> {
        #[serde(borrow)]
        parts: Vec<TextPart<'a>>,
    }
    #[derive(Deserialize)]
    struct TextPart<'a> {
        #[serde(borrow, default)]
        text: Option<&'a serde_json::value::RawValue>,
    }
    if !text_answers::may_hold_errors(first) {
        return None;
    }
    let opening: Opening<'_> = serde_json::from_str(first).ok()?;
    let literal = opening.parts.iter().rev().find_map(|p| p.text)?.get();
    let text: Cow<'_, str> = serde_json::from_str(literal).ok()?;
    let words = text_answers::user_words(&text);
    let cut = crate::text::escaped_offset(literal, words.len())?;
    let start = literal.as_ptr() as usize - first.as_ptr() as usize;
    (words.len() < text.len()).then(|| start + cut..start + literal.len() - 1)
}

/// Read a response (see [`crate::ResultView::read`]): an `error` key
/// stating an error ([`states_an_error`]) or
/// an `isError` flag in the `response` object, else an MCP `isError` in
/// its text, else the detector.
pub(crate) fn read_result<'a>(
    response: Option<&'a str>,
    is_failure: crate::text::Judge<'_>,
) -> Result<(Cow<'a, str>, Verdict), WireError> {
    let read = read_response(response)?;
    let explicit = read
        .explicit
        .or_else(|| crate::text::mcp_is_error(&read.text));
    let verdict = match explicit {
        Some(failed) => Verdict::explicit(failed),
        None => is_failure(&read.text),
    };
    Ok((read.text, verdict))
}

/// The body's own id string when it is the one chosen, else a copy.
fn owned_or<'a>(chosen: &str, body_id: Option<Cow<'a, str>>) -> Cow<'a, str> {
    match body_id {
        Some(b) if b == chosen => b,
        _ => Cow::Owned(chosen.to_string()),
    }
}

fn content_id<'a>(id: Option<&Cow<'a, str>>) -> Option<Cow<'a, str>> {
    id.map(clone_cow)
}

fn clone_cow<'a>(c: &Cow<'a, str>) -> Cow<'a, str> {
    match c {
        Cow::Borrowed(s) => Cow::Borrowed(s),
        Cow::Owned(s) => Cow::Owned(s.clone()),
    }
}

fn borrow_cow<'a>(c: Option<&Cow<'a, str>>) -> Cow<'a, str> {
    c.map(clone_cow).unwrap_or(Cow::Borrowed(""))
}

/// What a `functionResponse.response` says.
pub(super) struct ResponseText<'a> {
    /// The text: an `error`'s message, else `output` / `result` /
    /// `content` when a string, else the object's JSON.
    pub text: Cow<'a, str>,
    /// An `error` key (explicit failure) or an MCP `isError` flag.
    pub explicit: Option<bool>,
}

/// Read a `functionResponse.response` object from its raw JSON text: its
/// members by the fast path ([`super::fast::entries`]), or by serde when
/// it bails.
pub(super) fn read_response(raw: Option<&str>) -> Result<ResponseText<'_>, crate::WireError> {
    let entries = raw
        .map(|text| match super::fast::entries(text) {
            Ok(entries) => Ok(entries),
            Err(Bail) => serde_json::from_str::<Entries<'_>>(text),
        })
        .transpose()?;
    Ok(response_text(entries.as_ref()))
}

/// Read a `functionResponse.response` object.
fn response_text<'a>(entries: Option<&Entries<'a>>) -> ResponseText<'a> {
    #[derive(Deserialize)]
    struct Msg<'a> {
        #[serde(borrow)]
        message: Cow<'a, str>,
    }
    let Some(r) = entries else {
        return ResponseText {
            text: Cow::Borrowed(""),
            explicit: None,
        };
    };
    if let Some(e) = r.get("error").filter(|e| states_an_error(e)) {
        let text = as_text(e)
            .or_else(|| serde_json::from_str::<Msg<'_>>(e).ok().map(|m| m.message))
            .unwrap_or(Cow::Borrowed(e));
        return ResponseText {
            text,
            explicit: Some(true),
        };
    }
    let text = ["output", "result", "content"]
        .into_iter()
        .find_map(|k| r.get(k))
        .map(|v| {
            as_text(v)
                .or_else(|| text_blocks(v))
                .unwrap_or(Cow::Borrowed(v))
        })
        .unwrap_or_else(|| Cow::Owned(r.to_json()));
    let explicit = r.get("isError").and_then(|v| match v {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    });
    ResponseText { text, explicit }
}

/// Whether a `response.error` value states an error: not `null`, `false`,
/// a number, `""`, `"none"` or an empty array or object, which tools that
/// always return an `error` field send on success (the content detector
/// reads an `error` key of other dialects' results the same way).
fn states_an_error(raw: &str) -> bool {
    // Decided without a parse where the text alone tells (an error's text
    // is then read again, whole: parsing it here too doubled the cost of
    // reading a failed result): a string longer than any escaping of
    // `"none"` is neither empty nor `none`; an array or object with
    // anything but whitespace between its brackets is not empty (the
    // entries' values are whole JSON values).
    let bytes = raw.trim_ascii().as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(b'"'), _) if bytes.len() > "\"\\u006e\\u006f\\u006e\\u0065\"".len() => return true,
        (Some(b'['), Some(b']')) | (Some(b'{'), Some(b'}')) if bytes.len() >= 2 => {
            return !bytes[1..bytes.len() - 1].trim_ascii().is_empty();
        }
        _ => {}
    }
    by_parse(raw)
}

/// [`states_an_error`] by a parse of the value.
fn by_parse(raw: &str) -> bool {
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::String(s)) => !s.is_empty() && !s.eq_ignore_ascii_case("none"),
        Ok(serde_json::Value::Array(a)) => !a.is_empty(),
        Ok(serde_json::Value::Object(o)) => !o.is_empty(),
        Ok(serde_json::Value::Bool(b)) => b,
        Ok(serde_json::Value::Null | serde_json::Value::Number(_)) => false,
        // Not JSON (the entries are raw JSON, so this is not expected):
        // as it was, an error.
        Err(_) => true,
    }
}

/// An array of text blocks as their texts joined with newlines: Strands
/// Agents' `{"output": [{"text": "Error: …"}]}` (its tool result's content
/// blocks), MCP's `[{"type": "text", "text": "…"}]`. `None` for anything
/// else, an array of data included (a block with another key, a `type`
/// other than `text`): that stays JSON.
fn text_blocks(raw: &str) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Block<'a> {
        #[serde(borrow)]
        text: Cow<'a, str>,
        #[serde(borrow, default, rename = "type")]
        kind: Option<Cow<'a, str>>,
    }
    if !raw.starts_with('[') {
        return None;
    }
    let blocks: Vec<Block<'_>> = serde_json::from_str(raw).ok()?;
    if blocks.is_empty()
        || blocks
            .iter()
            .any(|b| b.kind.as_deref().is_some_and(|k| k != "text"))
    {
        return None;
    }
    let mut texts = blocks.into_iter().map(|b| b.text);
    let first = texts.next()?;
    Some(texts.fold(first, |mut joined, text| {
        let s = joined.to_mut();
        s.push('\n');
        s.push_str(&text);
        joined
    }))
}

/// A JSON string value as text, borrowed when it has no escapes.
fn as_text(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.starts_with('"') {
        return None;
    }
    crate::text::unescape(raw).ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::by_parse as parsed;

    #[test]
    fn an_error_value_is_read_as_a_parse_reads_it() {
        for raw in [
            r#""""#,
            r#""none""#,
            r#""NONE""#,
            r#""\u006e\u006f\u006e\u0065""#,
            r#""\u004E\u004f\u004E\u0045""#,
            r#""permission denied""#,
            "[]",
            "[ \n ]",
            "[1]",
            "{}",
            " { \t} ",
            r#"{"message": "denied"}"#,
            "null",
            "false",
            "true",
            "0",
            "[",
            "{",
        ] {
            assert_eq!(super::states_an_error(raw), parsed(raw), "{raw}");
        }
    }

    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i32>().prop_map(|n| serde_json::json!(n)),
            prop_oneof![
                Just(String::new()),
                Just("none".into()),
                Just("None".into()),
                ".{0,40}"
            ]
            .prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
                prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any value, compact or pretty, with `\u` escapes or not.
        #[test]
        fn any_error_value_is_read_as_a_parse_reads_it(v in value(), pretty in any::<bool>(), ascii in any::<bool>()) {
            let mut raw = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }.unwrap();
            if ascii {
                raw = raw.chars().map(|c| if c.is_ascii_alphabetic() && matches!(v, serde_json::Value::String(_)) {
                    format!("\\u{:04x}", c as u32)
                } else {
                    c.to_string()
                }).collect();
                // The quotes themselves stay quotes.
            }
            prop_assert_eq!(super::states_an_error(&raw), parsed(&raw), "{}", raw);
        }
    }
}
