//! The `json_error` rule: a JSON object whose top level says it failed, or
//! an array of a batch's outcomes of which one failed.
//!
//! A small allocation-free walker over the top-level keys of an object (a
//! Python `repr` dict with single quotes and `True`/`False`/`None` too). It
//! skips nested values without parsing them, stops after
//! [`JSON_SCAN_BYTES`](super::JSON_SCAN_BYTES), and treats anything that is
//! not well-formed as "no verdict" (never an error, never a panic).

use std::ops::ControlFlow;

use memchr::memchr2;

/// How deep the walker looks for exit-code keys (`{"metadata": {"exit_code": 1}}`).
const EXIT_CODE_DEPTH: usize = 2;

/// `true` when `text` (leading whitespace already trimmed) is a JSON object
/// whose top level reports a failure.
pub(super) fn reports_failure(text: &[u8], limit: usize) -> bool {
    let text = &text[..text.len().min(limit)];
    if text.first() != Some(&b'{') {
        return false;
    }
    let mut w = Walker { s: text, i: 0 };
    w.object(1).unwrap_or(false)
}

/// `true` when `text` (leading whitespace already trimmed) is a JSON array
/// of per-item outcomes, a batch tool's answer, and an item failed: every
/// item an object stating its own `success`/`ok`/`succeeded` as a boolean,
/// and one of them `false` with a non-empty `error` (or `error_message`,
/// `message`, `reason`) string. Cline's `read_files` and `run_commands`
/// answer so, one item a file or command: `[{"query": "ls x", "result":
/// "…", "error": "Command exited with code 2", "success": false}]`. An
/// array whose items do not all state their outcome is data (a listing of
/// jobs or search hits), whatever its items say.
pub(super) fn batch_reports_failure(text: &[u8], limit: usize) -> bool {
    let text = &text[..text.len().min(limit)];
    if text.first() != Some(&b'[') {
        return false;
    }
    let mut w = Walker { s: text, i: 0 };
    let mut failed = false;
    // Cut at the scan's end: what the whole items seen so far say.
    w.outcomes(&mut failed).unwrap_or(failed)
}

/// One item of a batch's answer, as [`Walker::outcome`] reads it.
enum Outcome {
    /// Stated, and not a failure with its explanation.
    NoFailure,
    Failed,
    /// Not an object stating its outcome: the array is not a batch's answer.
    Other,
}

struct Walker<'a> {
    s: &'a [u8],
    i: usize,
}

