//! Splits a streamed JSON array (`[{…},\n{…}]`, Gemini's
//! `streamGenerateContent` without `alt=sse`) into its elements as bytes
//! arrive, split anywhere. Memory is bounded by the largest element.

/// Incremental splitter.
#[derive(Debug, Default)]
pub struct ArraySplitter {
    depth: u32,
    in_string: bool,
    escaped: bool,
    current: Vec<u8>,
    oversized: bool,
    max_element: usize,
}

impl ArraySplitter {
    /// A splitter that skips elements larger than `max_element` bytes.
    pub fn new(max_element: usize) -> ArraySplitter {
        ArraySplitter {
            max_element,
            ..ArraySplitter::default()
        }
    }

    /// Feed bytes; `on_element` gets each complete top-level element.
    pub fn feed(&mut self, chunk: &[u8], on_element: &mut dyn FnMut(&[u8])) {
        for &b in chunk {
            if self.depth >= 2 || (self.depth == 1 && !b.is_ascii_whitespace() && b != b',') {
                self.push(b);
            }
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 1 {
                        self.emit(on_element);
                    } else if self.depth == 0 {
                        // The array closed: a scalar element may be pending.
                        self.current.clear();
                    }
                }
                b',' if self.depth == 1 => self.emit(on_element),
                _ => {}
            }
        }
    }

    fn push(&mut self, b: u8) {
        if self.current.len() >= self.max_element {
            self.oversized = true;
            self.current.clear();
        } else if !self.oversized {
            self.current.push(b);
        }
    }

    fn emit(&mut self, on_element: &mut dyn FnMut(&[u8])) {
        if !self.oversized && !self.current.is_empty() {
            on_element(&self.current);
        }
        self.current.clear();
        self.oversized = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(input: &[u8], at: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut s = ArraySplitter::new(1 << 20);
        let (a, b) = input.split_at(at.min(input.len()));
        for part in [a, b] {
            s.feed(part, &mut |e| {
                out.push(String::from_utf8(e.to_vec()).unwrap())
            });
        }
        out
    }

    #[test]
    fn elements_survive_any_split() {
        let input = br#"[{"a":"x]},{\"","b":[1,{"c":2}]}
,
{"d":{}}]"#;
        for at in 0..=input.len() {
            assert_eq!(
                split_all(input, at),
                [r#"{"a":"x]},{\"","b":[1,{"c":2}]}"#, r#"{"d":{}}"#],
                "split at {at}"
            );
        }
    }

    #[test]
    fn oversized_elements_are_skipped() {
        let mut out = Vec::new();
        let mut s = ArraySplitter::new(8);
        s.feed(br#"[{"long":"0123456789"},{"k":1}]"#, &mut |e| {
            out.push(e.to_vec())
        });
        assert_eq!(out, [br#"{"k":1}"#.to_vec()]);
    }
}
