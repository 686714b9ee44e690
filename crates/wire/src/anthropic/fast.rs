//! The request view's fast path: the same [`Builder`] fed by the SIMD
//! scanner ([`crate::scan`]) instead of serde seeds.
//!
//! It mirrors the seeds of `view` field for field — the same keys, the
//! same types (`null` where serde takes an `Option`), duplicates refused
//! where serde refuses them — and bails on anything else; `view::read`
//! then reads the body with the seeds. Property-tested against them in
//! `tests/fast_agrees_with_serde.rs`.

use std::borrow::Cow;

use super::{
    model::{Block, Raw, Thread},
    view::Builder,
};
use crate::{
    opening::OpeningHash,
    scan::{Bail, Fast, Scanner},
};

/// Read `text` (UTF-8) into `b`; [`Bail`] leaves `b` half-built, to be
/// dropped.
pub(super) fn read<'a>(text: &'a str, b: &mut Builder<'a>) -> Fast<()> {
    let mut s = Scanner::new(text);
    s.object(|s, key| {
        match key {
            "model" => b.view.model = s.opt_string()?,
            "stream" => b.view.stream = s.opt_bool()?.unwrap_or(false),
            "system" => b.system = s.opt_raw()?,
            "metadata" => b.view.metadata_user_id = metadata(s)?,
            "thread" => {
                // Twice: serde's derived outline refuses it, so the seeds do.
                if b.has_thread {
                    return Err(Bail);
                }
                b.thread(thread(s)?);
            }
            "messages" => {
                if b.has_messages {
                    return Err(Bail);
                }
                messages(s, b)?;
                b.has_messages = true;
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    s.end()
}

/// `metadata`: `null`, or an object whose `user_id` is kept.
fn metadata<'a>(s: &mut Scanner<'a>) -> Fast<Option<Cow<'a, str>>> {
    if s.null()? {
        return Ok(None);
    }
    let mut user_id = None;
    let mut seen = false;
    s.object(|s, key| {
        if key == "user_id" {
            if seen {
                return Err(Bail);
            }
            seen = true;
            user_id = s.opt_string()?;
            Ok(())
        } else {
            s.skip()
        }
    })?;
    Ok(user_id)
}

/// `thread`: `null`, or an object whose `type` and `previous_message_id`
/// are kept (each once, as serde's derived struct takes them).
fn thread<'a>(s: &mut Scanner<'a>) -> Fast<Option<Thread<'a>>> {
    if s.null()? {
        return Ok(None);
    }
    let mut t = Thread {
        kind: None,
        previous_message_id: None,
    };
    let (mut kind, mut previous) = (false, false);
    s.object(|s, key| {
        let seen = match key {
            "type" => &mut kind,
            "previous_message_id" => &mut previous,
            _ => return s.skip(),
        };
        if std::mem::replace(seen, true) {
            return Err(Bail);
        }
        let value = s.opt_string()?;
        if key == "type" {
            t.kind = value;
        } else {
            t.previous_message_id = value;
        }
        Ok(())
    })?;
    Ok(Some(t))
}

fn messages<'a>(s: &mut Scanner<'a>, b: &mut Builder<'a>) -> Fast<()> {
    let mut i = 0;
    s.array(|s| {
        message(s, b, i)?;
        i += 1;
        Ok(())
    })?;
    b.view.message_count = i;
    Ok(())
}

/// One message: `role` and `content` in either order.
fn message<'a>(s: &mut Scanner<'a>, b: &mut Builder<'a>, i: usize) -> Fast<()> {
    let mut role = None;
    let mut raw = None;
    let mut text = b.text_hasher();
    s.object(|s, key| match key {
        "role" if role.is_some() => Err(Bail),
        "role" => {
            role = Some(s.string()?);
            Ok(())
        }
        "content" if raw.is_some() => Err(Bail),
        "content" => {
            raw = Some(s.spanned(|s| content(s, b, i, text.as_mut()))?.1);
            Ok(())
        }
        _ => s.skip(),
    })?;
    match (role, raw) {
        (Some(role), Some(raw)) => {
            b.message(role, i, text, raw);
            Ok(())
        }
        _ => Err(Bail),
    }
}

/// `content`: a string or an array of blocks.
fn content<'a>(
    s: &mut Scanner<'a>,
    b: &mut Builder<'a>,
    i: usize,
    mut text: Option<&mut OpeningHash>,
) -> Fast<()> {
    match s.peek()? {
        b'"' => {
            let t = s.string()?;
            if let Some(h) = text {
                h.part(&t);
            }
            b.string_content(&t);
            Ok(())
        }
        b'[' => s.array(|s| {
            let block = block(s)?;
            if let (Some(h), Some(t)) = (text.as_deref_mut(), &block.text) {
                h.part(t);
            }
            b.block(block, i);
            Ok(())
        }),
        _ => Err(Bail),
    }
}

/// One content block: the fields of [`Block`], each at most once.
fn block<'a>(s: &mut Scanner<'a>) -> Fast<Block<'a>> {
    let mut kind = None;
    let mut id = None;
    let mut name = None;
    let mut input = None;
    let mut tool_use_id = None;
    let mut content = None;
    let mut is_error = None;
    let mut text = None;
    // One bit per field seen: serde refuses a duplicate field.
    let mut seen = 0u8;
    s.object(|s, key| {
        let bit = match key {
            "type" => 1,
            "id" => 2,
            "name" => 4,
            "input" => 8,
            "tool_use_id" => 16,
            "content" => 32,
            "is_error" => 64,
            "text" => 128,
            _ => return s.skip(),
        };
        if seen & bit != 0 {
            return Err(Bail);
        }
        seen |= bit;
        match bit {
            1 => kind = Some(s.string()?),
            2 => id = s.opt_string()?,
            4 => name = s.opt_string()?,
            8 => input = s.opt_raw()?.map(Raw),
            16 => tool_use_id = s.opt_string()?,
            32 => content = s.opt_raw()?.map(Raw),
            64 => is_error = s.opt_bool()?,
            _ => text = s.opt_string()?,
        }
        Ok(())
    })?;
    Ok(Block {
        kind: kind.ok_or(Bail)?,
        id,
        name,
        input,
        tool_use_id,
        content,
        is_error,
        text,
    })
}
