"""One conversation with LlamaIndex's agent workflow (`llama-index-core`'s
`FunctionAgent`) through the gateway, with the workspace's tools.

    python llamaindex_agent.py PROVIDER MODE MARKER [memory]
    PROVIDER: openai-chat | openai-responses | anthropic | gemini | bedrock
              (its `OpenAI`, `OpenAIResponses`, `Anthropic`, `GoogleGenAI`
              and `BedrockConverse` LLMs)
    MODE: run (`await agent.run(…)`) | stream (the handler's
          `stream_events()`: the LLM's answers streamed)

`memory`: a second message after the first, both runs given the same
`Memory` (the conversation it keeps): MARKER, then MARKER-cont.

The agent runs each call and answers it with the API's result message; a
tool's exception becomes the result's text (`Error: …`, flagged where the
API has a flag), and so does an unknown tool.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import asyncio
import os
import sys

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context

import workspace_tools as W


def llm(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider == "openai-chat":
        from llama_index.llms.openai import OpenAI
        return OpenAI(model="gpt-4o", api_key=key, api_base=f"{gateway}/v1", max_retries=0)
    if provider == "openai-responses":
        from llama_index.llms.openai import OpenAIResponses
        return OpenAIResponses(model="gpt-4.1", api_key=key, api_base=f"{gateway}/v1", max_retries=0)
    if provider == "anthropic":
        from llama_index.llms.anthropic import Anthropic
        return Anthropic(model="claude-sonnet-4-5", api_key=key, base_url=gateway, max_tokens=1024, max_retries=0)
    if provider == "gemini":
        from google.genai.types import HttpOptions
        from llama_index.llms.google_genai import GoogleGenAI
        return GoogleGenAI(model="gemini-2.5-flash", api_key=key, http_options=HttpOptions(base_url=gateway),
                           max_retries=0)
    if provider == "bedrock":
        from llama_index.llms.bedrock_converse import BedrockConverse
        # A key of the client's own: the gateway signs again with its
        # credentials.
        return BedrockConverse(model=W.BEDROCK_MODEL, region_name="us-east-1", endpoint_url=f"{gateway}/bedrock",
                               aws_access_key_id="AKIDFRAMEWORKCLIENT",
                               aws_secret_access_key="the-gateway-signs-again", max_tokens=1024, max_retries=1)
    raise SystemExit(f"unknown provider {provider}")


async def ask(agent, ctx, memory, prompt: str, mode: str) -> str:
    handler = agent.run(user_msg=prompt, ctx=ctx, memory=memory)
    if mode == "stream":
        async for _ in handler.stream_events():
            pass
    return str(await handler)


async def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("run", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    tools = [FunctionTool.from_defaults(fn) for fn in W.TOOLS]
    agent = FunctionAgent(tools=tools, llm=llm(provider), system_prompt="Run the checks.",
                          streaming=mode == "stream")
    ctx = Context(agent)
    # The conversation's memory, given to each run (a `Context` alone does
    # not carry the first run's messages into the second).
    memory = Memory.from_defaults(session_id=marker, token_limit=100_000)
    print(await ask(agent, ctx, memory, f"Run the checks. [[e2e:{marker}]]", mode))
    if state == "memory":
        print(await ask(agent, ctx, memory, f"One more. [[e2e:{marker}-cont]]", mode))
    elif state != "none":
        raise SystemExit(f"unknown state {state}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
