"""The Responses API's WebSocket mode through the gateway, with real clients.

  ws_e2e.py sdk --gateway URL --mock URL --key KEY
      The official `openai` SDK's `client.responses.connect()`: a tool
      conversation of several turns on one socket chained with
      `previous_response_id`, then a second socket (permessage-deflate)
      resending the whole history (`store=False`). Every turn is also sent
      straight to the mock on a socket of its own: the events received
      through the gateway must be byte-equal to the mock's, in order. Then
      exact counts in the gateway's /metrics and no POST at the mock.

  ws_e2e.py inject-script FILE
      Writes the mock's script for the inject run: one response that makes
      two calls and waits for their outputs (`response.inject.created`).

  ws_e2e.py inject --gateway URL --mock URL --key KEY
      The SDK's beta `client.beta.responses.connect()` and
      `connection.response.inject(…)` (`responses_multi_agent=v1`): the two
      outputs and one for a call the response never made, in one inject.
      The gateway (`fix` mode) takes that one out, so the mock (which
      refuses it, as a `response.create`'s input is refused) commits the
      others and the response goes on; the client's results are counted,
      the repair too.

  ws_e2e.py codex-script FILE
      Writes the mock's script for the Codex CLI run: a failing command
      (`false`), then a succeeding one (`echo toolwarden-ok`).

  ws_e2e.py codex-check --gateway URL --mock URL --out FILE
      After `codex exec` ran through the gateway: its JSON output shows
      both commands; /metrics counts 2 calls and 1 failure; the mock saw
      WebSocket turns and no POST.
"""

import argparse
import asyncio
import json
import sys
import urllib.request

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def metric(text, name, **labels):
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        series, value = line.rsplit(" ", 1)
        if series != name and not series.startswith(name + "{"):
            continue
        if all(f'{k}="{v}"' in series for k, v in labels.items()):
            total += float(value)
    return total


def no_post_at_mock(mock):
    received = json.loads(get(mock + "/_mock/received"))
    posts = [r for r in received if r["method"] == "POST"]
    turns = [r for r in received if r["method"] == "GET" and r["path"] == "/v1/responses"]
    check(not posts, f"the mock saw no POST ({len(posts)} seen)")
    check(len(turns) > 0, f"the mock saw {len(turns)} WebSocket messages on /v1/responses")
    return turns


# --- the SDK -------------------------------------------------------------

