#!/usr/bin/env python3
"""The official Python SDKs (openai, anthropic) through the gateway.

Run by .ci/sdk_e2e.sh, which starts the mock provider and `toolwarden serve`.

    sdk_e2e.py drive --gateway URL --mock URL --key KEY --expect FILE
        Tool-call round trips in Chat Completions, Responses and Anthropic
        Messages (api_key, auth_token, and an explicit x-api-key header),
        streaming and not. Every response is also fetched directly from the
        mock and must parse to exactly the same objects. Then Anthropic's
        tool runner (`beta.messages.tool_runner`), which runs over a
        message thread. Writes the expected counts to FILE.
    sdk_e2e.py check --toolwarden BIN --database URL --expect FILE [--spans FILE]
        `toolwarden stats --json` must report exactly those counts; and the
        spans a real OTLP/gRPC collector received (.ci/otlp_grpc_collector.py,
        one JSON line each) must be one `chat` span per request and one
        `execute_tool` span per recorded result, failures marked.

Prints `sdk-e2e: N passed, M failed` and exits non-zero on any failure.
"""

import argparse
import json
import subprocess
import sys
import time
import traceback
import urllib.request
import warnings
from typing import Optional

# The SDKs warn about model names they consider old; irrelevant here.
warnings.filterwarnings("ignore", category=DeprecationWarning)

TOOLS_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}}
TOOL = "lookup"
FAILURE_TEXT = "Error: flight TP404 not found"
SUCCESS_TEXT = "Flight TP123 departs 09:05 from LIS"

passed = 0
failed = 0


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok   {name}")
    except Exception:  # noqa: BLE001 - report every failure and go on
        failed += 1
        print(f"FAIL {name}")
        traceback.print_exc()


def same(what, a, b):
    if a != b:
        raise AssertionError(f"{what} differs through the gateway:\n direct:  {a!r}\n gateway: {b!r}")


def dump(obj):
    """A comparable form of an SDK object (or list of them)."""
    if isinstance(obj, list):
        return [dump(o) for o in obj]
    return obj.model_dump(mode="json") if hasattr(obj, "model_dump") else obj


def wait_ready(url, timeout=20.0):
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        if time.time() > deadline:
            raise SystemExit(f"sdk-e2e: {url} not ready after {timeout}s")
        time.sleep(0.1)


class Expect:
    """What the gateway should have recorded."""

    def __init__(self):
        self.calls = 0
        self.failures = 0
        self.requests = 0
        self.streaming = 0
        self.errors = 0

    def round(self, streaming, failure):
        self.calls += 1
        self.failures += int(failure)
        self.requests += 2
        self.streaming += 2 if streaming else 0


# === OpenAI Chat Completions ===

def chat_round(gw, direct, expect, stream, failure, tag):
    import openai  # noqa: F401

    tools = [{"type": "function", "function": {"name": TOOL, "parameters": TOOLS_SCHEMA}}]
    messages = [{"role": "user", "content": f"Find a flight ({tag})"}]

    def call(client, msgs):
        if not stream:
            return client.chat.completions.create(model="gpt-4o", messages=msgs, tools=tools)
        return list(client.chat.completions.create(
            model="gpt-4o", messages=msgs, tools=tools, stream=True,
            stream_options={"include_usage": True}))

    first_gw, first_direct = call(gw, messages), call(direct, messages)
    same("chat response", dump(first_direct), dump(first_gw))
    if stream:
        calls = {}
        for chunk in first_gw:
            for ch in chunk.choices:
                for tc in ch.delta.tool_calls or []:
                    c = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                    c["id"] = tc.id or c["id"]
                    c["name"] += (tc.function.name or "") if tc.function else ""
                    c["arguments"] += (tc.function.arguments or "") if tc.function else ""
        assert first_gw[-1].usage is not None, "usage chunk parsed"
        tool_calls = [calls[i] for i in sorted(calls)]
    else:
        msg = first_gw.choices[0].message
        assert first_gw.choices[0].finish_reason == "tool_calls"
        tool_calls = [{"id": t.id, "name": t.function.name, "arguments": t.function.arguments}
                      for t in msg.tool_calls]
    assert len(tool_calls) == 1 and tool_calls[0]["name"] == TOOL, tool_calls
    json.loads(tool_calls[0]["arguments"])
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": t["id"], "type": "function",
         "function": {"name": t["name"], "arguments": t["arguments"]}} for t in tool_calls]})
    messages.append({"role": "tool", "tool_call_id": tool_calls[0]["id"],
                     "content": FAILURE_TEXT if failure else SUCCESS_TEXT})
    second_gw, second_direct = call(gw, messages), call(direct, messages)
    same("chat answer", dump(second_direct), dump(second_gw))
    if stream:
        text = "".join(c.choices[0].delta.content or "" for c in second_gw if c.choices)
    else:
        text = second_gw.choices[0].message.content
    assert text, "the model answered with text"
    expect.round(stream, failure)


