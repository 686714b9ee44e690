#!/usr/bin/env python3
"""The official cloud clients through the gateway to the mock provider (issue 18).

Run by .ci/cloud_e2e.sh, which starts the mock provider (with an Azure key and
an AWS test key) and `toolwarden serve` (with the Azure, Vertex and Bedrock
upstreams at the mock, and AWS credentials for re-signing).

    cloud_e2e.py --gateway URL --mock URL --azure-key KEY --aws-key ID:SECRET \
        --bedrock-api-key KEY --https-gateway URL --ca FILE

Each scenario is one tool round: the model calls `lookup` and `book`, the
client sends back `lookup`'s result (a success) and `book`'s (a failure), the
model answers with text. At the end the gateway's /metrics must count, per
cloud provider, exactly one `lookup` and one `book` call per scenario and one
`book` failure per scenario, none for `lookup`.

Clients: openai.AzureOpenAI (Chat, streaming and not), google-genai with
vertexai=True (streaming and not), anthropic.AnthropicVertex (streaming and
not), anthropic.AnthropicBedrock (invoke, streaming and not) and boto3
bedrock-runtime (converse and converse_stream): both Bedrock clients sign with
a wrong secret, the gateway re-signs with the right one, the mock checks it as
AWS does; AnthropicBedrock also with a Bedrock API key (`Authorization:
Bearer`), which the gateway passes on unsigned (a wrong one gets AWS's
refusal). Also, straight to the mock: AnthropicBedrock with the right
key passes the mock's check (the mock agrees with botocore's signer) and with
a wrong one gets AWS's 403. And boto3 converse_stream on a stream the mock
cuts midway (`--cut-stream`): boto3 gets the gateway's
internalServerException event (EventStreamError), within a read timeout.
Then boto3 with a Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`, no AWS keys)
through a second gateway serving HTTPS with the test certificate (its CA as
`AWS_CA_BUNDLE`), counted on that gateway's /metrics; over the plain-HTTP
gateway botocore refuses to send the key. openai.AzureOpenAI and
AnthropicBedrock (a Bedrock API key) go through the HTTPS gateway too, the
CA given as `SSL_CERT_FILE`.

Prints `cloud-e2e: N passed, M failed` and exits non-zero on any failure.
"""

import argparse
import contextlib
import json
import os
import re
import ssl
import sys
import time
import traceback
import urllib.request
import warnings
from collections import Counter

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)

ARGS = None  # the command line, once parsed
SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}}
OK_TEXT = "Flight TP123 departs 09:05 from LIS"
FAIL_TEXT = "Error: seat 12A is no longer available"

passed = 0
failed = 0
calls_expected = Counter()  # provider -> rounds whose calls are counted
failures_expected = Counter()  # provider -> rounds whose failures are counted
https_expected = Counter()  # provider -> rounds through the HTTPS gateway


def check(name, provider, fn, calls_counted=True, https=False):
    global passed, failed
    try:
        fn(f"Scenario {name}: find me a flight to Lisbon and book it.")
        passed += 1
        if provider and https:
            https_expected[provider] += 1
        elif provider:
            failures_expected[provider] += 1
            calls_expected[provider] += calls_counted
        print(f"ok   {name}")
    except Exception:  # noqa: BLE001 - report every failure and go on
        failed += 1
        print(f"FAIL {name}")
        traceback.print_exc()


def names(calls):
    got = sorted(calls)
    if got != ["book", "lookup"]:
        raise AssertionError(f"expected calls to lookup and book, got {got}")


# --- Azure OpenAI -----------------------------------------------------------

