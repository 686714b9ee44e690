//! The bound on how many items a request reader builds.
//!
//! A reader turns each message, content block, part or input item into a
//! struct (and, reading for [`validate`](crate::validate()) or
//! [`repair`](crate::repair()), into an outline entry or two). Those
//! structs are larger than the JSON of an empty item: a body made of
//! `{}`s or `{"role":"user","content":""}`s read whole took 3 to 20 times
//! its size before this bound (a 64 MiB body, over a gigabyte), before any
//! later bound — the recorder's queue, a socket's held results — applied.
//!
//! So a request body holding more than [`MAX_REQUEST_ITEMS`] JSON objects
//! and arrays nested at most [`ITEM_DEPTH`] deep is not read at all: every
//! item a reader builds is one of those (a message is at depth 3, its
//! content array at 4, a block, part or call in it at 5; Live messages
//! are shallower), while the values inside a call's arguments or a
//! result's content, which the readers keep raw, are deeper and not
//! counted. What a reader builds is then bounded by the count, whatever
//! the body's size. The caller gets [`WireErrorKind::TooLarge`]; the
//! gateway forwards such a body unread and counts it unparsed.
//!
//! Each counted value takes at least two bytes (`{}`), so a body of at
//! most twice the bound cannot exceed it and is not scanned; nor can one
//! with no more `{` and `[` bytes than the bound, wherever they are (a
//! `memchr` search: a real body holds a few thousand). Only a body over
//! 400 kB with more of them is counted: one pass, 64 bytes at a time,
//! that finds the brackets outside strings as simdjson's first stage does
//! (a block's quotes not escaped, their prefix XOR its string bytes) and
//! looks at no byte alone unless it is such a bracket.

use crate::{WireError, WireErrorKind, bytemask};

/// The most JSON objects and arrays nested at most [`ITEM_DEPTH`] deep
/// that a request body read by this crate may hold (see the module docs).
/// Far above a real conversation: even a million tokens of context spent
/// on the smallest tool calls and results (some 60 tokens a pair, six
/// values a pair) is about 100,000.
pub const MAX_REQUEST_ITEMS: usize = 200_000;

/// How deep the values [`MAX_REQUEST_ITEMS`] counts may be nested: the
/// body's top-level object is at depth 1, a `messages` array at 2, a
/// message at 3, its content array at 4, a block at 5.
pub const ITEM_DEPTH: u32 = 5;

/// `Err` ([`WireErrorKind::TooLarge`]) when `body` holds more than
/// [`MAX_REQUEST_ITEMS`] objects and arrays nested at most
/// [`ITEM_DEPTH`] deep. Not a syntax check: a body that is not JSON is
/// counted all the same (at least what a reader would build of it before
/// refusing it), and refused by the reader that follows if not here.
pub fn check_items(body: &[u8]) -> Result<(), WireError> {
    check_items_within(body, MAX_REQUEST_ITEMS)
}

/// [`check_items`] against `limit`.
pub(crate) fn check_items_within(body: &[u8], limit: usize) -> Result<(), WireError> {
    // Each counted value takes two bytes at least; and one of the bytes
    // that open a value, which real bodies hold few of outside strings
    // or in (a search for two bytes, several times faster than the count).
    if body.len() / 2 <= limit
        || memchr::memchr2_iter(b'{', b'[', body).nth(limit).is_none()
        || !containers_over(body, ITEM_DEPTH, limit)
    {
        return Ok(());
    }
    Err(WireError::new(
        WireErrorKind::TooLarge,
        format!(
            "more than {limit} messages, content blocks and other JSON objects \
             and arrays nested {ITEM_DEPTH} deep or less"
        ),
    ))
}

/// Whether `bytes` holds more than `limit` objects and arrays opened at
/// most `depth` deep (the outermost value at depth 1), brackets inside
/// strings not counted. Brackets are not matched and nothing else is
/// checked: on valid JSON the count is exact, and a reader refuses
/// invalid JSON where it stops being valid, having built only what came
/// before, which the count reads as valid JSON.
fn containers_over(bytes: &[u8], depth: u32, limit: usize) -> bool {
    let mut strings = Strings::default();
    let mut open = 0u32;
    let mut count = 0usize;
    let mut blocks = bytes.chunks_exact(64);
    let mut last = [b' '; 64];
    let tail = blocks.remainder();
    last[..tail.len()].copy_from_slice(tail);
    for block in blocks.by_ref().chain(std::iter::once(&last[..])) {
        let block: &[u8; 64] = block.try_into().expect("64 bytes");
        let found = bytemask::structure(block);
        let outside = !strings.inside(found.quotes, found.backslashes);
        let (opens, closes) = (found.opens & outside, found.closes & outside);
        let mut brackets = opens | closes;
        while brackets != 0 {
            let bit = brackets & brackets.wrapping_neg();
            brackets ^= bit;
            if opens & bit == 0 {
                open = open.saturating_sub(1);
                continue;
            }
            open += 1;
            if open <= depth {
                count += 1;
                if count > limit {
                    return true;
                }
            }
        }
    }
    false
}

/// Which bytes of each block are inside a string, carried from block to
/// block (simdjson's `json_string_scanner`).
#[derive(Default)]
struct Strings {
    /// The last block ended in an odd run of backslashes: the next
    /// block's first byte is escaped.
    escaped: bool,
    /// The last block ended inside a string.
    inside: bool,
}

impl Strings {
    /// The bytes inside a string (an opening quote counts as inside, a
    /// closing one not), given the block's quotes and backslashes.
    fn inside(&mut self, quotes: u64, backslashes: u64) -> u64 {
        let quotes = quotes & !self.escaped_bytes(backslashes);
        let mut inside = quotes;
        for shift in [1, 2, 4, 8, 16, 32] {
            inside ^= inside << shift;
        }
        if self.inside {
            inside = !inside;
        }
        self.inside = inside >> 63 == 1;
        inside
    }

    /// The bytes an odd run of backslashes before them escapes.
    fn escaped_bytes(&mut self, backslashes: u64) -> u64 {
        const EVEN: u64 = 0x5555_5555_5555_5555;
        let carried = u64::from(self.escaped);
        if backslashes == 0 {
            self.escaped = false;
            return carried;
        }
        // A backslash the last block escaped escapes nothing.
        let backslashes = backslashes & !carried;
        let follows_backslash = backslashes << 1 | carried;
        let odd_starts = backslashes & !EVEN & !follows_backslash;
        let (even_starts, overflow) = odd_starts.overflowing_add(backslashes);
        self.escaped = overflow;
        (EVEN ^ (even_starts << 1)) & follows_backslash
    }
}

#[cfg(test)]
mod tests;
