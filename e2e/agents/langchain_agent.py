"""One conversation with LangChain's agent (`langchain.agents.create_agent`,
a LangGraph graph) through the gateway: the workspace's tools, `invoke` or
`stream`, on one of five chat models.

    python langchain_agent.py PROVIDER MODE MARKER [thread]
    PROVIDER: openai-chat | openai-responses | anthropic | google | bedrock
              (`ChatBedrockConverse`, the Converse API through boto3)
    MODE: invoke | stream

`thread`: the agent with a checkpointer (`InMemorySaver`) and a second
message on the same `thread_id` after the first run, which the graph
answers with the thread's whole history: MARKER, then MARKER-cont.

The agent's tool node answers arguments that fail validation and an unknown
tool itself, and raises any other exception from a tool, ending the run. So
the agent has the error-handling middleware of LangChain's documentation
(`wrap_tool_call`), which returns the exception to the model as the call's
`ToolMessage`, its status "error".

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final message;
exits non-zero on any error.
"""

import os
import sys

from langchain.agents import create_agent
from langchain.agents.middleware import wrap_tool_call
from langchain.messages import ToolMessage
from langchain.tools import tool

import workspace_tools as W


@wrap_tool_call
def tool_errors_to_model(request, handler):
    """A tool's exception, as the call's result."""
    try:
        return handler(request)
    except Exception as e:  # noqa: BLE001 - every failure goes to the model
        return ToolMessage(content=f"Tool error: {type(e).__name__}: {e}",
                           tool_call_id=request.tool_call["id"], status="error")


def model(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider in ("openai-chat", "openai-responses"):
        from langchain_openai import ChatOpenAI
        responses = provider == "openai-responses"
        return ChatOpenAI(model="gpt-4.1" if responses else "gpt-4o", base_url=f"{gateway}/v1", api_key=key,
                          use_responses_api=responses, max_retries=0)
    if provider == "anthropic":
        from langchain_anthropic import ChatAnthropic
        return ChatAnthropic(model="claude-sonnet-4-5", base_url=gateway, api_key=key, max_retries=0)
    if provider == "google":
        from langchain_google_genai import ChatGoogleGenerativeAI
        return ChatGoogleGenerativeAI(model="gemini-2.5-flash", base_url=gateway, google_api_key=key, retries=0)
    if provider == "bedrock":
        from langchain_aws import ChatBedrockConverse
        return ChatBedrockConverse(model=W.BEDROCK_MODEL, client=W.bedrock_client(gateway), region_name="us-east-1")
    raise SystemExit(f"unknown provider {provider}")


def run_once(agent, message: str, mode: str, config: dict) -> str:
    state = {"messages": [{"role": "user", "content": message}]}
    if mode == "invoke":
        final = agent.invoke(state, config)
    elif mode == "stream":
        # "messages" streams the model's tokens (the chat model's stream);
        # "values" gives the state after each step.
        final = None
        for kind, chunk in agent.stream(state, config, stream_mode=["messages", "values"]):
            if kind == "values":
                final = chunk
    else:
        raise SystemExit(f"unknown mode {mode}")
    return final["messages"][-1].text


def main(provider: str, mode: str, marker: str, state: str = "none") -> None:
    # Room for long scripted runs (scripts/detect-data/live_agents.py's).
    config = {"recursion_limit": 1000}
    checkpointer = None
    if state == "thread":
        from langgraph.checkpoint.memory import InMemorySaver
        checkpointer = InMemorySaver()
        config["configurable"] = {"thread_id": marker}
    elif state != "none":
        raise SystemExit(f"unknown state {state}")
    agent = create_agent(model(provider), tools=[tool(f) for f in W.TOOLS], system_prompt="Run the checks.",
                         middleware=[tool_errors_to_model], checkpointer=checkpointer)
    text = run_once(agent, f"Run the checks. [[e2e:{marker}]]", mode, config)
    if checkpointer:
        print(text)
        text = run_once(agent, f"One more. [[e2e:{marker}-cont]]", mode, config)
    print(text)


if __name__ == "__main__":
    main(*sys.argv[1:5])
