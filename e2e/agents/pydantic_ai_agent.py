"""One conversation with Pydantic AI through the gateway: the workspace's
tools, `Agent.run` or `Agent.run_stream_events`, on one of five models.

    python pydantic_ai_agent.py PROVIDER MODE MARKER [history]
    PROVIDER: openai-chat | openai-responses | anthropic | google | bedrock
              (the Converse API, through boto3)
    MODE: run | stream

`history`: a second run after the first, given the first's messages
(`message_history=result.all_messages()`, as a chat application continues
a conversation): MARKER, then MARKER-cont.

A tool's exception is the framework's to handle: Pydantic AI ends the run on
one it does not know. So, as its documentation asks, the tools report a
failure the model should see as `ToolFailed` (a finished call that failed)
or `ModelRetry` (try again, with other arguments); Pydantic AI itself
answers an unknown tool and arguments that fail validation with a retry
prompt. A tool with a bug (`explode`) would end the run, so it is not given.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final output;
exits non-zero on any error.
"""

import asyncio
import functools
import os
import sys

from pydantic_ai import Agent, AgentRunResultEvent, ModelRetry
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.usage import UsageLimits

import workspace_tools as W

# Room for long scripted runs (scripts/detect-data/live_agents.py's).
LIMITS = UsageLimits(request_limit=500)


def failing_as(exc, fn):
    """`fn`, its exceptions reported to the model as `exc`."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - every failure goes to the model
            raise exc(f"{type(e).__name__}: {e}") from e
    return wrapped


def model(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider in ("openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider
        p = OpenAIProvider(base_url=f"{gateway}/v1", api_key=key)
        return OpenAIChatModel("gpt-4o", provider=p) if provider == "openai-chat" else \
            OpenAIResponsesModel("gpt-4.1", provider=p)
    if provider == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
        client = AsyncAnthropic(base_url=gateway, api_key=key, max_retries=0)
        return AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(anthropic_client=client))
    if provider == "google":
        from google import genai
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider
        client = genai.Client(api_key=key, http_options=genai.types.HttpOptions(base_url=gateway))
        return GoogleModel("gemini-2.5-flash", provider=GoogleProvider(client=client))
    if provider == "bedrock":
        from pydantic_ai.models.bedrock import BedrockConverseModel
        from pydantic_ai.providers.bedrock import BedrockProvider
        return BedrockConverseModel(W.BEDROCK_MODEL, provider=BedrockProvider(bedrock_client=W.bedrock_client(gateway)))
    raise SystemExit(f"unknown provider {provider}")


async def run_once(agent, prompt: str, mode: str, history):
    if mode == "run":
        return await agent.run(prompt, message_history=history, usage_limits=LIMITS)
    if mode == "stream":
        async with agent.run_stream_events(prompt, message_history=history, usage_limits=LIMITS) as events:
            async for event in events:
                if isinstance(event, AgentRunResultEvent):
                    return event.result
        raise SystemExit("the stream ended without its result")
    raise SystemExit(f"unknown mode {mode}")


async def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    agent = Agent(
        model(provider), instructions="Run the checks.", retries=3,
        tools=[failing_as(ToolFailed, W.read_file), failing_as(ToolFailed, W.run_shell),
               failing_as(ModelRetry, W.edit_file)])
    result = await run_once(agent, f"Run the checks. [[e2e:{marker}]]", mode, None)
    if state == "history":
        print(result.output)
        result = await run_once(agent, f"One more. [[e2e:{marker}-cont]]", mode, result.all_messages())
    elif state != "none":
        raise SystemExit(f"unknown state {state}")
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
