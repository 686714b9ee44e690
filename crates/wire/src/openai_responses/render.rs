//! Tool outcomes rendered as Responses messages (see
//! [`crate::render_results`]).

use toolwarden_core::ToolOutcome;

/// One `function_call_output` item per outcome. The API has no error flag,
/// so a failure's output is [`ToolOutcome::flagless_text`].
pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "type": "function_call_output",
                "call_id": o.call_id,
                "output": o.flagless_text(),
            })
        })
        .collect()
}
