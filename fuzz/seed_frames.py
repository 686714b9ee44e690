#!/usr/bin/env python3
"""Seeds that need framing (called by seed.sh with the corpus directory).

- eventstream: AWS event-stream frames (prelude, headers, payload, CRCs)
  of Bedrock answers: a recorded Anthropic stream's events as
  InvokeModelWithResponseStream `chunk`s, and ConverseStream events;
- h1: the recorded conversations as HTTP/1.1 requests (content-length and
  chunked), a response head, a chunked SSE body;
- voice_messages: Realtime and Gemini Live messages that carry calls,
  results and errors, each and all together (cut at 0xFF);
- ws_messages: the recorded Responses events as WebSocket messages (cut
  at 0xFF), and conversations as `response.create` messages;
- cloud_route: Azure OpenAI, Vertex AI and Bedrock paths with queries.
"""

import base64
import glob
import json
import os
import struct
import sys
import zlib


def frame(headers, payload):
    """One event-stream message: string-valued headers, CRC32s."""
    h = b""
    for name, value in headers:
        n, v = name.encode(), value.encode()
        h += bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v
    total = 12 + len(h) + len(payload) + 4
    prelude = struct.pack(">II", total, len(h))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + h + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(kind, payload):
    return frame(
        [(":event-type", kind), (":content-type", "application/json"),
         (":message-type", "event")],
        payload,
    )


def sse_data(path):
    """The `data:` payloads of an SSE recording, or its JSON lines."""
    out = []
    for line in open(path, "rb").read().splitlines():
        if line.startswith(b"data:"):
            out.append(line[5:].strip())
        elif line.startswith(b"{"):
            out.append(line.strip())
    return out


def write(target, name, data):
    os.makedirs(os.path.join("corpus", target), exist_ok=True)
    with open(os.path.join("corpus", target, name), "wb") as f:
        f.write(data)


def chunked(body, size):
    out = b""
    for i in range(0, len(body), size):
        piece = body[i:i + size]
        out += b"%x\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def main(corpus):
    anthropic = glob.glob(os.path.join(corpus, "sse", "anthropic*"))
    for path in anthropic:
        chunks = b"".join(
            event("chunk", json.dumps({"bytes": base64.b64encode(d).decode()}).encode())
            for d in sse_data(path))
        write("eventstream", os.path.basename(path) + ".invoke", chunks)
    converse = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": "tooluse_1", "name": "get_weather"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {
            "input": "{\"city\":\"Paris\"}"}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": {"inputTokens": 9, "outputTokens": 4}, "metrics": {"latencyMs": 1}}),
    ]
    write("eventstream", "converse", b"".join(
        event(k, json.dumps(p).encode()) for k, p in converse))
    write("eventstream", "exception", frame(
        [(":exception-type", "throttlingException"),
         (":content-type", "application/json"), (":message-type", "exception")],
        b'{"message":"slow down"}'))

    convs = sorted(glob.glob(os.path.join(corpus, "conversations", "*.json")))[:4]
    for path in convs:
        body = open(path, "rb").read()
        name = os.path.basename(path)
        route = b"/v1/messages" if "anthropic" in name else b"/v1/chat/completions"
        head = b"POST " + route + b" HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\n"
        write("h1", name + ".length", head + b"content-length: %d\r\n\r\n" % len(body) + body)
        write("h1", name + ".chunked",
              head + b"transfer-encoding: chunked\r\n\r\n" + chunked(body, 4096))
        create = b'{"type":"response.create",' + body.lstrip()[1:]
        write("ws_messages", name + ".create", create)
    for path in glob.glob(os.path.join(corpus, "sse", "*")):
        data = open(path, "rb").read()[:16384]
        write("h1", os.path.basename(path) + ".response",
              b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
              b"transfer-encoding: chunked\r\n\r\n" + chunked(data, 512))
        write("ws_messages", os.path.basename(path), b"\xff".join(sse_data(path)))

    # voice_messages: the Realtime and Gemini Live messages that carry calls,
    # results and errors, in the APIs' shapes (as tests/ws/voice.rs sends
    # them), one seed of all of them cut at 0xFF.
    voice = [
        b'{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_1","output":"{\\"error\\":\\"timeout\\"}"}}',
        b'{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}',
        b'{"type":"response.done","response":{"id":"resp_1","status":"completed","output":[{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\\"city\\":\\"Lisbon\\"}"}],"usage":{"input_tokens":10,"output_tokens":5}}}',
        b'{"type":"response.done","response":{"id":"resp_2","status":"failed","status_details":{"type":"failed","error":{"type":"server_error","code":"x","message":"boom"}},"output":[]}}',
        b'{"type":"error","error":{"type":"invalid_request_error","code":"unknown_call","message":"no such call"}}',
        b'{"type":"response.output_audio.delta","response_id":"resp_1","delta":"AAAAAAAA"}',
        b'{"setup":{"model":"models/gemini-live-2.5-flash","tools":[{"functionDeclarations":[{"name":"get_weather"}]}]}}',
        b'{"toolCall":{"functionCalls":[{"id":"fc_1","name":"get_weather","args":{"city":"Lisbon"}}]}}',
        b'{"tool_response":{"functionResponses":[{"id":"fc_1","name":"get_weather","response":{"error":"timeout"}}]}}',
        b'{"toolCallCancellation":{"ids":["fc_1"]}}',
        b'{"usageMetadata":{"promptTokenCount":72,"responseTokenCount":38,"totalTokenCount":110}}',
        b'{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":"AAAA"}}]}}}',
    ]
    for i, message in enumerate(voice):
        write("voice_messages", "voice-%d" % i, message)
    write("voice_messages", "voice-all", b"\xff".join(voice))

    for i, path in enumerate([
        b"/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        b"/azure/openai/v1/responses",
        b"/openai/responses?api-version=preview",
        b"/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        b"/vertex/v1beta1/projects/p/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict",
        b"/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke-with-response-stream",
        b"/bedrock/model/us.amazon.nova-pro-v1:0/converse-stream",
        b"/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aapplication-inference-profile%2Fa/invoke",
    ]):
        write("cloud_route", "path%d" % i, path)


if __name__ == "__main__":
    main(sys.argv[1])
