//! The request view's fast path: the same [`Request`] serde derives,
//! built by the SIMD scanner ([`crate::scan`]).
//!
//! Field for field as the derived `Deserialize` impls read them — the same
//! keys, `null` where a field is an `Option`, a repeated field refused —
//! and a bail on anything else (a struct written as an array, an escaped
//! key); `view::read` then lets serde read the body. Property-tested
//! against serde in `tests/fast_agrees_with_serde.rs`.

use std::borrow::Cow;

use super::model::{CustomIn, FunctionIn, Message, Request, ToolCallIn};
use crate::{
    scan::{Bail, Fast, Scanner, Seen},
    splice::Raw,
};

/// The body as serde would read it, or [`Bail`].
pub(super) fn request(text: &str) -> Fast<Request<'_>> {
    let mut s = Scanner::new(text);
    let mut fields = Seen::default();
    let (mut model, mut stream, mut messages, mut n) = (None, None, None, None);
    s.object(|s, key| {
        match key {
            "model" => model = fields.once(0, s.opt_string())?,
            "stream" => stream = fields.once(1, s.opt_bool())?,
            "messages" => {
                let mut list = Vec::new();
                s.array(|s| {
                    list.push(message(s)?);
                    Ok(())
                })?;
                messages = fields.once(2, Ok(Some(list)))?;
            }
            "n" => n = fields.once(3, s.opt_raw())?.map(Raw),
            _ => s.skip()?,
        }
        Ok(())
    })?;
    s.end()?;
    Ok(Request {
        model,
        stream,
        messages: messages.ok_or(Bail)?,
        n,
    })
}

fn message<'a>(s: &mut Scanner<'a>) -> Fast<Message<'a>> {
    let mut fields = Seen::default();
    let mut role = None;
    let mut m = Message {
        role: Cow::Borrowed(""),
        content: None,
        tool_calls: None,
        tool_call_id: None,
        name: None,
        function_call: None,
    };
    s.object(|s, key| {
        match key {
            "role" => role = Some(fields.once(0, s.string())?),
            "content" => m.content = fields.once(1, s.opt_raw())?.map(Raw),
            "tool_calls" => {
                fields.once(2, Ok(()))?;
                if !s.null()? {
                    let mut calls = Vec::new();
                    s.array(|s| {
                        calls.push(tool_call(s)?);
                        Ok(())
                    })?;
                    m.tool_calls = Some(calls);
                }
            }
            "tool_call_id" => m.tool_call_id = fields.once(3, s.opt_string())?,
            "name" => m.name = fields.once(4, s.opt_string())?,
            "function_call" => {
                fields.once(5, Ok(()))?;
                m.function_call = function(s)?;
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    m.role = role.ok_or(Bail)?;
    Ok(m)
}

fn tool_call<'a>(s: &mut Scanner<'a>) -> Fast<ToolCallIn<'a>> {
    let mut fields = Seen::default();
    let mut call = ToolCallIn {
        id: None,
        function: None,
        custom: None,
    };
    s.object(|s, key| {
        match key {
            "id" => call.id = fields.once(0, s.opt_string())?,
            "function" => {
                fields.once(1, Ok(()))?;
                call.function = function(s)?;
            }
            "custom" => {
                fields.once(2, Ok(()))?;
                call.custom = custom(s)?;
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(call)
}

/// `null` or `{name, arguments}`.
fn function<'a>(s: &mut Scanner<'a>) -> Fast<Option<FunctionIn<'a>>> {
    let Some((name, arguments)) = name_and(s, "arguments")? else {
        return Ok(None);
    };
    Ok(Some(FunctionIn { name, arguments }))
}

/// `null` or `{name, input}`.
fn custom<'a>(s: &mut Scanner<'a>) -> Fast<Option<CustomIn<'a>>> {
    let Some((name, input)) = name_and(s, "input")? else {
        return Ok(None);
    };
    Ok(Some(CustomIn { name, input }))
}

type Opt<'a> = Option<Cow<'a, str>>;

/// `null` (`None`), or an object of two optional strings: `name` and `other`.
fn name_and<'a>(s: &mut Scanner<'a>, other: &str) -> Fast<Option<(Opt<'a>, Opt<'a>)>> {
    if s.null()? {
        return Ok(None);
    }
    let mut fields = Seen::default();
    let (mut name, mut second) = (None, None);
    s.object(|s, key| {
        if key == "name" {
            name = fields.once(0, s.opt_string())?;
        } else if key == other {
            second = fields.once(1, s.opt_string())?;
        } else {
            s.skip()?;
        }
        Ok(())
    })?;
    Ok(Some((name, second)))
}
