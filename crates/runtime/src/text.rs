//! Text helpers shared by the executor and the metrics.

/// At most `max` bytes of `s`, cut at a character boundary.
pub(crate) fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

#[cfg(test)]
mod tests {
    #[test]
    fn clip_cuts_at_a_character_boundary() {
        assert_eq!(super::clip("héllo", 2), "h");
        assert_eq!(super::clip("héllo", 3), "hé");
        assert_eq!(super::clip("abc", 9), "abc");
    }
}
