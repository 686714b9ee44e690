"""One conversation with Hugging Face smolagents (`smolagents`) through the
gateway: a `ToolCallingAgent` with the workspace's tools, run to its
`final_answer` call.

    python smolagents_agent.py PROVIDER MODE MARKER
    PROVIDER: openai-chat (smolagents' `OpenAIServerModel`) | hf-inference
              (its default `InferenceClientModel`, Hugging Face's client,
              at the gateway's Chat URL) | litellm-chat | litellm-anthropic |
              litellm-gemini | litellm-bedrock (its `LiteLLMModel` on
              LiteLLM's `openai/`, `anthropic/`, `gemini/` and
              `bedrock/converse/` models)
    MODE: run | stream (`stream_outputs=True`: the model's answers streamed)

The model calls tools as Chat Completions lets it, but the agent sends its
steps back as text: `Calling tools:\n[…]` in an assistant message, then
`Observation:\n…` or `Call id: …\nError:\n…` in a user message; it
answers a tool's exception, an unknown tool and arguments of the wrong type
so, itself. The run ends with the agent's own `final_answer` tool.

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final answer;
exits non-zero on any error.
"""

import os
import sys

from smolagents import InferenceClientModel, LiteLLMModel, OpenAIServerModel, ToolCallingAgent, tool

import workspace_tools as W


@tool
def read_file(path: str) -> str:
    """Read a text file.

    Args:
        path: The file's path in the workspace.
    """
    return W.read_file(path)


@tool
def run_shell(command: str) -> str:
    """Run a shell command; fails when it exits non-zero.

    Args:
        command: The command line.
    """
    return W.run_shell(command)


@tool
def edit_file(path: str, old: str, new: str) -> str:
    """Replace text in a file.

    Args:
        path: The file's path in the workspace.
        old: The text to replace.
        new: The text to put in its place.
    """
    return W.edit_file(path, old, new)


@tool
def explode() -> str:
    """A tool with a bug: it always throws an AttributeError."""
    return W.explode()


def model(provider: str):
    gateway, key = os.environ["E2E_GATEWAY"], os.environ["E2E_KEY"]
    if provider == "openai-chat":
        return OpenAIServerModel(model_id="gpt-4o", api_base=f"{gateway}/v1", api_key=key)
    if provider == "hf-inference":
        return InferenceClientModel(model_id=f"{gateway}/v1/chat/completions", api_key=key)
    if provider == "litellm-chat":
        return LiteLLMModel(model_id="openai/gpt-4o", api_base=f"{gateway}/v1", api_key=key)
    if provider == "litellm-anthropic":
        return LiteLLMModel(model_id="anthropic/claude-sonnet-4-5", api_base=gateway, api_key=key)
    if provider == "litellm-gemini":
        return LiteLLMModel(model_id="gemini/gemini-2.5-flash", api_base=f"{gateway}/v1beta", api_key=key)
    if provider == "litellm-bedrock":
        # LiteLLM signs for the gateway's Bedrock route with a key of its
        # own; the gateway signs again with its credentials.
        return LiteLLMModel(model_id=f"bedrock/converse/{W.BEDROCK_MODEL}",
                            aws_bedrock_runtime_endpoint=f"{gateway}/bedrock", aws_region_name="us-east-1",
                            aws_access_key_id="AKIDFRAMEWORKCLIENT", aws_secret_access_key="the-gateway-signs-again")
    raise SystemExit(f"unknown provider {provider}")


def main(provider: str, mode: str, marker: str) -> None:
    if mode not in ("run", "stream"):
        raise SystemExit(f"unknown mode {mode}")
    agent = ToolCallingAgent(tools=[read_file, run_shell, edit_file, explode], model=model(provider),
                             max_steps=12, stream_outputs=mode == "stream", verbosity_level=0)
    answer = agent.run(f"Run the checks. [[e2e:{marker}]]")
    print(answer)


if __name__ == "__main__":
    main(*sys.argv[1:4])
