//! Claude's rule for a prefill (a last assistant message, which the model
//! goes on from) ending in whitespace, which it refuses ("final assistant
//! content cannot end with trailing whitespace"), and what repair does to
//! one: its last text loses that whitespace; a text block left empty goes
//! (and the one before it is looked at in turn); a message left empty goes
//! (and the message before it, if a prefill, is looked at in turn: the API
//! would join two assistant messages), unless it is the first, which is
//! left as it came.
//!
//! Shared by the dialects that reach Claude: Anthropic's Messages API and
//! Bedrock Converse with a Claude model (which passes Claude's refusal on);
//! each reads its own body shape through [`Prefills`].

use crate::{WireError, splice::Str};

/// A body's messages as the prefill rule reads them.
pub(crate) trait Prefills<'a> {
    /// How many messages the body holds.
    fn len(&self) -> usize;

    /// Whether message `i` is an assistant message whose content, as the
    /// provider will judge it, ends in whitespace ([`ends_in_space`]) or
    /// in nothing at all (its blocks all [`End::Gone`]).
    fn ends_in_space(&self, i: usize) -> bool;

    /// Message `i`'s content when it is a string (not blocks): its raw JSON.
    fn string(&self, i: usize) -> Option<&'a str>;

    /// How many blocks message `i` holds (none when its content is a
    /// string).
    fn blocks(&self, i: usize) -> usize;

    /// What block `j` of message `i` is, as the rule reads it.
    fn block(&self, i: usize, j: usize) -> Result<End<'a>, WireError>;
}

/// A block, as the prefill rule reads it.
pub(crate) enum End<'a> {
    /// A text block: its text, raw JSON.
    Text(&'a str),
    /// A block that goes whatever this rule says (another rule removes it):
    /// the one before it is looked at.
    Gone,
    /// Anything else: what comes before it stays as it is.
    Other,
}

/// The plan for a body's prefill.
pub(crate) struct Trim<'a> {
    /// Messages from this index on go: prefills of only whitespace.
    pub keep_messages: usize,
    /// The last message kept, cut, when it is a prefill ending in
    /// whitespace.
    pub cut: Option<Cut<'a>>,
}

/// What is kept of one prefill.
pub(crate) struct Cut<'a> {
    pub msg: usize,
    /// Its blocks from this index on go: text of only whitespace (a string
    /// content counts as one block); 0: the message goes.
    pub keep_blocks: usize,
    /// The text that loses its trailing whitespace.
    pub text: Option<Text<'a>>,
}

/// A text and what is kept of it.
pub(crate) struct Text<'a> {
    /// The `text` block's index; `None` when it is the content, a string.
    pub block: Option<usize>,
    /// The raw JSON string.
    pub raw: &'a str,
    /// Its text without the whitespace it ends with.
    pub kept: String,
}

/// `text` without the whitespace it ends with, whitespace as JavaScript's
/// `String.prototype.trimEnd` takes it (the AI SDK's Anthropic provider
/// trims a prefill so): Unicode `White_Space` but U+0085, and U+FEFF.
pub(crate) fn trim_end_js(text: &str) -> &str {
    text.trim_end_matches(is_js_space)
}

/// Whether `text` ends in whitespace (see [`trim_end_js`]).
pub(crate) fn ends_in_space(text: &str) -> bool {
    text.chars().next_back().is_some_and(is_js_space)
}

/// JavaScript's whitespace (see [`trim_end_js`]).
pub(crate) fn is_js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// The plan, when the body ends in a prefill ending in whitespace.
pub(crate) fn plan<'a>(msgs: &impl Prefills<'a>) -> Result<Option<Trim<'a>>, WireError> {
    let mut end = msgs.len();
    while let Some(i) = end.checked_sub(1) {
        if !msgs.ends_in_space(i) {
            break;
        }
        let cut = cut(msgs, i)?;
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
    Ok((end < msgs.len()).then_some(Trim {
        keep_messages: end,
        cut: None,
    }))
}

/// What is kept of prefill `i`.
fn cut<'a>(msgs: &impl Prefills<'a>, i: usize) -> Result<Cut<'a>, WireError> {
    if let Some(raw) = msgs.string(i) {
        // A string: one block, as far as the count goes.
        let text = kept(None, raw);
        let emptied = text.as_ref().is_some_and(|t| t.kept.is_empty());
        return Ok(Cut {
            msg: i,
            keep_blocks: usize::from(!emptied),
            text: text.filter(|_| !emptied),
        });
    }
    let mut n = msgs.blocks(i);
    let mut text = None;
    while let Some(j) = n.checked_sub(1) {
        let raw = match msgs.block(i, j)? {
            End::Text(raw) => raw,
            End::Gone => {
                n = j;
                continue;
            }
            End::Other => break,
        };
        match kept(Some(j), raw) {
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
