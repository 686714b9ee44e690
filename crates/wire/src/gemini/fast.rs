//! The request view's fast path: the same [`Body`] serde derives, built by
//! the SIMD scanner ([`crate::scan`]).
//!
//! Field for field as the `Deserialize` impls in [`super::model`] read
//! them — the same keys and aliases (a key given under both names is a
//! repeated field, which serde refuses), `null` where a field is an
//! `Option`, the first content's raw text kept for the turn hash — and a
//! bail on anything else (a struct written as an array, an escaped key, a
//! `response` that is not an object); `view::read` then lets serde read the
//! body. Property-tested against serde in `tests/fast_agrees_with_serde.rs`.
//!
//! A `functionResponse.response` object, read when its result is, goes the
//! same way ([`entries`]).

use std::borrow::Cow;

use super::model::{Body, Content, Contents, Entries, FnCall, FnResponse, Part, Parts, RawObject};
use crate::{
    scan::{Bail, Fast, Scanner, Seen},
    splice::Raw,
};

/// The body as serde would read it, or [`Bail`].
pub(super) fn body(text: &str) -> Fast<Body<'_>> {
    let mut s = Scanner::new(text);
    let mut fields = Seen::default();
    let mut body = Body {
        contents: Contents::default(),
        system: None,
        generation: None,
    };
    s.object(|s, key| {
        match key {
            "contents" => body.contents = fields.once(0, contents(s))?,
            "systemInstruction" | "system_instruction" => {
                body.system = fields.once(1, s.opt_raw())?.map(Raw);
            }
            "generationConfig" | "generation_config" => {
                body.generation = fields.once(2, s.opt_raw())?.map(Raw);
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    s.end()?;
    Ok(body)
}

/// The contents, the first one's raw text kept (as `Contents`' impl does:
/// it reads the first element raw, then parses that text).
fn contents<'a>(s: &mut Scanner<'a>) -> Fast<Contents<'a>> {
    let mut out = Contents::default();
    s.array(|s| {
        if out.first.is_none() {
            let raw = s.raw()?;
            let mut inner = Scanner::new(raw);
            let c = content(&mut inner)?;
            inner.end()?;
            out.first = Some(raw);
            out.list.push(c);
        } else {
            out.list.push(content(s)?);
        }
        Ok(())
    })?;
    Ok(out)
}

fn content<'a>(s: &mut Scanner<'a>) -> Fast<Content<'a>> {
    let mut fields = Seen::default();
    let mut c = Content::default();
    s.object(|s, key| {
        match key {
            "role" => c.role = fields.once(0, s.opt_string())?,
            "parts" => {
                let mut list = Vec::new();
                let ((), raw) = s.spanned(|s| {
                    s.array(|s| {
                        list.push(part(s)?);
                        Ok(())
                    })
                })?;
                c.parts = fields.once(
                    1,
                    Ok(Parts {
                        list,
                        raw: Some(raw),
                    }),
                )?;
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(c)
}

fn part<'a>(s: &mut Scanner<'a>) -> Fast<Part<'a>> {
    let mut fields = Seen::default();
    let mut p = Part::default();
    s.object(|s, key| {
        match key {
            "functionCall" | "function_call" => {
                fields.once(0, Ok(()))?;
                p.call = if s.null()? { None } else { Some(call(s)?) };
            }
            "functionResponse" | "function_response" => {
                fields.once(1, Ok(()))?;
                p.response = if s.null()? { None } else { Some(response(s)?) };
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(p)
}

fn call<'a>(s: &mut Scanner<'a>) -> Fast<FnCall<'a>> {
    let mut fields = Seen::default();
    let mut c = FnCall::default();
    s.object(|s, key| {
        match key {
            "name" => c.name = fields.once(0, s.opt_string())?,
            "args" => c.args = fields.once(1, s.opt_raw())?.map(Raw),
            "id" => c.id = fields.once(2, s.opt_string())?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(c)
}

fn response<'a>(s: &mut Scanner<'a>) -> Fast<FnResponse<'a>> {
    let mut fields = Seen::default();
    let mut r = FnResponse::default();
    s.object(|s, key| {
        match key {
            "name" => r.name = fields.once(0, s.opt_string())?,
            "id" => r.id = fields.once(1, s.opt_string())?,
            "response" => {
                r.response = match fields.once(2, s.opt_raw())? {
                    None => None,
                    Some(raw) if raw.starts_with('{') => Some(RawObject(raw)),
                    Some(_) => return Err(Bail),
                };
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(r)
}

/// A `functionResponse.response` object as [`Entries`] (its members' keys
/// and raw values, in order, repeats kept) as serde reads it, or [`Bail`]
/// (an escaped key among them).
pub(super) fn entries(text: &str) -> Fast<Entries<'_>> {
    let mut s = Scanner::new(text);
    let mut out = Vec::new();
    s.object(|s, key| {
        out.push((Cow::Borrowed(key), s.raw()?));
        Ok(())
    })?;
    s.end()?;
    Ok(Entries(out))
}
