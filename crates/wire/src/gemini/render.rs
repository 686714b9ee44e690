//! Tool outcomes rendered as Gemini messages (see
//! [`crate::render_results`]).

use toolwarden_core::ToolOutcome;

/// One `user` content with a `functionResponse` part per outcome:
/// `{"output": …}` on success, `{"error": {"kind", "message"}}` on failure.
/// The `id` is sent back only when the call had a real one (not
/// `<name>#<n>`).
pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let parts: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let response = match &o.error {
                Some(e) => serde_json::json!({
                    "error": { "kind": e.kind.as_str(), "message": e.model_message }
                }),
                None => serde_json::json!({
                    "output": o.output.clone().unwrap_or(serde_json::Value::String(String::new()))
                }),
            };
            let mut call = serde_json::Map::new();
            call.insert("name".into(), o.tool.clone().into());
            if !o.call_id.is_empty() && !super::turns::is_synthetic(&o.call_id, &o.tool) {
                call.insert("id".into(), o.call_id.clone().into());
            }
            call.insert("response".into(), response);
            serde_json::json!({ "functionResponse": call })
        })
        .collect();
    vec![serde_json::json!({ "role": "user", "parts": parts })]
}
