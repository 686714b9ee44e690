"""Real agent programs through the gateway, counted exactly.

For each client: a mock provider in agent mode (scripted tool turns, its own
log as ground truth) and a gateway with a fresh SQLite database; the client's
runs; then the truth against `toolwarden stats --json` (and the database for
results and sessions) per tool. Prints a table per client and a final line
`N passed, N failed`; exits non-zero on any failure.

    python run.py --toolwarden BIN --mock BIN --tools DIR --python PY --only NAME,...
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import clients as C

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = "sk-agents-e2e-key"
RUN_TIMEOUT = 240

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}" + (f"\n     {detail}" if detail else ""))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=20.0, context=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2, context=context) as r:
                if r.status == 200:
                    return True
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.1)
    return False


class Stack:
    """The mock provider and the gateway for one client."""

    def __init__(self, args, tmp, client):
        self.tmp = tmp
        self.db = os.path.join(tmp, "toolwarden.db")
        self.log = os.path.join(tmp, "mock-log.jsonl")
        scripts = os.path.join(tmp, "scripts.json")
        with open(scripts, "w") as f:
            f.write(C.scripts_json([client]))
        mock_port = free_port()
        self.mock = subprocess.Popen(
            # The stream's end follows its final event by 20 ms, as over a real
            # network: a client that hangs up on the final event does so first.
            [args.mock, "--listen", f"127.0.0.1:{mock_port}", "--api-key", KEY, "--stream-tail-ms", "20",
             "--agent-scripts", scripts, "--agent-log", self.log] + client.mock_args,
            stdout=open(os.path.join(tmp, "mock.out"), "w"), stderr=open(os.path.join(tmp, "mock.err"), "w"))
        mock_url = self.mock_url = f"http://127.0.0.1:{mock_port}"
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        # A gateway serving HTTPS (the test certificate) is read trusting its CA.
        self.ssl = None
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        cloud_args = []
        if client.gateway:
            # Issue 18: the cloud upstreams and the gateway's own credentials.
            env = {k: v for k, v in env.items() if not k.startswith(("AWS_", "GOOGLE_", "CLOUDSDK_"))}
            cloud_args, cloud_env = client.gateway(tmp, mock_url)
            env.update(cloud_env)
            if "--tls-cert" in cloud_args:
                self.url = f"https://127.0.0.1:{port}"
                self.ssl = ssl.create_default_context(cafile=os.path.join(C.TLS_DIR, "ca.pem"))
        self.gw = subprocess.Popen(
            [args.toolwarden, "serve", "--listen", f"127.0.0.1:{port}", "--database", f"sqlite://{self.db}",
             "--openai-upstream", mock_url, "--anthropic-upstream", mock_url, "--gemini-upstream", mock_url]
            + cloud_args,
            env=env, stdout=open(os.path.join(tmp, "gw.out"), "w"), stderr=open(os.path.join(tmp, "gw.err"), "w"))
        if not (wait_http(f"{mock_url}/healthz") and wait_http(f"{self.url}/healthz", context=self.ssl)):
            self.stop()
            raise RuntimeError("the mock provider or the gateway did not start: " + self.stderr())

    def stderr(self):
        out = []
        for name in ("mock.err", "gw.err"):
            with open(os.path.join(self.tmp, name)) as f:
                out.append(f"--- {name}\n" + "".join(f.readlines()[-30:]))
        return "\n".join(out)

    def metrics(self):
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10, context=self.ssl) as r:
            return r.read().decode()

    def stop(self):
        """SIGTERM (the gateway drains its recorder), then the mock."""
        ok = True
        self.gw.send_signal(signal.SIGTERM)
        try:
            self.gw.wait(timeout=15)
        except subprocess.TimeoutExpired:
            ok = False
            self.gw.kill()
            self.gw.wait()
        self.mock.kill()
        self.mock.wait()
        return ok


def client_env(home, gateway, ws, extra):
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({
        "HOME": home, "USERPROFILE": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "ANTHROPIC_BASE_URL": gateway, "GOOGLE_GEMINI_BASE_URL": gateway,
        "E2E_GATEWAY": gateway, "E2E_KEY": KEY, "E2E_WORKSPACE": ws, "NO_COLOR": "1", "CI": "1",
    })
    env.update({k: v.replace("{gateway}", gateway) for k, v in extra.items()})
    return env


def truth_of(log_path, client):
    """Per tool: (calls, results, failures) from the mock's log, and problems."""
    events = []
    with open(log_path) as f:
        for line in f:
            events.append(json.loads(line))
    calls, results, failures = Counter(), Counter(), Counter()
    problems = []
    for e in events:
        if e["event"] == "call":
            calls[(e["model"], e["tool"])] += 1
            steps = client.scripts.get(e["script"], [])
            want = steps[e["step"]].kind if e["step"] < len(steps) else None
            if want and e.get("kind") != want:
                problems.append(f"{e['script']} step {e['step']} ({e['tool']}): the mock made a {e.get('kind')} "
                                f"call, not a {want} call (is the tool declared as the script expects?)")
    issued = Counter((e["script"], e["step"]) for e in events if e["event"] == "call")
    for (script, step), n in issued.items():
        if n > 1:
            problems.append(f"{script} step {step} was asked {n} times (the client repeated a request)")
    seen = set()
    for e in events:
        if e["event"] != "result":
            continue
        steps = client.scripts.get(e["script"], [])
        if e["step"] >= len(steps):
            problems.append(f"{e['script']}: a result for step {e['step']} that was never asked")
            continue
        step = steps[e["step"]]
        tool = e["tool"]
        seen.add((e["script"], e["step"]))
        results[(e["model"], tool)] += 1
        if step.fails:
            failures[(e["model"], tool)] += 1
        # A built-in tool's result says itself whether it failed (a shell
        # command's exit code, a patch's status): it must be the script's.
        if step.kind not in (None, "function", "custom") and e.get("is_error") != step.fails:
            problems.append(f"{e['script']} step {e['step']} ({tool}, must {'fail' if step.fails else 'succeed'}): "
                            f"its result's own failure flag is {e.get('is_error')}")
        if not re.search(step.match, e["text"], re.I | re.S):
            problems.append(f"{e['script']} step {e['step']} ({tool}, must {'fail' if step.fails else 'succeed'}): "
                            f"result {e['text'][:300]!r} does not match /{step.match}/")
    for script, steps in client.scripts.items():
        for i in range(len(steps)):
            if (script, i) not in seen:
                problems.append(f"{script} step {i} ({steps[i].tool}): no result came back")
    return calls, results, failures, problems, events