def azure(args, stream, gateway=None):
    import openai

    client = openai.AzureOpenAI(
        azure_endpoint=f"{gateway or args.gateway}/azure",
        api_key=args.azure_key,
        api_version="2024-10-21",
        max_retries=0,
    )
    tools = [
        {"type": "function", "function": {"name": n, "parameters": SCHEMA}}
        for n in ("lookup", "book")
    ]

    def run(prompt):
        messages = [{"role": "user", "content": prompt}]

        def ask():
            if not stream:
                msg = client.chat.completions.create(
                    model="gpt-4o-deployment", messages=messages, tools=tools
                ).choices[0].message
                return msg.content, [
                    (c.id, c.function.name, c.function.arguments) for c in msg.tool_calls or []
                ]
            calls, text, first = {}, "", None
            for chunk in client.chat.completions.create(
                model="gpt-4o-deployment", messages=messages, tools=tools, stream=True
            ):
                if first is None:
                    first = chunk
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for tc in choice.delta.tool_calls or []:
                        c = calls.setdefault(tc.index, ["", "", ""])
                        c[0] = tc.id or c[0]
                        c[1] += (tc.function.name or "") if tc.function else ""
                        c[2] += (tc.function.arguments or "") if tc.function else ""
            # Azure's first chunk: no choices, prompt_filter_results.
            if first is None or first.choices or not getattr(first, "prompt_filter_results", None):
                raise AssertionError(f"first chunk is not Azure's prompt filter chunk: {first}")
            return text, [tuple(c) for c in calls.values()]

        _, calls = ask()
        names([c[1] for c in calls])
        messages.append({
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                for i, n, a in calls
            ],
        })
        for i, n, _ in calls:
            messages.append({
                "role": "tool", "tool_call_id": i, "content": OK_TEXT if n == "lookup" else FAIL_TEXT,
            })
        text, calls = ask()
        if calls or not text:
            raise AssertionError(f"expected a text answer, got {text!r} {calls}")

    return run


# --- Vertex AI: google-genai ------------------------------------------------

def vertex_gemini(args, stream):
    from google import genai
    from google.genai import types
    from google.oauth2.credentials import Credentials

    client = genai.Client(
        vertexai=True,
        project="tw-project",
        location="us-central1",
        credentials=Credentials(token="ya29.cloud-e2e"),
        http_options=types.HttpOptions(base_url=f"{args.gateway}/vertex/"),
    )
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[
            types.FunctionDeclaration(name=n, parameters=SCHEMA) for n in ("lookup", "book")
        ])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    model = "gemini-2.5-flash"

    def ask(contents):
        if not stream:
            r = client.models.generate_content(model=model, contents=contents, config=config)
            return r.candidates[0].content, r.function_calls or []
        parts, calls = [], []
        for r in client.models.generate_content_stream(model=model, contents=contents, config=config):
            if r.candidates and r.candidates[0].content and r.candidates[0].content.parts:
                parts.extend(r.candidates[0].content.parts)
            calls.extend(r.function_calls or [])
        return types.Content(role="model", parts=parts), calls

    def run(prompt):
        contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
        content, calls = ask(contents)
        names([c.name for c in calls])
        contents.append(content)
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(
                name=c.name,
                response={"output": OK_TEXT} if c.name == "lookup" else {"error": FAIL_TEXT},
            )
            for c in calls
        ]))
        _, calls = ask(contents)
        if calls:
            raise AssertionError(f"expected a text answer, got calls {calls}")

    return run


# --- Anthropic on Vertex and Bedrock ---------------------------------------

ANTHROPIC_TOOLS = [{"name": n, "description": n, "input_schema": SCHEMA} for n in ("lookup", "book")]


def anthropic_round(client, model, stream):
    def ask(messages):
        if not stream:
            return client.messages.create(
                model=model, max_tokens=256, messages=messages, tools=ANTHROPIC_TOOLS
            )
        with client.messages.stream(
            model=model, max_tokens=256, messages=messages, tools=ANTHROPIC_TOOLS
        ) as s:
            return s.get_final_message()

    def run(prompt):
        messages = [{"role": "user", "content": prompt}]
        msg = ask(messages)
        calls = [b for b in msg.content if b.type == "tool_use"]
        names([c.name for c in calls])
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]})
        messages.append({"role": "user", "content": [
            {
                "type": "tool_result",
                "tool_use_id": c.id,
                "content": OK_TEXT if c.name == "lookup" else FAIL_TEXT,
                **({"is_error": True} if c.name == "book" else {}),
            }
            for c in calls
        ]})
        msg = ask(messages)
        if any(b.type == "tool_use" for b in msg.content):
            raise AssertionError(f"expected a text answer, got {msg}")

    return run


