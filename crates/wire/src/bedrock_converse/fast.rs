//! The request view's fast path: the [`Request`] serde derives, read by
//! the SIMD scanner ([`crate::scan`]) instead.
//!
//! It mirrors the derives of `model` field for field — the same keys, the
//! same types (`null` where serde takes an `Option`), duplicates refused
//! where serde refuses them — and bails on anything else; `view::read`
//! then reads the body with serde. Property-tested against it in
//! `tests/fast_agrees_with_serde.rs`.

use super::model::{Block, Message, Request, SystemBlock, ToolResult, ToolUse};
use crate::{
    scan::{Bail, Fast, Scanner, Seen},
    splice::Raw,
};

/// The request in `text` (UTF-8).
pub(super) fn request(text: &str) -> Fast<Request<'_>> {
    let mut s = Scanner::new(text);
    let mut fields = Seen::default();
    let mut messages = None;
    let mut system = None;
    s.object(|s, key| {
        match key {
            "messages" => messages = Some(fields.once(0, list(s, message))?),
            "system" => {
                system = fields.once(
                    1,
                    if s.null()? {
                        Ok(None)
                    } else {
                        list(s, system_block).map(Some)
                    },
                )?
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    s.end()?;
    Ok(Request {
        messages: messages.ok_or(Bail)?,
        system,
    })
}

/// An array, each element read by `element`.
fn list<'a, T>(
    s: &mut Scanner<'a>,
    mut element: impl FnMut(&mut Scanner<'a>) -> Fast<T>,
) -> Fast<Vec<T>> {
    let mut out = Vec::new();
    s.array(|s| {
        out.push(element(s)?);
        Ok(())
    })?;
    Ok(out)
}

fn message<'a>(s: &mut Scanner<'a>) -> Fast<Message<'a>> {
    let mut fields = Seen::default();
    let mut role = None;
    let mut content = None;
    s.object(|s, key| {
        match key {
            "role" => role = Some(fields.once(0, s.string())?),
            "content" => content = Some(fields.once(1, list(s, block))?),
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Message {
        role: role.ok_or(Bail)?,
        content: content.ok_or(Bail)?,
    })
}

fn block<'a>(s: &mut Scanner<'a>) -> Fast<Block<'a>> {
    let mut fields = Seen::default();
    let mut b = Block {
        text: None,
        tool_use: None,
        tool_result: None,
    };
    s.object(|s, key| {
        match key {
            "text" => b.text = fields.once(0, s.opt_string())?,
            "toolUse" => {
                b.tool_use = fields.once(
                    1,
                    if s.null()? {
                        Ok(None)
                    } else {
                        tool_use(s).map(Some)
                    },
                )?
            }
            "toolResult" => {
                b.tool_result = fields.once(
                    2,
                    if s.null()? {
                        Ok(None)
                    } else {
                        tool_result(s).map(Some)
                    },
                )?
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(b)
}

fn tool_use<'a>(s: &mut Scanner<'a>) -> Fast<ToolUse<'a>> {
    let mut fields = Seen::default();
    let (mut id, mut name, mut input, mut kind) = (None, None, None, None);
    s.object(|s, key| {
        match key {
            "toolUseId" => id = Some(fields.once(0, s.string())?),
            "name" => name = fields.once(1, s.opt_string())?,
            // `null` too: serde's `present` keeps it.
            "input" => input = Some(Raw(fields.once(2, s.raw())?)),
            "type" => kind = fields.once(3, s.opt_string())?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(ToolUse {
        id: id.ok_or(Bail)?,
        name,
        input,
        kind,
    })
}

fn tool_result<'a>(s: &mut Scanner<'a>) -> Fast<ToolResult<'a>> {
    let mut fields = Seen::default();
    let (mut id, mut content, mut status) = (None, None, None);
    s.object(|s, key| {
        match key {
            "toolUseId" => id = Some(fields.once(0, s.string())?),
            "content" => content = fields.once(1, s.opt_raw())?.map(Raw),
            "status" => status = fields.once(2, s.opt_string())?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(ToolResult {
        id: id.ok_or(Bail)?,
        content,
        status,
    })
}

fn system_block<'a>(s: &mut Scanner<'a>) -> Fast<SystemBlock<'a>> {
    let mut fields = Seen::default();
    let mut text = None;
    s.object(|s, key| {
        match key {
            "text" => text = fields.once(0, s.opt_string())?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(SystemBlock { text })
}
