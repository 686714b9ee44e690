"""One conversation with Google's Gen AI SDK (`google-genai`) through the
gateway: its automatic function calling (AFC) runs the workspace's tools,
`generate_content` or `generate_content_stream`, on the Gemini API.

    python genai_agent.py MODE MARKER [chat]
    MODE: generate | stream

`chat`: a chat session (`client.chats.create`) and two messages, the second
sent with the whole history, AFC's calls and responses included: MARKER,
then MARKER-cont.

AFC answers a tool's exception, and arguments the function cannot take, with
`{"error": str(e)}` as the function's response; a result is
`{"result": …}`. (It has no answer for a function it was not given: the
SDK raises, so the script asks for none.)

Environment: E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
exits non-zero on any error.
"""

import os
import sys

from google import genai
from google.genai import types

import workspace_tools as W


def main(mode: str, marker: str, state: str = "none") -> None:
    client = genai.Client(api_key=os.environ["E2E_KEY"],
                          http_options=types.HttpOptions(base_url=os.environ["E2E_GATEWAY"]))
    config = types.GenerateContentConfig(
        system_instruction="Run the checks.", tools=W.TOOLS,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(maximum_remote_calls=500))
    model = "gemini-2.5-flash"
    prompt = f"Run the checks. [[e2e:{marker}]]"
    if state == "chat":
        chat = client.chats.create(model=model, config=config)
        for message in (prompt, f"One more. [[e2e:{marker}-cont]]"):
            if mode == "generate":
                text = chat.send_message(message).text
            else:
                text = "".join(chunk.text or "" for chunk in chat.send_message_stream(message))
            print(text)
        return
    if state != "none":
        raise SystemExit(f"unknown state {state}")
    if mode == "generate":
        text = client.models.generate_content(model=model, contents=prompt, config=config).text
    elif mode == "stream":
        text = "".join(chunk.text or "" for chunk in client.models.generate_content_stream(
            model=model, contents=prompt, config=config))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(text)


if __name__ == "__main__":
    main(*sys.argv[1:4])