/// A scalar or container value, as far as the rules care.
enum Value<'a> {
    Str(&'a [u8]),
    Num(&'a [u8]),
    True,
    False,
    Null,
    /// An object or array, with whether it holds anything.
    Container {
        empty: bool,
    },
    /// An object at a depth where exit codes are looked for, which reported
    /// a failure.
    FailingObject,
}

impl<'a> Walker<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        (self.peek()? == b).then(|| self.i += 1)
    }

    /// Walk an object at `depth` (1 = top level). `Some(true)` as soon as a
    /// failing key is seen; `None` when the input ends or is malformed.
    fn object(&mut self, depth: usize) -> Option<bool> {
        let mut envelope = Envelope::default();
        let failed = self.members(depth, |key, value| {
            if key_reports_failure(key, &value, depth) {
                return ControlFlow::Break(());
            }
            envelope.add(key, &value);
            ControlFlow::Continue(())
        })?;
        Some(failed || (depth == 1 && envelope.failed()))
    }

    /// Walk an object's members (its `{` next), giving `visit` each key and
    /// its value read at `depth`. `Some(true)` when `visit` stopped the
    /// walk, `Some(false)` at the object's end; `None` when the input ends
    /// or is malformed.
    fn members(
        &mut self,
        depth: usize,
        mut visit: impl FnMut(&'a [u8], Value<'a>) -> ControlFlow<()>,
    ) -> Option<bool> {
        self.eat(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(false);
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.eat(b':')?;
            self.ws();
            let value = self.value(depth, key)?;
            if visit(key, value).is_break() {
                return Some(true);
            }
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(false);
                }
                _ => return None,
            }
        }
    }

    /// Walk an array of outcomes, setting `failed` when an item failed.
    /// `Some(false)` as soon as an item is not an outcome; `None` when the
    /// input ends or is malformed.
    fn outcomes(&mut self, failed: &mut bool) -> Option<bool> {
        self.eat(b'[')?;
        loop {
            self.ws();
            match self.outcome()? {
                Outcome::Other => return Some(false),
                Outcome::Failed => *failed = true,
                Outcome::NoFailure => {}
            }
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => return Some(*failed),
                _ => return None,
            }
        }
    }

    /// One item of a batch's answer: an object whose `success` (or `ok`,
    /// `succeeded`) is a boolean, failed when it is `false` beside a
    /// non-empty explanation.
    fn outcome(&mut self) -> Option<Outcome> {
        const FLAGS: &[&[u8]] = &[b"success", b"ok", b"succeeded"];
        const EXPLANATIONS: &[&[u8]] = &[
            b"error",
            b"error_message",
            b"errorMessage",
            b"message",
            b"reason",
        ];
        if self.peek()? != b'{' {
            return Some(Outcome::Other);
        }
        let is = |key: &[u8], names: &[&[u8]]| names.iter().any(|n| key.eq_ignore_ascii_case(n));
        let (mut flag, mut explained) = (None, false);
        // Below the top level: no `metadata` walk.
        let not_a_flag = self.members(EXIT_CODE_DEPTH, |key, value| {
            if is(key, FLAGS) {
                flag = match value {
                    Value::True => Some(true),
                    Value::False => Some(false),
                    _ => return ControlFlow::Break(()),
                };
            } else if is(key, EXPLANATIONS) {
                explained |= matches!(value, Value::Str(s) if !trim(s).is_empty());
            }
            ControlFlow::Continue(())
        })?;
        Some(match flag {
            _ if not_a_flag => Outcome::Other,
            None => Outcome::Other,
            Some(false) if explained => Outcome::Failed,
            Some(_) => Outcome::NoFailure,
        })
    }

    /// A string's raw bytes between the quotes (escapes left as they are).
    /// Single quotes are accepted too, for Python `repr` dicts.
    fn string(&mut self) -> Option<&'a [u8]> {
        let quote = self.peek()?;
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        let start = self.i + 1;
        let mut j = start;
        loop {
            let k = memchr2(quote, b'\\', self.s.get(j..)?)?;
            if self.s[j + k] == b'\\' {
                j += k + 2;
            } else {
                self.i = j + k + 1;
                return self.s.get(start..j + k);
            }
        }
    }

    fn value(&mut self, depth: usize, key: &[u8]) -> Option<Value<'a>> {
        match self.peek()? {
            b'"' | b'\'' => self.string().map(Value::Str),
            b'{' if depth < EXIT_CODE_DEPTH && key.eq_ignore_ascii_case(b"metadata") => {
                let start = self.i;
                if self.object(depth + 1)? {
                    return Some(Value::FailingObject);
                }
                Some(Value::Container {
                    empty: self.i - start <= 2,
                })
            }
            b'{' | b'[' => self.skip_container(),
            b't' | b'T' => self.word(b"true", Value::True),
            b'f' | b'F' => self.word(b"false", Value::False),
            b'n' => self.word(b"null", Value::Null),
            // Python's `json.dumps` writes NaN and infinities bare; its
            // `repr` writes None.
            b'N' => self
                .word(b"none", Value::Null)
                .or_else(|| self.word(b"nan", Value::Num(b"NaN"))),
            b'I' => self.word(b"infinity", Value::Num(b"Infinity")),
            b'-' if self.s.get(self.i + 1) == Some(&b'I') => {
                self.i += 1;
                self.word(b"infinity", Value::Num(b"-Infinity"))
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.peek() {
                    self.i += 1;
                }
                Some(Value::Num(&self.s[start..self.i]))
            }
            _ => None,
        }
    }

    fn word(&mut self, w: &[u8], v: Value<'a>) -> Option<Value<'a>> {
        let end = self.i + w.len();
        self.s.get(self.i..end)?.eq_ignore_ascii_case(w).then(|| {
            self.i = end;
            v
        })
    }

    /// Skip a nested object or array, strings included.
    fn skip_container(&mut self) -> Option<Value<'a>> {
        let mut nesting = 0usize;
        let mut empty = true;
        loop {
            let b = self.peek()?;
            match b {
                b'"' | b'\'' => {
                    empty = false;
                    self.string()?;
                    continue;
                }
                b'{' | b'[' => nesting += 1,
                b'}' | b']' => {
                    nesting = nesting.checked_sub(1)?;
                    if nesting == 0 {
                        self.i += 1;
                        return Some(Value::Container { empty });
                    }
                }
                b' ' | b'\t' | b'\n' | b'\r' => {}
                _ => empty = false,
            }
            if nesting > 1 {
                empty = false;
            }
            self.i += 1;
        }
    }
}

