//! `toolwarden repair`: the repaired body on stdout, the report on stderr.

use std::path::Path;

use toolwarden_wire::Dialect;

use super::{
    CmdError, Outcome,
    check::{body_model, resolve_dialect, target},
};
use crate::{input, terminal::shown};

/// Run `repair` on one file, for `model` (else the body's own).
pub fn run(
    dialect: Option<Dialect>,
    model: Option<&str>,
    file: &Path,
) -> Result<Outcome, CmdError> {
    let body = input::read(file)?;
    let dialect = resolve_dialect(dialect, &body, file)?;
    let model = model.map(str::to_owned).or_else(|| body_model(&body));
    let repaired = toolwarden_wire::repair(target(dialect, model.as_deref()), &body)
        .map_err(|e| CmdError(format!("{}: {e}", file.display())))?;
    // A reader that stops early (`| head`) ends the body there, exit 0;
    // the report still goes to stderr (where a reader that went away
    // ends it too).
    crate::output::print_bytes(&repaired.body)?;
    if repaired.changes.is_empty() {
        errln!("repair: {dialect}: no defects; body unchanged");
    } else {
        errln!("repair: {dialect}: {} change(s)", repaired.changes.len());
        // A description names the call's id, chosen by the client: written
        // out, as `check` does (`terminal`).
        for c in &repaired.changes {
            errln!(
                "  message {:>4}  {:<26} {}",
                c.message_index,
                format!("{:?}", c.kind),
                shown(&c.description)
            );
        }
    }
    Ok(Outcome::Ok)
}