def vertex_anthropic(args, stream):
    import anthropic

    client = anthropic.AnthropicVertex(
        region="us-east5",
        project_id="tw-project",
        access_token="ya29.cloud-e2e",
        base_url=f"{args.gateway}/vertex/v1",
        max_retries=0,
    )
    return anthropic_round(client, "claude-sonnet-4@20250514", stream)


def bedrock_client(base_url, key_id, secret):
    import anthropic

    return anthropic.AnthropicBedrock(
        aws_access_key=key_id,
        aws_secret_key=secret,
        aws_region="us-east-1",
        base_url=base_url,
        max_retries=0,
    )


BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20241022-v2:0"


def bedrock_invoke(args, stream):
    key_id, _ = args.aws_key.split(":", 1)
    # The client signs for the gateway's host with a secret the mock does
    # not know: only the gateway's own signature can pass.
    client = bedrock_client(f"{args.gateway}/bedrock", key_id, "client-side-wrong-secret")
    return anthropic_round(client, BEDROCK_MODEL, stream)


def bedrock_invoke_api_key(args, stream, api_key=None, gateway=None):
    """AnthropicBedrock with a Bedrock API key (`Authorization: Bearer`, as
    `AWS_BEARER_TOKEN_BEDROCK` gives it): the gateway passes it on as it
    came, unsigned, and the mock checks it as AWS does."""
    import anthropic

    client = anthropic.AnthropicBedrock(api_key=api_key or args.bedrock_api_key, aws_region="us-east-1",
                                        base_url=f"{gateway or args.gateway}/bedrock", max_retries=0)
    return anthropic_round(client, BEDROCK_MODEL, stream)


def bedrock_api_key_refused(args):
    """A wrong Bedrock API key reaches the mock, which refuses it as AWS
    does: the gateway does not sign it away with its own credentials."""
    import anthropic

    def run(prompt):
        try:
            bedrock_invoke_api_key(args, False, api_key="ABSK-not-the-key")(prompt)
        except anthropic.PermissionDeniedError as e:
            if "Please make sure your API Key is valid" not in str(e):
                raise AssertionError(f"not AWS's refusal of a key: {e}")
            return
        raise AssertionError("a wrong Bedrock API key was answered")

    return run


def bedrock_direct(args):
    import anthropic

    key_id, secret = args.aws_key.split(":", 1)

    def run(prompt):
        ok = bedrock_client(args.mock, key_id, secret).messages.create(
            model=BEDROCK_MODEL, max_tokens=64, messages=[{"role": "user", "content": prompt}],
        )
        if not ok.content:
            raise AssertionError("empty answer")
        try:
            bedrock_client(args.mock, key_id, "wrong").messages.create(
                model=BEDROCK_MODEL, max_tokens=64, messages=[{"role": "user", "content": prompt}],
            )
        except anthropic.PermissionDeniedError as e:
            if "signature we calculated does not match" not in str(e):
                raise
        else:
            raise AssertionError("a wrong signature was accepted by the mock")

    return run


# --- Bedrock Converse: boto3 ---------------------------------------------

def bedrock_converse(args, stream, client=None):
    import boto3

    key_id, _ = args.aws_key.split(":", 1)
    client = client or boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=f"{args.gateway}/bedrock",
        aws_access_key_id=key_id,
        aws_secret_access_key="client-side-wrong-secret",
    )
    tool_config = {"tools": [
        {"toolSpec": {"name": n, "inputSchema": {"json": SCHEMA}}} for n in ("lookup", "book")
    ]}
    model = "amazon.nova-pro-v1:0"

    def ask(messages):
        if not stream:
            r = client.converse(modelId=model, messages=messages, toolConfig=tool_config)
            return r["output"]["message"]["content"]
        r = client.converse_stream(modelId=model, messages=messages, toolConfig=tool_config)
        blocks, current = [], None
        for event in r["stream"]:
            if "contentBlockStart" in event:
                start = event["contentBlockStart"]["start"]
                if "toolUse" in start:
                    current = {"toolUse": {**start["toolUse"], "input": ""}}
            elif "contentBlockDelta" in event:
                delta = event["contentBlockDelta"]["delta"]
                if "toolUse" in delta and current:
                    current["toolUse"]["input"] += delta["toolUse"]["input"]
                elif "text" in delta:
                    blocks.append({"text": delta["text"]})
            elif "contentBlockStop" in event and current:
                current["toolUse"]["input"] = json.loads(current["toolUse"]["input"] or "{}")
                blocks.append(current)
                current = None
        return blocks

    def run(prompt):
        messages = [{"role": "user", "content": [{"text": prompt}]}]
        content = ask(messages)
        uses = [b["toolUse"] for b in content if "toolUse" in b]
        names([u["name"] for u in uses])
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [
            {"toolResult": {
                "toolUseId": u["toolUseId"],
                "content": [{"text": OK_TEXT if u["name"] == "lookup" else FAIL_TEXT}],
                **({"status": "error"} if u["name"] == "book" else {}),
            }}
            for u in uses
        ]})
        content = ask(messages)
        if any("toolUse" in b for b in content):
            raise AssertionError(f"expected a text answer, got {content}")

    return run


