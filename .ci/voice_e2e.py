"""The real SDKs' voice sockets through the gateway (run by voice_e2e.sh).

Starts three scripted upstreams (a Realtime server; a Gemini Live server
and a Vertex AI Live server, each sending its JSON in binary frames, as
Google's do), drives them through the gateway with the `openai` SDK's
`client.realtime.connect()` and google-genai's `client.aio.live.connect()`
(with an API key, then in Vertex mode: `vertexai=True`, a project, a
location and an OAuth2 credentials object holding a token), checks that
every message the SDKs sent reached the upstream unchanged (and, for
Vertex, the path, the client's own Bearer token and the `setup.model`'s
`projects/…/publishers/google/models/…` form), then reads the gateway's
/metrics: one call, one result, one failure per socket, counted once
although the Realtime server echoes the client's item twice and writes
each call in `response.output_item.done` and again in `response.done`;
the call of a Realtime response the client hangs up on before its
`response.done`; the Live servers' `usageMetadata` tokens counted once;
nothing unparsed. Then the same Vertex session through a second gateway
with no Vertex upstream set: its socket goes to the regional host its
setup names (us-central1-aiplatform.googleapis.com), which the gateway's
`--resolve` leads to a TLS server here; checks that server saw the name
as SNI and `Host`, the path and token, and the second gateway's counts.
"""

import argparse
import asyncio
import json
import ssl
import sys
import urllib.request

import websockets
from google import genai
from google.genai import types
from openai import AsyncOpenAI

RECEIVED = {"realtime": [], "live": [], "vertex": [], "regional": []}
UPGRADES = []  # (path, Authorization) of each Vertex upgrade
REGIONAL = []  # (SNI, Host, path, Authorization) of each regional upgrade
SNI = []
REGIONAL_HOST = "us-central1-aiplatform.googleapis.com"
VERTEX_TOKEN = "ya29.voice-e2e-client-token"


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
            # The first response calls book_table, the second speaks, the
            # third calls cancel_booking and never ends (the client hangs
            # up after the call's `response.output_item.done`).
            n += 1
            rid = f"resp_{n}"
            calls = {1: ("book_table", "call_b", "{\"at\":\"19:00\"}"), 3: ("cancel_booking", "call_c", "{}")}
            output = [{"id": f"item_{n}", "object": "realtime.item", "type": "function_call", "status": "completed",
                       "name": name, "call_id": call_id, "arguments": args}
                      for name, call_id, args in [calls[n]]] if n in calls else []
            out.append({"type": "response.created", "event_id": "e4",
                        "response": {"object": "realtime.response", "id": rid, "status": "in_progress", "output": []}})
            out.append({"type": "response.output_audio.delta", "event_id": "e5", "response_id": rid,
                        "item_id": "i", "output_index": 0, "content_index": 0, "delta": "AAAA" * 1000})
            for i, item in enumerate(output):
                out.append({"type": "response.output_item.done", "event_id": "e7", "response_id": rid,
                            "output_index": i, "item": item})
            if n != 3:
                out.append({"type": "response.done", "event_id": "e6",
                            "response": {"object": "realtime.response", "id": rid, "status": "completed",
                                         "output": output,
                                         "usage": {"total_tokens": 3, "input_tokens": 2, "output_tokens": 1}}})
        for o in out:
            await ws.send(json.dumps(o))


async def live_upstream(ws, kind="live"):
    async for raw in ws:
        RECEIVED[kind].append(raw)
        m = json.loads(raw)
        out = []
        if "setup" in m:
            out.append({"setupComplete": {}})
        elif "client_content" in m or "clientContent" in m:
            out.append({"toolCall": {"functionCalls": [{"id": "fc_1", "name": "refund", "args": {"order": "A17"}}]}})
            out.append({"usageMetadata": {"promptTokenCount": 9, "responseTokenCount": 4, "totalTokenCount": 13}})
        elif "tool_response" in m or "toolResponse" in m:
            out.append({"serverContent": {"turnComplete": True},
                        "usageMetadata": {"promptTokenCount": 20, "responseTokenCount": 2, "totalTokenCount": 22}})
        for o in out:
            await ws.send(json.dumps(o).encode())


