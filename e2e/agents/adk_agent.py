"""One conversation with Google's Agent Development Kit (`google-adk`)
through the gateway: an `LlmAgent` with the workspace's tools, run by an
`InMemoryRunner`, its events read whole or streamed (`StreamingMode.SSE`).

    python adk_agent.py PROVIDER MODE MARKER [session]
    PROVIDER: google (ADK's `Gemini`) | openai-chat | anthropic (ADK's
              `LiteLlm`, LiteLLM's `openai/` and `anthropic/` models)
    MODE: run | stream

`session`: a second message in the same session after the first run, which
ADK sends with the session's whole history: MARKER, then MARKER-cont.

ADK ends a run on a tool's exception; its `ReflectAndRetryToolPlugin`, as
its documentation shows, answers it instead with a structured failure
(`response_type`, `error_type`, `error_details`, `reflection_guidance`) as
the function's response. ADK answers an unknown tool itself.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import asyncio
import os
import sys

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

import workspace_tools as W


def model(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider == "google":
        from google.adk.models.google_llm import Gemini
        os.environ["GOOGLE_API_KEY"] = key
        return Gemini(model="gemini-2.5-flash", base_url=gateway)
    from google.adk.models.lite_llm import LiteLlm
    if provider == "openai-chat":
        return LiteLlm(model="openai/gpt-4o", api_base=f"{gateway}/v1", api_key=key)
    if provider == "anthropic":
        return LiteLlm(model="anthropic/claude-sonnet-4-5", api_base=gateway, api_key=key)
    raise SystemExit(f"unknown provider {provider}")


async def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    agent = LlmAgent(name="e2e", model=model(provider), instruction="Run the checks.", tools=W.TOOLS)
    app = App(name="e2e", root_agent=agent,
              plugins=[ReflectAndRetryToolPlugin(max_retries=3, throw_exception_if_retry_exceeded=False)])
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name="e2e", user_id="e2e")
    config = RunConfig(streaming_mode={"run": StreamingMode.NONE, "stream": StreamingMode.SSE}[mode])
    messages = [f"Run the checks. [[e2e:{marker}]]"]
    if state == "session":
        messages.append(f"One more. [[e2e:{marker}-cont]]")
    elif state != "none":
        raise SystemExit(f"unknown state {state}")
    for text in messages:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        final = ""
        async for event in runner.run_async(user_id="e2e", session_id=session.id, new_message=message,
                                            run_config=config):
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(p.text or "" for p in event.content.parts)
        print(final)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