TOOLS = [
    {"type": "function", "name": n, "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}
    for n in ("lookup", "book")
]
LAST = {"response.completed", "response.failed", "response.incomplete", "error"}


async def turn(conn, **params):
    await conn.response.create(model="gpt-5", tools=TOOLS, **params)
    raw = []
    while True:
        data = await conn.recv_bytes()
        raw.append(bytes(data))
        if json.loads(data)["type"] in LAST:
            return raw


def read(raw):
    calls, messages, rid = [], [], None
    for data in raw:
        e = json.loads(data)
        if e["type"] == "response.output_item.done":
            item = e["item"]
            if item["type"] == "function_call":
                calls.append(item)
            elif item["type"] == "message":
                messages.append(item)
        if e["type"] == "response.completed":
            rid = e["response"]["id"]
    return calls, messages, rid


def outputs(calls):
    out = []
    for c in calls:
        text = ("Error: seat 12A is no longer available for flight TP123" if c["name"] == "book"
                else "Flight TP123 found: departs 09:05, 189 EUR")
        out.append({"type": "function_call_output", "call_id": c["call_id"], "output": text})
    return out


def call_items(calls):
    return [{"type": "function_call", "call_id": c["call_id"], "name": c["name"], "arguments": c["arguments"]}
            for c in calls]


async def both(gw, direct, n, **params):
    got = await turn(gw, **params)
    want = await turn(direct, **params)
    check(got == want, f"turn {n}: {len(got)} events byte-equal to the mock's, in order")
    return got


async def sdk(args):
    from openai import AsyncOpenAI

    headers = {"session_id": "sdk-ws-e2e"}
    gw_client = AsyncOpenAI(api_key=args.key, base_url=args.gateway + "/v1")
    direct_client = AsyncOpenAI(api_key=args.key, base_url=args.mock + "/v1")
    history, previous, n = [], None, 0
    async with gw_client.responses.connect(extra_headers=headers) as gw, \
            direct_client.responses.connect() as direct:
        for rnd in range(2):
            user = {"role": "user", "content": f"Find and book flight TP123, round {rnd}"}
            history.append(user)
            extra = {"previous_response_id": previous} if previous else {}
            n += 1
            calls, _, rid = read(await both(gw, direct, n, input=[user], **extra))
            check(len(calls) == 2, f"turn {n}: two calls ({[c['name'] for c in calls]})")
            history += call_items(calls) + outputs(calls)
            n += 1
            calls2, messages, previous = read(await both(gw, direct, n, input=outputs(calls), previous_response_id=rid))
            check(not calls2 and messages, f"turn {n}: a text answer")
            history += messages
    deflate = {"compression": "deflate"}
    async with gw_client.responses.connect(extra_headers=headers, websocket_connection_options=deflate) as gw, \
            direct_client.responses.connect(websocket_connection_options=deflate) as direct:
        history.append({"role": "user", "content": "And one more for next week"})
        n += 1
        calls, _, _ = read(await both(gw, direct, n, input=history, store=False))
        check(len(calls) == 2, f"turn {n} (second socket, whole history, deflate): two calls")
        history += call_items(calls) + outputs(calls)
        n += 1
        calls2, _, _ = read(await both(gw, direct, n, input=history, store=False))
        check(not calls2, f"turn {n}: a text answer")

    # Exact counts: 3 rounds of lookup + book, book failing each time.
    for _ in range(100):
        m = get(args.gateway + "/metrics")
        if metric(m, "toolwarden_tool_calls_total") >= 6 and metric(m, "toolwarden_tool_failures_total") >= 3:
            break
        await asyncio.sleep(0.05)
    check(metric(m, "toolwarden_tool_calls_total") == 6, f"6 tool calls counted ({metric(m, 'toolwarden_tool_calls_total')})")
    check(metric(m, "toolwarden_tool_failures_total", tool="book") == 3, "3 failures, all `book`")
    check(metric(m, "toolwarden_tool_failures_total") == 3, "no other failure")
    check(metric(m, "toolwarden_upstream_requests_total", status="200") == n, f"{n} turns recorded")
    check(metric(m, "toolwarden_unparsed_requests_total") == 0, "nothing unparsed")
    no_post_at_mock(args.mock)


# --- the SDK's beta inject ------------------------------------------------

INJECT_CALLS = [("call_inject_1", "lookup"), ("call_inject_2", "book")]


def inject_script(args):
    rid = "resp_inject_1"
    base = {"id": rid, "object": "response", "created_at": 1700000000, "model": "gpt-5"}
    items = [{"id": f"fc_{cid}", "type": "function_call", "status": "completed", "call_id": cid,
              "name": name, "arguments": json.dumps({"q": "TP123"})} for cid, name in INJECT_CALLS]
    events = [{"type": "response.created", "sequence_number": 0,
               "response": {**base, "status": "in_progress", "output": []}}]
    for i, item in enumerate(items):
        events.append({"type": "response.output_item.done", "sequence_number": i + 1,
                       "output_index": i, "item": item})
    events.append({"type": "response.inject.created", "sequence_number": 3, "response_id": rid})
    events.append({"type": "response.completed", "sequence_number": 4, "response": {
        **base, "status": "completed", "output": items,
        "usage": {"input_tokens": 40, "output_tokens": 12, "total_tokens": 52}}})
    with open(args.file, "w") as f:
        f.write(json.dumps(events) + "\n")


async def inject(args):
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key=args.key, base_url=args.gateway + "/v1")
    seen = []

    async def until(kinds):
        while True:
            event = json.loads(await asyncio.wait_for(conn.recv_bytes(), 10))
            seen.append(event["type"])
            if event["type"] in kinds or event["type"] == "error":
                return event

    async with client.beta.responses.connect(extra_headers={"session_id": "sdk-inject"}) as conn:
        await conn.response.create(model="gpt-5", tools=TOOLS,
                                   input=[{"role": "user", "content": "Find and book flight TP123"}])
        calls = []
        while len(calls) < len(INJECT_CALLS):
            event = await until({"response.output_item.done", "response.completed"})
            if event["type"] != "response.output_item.done":
                break
            calls.append(event["item"])
        rid = "resp_inject_1"
        check([c["call_id"] for c in calls] == [c for c, _ in INJECT_CALLS], f"the response's calls ({seen})")
        stray = {"type": "function_call_output", "call_id": "call_from_elsewhere", "output": "stale"}
        await conn.response.inject(response_id=rid, input=outputs(calls)[:1] + [stray] + outputs(calls)[1:])
        event = await until({"response.inject.created", "response.inject.failed"})
        committed = event["type"] == "response.inject.created"
        check(committed, f"the inject committed ({event})")
        if committed:
            event = await until({"response.completed", "response.failed", "response.incomplete"})
            check(event["type"] == "response.completed", f"the response went on ({seen})")

    for _ in range(100):
        m = get(args.gateway + "/metrics")
        if metric(m, "toolwarden_tool_failures_total") >= 1 and metric(m, "toolwarden_repairs_total") >= 1:
            break
        await asyncio.sleep(0.05)
    check(metric(m, "toolwarden_tool_calls_total") == 2, f"2 calls counted ({metric(m, 'toolwarden_tool_calls_total')})")
    check(metric(m, "toolwarden_tool_failures_total", tool="book") == 1, "`book`'s injected output a failure")
    check(metric(m, "toolwarden_repairs_total", defect="orphan_result") == 1, "the stray output taken out")
    no_post_at_mock(args.mock)


