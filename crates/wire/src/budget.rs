//! [`Budget`]: how many bytes a stream parser may keep.
//!
//! A stream's state grows with its tool calls and their arguments, not with
//! the stream's length; but nothing bounds those. A stream whose argument
//! deltas never stop, or that opens call after call, would grow the
//! parser's memory as long as it runs. A budget bounds what is kept: each
//! call costs [`ENTRY_COST`] plus its id and name, each kept piece of
//! argument text its length. Past the budget the parser keeps nothing
//! more — no argument text, no new call — and says so
//! ([`ResponseView::truncated`](crate::ResponseView::truncated)); it still
//! reads the events for usage, stop reason and errors. The cut is one-way,
//! so a call's kept arguments are a prefix of what was sent, never text
//! with a hole in it.
//!
//! What is charged depends only on the events, not on how the bytes were
//! split into chunks: the cut falls at the same place however they arrive.

/// What one kept entry (a call, a Gemini partial-argument update) costs
/// beyond its text: its struct and its lookup-table slot, roughly.
pub(crate) const ENTRY_COST: usize = 64;

/// The bytes a stream state may still keep (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    size: usize,
    left: usize,
    cut: bool,
}

impl Default for Budget {
    /// No bound (whole bodies, and [`StreamParser::new`](crate::StreamParser::new)).
    fn default() -> Self {
        Budget::new(usize::MAX)
    }
}

impl Budget {
    /// A budget of `bytes`.
    pub(crate) fn new(bytes: usize) -> Budget {
        Budget {
            size: bytes,
            left: bytes,
            cut: false,
        }
    }

    /// Take `n` bytes for something about to be kept. `false` when fewer
    /// are left, or the budget was already cut: then it is cut for good.
    pub(crate) fn take(&mut self, n: usize) -> bool {
        if self.cut || n > self.left {
            self.cut = true;
            return false;
        }
        self.left -= n;
        true
    }

    /// Append `piece` to `to` if the budget has room for it.
    pub(crate) fn append(&mut self, to: &mut String, piece: &str) {
        if self.take(piece.len()) {
            to.push_str(piece);
        }
    }

    /// Replace `to` with `text` if the budget has room for what it grows by.
    pub(crate) fn replace(&mut self, to: &mut String, text: &str) {
        if self.take(text.len().saturating_sub(to.len())) {
            to.clear();
            to.push_str(text);
        }
    }

    /// The bytes taken so far: what the state keeps.
    pub(crate) fn kept(&self) -> usize {
        self.size - self.left
    }

    /// Whether the budget ran out: something was not kept.
    pub(crate) fn is_cut(&self) -> bool {
        self.cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_is_for_good_so_kept_text_is_a_prefix() {
        let mut b = Budget::new(10);
        let mut s = String::new();
        b.append(&mut s, "abcd");
        b.append(&mut s, "efghijk");
        assert!(b.is_cut());
        // Room is left for this one, but text after a hole is not kept.
        b.append(&mut s, "x");
        assert_eq!(s, "abcd");
        assert!(!b.take(0));
    }

    #[test]
    fn a_replacement_is_charged_for_its_growth() {
        let mut b = Budget::new(6);
        let mut s = String::from("abcd");
        b.replace(&mut s, "abcdef");
        b.replace(&mut s, "xy");
        assert_eq!((s.as_str(), b.is_cut()), ("xy", false));
        b.replace(&mut s, "123456789");
        assert_eq!((s.as_str(), b.is_cut()), ("xy", true));
    }
}
