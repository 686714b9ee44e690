//! What repair does to a prefill ending in whitespace, which the API
//! refuses ("final assistant content cannot end with trailing
//! whitespace"): its last text loses that whitespace; a text block left
//! empty goes (and the one before it is looked at in turn); a message left
//! empty goes (and the message before it, if a prefill, is looked at in
//! turn: the API would join two assistant messages), unless it is the
//! first, which is left as it came.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    layout::{Layout, Msg},
    model::trim_end_js,
};
use crate::{WireError, splice::Str};

/// The plan for a body's prefill.
pub(super) struct Trim<'a> {
    /// Messages from this index on go: prefills of only whitespace.
    pub keep_messages: usize,
    /// The last message kept, cut, when it is a prefill ending in
    /// whitespace.
    pub cut: Option<Cut<'a>>,
}

/// What is kept of one prefill.
pub(super) struct Cut<'a> {
    pub msg: usize,
    /// Its blocks from this index on go: text of only whitespace (a string
    /// content counts as one block); 0: the message goes.
    pub keep_blocks: usize,
    /// The text that loses its trailing whitespace.
    pub text: Option<Text<'a>>,
}

/// A text and what is kept of it.
pub(super) struct Text<'a> {
    /// The `text` block's index; `None` when it is the content, a string.
    pub block: Option<usize>,
    /// The raw JSON string.
    pub raw: &'a str,
    /// Its text without the whitespace it ends with.
    pub kept: String,
}

/// The plan, when the body ends in a prefill ending in whitespace.
pub(super) fn plan<'a>(l: &Layout<'a>) -> Result<Option<Trim<'a>>, WireError> {
    let mut end = l.msgs.len();
    while let Some(i) = end.checked_sub(1) {
        let m = &l.msgs[i];
        if !(m.is_assistant() && m.ends_in_space) {
            break;
        }
        let cut = cut(i, m)?;
        if cut.keep_blocks > 0 {
            return Ok(Some(Trim {
                keep_messages: end,
                cut: Some(cut),
            }));
        }
        if i == 0 {
            break;
        }
        end = i;
    }
    Ok((end < l.msgs.len()).then_some(Trim {
        keep_messages: end,
        cut: None,
    }))
}

/// What is kept of prefill `m`, message `i`.
fn cut<'a>(i: usize, m: &Msg<'a>) -> Result<Cut<'a>, WireError> {
    #[derive(Deserialize)]
    struct TextBlock<'a> {
        #[serde(borrow, rename = "type")]
        kind: Cow<'a, str>,
        #[serde(borrow, default)]
        text: Option<&'a RawValue>,
    }
    if !m.is_array {
        // A string: one block, as far as the count goes.
        let text = kept(None, m.content.get());
        let emptied = text.as_ref().is_some_and(|t| t.kept.is_empty());
        return Ok(Cut {
            msg: i,
            keep_blocks: usize::from(!emptied),
            text: text.filter(|_| !emptied),
        });
    }
    let mut n = m.block_raws.len();
    let mut text = None;
    while let Some(j) = n.checked_sub(1) {
        let b: TextBlock<'a> = serde_json::from_str(m.block_raws[j].get())?;
        let Some(raw) = b.text.filter(|_| b.kind == "text") else {
            break;
        };
        match kept(Some(j), raw.get()) {
            Some(t) if t.kept.is_empty() => n = j,
            t => {
                text = t;
                break;
            }
        }
    }
    Ok(Cut {
        msg: i,
        keep_blocks: n,
        text: text.filter(|t| !t.kept.is_empty()),
    })
}

/// The text of raw JSON string `raw` without the whitespace it ends with;
/// `None` when it is no string, or ends in none.
fn kept(block: Option<usize>, raw: &str) -> Option<Text<'_>> {
    let s: Str<'_> = serde_json::from_str(raw).ok()?;
    let kept = trim_end_js(&s.0);
    (kept.len() < s.0.len()).then(|| Text {
        block,
        raw,
        kept: kept.to_string(),
    })
}
