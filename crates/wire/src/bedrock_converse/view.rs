//! The request view: calls and results of a Converse body.
//!
//! Verdicts: `toolResult.status` is Bedrock's failure flag. `"error"` is an
//! explicit failure, `"success"` an explicit success. An absent status is
//! decided per conversation, as Anthropic's `is_error`: when some result of
//! the body is flagged `"success"` the client flags its successes too
//! (LangChain, Pydantic AI) and an unflagged result is a success; when none
//! is, unflagged results go to the content detector (after an MCP `isError`
//! inside the content), also when the client flags its errors alone.
//!
//! A result's content is a list of blocks: `text` blocks are its text,
//! `json` blocks their JSON text, others (images, documents) are skipped;
//! the parts are joined with newlines.

use std::borrow::Cow;

use ahash::AHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::Verdict;

use super::{
    model::{Request, Shape},
    validate::defects,
};
use crate::{
    CallView, ModelFamily, RequestView, ResultView, WireError,
    opening::OpeningHash,
    raw_result::RawResult,
    scan::{Bail, Scanner},
    splice::{opt_cow, utf8},
    text::{Fnv64, Judge, mcp_is_error, push_part},
    text_answers::{self, TextSteps},
};

/// See [`crate::request_view`].
pub(crate) fn request_view(body: &[u8]) -> Result<RequestView<'_>, WireError> {
    read(body, None).map(|(view, _)| view)
}

/// See [`crate::inspect`].
pub(crate) fn inspect(body: &[u8], model: ModelFamily) -> crate::Inspection<'_> {
    crate::Inspection::of(read(body, Some(model)), || super::validate(body, model))
}

/// The view and, for `check` (the model the rules judge for), the defects.
/// The fast path ([`super::fast`]) reads the body first; a body it does
/// not take is read by serde, from the start.
fn read(body: &[u8], check: Option<ModelFamily>) -> crate::Pass<'_> {
    let text = utf8(body)?;
    let req = match super::fast::request(text) {
        Ok(req) => req,
        Err(Bail) => serde_json::from_str(text)?,
    };
    view_of(text, req, check)
}

/// See [`crate::fast_path_agrees`].
pub(crate) fn fast_path_agrees(body: &[u8]) -> Result<(), String> {
    let Ok(text) = utf8(body) else {
        return Ok(());
    };
    fast_then_serde(text).unwrap_or(Ok(()))
}

/// `None` when the fast path does not take `text`; else whether serde
/// reads the same view and defects (see [`crate::same_pass`]).
pub(super) fn fast_then_serde(text: &str) -> Option<Result<(), String>> {
    let check = Some(ModelFamily::Claude);
    let fast = super::fast::request(text)
        .ok()
        .map(|req| view_of(text, req, check));
    crate::same_pass(fast, || {
        let full = serde_json::from_str::<Request<'_>>(text).map_err(WireError::from);
        format!("{:?}", full.and_then(|req| view_of(text, req, check)))
    })
}