def recorded(args, db):
    """Per (model, tool): calls and failures from `toolwarden stats --json`
    (its `models` rows), results from the database; the per-tool rows of
    stats; the sessions and the requests in error."""
    out = subprocess.run([args.toolwarden, "stats", "--json", "--since", "1d", "--database", f"sqlite://{db}"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"toolwarden stats failed ({out.returncode}): {out.stderr}")
    stats = json.loads(out.stdout)
    calls = Counter({(m["model"], m["tool"]): m["calls"] for m in stats["models"]})
    failures = Counter({(m["model"], m["tool"]): m["failures"] for m in stats["models"]})
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        results = Counter({(m, t): n for m, t, n in con.execute(
            "SELECT COALESCE(model, 'unknown'), tool, COUNT(*) FROM tool_calls "
            "WHERE result_request_id IS NOT NULL GROUP BY 1, 2")})
        # The conversations: sessions holding a model request (a request
        # the gateway forwarded unread, e.g. to the Conversations API, has
        # no dialect, and its session can be `unknown`).
        sessions = [r[0] for r in con.execute(
            "SELECT session_id FROM sessions s WHERE EXISTS (SELECT 1 FROM requests r "
            "WHERE r.session_id = s.session_id AND r.dialect IS NOT NULL) ORDER BY first_ms")]
        unanswered = list(con.execute("SELECT tool, call_id FROM tool_calls WHERE request_id IS NULL"))
        errors = list(con.execute("SELECT path, status, error FROM requests WHERE error IS NOT NULL "
                                  "OR (dialect IS NOT NULL AND status >= 300)"))
    finally:
        con.close()
    return calls, results, failures, sessions, errors, unanswered, stats


def table(truth, got):
    tc, tr, tf = truth
    gc, gr, gf = got
    rows = ["| model | tool | calls truth/stats | results truth/db | failures truth/stats |",
            "|---|---|---|---|---|"]
    for key in sorted(set(tc) | set(tr) | set(gc) | set(gr)):
        mark = "" if (tc[key], tr[key], tf[key]) == (gc[key], gr[key], gf[key]) else " **≠**"
        rows.append(f"| {key[0]} | {key[1]} | {tc[key]} / {gc[key]} | {tr[key]} / {gr[key]} "
                    f"| {tf[key]} / {gf[key]} |{mark}")
    return "\n".join(rows)


def per_tool(counter):
    out = Counter()
    for (_, tool), n in counter.items():
        out[tool] += n
    return out


def drive(args, build):
    """Run one client; `build(workspace)` gives it (its scripts name absolute
    paths in its scratch workspace)."""
    tmp = tempfile.mkdtemp(prefix="tw-agents-")
    ws, home = os.path.join(tmp, "ws"), os.path.join(tmp, "home")
    client = build(ws)
    print(f"\n== {client.name} {client.version}")
    os.makedirs(ws)
    os.makedirs(home)
    with open(os.path.join(ws, "present.txt"), "w") as f:
        f.write("hello e2e\n")
    stack = Stack(args, tmp, client)
    try:
        if client.setup:
            client.setup(home, stack.url)
        def execute(run):
            started = time.time()
            try:
                p = subprocess.run(run.argv, cwd=ws, env=client_env(home, stack.url, ws, run.env),
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN_TIMEOUT)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                rc, out, err = "timeout", e.stdout or "", e.stderr or ""
                out, err = (x.decode() if isinstance(x, bytes) else x for x in (out, err))
            return rc, out, err, time.time() - started

        # In order, or `client.parallel` at once; reported in order.
        with ThreadPoolExecutor(max_workers=client.parallel) as pool:
            done = list(pool.map(execute, client.runs))
        for run, (rc, out, err, took) in zip(client.runs, done):
            check(f"{client.name}: {run.script} exits 0 ({took:.1f} s)", rc == 0,
                  f"exit {rc}\n--- stdout\n{out[-2000:]}\n--- stderr\n{err[-3000:]}")
            check(f"{client.name}: {run.script} prints its final text", C.final_text(run.script) in out,
                  f"stdout: {out[-1000:]!r}")
        metrics = stack.metrics()
        if client.websocket:
            with urllib.request.urlopen(f"{stack.mock_url}/_mock/received", timeout=10) as r:
                received = json.loads(r.read())
            on = Counter(r["method"] for r in received if r["path"] == "/v1/responses")
            check(f"{client.name}: its turns came over the WebSocket ({on['GET']} messages, {on['POST']} POSTs)",
                  on["GET"] > 0 and on["POST"] == 0)
    finally:
        stopped = stack.stop()
    check(f"{client.name}: the gateway stops on SIGTERM", stopped)
    unparsed = [line for line in metrics.splitlines()
                if line.startswith("toolwarden_unparsed_") and not line.rstrip().endswith(" 0")]
    check(f"{client.name}: nothing unparsed (toolwarden_unparsed_* = 0)", not unparsed, "\n     ".join(unparsed))

    tc, tr, tf, problems, events = truth_of(stack.log, client)
    check(f"{client.name}: every scripted step ran and came back as scripted", not problems,
          "\n     ".join(problems))
    gc, gr, gf, sessions, errors, orphans, stats = recorded(args, stack.db)
    print(table((tc, tr, tf), (gc, gr, gf)))
    for key in sorted(set(tc) | set(tr) | set(gc) | set(gr)):
        truth, got = (tc[key], tr[key], tf[key]), (gc[key], gr[key], gf[key])
        check(f"{client.name}: {key[0]} {key[1]} (calls, results, failures) {truth} = recorded {got}",
              truth == got)
    # The per-tool rows of `toolwarden stats --json` itself.
    tools = {t["tool"]: (t["calls"], t["failures"]) for t in stats["tools"]}
    want = {t: (n, per_tool(tf)[t]) for t, n in per_tool(tc).items()}
    check(f"{client.name}: stats --json tools (calls, failures) = truth", tools == want,
          f"stats {tools}\n     truth {want}")
    check(f"{client.name}: every call recorded from the response that made it", not orphans,
          f"rows without their response: {orphans[:8]}")
    check(f"{client.name}: no tool named unknown", "unknown" not in tools, str(list(tools)))
    side_sessions = [m for m in map(re.compile(client.side_sessions or "(?!)").fullmatch, sessions) if m]
    if side_sessions:
        named = {m.group(1) for m in side_sessions}
        sessions = [s for s in sessions if s not in {m.group(0) for m in side_sessions}]
        check(f"{client.name}: its side requests' {len(side_sessions)} sessions each name a conversation's",
              named <= set(sessions), f"named {sorted(named)}, conversations {sessions}")
    check(f"{client.name}: one session per conversation ({client.conversations})",
          len(sessions) == client.conversations, f"sessions: {sessions}")
    check(f"{client.name}: no request recorded as an error, every model request answered 2xx", not errors,
          str(errors[:5]))
    side = Counter(e.get("reply") for e in events if e["event"] == "request")
    print(f"   mock: {dict(side)} requests; gateway: {stats['requests']}")
    if args.keep:
        print(f"   kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolwarden", required=True)
    ap.add_argument("--mock", required=True)
    ap.add_argument("--tools", required=True, help="the npm prefix the clients are installed in (AI SDK 6 too)")
    ap.add_argument("--ai-tools", required=True, help="the npm prefix AI SDK 7 is installed in")
    ap.add_argument("--ai-node", required=True, help="the Node.js (>= 22) that runs AI SDK 7")
    ap.add_argument("--sdk-tools", required=True, help="the npm prefix the TypeScript SDKs are installed in")
    ap.add_argument("--python", required=True, help="the venv's python with openai-agents")
    ap.add_argument("--py-frameworks", required=True,
                    help="the venv's python with Pydantic AI, LangChain, google-genai, google-adk and smolagents")
    ap.add_argument("--crewai", default="",
                    help="the venv's python with CrewAI (its pins differ from the other frameworks')")
    ap.add_argument("--strands", default="", help="the venv's python with Strands Agents")
    ap.add_argument("--agent-framework", default="", help="the venv's python with Microsoft Agent Framework")
    ap.add_argument("--llamaindex", default="", help="the venv's python with LlamaIndex")
    ap.add_argument("--agno", default="", help="the venv's python with Agno")
    ap.add_argument("--autogen", default="", help="the venv's python with AutoGen")
    ap.add_argument("--semantic-kernel", default="", help="the venv's python with Semantic Kernel")
    ap.add_argument("--haystack", default="", help="the venv's python with Haystack")
    ap.add_argument("--agentscope", default="", help="the venv's python with AgentScope")
    ap.add_argument("--mastra-tools", default="", help="the npm prefix with Mastra (run by --ai-node)")
    ap.add_argument("--adk-js-tools", default="", help="the npm prefix with Google's ADK for TypeScript")
    ap.add_argument("--langchain-js-tools", default="", help="the npm prefix with LangChain.js (run by --ai-node)")
    ap.add_argument("--claude-agent-sdk-tools", default="", help="the npm prefix with the Claude Agent SDK")
    ap.add_argument("--claude-agent-sdk-py", default="", help="the venv's python with the Claude Agent SDK")
    ap.add_argument("--openclaw-tools", default="", help="the npm prefix with OpenClaw")
    ap.add_argument("--openclaw-node", default="", help="the directory of the Node.js OpenClaw runs on (>= 24)")
    ap.add_argument("--versions", required=True, help="JSON: client name -> version")
    ap.add_argument("--only", default="",
                    help="comma-separated client names (claude,claude-bedrock,claude-bedrock-key,claude-vertex,claude-https,gemini,gemini-https,gemini-compress,codex,codex-https,opencode,opencode-https,kilo,droid,qwen,cline,continue,copilot,copilot-ws,pi,pi-bedrock,openclaw,ai,ai6,"
                         "sdk-js,agents,pydantic-ai,langchain,genai,adk,smolagents,crewai,strands,agent-framework,llamaindex,agno,autogen,semantic-kernel,haystack,agentscope,mastra,adk-js,langchain-js,claude-agent-sdk,claude-agent-sdk-py)")
    ap.add_argument("--keep", action="store_true", help="keep each client's scratch directory")
    args = ap.parse_args()
    v = json.loads(args.versions)
    node = shutil.which("node")
    builders = {
        "claude": lambda ws: C.claude(args.tools, ws, KEY, v["claude"]),
        "claude-bedrock": lambda ws: C.claude_bedrock(args.tools, ws, KEY, v["claude"]),
        "claude-bedrock-key": lambda ws: C.claude_bedrock_key(args.tools, ws, KEY, v["claude"]),
        "claude-vertex": lambda ws: C.claude_vertex(args.tools, ws, KEY, v["claude"]),
        "claude-https": lambda ws: C.claude_https(args.tools, ws, KEY, v["claude"]),
        "gemini": lambda ws: C.gemini(args.tools, ws, KEY, v["gemini"]),
        "gemini-https": lambda ws: C.gemini_https(args.tools, ws, KEY, v["gemini"]),
        "gemini-compress": lambda ws: C.gemini_compressed(args.tools, ws, KEY, v["gemini"]),
        "codex": lambda ws: C.codex(args.tools, ws, KEY, v["codex"], args.toolwarden),
        "codex-https": lambda ws: C.codex_https(args.tools, ws, KEY, v["codex"], args.toolwarden),
        "opencode": lambda ws: C.opencode(args.tools, ws, KEY, v["opencode"]),
        "opencode-https": lambda ws: C.opencode_https(args.tools, ws, KEY, v["opencode"]),
        "kilo": lambda ws: C.kilo(args.tools, ws, KEY, v["kilo"]),
        "droid": lambda ws: C.droid(args.tools, ws, KEY, v["droid"]),
        "qwen": lambda ws: C.qwen(args.tools, ws, KEY, v["qwen"]),
        "cline": lambda ws: C.cline(args.tools, ws, KEY, v["cline"]),
        "continue": lambda ws: C.continue_cli(args.tools, ws, KEY, v["continue"]),
        "pi": lambda ws: C.pi(args.tools, ws, KEY, v["pi"]),
        "pi-bedrock": lambda ws: C.pi_bedrock(args.tools, ws, KEY, v["pi"]),
        "openclaw": lambda ws: C.openclaw(args.openclaw_tools, ws, KEY, v["openclaw"], args.openclaw_node),
        "copilot": lambda ws: C.copilot(args.tools, ws, KEY, v["copilot"]),
        "copilot-ws": lambda ws: C.copilot_ws(args.tools, ws, KEY, v["copilot"]),
        "ai": lambda ws: C.ai_sdk("ai", args.ai_tools, ws, KEY, v["ai"], args.ai_node, HERE),
        "ai6": lambda ws: C.ai_sdk("ai6", args.tools, ws, KEY, v["ai6"], node, HERE),
        "sdk-js": lambda ws: C.sdk_js(args.sdk_tools, ws, KEY, v["sdk-js"], args.ai_node, HERE),
        "agents": lambda ws: C.openai_agents(ws, KEY, v["agents"], args.python, HERE),
        "pydantic-ai": lambda ws: C.pydantic_ai(ws, KEY, v["pydantic-ai"], args.py_frameworks, HERE),
        "langchain": lambda ws: C.langchain(ws, KEY, v["langchain"], args.py_frameworks, HERE),
        "genai": lambda ws: C.genai(ws, KEY, v["genai"], args.py_frameworks, HERE),
        "adk": lambda ws: C.adk(ws, KEY, v["adk"], args.py_frameworks, HERE),
        "smolagents": lambda ws: C.smolagents(ws, KEY, v["smolagents"], args.py_frameworks, HERE),
        "crewai": lambda ws: C.crewai(ws, KEY, v["crewai"], args.crewai, HERE),
        "strands": lambda ws: C.strands(ws, KEY, v["strands"], args.strands, HERE),
        "agent-framework": lambda ws: C.agent_framework(ws, KEY, v["agent-framework"], args.agent_framework, HERE),
        "llamaindex": lambda ws: C.llamaindex(ws, KEY, v["llamaindex"], args.llamaindex, HERE),
        "agno": lambda ws: C.agno(ws, KEY, v["agno"], args.agno, HERE),
        "autogen": lambda ws: C.autogen(ws, KEY, v["autogen"], args.autogen, HERE),
        "semantic-kernel": lambda ws: C.semantic_kernel(ws, KEY, v["semantic-kernel"], args.semantic_kernel, HERE),
        "haystack": lambda ws: C.haystack(ws, KEY, v["haystack"], args.haystack, HERE),
        "agentscope": lambda ws: C.agentscope(ws, KEY, v["agentscope"], args.agentscope, HERE),
        "mastra": lambda ws: C.mastra(args.mastra_tools, ws, KEY, v["mastra"], args.ai_node, HERE),
        "adk-js": lambda ws: C.adk_js(args.adk_js_tools, ws, KEY, v["adk-js"], "node", HERE),
        "langchain-js": lambda ws: C.langchain_js(args.langchain_js_tools, ws, KEY, v["langchain-js"], args.ai_node,
                                                  HERE),
        "claude-agent-sdk": lambda ws: C.claude_agent_sdk(args.claude_agent_sdk_tools, ws, KEY, v["claude-agent-sdk"],
                                                          "node", HERE),
        "claude-agent-sdk-py": lambda ws: C.claude_agent_sdk_py(ws, KEY, v["claude-agent-sdk-py"],
                                                                args.claude_agent_sdk_py, HERE),
    }
    chosen = [n for n in args.only.split(",") if n] or list(builders)
    for name in chosen:
        try:
            drive(args, builders[name])
        except Exception:  # noqa: BLE001 - report and go on with the next client
            check(f"{name}: the suite itself ran", False, traceback.format_exc())
    print(f"\nagents-e2e: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