# === OpenAI Responses ===

def responses_round(gw, direct, expect, stream, failure, tag):
    tools = [{"type": "function", "name": TOOL, "parameters": TOOLS_SCHEMA}]
    items = [{"role": "user", "content": f"Find a flight ({tag})"}]

    def call(client, inp):
        if not stream:
            return client.responses.create(model="gpt-4.1", input=inp, tools=tools, store=False)
        return list(client.responses.create(model="gpt-4.1", input=inp, tools=tools, store=False, stream=True))

    def final(resp):
        if not stream:
            return resp
        done = [e for e in resp if e.type == "response.completed"]
        assert len(done) == 1, [e.type for e in resp]
        return done[0].response

    first_gw, first_direct = call(gw, items), call(direct, items)
    same("responses response", dump(first_direct), dump(first_gw))
    out = [o for o in final(first_gw).output if o.type == "function_call"]
    assert len(out) == 1 and out[0].name == TOOL, out
    json.loads(out[0].arguments)
    items.append({"type": "function_call", "call_id": out[0].call_id, "name": out[0].name,
                  "arguments": out[0].arguments})
    items.append({"type": "function_call_output", "call_id": out[0].call_id,
                  "output": FAILURE_TEXT if failure else SUCCESS_TEXT})
    second_gw, second_direct = call(gw, items), call(direct, items)
    same("responses answer", dump(second_direct), dump(second_gw))
    assert final(second_gw).output_text, "the model answered with text"
    expect.round(stream, failure)


# === Anthropic Messages ===

def anthropic_round(gw, direct, expect, stream, failure, tag):
    tools = [{"name": TOOL, "description": "Find flights", "input_schema": TOOLS_SCHEMA}]
    messages = [{"role": "user", "content": f"Find a flight ({tag})"}]

    kw = dict(model="claude-sonnet-4-5-20250929", max_tokens=1024, tools=tools)

    def call(client, msgs):
        if not stream:
            return client.messages.create(messages=msgs, **kw)
        return list(client.messages.create(messages=msgs, stream=True, **kw))

    if stream:
        # First turn through the SDK's stream helper (its own accumulation
        # of input_json_delta into a tool_use input).
        def helper(client):
            with client.messages.stream(messages=messages, **kw) as s:
                return s.get_final_message()

        message, direct_message = helper(gw), helper(direct)
        same("anthropic streamed message", dump(direct_message), dump(message))
    else:
        message, direct_message = call(gw, messages), call(direct, messages)
        same("anthropic response", dump(direct_message), dump(message))
    uses = [b for b in message.content if b.type == "tool_use"]
    assert message.stop_reason == "tool_use" and len(uses) == 1 and uses[0].name == TOOL, message
    assert isinstance(uses[0].input, dict) and "query" in uses[0].input, uses[0].input
    messages.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": uses[0].id, "name": uses[0].name, "input": uses[0].input}]})
    result = {"type": "tool_result", "tool_use_id": uses[0].id,
              "content": FAILURE_TEXT if failure else SUCCESS_TEXT}
    if failure:
        result["is_error"] = True
    messages.append({"role": "user", "content": [result]})
    second_gw, second_direct = call(gw, messages), call(direct, messages)
    same("anthropic answer", dump(second_direct), dump(second_gw))
    if stream:
        text = "".join(e.delta.text for e in second_gw
                       if e.type == "content_block_delta" and e.delta.type == "text_delta")
    else:
        text = "".join(b.text for b in second_gw.content if b.type == "text")
    if stream:
        types = [e.type for e in second_gw]
        assert types[0] == "message_start" and types[-1] == "message_stop", types
    assert text, "the model answered with text"
    expect.round(stream, failure)


