"""One conversation with AgentScope (`agentscope` 2.x, Alibaba's framework)
through the gateway: an `Agent` (its ReAct loop) with the workspace's tools
as `FunctionTool`s in a `Toolkit`, run to its final reply.

    python agentscope_agent.py PROVIDER MODE MARKER [history]
    PROVIDER: openai-chat | openai-responses | anthropic | gemini (its
              `OpenAIChatModel`, `OpenAIResponseModel`, `AnthropicChatModel`
              and `GeminiChatModel`)
    MODE: reply (`agent.reply`, the model's answers whole) | stream
          (`agent.reply_stream`, the model's answers streamed)

`history`: a second message to the same agent, which sends it with the
first's whole context: MARKER, then MARKER-cont.

Each tool is allowed (`PermissionDecision` ALLOW): AgentScope asks the user
before a call otherwise.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import asyncio
import os
import sys

from agentscope.agent import Agent, ReActConfig
from agentscope.message import Msg, UserMsg
from agentscope.permission import PermissionBehavior, PermissionDecision
from agentscope.tool import FunctionTool, Toolkit

import workspace_tools as W

ALLOW = PermissionDecision(behavior=PermissionBehavior.ALLOW, message="The e2e workspace's tools are allowed.")


def model(provider: str, stream: bool):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider in ("openai-chat", "openai-responses"):
        from agentscope.credential import OpenAICredential
        from agentscope.model import OpenAIChatModel, OpenAIResponseModel
        credential = OpenAICredential(api_key=key, base_url=f"{gateway}/v1")
        if provider == "openai-chat":
            return OpenAIChatModel(credential=credential, model="gpt-4o", stream=stream, max_retries=0)
        return OpenAIResponseModel(credential=credential, model="gpt-4.1", stream=stream, max_retries=0)
    if provider == "anthropic":
        from agentscope.credential import AnthropicCredential
        from agentscope.model import AnthropicChatModel
        return AnthropicChatModel(credential=AnthropicCredential(api_key=key, base_url=gateway),
                                  model="claude-sonnet-4-5", stream=stream, max_retries=0)
    if provider == "gemini":
        from agentscope.credential import GeminiCredential
        from agentscope.model import GeminiChatModel
        # Its credential takes no base URL: the Google Gen AI SDK's client
        # options do.
        return GeminiChatModel(credential=GeminiCredential(api_key=key), model="gemini-2.5-flash", stream=stream,
                               max_retries=0, client_kwargs={"http_options": {"base_url": gateway}})
    raise SystemExit(f"unknown provider {provider}")


async def ask(agent: Agent, text: str, mode: str) -> str:
    message = UserMsg(name="user", content=text)
    if mode == "reply":
        return (await agent.reply(message)).get_text_content() or ""
    final = None
    async for event in agent.reply_stream(message, yield_final_msg=True):
        if isinstance(event, Msg):
            final = event
    return final.get_text_content() if final else ""


async def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("reply", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    toolkit = Toolkit(tools=[FunctionTool(f, permission=ALLOW) for f in W.TOOLS])
    agent = Agent(name="e2e", system_prompt="Run the checks.", model=model(provider, mode == "stream"),
                  toolkit=toolkit, react_config=ReActConfig(max_iters=20))
    print(await ask(agent, f"Run the checks. [[e2e:{marker}]]", mode))
    if state == "history":
        print(await ask(agent, f"One more. [[e2e:{marker}-cont]]", mode))
    elif state != "none":
        raise SystemExit(f"unknown state {state}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