def with_ca(ca, make):
    """The scenario `make()` gives, its client made and run with
    `SSL_CERT_FILE` naming `ca`: how httpx (under the OpenAI and Anthropic
    SDKs) is given a private CA."""
    def run(prompt):
        os.environ["SSL_CERT_FILE"] = ca
        try:
            make()(prompt)
        finally:
            os.environ.pop("SSL_CERT_FILE", None)

    return run


@contextlib.contextmanager
def bedrock_api_key_env(ca):
    """The environment AWS's docs give boto3 for a Bedrock API key
    (`AWS_BEARER_TOKEN_BEDROCK`, which botocore reads at each request) and a
    private CA (`AWS_CA_BUNDLE`), for the time of one scenario."""
    os.environ["AWS_BEARER_TOKEN_BEDROCK"] = ARGS.bedrock_api_key
    if ca:
        os.environ["AWS_CA_BUNDLE"] = ca
    try:
        yield
    finally:
        os.environ.pop("AWS_BEARER_TOKEN_BEDROCK", None)
        os.environ.pop("AWS_CA_BUNDLE", None)


def boto3_api_key_client(endpoint):
    """boto3 with no AWS keys: with a Bedrock API key in the environment,
    botocore sends `Authorization: Bearer`."""
    import boto3

    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=f"{endpoint}/bedrock")


def bedrock_converse_api_key_https(args, stream):
    """boto3 with a Bedrock API key through the gateway serving HTTPS (the
    test CA given as `AWS_CA_BUNDLE`): the key goes on unsigned, the mock
    checks it as AWS does, and the round is counted."""
    def run(prompt):
        with bedrock_api_key_env(args.ca):
            bedrock_converse(args, stream, client=boto3_api_key_client(args.https_gateway))(prompt)

    return run


def bedrock_api_key_needs_https(args):
    """The same client over the plain-HTTP gateway: botocore refuses to send
    the key (why the gateway serves HTTPS)."""
    def run(prompt):
        with bedrock_api_key_env(None):
            client = boto3_api_key_client(args.gateway)
            try:
                client.converse(modelId="amazon.nova-pro-v1:0",
                                messages=[{"role": "user", "content": [{"text": prompt}]}])
            except Exception as e:  # noqa: BLE001 - botocore's own error class varies
                if "requires an HTTPS endpoint" not in str(e):
                    raise
                return
        raise AssertionError("botocore sent a Bedrock API key over plain HTTP")

    return run


CUT_MODEL = "toolwarden.cut-midstream-v1"  # the mock cuts its streams (--cut-stream)


