//! An Anthropic body's messages as the prefill rule reads them
//! ([`crate::prefill`]): a last `assistant` message whose string content,
//! or last `text` block, ends in whitespace is refused ("final assistant
//! content cannot end with trailing whitespace").

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::layout::Layout;
pub(super) use crate::prefill::{Cut, Text, Trim};
use crate::{
    WireError,
    prefill::{End, Prefills},
};

/// The plan, when the body ends in a prefill ending in whitespace.
pub(super) fn plan<'a>(l: &Layout<'a>) -> Result<Option<Trim<'a>>, WireError> {
    crate::prefill::plan(l)
}

// === impl Layout ===

impl<'a> Prefills<'a> for Layout<'a> {
    fn len(&self) -> usize {
        self.msgs.len()
    }

    fn ends_in_space(&self, i: usize) -> bool {
        let m = &self.msgs[i];
        m.is_assistant() && m.ends_in_space
    }

    fn string(&self, i: usize) -> Option<&'a str> {
        let m = &self.msgs[i];
        (!m.is_array).then(|| m.content.get())
    }

    fn blocks(&self, i: usize) -> usize {
        self.msgs[i].block_raws.len()
    }

    fn block(&self, i: usize, j: usize) -> Result<End<'a>, WireError> {
        #[derive(Deserialize)]
        struct TextBlock<'a> {
            #[serde(borrow, rename = "type")]
            kind: Cow<'a, str>,
            #[serde(borrow, default)]
            text: Option<&'a RawValue>,
        }
        let b: TextBlock<'a> = serde_json::from_str(self.msgs[i].block_raws[j].get())?;
        Ok(match b.text.filter(|_| b.kind == "text") {
            Some(raw) => End::Text(raw.get()),
            None => End::Other,
        })
    }
}
