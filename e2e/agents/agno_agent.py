"""One conversation with Agno (`agno`) through the gateway: an `Agent`
with the workspace's tools, run to its final answer.

    python agno_agent.py PROVIDER MODE MARKER [history]
    PROVIDER: openai-chat | openai-responses | anthropic | gemini | bedrock
              (its `OpenAIChat`, `OpenAIResponses`, `Claude`, `Gemini` and
              `AwsBedrock` models, the last boto3's Converse API)
    MODE: run (`agent.run(…)`) | stream (`agent.run(…, stream=True)`)

`history`: a second run in the same session after the first, the first's
messages added to its context (`add_history_to_context`, an in-memory
database): MARKER, then MARKER-cont.

Agno runs each call and answers it with the API's result message; a tool's
exception becomes the result's text, and so does an unknown tool.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import os
import sys

from agno.agent import Agent
from agno.db.in_memory import InMemoryDb

import workspace_tools as W


def model(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider == "openai-chat":
        from agno.models.openai import OpenAIChat
        return OpenAIChat(id="gpt-4o", api_key=key, base_url=f"{gateway}/v1")
    if provider == "openai-responses":
        from agno.models.openai import OpenAIResponses
        return OpenAIResponses(id="gpt-4.1", api_key=key, base_url=f"{gateway}/v1")
    if provider == "anthropic":
        from agno.models.anthropic import Claude
        return Claude(id="claude-sonnet-4-5", api_key=key, client_params={"base_url": gateway})
    if provider == "gemini":
        from agno.models.google import Gemini
        return Gemini(id="gemini-2.5-flash", api_key=key, client_params={"http_options": {"base_url": gateway}})
    if provider == "bedrock":
        from agno.models.aws import AwsBedrock
        # boto3 at the gateway's Bedrock route, with a key of the client's
        # own: the gateway signs again with its credentials.
        return AwsBedrock(id=W.BEDROCK_MODEL, client=W.bedrock_client(os.environ["E2E_GATEWAY"]))
    raise SystemExit(f"unknown provider {provider}")


def ask(agent, prompt: str, mode: str, session: str) -> str:
    if mode == "run":
        return agent.run(prompt, session_id=session).content
    last = None
    for event in agent.run(prompt, session_id=session, stream=True, yield_run_output=True):
        last = event
    return getattr(last, "content", None) or ""


def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    if mode not in ("run", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    agent = Agent(model=model(provider), tools=W.TOOLS, instructions="Run the checks.", db=InMemoryDb(),
                  add_history_to_context=True, telemetry=False)
    print(ask(agent, f"Run the checks. [[e2e:{marker}]]", mode, marker))
    if state == "history":
        print(ask(agent, f"One more. [[e2e:{marker}-cont]]", mode, marker))
    elif state != "none":
        raise SystemExit(f"unknown state {state}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
