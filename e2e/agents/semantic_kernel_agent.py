"""One conversation with Semantic Kernel (`semantic-kernel`) through the
gateway: an agent with the workspace's tools as a plugin, run to its final
answer.

    python semantic_kernel_agent.py PROVIDER MODE MARKER [thread]
    PROVIDER: openai-chat | openai-responses | azure-chat | azure-responses |
              anthropic | gemini | bedrock
              (a `ChatCompletionAgent` on its `OpenAIChatCompletion`,
              `AnthropicChatCompletion`, `GoogleAIChatCompletion` and
              `BedrockChatCompletion` services, the last boto3's Converse
              API; an `OpenAIResponsesAgent` on the Responses API, with
              `store_enabled=False`: the whole conversation in each request;
              `azure-…`, its `AzureChatCompletion` and `AzureResponsesAgent`
              on Azure OpenAI at the gateway's `/azure`)
    MODE: invoke (`await agent.get_response(…)`) | stream
          (`agent.invoke_stream(…)`)

`thread`: a second message on the same thread after the first: MARKER,
then MARKER-cont.

The kernel runs each call of its functions (named `Tools-read_file`: the
plugin's name, a dash, the function's) and answers it with the API's
result message: a function's exception as `An error occurred while
invoking the function …: …`, an unknown function, missing or unexpected
arguments in sentences of its own; nothing is flagged.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import asyncio
import os
import sys
from typing import Annotated

from semantic_kernel.connectors.ai import FunctionChoiceBehavior
from semantic_kernel.functions import kernel_function

import workspace_tools as W


class Tools:
    """The workspace's tools as a plugin."""

    @kernel_function(description="Read a text file.")
    def read_file(self, path: Annotated[str, "The file's path in the workspace."]) -> str:
        return W.read_file(path)

    @kernel_function(description="Run a shell command; fails when it exits non-zero.")
    def run_shell(self, command: Annotated[str, "The command line."]) -> str:
        return W.run_shell(command)

    @kernel_function(description="Replace text in a file.")
    def edit_file(self, path: Annotated[str, "The file's path in the workspace."],
                  old: Annotated[str, "The text to replace."], new: Annotated[str, "The text to put in its place."]) -> str:
        return W.edit_file(path, old, new)

    @kernel_function(description="A tool with a bug: it always throws an AttributeError.")
    def explode(self) -> str:
        return W.explode()


def azure_client(gateway: str, key: str):
    """The `openai` SDK's Azure client at the gateway's `/azure`: a
    deployment's path, its API version in the query, the key in `api-key`.
    Given to the kernel whole, as its settings take an `https` endpoint
    only."""
    from openai import AsyncAzureOpenAI
    return AsyncAzureOpenAI(azure_endpoint=f"{gateway}/azure", api_key=key, api_version="2025-04-01-preview")

# The kernel stops running calls after five round trips by default; the
# scripts have more.
CHOICE = FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=20)


def agent(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    common = {"name": "checker", "instructions": "Run the checks.", "plugins": [Tools()],
              "function_choice_behavior": CHOICE}
    if provider == "azure-responses":
        from semantic_kernel.agents import AzureResponsesAgent
        return AzureResponsesAgent(ai_model_id="gpt-4.1", client=azure_client(gateway, key), store_enabled=False,
                                   **common)
    if provider == "openai-responses":
        from openai import AsyncOpenAI
        from semantic_kernel.agents import OpenAIResponsesAgent
        client = AsyncOpenAI(api_key=key, base_url=f"{gateway}/v1")
        # Its default, `store`, chains each round to the last response by
        # id and sends the run's messages again, the results already
        # stored among them: the API's context then holds each output more
        # than once. Without it the whole conversation goes each time, as
        # the other clients send it.
        return OpenAIResponsesAgent(ai_model_id="gpt-4.1", client=client, store_enabled=False, **common)
    from semantic_kernel.agents import ChatCompletionAgent
    if provider == "openai-chat":
        from openai import AsyncOpenAI
        from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
        service = OpenAIChatCompletion(ai_model_id="gpt-4o",
                                       async_client=AsyncOpenAI(api_key=key, base_url=f"{gateway}/v1"))
    elif provider == "azure-chat":
        from semantic_kernel.connectors.ai.open_ai import AzureChatCompletion
        service = AzureChatCompletion(deployment_name="gpt-4o", async_client=azure_client(gateway, key))
    elif provider == "anthropic":
        from anthropic import AsyncAnthropic
        from semantic_kernel.connectors.ai.anthropic import AnthropicChatCompletion
        service = AnthropicChatCompletion(ai_model_id="claude-sonnet-4-5", api_key=key,
                                          async_client=AsyncAnthropic(api_key=key, base_url=gateway))
    elif provider == "gemini":
        from google import genai
        from semantic_kernel.connectors.ai.google.google_ai import GoogleAIChatCompletion
        service = GoogleAIChatCompletion(gemini_model_id="gemini-2.5-flash", api_key=key,
                                         client=genai.Client(api_key=key, http_options={"base_url": gateway}))
    elif provider == "bedrock":
        from semantic_kernel.connectors.ai.bedrock import BedrockChatCompletion
        # boto3 at the gateway's Bedrock route, with a key of the client's
        # own: the gateway signs again with its credentials.
        service = BedrockChatCompletion(model_id=W.BEDROCK_MODEL, runtime_client=W.bedrock_client(gateway),
                                        client=object())
    else:
        raise SystemExit(f"unknown provider {provider}")
    return ChatCompletionAgent(service=service, **common)


async def ask(agent, thread, prompt: str, mode: str):
    """The agent's answer to `prompt` on `thread` (None: a new one), and the
    thread it ran on."""
    if mode == "invoke":
        response = await agent.get_response(messages=prompt, thread=thread)
        return str(response.content), response.thread
    text = []
    async for chunk in agent.invoke_stream(messages=prompt, thread=thread):
        text.append(str(chunk.content))
        thread = chunk.thread
    return "".join(text), thread


async def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("invoke", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    a = agent(provider)
    text, thread = await ask(a, None, f"Run the checks. [[e2e:{marker}]]", mode)
    print(text)
    if state == "thread":
        text, _ = await ask(a, thread, f"One more. [[e2e:{marker}-cont]]", mode)
        print(text)
    elif state != "none":
        raise SystemExit(f"unknown state {state}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
