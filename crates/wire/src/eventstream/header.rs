//! Event-stream headers: a name and a typed value each.

use super::decode::{EventStreamError, EventStreamErrorKind};

/// A header value, of one of the ten wire types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderValue<'a> {
    /// Types 0 (true) and 1 (false).
    Bool(bool),
    /// Type 2.
    Byte(i8),
    /// Type 3.
    Short(i16),
    /// Type 4.
    Int(i32),
    /// Type 5.
    Long(i64),
    /// Type 6: up to 65535 bytes.
    Bytes(&'a [u8]),
    /// Type 7: UTF-8, up to 65535 bytes.
    String(&'a str),
    /// Type 8: milliseconds since the Unix epoch.
    Timestamp(i64),
    /// Type 9.
    Uuid([u8; 16]),
}

impl<'a> HeaderValue<'a> {
    /// The string, for a string header.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            HeaderValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The wire type number.
    pub fn type_code(&self) -> u8 {
        match self {
            HeaderValue::Bool(true) => 0,
            HeaderValue::Bool(false) => 1,
            HeaderValue::Byte(_) => 2,
            HeaderValue::Short(_) => 3,
            HeaderValue::Int(_) => 4,
            HeaderValue::Long(_) => 5,
            HeaderValue::Bytes(_) => 6,
            HeaderValue::String(_) => 7,
            HeaderValue::Timestamp(_) => 8,
            HeaderValue::Uuid(_) => 9,
        }
    }

    /// Append the type byte and the value.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.push(self.type_code());
        match *self {
            HeaderValue::Bool(_) => {}
            HeaderValue::Byte(v) => out.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Short(v) => out.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Int(v) => out.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Long(v) | HeaderValue::Timestamp(v) => {
                out.extend_from_slice(&v.to_be_bytes())
            }
            HeaderValue::Bytes(b) => write_u16_prefixed(out, b),
            HeaderValue::String(s) => write_u16_prefixed(out, s.as_bytes()),
            HeaderValue::Uuid(u) => out.extend_from_slice(&u),
        }
    }
}

/// `bytes` with a u16 length in front, cut at 65535 bytes.
fn write_u16_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    let bytes = &bytes[..bytes.len().min(usize::from(u16::MAX))];
    out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// The headers section of one message (already checked by the decoder):
/// iterate it, or look one up by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers<'a> {
    raw: &'a [u8],
}

impl<'a> Headers<'a> {
    /// Check a headers section: every header complete, a known type,
    /// names and strings UTF-8.
    pub(crate) fn parse(raw: &'a [u8]) -> Result<Self, EventStreamError> {
        let mut rest = raw;
        while !rest.is_empty() {
            let (_, _, tail) = read_one(rest)?;
            rest = tail;
        }
        Ok(Headers { raw })
    }

    /// The value of the first header called `name`.
    pub fn get(&self, name: &str) -> Option<HeaderValue<'a>> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The string value of the first header called `name`.
    pub fn get_str(&self, name: &str) -> Option<&'a str> {
        self.get(name).and_then(|v| v.as_str())
    }

    /// Every header, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, HeaderValue<'a>)> + 'a {
        let mut rest = self.raw;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            // Checked by `parse`: an error here cannot happen, and ends the walk.
            let (name, value, tail) = read_one(rest).ok()?;
            rest = tail;
            Some((name, value))
        })
    }

    /// The raw bytes of the section.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.raw
    }
}

fn bad(kind: EventStreamErrorKind, what: impl Into<String>) -> EventStreamError {
    EventStreamError::new(kind, what)
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Result<&'a [u8], EventStreamError> {
    if rest.len() < n {
        return Err(bad(
            EventStreamErrorKind::BadHeader,
            "a header runs past the end of the headers section",
        ));
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

fn array<const N: usize>(rest: &mut &[u8]) -> Result<[u8; N], EventStreamError> {
    let mut out = [0u8; N];
    out.copy_from_slice(take(rest, N)?);
    Ok(out)
}

fn text<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, EventStreamError> {
    std::str::from_utf8(bytes).map_err(|_| {
        bad(
            EventStreamErrorKind::BadHeader,
            format!("{what} is not UTF-8"),
        )
    })
}

/// One header from the front of `rest`: name, value, what follows.
fn read_one(mut rest: &[u8]) -> Result<(&str, HeaderValue<'_>, &[u8]), EventStreamError> {
    let name_len = usize::from(take(&mut rest, 1)?[0]);
    let name = text(take(&mut rest, name_len)?, "a header name")?;
    let code = take(&mut rest, 1)?[0];
    let value = match code {
        0 => HeaderValue::Bool(true),
        1 => HeaderValue::Bool(false),
        2 => HeaderValue::Byte(i8::from_be_bytes(array(&mut rest)?)),
        3 => HeaderValue::Short(i16::from_be_bytes(array(&mut rest)?)),
        4 => HeaderValue::Int(i32::from_be_bytes(array(&mut rest)?)),
        5 => HeaderValue::Long(i64::from_be_bytes(array(&mut rest)?)),
        6 | 7 => {
            let len = usize::from(u16::from_be_bytes(array(&mut rest)?));
            let bytes = take(&mut rest, len)?;
            if code == 6 {
                HeaderValue::Bytes(bytes)
            } else {
                HeaderValue::String(text(bytes, "a string header")?)
            }
        }
        8 => HeaderValue::Timestamp(i64::from_be_bytes(array(&mut rest)?)),
        9 => HeaderValue::Uuid(array(&mut rest)?),
        other => {
            return Err(bad(
                EventStreamErrorKind::BadHeaderType,
                format!("header `{name}` has unknown value type {other}"),
            ));
        }
    };
    Ok((name, value, rest))
}