/// What an object's keys say together: `{"status": "failure", "message":
/// "…"}` is a result envelope reporting a failure (a status and its
/// explanation, nothing else), while `{"status": "failure"}` alone, or
/// beside an entity's fields (`context`, `id`, `url`), is a looked-up
/// state: a CI run's conclusion, a commit status.
#[derive(Default)]
struct Envelope {
    /// `status` (or `outcome`, `result`) is `failure`.
    failure: bool,
    /// A non-empty `message`, `reason` or `error` string.
    explained: bool,
    /// A key that is neither of those nor a `code`: the object carries data.
    payload: bool,
}

impl Envelope {
    fn add(&mut self, key: &[u8], value: &Value<'_>) {
        let is = |names: &[&[u8]]| names.iter().any(|n| key.eq_ignore_ascii_case(n));
        if is(&[b"status", b"outcome", b"result"]) {
            let failure = matches!(value, Value::Str(s) if s.eq_ignore_ascii_case(b"failure"));
            self.failure |= failure;
            self.payload |= !failure;
        } else if is(&[b"message", b"reason", b"error"]) {
            self.explained |= matches!(value, Value::Str(s) if !trim(s).is_empty());
        } else if !is(&[b"code"]) {
            self.payload = true;
        }
    }

    fn failed(&self) -> bool {
        self.failure && self.explained && !self.payload
    }
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &s[start..end]
}

/// Does `key: value` at `depth` say the call failed?
fn key_reports_failure(key: &[u8], value: &Value<'_>, depth: usize) -> bool {
    let is = |names: &[&[u8]]| names.iter().any(|n| key.eq_ignore_ascii_case(n));
    if matches!(value, Value::FailingObject) {
        return true;
    }
    if is(&[
        b"exit_code",
        b"exitCode",
        b"exit_status",
        b"returncode",
        b"return_code",
    ]) {
        return matches!(value, Value::Num(n) if !is_zero(n));
    }
    if depth > 1 {
        return false;
    }
    // `error_type` and `error_details`: Google ADK's
    // `ReflectAndRetryToolPlugin` answers a tool's exception so, beside
    // its `reflection_guidance`.
    if is(&[
        b"error",
        b"errors",
        b"error_message",
        b"errorMessage",
        b"error_type",
        b"errorType",
        b"error_details",
        b"errorDetails",
        b"exception",
    ]) {
        return match value {
            Value::Str(s) => !s.is_empty() && !s.eq_ignore_ascii_case(b"none"),
            Value::True => true,
            Value::Container { empty } => !empty,
            Value::Num(_) | Value::False | Value::Null | Value::FailingObject => false,
        };
    }
    // An envelope's status (JSend's `error`/`fail`), not an entity's state:
    // `{"status": "failed"}` may well be a job the tool looked up.
    if is(&[b"status", b"outcome", b"result"]) {
        return match value {
            Value::Str(s) => [&b"error"[..], b"errored", b"fail"]
                .iter()
                .any(|w| s.eq_ignore_ascii_case(w)),
            Value::Num(n) => is_http_error(n),
            _ => false,
        };
    }
    if is(&[b"statusCode", b"status_code", b"http_status"]) {
        return matches!(value, Value::Num(n) if is_http_error(n));
    }
    if is(&[b"success", b"ok", b"succeeded"]) {
        return matches!(value, Value::False);
    }
    if is(&[b"isError", b"is_error", b"hasError", b"has_error"]) {
        return matches!(value, Value::True);
    }
    false
}

fn is_zero(n: &[u8]) -> bool {
    n.iter().all(|b| matches!(b, b'0' | b'-' | b'+' | b'.'))
}

fn is_http_error(n: &[u8]) -> bool {
    n.len() == 3 && matches!(n[0], b'4' | b'5') && n[1..].iter().all(u8::is_ascii_digit)
}
