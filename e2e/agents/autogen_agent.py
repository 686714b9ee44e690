"""One conversation with AutoGen (`autogen-agentchat`) through the gateway:
an `AssistantAgent` with the workspace's tools, run until the model
answers without calls.

    python autogen_agent.py PROVIDER MODE MARKER [again]
    PROVIDER: openai-chat | anthropic | bedrock (autogen-ext's
              `OpenAIChatCompletionClient`, `AnthropicChatCompletionClient`
              and `AnthropicBedrockChatCompletionClient`, the last Anthropic's
              Messages on Bedrock's `invoke` route)
    MODE: run (`await agent.run(…)`) | stream (`agent.run_stream(…)` with
          `model_client_stream=True`)

`again`: a second task to the same agent after the first (its model
context keeps the conversation): MARKER, then MARKER-cont.

AutoGen runs each call and answers it with the API's result message, a
tool's exception and an unknown tool as the result's text (flagged as an
error where the API has a flag).

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import asyncio
import os
import sys

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import TaskResult
from autogen_core.models import ModelFamily, ModelInfo

import workspace_tools as W

INFO = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN,
                 structured_output=False)


def client(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider == "openai-chat":
        from autogen_ext.models.openai import OpenAIChatCompletionClient
        return OpenAIChatCompletionClient(model="gpt-4o", api_key=key, base_url=f"{gateway}/v1")
    if provider == "anthropic":
        from autogen_ext.models.anthropic import AnthropicChatCompletionClient
        return AnthropicChatCompletionClient(model="claude-sonnet-4-5", api_key=key, base_url=gateway,
                                             model_info=INFO)
    if provider == "bedrock":
        from autogen_ext.models.anthropic import AnthropicBedrockChatCompletionClient, BedrockInfo
        # Anthropic's Bedrock client signs for the gateway's Bedrock route
        # (its base URL from the environment: autogen-ext passes it none)
        # with a key of its own; the gateway signs again with its
        # credentials.
        os.environ["ANTHROPIC_BEDROCK_BASE_URL"] = f"{gateway}/bedrock"
        info = BedrockInfo(aws_access_key="AKIDFRAMEWORKCLIENT", aws_secret_key="the-gateway-signs-again",
                           aws_session_token="", aws_region="us-east-1")
        return AnthropicBedrockChatCompletionClient(model=W.BEDROCK_MODEL, bedrock_info=info, model_info=INFO)
    raise SystemExit(f"unknown provider {provider}")


async def ask(agent, task: str, mode: str) -> str:
    if mode == "run":
        result = await agent.run(task=task)
    else:
        result = None
        async for event in agent.run_stream(task=task):
            if isinstance(event, TaskResult):
                result = event
        if result is None:
            raise SystemExit("the stream ended without its result")
    return result.messages[-1].to_text()


async def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("run", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    agent = AssistantAgent("checker", model_client=client(provider), tools=W.TOOLS,
                           system_message="Run the checks.", max_tool_iterations=20,
                           model_client_stream=mode == "stream")
    print(await ask(agent, f"Run the checks. [[e2e:{marker}]]", mode))
    if state == "again":
        print(await ask(agent, f"One more. [[e2e:{marker}-cont]]", mode))
    elif state != "none":
        raise SystemExit(f"unknown state {state}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
