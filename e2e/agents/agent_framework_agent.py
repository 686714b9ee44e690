"""One conversation with Microsoft Agent Framework (`agent-framework`)
through the gateway: an `Agent` with the workspace's tools, run to its
final answer.

    python agent_framework_agent.py PROVIDER MODE MARKER [session]
    PROVIDER: openai-chat | openai-responses | anthropic | gemini | bedrock
              (its `OpenAIChatCompletionClient`, `OpenAIChatClient` (the
              Responses API), `AnthropicClient`, `GeminiChatClient` and
              `BedrockChatClient`, the Converse API through boto3)
    MODE: run (`await agent.run(…)`) | stream (`agent.run(…, stream=True)`)

`session`: a second message in the same `AgentSession` after the first:
MARKER, then MARKER-cont.

The framework runs each call and answers it with the API's result message;
a tool's exception becomes a result `Error: Function failed.` by default,
with the exception's text when `include_detailed_errors` is set (the first
run's; a session's keep the default), and so does an unknown tool.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import asyncio
import os
import sys
from typing import Annotated

from agent_framework import Agent, tool

import workspace_tools as W


@tool
def read_file(path: Annotated[str, "The file's path in the workspace."]) -> str:
    """Read a text file."""
    return W.read_file(path)


@tool
def run_shell(command: Annotated[str, "The command line."]) -> str:
    """Run a shell command; fails when it exits non-zero."""
    return W.run_shell(command)


@tool
def edit_file(path: Annotated[str, "The file's path in the workspace."], old: Annotated[str, "The text to replace."],
              new: Annotated[str, "The text to put in its place."]) -> str:
    """Replace text in a file."""
    return W.edit_file(path, old, new)


@tool
def explode() -> str:
    """A tool with a bug: it always throws an AttributeError."""
    return W.explode()


def client(provider: str, detailed: bool):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    # The tool loop gives up after three errors in a row by default; the
    # scripts have more. Exceptions reach the model as `Error: Function
    # failed.` unless `include_detailed_errors`.
    config = {"max_consecutive_errors_per_request": 10, "include_detailed_errors": detailed}
    if provider == "openai-chat":
        from agent_framework.openai import OpenAIChatCompletionClient
        return OpenAIChatCompletionClient("gpt-4o", api_key=key, base_url=f"{gateway}/v1",
                                          function_invocation_configuration=config)
    if provider == "openai-responses":
        from agent_framework.openai import OpenAIChatClient
        return OpenAIChatClient("gpt-4.1", api_key=key, base_url=f"{gateway}/v1",
                                function_invocation_configuration=config)
    if provider == "anthropic":
        from agent_framework.anthropic import AnthropicClient
        return AnthropicClient(api_key=key, model="claude-sonnet-4-5", base_url=gateway,
                               function_invocation_configuration=config)
    if provider == "gemini":
        from google import genai
        from agent_framework.gemini import GeminiChatClient
        return GeminiChatClient(model="gemini-2.5-flash",
                                client=genai.Client(api_key=key, http_options={"base_url": gateway}),
                                function_invocation_configuration=config)
    if provider == "bedrock":
        from agent_framework_bedrock import BedrockChatClient
        return BedrockChatClient(model=W.BEDROCK_MODEL, client=W.bedrock_client(gateway),
                                 function_invocation_configuration=config)
    raise SystemExit(f"unknown provider {provider}")


async def ask(agent, session, prompt: str, mode: str) -> str:
    if mode == "run":
        return (await agent.run(prompt, session=session)).text
    stream = agent.run(prompt, session=session, stream=True)
    async for _ in stream:
        pass
    return (await stream.get_final_response()).text


async def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("run", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    # The errors in detail on a first run alone; a session's runs keep the
    # default, `Error: Function failed.`.
    agent = Agent(client(provider, detailed=state == "none"), "Run the checks.",
                  tools=[read_file, run_shell, edit_file, explode])
    session = agent.create_session()
    print(await ask(agent, session, f"Run the checks. [[e2e:{marker}]]", mode))
    if state == "session":
        print(await ask(agent, session, f"One more. [[e2e:{marker}-cont]]", mode))
    elif state != "none":
        raise SystemExit(f"unknown state {state}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
