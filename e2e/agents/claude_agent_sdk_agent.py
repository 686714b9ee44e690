"""One conversation with the Claude Agent SDK for Python (`claude-agent-sdk`,
which runs the Claude Code binary its wheel bundles) through the gateway:
the workspace's tools as an in-process MCP server (`create_sdk_mcp_server`)
beside Claude Code's own `Read` and `Bash`, run to the final answer.

    python claude_agent_sdk_agent.py MODE MARKER [client]
    MODE: query (the `query` function, one prompt) | client (a
          `ClaudeSDKClient`: `connect`, `query`, `receive_response`)
`client` (MODE client only): a second message to the same connected
client, its Claude Code process going on with the session: MARKER, then
MARKER-cont.

The tools answer as the SDK's documentation shows: a failure as a result
with `is_error` (`run_shell`, `edit_file`), or by raising (`read_file`,
`explode`), which the SDK's MCP server turns into an error result; Claude
Code sends each on as a `tool_result` with `is_error`. A `PreToolUse` hook
denies a destructive `Bash` command with a reason of its own.

Environment: E2E_GATEWAY (Claude Code reads ANTHROPIC_BASE_URL), E2E_KEY,
E2E_WORKSPACE. Prints the final text; exits non-zero on any error.
"""

import asyncio
import re
import sys

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    ResultMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

import workspace_tools as W


def reported(fn):
    """A failure the tool reports itself, as the SDK's guide does."""
    async def handler(args):
        try:
            return {"content": [{"type": "text", "text": str(fn(**args))}]}
        except Exception as e:  # noqa: BLE001 - every failure goes to the model
            return {"content": [{"type": "text", "text": f"Error: {e}"}], "is_error": True}
    return handler


def raised(fn):
    """A failure left to the SDK: the handler raises."""
    async def handler(args):
        return {"content": [{"type": "text", "text": str(fn(**args))}]}
    return handler


SERVER = create_sdk_mcp_server("ws", "1.0.0", [
    tool("read_file", "Read a text file.", {"path": str})(raised(W.read_file)),
    tool("run_shell", "Run a shell command; fails when it exits non-zero.", {"command": str})(reported(W.run_shell)),
    tool("edit_file", "Replace text in a file.", {"path": str, "old": str, "new": str})(reported(W.edit_file)),
    tool("explode", "A tool with a bug: it always raises an AttributeError.", {})(raised(W.explode)),
])


async def deny_destructive(input_data, tool_use_id, context):
    """The `PreToolUse` hook of the SDK's guide: `rm` is not allowed."""
    command = input_data.get("tool_input", {}).get("command", "")
    if re.search(r"\brm\s", command):
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "Destructive commands are blocked by policy."}}
    return {}


def options() -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cwd=str(W.CWD), model="claude-sonnet-4-5", mcp_servers={"ws": SERVER}, tools=["Read", "Bash"],
        allowed_tools=["Read", "Bash"] + [f"mcp__ws__{t.__name__}" for t in W.TOOLS],
        permission_mode="bypassPermissions", setting_sources=[], max_turns=30,
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny_destructive])]},
    )


def final(result: ResultMessage | None) -> str:
    if result is None or result.is_error or result.subtype != "success":
        raise SystemExit(f"the run did not succeed: {result!r}")
    return result.result or ""


async def main(mode: str, marker: str, state: str = "none") -> None:
    prompt = f"Run the checks. [[e2e:{marker}]]"
    if mode == "query":
        if state != "none":
            raise SystemExit(f"unknown state {state} for query")
        result = None
        async for message in query(prompt=prompt, options=options()):
            if isinstance(message, ResultMessage):
                result = message
        print(final(result))
    elif mode == "client":
        if state not in ("none", "client"):
            raise SystemExit(f"unknown state {state}")
        async with ClaudeSDKClient(options=options()) as client:
            for text in [prompt] + ([f"One more. [[e2e:{marker}-cont]]"] if state == "client" else []):
                await client.query(text)
                result = None
                async for message in client.receive_response():
                    if isinstance(message, ResultMessage):
                        result = message
                print(final(result))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
