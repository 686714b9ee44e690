//! The fast path of [`Parsed::new`](super::view::Parsed::new): the same
//! [`Body`] serde builds, read by the SIMD scanner ([`crate::scan`]).
//!
//! Field for field as the `Deserialize` impls of `model` read them — the
//! same keys, `null` where a field is an `Option`, a repeated field
//! refused, `input` as a string or items (the first item's raw text kept),
//! `arguments`/`input` of an item as a string or text parts — and a bail on
//! anything else; serde then reads the body. Property-tested against serde
//! in `proptests.rs`.

use std::borrow::Cow;

use super::model::{Args, Body, Input, Item};
use crate::{
    scan::{Bail, Fast, Scanner, Seen},
    splice::Raw,
    text::push_part,
};

/// The body as serde would read it, or [`Bail`].
pub(super) fn body(text: &str) -> Fast<Body<'_>> {
    let mut s = Scanner::new(text);
    let mut seen = Seen::default();
    let mut body = Body {
        model: None,
        stream: None,
        input: None,
        previous_response_id: None,
        instructions: None,
        conversation: None,
    };
    s.object(|s, key| {
        match key {
            "model" => body.model = seen.once(0, s.opt_string())?,
            "stream" => body.stream = seen.once(1, s.opt_bool())?,
            "input" => body.input = seen.once(2, input(s))?,
            "previous_response_id" => body.previous_response_id = seen.once(3, s.opt_string())?,
            "instructions" => body.instructions = seen.once(4, s.opt_raw())?.map(Raw),
            // A string or `null`; an object (`{"id": …}`) is serde's.
            "conversation" => body.conversation = seen.once(5, s.opt_string())?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    s.end()?;
    Ok(body)
}

/// `input`: `null`, a string, or an array of items.
fn input<'a>(s: &mut Scanner<'a>) -> Fast<Option<Input<'a>>> {
    match s.peek()? {
        b'n' => s.null().map(|_| None),
        b'"' => s.string().map(|t| Some(Input::Text(t))),
        b'[' => {
            let mut items = Vec::new();
            let mut head = Vec::new();
            let mut in_head = true;
            s.array(|s| {
                if in_head {
                    // The first-turn hash reads the head's items from their
                    // raw text.
                    let raw = s.raw()?;
                    let mut own = Scanner::new(raw);
                    let it = item(&mut own)?;
                    own.end()?;
                    head.push(Raw(raw));
                    in_head = it.opens_head();
                    items.push(it);
                } else {
                    items.push(item(s)?);
                }
                Ok(())
            })?;
            Ok(Some(Input::Items { items, head }))
        }
        _ => Err(Bail),
    }
}

fn item<'a>(s: &mut Scanner<'a>) -> Fast<Item<'a>> {
    let mut seen = Seen::default();
    let mut it = Item::default();
    s.object(|s, key| {
        match key {
            "type" => it.kind = seen.once(0, s.opt_string())?,
            "role" => it.role = seen.once(1, s.opt_string())?,
            "id" => it.id = seen.once(2, s.opt_string())?,
            "call_id" => it.call_id = seen.once(3, s.opt_string())?,
            "name" => it.name = seen.once(4, s.opt_string())?,
            "arguments" => it.arguments = seen.once(5, text(s))?,
            "input" => it.input = seen.once(6, text(s))?,
            "output" => it.output = seen.once(7, s.opt_raw())?.map(Raw),
            "status" => it.status = seen.once(8, s.opt_string())?,
            "action" => it.action = seen.once(9, s.opt_raw())?.map(Raw),
            "operation" => it.operation = seen.once(10, s.opt_raw())?.map(Raw),
            "execution" => it.execution = seen.once(11, s.opt_string())?,
            "actions" => it.actions = seen.once(12, s.opt_raw())?.map(Raw),
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(it)
}

/// `null`, a string, or an array of content parts whose texts are joined
/// by newlines; any other value as its compact JSON text, as serde gives it
/// (see [`Args`]).
fn text<'a>(s: &mut Scanner<'a>) -> Fast<Option<Args<'a>>> {
    match s.peek()? {
        b'n' => s.null().map(|_| None),
        b'"' => s.string().map(|t| Some(Args(t))),
        b'[' => {
            let mut out: Option<Cow<'a, str>> = None;
            s.array(|s| {
                let mut seen = Seen::default();
                let mut part = None;
                s.object(|s, key| {
                    if key == "text" {
                        part = seen.once(0, s.opt_string())?;
                        Ok(())
                    } else {
                        s.skip()
                    }
                })?;
                if let Some(t) = part {
                    push_part(&mut out, t);
                }
                Ok(())
            })?;
            Ok(Some(Args(out.unwrap_or(Cow::Borrowed("")))))
        }
        _ => {
            let v: serde_json::Value = serde_json::from_str(s.raw()?).map_err(|_| Bail)?;
            Ok(Some(Args(Cow::Owned(v.to_string()))))
        }
    }
}
