//! [`CmdError`]: what ends a command with exit 2, a leaf that the commands
//! and the settings layers (`config`) both use.

/// An error that ends a command with exit 2 and a message on stderr.
#[derive(Debug)]
pub struct CmdError(pub String);

impl<E: std::fmt::Display> From<E> for CmdError {
    fn from(e: E) -> Self {
        CmdError(e.to_string())
    }
}
