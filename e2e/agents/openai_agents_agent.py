"""One conversation with the OpenAI Agents SDK through the gateway: function
tools (files, shell) that really fail or succeed, Runner.run or run_streamed.

    python openai_agents_agent.py chat|responses|builtin run|streamed MARKER [STATE]

`builtin`: the Responses model with the SDK's own ShellTool (a local
executor that runs the commands in the workspace: real stdout, stderr and
exit codes) and ApplyPatchTool (an editor that applies the model's V4A
diffs to the workspace's files, raising on a missing file); the model calls
them as the API's built-in `shell_call` and `apply_patch_call` items.

STATE (the Responses model only) keeps the conversation on the API's side,
so each request carries only its new items:
- `chained`: `auto_previous_response_id` (each turn names the previous
  response);
- `conversation`: a conversation made with `conversations.create`, passed
  as `conversation_id`;
- `session`: an `OpenAIConversationsSession` (the SDK reads the history
  from the conversation's items and adds each run's items to it), over two
  runs: MARKER, then MARKER-cont, the second one given the first's history;
- `compaction`: an `OpenAIResponsesCompactionSession` over a `SQLiteSession`
  (`compaction_mode="input"`), over the same two runs: after the first, its
  history past the SDK's threshold, it calls `responses.compact` and the
  second run is given the compacted history.

Environment: E2E_GATEWAY (the gateway's URL), E2E_KEY, E2E_WORKSPACE (the
tools' cwd). Prints the final output; exits non-zero on any error.
"""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from agents import (
    Agent,
    ApplyPatchOperation,
    ApplyPatchTool,
    OpenAIChatCompletionsModel,
    OpenAIConversationsSession,
    OpenAIResponsesCompactionSession,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    SQLiteSession,
    ShellCallOutcome,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
    ShellTool,
    apply_diff,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

import workspace_tools as W

CWD = Path(os.environ["E2E_WORKSPACE"])


# The workspace's tools (files, shell), as the SDK's function tools.
read_file, run_shell, edit_file, explode = (function_tool(f) for f in W.TOOLS)


def as_text(out) -> str:
    return out.decode(errors="replace") if isinstance(out, bytes) else (out or "")


def run_commands(request: ShellCommandRequest) -> ShellResult:
    """ShellTool's local executor: each command in the workspace, its own
    output and exit code (a timeout as the SDK's timeout outcome)."""
    action = request.data.action
    timeout = (action.timeout_ms or 30_000) / 1000
    outputs = []
    for command in action.commands:
        try:
            done = subprocess.run(command, shell=True, cwd=CWD, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            outputs.append(ShellCommandOutput(stdout=as_text(e.stdout), stderr=as_text(e.stderr),
                                              outcome=ShellCallOutcome(type="timeout"), command=command))
            break
        outputs.append(ShellCommandOutput(stdout=done.stdout, stderr=done.stderr,
                                          outcome=ShellCallOutcome(type="exit", exit_code=done.returncode),
                                          command=command))
        if done.returncode != 0:
            break
    return ShellResult(output=outputs)


class WorkspaceEditor:
    """ApplyPatchTool's editor: the operations on the workspace's files."""

    def _file(self, path: str) -> Path:
        file = (CWD / path).resolve()
        if CWD.resolve() not in file.parents:
            raise PermissionError(f"{path} is outside the workspace")
        return file

    def create_file(self, op: ApplyPatchOperation) -> str:
        file = self._file(op.path)
        if file.exists():
            raise FileExistsError(f"create_file: {op.path} already exists")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(apply_diff("", op.diff or "", mode="create"))
        return f"Created {op.path}"

    def update_file(self, op: ApplyPatchOperation) -> str:
        file = self._file(op.path)
        if not file.is_file():
            raise FileNotFoundError(f"update_file: {op.path} does not exist")
        text = apply_diff(file.read_text(), op.diff or "")
        file.write_text(text)
        return f"Updated {op.path}:\n{text}"

    def delete_file(self, op: ApplyPatchOperation) -> str:
        file = self._file(op.path)
        if not file.is_file():
            raise FileNotFoundError(f"delete_file: {op.path} does not exist")
        file.unlink()
        return f"Deleted {op.path}"


async def run_once(agent, prompt: str, mode: str, **state):
    config = RunConfig(tool_not_found_behavior="return_error_to_model")
    if mode == "run":
        return await Runner.run(agent, prompt, run_config=config, max_turns=12, **state)
    if mode == "streamed":
        result = Runner.run_streamed(agent, prompt, run_config=config, max_turns=12, **state)
        async for _ in result.stream_events():
            pass
        return result
    raise SystemExit(f"unknown mode {mode}")


async def main(kind: str, mode: str, marker: str, state: str = "none") -> None:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=os.environ["E2E_GATEWAY"] + "/v1", api_key=os.environ["E2E_KEY"], max_retries=0)
    tools = [read_file, run_shell, edit_file, explode]
    if kind == "chat":
        model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
    elif kind == "responses":
        model = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
    elif kind == "builtin":
        model = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
        tools = [ShellTool(executor=run_commands), ApplyPatchTool(editor=WorkspaceEditor())]
    else:
        raise SystemExit(f"unknown model kind {kind}")
    agent = Agent(name="e2e", instructions="Run the checks.", model=model, tools=tools)
    prompt = f"Run the checks. [[e2e:{marker}]]"
    if state == "none":
        result = await run_once(agent, prompt, mode)
    elif state == "chained":
        result = await run_once(agent, prompt, mode, auto_previous_response_id=True)
    elif state == "conversation":
        conversation = await client.conversations.create(items=[])
        result = await run_once(agent, prompt, mode, conversation_id=conversation.id)
    elif state == "session":
        session = OpenAIConversationsSession(openai_client=client)
        first = await run_once(agent, prompt, mode, session=session)
        print(first.final_output)
        result = await run_once(agent, f"One more. [[e2e:{marker}-cont]]", mode, session=session)
    elif state == "compaction":
        session = OpenAIResponsesCompactionSession(
            session_id=marker, underlying_session=SQLiteSession(marker), client=client, compaction_mode="input")
        first = await run_once(agent, prompt, mode, session=session)
        print(first.final_output)
        result = await run_once(agent, f"One more. [[e2e:{marker}-cont]]", mode, session=session)
    else:
        raise SystemExit(f"unknown state {state}")
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
