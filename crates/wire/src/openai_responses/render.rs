//! Tool outcomes rendered as Responses messages (see
//! [`crate::render_results`] and [`crate::render_answers`]).

use serde_json::{Value, json};
use toolwarden_core::ToolOutcome;

use super::{model::CallKind, repair::BLANK_PNG};

/// One `function_call_output` item per outcome. The API has no error flag,
/// so a failure's output is [`ToolOutcome::flagless_text`].
pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<Value> {
    outcomes
        .iter()
        .map(|o| render(o, CallKind::Function))
        .collect()
}

/// One output item per outcome, of the kind `kind_of` its call id gives.
pub(crate) fn render_answers(
    outcomes: &[ToolOutcome],
    kind_of: impl Fn(&str) -> CallKind,
) -> Vec<Value> {
    outcomes
        .iter()
        .map(|o| render(o, kind_of(&o.call_id)))
        .collect()
}

/// The output item answering a call of `kind` with `o`:
/// - function, custom and local shell tools: the text, a failure's as
///   [`ToolOutcome::flagless_text`];
/// - `shell`: one output part; a tool's object output with `stdout`,
///   `stderr` and `exit_code` gives them, any other output is the
///   `stdout` of exit code 0, a failure the `stderr` of exit code 1;
/// - `apply_patch`: the text, with `status` `failed` for a failure;
/// - `computer`: the text is the screenshot's `image_url`; a failure,
///   whose text is no URL (the API refuses it), a blank screenshot with
///   `status` `incomplete`, as the repair writes;
/// - a client tool search: the tools it loaded, a tool's output `{"tools":
///   [...]}` or an array; none for a failure or any other output, which
///   is then `incomplete`.
fn render(o: &ToolOutcome, kind: CallKind) -> Value {
    let failed = o.error.is_some();
    match kind {
        CallKind::Function | CallKind::Custom | CallKind::LocalShell => json!({
            "type": kind.output_type(),
            "call_id": o.call_id,
            "output": o.flagless_text(),
        }),
        CallKind::Shell => json!({
            "type": kind.output_type(),
            "call_id": o.call_id,
            "output": [shell_part(o)],
        }),
        CallKind::ApplyPatch => json!({
            "type": kind.output_type(),
            "call_id": o.call_id,
            "status": if failed { "failed" } else { "completed" },
            "output": o.model_text(),
        }),
        CallKind::Computer if failed => json!({
            "type": kind.output_type(),
            "call_id": o.call_id,
            "status": "incomplete",
            "output": {"type": "computer_screenshot", "image_url": BLANK_PNG},
        }),
        CallKind::Computer => json!({
            "type": kind.output_type(),
            "call_id": o.call_id,
            "output": {"type": "computer_screenshot", "image_url": o.model_text()},
        }),
        CallKind::ToolSearch => {
            let tools = match &o.output {
                _ if failed => None,
                Some(Value::Object(m)) => m.get("tools").filter(|t| t.is_array()),
                Some(tools @ Value::Array(_)) => Some(tools),
                _ => None,
            };
            json!({
                "type": kind.output_type(),
                "execution": "client",
                "call_id": o.call_id,
                "status": if tools.is_some() { "completed" } else { "incomplete" },
                "tools": tools.cloned().unwrap_or_else(|| json!([])),
            })
        }
    }
}

/// A `shell_call_output`'s one part for `o`.
fn shell_part(o: &ToolOutcome) -> Value {
    let exit = |code: i64| json!({"type": "exit", "exit_code": code});
    if o.error.is_some() {
        return json!({"stdout": "", "stderr": o.model_text(), "outcome": exit(1)});
    }
    match &o.output {
        Some(Value::Object(m)) if m.contains_key("stdout") || m.contains_key("exit_code") => {
            let text = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let code = m.get("exit_code").and_then(Value::as_i64).unwrap_or(0);
            json!({"stdout": text("stdout"), "stderr": text("stderr"), "outcome": exit(code)})
        }
        _ => json!({"stdout": o.model_text(), "stderr": "", "outcome": exit(0)}),
    }
}
