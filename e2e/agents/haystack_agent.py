"""One conversation with Haystack (`haystack-ai`) through the gateway: an
`Agent` with the workspace's tools, run to its final answer.

    python haystack_agent.py PROVIDER MODE MARKER [history]
    PROVIDER: openai-chat | openai-responses | anthropic | gemini | bedrock
              (its `OpenAIChatGenerator` (Chat Completions) and
              `OpenAIResponsesChatGenerator`, and the integrations'
              `AnthropicChatGenerator`, `GoogleGenAIChatGenerator` and
              `AmazonBedrockChatGenerator`, the last boto3's Converse API)
    MODE: run (`agent.run(…)`: whole answers) | stream (`agent.run(…,
          streaming_callback=…)`: the model's answers streamed)

`history`: a second message after the first, given the first run's
messages and a new user message: MARKER, then MARKER-cont. The first
run's messages begin with the system prompt, which the agent puts first
again: it is left out, else the second run's requests would carry it twice
and begin unlike the first run's.

The agent runs each call (`raise_on_tool_invocation_failure=False`, its
default: a failure goes back to the model) and answers it with the API's
result message: a tool's exception as `Failed to invoke Tool `…` with
parameters {…}. Error: …`, an unknown tool as `Tool '…' not found.
Available tools: …`, both flagged where the API has a flag (Anthropic's
`is_error`, Bedrock's `status: error`). It checks no arguments: they go to
the function as they came.

The gateway's URL reaches the integrations as their SDKs read it from the
environment (`ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`,
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`): their generators take no base URL.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import os
import sys

# Haystack reports usage to its makers unless told not to.
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

from haystack.components.agents import Agent  # noqa: E402
from haystack.dataclasses import ChatMessage, ChatRole, StreamingChunk  # noqa: E402
from haystack.tools import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402

import workspace_tools as W  # noqa: E402


def generator(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    api_key = Secret.from_token(key)
    if provider == "openai-chat":
        from haystack.components.generators.chat import OpenAIChatGenerator
        return OpenAIChatGenerator(api_key=api_key, model="gpt-4o", api_base_url=f"{gateway}/v1", max_retries=0)
    if provider == "openai-responses":
        from haystack.components.generators.chat import OpenAIResponsesChatGenerator
        return OpenAIResponsesChatGenerator(api_key=api_key, model="gpt-4.1", api_base_url=f"{gateway}/v1",
                                            max_retries=0)
    if provider == "anthropic":
        from haystack_integrations.components.generators.anthropic import AnthropicChatGenerator
        os.environ["ANTHROPIC_BASE_URL"] = gateway
        return AnthropicChatGenerator(api_key=api_key, model="claude-sonnet-4-5", max_retries=0)
    if provider == "gemini":
        from haystack_integrations.components.generators.google_genai import GoogleGenAIChatGenerator
        os.environ["GOOGLE_GEMINI_BASE_URL"] = gateway
        return GoogleGenAIChatGenerator(api_key=api_key, model="gemini-2.5-flash", max_retries=0)
    if provider == "bedrock":
        from haystack_integrations.components.generators.amazon_bedrock import AmazonBedrockChatGenerator
        # boto3 at the gateway's Bedrock route, with a key of the client's
        # own: the gateway signs again with its credentials.
        os.environ["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = f"{gateway}/bedrock"
        return AmazonBedrockChatGenerator(
            model=W.BEDROCK_MODEL, aws_access_key_id=Secret.from_token("AKIDFRAMEWORKCLIENT"),
            aws_secret_access_key=Secret.from_token("the-gateway-signs-again"), aws_session_token=None,
            aws_profile_name=None, aws_region_name="us-east-1")
    raise SystemExit(f"unknown provider {provider}")


def ask(agent, messages: list, mode: str) -> dict:
    if mode == "run":
        return finished(agent.run(messages=messages))
    chunks = []

    def on_chunk(chunk: StreamingChunk) -> None:
        chunks.append(chunk)

    result = agent.run(messages=messages, streaming_callback=on_chunk)
    if not any(c.content for c in chunks):
        raise SystemExit("streamed, but no text chunk came")
    return finished(result)


def finished(result: dict) -> dict:
    if result.get("exit_reason") != "text":
        raise SystemExit(f"the agent stopped for {result.get('exit_reason')!r}, not on a text answer")
    return result


def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("run", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    tools = [create_tool_from_function(fn) for fn in W.TOOLS]
    # A step is one model request and the calls it asks for: the scripts
    # need eleven at most; the default, 100, would hide a loop.
    agent = Agent(chat_generator=generator(provider), tools=tools, system_prompt="Run the checks.",
                  max_agent_steps=20)
    result = ask(agent, [ChatMessage.from_user(f"Run the checks. [[e2e:{marker}]]")], mode)
    print(result["last_message"].text)
    if state == "history":
        history = [m for m in result["messages"] if not m.is_from(ChatRole.SYSTEM)]
        result = ask(agent, history + [ChatMessage.from_user(f"One more. [[e2e:{marker}-cont]]")], mode)
        print(result["last_message"].text)
    elif state != "none":
        raise SystemExit(f"unknown state {state}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
