//! Reassembling a streamed `functionCall`'s `partialArgs`.
//!
//! Gemini can stream one call's arguments as a series of
//! `{"jsonPath": "$.a.b[0]", "stringValue" | "numberValue" | "boolValue" |
//! "nullValue": …, "willContinue"?}` updates. A string whose update has
//! `willContinue: true` goes on in the next update for the same path. The
//! values are kept in an ordered tree and written out as JSON text, keys in
//! the order they first appeared. What the tree keeps is charged to the
//! stream's budget (`crate::budget`): past it, updates are dropped.

use ahash::AHashMap;

use crate::budget::{Budget, ENTRY_COST};

/// One value of a partial argument.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value<'v> {
    /// A (piece of a) string.
    Str(&'v str),
    /// A number, boolean or null, as JSON text.
    Raw(&'v str),
}

#[derive(Debug, Clone)]
enum Node {
    Object(Fields),
    Array(Vec<Node>),
    Str(String),
    Raw(String),
}

/// An object's fields, in the order they first appeared.
#[derive(Debug, Clone, Default)]
struct Fields {
    list: Vec<(String, Node)>,
    /// Positions in `list` by key, once it holds [`INDEX_FROM`] fields: a
    /// scan per update made a call with many keys quadratic. Most objects
    /// have a handful and never build one.
    index: Option<AHashMap<String, usize>>,
}

/// How many fields an object holds before it indexes them by key.
const INDEX_FROM: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// The arguments of one call, as they stream in.
#[derive(Debug, Clone)]
pub(super) struct PartialArgs {
    root: Node,
    /// The path of a string that continues in the next update (when
    /// `open`; the buffer is reused).
    open_path: String,
    open: bool,
    /// Updates whose path could not be read.
    pub skipped: usize,
}

impl Default for PartialArgs {
    fn default() -> Self {
        PartialArgs {
            root: Node::Object(Fields::default()),
            open_path: String::new(),
            open: false,
            skipped: 0,
        }
    }
}

impl PartialArgs {
    /// Apply one update, with no bound on what is kept.
    #[cfg(test)]
    pub fn apply(&mut self, path: &str, value: Value<'_>, will_continue: bool) {
        self.apply_within(path, value, will_continue, &mut Budget::default());
    }

    /// Apply one update, if what it adds to the tree fits `budget`.
    pub fn apply_within(
        &mut self,
        path: &str,
        value: Value<'_>,
        will_continue: bool,
        budget: &mut Budget,
    ) {
        let append = self.open && self.open_path == path;
        let leaf = match simple_key(path) {
            // `$.name`, the common case: no path to build.
            Some(key) => field(&mut self.root, key, budget),
            None => {
                let Some(segs) = parse_path(path).filter(|s| !s.is_empty()) else {
                    self.skipped += 1;
                    self.open = false;
                    return;
                };
                descend(&mut self.root, &segs, budget)
            }
        };
        let Some(leaf) = leaf else {
            // Over budget: nothing more is kept.
            self.open = false;
            return;
        };
        match value {
            Value::Str(s) => match leaf {
                Node::Str(prev) if append => budget.append(prev, s),
                other => {
                    if budget.take(s.len()) {
                        *other = Node::Str(s.to_owned());
                    }
                }
            },
            Value::Raw(r) => {
                if budget.take(r.len()) {
                    *leaf = Node::Raw(r.to_owned());
                }
            }
        }
        self.open = matches!(value, Value::Str(_)) && will_continue;
        if self.open && !append {
            self.open_path.clear();
            self.open_path.push_str(path);
        }
    }

    /// The arguments as JSON text.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(64);
        write(&self.root, &mut out);
        out
    }
}

/// `$.name` with a plain name: the name.
fn simple_key(path: &str) -> Option<&str> {
    let key = path.strip_prefix("$.")?;
    (!key.is_empty() && !key.contains(['.', '[', ']', '\'', '"'])).then_some(key)
}

/// The field `key` of `node` (made an object if it is not one); `None`
/// when a new field does not fit `budget`.
fn field<'n>(node: &'n mut Node, key: &str, budget: &mut Budget) -> Option<&'n mut Node> {
    if !matches!(node, Node::Object(_)) {
        *node = Node::Object(Fields::default());
    }
    let Node::Object(fields) = node else {
        unreachable!("just made an object")
    };
    let at = match fields.position(key) {
        Some(at) => at,
        None if budget.take(ENTRY_COST + key.len()) => fields.push(key),
        None => return None,
    };
    Some(&mut fields.list[at].1)
}

fn descend<'n>(mut node: &'n mut Node, segs: &[Seg], budget: &mut Budget) -> Option<&'n mut Node> {
    for seg in segs {
        node = match seg {
            Seg::Key(k) => field(node, k, budget)?,
            Seg::Index(i) => {
                if !matches!(node, Node::Array(_)) {
                    *node = Node::Array(Vec::new());
                }
                let Node::Array(items) = node else {
                    unreachable!("just made an array")
                };
                // Bounded: an index far past the end is clamped to the end.
                let i = (*i).min(items.len());
                if i == items.len() {
                    if !budget.take(ENTRY_COST) {
                        return None;
                    }
                    items.push(Node::Raw(String::from("null")));
                }
                &mut items[i]
            }
        };
    }
    Some(node)
}

// === impl Fields ===

