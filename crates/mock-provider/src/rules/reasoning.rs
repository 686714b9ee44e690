//! Responses: a reasoning model's `reasoning` item and the item after it
//! must travel together when a client sends them back with their ids.
//!
//! The real API rejects (`invalid_request_error`, `param: input`):
//! - "Item 'fc_…' of type 'function_call' was provided without its
//!   required 'reasoning' item: 'rs_…'." (continuedev/continue#10018,
//!   cline/cline#12242, openai-agents-python via VRSEN/agency-swarm#367);
//! - "Item 'rs_…' of type 'reasoning' was provided without its required
//!   following item." (continuedev/continue#8933, openai/openai-node#1567).
//!
//! The API knows which reasoning an `fc_` item needs from the response it
//! stored. The mock stores nothing, so it writes that into the ids it
//! issues: a reply that reasons first has the reasoning item
//! `rs_<seed>` and the calls `fc_<seed>r<i>` ([`call_item_id`]; a custom or
//! built-in tool's call its own prefix, `ctc_`, `sh_`, `apc_`, `lsh_`,
//! `cu_`, in the same form). Only those ids are checked, so a body that
//! never came from a reasoning reply of this mock is unaffected. What is
//! checked, and no more than the quoted errors show (for a call item other
//! than a `function_call`, the same text with its own `type`: the quoted
//! errors are all of function calls):
//! - such a call needs its `rs_<seed>` somewhere before it in `input`;
//! - such a reasoning item needs one of its calls right after it.
//!
//! Not checked for `store: false` (nothing is stored to tell which
//! reasoning an item needs), nor for messages (`msg_` items also need
//! their reasoning, continuedev/continue#12620, but the mock's reasoning
//! replies are calls only).

use std::collections::HashSet;

use serde_json::Value;

use super::text;

/// The `reasoning` item id of a reply seeded `seed`.
pub(crate) fn reasoning_id(seed: u64) -> String {
    format!("rs_{seed:016x}")
}

/// The prefixes of the call items' ids a reply can hold: a function's,
/// a custom tool's, and the built-in tools' (shell, apply_patch,
/// local_shell, computer).
const CALL_PREFIXES: [&str; 6] = ["fc_", "ctc_", "sh_", "apc_", "lsh_", "cu_"];

/// The id of call item `i` (its id prefix `prefix`, `fc_` for a
/// `function_call`) of a reply seeded `seed` that reasoned first.
pub(crate) fn call_item_id(prefix: &str, seed: u64, i: usize) -> String {
    format!("{prefix}{seed:016x}r{i:02}")
}

/// Whether `model` reasons before it answers (o-series, GPT-5, Codex
/// models), so its replies start with a `reasoning` item.
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let mut chars = model.chars();
    let o_series = chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit());
    o_series || model.starts_with("gpt-5") || model.starts_with("codex")
}

/// The seed of a reasoning item id this mock issued.
fn seed_of_reasoning(id: &str) -> Option<&str> {
    id.strip_prefix("rs_").filter(|h| is_seed(h))
}

/// The seed of a call item id this mock issued after reasoning.
fn seed_of_call(id: &str) -> Option<&str> {
    let rest = CALL_PREFIXES.iter().find_map(|p| id.strip_prefix(p))?;
    let (seed, n) = rest.split_at_checked(16)?;
    let n = n.strip_prefix('r')?;
    (is_seed(seed) && n.len() == 2 && n.bytes().all(|b| b.is_ascii_digit())).then_some(seed)
}