async def vertex_upstream(ws):
    request = ws.request
    UPGRADES.append((request.path, request.headers.get("Authorization")))
    await live_upstream(ws, "vertex")


async def regional_upstream(ws):
    request = ws.request
    REGIONAL.append((SNI[-1] if SNI else None, request.headers.get("Host"), request.path,
                     request.headers.get("Authorization")))
    await live_upstream(ws, "regional")


def regional_tls(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.sni_callback = lambda sock, name, _ctx: SNI.append(name)
    return ctx


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
        # A response cut before its `response.done`: its call, whole, is
        # recorded all the same.
        await conn.response.create()
        async for ev in conn:
            if ev.type == "response.output_item.done" and ev.item.type == "function_call":
                break
    assert len(RECEIVED["realtime"]) == 5, RECEIVED["realtime"]


def plain_websocket(g, gw):
    """The SDK always opens wss:// (it builds the URL from the https base);
    the gateway here is plain, so its URL is given as ws:// and no TLS
    context is passed."""
    g._api_client._websocket_base_url = lambda *a, **k: gw.replace("http://", "ws://")
    import google.genai.live as live_module
    if not getattr(live_module.ws_connect, "plain", False):
        connect = live_module.ws_connect
        plain = lambda *a, **k: connect(*a, **{n: v for n, v in k.items() if n != "ssl"})
        plain.plain = True
        live_module.ws_connect = plain


async def live(gw):
    g = genai.Client(api_key="AIza-voice-e2e", http_options=types.HttpOptions(base_url=gw))
    plain_websocket(g, gw)
    await refund_session(g, "gemini-live-2.5-flash")
    assert any("functionResponses" in r for r in RECEIVED["live"]), RECEIVED["live"]


def vertex_client(gw):
    from google.oauth2.credentials import Credentials
    g = genai.Client(vertexai=True, project="p-voice", location="us-central1",
                     credentials=Credentials(token=VERTEX_TOKEN),
                     http_options=types.HttpOptions(base_url=f"{gw}/vertex"))
    plain_websocket(g, f"{gw}/vertex")
    return g


async def vertex(gw):
    await refund_session(vertex_client(gw), "gemini-live-2.5-flash")
    assert UPGRADES == [("/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent",
                         f"Bearer {VERTEX_TOKEN}")], UPGRADES
    setup = json.loads(RECEIVED["vertex"][0])["setup"]
    want = "projects/p-voice/locations/us-central1/publishers/google/models/gemini-live-2.5-flash"
    assert setup["model"] == want, setup
    assert any("functionResponses" in r for r in RECEIVED["vertex"]), RECEIVED["vertex"]


async def regional(gw):
    await refund_session(vertex_client(gw), "gemini-live-2.5-flash")
    assert REGIONAL == [(REGIONAL_HOST, REGIONAL_HOST,
                         "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent",
                         f"Bearer {VERTEX_TOKEN}")], REGIONAL
    setup = json.loads(RECEIVED["regional"][0])["setup"]
    assert setup["model"].startswith("projects/p-voice/locations/us-central1/"), setup
    assert any("functionResponses" in r for r in RECEIVED["regional"]), RECEIVED["regional"]


async def refund_session(g, model):
    config = {"response_modalities": ["AUDIO"], "tools": [{"function_declarations": [{"name": "refund"}]}]}
    async with g.aio.live.connect(model=model, config=config) as session:
        await session.send_client_content(turns={"role": "user", "parts": [{"text": "Refund A17"}]})
        async for msg in session.receive():
            if msg.tool_call:
                fc = msg.tool_call.function_calls[0]
                await session.send_tool_response(function_responses=[
                    types.FunctionResponse(id=fc.id, name=fc.name, response={"error": "refunds are disabled"})])
            if msg.server_content and msg.server_content.turn_complete:
                break


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
    p.add_argument("--vertex-port", type=int, required=True)
    p.add_argument("--regional-gateway", required=True)
    p.add_argument("--regional-port", type=int, required=True)
    p.add_argument("--regional-cert", required=True)
    p.add_argument("--regional-key", required=True)
    a = p.parse_args()
    async with websockets.serve(realtime_upstream, "127.0.0.1", a.openai_port), \
            websockets.serve(live_upstream, "127.0.0.1", a.gemini_port), \
            websockets.serve(vertex_upstream, "127.0.0.1", a.vertex_port), \
            websockets.serve(regional_upstream, "127.0.0.1", a.regional_port,
                             ssl=regional_tls(a.regional_cert, a.regional_key)):
        await realtime(a.gateway)
        await live(a.gateway)
        await vertex(a.gateway)
        await regional(a.regional_gateway)
    want = {
        ("toolwarden_tool_calls_total", "openai", "book_table"): 1,
        ("toolwarden_tool_results_total", "openai", "book_table"): 1,
        ("toolwarden_tool_failures_total", "openai", "book_table"): 1,
        ("toolwarden_tool_calls_total", "openai", "cancel_booking"): 1,
        ("toolwarden_tool_calls_total", "gemini", "refund"): 1,
        ("toolwarden_tool_results_total", "gemini", "refund"): 1,
        ("toolwarden_tool_failures_total", "gemini", "refund"): 1,
        ("toolwarden_tool_calls_total", "vertex", "refund"): 1,
        ("toolwarden_tool_results_total", "vertex", "refund"): 1,
        ("toolwarden_tool_failures_total", "vertex", "refund"): 1,
    }
    tokens = {(p, t): n for p in ("gemini", "vertex") for t, n in (("input", 29), ("output", 6))}
    for _ in range(50):
        text = urllib.request.urlopen(f"{a.gateway}/metrics").read().decode()
        got = {k: metric(text, k[0], {"provider": k[1], "tool": k[2]}) for k in want}
        got_tokens = {k: metric(text, "toolwarden_tokens_total", {"provider": k[0], "type": k[1]})
                      for k in tokens}
        if got == want and got_tokens == tokens:
            break
        await asyncio.sleep(0.1)
    failed = got != want or got_tokens != tokens
    for name in ("toolwarden_unparsed_requests_total", "toolwarden_unparsed_responses_total"):
        if metric(text, name, {}) != 0:
            print(f"{name} is not 0", file=sys.stderr)
            failed = True
    if failed:
        print("metrics:", got, "want:", want, file=sys.stderr)
        print("tokens:", got_tokens, "want:", tokens, file=sys.stderr)
        sys.exit(1)
    regional_want = {k: v for k, v in want.items() if k[1] == "vertex"}
    regional_tokens = {k: v for k, v in tokens.items() if k[0] == "vertex"}
    for _ in range(50):
        text = urllib.request.urlopen(f"{a.regional_gateway}/metrics").read().decode()
        got = {k: metric(text, k[0], {"provider": k[1], "tool": k[2]}) for k in regional_want}
        got_tokens = {k: metric(text, "toolwarden_tokens_total", {"provider": k[0], "type": k[1]})
                      for k in regional_tokens}
        if got == regional_want and got_tokens == regional_tokens:
            break
        await asyncio.sleep(0.1)
    if got != regional_want or got_tokens != regional_tokens:
        print("regional metrics:", got, "want:", regional_want, file=sys.stderr)
        print("regional tokens:", got_tokens, "want:", regional_tokens, file=sys.stderr)
        sys.exit(1)
    print("== voice sockets: calls, results, failures and Live tokens counted once")
    print(f"== Vertex AI Live via {REGIONAL_HOST} (--resolve): SNI and Host kept, counted once")


asyncio.run(main())