# --- the Codex CLI ---------------------------------------------------------

def codex_turn(n, cmd):
    rid, iid, cid = f"resp_codex_{n}", f"fc_codex_{n}", f"call_codex_{n}"
    arguments = json.dumps({"cmd": cmd})
    item = {"id": iid, "type": "function_call", "status": "completed", "call_id": cid,
            "name": "exec_command", "arguments": arguments}
    base = {"id": rid, "object": "response", "created_at": 1700000000, "model": "gpt-5"}
    return [
        {"type": "response.created", "sequence_number": 0, "response": {**base, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
         "item": {**item, "status": "in_progress", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": iid,
         "output_index": 0, "delta": arguments},
        {"type": "response.function_call_arguments.done", "sequence_number": 3, "item_id": iid,
         "output_index": 0, "arguments": arguments},
        {"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": item},
        {"type": "response.completed", "sequence_number": 5, "response": {
            **base, "status": "completed", "output": [item],
            "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}},
    ]


def codex_script(args):
    with open(args.file, "w") as f:
        for n, cmd in enumerate(["false", "echo toolwarden-ok"]):
            f.write(json.dumps(codex_turn(n, cmd)) + "\n")


def codex_check(args):
    items = []
    with open(args.out) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                items.append(json.loads(line))
    commands = [i["item"] for i in items
                if i.get("type") == "item.completed" and i.get("item", {}).get("type") == "command_execution"]
    exits = {c.get("command", ""): c.get("exit_code") for c in commands}
    print("codex commands:", exits, flush=True)
    check(any("false" in k and v == 1 for k, v in exits.items()), "codex ran `false` (exit 1)")
    check(any("toolwarden-ok" in k and v == 0 for k, v in exits.items()), "codex ran `echo toolwarden-ok` (exit 0)")
    m = get(args.gateway + "/metrics")
    check(metric(m, "toolwarden_tool_calls_total", tool="exec_command") == 2,
          f"2 exec_command calls counted ({metric(m, 'toolwarden_tool_calls_total')})")
    check(metric(m, "toolwarden_tool_failures_total") == 1,
          f"1 failure counted ({metric(m, 'toolwarden_tool_failures_total')})")
    check(metric(m, "toolwarden_unparsed_requests_total") == 0, "nothing unparsed")
    turns = no_post_at_mock(args.mock)
    # warm-up + the call turns + the final answer, all over WebSocket
    check(len(turns) >= 4, f"{len(turns)} WebSocket turns (warm-up, two commands, the answer)")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sdk")
    s.add_argument("--gateway", required=True)
    s.add_argument("--mock", required=True)
    s.add_argument("--key", required=True)
    s = sub.add_parser("inject")
    s.add_argument("--gateway", required=True)
    s.add_argument("--mock", required=True)
    s.add_argument("--key", required=True)
    s = sub.add_parser("inject-script")
    s.add_argument("file")
    s = sub.add_parser("codex-script")
    s.add_argument("file")
    s = sub.add_parser("codex-check")
    s.add_argument("--gateway", required=True)
    s.add_argument("--mock", required=True)
    s.add_argument("--out", required=True)
    args = p.parse_args()
    if args.cmd == "sdk":
        asyncio.run(sdk(args))
    elif args.cmd == "inject":
        asyncio.run(inject(args))
    elif args.cmd in ("codex-script", "inject-script"):
        (codex_script if args.cmd == "codex-script" else inject_script)(args)
        return 0
    else:
        codex_check(args)
    print(f"ws-e2e {args.cmd}: {'FAILED: ' + '; '.join(FAILURES) if FAILURES else 'passed'}", flush=True)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
