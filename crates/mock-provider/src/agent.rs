//! Agent mode: scripted tool turns for real agent programs.
//!
//! A scripts file (JSON) names conversations and the tool calls the mock
//! "model" makes in each, one per turn:
//!
//! ```json
//! {"scripts": {"claude-main": {"steps": [{"tool": "Read", "args": {"file_path": "/tmp/x"}}],
//!                              "final_text": "E2E-DONE claude-main", "gemini_ids": false}}}
//! ```
//!
//! (`"final_tool": "final_answer"`: the final text as the answer of a call
//! of that tool, for a client whose runs end so; `"calls_alone": true`: no
//! text beside a turn's calls.)
//!
//! A conversation picks its script by a marker `[[e2e:NAME]]` in a user
//! message (the latest one carrying a marker counts, so a continued session
//! can switch scripts). The number of model turns with tool calls after that
//! message is the step: step `k` gets the script's call `k`, and after the
//! last step the final text. A request asking for JSON by schema (Gemini's
//! `responseJsonSchema`, OpenAI's `json_schema` formats) gets an object
//! built from the schema (enums: the first value). Any other request (no
//! marker, or no tools offered) is a side request and gets a short text.
//!
//! A step's `args` is a function call's arguments; a string is a custom
//! (freeform) tool's input. In the Responses API a step naming a built-in
//! tool the request declares by type (`"tool": "shell"` with
//! `{"type":"shell"}` in `tools`; `apply_patch`, `local_shell`, `computer`
//! alike) is that tool's call, `args` its `action` (`{"commands": […]}`)
//! or `operation` (`{"type": "update_file", "path": …, "diff": …}`).
//!
//! Everything is logged, one JSON object per line, as ground truth: each
//! request (`"event":"request"`), each call the mock made (`"call"`, with
//! its `kind`: function, custom, shell, apply_patch, …), and
//! each result that came back (`"result"`: script, step, model, tool, id, text, the
//! API's error flag), each result once although clients resend the history
//! every turn.

mod history;
mod schema;

use std::{
    collections::{HashMap, HashSet},
    fs::File,
    io::{self, Write},
    path::Path,
    sync::Mutex,
};

use serde::Deserialize;
use serde_json::{Value, json};
use toolwarden_wire::Dialect;

use crate::plan::{CallKind, Plan, PlannedCall, fnv1a};
use history::{SeenCall, Turn, turns};

/// The scripts file.
#[derive(Debug, Deserialize)]
pub struct Scripts {
    scripts: HashMap<String, Script>,
}

/// One conversation's script.
#[derive(Debug, Deserialize)]
struct Script {
    steps: Vec<Step>,
    final_text: String,
    /// Gemini: give each `functionCall` an `id` (the API usually sends none).
    #[serde(default)]
    gemini_ids: bool,
    /// A client that ends its run with a tool of its own (smolagents'
    /// `final_answer`): after the last step, a call of this tool with
    /// `{"answer": final_text}` instead of the final text.
    #[serde(default)]
    final_tool: Option<String>,
    /// A model turn with calls has no text beside them (as OpenAI's models
    /// usually answer): Chat's `content` is `null`.
    #[serde(default)]
    calls_alone: bool,
}

/// One tool call.
#[derive(Debug, Deserialize)]
struct Step {
    tool: String,
    #[serde(default = "empty_object")]
    args: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// Agent mode's state: the scripts, the log, what was logged.
#[derive(Debug)]
pub struct AgentMode {
    scripts: Scripts,
    log: Mutex<Log>,
}

#[derive(Debug)]
struct Log {
    file: File,
    /// `(script, step, result index)` already logged.
    results: HashSet<(String, usize, usize)>,
}

/// Where the marker is: `[[e2e:NAME]]`.
fn marker(text: &str) -> Option<&str> {
    let start = text.rfind("[[e2e:")? + "[[e2e:".len();
    let len = text[start..].find("]]")?;
    Some(&text[start..start + len])
}

impl AgentMode {
    /// Read the scripts from `scripts`, log to `log` (created or truncated).
    pub fn open(scripts: &Path, log: &Path) -> io::Result<AgentMode> {
        let text = std::fs::read_to_string(scripts)?;
        let scripts: Scripts = serde_json::from_str(&text)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{e}")))?;
        Ok(AgentMode {
            scripts,
            log: Mutex::new(Log {
                file: File::create(log)?,
                results: HashSet::new(),
            }),
        })
    }

