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
    /// Check a headers section (every header complete, a known type,
    /// names and strings UTF-8) and pick out the standard string headers
    /// on the way, so their accessors need no second walk.
    ///
    /// One tight walk over the bytes: a section that is all ASCII (every
    /// name, every string and, for values under 128 bytes, every length)
    /// needs no UTF-8 check per header.
    pub(crate) fn parse(raw: &'a [u8]) -> Result<(Self, Standard<'a>), EventStreamError> {
        let ascii = all_ascii(raw);
        let mut std = Standard::default();
        let mut at = 0;
        while at < raw.len() {
            let name_len = usize::from(raw[at]);
            let name = section(raw, at + 1, name_len)?;
            if !ascii {
                text(name, "a header name")?;
            }
            at += 1 + name_len;
            let code = *raw.get(at).ok_or_else(past_end)?;
            at += 1;
            let len = match code {
                0 | 1 => 0,
                2 => 1,
                3 => 2,
                4 => 4,
                5 | 8 => 8,
                9 => 16,
                6 | 7 => {
                    let len = section(raw, at, 2)?;
                    at += 2;
                    usize::from(u16::from_be_bytes([len[0], len[1]]))
                }
                other => {
                    return Err(bad(
                        EventStreamErrorKind::BadHeaderType,
                        format!(
                            "header `{}` has unknown value type {other}",
                            String::from_utf8_lossy(name)
                        ),
                    ));
                }
            };
            let value = section(raw, at, len)?;
            at += len;
            if code == 7 {
                if !ascii {
                    text(value, "a string header")?;
                }
                if name.first() == Some(&b':') {
                    let slot = match name {
                        b":message-type" => &mut std.message_type,
                        b":event-type" => &mut std.event_type,
                        b":exception-type" => &mut std.exception_type,
                        b":content-type" => &mut std.content_type,
                        _ => continue,
                    };
                    slot.get_or_insert(value);
                }
            }
        }
        Ok((Headers { raw }, std))
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

/// The standard string headers of one message (the first of each), as
/// bytes already checked to be UTF-8.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Standard<'a> {
    pub message_type: Option<&'a [u8]>,
    pub event_type: Option<&'a [u8]>,
    pub exception_type: Option<&'a [u8]>,
    pub content_type: Option<&'a [u8]>,
}

/// Whether every byte is below 0x80: eight bytes at a time (`<[u8]>::is_ascii`
/// walks short slices a byte at a time).
fn all_ascii(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    let mut acc = 0u64;
    for w in &mut words {
        acc |= u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
    }
    let tail = words.remainder().iter().fold(0u8, |a, &b| a | b);
    acc & 0x8080_8080_8080_8080 == 0 && tail < 0x80
}

fn past_end() -> EventStreamError {
    bad(
        EventStreamErrorKind::BadHeader,
        "a header runs past the end of the headers section",
    )
}

/// `raw[at..at + len]`, or the error for a header running past the end.
fn section(raw: &[u8], at: usize, len: usize) -> Result<&[u8], EventStreamError> {
    raw.get(at..at + len).ok_or_else(past_end)
}

fn bad(kind: EventStreamErrorKind, what: impl Into<String>) -> EventStreamError {
    EventStreamError::new(kind, what)
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Result<&'a [u8], EventStreamError> {
    if rest.len() < n {
        return Err(past_end());
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
pub(super) fn read_one(
    mut rest: &[u8],
) -> Result<(&str, HeaderValue<'_>, &[u8]), EventStreamError> {
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
