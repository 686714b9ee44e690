//! Gemini `generateContent`: 400 `INVALID_ARGUMENT`, worded as the API
//! words it. Gemini pairs by turn and count, not by id:
//!
//! - a model turn with `functionCall` parts must come right after a user
//!   turn or a function response turn: "Please ensure that function call
//!   turn comes immediately after a user turn or after a function response
//!   turn." (also when the turn after the calls is another call turn);
//! - the turn after it must hold as many `functionResponse` parts as it has
//!   `functionCall` parts: "Please ensure that the number of function
//!   response parts is equal to the number of function call parts of the
//!   function call turn.";
//! - a turn of function responses must come right after a function call
//!   turn: "Please ensure that function response turn comes immediately
//!   after a function call turn."
//!
//! (googleapis/python-genai and google-gemini/gemini-cli issue threads
//! quote all three.)

use serde_json::Value;

use super::{list, text};

pub(crate) const CALL_TURN_TEXT: &str = "Please ensure that function call turn comes immediately after a user turn or after a function response turn.";
pub(crate) const COUNT_TEXT: &str = "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
pub(crate) const RESPONSE_TURN_TEXT: &str =
    "Please ensure that function response turn comes immediately after a function call turn.";

/// One turn: who speaks, how many calls and responses it holds.
struct Turn {
    model: bool,
    calls: usize,
    responses: usize,
}

pub(super) fn violation(body: &Value) -> Option<String> {
    let turns: Vec<Turn> = list(body, "contents")
        .iter()
        .map(|c| {
            let parts = list(c, "parts");
            Turn {
                model: text(c, "role") == "model",
                calls: parts
                    .iter()
                    .filter(|p| p.get("functionCall").is_some())
                    .count(),
                responses: parts
                    .iter()
                    .filter(|p| p.get("functionResponse").is_some())
                    .count(),
            }
        })
        .collect();
    for (k, t) in turns.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| &turns[p]);
        if t.model && t.calls > 0 {
            if prev.is_none_or(|p| p.model) {
                return Some(CALL_TURN_TEXT.to_string());
            }
            match turns.get(k + 1) {
                Some(n) if !n.model && n.responses > 0 => {
                    if n.responses != t.calls {
                        return Some(COUNT_TEXT.to_string());
                    }
                }
                Some(n) if n.model && n.calls > 0 => return Some(CALL_TURN_TEXT.to_string()),
                _ => return Some(COUNT_TEXT.to_string()),
            }
        }
        if !t.model && t.responses > 0 && !prev.is_some_and(|p| p.model && p.calls > 0) {
            return Some(RESPONSE_TURN_TEXT.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(contents: Value) -> Option<String> {
        violation(&json!({"contents": contents}))
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "parts": [{"text": text}]})
    }

    fn model_calls(n: usize) -> Value {
        let parts: Vec<Value> = (0..n)
            .map(|_| json!({"functionCall": {"name": "f", "args": {}}}))
            .collect();
        json!({"role": "model", "parts": parts})
    }

    fn responses(n: usize) -> Value {
        let parts: Vec<Value> = (0..n)
            .map(|_| json!({"functionResponse": {"name": "f", "response": {"ok": true}}}))
            .collect();
        json!({"role": "user", "parts": parts})
    }

    #[test]
    fn answered_call_turns_pass() {
        let ok = check(
            json!([user("go"), model_calls(2), responses(2), {"role": "model", "parts": [{"text": "done"}]}, user("more"), model_calls(1), responses(1)]),
        );
        assert_eq!(ok, None);
    }

    #[test]
    fn calls_without_all_their_responses() {
        let fewer = check(json!([user("go"), model_calls(2), responses(1)]));
        assert_eq!(fewer.as_deref(), Some(COUNT_TEXT));
        let none = check(json!([user("go"), model_calls(1), user("never mind")]));
        assert_eq!(none.as_deref(), Some(COUNT_TEXT));
        let another_call_turn = check(json!([user("go"), model_calls(1), model_calls(1)]));
        assert_eq!(another_call_turn.as_deref(), Some(CALL_TURN_TEXT));
    }

    #[test]
    fn misplaced_turns() {
        assert_eq!(
            check(json!([model_calls(1), responses(1)])).as_deref(),
            Some(CALL_TURN_TEXT)
        );
        let after_text = check(
            json!([user("go"), {"role": "model", "parts": [{"text": "hm"}]}, model_calls(1), responses(1)]),
        );
        assert_eq!(after_text.as_deref(), Some(CALL_TURN_TEXT));
        let orphan = check(json!([user("go"), responses(1)]));
        assert_eq!(orphan.as_deref(), Some(RESPONSE_TURN_TEXT));
    }
}
