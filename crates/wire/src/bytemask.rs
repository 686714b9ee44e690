//! 64-byte blocks as bit masks of the bytes that matter to a JSON string
//! (one bit per byte, bit `k` for `block[k]`): four 16-byte SIMD compares
//! via `wide` (SSE2 on x86-64, NEON on aarch64, plain code elsewhere), so
//! the crate needs no `unsafe`. Shared by the scanner (`scan`), which looks
//! for a string's end, `text::unescape`, which looks for escapes, and
//! `item_limit`, which counts the brackets outside strings.

use wide::{i8x16, u8x16};

/// The bytes that stop a string's fast scan: `"`, `\` and the control
/// characters JSON forbids in one.
#[inline]
pub(crate) fn stops(block: &[u8; 64]) -> u64 {
    let quote = u8x16::splat(b'"');
    let backslash = u8x16::splat(b'\\');
    let control = u8x16::splat(0x1f);
    lanes(block, |v| {
        v.cmp_eq(quote) | v.cmp_eq(backslash) | v.max(control).cmp_eq(control)
    })
}

/// The backslashes.
#[inline]
pub(crate) fn backslashes(block: &[u8; 64]) -> u64 {
    let backslash = u8x16::splat(b'\\');
    lanes(block, |v| v.cmp_eq(backslash))
}

/// A block's JSON structure, one mask each: quotes, backslashes, and the
/// brackets that open (`{`, `[`) and close (`}`, `]`) a value. Each lane
/// is loaded once for the four.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Structure {
    pub quotes: u64,
    pub backslashes: u64,
    pub opens: u64,
    pub closes: u64,
}

/// See [`Structure`].
#[inline]
pub(crate) fn structure(block: &[u8; 64]) -> Structure {
    let quote = u8x16::splat(b'"');
    let backslash = u8x16::splat(b'\\');
    // `[` and `]` are `{` and `}` without bit 5: one compare each.
    let bit5 = u8x16::splat(0x20);
    let open = u8x16::splat(b'{');
    let close = u8x16::splat(b'}');
    let mut out = Structure {
        quotes: 0,
        backslashes: 0,
        opens: 0,
        closes: 0,
    };
    for (k, lane) in block.chunks_exact(16).enumerate() {
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(lane);
        let v = u8x16::new(bytes);
        let folded = v | bit5;
        let mask = |hit: u8x16| {
            let hit: i8x16 = bytemuck::cast(hit);
            u64::from(hit.move_mask() as u16) << (16 * k)
        };
        out.quotes |= mask(v.cmp_eq(quote));
        out.backslashes |= mask(v.cmp_eq(backslash));
        out.opens |= mask(folded.cmp_eq(open));
        out.closes |= mask(folded.cmp_eq(close));
    }
    out
}

/// `hit` on each 16-byte lane, the lanes' masks joined.
#[inline(always)]
fn lanes(block: &[u8; 64], hit: impl Fn(u8x16) -> u8x16) -> u64 {
    let mut mask = 0u64;
    for (k, lane) in block.chunks_exact(16).enumerate() {
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(lane);
        let hit: i8x16 = bytemuck::cast(hit(u8x16::new(bytes)));
        // `move_mask` sets one bit per lane: the low 16 bits.
        mask |= u64::from(hit.move_mask() as u16) << (16 * k);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Each bit says what its byte is.
        #[test]
        fn bits_are_the_bytes(block in proptest::array::uniform32(proptest::prelude::any::<u8>()),
                              more in proptest::array::uniform32(proptest::prelude::any::<u8>())) {
            let mut b = [0u8; 64];
            b[..32].copy_from_slice(&block);
            b[32..].copy_from_slice(&more);
            let (s, bs) = (stops(&b), backslashes(&b));
            let st = structure(&b);
            for (k, &byte) in b.iter().enumerate() {
                let bit = |m: u64| m >> k & 1 == 1;
                proptest::prop_assert_eq!(bit(st.quotes), byte == b'"');
                proptest::prop_assert_eq!(bit(st.backslashes), byte == b'\\');
                proptest::prop_assert_eq!(bit(st.opens), matches!(byte, b'{' | b'['));
                proptest::prop_assert_eq!(bit(st.closes), matches!(byte, b'}' | b']'));
                proptest::prop_assert_eq!(bs >> k & 1 == 1, byte == b'\\');
                proptest::prop_assert_eq!(s >> k & 1 == 1, matches!(byte, b'"' | b'\\' | 0..=0x1f));
            }
        }
    }
}
