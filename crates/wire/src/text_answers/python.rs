//! A Python literal's `repr` read as JSON: what smolagents writes of a
//! call (`str(arguments)`, `str([tc.dict() …])`). Strings (both quotes,
//! with their escapes), numbers, `True`, `False`, `None`, lists, tuples
//! and sets (as arrays) and dicts (a key that is not a string as its JSON
//! text). Anything else (an object's `repr`, `nan`) does not read.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

/// The literal at the start of `s` (after spaces), and the text after it.
pub(super) fn literal(s: &str) -> Option<(Value, &str)> {
    let mut py = Py(s);
    let value = py.value(0)?;
    Some((value, py.0))
}

/// Deeper than this is refused: a client's text must not exhaust the stack.
const MAX_DEPTH: usize = 64;

/// The text left to read.
struct Py<'s>(&'s str);

impl<'s> Py<'s> {
    fn space(&mut self) {
        self.0 = self.0.trim_start_matches([' ', '\n', '\t', '\r']);
    }

    fn eat(&mut self, c: char) -> bool {
        self.space();
        match self.0.strip_prefix(c) {
            Some(rest) => {
                self.0 = rest;
                true
            }
            None => false,
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.space();
        match self.0.chars().next()? {
            '\'' | '"' => {
                let (text, rest) = string(self.0)?;
                self.0 = rest;
                Some(Value::String(text.into_owned()))
            }
            '[' => self.items('[', ']', depth).map(Value::Array),
            '(' => self.items('(', ')', depth).map(Value::Array),
            '{' => self.dict_or_set(depth),
            _ => self.atom(),
        }
    }

    /// Values separated by commas between `open` and `close` (a trailing
    /// comma allowed, as in `(1,)`).
    fn items(&mut self, open: char, close: char, depth: usize) -> Option<Vec<Value>> {
        if !self.eat(open) {
            return None;
        }
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some(items);
            }
            items.push(self.value(depth + 1)?);
            if !self.eat(',') {
                return self.eat(close).then_some(items);
            }
        }
    }

    fn dict_or_set(&mut self, depth: usize) -> Option<Value> {
        if !self.eat('{') {
            return None;
        }
        let mut map = Map::new();
        let mut set = Vec::new();
        loop {
            if self.eat('}') {
                return Some(if set.is_empty() {
                    Value::Object(map)
                } else {
                    Value::Array(set)
                });
            }
            let key = self.value(depth + 1)?;
            if self.eat(':') {
                if !set.is_empty() {
                    return None;
                }
                let key = match key {
                    Value::String(key) => key,
                    other => other.to_string(),
                };
                map.insert(key, self.value(depth + 1)?);
            } else {
                if !map.is_empty() {
                    return None;
                }
                set.push(key);
            }
            if !self.eat(',') {
                return self.eat('}').then(|| {
                    if set.is_empty() {
                        Value::Object(std::mem::take(&mut map))
                    } else {
                        Value::Array(std::mem::take(&mut set))
                    }
                });
            }
        }
    }

    /// A number, `True`, `False` or `None`.
    fn atom(&mut self) -> Option<Value> {
        let end = self
            .0
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_')))
            .unwrap_or(self.0.len());
        let (word, rest) = self.0.split_at(end);
        let value = match word {
            "True" => Value::Bool(true),
            "False" => Value::Bool(false),
            "None" => Value::Null,
            _ => number(word)?,
        };
        self.0 = rest;
        Some(value)
    }
}

fn number(word: &str) -> Option<Value> {
    let digits = word.strip_prefix('-').unwrap_or(word);
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Ok(i) = word.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    word.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
}

/// A string's `repr` at the start of `s` (`'…'`, or `"…"` when the string
/// holds a `'` and no `"`), and the text after it.
pub(super) fn string(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let quote = s.chars().next().filter(|&q| q == '\'' || q == '"')?;
    let body = &s[1..];
    let mut out: Option<String> = None;
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        if c == quote {
            let value = match out {
                Some(owned) => Cow::Owned(owned),
                None => Cow::Borrowed(&body[..at]),
            };
            return Some((value, &body[at + 1..]));
        }
        if c != '\\' {
            if let Some(owned) = out.as_mut() {
                owned.push(c);
            }
            continue;
        }
        let owned = out.get_or_insert_with(|| body[..at].to_string());
        let (_, e) = chars.next()?;
        let unescaped = match e {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'x' => hex_char(&mut chars, 2)?,
            'u' => hex_char(&mut chars, 4)?,
            'U' => hex_char(&mut chars, 8)?,
            other => other,
        };
        owned.push(unescaped);
    }
    None
}

/// The character of the next `digits` hex digits.
fn hex_char(chars: &mut std::str::CharIndices<'_>, digits: usize) -> Option<char> {
    let mut code = 0u32;
    for _ in 0..digits {
        code = code * 16 + chars.next()?.1.to_digit(16)?;
    }
    char::from_u32(code)
}
