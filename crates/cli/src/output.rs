//! Standard output for the commands' results: `out!` and `outln!`,
//! `print!` and `println!` that return their error. A reader that went
//! away (`toolwarden stats | head -1`) ends the output quietly, as for any
//! command-line tool: `println!` panics on it, Rust ignoring SIGPIPE.
//! Standard error likewise: `err!` and `errln!`, `eprint!` and
//! `eprintln!` that never panic (`toolwarden serve 2>&1 | head`, a log
//! collector that went away: there is nowhere left to say so).

use std::io::Write;

use crate::error::CmdError;

/// Writes `text` to standard output; a closed pipe is not an error.
pub(crate) fn print(text: std::fmt::Arguments<'_>) -> Result<(), CmdError> {
    let mut stdout = std::io::stdout().lock();
    written(stdout.write_fmt(text).and_then(|()| stdout.flush()))
}

/// Writes `bytes` (a body, `toolwarden repair`) to standard output; a
/// closed pipe is not an error.
pub(crate) fn print_bytes(bytes: &[u8]) -> Result<(), CmdError> {
    let mut stdout = std::io::stdout().lock();
    written(stdout.write_all(bytes).and_then(|()| stdout.flush()))
}

/// Writes `text` to standard error; an error is dropped, as there is no
/// other place to report it (`eprint!` panics on it).
pub(crate) fn print_err(text: std::fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_fmt(text).and_then(|()| stderr.flush());
}

/// The outcome of a write to standard output: a reader that went away
/// ends the output, it is not an error.
fn written(result: std::io::Result<()>) -> Result<(), CmdError> {
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CmdError(format!("cannot write to standard output: {e}"))),
    }
}

/// `print!`, returning the error with `?` (see the module docs).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!($($arg)*))?
    };
}

/// `println!`, returning the error with `?` (see the module docs).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `eprint!` that never panics (see the module docs).
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::output::print_err(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics (see the module docs).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::print_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}
