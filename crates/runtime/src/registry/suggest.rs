//! The tool names an unavailable tool's text offers the model: all of
//! them when they are few; else the closest to the name called, by edit
//! distance, so that a registry of hundreds of tools (many MCP servers)
//! does not cost the model thousands of tokens per mistyped name.

/// At most this many tool names are offered.
pub(crate) const LISTED_TOOLS: usize = 10;

/// The characters of a called name compared: tool names have at most 64,
/// and the distance of a longer name grows with what is past them.
const COMPARED: usize = 64;

/// The names to offer for `called` (in registration order when all are
/// offered; else the closest first, ties in registration order).
pub(crate) fn offered<'a>(called: &str, names: &'a [String]) -> Vec<&'a str> {
    if names.len() <= LISTED_TOOLS {
        return names.iter().map(String::as_str).collect();
    }
    let called: Vec<char> = called
        .chars()
        .take(COMPARED)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let mut row = Vec::with_capacity(COMPARED + 1);
    let mut ranked: Vec<(usize, &str)> = names
        .iter()
        .map(|name| (distance(&called, name, &mut row), name.as_str()))
        .collect();
    // Stable: equally close names keep their registration order.
    ranked.sort_by_key(|(d, _)| *d);
    ranked
        .into_iter()
        .take(LISTED_TOOLS)
        .map(|(_, name)| name)
        .collect()
}

/// The Levenshtein distance between `a` (lower-cased) and `b` (compared
/// lower-cased), in one reused row.
fn distance(a: &[char], b: &str, row: &mut Vec<usize>) -> usize {
    row.clear();
    row.extend(0..=a.len());
    for (j, cb) in b.chars().take(COMPARED).enumerate() {
        let cb = cb.to_ascii_lowercase();
        let mut diagonal = row[0];
        row[0] = j + 1;
        for (i, ca) in a.iter().enumerate() {
            let above = row[i + 1];
            row[i + 1] = if *ca == cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[i])
            };
            diagonal = above;
        }
    }
    row[a.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
        distance(&a, b, &mut Vec::new())
    }

    #[test]
    fn edit_distances() {
        assert_eq!(d("", ""), 0);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("abc", ""), 3);
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("Read_fle", "read_file"), 1);
        assert_eq!(d("flaw", "lawn"), 2);
    }
}
