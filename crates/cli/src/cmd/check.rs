//! `toolwarden check`: the calls, results, failures and pairing defects of a body.

use std::path::Path;

use serde_json::json;
use toolwarden_wire::{Detector, Dialect, RequestView, ResultContent, Target};

use super::{CmdError, Outcome};
use crate::{
    input,
    terminal::{cell, shown},
};

/// The detector `serve` would judge with: its `detector_extra_patterns`
/// and `detector_disable` from `toolwarden.toml` and the `TOOLWARDEN_*`
/// variables.
fn configured_detector(config: Option<&Path>) -> Result<Detector, CmdError> {
    let raw = crate::config::file_and_env(config)?;
    let config = toolwarden_wire::detect::DetectorConfig {
        extra_patterns: raw.detector_extra_patterns.map(|p| p.0).unwrap_or_default(),
        disable: raw.detector_disable.unwrap_or_default(),
    };
    Detector::new(&config).map_err(|e| CmdError(format!("detector: {e}")))
}

/// Run `check` on one file, for `model` (else the body's own).
pub fn run(
    dialect: Option<Dialect>,
    model: Option<&str>,
    file: &Path,
    as_json: bool,
    config: Option<&Path>,
) -> Result<Outcome, CmdError> {
    let body = input::read(file)?;
    let dialect = resolve_dialect(dialect, &body, file)?;
    let detector = configured_detector(config)?;
    let mut view = toolwarden_wire::request_view(dialect, &body)
        .map_err(|e| CmdError(format!("{}: {e}", file.display())))?;
    if let Some(model) = model {
        view.model = Some(model.into());
    }
    let target = target(dialect, view.model.as_deref());
    // Every result is shown, so every result is read.
    let calls = toolwarden_wire::CallIndex::new(&view);
    let reads = view
        .results
        .iter()
        .map(|r| r.read_for_call(&detector, calls.call_for(r)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CmdError(format!("{}: a tool result's content: {e}", file.display())))?;
    let defects = toolwarden_wire::validate(target, &body)
        .map_err(|e| CmdError(format!("{}: {e}", file.display())))?;
    if as_json {
        outln!("{}", to_json(dialect, &view, &reads, &defects));
    } else {
        out!(
            "{}",
            render_table(dialect, &view, &reads, &defects, &detector)
        );
    }
    Ok(if defects.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

/// What a body to `dialect` for the model `model` names (`--model`, else
/// the body's own `model`) is judged against: the family is decided as
/// the gateway decides it from a request's path ([`Target::of_path`]), so
/// `check` and `repair` apply the rules `serve` would.
pub fn target(dialect: Dialect, model: Option<&str>) -> Target {
    Target::of_path(dialect, model)
}

/// The `model` a body names at its top level (Anthropic, Chat, Responses;
/// Gemini's and Bedrock's is in the URL), read without the rest.
pub fn body_model(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Top {
        #[serde(default)]
        model: Option<String>,
    }
    serde_json::from_slice::<Top>(body).ok()?.model
}

/// The dialect named on the command line, or the one the body looks like.
pub fn resolve_dialect(
    dialect: Option<Dialect>,
    body: &[u8],
    file: &Path,
) -> Result<Dialect, CmdError> {
    match dialect {
        Some(d) => Ok(d),
        None => Dialect::sniff(body).ok_or_else(|| {
            // Not JSON: naming a dialect would not help, so it is not suggested.
            match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                Err(e) => CmdError(format!("{}: invalid JSON: {e}", file.display())),
                Ok(_) => CmdError(format!(
                    "{}: cannot tell the dialect (no `messages`, `input` or `contents` \
                     array found); pass --dialect",
                    file.display()
                )),
            }
        }),
    }
}

/// `reads[i]` is `view.results[i]` read.
fn to_json(
    dialect: Dialect,
    view: &RequestView<'_>,
    reads: &[ResultContent<'_>],
    defects: &[toolwarden_wire::Defect],
) -> serde_json::Value {
    json!({
        "dialect": dialect.as_str(),
        "model": view.model,
        "messages": view.message_count,
        "calls": view.calls.iter().map(|c| json!({
            "id": c.id, "name": c.name, "message_index": c.message_index,
        })).collect::<Vec<_>>(),
        "results": view.results.iter().zip(reads).map(|(r, read)| json!({
            "call_id": r.call_id,
            "tool": r.tool,
            "failed": read.verdict.failed,
            "basis": read.verdict.basis.as_str(),
            "new": r.new,
            "message_index": r.message_index,
        })).collect::<Vec<_>>(),
        "defects": defects.iter().map(|d| json!({
            "kind": d.kind.as_str(),
            "message_index": d.message_index,
            "call_ids": d.call_ids,
            "message": d.message,
        })).collect::<Vec<_>>(),
    })
}

/// `reads[i]` is `view.results[i]` read.
fn render_table(
    dialect: Dialect,
    view: &RequestView<'_>,
    reads: &[ResultContent<'_>],
    defects: &[toolwarden_wire::Defect],
    detector: &Detector,
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let failed = reads.iter().filter(|r| r.verdict.failed).count();
    let new = view.results.iter().filter(|r| r.new).count();
    let _ = writeln!(
        out,
        "dialect {}  model {}  messages {}  calls {}  results {} ({} new)  failures {}  defects {}",
        dialect,
        shown(view.model.as_deref().unwrap_or("-")),
        view.message_count,
        view.calls.len(),
        view.results.len(),
        new,
        failed,
        defects.len()
    );
    if !view.results.is_empty() {
        let _ = writeln!(
            out,
            "\n{:>5}  {:<36} {:<24} {:<8} {:<10} {:<4} why",
            "msg", "call id", "tool", "result", "basis", "new"
        );
        let calls = toolwarden_wire::CallIndex::new(view);
        for (r, read) in view.results.iter().zip(reads) {
            let verdict = if read.verdict.failed { "FAILED" } else { "ok" };
            let command = calls
                .call_for(r)
                .and_then(|c| toolwarden_wire::detect::command_of(&c.arguments));
            let why =
                if read.verdict.failed && read.verdict.basis == toolwarden_core::Basis::Heuristic {
                    detector
                        .explain_for_command(&read.text, command.as_deref())
                        .unwrap_or("")
                } else {
                    ""
                };
            let _ = writeln!(
                out,
                "{:>5}  {:<36} {:<24} {:<8} {:<10} {:<4} {}",
                r.message_index,
                cell(&r.call_id, 36),
                cell(r.tool.as_deref().unwrap_or("?"), 24),
                verdict,
                read.verdict.basis.as_str(),
                if r.new { "yes" } else { "" },
                why
            );
        }
    }
    if !view.calls.is_empty() {
        let answered: std::collections::HashSet<&str> =
            view.results.iter().map(|r| r.call_id.as_ref()).collect();
        let open: Vec<_> = view
            .calls
            .iter()
            .filter(|c| !answered.contains(c.id.as_ref()))
            .collect();
        if !open.is_empty() {
            let _ = writeln!(out, "\ncalls without a result:");
            for c in open {
                let _ = writeln!(
                    out,
                    "{:>5}  {:<36} {}",
                    c.message_index,
                    cell(&c.id, 36),
                    shown(&c.name)
                );
            }
        }
    }
    if !defects.is_empty() {
        let _ = writeln!(
            out,
            "\npairing defects (a strict provider rejects this body):"
        );
        for d in defects {
            let _ = writeln!(
                out,
                "{:>5}  {:<20} {}",
                d.message_index,
                d.kind.as_str(),
                shown(&d.message)
            );
        }
    }
    out
}