def anthropic_runner_round(gw, expect, stream, failure, tag):
    """The SDK's own tool loop, `beta.messages.tool_runner`, which runs over
    a message thread (`thread`: the API holds the conversation, each
    `continue` sends only its new messages): the tool runs once, its result
    (a raised error becomes an `is_error` result) goes back on the thread,
    and the model answers."""
    from anthropic import beta_tool

    ran = []

    # The arguments the mock's calls carry (`query`, `n`, a nested `filter`),
    # which the runner validates against this signature.
    @beta_tool
    def lookup(query: str, n: int = 0, filter: Optional[dict] = None) -> str:
        """Find flights."""
        ran.append(query)
        if failure:
            raise RuntimeError(FAILURE_TEXT)
        return SUCCESS_TEXT

    runner = gw.beta.messages.tool_runner(
        model="claude-sonnet-4-5-20250929", max_tokens=1024, tools=[lookup], max_iterations=4,
        messages=[{"role": "user", "content": f"Find a flight ({tag})"}], stream=stream)
    if stream:
        for turn in runner:
            turn.get_final_message()
    final = runner.until_done()
    assert len(ran) == 1, f"the tool ran {len(ran)} times"
    text = "".join(b.text for b in final.content if b.type == "text")
    assert final.stop_reason == "end_turn" and text, final
    expect.round(stream, failure)


def wrong_key(gw_url, expect):
    """A wrong key: the provider's 401 reaches the SDK as its own
    AuthenticationError, with the provider's message."""
    import anthropic
    import openai

    oa = openai.OpenAI(base_url=f"{gw_url}/v1", api_key="sk-wrong", max_retries=0, timeout=20)
    try:
        oa.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        raise AssertionError("a wrong key was accepted")
    except openai.AuthenticationError as e:
        assert e.status_code == 401 and "API key" in str(e), e
    ant = anthropic.Anthropic(base_url=gw_url, api_key=None, default_headers={"x-api-key": "sk-wrong"},
                              max_retries=0, timeout=20)
    try:
        ant.messages.create(model="claude-sonnet-4-5-20250929", max_tokens=10,
                            messages=[{"role": "user", "content": "hi"}])
        raise AssertionError("a wrong key was accepted")
    except anthropic.AuthenticationError as e:
        assert e.status_code == 401 and e.body["error"]["type"] == "authentication_error", e.body
    expect.requests += 2
    expect.errors += 2


def drive(args):
    import anthropic
    import openai

    wait_ready(f"{args.gateway}/healthz")
    expect = Expect()
    oa = lambda base: openai.OpenAI(base_url=f"{base}/v1", api_key=args.key, max_retries=0, timeout=20)
    gw_oa, direct_oa = oa(args.gateway), oa(args.mock)
    ant_variants = {
        "api_key": lambda base: anthropic.Anthropic(base_url=base, api_key=args.key, max_retries=0, timeout=20),
        "auth_token": lambda base: anthropic.Anthropic(base_url=base, auth_token=args.key, api_key=None,
                                                       max_retries=0, timeout=20),
        "x-api-key": lambda base: anthropic.Anthropic(base_url=base, api_key=None, auth_token=None,
                                                      default_headers={"x-api-key": args.key},
                                                      max_retries=0, timeout=20),
    }
    n = 0
    for stream in (False, True):
        mode = "stream" if stream else "json"
        n += 1
        check(f"openai chat {mode}",
              lambda: chat_round(gw_oa, direct_oa, expect, stream, n % 2 == 0, f"chat {mode}"))
        n += 1
        check(f"openai responses {mode}",
              lambda: responses_round(gw_oa, direct_oa, expect, stream, n % 2 == 0, f"responses {mode}"))
        for name, make in ant_variants.items():
            n += 1
            check(f"anthropic {name} {mode}",
                  lambda: anthropic_round(make(args.gateway), make(args.mock), expect, stream, n % 2 == 0,
                                          f"anthropic {name} {mode}"))
        n += 1
        check(f"anthropic tool runner (message thread) {mode}",
              lambda: anthropic_runner_round(ant_variants["api_key"](args.gateway), expect, stream, n % 2 == 0,
                                             f"anthropic runner {mode}"))
    check("wrong key: the provider's 401 through the gateway", lambda: wrong_key(args.gateway, expect))
    with open(args.expect, "w") as f:
        json.dump({**vars(expect), "passed": passed, "failed": failed}, f)


