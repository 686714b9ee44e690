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
                "content": o.model_text(),
            });
            if o.is_failure() {
                block["is_error"] = json!(true);
            }
            block
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}