fn is_seed(h: &str) -> bool {
    h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Each broken reasoning adjacency: `(item index, the API's text)`.
pub(super) fn broken(items: &[Value]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut before: HashSet<&str> = HashSet::new();
    for (k, item) in items.iter().enumerate() {
        let id = text(item, "id");
        match text(item, "type") {
            kind if kind.ends_with("_call") => {
                if let Some(seed) = seed_of_call(id) {
                    let needed = format!("rs_{seed}");
                    if !before.contains(needed.as_str()) {
                        out.push((k, format!(
                            "Item '{id}' of type '{kind}' was provided without its required 'reasoning' item: '{needed}'."
                        )));
                    }
                }
            }
            "reasoning" => {
                if let Some(seed) = seed_of_reasoning(id) {
                    let next = items.get(k + 1).map_or("", |n| text(n, "id"));
                    if seed_of_call(next) != Some(seed) {
                        out.push((k, format!(
                            "Item '{id}' of type 'reasoning' was provided without its required following item."
                        )));
                    }
                }
            }
            _ => {}
        }
        before.insert(id);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rs(seed: u64) -> Value {
        json!({"type": "reasoning", "id": reasoning_id(seed), "summary": []})
    }

    fn fc(seed: u64, i: usize) -> Value {
        json!({"type": "function_call", "id": call_item_id("fc_", seed, i), "call_id": format!("call_{i}"), "name": "f", "arguments": "{}"})
    }

    fn out(i: usize) -> Value {
        json!({"type": "function_call_output", "call_id": format!("call_{i}"), "output": "ok"})
    }

    fn user() -> Value {
        json!({"role": "user", "content": "go"})
    }

    #[test]
    fn reasoning_models() {
        for m in [
            "o3",
            "o4-mini",
            "gpt-5",
            "gpt-5.1-codex",
            "codex-mini-latest",
        ] {
            assert!(is_reasoning_model(m), "{m}");
        }
        for m in ["gpt-4o", "gpt-4.1", "omni-moderation", "mock-model"] {
            assert!(!is_reasoning_model(m), "{m}");
        }
    }

    #[test]
    fn reasoning_with_its_calls_passes() {
        let items = [user(), rs(7), fc(7, 0), out(0), fc(7, 1), out(1)];
        assert!(broken(&items).is_empty());
        let parallel = [user(), rs(7), fc(7, 0), fc(7, 1), out(0), out(1)];
        assert!(broken(&parallel).is_empty());
    }

    #[test]
    fn built_in_calls_travel_with_their_reasoning_too() {
        let sh = json!({"type": "shell_call", "id": call_item_id("sh_", 7, 0), "call_id": "call_0",
            "status": "completed", "action": {"commands": ["ls"]}});
        let sh_out = json!({"type": "shell_call_output", "call_id": "call_0", "output": []});
        assert!(broken(&[user(), rs(7), sh.clone(), sh_out.clone()]).is_empty());
        assert_eq!(
            broken(&[user(), sh, sh_out]),
            [(1, "Item 'sh_0000000000000007r00' of type 'shell_call' was provided without its required 'reasoning' item: 'rs_0000000000000007'.".to_string())]
        );
        let patch = json!({"type": "apply_patch_call", "id": call_item_id("apc_", 7, 0), "call_id": "call_0",
            "status": "completed", "operation": {"type": "delete_file", "path": "a"}});
        assert!(broken(&[user(), rs(7), patch]).is_empty());
    }

    #[test]
    fn a_call_without_its_reasoning() {
        let got = broken(&[user(), fc(0xab, 0), out(0)]);
        assert_eq!(
            got,
            [(1, "Item 'fc_00000000000000abr00' of type 'function_call' was provided without its required 'reasoning' item: 'rs_00000000000000ab'.".to_string())]
        );
        // After the call is too late.
        assert_eq!(broken(&[user(), fc(0xab, 0), rs(0xab), out(0)]).len(), 2);
    }

    #[test]
    fn reasoning_without_its_following_item() {
        let text = "Item 'rs_00000000000000ab' of type 'reasoning' was provided without its required following item.";
        assert_eq!(broken(&[user(), rs(0xab)]), [(1, text.to_string())]);
        assert_eq!(broken(&[user(), rs(0xab), user()]), [(1, text.to_string())]);
        // Another reply's call does not follow it.
        assert_eq!(
            broken(&[user(), rs(0xab), rs(0xcd), fc(0xcd, 0), out(0)])[0].0,
            1
        );
    }

    #[test]
    fn ids_the_mock_did_not_issue_are_not_checked() {
        let foreign = [
            user(),
            json!({"type": "reasoning", "id": "rs_0c3876fcd4da19ef00692a14046bc881"}),
            json!({"type": "function_call", "id": "fc_0000000000000abc00", "call_id": "call_0", "name": "f", "arguments": "{}"}),
            json!({"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}),
        ];
        assert!(broken(&foreign).is_empty());
    }
}
