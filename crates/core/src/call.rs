//! Tool calls as the model made them and tool results as the client sent them.

use serde::{Deserialize, Serialize};

/// One tool call made by a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id (`toolu_…`, `call_…`); Gemini calls may have none, in
    /// which case the wire layer synthesises a stable one.
    pub id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as JSON text, exactly as the model produced them (it
    /// may be invalid JSON: models make mistakes and the runtime reports them).
    pub arguments: String,
}

/// Where a failure verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The API carries a flag (`is_error`, `*_tool_result_error`, a Gemini
    /// `error` key, an item status, MCP `isError`).
    Explicit,
    /// A status the client wrote in its own result format, read exactly:
    /// an exit status (`Exit code: 1`, the Gemini CLI's `Exit Code: 1`
    /// footer, `Process exited with code 1`). Firmer than a heuristic, but
    /// not a flag of the API.
    Client,
    /// The content detector decided from the text alone.
    Heuristic,
    /// No signal either way: the result is taken as a success.
    None,
}

impl Basis {
    /// The lower-case name used in JSON, metrics labels and the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Explicit => "explicit",
            Basis::Client => "client",
            Basis::Heuristic => "heuristic",
            Basis::None => "none",
        }
    }
}

/// Did a tool execution fail, and how do we know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Verdict {
    /// `true` when the tool failed.
    pub failed: bool,
    /// Where the verdict comes from.
    pub basis: Basis,
}

impl Verdict {
    /// A success with no signal at all.
    pub const NONE: Verdict = Verdict {
        failed: false,
        basis: Basis::None,
    };

    /// A verdict taken from an explicit flag.
    pub fn explicit(failed: bool) -> Verdict {
        Verdict {
            failed,
            basis: Basis::Explicit,
        }
    }

    /// A failure found by the content detector.
    pub fn heuristic_failure() -> Verdict {
        Verdict {
            failed: true,
            basis: Basis::Heuristic,
        }
    }
}

/// One tool result as a client sent it back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name, resolved from the conversation when possible.
    pub tool: Option<String>,
    /// The content flattened to text.
    pub content: String,
    /// Whether the tool failed, and on what basis.
    pub verdict: Verdict,
}
