//! One block of a Converse body rewritten, every other byte kept: a
//! `toolUseId` renamed, a blank text or an empty error result given a
//! text, a value Bedrock takes only as an object made one (see
//! [`super::repair()`]).

use ahash::AHashSet;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{is_null, is_object};
use crate::{
    pairing::EMPTY_ERROR_TEXT,
    prefill::Text,
    splice::{
        json_string, replace,
        span::{Piece, array_span},
        span_in,
    },
};

/// A block's `toolUseId`, raw (for renaming in place).
#[derive(Deserialize)]
struct IdOf<'a> {
    #[serde(borrow, default, rename = "toolUse")]
    tool_use: Option<RawId<'a>>,
    #[serde(borrow, default, rename = "toolResult")]
    tool_result: Option<RawId<'a>>,
}

#[derive(Deserialize)]
struct RawId<'a> {
    #[serde(borrow, rename = "toolUseId")]
    id: &'a RawValue,
}

/// What a blank text block that is all its message holds is given (the
/// placeholder AWS's own LangChain integration sends for an empty message,
/// langchain-ai/langchain-aws#593).
pub(super) const BLANK_TEXT: &str = "[empty]";

/// The blank text block `raw` (block `j`) with [`BLANK_TEXT`] for its text,
/// every other byte kept.
pub(super) fn filled_blank(raw: &str, j: usize) -> Piece {
    #[derive(Deserialize)]
    struct TextOf<'a> {
        #[serde(borrow)]
        text: &'a RawValue,
    }
    let span = serde_json::from_str::<TextOf<'_>>(raw)
        .ok()
        .and_then(|t| span_in(raw, t.text.get()));
    match span {
        Some(span) => Piece::Edited(j, replace(raw, span, &json_string(BLANK_TEXT))),
        None => Piece::New(format!("{{\"text\":{}}}", json_string(BLANK_TEXT))),
    }
}

/// The text block `raw` (block `j`, a prefill's last) with its text as `t`
/// keeps it, every other byte kept.
pub(super) fn trimmed_text(raw: &str, j: usize, t: &Text<'_>) -> Piece {
    match span_in(raw, t.raw) {
        Some(span) => Piece::Edited(j, replace(raw, span, &json_string(&t.kept))),
        // Not reached: the text was read from the block.
        None => Piece::New(format!("{{\"text\":{}}}", json_string(&t.kept))),
    }
}

/// The `toolResult` block `raw` with its `content` (`[]`, see
/// [`ToolResult::is_empty_error`](super::model::ToolResult::is_empty_error))
/// holding one text saying so, every other byte kept.
pub(super) fn filled_error(raw: &str) -> String {
    #[derive(Deserialize)]
    struct ResultOf<'a> {
        #[serde(borrow, rename = "toolResult")]
        result: ContentOf<'a>,
    }
    #[derive(Deserialize)]
    struct ContentOf<'a> {
        #[serde(borrow)]
        content: &'a RawValue,
    }
    let span = serde_json::from_str::<ResultOf<'_>>(raw)
        .ok()
        .and_then(|r| span_in(raw, r.result.content.get()));
    let filled = format!("[{{\"text\":{}}}]", json_string(EMPTY_ERROR_TEXT));
    match span {
        Some(span) => replace(raw, span, &filled),
        // Not reached: the block was read with its content.
        None => raw.to_string(),
    }
}

/// The block `raw` with each of its values in `parts` (see
/// [`Shape::not_objects`](super::model::Shape::not_objects)) made an object, every other byte kept: a
/// `toolUse`'s `input` ([`object_of`]), or a `toolResult`'s `json` blocks,
/// each made a text block ([`json_as_text`]). `None` when `raw` does not
/// hold them (not reached: they were read from it).
pub(super) fn made_objects(raw: &str, parts: &[(usize, Option<usize>)]) -> Option<String> {
    #[derive(Deserialize)]
    struct Of<'a> {
        #[serde(borrow, default, rename = "toolUse")]
        tool_use: Option<InputOf<'a>>,
        #[serde(borrow, default, rename = "toolResult")]
        tool_result: Option<ContentOf<'a>>,
    }
    #[derive(Deserialize)]
    struct InputOf<'a> {
        #[serde(borrow)]
        input: &'a RawValue,
    }
    #[derive(Deserialize)]
    struct ContentOf<'a> {
        #[serde(borrow)]
        content: &'a RawValue,
    }
    let of: Of<'_> = serde_json::from_str(raw).ok()?;
    if let Some(u) = of.tool_use {
        return Some(replace(
            raw,
            span_in(raw, u.input.get())?,
            &object_of(u.input),
        ));
    }
    let content = of.tool_result?.content;
    let span = array_span(raw, content).ok()?;
    let bad: AHashSet<usize> = parts.iter().filter_map(|p| p.1).collect();
    let pieces: Vec<Piece> = (0..span.raws.len())
        .map(|k| {
            let text = bad.contains(&k).then(|| json_as_text(span.raws[k].get()));
            text.flatten().map_or(Piece::Orig(k), Piece::New)
        })
        .collect();
    Some(replace(raw, span.range.clone(), &span.render(raw, &pieces)))
}

/// A call's `input` that is not an object, made one: the object a string
/// holds (arguments sent as their JSON text), else
/// `{"rawInvalidInput": input}` (as the AI SDK's Bedrock provider keeps a
/// call whose arguments were broken JSON, vercel/ai#14470); `null` is `{}`,
/// what Bedrock gives a call without arguments (aaif-goose/goose#8121).
pub(super) fn object_of(input: &RawValue) -> String {
    if is_null(input.get()) {
        return "{}".to_string();
    }
    let held = serde_json::from_str::<String>(input.get())
        .ok()
        .and_then(|s| serde_json::from_str::<Box<RawValue>>(&s).ok())
        .filter(|v| is_object(v.get()));
    match held {
        Some(object) => object.get().to_string(),
        None => format!("{{\"rawInvalidInput\":{}}}", input.get()),
    }
}

/// A result's `json` block (`part`, raw) whose value is not an object, as
/// a text block: a string's own text, any other value's JSON text. `None`
/// when `part` holds no `json`.
pub(super) fn json_as_text(part: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct JsonOf<'a> {
        #[serde(borrow)]
        json: &'a RawValue,
    }
    let v = serde_json::from_str::<JsonOf<'_>>(part).ok()?.json;
    let text = serde_json::from_str::<String>(v.get()).unwrap_or_else(|_| v.get().to_string());
    Some(format!("{{\"text\":{}}}", json_string(&text)))
}

/// The block `raw` (a `toolUse` or a `toolResult`) with its `toolUseId`
/// replaced by `new`, every other byte kept.
pub(super) fn renamed_block(raw: &str, new: &str) -> Option<String> {
    let of: IdOf<'_> = serde_json::from_str(raw).ok()?;
    let id = of.tool_use.or(of.tool_result)?.id;
    let span = span_in(raw, id.get())?;
    Some(replace(raw, span, &json_string(new)))
}
