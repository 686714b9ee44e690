//! [`CallKind`]: the kinds of call a Responses client runs and answers. A
//! leaf, so that [`crate::ResponseView`] (in `view`) can name it without
//! depending on the dialect module, which depends on `view`.

/// The kind of a Responses call the client runs, and of the output item
/// that answers it ([`ResponseView::call_kinds`](crate::ResponseView::call_kinds); re-exported as
/// `openai_responses::CallKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallKind {
    /// `function_call` / `function_call_output`: a tool the request defines.
    Function,
    /// `custom_tool_call` / `custom_tool_call_output`: a free-form tool.
    Custom,
    /// `shell_call` / `shell_call_output`: the built-in `shell` tool.
    Shell,
    /// `local_shell_call` / `local_shell_call_output`: the built-in
    /// `local_shell` tool.
    LocalShell,
    /// `apply_patch_call` / `apply_patch_call_output`: the built-in
    /// `apply_patch` tool.
    ApplyPatch,
    /// `computer_call` / `computer_call_output`: the built-in computer-use
    /// tool.
    Computer,
    /// `tool_search_call` / `tool_search_output` run by the client
    /// (`execution: "client"`: a `tool_search` tool the client executes,
    /// such as the AI SDK's `openai.tool_search` with its own search); the
    /// provider's own tool search (`execution: "server"`; without
    /// `execution`, one with no `call_id`) is a hosted tool, not a call
    /// here.
    ToolSearch,
}

impl CallKind {
    /// The `type` of the output item that answers this kind of call
    /// (`function_call_output`, `shell_call_output`, …).
    pub fn output_type(self) -> &'static str {
        match self {
            CallKind::Function => "function_call_output",
            CallKind::Custom => "custom_tool_call_output",
            CallKind::Shell => "shell_call_output",
            CallKind::LocalShell => "local_shell_call_output",
            CallKind::ApplyPatch => "apply_patch_call_output",
            CallKind::Computer => "computer_call_output",
            CallKind::ToolSearch => "tool_search_output",
        }
    }

    /// The kind of a call item's `type`.
    pub(crate) fn of_call(kind: &str) -> Option<CallKind> {
        Some(match kind {
            "function_call" => CallKind::Function,
            "custom_tool_call" => CallKind::Custom,
            "shell_call" => CallKind::Shell,
            "local_shell_call" => CallKind::LocalShell,
            "apply_patch_call" => CallKind::ApplyPatch,
            "computer_call" => CallKind::Computer,
            _ => return None,
        })
    }

    /// The kind of an output item's `type`.
    pub(crate) fn of_output(kind: &str) -> Option<CallKind> {
        CallKind::of_call(kind.strip_suffix("_output")?)
    }

    /// A tool search item the client runs: `Some(false)` for its
    /// `tool_search_call`, `Some(true)` for its `tool_search_output`;
    /// `None` for any other item, and for the provider's own search
    /// (`execution: "server"`). Without `execution`, a `call_id` says the
    /// client runs it: the provider's items have none.
    pub(crate) fn of_tool_search(
        kind: &str,
        execution: Option<&str>,
        call_id: Option<&str>,
    ) -> Option<bool> {
        let output = match kind {
            "tool_search_call" => false,
            "tool_search_output" => true,
            _ => return None,
        };
        let client = match execution {
            Some(e) => e == "client",
            None => call_id.is_some_and(|id| !id.is_empty()),
        };
        client.then_some(output)
    }

    /// The built-in tool's name, which its calls do not carry (`None` for
    /// function and custom tools, whose calls name them).
    pub(crate) fn builtin_name(self) -> Option<&'static str> {
        match self {
            CallKind::Function | CallKind::Custom => None,
            CallKind::Shell => Some("shell"),
            CallKind::LocalShell => Some("local_shell"),
            CallKind::ApplyPatch => Some("apply_patch"),
            CallKind::Computer => Some("computer"),
            CallKind::ToolSearch => Some("tool_search"),
        }
    }

    /// The call in the API's own error texts ("No tool output found for
    /// function call …").
    pub(crate) fn noun(self) -> &'static str {
        match self {
            CallKind::Function => "function call",
            CallKind::Custom => "custom tool call",
            CallKind::Shell => "shell call",
            CallKind::LocalShell => "local shell call",
            CallKind::ApplyPatch => "apply patch call",
            CallKind::Computer => "computer call",
            CallKind::ToolSearch => "tool search call",
        }
    }
}
