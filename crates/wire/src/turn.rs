//! Fingerprints of a model turn's tool calls, so that a tool result can
//! find the call it answers when the client rewrote the call's id.
//!
//! Some clients do not keep the ids a response gave its calls: the Gemini
//! CLI and the AI SDK's Google provider invent ids for Gemini's id-less
//! `functionCall`s and write them into the replayed model turn and into the
//! `functionResponse`s of their next request. The replayed turn still holds
//! the same calls — the same names with the same arguments, in the same
//! order — so the response's calls and the replayed turn's calls have the
//! same [`fingerprint`], and a result answers the call at its call's
//! position in that turn ([`ReplayedTurn::position_of_id`]).
//!
//! Arguments are compared canonically: JSON object keys in sorted order,
//! whitespace and string escapes ignored, integral numbers as integers
//! (`1.0` = `1`, as a JavaScript client re-serialises them), missing or
//! `null` arguments as `{}`; text that is not JSON is compared as it is
//! (trimmed).

use ahash::{AHashMap, AHashSet};
use serde_json::Value;

use crate::{CallView, RequestView, text::Fnv64};

/// A request's replayed model turn: the calls the request's new results answer.
///
/// Positions are looked up in maps built once, not searched: the gateway
/// asks once per new result, and a client controls how many calls and
/// results a request holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayedTurn<'v> {
    /// The [`fingerprint`] of the turn's calls.
    pub fingerprint: u64,
    /// (id, name) of each call of the turn, in order.
    calls: Vec<(&'v str, &'v str)>,
    /// The position of the first call of each id.
    by_id: AHashMap<&'v str, usize>,
    /// The positions of the calls of each name, in order.
    by_name: AHashMap<&'v str, Vec<usize>>,
}

/// The fingerprint of one model turn's calls: `(name, arguments JSON text)`
/// in order. Stable across runs, platforms and versions.
pub fn fingerprint<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str)>) -> u64 {
    let mut hash = Fnv64::default();
    for (name, arguments) in calls {
        hash.field(name.as_bytes());
        hash_arguments(&mut hash, arguments);
        hash.write(&[0xfe]);
    }
    hash.finish()
}

/// The model turn the request's new results answer, as replayed in its
/// history: the calls that come before the first new result, back to the
/// start of the message (or, in the Responses API, of the run of adjacent
/// call items) holding the last of them, and the calls after it in its run
/// of adjacent call and result items (a Responses history written `call,
/// output, call, output`). `None` without new results or without calls
/// before them.
pub fn replayed_turn<'v>(view: &'v RequestView<'_>) -> Option<ReplayedTurn<'v>> {
    let first_new = view
        .results
        .iter()
        .filter(|r| r.new)
        .map(|r| r.message_index)
        .min()?;
    let before: Vec<_> = view
        .calls
        .iter()
        .filter(|c| c.message_index < first_new)
        .collect();
    let mut start = before.len();
    let mut at = before.last()?.message_index;
    while start > 0 {
        let index = before[start - 1].message_index;
        if index != at && index + 1 != at {
            break;
        }
        at = index;
        start -= 1;
    }
    // A client may write each output right after its call (Responses:
    // `call, output, call, output`): the calls after the first new result,
    // in its run of adjacent call and result items, are the turn's too.
    let results_after: AHashSet<usize> = view
        .results
        .iter()
        .map(|r| r.message_index)
        .filter(|&i| i > first_new)
        .collect();
    let mut after = Vec::new();
    let mut at = first_new;
    for c in view.calls.iter().filter(|c| c.message_index > first_new) {
        while c.message_index > at + 1 && results_after.contains(&(at + 1)) {
            at += 1;
        }
        if c.message_index > at + 1 {
            break;
        }
        after.push(c);
        at = c.message_index;
    }
    let turn: Vec<&CallView<'_>> = before[start..].iter().copied().chain(after).collect();
    let mut by_id = AHashMap::new();
    let mut by_name: AHashMap<&str, Vec<usize>> = AHashMap::new();
    for (at, c) in turn.iter().enumerate() {
        by_id.entry(&*c.id).or_insert(at);
        by_name.entry(&*c.name).or_default().push(at);
    }
    Some(ReplayedTurn {
        fingerprint: fingerprint(turn.iter().map(|c| (&*c.name, &*c.arguments))),
        calls: turn.iter().map(|c| (&*c.id, &*c.name)).collect(),
        by_id,
        by_name,
    })
}

// === impl ReplayedTurn ===

impl ReplayedTurn<'_> {
    /// The position in the turn of the call with id `call_id`.
    pub fn position_of_id(&self, call_id: &str) -> Option<u32> {
        let at = *self.by_id.get(call_id)?;
        u32::try_from(at).ok()
    }

    /// The position of the `nth` call named `tool` (for a result that
    /// names its tool but whose id the turn does not hold: its `nth`
    /// result of that name).
    pub fn position_of_name(&self, tool: &str, nth: usize) -> Option<u32> {
        let at = *self.by_name.get(tool)?.get(nth)?;
        u32::try_from(at).ok()
    }

    /// How many calls the turn holds.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// The turn holds no call (never, as [`replayed_turn`] returns it).
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
}

fn hash_arguments(hash: &mut Fnv64, arguments: &str) {
    let text = arguments.trim();
    if text.is_empty() || text == "null" {
        return hash.write(b"o}");
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Null) => hash.write(b"o}"),
        Ok(value) => hash_value(hash, &value),
        Err(_) => {
            hash.write(b"r");
            hash.field(text.as_bytes());
        }
    }
}

fn hash_value(hash: &mut Fnv64, value: &Value) {
    match value {
        Value::Null => hash.write(b"n"),
        Value::Bool(b) => hash.write(if *b { b"t" } else { b"f" }),
        Value::Number(n) => {
            hash.write(b"#");
            match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => hash.field(i.to_string().as_bytes()),
                (None, Some(u), _) => hash.field(u.to_string().as_bytes()),
                (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    hash.field(format!("{f:.0}").as_bytes())
                }
                _ => hash.field(n.to_string().as_bytes()),
            }
        }
        Value::String(s) => {
            hash.write(b"s");
            hash.field(s.as_bytes());
        }
        Value::Array(items) => {
            hash.write(b"[");
            for item in items {
                hash_value(hash, item);
            }
            hash.write(b"]");
        }
        Value::Object(map) => {
            hash.write(b"o");
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            for key in keys {
                hash.field(key.as_bytes());
                hash_value(hash, &map[key.as_str()]);
            }
            hash.write(b"}");
        }
    }
}

#[cfg(test)]
mod tests;
