//! A tiny ordered JSON object writer: the mock's bodies keep the field
//! order the real APIs use (serde_json's `Value` would sort the keys).

use std::fmt::Write as _;

/// Builds one JSON object with keys in insertion order.
#[derive(Debug)]
pub(crate) struct Obj {
    buf: String,
    empty: bool,
}

impl Obj {
    pub(crate) fn new() -> Obj {
        Obj {
            buf: String::from("{"),
            empty: true,
        }
    }

    fn key(&mut self, k: &str) {
        if !self.empty {
            self.buf.push(',');
        }
        self.empty = false;
        push_str_lit(&mut self.buf, k);
        self.buf.push(':');
    }

    /// A string value.
    pub(crate) fn str(mut self, k: &str, v: &str) -> Obj {
        self.key(k);
        push_str_lit(&mut self.buf, v);
        self
    }

    /// An optional string value (`null` when absent).
    pub(crate) fn opt_str(self, k: &str, v: Option<&str>) -> Obj {
        match v {
            Some(v) => self.str(k, v),
            None => self.raw(k, "null"),
        }
    }

    /// An integer value.
    pub(crate) fn num(mut self, k: &str, v: u64) -> Obj {
        self.key(k);
        let _ = write!(self.buf, "{v}");
        self
    }

    /// A boolean value.
    pub(crate) fn bool(self, k: &str, v: bool) -> Obj {
        self.raw(k, if v { "true" } else { "false" })
    }

    /// Already-serialized JSON (an object, array, `null`…).
    pub(crate) fn raw(mut self, k: &str, raw: &str) -> Obj {
        self.key(k);
        self.buf.push_str(raw);
        self
    }

    /// The finished object text.
    pub(crate) fn done(mut self) -> String {
        self.buf.push('}');
        self.buf
    }
}

/// A JSON array of already-serialized elements.
pub(crate) fn array<I, S>(items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item.as_ref());
    }
    out.push(']');
    out
}

/// A JSON string literal.
#[cfg(test)]
pub(crate) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_str_lit(&mut out, s);
    out
}

fn push_str_lit(buf: &mut String, s: &str) {
    // serde_json's string escaping cannot fail for a &str.
    match serde_json::to_string(s) {
        Ok(lit) => buf.push_str(&lit),
        Err(_) => buf.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_insertion_order_and_escapes() {
        let o = Obj::new()
            .str("type", "a\"b")
            .num("n", 3)
            .raw("x", &array(["1", "2"]))
            .opt_str("none", None)
            .bool("t", true)
            .done();
        assert_eq!(o, r#"{"type":"a\"b","n":3,"x":[1,2],"none":null,"t":true}"#);
        let v: serde_json::Value = serde_json::from_str(&o).unwrap();
        assert_eq!(v["type"], "a\"b");
        assert_eq!(string("é\n"), "\"é\\n\"");
    }
}
