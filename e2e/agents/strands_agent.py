"""One conversation with Strands Agents (`strands-agents`) through the
gateway: an `Agent` with the workspace's tools, run to its final answer.

    python strands_agent.py PROVIDER MODE MARKER [session]
    PROVIDER: openai-chat | openai-responses | anthropic | gemini | bedrock
              (Strands' `OpenAIModel`, `OpenAIResponsesModel`,
              `AnthropicModel`, `GeminiModel` and `BedrockModel`, the
              Converse API through boto3)
    MODE: invoke (`agent(prompt)`; OpenAI Chat and Bedrock whole answers:
          `stream=False`, `streaming=False`) | stream (`agent.stream_async`,
          every model's answers streamed)

`session`: a second message to the same agent after the first (its
conversation kept in the agent), both in one event loop
(`invoke_async` or `stream_async`): MARKER, then MARKER-cont.

Strands runs each call and answers it with the API's result message; a
tool's exception becomes a result with the error's text (`status: error`
where the API has one), and so does an unknown tool.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import asyncio
import os
import sys

from strands import Agent, tool

import workspace_tools as W


@tool
def read_file(path: str) -> str:
    """Read a text file.

    Args:
        path: The file's path in the workspace.
    """
    return W.read_file(path)


@tool
def run_shell(command: str) -> str:
    """Run a shell command; fails when it exits non-zero.

    Args:
        command: The command line.
    """
    return W.run_shell(command)


@tool
def edit_file(path: str, old: str, new: str) -> str:
    """Replace text in a file.

    Args:
        path: The file's path in the workspace.
        old: The text to replace.
        new: The text to put in its place.
    """
    return W.edit_file(path, old, new)


@tool
def explode() -> str:
    """A tool with a bug: it always throws an AttributeError."""
    return W.explode()


def model(provider: str, whole: bool):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider == "openai-chat":
        from strands.models.openai import OpenAIModel
        return OpenAIModel(client_args={"api_key": key, "base_url": f"{gateway}/v1"}, model_id="gpt-4o",
                           stream=not whole)
    if provider == "openai-responses":
        from strands.models.openai_responses import OpenAIResponsesModel
        return OpenAIResponsesModel(client_args={"api_key": key, "base_url": f"{gateway}/v1"}, model_id="gpt-4.1")
    if provider == "anthropic":
        from strands.models.anthropic import AnthropicModel
        return AnthropicModel(client_args={"api_key": key, "base_url": gateway}, model_id="claude-sonnet-4-5",
                              max_tokens=1024)
    if provider == "gemini":
        from strands.models.gemini import GeminiModel
        return GeminiModel(client_args={"api_key": key, "http_options": {"base_url": gateway}},
                           model_id="gemini-2.5-flash")
    if provider == "bedrock":
        import boto3
        from strands.models.bedrock import BedrockModel
        # A key of the client's own: the gateway signs again with its
        # credentials.
        session = boto3.Session(aws_access_key_id="AKIDFRAMEWORKCLIENT",
                                aws_secret_access_key="the-gateway-signs-again", region_name="us-east-1")
        return BedrockModel(model_id=W.BEDROCK_MODEL, boto_session=session, endpoint_url=f"{gateway}/bedrock",
                            streaming=not whole)
    raise SystemExit(f"unknown provider {provider}")


async def streamed(agent, prompt):
    result = None
    async for event in agent.stream_async(prompt):
        if "result" in event:
            result = event["result"]
    if result is None:
        raise SystemExit("the stream ended without its result")
    return result


def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("invoke", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    agent = Agent(model=model(provider, mode == "invoke"), tools=[read_file, run_shell, edit_file, explode],
                  system_prompt="Run the checks.", callback_handler=None)
    first = f"Run the checks. [[e2e:{marker}]]"
    if state == "none":
        result = agent(first) if mode == "invoke" else asyncio.run(streamed(agent, first))
        print(str(result).strip())
        return
    if state != "session":
        raise SystemExit(f"unknown state {state}")

    # Both messages in one event loop: `agent(prompt)` runs each call in a
    # loop of its own, and a second one finds the Anthropic SDK's pooled
    # connection bound to the first's closed loop (`Event loop is closed`),
    # so the SDK sends that request again.
    async def both():
        for prompt in (first, f"One more. [[e2e:{marker}-cont]]"):
            result = await (agent.invoke_async(prompt) if mode == "invoke" else streamed(agent, prompt))
            print(str(result).strip())

    asyncio.run(both())


if __name__ == "__main__":
    main(*sys.argv[1:5])
