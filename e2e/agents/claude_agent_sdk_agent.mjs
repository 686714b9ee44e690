// One conversation with the Claude Agent SDK for TypeScript
// (`@anthropic-ai/claude-agent-sdk`, which runs the Claude Code binary it
// ships) through the gateway: the workspace's tools as an in-process MCP
// server (`createSdkMcpServer`), beside Claude Code's own `Read` and `Bash`,
// run to the final answer.
//
//   node claude_agent_sdk_agent.mjs MODE MARKER [resume]
//   MODE: text (`query` with the prompt as a string) | stream (the prompt as
//         an async iterable of user messages, the SDK's streaming input,
//         with the model's partial messages)
// `resume`: a second `query` resuming the first's session by its id
// (`resume`), Claude Code sending the session's history again: MARKER, then
// MARKER-cont.
//
// The tools answer as the SDK's documentation shows: a failure as a result
// with `isError: true` (`run_shell`, `edit_file`), or by throwing
// (`read_file`, `explode`), which the SDK's MCP server turns into an error
// result; Claude Code sends each on as a `tool_result` with `is_error`.
// `Bash` asks the permission callback (`canUseTool`), which denies a
// destructive command with a message of its own.
// Environment: E2E_NODE_MODULES (where the SDK is installed), E2E_GATEWAY
// (in the environment Claude Code gets, as ANTHROPIC_BASE_URL), E2E_KEY,
// E2E_WORKSPACE. Prints the final text; exits non-zero on any error.
import { require, cwd } from "./driver_env.mjs";
import { TOOLS, zodShapeOf } from "./workspace_tools.mjs";

const [mode, marker, state = "none"] = process.argv.slice(2);
const { query, tool, createSdkMcpServer } = require("@anthropic-ai/claude-agent-sdk");
const { z } = require("zod");

// A failure the tool reports itself, as the SDK's guide does.
const reported = (run) => async (args) => {
  try {
    return { content: [{ type: "text", text: String(run(args)) }] };
  } catch (e) {
    return { content: [{ type: "text", text: `Error: ${e.message}` }], isError: true };
  }
};
// A failure left to the SDK: the handler throws.
const thrown = (run) => async (args) => ({ content: [{ type: "text", text: String(run(args)) }] });
const REPORTS = new Set(["run_shell", "edit_file"]);

const server = createSdkMcpServer({
  name: "ws",
  version: "1.0.0",
  tools: TOOLS.map((t) =>
    tool(
      t.name,
      t.description,
      zodShapeOf(z, t.args),
      (REPORTS.has(t.name) ? reported : thrown)(t.run),
    ),
  ),
});

// The permission callback of the SDK's guide: a destructive command is
// denied with a message, which Claude Code sends as the call's result.
async function canUseTool(name, input) {
  if (name === "Bash" && /\brm\s/.test(input.command ?? "")) {
    return { behavior: "deny", message: "Destructive commands are not allowed in this workspace." };
  }
  return { behavior: "allow", updatedInput: input };
}

const options = {
  cwd,
  model: "claude-sonnet-4-5",
  mcpServers: { ws: server },
  tools: ["Read", "Bash"],
  // Every tool but `Bash` allowed outright; `Bash` asks `canUseTool`.
  allowedTools: ["Read", ...TOOLS.map((t) => `mcp__ws__${t.name}`)],
  permissionMode: "default",
  canUseTool,
  settingSources: [],
  maxTurns: 30,
  includePartialMessages: mode === "stream",
  env: { ...process.env },
  stderr: (data) => process.stderr.write(data),
};

async function* asUserMessages(text) {
  yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
}

// The run's final text and its session's id.
async function ask(text, more = {}) {
  const prompt = mode === "stream" ? asUserMessages(text) : mode === "text" ? text : null;
  if (prompt === null) throw new Error(`unknown mode ${mode}`);
  let result;
  for await (const message of query({ prompt, options: { ...options, ...more } })) {
    if (message.type === "result") result = message;
  }
  if (!result || result.subtype !== "success" || result.is_error) {
    throw new Error(`the run did not succeed: ${JSON.stringify(result)}`);
  }
  return result;
}

const first = await ask(`Run the checks. [[e2e:${marker}]]`);
console.log(first.result);
if (state === "resume") {
  const more = await ask(`One more. [[e2e:${marker}-cont]]`, { resume: first.session_id });
  console.log(more.result);
} else if (state !== "none") {
  throw new Error(`unknown state ${state}`);
}
