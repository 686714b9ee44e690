//! Tool outcomes rendered as Anthropic Messages messages (see
//! [`crate::render_results`]).

use serde_json::json;
use toolwarden_core::ToolOutcome;

pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let blocks: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": o.call_id,
                "content": content(o),
            });
            if o.is_failure() {
                block["is_error"] = json!(true);
            }
            block
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}

/// The block's text. Anthropic refuses an error result with empty content
/// ("content cannot be empty if `is_error` is true"): a failure whose
/// model text is blank (a tool's error with an empty message, an empty
/// override) says which kind of failure it was instead.
fn content(o: &ToolOutcome) -> String {
    let text = o.model_text();
    if !o.is_failure() || !text.trim().is_empty() {
        return text;
    }
    let kind = o.error.as_ref().map_or("error", |e| e.kind.as_str());
    format!("The tool failed ({kind}) and gave no message.")
}
