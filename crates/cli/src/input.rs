//! Reading a command's input: a file or standard input, bounded in size.

use std::{
    fmt,
    fs::File,
    io::{self, Read},
    path::Path,
};

/// The largest body the commands read (256 MiB): larger inputs get a clear
/// error instead of exhausting memory.
pub const MAX_INPUT: u64 = 256 << 20;

/// Why an input was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputErrorKind {
    /// It could not be opened or read.
    Unreadable,
    /// It holds more than the limit.
    TooLarge,
}

/// An input not read: its kind, and a message naming the input.
#[derive(Debug)]
pub struct InputError {
    kind: InputErrorKind,
    message: String,
}

/// Read `path` (or standard input for `-`) whole, at most [`MAX_INPUT`].
pub fn read(path: &Path) -> Result<Vec<u8>, InputError> {
    read_within(path, MAX_INPUT)
}

/// Read `path` (or standard input for `-`) whole, if it holds at most
/// `limit` bytes.
pub fn read_within(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let name = path.display();
    let unreadable = |message| InputError {
        kind: InputErrorKind::Unreadable,
        message,
    };
    let too_large = |message| InputError {
        kind: InputErrorKind::TooLarge,
        message,
    };
    let mut buf = Vec::new();
    let res = if path.as_os_str() == "-" {
        io::stdin().lock().take(limit + 1).read_to_end(&mut buf)
    } else {
        let file = File::open(path).map_err(|e| unreadable(format!("{name}: cannot open: {e}")))?;
        if let Ok(meta) = file.metadata()
            && meta.len() > limit
        {
            return Err(too_large(format!(
                "{name}: input too large ({} bytes; the limit is {limit})",
                meta.len()
            )));
        }
        file.take(limit + 1).read_to_end(&mut buf)
    };
    res.map_err(|e| unreadable(format!("{name}: cannot read: {e}")))?;
    if buf.len() as u64 > limit {
        return Err(too_large(format!(
            "{name}: input too large (over {limit} bytes)"
        )));
    }
    Ok(buf)
}

// === impl InputError ===

impl InputError {
    /// Why the input was not read.
    pub fn kind(&self) -> InputErrorKind {
        self.kind
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InputError {}