def bedrock_converse_cut(args):
    """converse_stream whose upstream stream is cut midway: boto3 must see
    the gateway's internalServerException event, not hang."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import EventStreamError

    key_id, _ = args.aws_key.split(":", 1)
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=f"{args.gateway}/bedrock",
        aws_access_key_id=key_id,
        aws_secret_access_key="client-side-wrong-secret",
        # A hang shows as a read timeout, not as the event wanted.
        config=Config(read_timeout=15, retries={"max_attempts": 0}),
    )

    def run(prompt):
        r = client.converse_stream(
            modelId=CUT_MODEL, messages=[{"role": "user", "content": [{"text": prompt}]}],
        )
        seen = []
        try:
            for event in r["stream"]:
                seen.append(next(iter(event)))
        except EventStreamError as e:
            code = e.response.get("Error", {}).get("Code")
            if code != "internalServerException":
                raise AssertionError(f"expected internalServerException, got {code}: {e}") from e
            if seen[:1] != ["messageStart"]:
                raise AssertionError(f"expected the whole frames before the cut, got {seen}") from e
            return
        raise AssertionError(f"the cut stream ended without an error event: {seen}")

    return run


# --- counts -----------------------------------------------------------------

def metric(text, name, labels):
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


def counts(gateway, calls_of, failures_of, context=None):
    """/metrics of `gateway` counts per provider `calls_of[p]` rounds' calls
    and `failures_of[p]` rounds' failures (polled until the recorder has
    caught up, at most 10 s); `context` trusts an HTTPS gateway's CA."""
    def want(text):
        problems = []
        for provider, n in failures_of.items():
            c = calls_of[provider]
            for name, tool, value in (
                ("toolwarden_tool_calls_total", "lookup", c),
                ("toolwarden_tool_calls_total", "book", c),
                ("toolwarden_tool_failures_total", "book", n),
                ("toolwarden_tool_failures_total", "lookup", 0),
            ):
                got = metric(text, name, {"provider": provider, "tool": tool})
                if got != value:
                    problems.append(f"{gateway} {name}{{provider={provider},tool={tool}}} = {got}, expected {value}")
        return problems

    deadline = time.time() + 10
    while True:
        text = urllib.request.urlopen(f"{gateway}/metrics", context=context).read().decode()
        problems = want(text)
        if not problems or time.time() > deadline:
            break
        time.sleep(0.1)
    if problems:
        raise AssertionError("\n".join(problems))
    print(f"counts at {gateway}: " + ", ".join(
        f"{p}: calls of {calls_of[p]} rounds, failures of {n}" for p, n in sorted(failures_of.items())
    ))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gateway", required=True)
    p.add_argument("--mock", required=True)
    p.add_argument("--azure-key", required=True)
    p.add_argument("--aws-key", required=True)
    p.add_argument("--bedrock-api-key", required=True)
    p.add_argument("--https-gateway", required=True, help="the same gateway setup, serving HTTPS")
    p.add_argument("--ca", required=True, help="the CA of the HTTPS gateway's certificate")
    args = p.parse_args()
    global ARGS
    ARGS = args

    for stream in (False, True):
        s = "stream" if stream else "json"
        check(f"azure-chat-{s}", "azure", azure(args, stream))
        check(f"vertex-genai-{s}", "vertex", vertex_gemini(args, stream))
        check(f"vertex-anthropic-{s}", "vertex", vertex_anthropic(args, stream))
        check(f"bedrock-invoke-{s}", "bedrock", bedrock_invoke(args, stream))
        check(f"bedrock-converse-{s}", "bedrock", bedrock_converse(args, stream))
        check(f"bedrock-invoke-api-key-{s}", "bedrock", bedrock_invoke_api_key(args, stream))
    check("bedrock-direct-signature-check", None, bedrock_direct(args))
    check("bedrock-api-key-refused", None, bedrock_api_key_refused(args))
    check("bedrock-converse-stream-cut", None, bedrock_converse_cut(args))
    check("counts-per-tool", None, lambda _: counts(args.gateway, calls_expected, failures_expected))
    for stream in (False, True):
        s = "stream" if stream else "json"
        check(f"bedrock-converse-api-key-https-{s}", "bedrock", bedrock_converse_api_key_https(args, stream), https=True)
        check(f"azure-chat-https-{s}", "azure",
              with_ca(args.ca, lambda: azure(args, stream, gateway=args.https_gateway)), https=True)
        check(f"bedrock-invoke-api-key-https-{s}", "bedrock",
              with_ca(args.ca, lambda: bedrock_invoke_api_key(args, stream, gateway=args.https_gateway)), https=True)
    check("bedrock-api-key-needs-https", None, bedrock_api_key_needs_https(args))
    https_ca = ssl.create_default_context(cafile=args.ca)
    check("https-counts-per-tool", None,
          lambda _: counts(args.https_gateway, https_expected, https_expected, context=https_ca))
    print(f"cloud-e2e: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