impl Fields {
    /// Where the field `key` is.
    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.list.iter().position(|(f, _)| f == key),
        }
    }

    /// Add the field `key` (null for now): where it is.
    fn push(&mut self, key: &str) -> usize {
        let at = self.list.len();
        self.list
            .push((key.to_owned(), Node::Raw(String::from("null"))));
        match &mut self.index {
            Some(index) => {
                index.insert(key.to_owned(), at);
            }
            None if self.list.len() >= INDEX_FROM => {
                let keys = self.list.iter().enumerate();
                self.index = Some(keys.map(|(i, (k, _))| (k.clone(), i)).collect());
            }
            None => {}
        }
        at
    }
}

fn write(node: &Node, out: &mut String) {
    match node {
        Node::Object(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.list.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, k);
                out.push(':');
                write(v, out);
            }
            out.push('}');
        }
        Node::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(']');
        }
        Node::Str(s) => push_json_string(out, s),
        Node::Raw(r) => out.push_str(r),
    }
}

/// `s` as a JSON string literal, appended to `out`.
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[run..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(escape);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// The deepest path an update may name: the tree is written and dropped
/// recursively, so its depth must not follow the input (a path of 50,000
/// segments overflowed a worker's stack and aborted the process). Real
/// tool arguments nest a handful of levels.
const MAX_PATH_DEPTH: usize = 64;

/// `$.a.b[0]['c d']` → [a, b, 0, "c d"]; `None` when unreadable or deeper
/// than [`MAX_PATH_DEPTH`].
fn parse_path(path: &str) -> Option<Vec<Seg>> {
    let mut rest = path.strip_prefix('$')?;
    let mut segs = Vec::new();
    while !rest.is_empty() {
        if segs.len() == MAX_PATH_DEPTH {
            return None;
        }
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                if r.is_empty() {
                    break;
                }
                return None;
            }
            segs.push(Seg::Key(r[..end].to_owned()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            if let Some(q) = r.strip_prefix('\'').or_else(|| r.strip_prefix('"')) {
                let quote = if r.starts_with('\'') { '\'' } else { '"' };
                let end = q.find(quote)?;
                segs.push(Seg::Key(q[..end].to_owned()));
                rest = q[end + 1..].strip_prefix(']')?;
            } else {
                let end = r.find(']')?;
                segs.push(Seg::Index(r[..end].trim().parse().ok()?));
                rest = &r[end + 1..];
            }
        } else {
            return None;
        }
    }
    Some(segs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path deeper than [`MAX_PATH_DEPTH`] is skipped, however deep: the
    /// tree stays shallow enough to write and drop on a small stack.
    #[test]
    fn a_path_too_deep_is_skipped_not_built() {
        let deep = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut p = PartialArgs::default();
                let path = format!("${}", "[0]".repeat(100_000));
                p.apply(&path, Value::Str("x"), false);
                let keys = format!("${}", ".a".repeat(100_000));
                p.apply(&keys, Value::Str("x"), false);
                let edge = format!("${}", ".a".repeat(MAX_PATH_DEPTH));
                p.apply(&edge, Value::Raw("1"), false);
                (p.skipped, p.to_json())
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert_eq!(deep.0, 2);
        let nested = format!(
            "{}1{}",
            "{\"a\":".repeat(MAX_PATH_DEPTH),
            "}".repeat(MAX_PATH_DEPTH)
        );
        assert_eq!(deep.1, nested);
    }

    #[test]
    fn continues_a_string_across_updates() {
        let mut p = PartialArgs::default();
        p.apply("$.location", Value::Str("Boston"), true);
        p.apply("$.location", Value::Str(", MA"), false);
        assert_eq!(p.to_json(), r#"{"location":"Boston, MA"}"#);
    }

    #[test]
    fn a_string_without_continuation_is_replaced() {
        let mut p = PartialArgs::default();
        p.apply("$.a", Value::Str("x"), false);
        p.apply("$.a", Value::Str("y"), false);
        assert_eq!(p.to_json(), r#"{"a":"y"}"#);
    }

    #[test]
    fn builds_nested_objects_and_arrays_in_order() {
        let mut p = PartialArgs::default();
        p.apply("$.location", Value::Str("Boston"), false);
        p.apply("$.recipe.ingredients[0].amount", Value::Str("16 oz"), false);
        p.apply("$.recipe.ingredients[0].name", Value::Str("Noodles"), false);
        p.apply(
            "$.recipe.ingredients[1].amount",
            Value::Str("1 \"lb\""),
            false,
        );
        p.apply("$.recipe.steps[0]", Value::Str("Preheat"), true);
        p.apply("$.recipe.steps[0]", Value::Str(" oven"), false);
        p.apply("$.n", Value::Raw("50"), false);
        p.apply("$['odd key']", Value::Raw("true"), false);
        assert_eq!(
            p.to_json(),
            r#"{"location":"Boston","recipe":{"ingredients":[{"amount":"16 oz","name":"Noodles"},{"amount":"1 \"lb\""}],"steps":["Preheat oven"]},"n":50,"odd key":true}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
        let mut odd = PartialArgs::default();
        odd.apply("$.s", Value::Str("a\"b\\c\nd\u{1}é"), false);
        let back: serde_json::Value = serde_json::from_str(&odd.to_json()).unwrap();
        assert_eq!(back["s"], "a\"b\\c\nd\u{1}é");
        assert_eq!(parsed["recipe"]["steps"][0], "Preheat oven");
    }

    #[test]
    fn unreadable_paths_are_skipped_and_counted() {
        let mut p = PartialArgs::default();
        p.apply("$.", Value::Str("ignored"), false);
        p.apply("location", Value::Str("ignored"), false);
        p.apply("$.a[x]", Value::Raw("1"), false);
        assert_eq!(p.to_json(), "{}");
        assert_eq!(p.skipped, 3);
    }
}