/// The view of a read body (`text`, whose messages' raw contents a text
/// step may need).
fn view_of<'a>(text: &'a str, req: Request<'a>, check: Option<ModelFamily>) -> crate::Pass<'a> {
    let shapes: Option<Vec<Shape<'_>>> =
        check.map(|_| req.messages.iter().map(Shape::of).collect());
    let mut view = RequestView {
        message_count: req.messages.len(),
        ..RequestView::default()
    };
    let mut names: AHashMap<Cow<'_, str>, usize> = AHashMap::new();
    let mut last_assistant = None;
    let mut assistant_before_last = None;
    let mut hash = Fnv64::default();
    for s in req.system.iter().flatten() {
        if let Some(t) = &s.text {
            hash.field(t.as_bytes());
        }
    }
    hash.write(b"\x00system-end");
    let mut opening = OpeningHash::after(hash);
    let mut first_user = true;
    // A client that answers calls in text (`crate::text_answers`), and
    // the messages' raw contents, found when one may be such a step.
    let mut steps = TextSteps::default();
    let mut raws: Option<Option<Vec<&str>>> = None;
    for (i, m) in req.messages.into_iter().enumerate() {
        let assistant = m.role == "assistant";
        let user = m.role == "user";
        if assistant {
            assistant_before_last = last_assistant;
            last_assistant = Some(i);
        }
        let texts_only = !m
            .content
            .iter()
            .any(|b| b.tool_use.is_some() || b.tool_result.is_some());
        let hash_text = first_user && user;
        let may_be_step = (texts_only || hash_text)
            && m.content
                .iter()
                .filter_map(|b| b.text.as_deref())
                .any(text_answers::may_be_step);
        let raw = may_be_step
            .then(|| {
                raws.get_or_insert_with(|| contents(text))
                    .as_ref()?
                    .get(i)
                    .copied()
            })
            .flatten();
        match (assistant, user, texts_only) {
            (true, _, true) => steps.assistant(raw, i, &mut view.calls),
            // `new` is decided below, once every message is read.
            (_, true, true) => steps.user(raw, i, false, &mut view.results),
            _ => steps.other(),
        }
        // A failed step's error a client joined to the task: the user's
        // words alone, as before it (`text_answers::user_words`).
        let words = raw
            .filter(|raw| hash_text && text_answers::may_hold_errors(raw))
            .and_then(|raw| crate::opening::opening_text(Some(raw)).ok());
        if let Some(text) = &words {
            opening.part(text_answers::user_words(text));
        }
        for block in m.content {
            if let (true, None, Some(t)) = (hash_text, &words, &block.text) {
                opening.part(t);
            }
            if let Some(u) = block.tool_use {
                names.insert(u.id.clone(), view.calls.len());
                let arguments = u
                    .input_value()
                    .map_or(Cow::Borrowed("{}"), |r| Cow::Borrowed(r.0));
                view.calls.push(CallView {
                    id: u.id,
                    name: u.name.unwrap_or_default(),
                    arguments,
                    message_index: i,
                });
            } else if let Some(r) = block.tool_result {
                let tool = names.get(&r.id).map(|&c| view.calls[c].name.clone());
                let status = r.status.as_deref().map(|s| s == "error");
                view.results.push(ResultView {
                    call_id: r.id,
                    tool,
                    message_index: i,
                    new: false,
                    raw: RawResult::Converse {
                        content: r.content.map(|c| c.0),
                        failed: status,
                        client_flags_successes: true,
                    },
                });
            }
        }
        first_user &= !hash_text;
    }
    let flags_successes = view.results.iter().any(|r| {
        matches!(
            r.raw,
            RawResult::Converse {
                failed: Some(false),
                ..
            }
        )
    });
    let last_assistant =
        crate::view::new_after(last_assistant, assistant_before_last, view.message_count);
    for r in &mut view.results {
        r.new = last_assistant.is_none_or(|a| r.message_index > a);
        if let RawResult::Converse {
            client_flags_successes,
            ..
        } = &mut r.raw
        {
            *client_flags_successes = flags_successes;
        }
    }
    view.first_turn_hash = Some(opening.finish());
    Ok((
        view,
        shapes.as_deref().zip(check).map(|(s, m)| defects(s, m)),
    ))
}

/// Each message's `content` as its raw JSON, read again from the body by
/// the SIMD scanner (a body it does not take, such as one with an escaped
/// key, gives `None`: its texts are not read as steps).
fn contents(text: &str) -> Option<Vec<&str>> {
    let mut s = Scanner::new(text);
    let mut out = Vec::new();
    s.object(|s, key| {
        if key != "messages" {
            return s.skip();
        }
        s.array(|s| {
            let mut content = "null";
            s.object(|s, key| {
                if key == "content" {
                    content = s.raw()?;
                    Ok(())
                } else {
                    s.skip()
                }
            })?;
            out.push(content);
            Ok(())
        })
    })
    .ok()?;
    Some(out)
}

/// One block of a result's `content`.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    json: Option<&'a RawValue>,
}

/// A `json` block's text: the string it wraps when it is an object of one
/// member, `result`, `output` or `content` (Agno's `{"result": "…"}`, its
/// tool's answer as the text it was), else the JSON as it is.
fn json_block_text(raw: &str) -> Cow<'_, str> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wrapped<'a> {
        #[serde(borrow, alias = "output", alias = "content")]
        result: Cow<'a, str>,
    }
    if !raw.starts_with('{') {
        return Cow::Borrowed(raw);
    }
    serde_json::from_str::<Wrapped<'_>>(raw).map_or(Cow::Borrowed(raw), |w| w.result)
}

/// Read a result (see [`ResultView::read`]): the module docs' rules.
pub(crate) fn read_result<'a>(
    content: Option<&'a str>,
    failed: Option<bool>,
    client_flags_successes: bool,
    judge: Judge<'_>,
) -> Result<(Cow<'a, str>, Verdict), WireError> {
    let parts: Vec<Part<'a>> = match content {
        Some(raw) if raw != "null" => serde_json::from_str(raw)?,
        _ => Vec::new(),
    };
    let mut text: Option<Cow<'a, str>> = None;
    for p in parts {
        if let Some(t) = p.text {
            push_part(&mut text, t);
        } else if let Some(j) = p.json {
            push_part(&mut text, json_block_text(j.get()));
        }
    }
    let text = text.unwrap_or_default();
    let verdict = match failed {
        Some(flag) => Verdict::explicit(flag),
        None => match mcp_is_error(&text) {
            Some(flag) => Verdict::explicit(flag),
            None if client_flags_successes => Verdict::NONE,
            None => judge(&text),
        },
    };
    Ok((text, verdict))
}
