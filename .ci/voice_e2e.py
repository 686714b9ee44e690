"""The real SDKs' voice sockets through the gateway (run by voice_e2e.sh).

Starts two scripted upstreams (a Realtime server, a Gemini Live server
sending its JSON in binary frames, as Google's does), drives them through the
gateway with the `openai` SDK's `client.realtime.connect()` and
google-genai's `client.aio.live.connect()`, checks that every message the
SDKs sent reached the upstream unchanged, then reads the gateway's /metrics:
one call, one result, one failure per protocol, counted once although the
Realtime server echoes the client's item twice; nothing unparsed.
"""

import argparse
import asyncio
import json
import sys
import urllib.request

import websockets
from google import genai
from google.genai import types
from openai import AsyncOpenAI

RECEIVED = {"realtime": [], "live": []}


async def realtime_upstream(ws):
    await ws.send(json.dumps({"type": "session.created", "event_id": "e0",
                              "session": {"type": "realtime", "id": "sess_1", "model": "gpt-realtime"}}))
    n = 0
    async for raw in ws:
        RECEIVED["realtime"].append(raw)
        m = json.loads(raw)
        kind, out = m.get("type"), []
        if kind == "session.update":
            out.append({"type": "session.updated", "event_id": "e1", "session": m["session"]})
        elif kind == "conversation.item.create":
            item = dict(m["item"], object="realtime.item", status="completed", id="item_x")
            out += [{"type": "conversation.item.added", "event_id": "e2", "previous_item_id": None, "item": item},
                    {"type": "conversation.item.done", "event_id": "e3", "previous_item_id": None, "item": item}]
        elif kind == "response.create":
            n += 1
            rid = f"resp_{n}"
            output = [{"id": "item_c", "object": "realtime.item", "type": "function_call", "status": "completed",
                       "name": "book_table", "call_id": "call_b", "arguments": "{\"at\":\"19:00\"}"}] if n == 1 else []
            out.append({"type": "response.created", "event_id": "e4",
                        "response": {"object": "realtime.response", "id": rid, "status": "in_progress", "output": []}})
            out.append({"type": "response.output_audio.delta", "event_id": "e5", "response_id": rid,
                        "item_id": "i", "output_index": 0, "content_index": 0, "delta": "AAAA" * 1000})
            out.append({"type": "response.done", "event_id": "e6",
                        "response": {"object": "realtime.response", "id": rid, "status": "completed",
                                     "output": output, "usage": {"total_tokens": 3, "input_tokens": 2, "output_tokens": 1}}})
        for o in out:
            await ws.send(json.dumps(o))


async def live_upstream(ws):
    async for raw in ws:
        RECEIVED["live"].append(raw)
        m = json.loads(raw)
        out = []
        if "setup" in m:
            out.append({"setupComplete": {}})
        elif "client_content" in m or "clientContent" in m:
            out.append({"toolCall": {"functionCalls": [{"id": "fc_1", "name": "refund", "args": {"order": "A17"}}]}})
        elif "tool_response" in m or "toolResponse" in m:
            out.append({"serverContent": {"turnComplete": True}})
        for o in out:
            await ws.send(json.dumps(o).encode())


async def realtime(gw):
    client = AsyncOpenAI(base_url=f"{gw}/v1", api_key="sk-voice-e2e")
    sent = []
    async with client.realtime.connect(model="gpt-realtime") as conn:
        tools = [{"type": "function", "name": "book_table", "parameters": {"type": "object"}}]
        await conn.session.update(session={"type": "realtime", "tools": tools})
        await conn.response.create()
        calls = []
        async for ev in conn:
            if ev.type == "response.done":
                calls = [o for o in ev.response.output if o.type == "function_call"]
                break
        assert [c.call_id for c in calls] == ["call_b"], calls
        await conn.conversation.item.create(
            item={"type": "function_call_output", "call_id": "call_b", "output": "Error: no table free at 19:00"})
        await conn.response.create()
        async for ev in conn:
            if ev.type == "response.done":
                break
    assert len(RECEIVED["realtime"]) == 4, RECEIVED["realtime"]


async def live(gw):
    g = genai.Client(api_key="AIza-voice-e2e", http_options=types.HttpOptions(base_url=gw))
    # The SDK always opens wss:// when it holds a key; the gateway here is
    # plain, so its URL is given as ws:// and no TLS context is passed.
    g._api_client._websocket_base_url = lambda *a, **k: gw.replace("http://", "ws://")
    import google.genai.live as live_module
    connect = live_module.ws_connect
    live_module.ws_connect = lambda *a, **k: connect(*a, **{n: v for n, v in k.items() if n != "ssl"})
    config = {"response_modalities": ["AUDIO"], "tools": [{"function_declarations": [{"name": "refund"}]}]}
    async with g.aio.live.connect(model="gemini-live-2.5-flash", config=config) as session:
        await session.send_client_content(turns={"role": "user", "parts": [{"text": "Refund A17"}]})
        async for msg in session.receive():
            if msg.tool_call:
                fc = msg.tool_call.function_calls[0]
                await session.send_tool_response(function_responses=[
                    types.FunctionResponse(id=fc.id, name=fc.name, response={"error": "refunds are disabled"})])
            if msg.server_content and msg.server_content.turn_complete:
                break
    assert any("functionResponses" in r for r in RECEIVED["live"]), RECEIVED["live"]


def metric(text, name, labels):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            if all(f'{k}="{v}"' in line for k, v in labels.items()):
                total += float(line.rsplit(" ", 1)[1])
    return total


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gateway", required=True)
    p.add_argument("--openai-port", type=int, required=True)
    p.add_argument("--gemini-port", type=int, required=True)
    a = p.parse_args()
    async with websockets.serve(realtime_upstream, "127.0.0.1", a.openai_port), \
            websockets.serve(live_upstream, "127.0.0.1", a.gemini_port):
        await realtime(a.gateway)
        await live(a.gateway)
    want = {
        ("toolwarden_tool_calls_total", "openai", "book_table"): 1,
        ("toolwarden_tool_results_total", "openai", "book_table"): 1,
        ("toolwarden_tool_failures_total", "openai", "book_table"): 1,
        ("toolwarden_tool_calls_total", "gemini", "refund"): 1,
        ("toolwarden_tool_results_total", "gemini", "refund"): 1,
        ("toolwarden_tool_failures_total", "gemini", "refund"): 1,
    }
    for _ in range(50):
        text = urllib.request.urlopen(f"{a.gateway}/metrics").read().decode()
        got = {k: metric(text, k[0], {"provider": k[1], "tool": k[2]}) for k in want}
        if got == want:
            break
        await asyncio.sleep(0.1)
    failed = got != want
    for name in ("toolwarden_unparsed_requests_total", "toolwarden_unparsed_responses_total"):
        if metric(text, name, {}) != 0:
            print(f"{name} is not 0", file=sys.stderr)
            failed = True
    if failed:
        print("metrics:", got, "want:", want, file=sys.stderr)
        sys.exit(1)
    print("== voice sockets: calls, results and failures counted once")


asyncio.run(main())
