"""One conversation with the OpenAI Agents SDK through the gateway: function
tools (files, shell) that really fail or succeed, Runner.run or run_streamed.

    python openai_agents_agent.py chat|responses run|streamed MARKER

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
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

CWD = Path(os.environ["E2E_WORKSPACE"])


@function_tool
def read_file(path: str) -> str:
    """Read a text file."""
    return (CWD / path).read_text()


@function_tool
def run_shell(command: str) -> str:
    """Run a shell command; fails when it exits non-zero."""
    done = subprocess.run(command, shell=True, cwd=CWD, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode}: {done.stderr.strip()}")
    return done.stdout


@function_tool
def edit_file(path: str, old: str, new: str) -> str:
    """Replace text in a file."""
    file = CWD / path
    text = file.read_text()
    if old not in text:
        raise ValueError(f"edit_file: {old!r} not found in {path}")
    file.write_text(text.replace(old, new, 1))
    return "edited"


@function_tool
def explode() -> str:
    """A tool with a bug: it always throws an AttributeError."""
    config = None
    return config.value


async def main(kind: str, mode: str, marker: str) -> None:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=os.environ["E2E_GATEWAY"] + "/v1", api_key=os.environ["E2E_KEY"], max_retries=0)
    if kind == "chat":
        model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
    elif kind == "responses":
        model = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
    else:
        raise SystemExit(f"unknown model kind {kind}")
    agent = Agent(name="e2e", instructions="Run the checks.", model=model,
                  tools=[read_file, run_shell, edit_file, explode])
    config = RunConfig(tool_not_found_behavior="return_error_to_model")
    prompt = f"Run the checks. [[e2e:{marker}]]"
    if mode == "run":
        result = await Runner.run(agent, prompt, run_config=config, max_turns=12)
    elif mode == "streamed":
        result = Runner.run_streamed(agent, prompt, run_config=config, max_turns=12)
        async for _ in result.stream_events():
            pass
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
