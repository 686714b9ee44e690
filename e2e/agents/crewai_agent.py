"""One conversation with CrewAI (`crewai`) through the gateway: a crew of
one agent with the workspace's tools and one task, run by `kickoff`.

    python crewai_agent.py PROVIDER MODE MARKER
    PROVIDER: openai-chat | openai-responses | anthropic | gemini | bedrock
              (CrewAI's native providers: the official `openai`, `anthropic`
              and `google-genai` SDKs, and boto3's Converse API)
    MODE: run | stream (the LLM's `stream=True`)

CrewAI calls tools as the API lets it (its "native tool calls") and answers
each with the API's own result message; a tool's exception becomes the
result's text (`Error executing tool: …`), and an unknown tool is answered
`Tool not found`. The crew has two agents: the checker, whose task it is,
may delegate work to the reader (`delegate_work_to_coworker`), which runs
the work as a conversation of its own inside that call.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the crew's output;
exits non-zero on any error.
"""

import os
import sys

# CrewAI's telemetry and its first-run prompts: off (no network here).
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import tool  # noqa: E402

import workspace_tools as W  # noqa: E402


@tool("read_file")
def read_file(path: str) -> str:
    """Read a text file."""
    return W.read_file(path)


@tool("run_shell")
def run_shell(command: str) -> str:
    """Run a shell command; fails when it exits non-zero."""
    return W.run_shell(command)


@tool("edit_file")
def edit_file(path: str, old: str, new: str) -> str:
    """Replace text in a file."""
    return W.edit_file(path, old, new)


@tool("explode")
def explode() -> str:
    """A tool with a bug: it always throws an AttributeError."""
    return W.explode()


def llm(provider: str, stream: bool):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider == "openai-chat":
        return LLM(model="openai/gpt-4o", base_url=f"{gateway}/v1", api_key=key, stream=stream)
    if provider == "openai-responses":
        return LLM(model="openai/gpt-4.1", base_url=f"{gateway}/v1", api_key=key, stream=stream,
                   api="responses")
    if provider == "anthropic":
        return LLM(model="anthropic/claude-sonnet-4-5", base_url=gateway, api_key=key, stream=stream)
    if provider == "gemini":
        # google-genai's client takes the Gemini API's base from the
        # environment (CrewAI passes it no `http_options`).
        os.environ["GOOGLE_GEMINI_BASE_URL"] = gateway
        return LLM(model="gemini/gemini-2.5-flash", api_key=key, stream=stream)
    if provider == "bedrock":
        # boto3's endpoint for one service, from the environment; a key of
        # the client's own: the gateway signs again with its credentials.
        os.environ["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = f"{gateway}/bedrock"
        return LLM(model=f"bedrock/{W.BEDROCK_MODEL}", region_name="us-east-1", stream=stream,
                   aws_access_key_id="AKIDFRAMEWORKCLIENT", aws_secret_access_key="the-gateway-signs-again")
    raise SystemExit(f"unknown provider {provider}")


def main(provider: str, mode: str, marker: str) -> None:
    if mode not in ("run", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    model = llm(provider, mode == "stream")
    # The checker may hand work to the reader (CrewAI's delegation tools):
    # the reader's task is a conversation of its own, run inside the
    # checker's tool call, whose result is the reader's answer.
    reader = Agent(role="Reader", goal="Read the workspace's files.", backstory="A patient reader.",
                   tools=[read_file, run_shell], llm=model, max_iter=20, verbose=False, allow_delegation=False)
    checker = Agent(role="Checker", goal="Run the workspace's checks.", backstory="A careful engineer.",
                    tools=[read_file, run_shell, edit_file, explode], llm=model, max_iter=20, verbose=False,
                    allow_delegation=True)
    task = Task(description=f"Run the checks. [[e2e:{marker}]]", expected_output="What the checks found.",
                agent=checker)
    result = Crew(agents=[checker, reader], tasks=[task], verbose=False).kickoff()
    print(result.raw)


if __name__ == "__main__":
    main(*sys.argv[1:4])