    fn write(&self, line: &Value, result_key: Option<(String, usize, usize)>) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(key) = result_key
            && !log.results.insert(key)
        {
            return;
        }
        // A log that cannot be written shows as missing lines in the check.
        let _ = writeln!(log.file, "{line}").and_then(|()| log.file.flush());
    }

    /// The reply to a valid model request in `dialect`.
    pub(crate) fn plan(&self, dialect: Dialect, body: &[u8], model: Option<&str>) -> Plan {
        let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let model = model
            .map(str::to_string)
            .or_else(|| v.get("model").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| "mock-model".to_string());
        let seed = fnv1a(body);
        let base = Plan {
            model: model.clone(),
            seed,
            input_tokens: (body.len() as u64 / 4).max(1),
            output_tokens: 10,
            text: None,
            calls: Vec::new(),
            gemini_ids: false,
            stream_usage: crate::plan::stream_usage(&v),
            reasoning: crate::plan::reasoning(dialect, &v, &model),
            response_id_pad: 0,
            arg_pieces: 2,
        };
        let tools = offered_tools(dialect, &v);
        let mut request = json!({"event": "request", "dialect": dialect.as_str(), "tools": tools});
        if let Some(schema) = schema::requested(dialect, &v) {
            request["reply"] = json!("schema");
            self.write(&request, None);
            return Plan {
                text: Some(schema::instance(schema).to_string()),
                ..base
            };
        }
        let all = turns(dialect, &v);
        let found = all.iter().enumerate().rev().find_map(|(i, t)| match t {
            Turn::User(text) => marker(text).map(|m| (i, m.to_string())),
            _ => None,
        });
        let Some((at, name)) = found else {
            request["reply"] = json!("side");
            self.write(&request, None);
            return Plan {
                text: Some("OK.".to_string()),
                ..base
            };
        };
        request["script"] = json!(name);
        let Some(script) = self.scripts.scripts.get(&name) else {
            request["reply"] = json!("unknown script");
            self.write(&request, None);
            return Plan {
                text: Some(format!("No script named {name}.")),
                ..base
            };
        };
        let after = &all[at + 1..];
        self.log_results(&name, script, &base.model, after);
        let step = after.iter().filter(|t| matches!(t, Turn::Calls(_))).count();
        request["step"] = json!(step);
        if tools.is_empty() {
            request["reply"] = json!("side");
            self.write(&request, None);
            return Plan {
                text: Some("OK.".to_string()),
                ..base
            };
        }
        let final_call;
        let call = match (script.steps.get(step), &script.final_tool) {
            (Some(call), _) => call,
            (None, Some(tool)) => {
                final_call = Step {
                    tool: tool.clone(),
                    args: json!({ "answer": script.final_text }),
                };
                &final_call
            }
            (None, None) => {
                request["reply"] = json!("final");
                self.write(&request, None);
                return Plan {
                    text: Some(script.final_text.clone()),
                    ..base
                };
            }
        };
        request["reply"] = json!("call");
        self.write(&request, None);
        let kind = call_kind(dialect, &v, call);
        // Ids from the script and step: the same step always gets the same id.
        let plan = Plan {
            seed: fnv1a(format!("{name}:{step}").as_bytes()),
            output_tokens: 20,
            text: (!script.calls_alone)
                .then(|| format!("Step {}: calling {}.", step + 1, call.tool)),
            calls: vec![PlannedCall {
                name: call.tool.clone(),
                // A string is a custom (freeform) tool's input.
                arguments: match &call.args {
                    Value::String(input) => input.clone(),
                    args => args.to_string(),
                },
                kind,
            }],
            gemini_ids: script.gemini_ids,
            response_id_pad: 0,
            arg_pieces: 2,
            ..base
        };
        let id = match dialect {
            Dialect::Anthropic => Some(plan.call_id("toolu_", 0)),
            Dialect::OpenAiChat | Dialect::OpenAiResponses => Some(plan.call_id("call_", 0)),
            Dialect::Gemini => script.gemini_ids.then(|| plan.call_id("call_", 0)),
            Dialect::BedrockConverse => Some(plan.call_id("tooluse_", 0)),
        };
        self.write(
            &json!({"event": "call", "script": name, "step": step, "model": plan.model,
                "tool": call.tool, "kind": kind.as_str(), "id": id}),
            None,
        );
        plan
    }

