//! The text of a conversation's opening message, as its first-turn
//! fingerprint reads it: a harness's `<system-reminder>` parts left out.
//!
//! Agent harnesses add context to the user's first message as parts of
//! their own, each wrapped in `<system-reminder>…</system-reminder>`
//! (Claude Code, Qwen Code). Such a part can differ between two requests
//! of one conversation: Qwen Code states the date in one, and drops it
//! when it resumes a session (`qwen -c`), so the resumed conversation's
//! first message was not the one it began with. When a message holds both
//! reminders and other text, only the other text is its opening; a message
//! without reminders, or of reminders alone, reads as it always did, so
//! the fingerprints of existing conversations do not change.
//!
//! A part is a reminder when its text, trimmed, opens with
//! `<system-reminder>` and closes with `</system-reminder>`, as sent (a
//! client that escapes `<` as `\u003c` in its JSON is read whole).

use std::borrow::Cow;

use serde::Deserialize;

use crate::{WireError, content::FlatContent, text::Fnv64};

const OPEN: &str = "<system-reminder>";
const CLOSE: &str = "</system-reminder>";

/// Whether a text part is a harness's reminder (see the module docs).
fn is_reminder(text: &str) -> bool {
    let t = text.trim();
    t.len() >= OPEN.len() + CLOSE.len() && t.starts_with(OPEN) && t.ends_with(CLOSE)
}

/// The opening text of a content's raw JSON (`None`: absent or `null`):
/// its text parts joined with newlines as [`FlatContent`] joins them,
/// without the reminders when it has other text too.
pub(crate) fn opening_text(raw: Option<&str>) -> Result<Cow<'_, str>, WireError> {
    Ok(match without_reminders(raw)? {
        Some(kept) => Cow::Owned(kept),
        None => FlatContent::parse(raw)?.text,
    })
}

/// A part of an array content, as far as reminders go: its text.
#[derive(Deserialize)]
struct TextPart<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// The parts of an array content that names a reminder somewhere; `None`
/// for every other content (most: one SIMD search).
fn parts_naming_reminders(
    raw: Option<&str>,
) -> Option<Result<Vec<TextPart<'_>>, serde_json::Error>> {
    let raw = raw.filter(|r| {
        r.starts_with('[') && memchr::memmem::find(r.as_bytes(), OPEN.as_bytes()).is_some()
    })?;
    Some(serde_json::from_str(raw))
}

/// The text parts of an array content that are not reminders, joined with
/// newlines, when it holds both reminders and other text; else `None`.
pub(crate) fn without_reminders(raw: Option<&str>) -> Result<Option<String>, WireError> {
    let Some(parts) = parts_naming_reminders(raw) else {
        return Ok(None);
    };
    let parts = parts?;
    let texts = || parts.iter().filter_map(|p| p.text.as_deref());
    if !texts().any(is_reminder) || texts().all(is_reminder) {
        return Ok(None);
    }
    let kept: Vec<&str> = texts().filter(|t| !is_reminder(t)).collect();
    Ok(Some(kept.join("\n")))
}

/// Whether an array content's parts are all reminders (at least one, and
/// no part without text): a harness's context in a message of its own,
/// such as AgentScope's current time on Gemini.
pub(crate) fn is_reminders_only(raw: Option<&str>) -> bool {
    matches!(parts_naming_reminders(raw), Some(Ok(parts))
        if !parts.is_empty() && parts.iter().all(|p| p.text.as_deref().is_some_and(is_reminder)))
}

/// A hash of an opening message fed one text part at a time (Anthropic's
/// content blocks): the parts that are not reminders, or, when every part
/// is one, all of them. Each part is hashed once.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct OpeningHash {
    /// The parts that are not reminders, in order.
    prompt: Fnv64,
    /// The reminders, in order.
    reminders: Fnv64,
    /// Whether any part is not a reminder.
    has_prompt: bool,
}

impl OpeningHash {
    /// One that goes on from `hash` (what was hashed before the message).
    pub(crate) fn after(hash: Fnv64) -> OpeningHash {
        OpeningHash {
            prompt: hash,
            reminders: hash,
            has_prompt: false,
        }
    }

    /// Feed a part's text (as [`Fnv64::field`]).
    pub(crate) fn part(&mut self, text: &str) {
        if is_reminder(text) {
            self.reminders.field(text.as_bytes());
        } else {
            self.has_prompt = true;
            self.prompt.field(text.as_bytes());
        }
    }