def check_stats(args):
    global passed, failed
    try:
        with open(args.expect) as f:
            expect = json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL no results from the drive step: {e}")
        failed += 1
        return
    passed += expect["passed"]
    failed += expect["failed"]
    out = subprocess.run([args.toolwarden, "stats", "--json", "--database", args.database],
                         capture_output=True, text=True, timeout=60)

    def stats_match():
        assert out.returncode == 0, f"toolwarden stats failed ({out.returncode}): {out.stderr}"
        stats = json.loads(out.stdout)
        tools = {t["tool"]: t for t in stats["tools"]}
        assert set(tools) == {TOOL}, stats["tools"]
        got = (tools[TOOL]["calls"], tools[TOOL]["failures"])
        want = (expect["calls"], expect["failures"])
        assert got == want, f"{TOOL}: (calls, failures) = {got}, expected {want}"
        req = stats["requests"]
        got = (req["total"], req["errors"], req["streaming"])
        want = (expect["requests"], expect["errors"], expect["streaming"])
        assert got == want, f"requests (total, errors, streaming) = {got}, expected {want}"

    check("toolwarden stats --json counts", stats_match)
    if args.spans:
        check("OTLP/gRPC: the collector's spans match the counts", lambda: spans_match(args.spans, expect))


def spans_match(path, expect):
    with open(path, encoding="utf-8") as f:
        spans = [json.loads(line) for line in f if line.strip()]
    chat = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    tools = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "execute_tool"]
    assert len(chat) + len(tools) == len(spans), [s["name"] for s in spans]
    assert len(chat) == expect["requests"], f"{len(chat)} chat spans, {expect['requests']} requests"
    assert all(s["name"].startswith("chat") for s in chat), [s["name"] for s in chat]
    assert len(tools) == expect["calls"], f"{len(tools)} execute_tool spans, {expect['calls']} results"
    assert all(s["name"] == f"execute_tool {TOOL}" for s in tools), [s["name"] for s in tools]
    assert all(s["attributes"]["gen_ai.tool.name"] == TOOL for s in tools)
    failures = [s for s in tools if s["status"] == 2]  # STATUS_CODE_ERROR
    assert len(failures) == expect["failures"], f"{len(failures)} failed tool spans, {expect['failures']} failures"
    assert {s["resource"].get("service.name") for s in spans} == {"sdk-e2e-gateway"}
    assert {s["team"] for s in spans} == {"ml"}, {s["team"] for s in spans}
    assert {s["scope"] for s in spans} == {"toolwarden"}
    assert len({s["span_id"] for s in spans}) == len(spans), "span ids repeat"


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("drive")
    d.add_argument("--gateway", required=True)
    d.add_argument("--mock", required=True)
    d.add_argument("--key", required=True)
    d.add_argument("--expect", required=True)
    c = sub.add_parser("check")
    c.add_argument("--toolwarden", required=True)
    c.add_argument("--database", required=True)
    c.add_argument("--expect", required=True)
    c.add_argument("--spans")
    args = p.parse_args()
    if args.cmd == "drive":
        drive(args)
        print(f"drive: {passed} passed, {failed} failed")
    else:
        check_stats(args)
        print(f"sdk-e2e: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