    /// Log the results after the marker: those following the `k`-th model
    /// turn with calls answer step `k`, a call of the step's tool (`replayed`:
    /// the name the client replayed the call under, when it renamed it).
    fn log_results(&self, name: &str, script: &Script, model: &str, after: &[Turn]) {
        let mut step: Option<usize> = None;
        let mut calls: &[SeenCall] = &[];
        for t in after {
            match t {
                Turn::Calls(c) => {
                    step = Some(step.map_or(0, |s| s + 1));
                    calls = c;
                }
                Turn::Results(results) => {
                    let Some(k) = step else { continue };
                    for (i, r) in results.iter().enumerate() {
                        let by_id =
                            r.id.as_ref()
                                .and_then(|id| calls.iter().find(|c| c.id.as_ref() == Some(id)));
                        let replayed = by_id
                            .or_else(|| calls.get(i))
                            .map(|c| c.name.clone())
                            .or_else(|| r.name.clone());
                        let tool = script.steps.get(k).map(|s| s.tool.clone());
                        let line = json!({"event": "result", "script": name, "step": k,
                            "model": model, "tool": tool, "replayed": replayed, "id": r.id,
                            "text": r.text, "is_error": r.is_error});
                        self.write(&line, Some((name.to_string(), k, i)));
                    }
                }
                Turn::User(_) => {}
            }
        }
    }
}

/// What `step`'s call is: a custom tool's when its `args` is a string; in
/// the Responses API, a built-in tool's call (`shell_call`,
/// `apply_patch_call`, …, its `args` the call's `action` or `operation`)
/// when it names a built-in tool (`shell`, `apply_patch`, `local_shell`,
/// `computer`) that the request declares by type (`{"type":"shell"}`, as
/// the Agents SDK's `ShellTool` does); else a function call.
fn call_kind(dialect: Dialect, v: &Value, step: &Step) -> CallKind {
    if step.args.is_string() {
        return CallKind::Custom;
    }
    let Some(builtin) = CallKind::builtin(&step.tool) else {
        return CallKind::Function;
    };
    let declared = dialect == Dialect::OpenAiResponses
        && v.get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("type").and_then(Value::as_str))
            .any(|ty| builtin.tool_types().contains(&ty));
    if declared {
        builtin
    } else {
        CallKind::Function
    }
}