    /// The hash: that of every part fed in order when none is a reminder
    /// or all are; else that of the parts that are not.
    pub(crate) fn finish(self) -> u64 {
        if self.has_prompt {
            self.prompt.finish()
        } else {
            self.reminders.finish()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(parts: &[&str]) -> u64 {
        let mut h = Fnv64::default();
        parts.iter().for_each(|p| h.field(p.as_bytes()));
        h.finish()
    }

    fn hashed(parts: &[&str]) -> u64 {
        let mut h = OpeningHash::default();
        parts.iter().for_each(|p| h.part(p));
        h.finish()
    }

    const DATE: &str =
        "<system-reminder>\nThe current date is: Sunday, December 6, 2026.\n</system-reminder>";
    const DIR: &str = "<system-reminder>\nThe working directory is /w\n</system-reminder>";

    #[test]
    fn reminders_are_left_out_only_beside_other_text() {
        assert!(is_reminder(DATE) && is_reminder(&format!("  {DIR}\n")));
        assert!(!is_reminder("<system-reminder> opened, never closed"));
        assert!(!is_reminder("Run it. <system-reminder>x</system-reminder>"));
        // Without reminders, or of reminders alone: every part, as before.
        assert_eq!(
            hashed(&["Run it.", "and this"]),
            fields(&["Run it.", "and this"])
        );
        assert_eq!(hashed(&[DATE, DIR]), fields(&[DATE, DIR]));
        assert_eq!(hashed(&[]), fields(&[]));
        // Beside other text: the other text alone.
        assert_eq!(hashed(&[DIR, DATE, "Run it."]), fields(&["Run it."]));
        assert_eq!(hashed(&[DIR, DATE, "Run it."]), hashed(&[DIR, "Run it."]));
        assert_ne!(hashed(&[DIR, "Run it."]), hashed(&[DIR, "Run that."]));
    }

    #[test]
    fn opening_text_joins_the_parts_as_flat_content_does() {
        let raw = |parts: &[&str]| {
            serde_json::to_string(
                &parts
                    .iter()
                    .map(|t| serde_json::json!({"type": "text", "text": t}))
                    .collect::<Vec<_>>(),
            )
            .unwrap()
        };
        let text = |r: &str| opening_text(Some(r)).unwrap().into_owned();
        assert_eq!(text(&raw(&["a", "b"])), "a\nb");
        assert_eq!(text(&raw(&[DIR, DATE, "a", "b"])), "a\nb");
        assert_eq!(text(&raw(&[DIR, DATE])), format!("{DIR}\n{DATE}"));
        assert_eq!(text("\"a string\""), "a string");
        assert_eq!(opening_text(None).unwrap(), "");
        assert!(opening_text(Some("[{\"text\": 1}, \"<system-reminder>\"]")).is_err());
    }

    /// Every dialect: a conversation resumed without one of its first
    /// message's reminders (Qwen Code's `-c` drops the date) keeps its
    /// fingerprint; a different prompt, or different reminders alone, do not.
    #[test]
    fn each_dialect_keeps_a_resumed_conversations_fingerprint() {
        use serde_json::{Value, json};

        use crate::Dialect;

        let text_parts = |parts: &[&str], key: &str| -> Value {
            parts
                .iter()
                .map(|t| json!({"type": "text", key: t}))
                .collect()
        };
        let body = |dialect: Dialect, parts: &[&str]| -> Vec<u8> {
            let v = match dialect {
                Dialect::OpenAiChat => json!({"model": "m", "messages": [
                    {"role": "system", "content": "You are an agent."},
                    {"role": "user", "content": text_parts(parts, "text")},
                    {"role": "assistant", "content": "ok"}]}),
                Dialect::OpenAiResponses => {
                    json!({"model": "m", "instructions": "You are an agent.", "input": [
                    {"type": "message", "role": "user", "content": parts.iter()
                        .map(|t| json!({"type": "input_text", "text": t})).collect::<Value>()}]})
                }
                Dialect::Anthropic => {
                    json!({"model": "m", "max_tokens": 8, "system": "You are an agent.",
                    "messages": [{"role": "user", "content": text_parts(parts, "text")}]})
                }
                Dialect::Gemini => {
                    json!({"systemInstruction": {"parts": [{"text": "You are an agent."}]},
                    "contents": [{"role": "user", "parts": parts.iter()
                        .map(|t| json!({"text": t})).collect::<Value>()}]})
                }
                Dialect::BedrockConverse => json!({"system": [{"text": "You are an agent."}],
                    "messages": [{"role": "user", "content": parts.iter()
                        .map(|t| json!({"text": t})).collect::<Value>()}]}),
            };
            serde_json::to_vec(&v).unwrap()
        };
        for dialect in Dialect::ALL {
            let hash = |parts: &[&str]| {
                let b = body(dialect, parts);
                crate::request_view(dialect, &b)
                    .unwrap_or_else(|e| panic!("{dialect}: {e}"))
                    .first_turn_hash
                    .unwrap()
            };
            assert_eq!(
                hash(&[DIR, DATE, "Run it."]),
                hash(&[DIR, "Run it."]),
                "{dialect}"
            );
            // Gemini hashes a first content without reminders as its raw
            // text, not by its text parts.
            if dialect != Dialect::Gemini {
                assert_eq!(
                    hash(&[DIR, DATE, "Run it."]),
                    hash(&["Run it."]),
                    "{dialect}"
                );
            }
            assert_ne!(
                hash(&[DIR, "Run it."]),
                hash(&[DIR, "Run that."]),
                "{dialect}"
            );
            assert_ne!(
                hash(&[DIR, DATE]),
                hash(&[DIR]),
                "{dialect}: reminders alone count"
            );
            assert_ne!(hash(&["Run it.", "more"]), hash(&["Run it."]), "{dialect}");
        }
    }
}
