//! `toolwarden repair`: the repaired body on stdout, the report on stderr.

use std::{
    io::{self, Write},
    path::Path,
};

use toolwarden_wire::Dialect;

use super::{CmdError, Outcome, check::resolve_dialect};
use crate::input;

/// Run `repair` on one file.
pub fn run(dialect: Option<Dialect>, file: &Path) -> Result<Outcome, CmdError> {
    let body = input::read(file).map_err(CmdError)?;
    let dialect = resolve_dialect(dialect, &body, file)?;
    let repaired = toolwarden_wire::repair(dialect, &body)
        .map_err(|e| CmdError(format!("{}: {e}", file.display())))?;
    // A reader that stops early (`| head`) ends the body there, exit 0;
    // the report still goes to stderr.
    crate::output::print_bytes(&repaired.body)?;
    let mut err = io::stderr().lock();
    if repaired.changes.is_empty() {
        writeln!(err, "repair: {dialect}: no defects; body unchanged")?;
    } else {
        writeln!(
            err,
            "repair: {dialect}: {} change(s)",
            repaired.changes.len()
        )?;
        for c in &repaired.changes {
            writeln!(
                err,
                "  message {:>4}  {:<26} {}",
                c.message_index,
                format!("{:?}", c.kind),
                c.description
            )?;
        }
    }
    Ok(Outcome::Ok)
}
