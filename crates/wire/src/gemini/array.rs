//! Framing of a streamed JSON array: `[{…},\n{…}]`, the body of Gemini's
//! `:streamGenerateContent` without `alt=sse`.
//!
//! A small brace- and string-aware scanner (memchr over the three bytes that
//! matter) finds each top-level object as the bytes arrive, split anywhere.
//! Bytes are copied only when an object straddles two chunks, and the buffer
//! is bounded by the largest object.

use crate::sse::DEFAULT_MAX_EVENT;

/// An incremental splitter of a JSON array into its object elements.
#[derive(Debug)]
pub(crate) struct JsonArrayFramer {
    /// The current element's bytes so far, when it straddles chunks.
    buf: Vec<u8>,
    in_elem: bool,
    depth: u32,
    in_string: bool,
    /// The previous chunk ended right after a backslash inside a string.
    escape: bool,
    max_elem: usize,
    dropping: bool,
    oversized: usize,
}

impl Default for JsonArrayFramer {
    fn default() -> Self {
        JsonArrayFramer {
            buf: Vec::new(),
            in_elem: false,
            depth: 0,
            in_string: false,
            escape: false,
            max_elem: DEFAULT_MAX_EVENT,
            dropping: false,
            oversized: 0,
        }
    }
}

impl JsonArrayFramer {
    /// The bytes its buffer holds (its capacity).
    pub(crate) fn buffered(&self) -> usize {
        self.buf.capacity()
    }

    /// A framer that drops elements larger than `max_elem` bytes.
    #[cfg(test)]
    pub(crate) fn with_max_elem(max_elem: usize) -> Self {
        JsonArrayFramer {
            max_elem,
            ..JsonArrayFramer::default()
        }
    }

    /// How many elements were dropped for exceeding the size cap.
    #[cfg(test)]
    pub(crate) fn oversized(&self) -> usize {
        self.oversized
    }

    /// Feed the next bytes; `on_elem(b"", element)` is called for each
    /// complete top-level object.
    pub(crate) fn feed(&mut self, chunk: &[u8], on_elem: &mut dyn FnMut(&[u8], &[u8])) {
        let mut i = 0;
        let mut start = 0;
        while i < chunk.len() {
            if !self.in_elem {
                match memchr::memchr(b'{', &chunk[i..]) {
                    Some(at) => {
                        i += at + 1;
                        start = i - 1;
                        self.in_elem = true;
                        self.depth = 1;
                        self.in_string = false;
                        self.escape = false;
                    }
                    None => return,
                }
                continue;
            }
            if self.escape {
                self.escape = false;
                i += 1;
                continue;
            }
            if self.in_string {
                match memchr::memchr2(b'"', b'\\', &chunk[i..]) {
                    Some(at) => {
                        let j = i + at;
                        if chunk[j] == b'\\' {
                            if j + 1 < chunk.len() {
                                i = j + 2;
                            } else {
                                self.escape = true;
                                i = j + 1;
                            }
                        } else {
                            self.in_string = false;
                            i = j + 1;
                        }
                    }
                    None => i = chunk.len(),
                }
                continue;
            }
            match memchr::memchr3(b'"', b'{', b'}', &chunk[i..]) {
                Some(at) => {
                    let j = i + at;
                    i = j + 1;
                    match chunk[j] {
                        b'"' => self.in_string = true,
                        b'{' => self.depth += 1,
                        _ => {
                            self.depth -= 1;
                            if self.depth == 0 {
                                self.in_elem = false;
                                self.emit(&chunk[start..i], on_elem);
                            }
                        }
                    }
                }
                None => i = chunk.len(),
            }
        }
        if self.in_elem {
            self.keep(&chunk[start..]);
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.dropping {
            return;
        }
        if self.buf.len() + bytes.len() > self.max_elem {
            self.buf.clear();
            self.dropping = true;
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    fn emit(&mut self, tail: &[u8], on_elem: &mut dyn FnMut(&[u8], &[u8])) {
        if self.dropping {
            self.dropping = false;
            self.oversized += 1;
            return;
        }
        if self.buf.is_empty() {
            on_elem(b"", tail);
        } else if self.buf.len() + tail.len() > self.max_elem {
            self.buf.clear();
            self.oversized += 1;
        } else {
            self.buf.extend_from_slice(tail);
            on_elem(b"", &self.buf);
            self.buf.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<String> {
        let mut f = JsonArrayFramer::default();
        let mut out = Vec::new();
        for c in chunks {
            f.feed(c, &mut |_, e| {
                out.push(String::from_utf8_lossy(e).into_owned())
            });
        }
        out
    }

    #[test]
    fn splits_elements_at_any_byte() {
        let whole: &[u8] =
            b"[{\"a\":\"}{\\\"\\\\\",\"b\":{\"c\":[1,{}]}}\r\n,\n{\"x\":\"\\\\\"}\n, {\"e\":1}]";
        let expected = vec![
            "{\"a\":\"}{\\\"\\\\\",\"b\":{\"c\":[1,{}]}}".to_string(),
            "{\"x\":\"\\\\\"}".to_string(),
            "{\"e\":1}".to_string(),
        ];
        assert_eq!(split(&[whole]), expected);
        for at in 0..whole.len() {
            let (a, b) = whole.split_at(at);
            assert_eq!(split(&[a, b]), expected, "split at {at}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(split(&bytes), expected);
        for e in &expected {
            serde_json::from_str::<serde_json::Value>(e).unwrap();
        }
    }

    #[test]
    fn oversized_elements_are_dropped_and_counted() {
        let mut f = JsonArrayFramer::with_max_elem(10);
        let mut n = 0;
        f.feed(b"[{\"a\":\"0123", &mut |_, _| n += 1);
        f.feed(b"456789abc\"},{\"b\":1}]", &mut |_, _| n += 1);
        assert_eq!(n, 1);
        assert_eq!(f.oversized(), 1);
    }
}
