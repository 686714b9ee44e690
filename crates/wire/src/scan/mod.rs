//! A JSON scanner for the request views' fast path.
//!
//! The views read request bodies with serde_json seeds; a body of an agent
//! conversation is mostly long strings (tool output, file contents) that
//! the view skips or keeps raw, and serde_json checks those a byte or a
//! word at a time. This scanner reads the same text with SIMD string scans
//! ([`string`]) and hands the view its keys, strings and raw values.
//!
//! It never reports an error: on anything it does not take — invalid JSON,
//! an escaped key, a lone surrogate, a value of an unexpected type — it
//! returns [`Bail`], and the caller reads the body with the serde path,
//! which gives the exact error (or the view, for shapes serde accepts and
//! this does not, such as a struct written as an array). So the fast path
//! only has to be *right when it answers*: everything it accepts, serde_json
//! accepts with the same meaning (property-tested against it in each view's
//! tests, fuzzed by `request_view`).
//!
//! What "the same" means, from serde_json 1.0's reader: whitespace is
//! space, tab, CR, LF; skipped strings may hold any escape of the
//! grammar, a lone surrogate included (serde_json does not decode what it
//! skips), decoded strings may not ([`crate::text::unescape`]); skipped
//! numbers are checked against the grammar only; skipped values nest to
//! any depth (serde_json skips without recursion).

mod string;

use std::borrow::Cow;

/// The fast path does not take this body; read it with the serde path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bail;

/// The fast path's result.
pub(crate) type Fast<T> = Result<T, Bail>;

/// The fields of one struct read so far: serde refuses a repeated one.
#[derive(Default)]
pub(crate) struct Seen(u16);

impl Seen {
    /// Field number `n`'s value, unless that field was read before.
    pub(crate) fn once<T>(&mut self, n: u8, value: Fast<T>) -> Fast<T> {
        let bit = 1 << n;
        if self.0 & bit != 0 {
            return Err(Bail);
        }
        self.0 |= bit;
        value
    }
}

/// A cursor over a body already checked to be UTF-8.
pub(crate) struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

/// Nesting the skipper tracks in one word; deeper values bail.
const MAX_SKIP_DEPTH: u32 = 64;