/// The names of the tools a request offers (any kind).
fn offered_tools(dialect: Dialect, v: &Value) -> Vec<String> {
    let tools = v.get("tools").and_then(Value::as_array);
    let name = |t: &Value| t.get("name").and_then(Value::as_str).map(str::to_string);
    match dialect {
        Dialect::BedrockConverse => crate::plan::converse_tool_names(v),
        Dialect::Gemini => tools
            .into_iter()
            .flatten()
            .filter_map(|t| {
                // The API takes either case (LiteLLM sends snake_case).
                t.get("functionDeclarations")
                    .or_else(|| t.get("function_declarations"))
                    .and_then(Value::as_array)
            })
            .flatten()
            .filter_map(name)
            .collect(),
        Dialect::OpenAiChat => tools
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("function").and_then(name))
            .collect(),
        Dialect::Anthropic | Dialect::OpenAiResponses => tools
            .into_iter()
            .flatten()
            .filter_map(|t| {
                name(t).or_else(|| t.get("type").and_then(Value::as_str).map(str::to_string))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_is_found_last_first() {
        assert_eq!(marker("a [[e2e:one]] b [[e2e:two]]"), Some("two"));
        assert_eq!(marker("[[e2e:open"), None);
        assert_eq!(marker("plain"), None);
    }

    #[test]
    fn steps_then_final_and_results_logged_once() {
        let dir = std::env::temp_dir().join(format!("mock-agent-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let scripts = dir.join("s.json");
        std::fs::write(
            &scripts,
            r#"{"scripts":{"x":{"steps":[{"tool":"Read","args":{"p":1}}],"final_text":"DONE"}}}"#,
        )
        .unwrap();
        let log = dir.join("log.jsonl");
        let agent = AgentMode::open(&scripts, &log).unwrap();
        let tools = r#""tools":[{"name":"Read","input_schema":{}}]"#;
        let first = format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"go [[e2e:x]]"}}],{tools}}}"#
        );
        let p = agent.plan(Dialect::Anthropic, first.as_bytes(), None);
        assert_eq!(p.calls[0].name, "Read");
        let id = p.call_id("toolu_", 0);
        let second = format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":"go [[e2e:x]]"}},
            {{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{}}}}]}},
            {{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"missing","is_error":true}}]}}],{tools}}}"#
        );
        for _ in 0..2 {
            let p = agent.plan(Dialect::Anthropic, second.as_bytes(), None);
            assert_eq!(p.text.as_deref(), Some("DONE"));
        }
        let lines: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let results: Vec<_> = lines.iter().filter(|l| l["event"] == "result").collect();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["tool"], "Read");
        assert_eq!(results[0]["is_error"], true);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn built_in_steps_call_the_declared_built_in_tools() {
        let dir = std::env::temp_dir().join(format!("mock-agent-builtin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let scripts = dir.join("s.json");
        std::fs::write(
            &scripts,
            r#"{"scripts":{"b":{"steps":[
                {"tool":"shell","args":{"commands":["ls missing-dir"],"timeout_ms":5000}},
                {"tool":"apply_patch","args":{"type":"delete_file","path":"gone.txt"}}],
              "final_text":"DONE"}}}"#,
        )
        .unwrap();
        let log = dir.join("log.jsonl");
        let agent = AgentMode::open(&scripts, &log).unwrap();
        let user = json!({"role": "user", "content": "go [[e2e:b]]"});
        let body = |tools: Value, input: Vec<Value>| {
            json!({"model": "gpt-4.1", "input": input, "tools": tools}).to_string()
        };
        let builtins =
            json!([{"type": "shell", "environment": {"type": "local"}}, {"type": "apply_patch"}]);

        // Declared as built-in tools: a shell_call whose action is the args.
        let first = agent.plan(
            Dialect::OpenAiResponses,
            body(builtins.clone(), vec![user.clone()]).as_bytes(),
            None,
        );
        assert_eq!(first.calls[0].kind, CallKind::Shell);
        let reply: Value =
            serde_json::from_str(&crate::render::json_body(Dialect::OpenAiResponses, &first))
                .unwrap();
        let shell = reply["output"][0].clone();
        assert_eq!(shell["type"], "shell_call");
        assert_eq!(shell["action"]["commands"], json!(["ls missing-dir"]));
        // The same name as a function tool is a function call.
        let function = json!([{"type": "function", "name": "shell", "parameters": {}}]);
        let p = agent.plan(
            Dialect::OpenAiResponses,
            body(function, vec![user.clone()]).as_bytes(),
            None,
        );
        assert_eq!(p.calls[0].kind, CallKind::Function);

        // Its output is read back as the step's result, failed on exit 2.
        let shell_out = json!({"type": "shell_call_output", "call_id": shell["call_id"], "output": [
            {"stdout": "", "stderr": "ls: cannot access 'missing-dir'", "outcome": {"type": "exit", "exit_code": 2}}]});
        let second = agent.plan(
            Dialect::OpenAiResponses,
            body(
                builtins.clone(),
                vec![user.clone(), shell.clone(), shell_out.clone()],
            )
            .as_bytes(),
            None,
        );
        assert_eq!(second.calls[0].kind, CallKind::ApplyPatch);
        let reply: Value =
            serde_json::from_str(&crate::render::json_body(Dialect::OpenAiResponses, &second))
                .unwrap();
        let patch = reply["output"][0].clone();
        assert_eq!(patch["type"], "apply_patch_call");
        assert_eq!(
            patch["operation"],
            json!({"type": "delete_file", "path": "gone.txt"})
        );
        let patch_out = json!({"type": "apply_patch_call_output", "call_id": patch["call_id"],
            "status": "failed", "output": "gone.txt does not exist"});
        let last = agent.plan(
            Dialect::OpenAiResponses,
            body(builtins, vec![user, shell, shell_out, patch, patch_out]).as_bytes(),
            None,
        );
        assert_eq!(last.text.as_deref(), Some("DONE"));

        let lines: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<&Value> = lines
            .iter()
            .filter(|l| l["event"] == "call")
            .map(|l| &l["kind"])
            .collect();
        assert_eq!(
            kinds,
            [&json!("shell"), &json!("function"), &json!("apply_patch")]
        );
        let results: Vec<(&Value, &Value, &Value)> = lines
            .iter()
            .filter(|l| l["event"] == "result")
            .map(|l| (&l["tool"], &l["replayed"], &l["is_error"]))
            .collect();
        assert_eq!(
            results,
            [
                (&json!("shell"), &json!("shell"), &json!(true)),
                (&json!("apply_patch"), &json!("apply_patch"), &json!(true)),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