impl<'a> Scanner<'a> {
    pub(crate) fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, at: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skip whitespace; the next byte, not consumed.
    #[inline]
    pub(crate) fn peek(&mut self) -> Fast<u8> {
        let bytes = self.bytes();
        while let Some(&b) = bytes.get(self.at) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                return Ok(b);
            }
            self.at += 1;
        }
        Err(Bail)
    }

    /// Skip whitespace and consume `byte`, which must come next.
    #[inline]
    fn expect(&mut self, byte: u8) -> Fast<()> {
        if self.peek()? == byte {
            self.at += 1;
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// Only whitespace is left.
    pub(crate) fn end(&mut self) -> Fast<()> {
        match self.peek() {
            Err(Bail) => Ok(()),
            Ok(_) => Err(Bail),
        }
    }

    /// An object, each member's key handed to `member`, which must read
    /// the value. Keys with escapes bail (serde would decode them).
    pub(crate) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Fast<()>,
    ) -> Fast<()> {
        self.expect(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Ok(());
        }
        loop {
            let key = self.plain_string()?;
            self.expect(b':')?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Bail),
            }
        }
    }

    /// An array, each element read by `element`.
    pub(crate) fn array(&mut self, mut element: impl FnMut(&mut Self) -> Fast<()>) -> Fast<()> {
        self.expect(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Ok(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Bail),
            }
        }
    }

    /// A string without escapes, borrowed (object keys).
    fn plain_string(&mut self) -> Fast<&'a str> {
        if self.peek()? != b'"' {
            return Err(Bail);
        }
        let (end, escaped) = string::end(self.bytes(), self.at)?;
        if escaped {
            return Err(Bail);
        }
        let s = self.text.get(self.at + 1..end - 1).ok_or(Bail)?;
        self.at = end;
        Ok(s)
    }

    /// A string, decoded as serde_json decodes one into a `Cow<str>`.
    pub(crate) fn string(&mut self) -> Fast<Cow<'a, str>> {
        if self.peek()? != b'"' {
            return Err(Bail);
        }
        let start = self.at;
        let (end, escaped) = string::end(self.bytes(), start)?;
        self.at = end;
        if escaped {
            let literal = self.text.get(start..end).ok_or(Bail)?;
            crate::text::unescape(literal).map_err(|_| Bail)
        } else {
            self.text
                .get(start + 1..end - 1)
                .ok_or(Bail)
                .map(Cow::Borrowed)
        }
    }

    /// `null` comes next: consume it.
    pub(crate) fn null(&mut self) -> Fast<bool> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// `true` or `false`.
    pub(crate) fn bool(&mut self) -> Fast<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| true),
            b'f' => self.literal(b"false").map(|()| false),
            _ => Err(Bail),
        }
    }

    /// An optional string: `null` or a string.
    pub(crate) fn opt_string(&mut self) -> Fast<Option<Cow<'a, str>>> {
        if self.null()? {
            Ok(None)
        } else {
            self.string().map(Some)
        }
    }

    /// An optional flag: `null` or a boolean.
    pub(crate) fn opt_bool(&mut self) -> Fast<Option<bool>> {
        if self.null()? {
            Ok(None)
        } else {
            self.bool().map(Some)
        }
    }

    /// Any value, as its raw text (what serde_json's `RawValue` holds).
    pub(crate) fn raw(&mut self) -> Fast<&'a str> {
        self.peek()?;
        let start = self.at;
        self.skip()?;
        self.text.get(start..self.at).ok_or(Bail)
    }

    /// One value read by `read`, with its raw text.
    pub(crate) fn spanned<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Fast<T>,
    ) -> Fast<(T, &'a str)> {
        self.peek()?;
        let start = self.at;
        let value = read(self)?;
        Ok((value, self.text.get(start..self.at).ok_or(Bail)?))
    }

    /// An optional raw value: `None` for `null`, as `Option<&RawValue>`.
    pub(crate) fn opt_raw(&mut self) -> Fast<Option<&'a str>> {
        if self.null()? {
            Ok(None)
        } else {
            self.raw().map(Some)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Fast<()> {
        if self.bytes()[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Bail)
        }
    }

    /// A number, checked against JSON's grammar (as serde_json checks a
    /// number it skips: not its range).
    fn number(&mut self) -> Fast<()> {
        self.at = number_end(self.bytes(), self.at).ok_or(Bail)?;
        Ok(())
    }

    /// Skip one value of any kind, checking its syntax.
    pub(crate) fn skip(&mut self) -> Fast<()> {
        // One bit per open container: 1 for an object.
        let mut open: u64 = 0;
        let mut depth = 0u32;
        loop {
            match self.peek()? {
                b'"' => self.at = string::end(self.bytes(), self.at)?.0,
                c @ (b'{' | b'[') => {
                    self.at += 1;
                    let object = c == b'{';
                    let close = if object { b'}' } else { b']' };
                    if self.peek()? == close {
                        self.at += 1;
                    } else {
                        if depth == MAX_SKIP_DEPTH {
                            return Err(Bail);
                        }
                        open = (open << 1) | u64::from(object);
                        depth += 1;
                        if object {
                            self.skipped_key()?;
                        }
                        continue;
                    }
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return Err(Bail),
            }
            // After a value: close what ends here, then a comma or done.
            loop {
                if depth == 0 {
                    return Ok(());
                }
                let object = open & 1 == 1;
                match self.peek()? {
                    b',' => {
                        self.at += 1;
                        if object {
                            self.skipped_key()?;
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return Err(Bail),
                }
                self.at += 1;
                open >>= 1;
                depth -= 1;
            }
        }
    }

    /// A key inside a skipped object (any escapes, as serde_json skips
    /// them) and its colon.
    fn skipped_key(&mut self) -> Fast<()> {
        if self.peek()? != b'"' {
            return Err(Bail);
        }
        self.at = string::end(self.bytes(), self.at)?.0;
        self.expect(b':')
    }
}

/// Whether `text` is exactly one JSON number (by the grammar, not its
/// range: `NaN`, `inf`, `+1`, `.5`, `1.` and `01` are not).
pub(crate) fn is_json_number(text: &str) -> bool {
    number_end(text.as_bytes(), 0) == Some(text.len())
}

/// Where the JSON number at `at` ends; `None` when none starts there.
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |at: &mut usize| {
        let start = *at;
        while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at > start
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => {
            digits(&mut at);
        }
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        if !digits(&mut at) {
            return None;
        }
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if !digits(&mut at) {
            return None;
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests;
