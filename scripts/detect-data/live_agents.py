#!/usr/bin/env python3
"""Labelled tool results from real agent programs (the Gemini CLI, the Codex
CLI, OpenCode, Qwen Code; and the Python frameworks Pydantic AI, LangChain, google-genai and
Google ADK, `--only pydantic-ai,langchain,genai,adk --python PY`) running
real commands, in the corpus format of shared/corpus/tool_results.jsonl.

The mock provider in agent mode plays the "model": it asks each client for
a scripted list of tool calls, one per turn (see e2e/agents/). The clients
run them for real (shell commands in a scratch workspace, file reads and
edits, calls the harness refuses) and send their results back through the
gateway; the mock's log holds each result exactly as the client sent it.

Labels come from what the tool truly did, never from the result's text:

- a shell command's exit status, found by running the same command with
  `bash -c` in an identical copy of the workspace first (non-zero, or
  killed by a signal, is a failure);
- a call the harness refuses or cannot run (a path outside the workspace,
  a policy or sandbox denial, an unknown tool, bad arguments, an edit whose
  text is absent) is a failure, a file read or write that happens is a
  success; the result must also match the step's pattern, so that a step
  that did not do what it says is dropped (and reported), never mislabelled.

    export CARGO_INCREMENTAL=0
    cargo build -p toolwarden -p toolwarden-mock-provider
    bash .ci/agents_e2e.sh   # once: installs the pinned clients (or AGENTS_E2E_ONLY=gemini,codex)
    python3 scripts/detect-data/live_agents.py \
        --tools ~/.cache/toolwarden-e2e/npm > /work/data/detect/live-agents.jsonl

The `source` of each row names the client and its version
(`live:gemini-cli@0.61.0`), so leave-one-source-out holds each client out.
Data stays out of the repository: write it under /work/data/detect/.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "e2e", "agents"))

import clients as C  # noqa: E402  (e2e/agents: the clients' configuration)
import run as R  # noqa: E402  (e2e/agents: the mock provider + gateway stack)

# Whole results (the detector sees whole texts; a client's footer is at the end).
MAX_CONTENT = 65536
RUN_TIMEOUT = 600

APP_LOG = """2026-11-20 10:00:01 INFO server started on :8080
2026-11-20 10:00:05 WARN slow request /api/items took 1200ms
2026-11-20 10:01:17 ERROR connection refused: db:5432
2026-11-20 10:01:18 ERROR failed to fetch user 42: timeout
2026-11-20 10:02:00 INFO retry succeeded
"""

TEST_PY = """import unittest


class T(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(1 + 1, 2)

    def test_error_message(self):
        self.assertIn("error", "an error message")


if __name__ == "__main__":
    unittest.main()
"""

FAILING_TEST_PY = """import unittest


class T(unittest.TestCase):
    def test_sum(self):
        self.assertEqual(sum([1, 2]), 4)


if __name__ == "__main__":
    unittest.main()
"""


def workspace(path):
    """The scratch workspace every run starts from."""
    os.makedirs(os.path.join(path, "src"))
    files = {
        "present.txt": "hello e2e\n",
        "app.log": APP_LOG,
        "notes.md": "# Notes\n\nKnown issues: the error page shows a stack trace.\n",
        "src/main.py": "def main():\n    print('error handling ok')\n\n\nif __name__ == '__main__':\n    main()\n",
        "src/test_ok.py": TEST_PY,
        "src/test_fail.py": FAILING_TEST_PY,
        "config.json": '{"error": null, "retries": 3, "status": "ok"}\n',
    }
    for name, text in files.items():
        with open(os.path.join(path, name), "w") as f:
            f.write(text)


# Shell commands, the same for every client: the label is the exit status
# the command has when run (see `truth`). Chosen to cover what breaks
# detectors: failures whose output looks fine or is empty, successes whose
# output is full of error words, signals, large and negative statuses.
COMMANDS = [
    "echo e2e-ok",
    "ls",
    "cat present.txt",
    "grep -n ERROR app.log || true",
    "grep -c ERROR app.log",
    "grep -i error notes.md",
    "cat config.json",
    "python3 -c \"print('Error: this line is only text')\"",
    "python3 -c \"import sys; sys.stderr.write('warning: deprecated flag\\n'); print('done')\"",
    "python3 -c \"import sys; sys.stderr.write('Traceback (most recent call last):\\n  handled\\n')\"",
    "ls missing 2>/dev/null || echo 'no such file, using defaults'",
    "tail -n 2 app.log",
    "python3 -m unittest discover -s src -p 'test_ok.py' 2>&1",
    "find . -name '*.py' | sort",
    "wc -l app.log notes.md",
    "true",
    "sh -c 'echo fatal: not really >&2; exit 0'",
    "seq 1 3",
    "test -f present.txt && echo present",
    "python3 src/main.py",
    "grep -rn 'failed' . || echo none",
    "false",
    "exit 3",
    "ls missing-dir",
    "cat missing.txt",
    "grep -q absent-word present.txt",
    "python3 -c \"raise SystemExit(4)\"",
    "python3 -c \"import json; json.loads('{')\"",
    "sh -c 'echo all good; exit 1'",
    "echo 'Tests passed'; exit 5",
    "no_such_command_xyz",
    "python3 -c \"import os; os._exit(255)\"",
    "sh -c 'kill -9 $$'",
    "cd /nonexistent-dir-e2e",
    "test -d missing",
    "grep -rn TODO src",
    "python3 -m unittest discover -s src -p 'test_fail.py' 2>&1",
    "python3 -c \"import sys; print('result: 42'); sys.exit(2)\"",
    "node -e \"process.exit(-1)\"",
    "sh -c 'exit 130'",
    "make build",
    "python3 -c \"print('{\\\"ok\\\": true}'); raise SystemExit(1)\"",
    "mkdir present.txt",
    # everyday programs, as they are
    "git status",
    "git init -q . && git status --short",
    "python3 -m json.tool config.json",
    "python3 -m json.tool notes.md",
    "diff present.txt notes.md",
    "diff present.txt present.txt",
    "sort missing.txt",
    "head -n 1 app.log",
    "timeout 1 sleep 5",
    "curl -sS http://127.0.0.1:9/",
    "node -e \"console.error('Error: printed, not thrown'); console.log('ok')\"",
    "node -e \"throw new Error('boom')\"",
    "python3 -c \"import warnings; warnings.warn('old api'); print('done')\"",
    "seq 1 40000",
    "seq 1 40000; exit 1",
    "sleep 1 & echo started",
    "tar -tf missing.tar",
    "python3 -c \"print('FAILED tests/test_x.py::test_a - AssertionError')\"",
    "printf 'error: could not compile\\n'; exit 101",
    "ls -la /proc/self/fd/ | head -n 3",
]


def truth(ws, commands):
    """The exit status of each command, run in order in `ws` with bash."""
    codes = []
    for cmd in commands:
        p = subprocess.run(["bash", "-c", cmd], cwd=ws, capture_output=True, timeout=60)
        codes.append(p.returncode)
    return codes


class Step(C.Step):
    """A scripted call; `command` set for shell steps (labelled by `truth`)."""

    def __init__(self, tool, args, fails, match, command=None):
        super().__init__(tool, args, fails, match)
        self.command = command


def shell_steps(tool, arg, codes, match=r"."):
    """`match`: what every result must match (a harness's words: something;
    a framework returns a silent command's empty output as it is)."""
    return [Step(tool, {arg: cmd}, code != 0, match, cmd) for cmd, code in zip(COMMANDS, codes)]


def gemini_steps(ws, codes, policy):
    """Yolo mode: every command runs; `policy`: the default approval mode in
    a non-interactive run, where the harness refuses what needs approval."""
    if policy:
        return [
            Step("run_shell_command", {"command": "echo hi"}, True, r"denied|not allowed|approval|policy|not found|unavailable"),
            Step("write_file", {"file_path": f"{ws}/new.txt", "content": "x\n"}, True,
                 r"denied|not allowed|approval|policy|not found|unavailable"),
            Step("read_file", {"file_path": f"{ws}/present.txt"}, False, r"hello e2e"),
        ]
    return shell_steps("run_shell_command", "command", codes) + [
        Step("read_file", {"file_path": f"{ws}/present.txt"}, False, r"hello e2e"),
        Step("read_file", {"file_path": f"{ws}/app.log"}, False, r"connection refused"),
        Step("read_file", {"file_path": f"{ws}/missing.txt"}, True, r"not found|does not exist|no such file"),
        Step("read_file", {"file_path": "/etc/hostname"}, True, r"workspace|outside|not in|allowed"),
        Step("list_directory", {"dir_path": ws}, False, r"present\.txt"),
        Step("list_directory", {"dir_path": f"{ws}/missing-dir"}, True, r"not found|does not exist|no such|error"),
        Step("write_file", {"file_path": f"{ws}/out.txt", "content": "error: none\n"}, False, r"success|created|wrote"),
        Step("write_file", {"file_path": "/tmp/outside-e2e.txt", "content": "x\n"}, True,
             r"workspace|outside|not in|allowed"),
        Step("replace", {"file_path": f"{ws}/notes.md", "old_string": "Known issues", "new_string": "Open issues",
                         "instruction": "rename"}, False, r"success|modified|updated"),
        Step("replace", {"file_path": f"{ws}/present.txt", "old_string": "absent text", "new_string": "x",
                         "instruction": "replace"}, True, r"could not find|0 occurrences|failed to edit"),
        Step("glob", {"pattern": "**/*.py"}, False, r"main\.py"),
        Step("glob", {"pattern": "**/*.rs"}, False, r"no files|found 0|not found"),
        Step("grep_search", {"pattern": "ERROR"}, False, r"app\.log"),
        Step("grep_search", {"pattern": "zzz-no-such-text"}, False, r"no matches|found 0|not found"),
        C.UNKNOWN,
        Step("read_file", {"file_path": 42}, True, r"must be string|invalid|params"),
    ]


def codex_steps(ws, codes, sandboxed):
    """`sandboxed`: a read-only sandbox with approvals never asked, where
    writes and escalations are refused."""
    if sandboxed:
        return [
            Step("exec_command", {"cmd": "touch new-file.txt"}, True, r"read-only|denied|not permitted|sandbox"),
            Step("exec_command", {"cmd": "echo hi > out.txt"}, True, r"read-only|denied|not permitted|sandbox"),
            Step("exec_command", {"cmd": "echo sandboxed-ok"}, False, r"sandboxed-ok"),
            Step("exec_command", {"cmd": "rm -rf src", "sandbox_permissions": "require_escalated",
                                  "justification": "cleanup"}, True, r"approval|rejected|never|denied"),
            Step("apply_patch", "*** Begin Patch\n*** Add File: added.txt\n+x\n*** End Patch\n", True,
                 r"read-only|denied|rejected|sandbox|approval|not permitted"),
        ]
    patch_ok = "*** Begin Patch\n*** Update File: notes.md\n@@\n-Known issues: the error page shows a stack trace.\n+Open issues: none.\n*** End Patch\n"
    patch_bad = "*** Begin Patch\n*** Update File: present.txt\n@@\n-absent text\n+x\n*** End Patch\n"
    return shell_steps("exec_command", "cmd", codes) + [
        Step("apply_patch", patch_ok, False, r"success|updated|M notes\.md"),
        Step("apply_patch", patch_bad, True, r"failed to find|expected lines|verification failed"),
        C.UNKNOWN,
        Step("exec_command", {"cmd": 42}, True, r"failed to parse|invalid type|missing field"),
    ]


def gemini_client(tools, ws, codes, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "gemini")
    runs, scripts = [], {}
    for name, argv in (("live-gemini-yolo", ["--yolo"]), ("live-gemini-policy", [])):
        scripts[name] = gemini_steps(ws, codes, policy=not argv)
        runs.append(C.Run(name, [bin_, *argv, "--skip-trust", "-p", f"Run the checks. [[e2e:{name}]]"],
                          {"GEMINI_API_KEY": R.KEY, "GEMINI_CLI_CUSTOM_HEADERS": f"x-session-id: {uuid.uuid4()}"}))
    return C.Client("gemini-cli", version, runs=runs, scripts=scripts, conversations=len(runs),
                    setup=C.gemini_settings)


def codex_client(tools, ws, codes, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "codex")
    runs, scripts = [], {}
    for name, mode in (("live-codex-full", ["--dangerously-bypass-approvals-and-sandbox"]),
                       ("live-codex-sandbox", ["--sandbox", "read-only"])):
        scripts[name] = codex_steps(ws, codes, sandboxed="--sandbox" in mode)
        runs.append(C.Run(name, [bin_, "exec", "--skip-git-repo-check", *mode, "-C", ws,
                                 f"Run the checks. [[e2e:{name}]]"], {"OPENAI_API_KEY": R.KEY}))
    return C.Client("codex-cli", version, runs=runs, scripts=scripts, conversations=len(runs),
                    setup=C.codex_config)


def opencode_steps(ws, codes):
    """OpenCode's `bash` answers with the command's output alone (its exit
    status goes to its UI, not to the model); its other tools word their
    own failures. No `glob` or `grep`: they run ripgrep, which OpenCode
    downloads when the machine has none."""
    shell = [Step("bash", {"command": cmd, "description": "run"}, code != 0, r".", cmd)
             for cmd, code in zip(COMMANDS, codes)]
    return shell + [
        Step("read", {"filePath": f"{ws}/present.txt"}, False, r"hello e2e"),
        Step("read", {"filePath": f"{ws}/app.log"}, False, r"connection refused"),
        Step("read", {"filePath": f"{ws}/missing.txt"}, True, r"file not found"),
        Step("read", {"filePath": f"{ws}/src"}, False, r"main\.py"),
        Step("write", {"filePath": f"{ws}/out.txt", "content": "error: none\n"}, False, r"success|wrote"),
        Step("edit", {"filePath": f"{ws}/notes.md", "oldString": "Known issues", "newString": "Open issues"}, False,
             r"success|applied|edit"),
        Step("edit", {"filePath": f"{ws}/present.txt", "oldString": "absent text", "newString": "x"}, True,
             r"could not find"),
        C.UNKNOWN,
        Step("read", {"filePath": 42}, True, r"called with invalid arguments"),
    ]


def opencode_client(tools, ws, codes, version):
    """On Anthropic's API (`edit` and `write`; on GPT models OpenCode edits
    with `apply_patch`), each row's text as OpenCode sent it. `--auto`: a
    command naming a path outside the workspace (`cd /nonexistent-dir`)
    asks a permission, which `run` would refuse, ending the run."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "opencode")
    name = "live-opencode"
    run = C.Run(name, [bin_, "run", "--pure", "--auto", "--model", f"anthropic/{C.OPENCODE_MODELS['anthropic']}",
                       f"Run the checks. [[e2e:{name}]]"],
                {"ANTHROPIC_API_KEY": R.KEY, **C.OPENCODE_ENV})
    client = C.Client("opencode", version, runs=[run], scripts={name: opencode_steps(ws, codes)},
                      conversations=1, setup=C.opencode_settings)
    client.apis = {name: "anthropic"}
    return client


def qwen_steps(ws, codes):
    """Qwen Code (a fork of the Gemini CLI): its `run_shell_command` over the
    live commands, then its file tools."""
    return shell_steps("run_shell_command", "command", codes) + [
        Step("read_file", {"file_path": f"{ws}/present.txt"}, False, r"hello e2e"),
        Step("read_file", {"file_path": f"{ws}/app.log"}, False, r"connection refused"),
        Step("read_file", {"file_path": f"{ws}/missing.txt"}, True, r"not found|does not exist|no such file"),
        # In yolo mode it reads outside the workspace too.
        Step("read_file", {"file_path": "/etc/hostname"}, False, r"\S"),
        # Off unless the settings enable it: the harness refuses the call.
        Step("list_directory", {"path": ws}, True, r"disabled by default"),
        Step("glob", {"pattern": "**/*.py"}, False, r"main\.py"),
        Step("write_file", {"file_path": f"{ws}/out.txt", "content": "error: none\n"}, False, r"success|created|wrote"),
        Step("read_file", {"file_path": f"{ws}/notes.md"}, False, r"Known issues"),
        Step("edit", {"file_path": f"{ws}/notes.md", "old_string": "Known issues", "new_string": "Open issues"}, False,
             r"success|modified|updated"),
        Step("edit", {"file_path": f"{ws}/present.txt", "old_string": "absent text", "new_string": "x"}, True,
             r"has not been read|could not find|0 occurrences|failed to edit"),
        C.UNKNOWN,
        Step("read_file", {"file_path": 42}, True, r"must be absolute|must be string|invalid"),
    ]


def qwen_client(tools, ws, codes, version):
    """On Chat Completions, whose results carry no error flag."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "qwen")
    name = "live-qwen"
    run = C.Run(name, [bin_, "--auth-type", "openai", "--model", C.QWEN_AUTH["openai"], "--yolo",
                       f"Run the checks. [[e2e:{name}]]"],
                {"OPENAI_API_KEY": R.KEY, "OPENAI_BASE_URL": "{gateway}/v1"})
    return C.Client("qwen-code", version, runs=[run], scripts={name: qwen_steps(ws, codes)},
                    conversations=1, setup=C.qwen_settings)


# The Python frameworks (e2e/agents/*_agent.py): each one's tool loop on a
# model whose results carry no error flag, so the detector decides; their
# tools raise on a failure and the framework words it.
FRAMEWORKS = {
    # name: (driver, [(provider, the result's API)], its extra steps)
    "pydantic-ai": ("pydantic_ai_agent.py", [("openai-chat", "openai")], "retry"),
    "langchain": ("langchain_agent.py", [("openai-chat", "openai")], "bug"),
    "genai": ("genai_agent.py", [(None, "gemini")], "bug"),
    "adk": ("adk_agent.py", [("google", "gemini"), ("openai-chat", "openai")], "bug"),
}


def framework_steps(extra, codes):
    """The shell commands through `run_shell` (which raises on a non-zero
    exit), then file reads and edits; `extra`: what the framework answers
    itself (`retry`: Pydantic AI, whose tool with a bug ends the run) or a
    tool with a bug (`bug`)."""
    steps = shell_steps("run_shell", "command", codes, match=r"") + [
        Step("read_file", {"path": "present.txt"}, False, r"hello e2e"),
        Step("read_file", {"path": "app.log"}, False, r"connection refused"),
        Step("read_file", {"path": "config.json"}, False, r"retries"),
        Step("read_file", {"path": "missing.txt"}, True, r"no such file"),
        Step("edit_file", {"path": "notes.md", "old": "Known issues", "new": "Open issues"}, False, r"edited"),
        Step("edit_file", {"path": "present.txt", "old": "absent text", "new": "x"}, True, r"not found in"),
        Step("read_file", {"path": 42}, True, r"."),
    ]
    if extra == "retry":
        return steps + [Step("no_such_tool", {"x": 1}, True, r"Unknown tool name")]
    if extra == "bug":
        return steps + [Step("explode", {}, True, r"has no attribute")]
    return steps


def framework_client(name, python, ws, codes, version):
    driver, providers, extra = FRAMEWORKS[name]
    mode = {"langchain": "invoke", "genai": "generate"}.get(name, "run")
    runs, scripts, apis = [], {}, {}
    for provider, api in providers:
        script = f"live-{name}-{provider or api}"
        scripts[script] = framework_steps(extra, codes)
        apis[script] = api
        runs.append(C.Run(script, [python, os.path.join(ROOT, "e2e", "agents", driver)]
                          + ([provider] if provider else []) + [mode, script]))
    client = C.Client(name, version, runs=runs, scripts=scripts, conversations=len(runs),
                      setup=lambda home, gateway: None)
    client.apis = apis
    return client


def gemini_text(raw):
    """What the gateway gives the detector for a `functionResponse.response`
    (crates/wire/src/gemini/items.rs): an `error`'s message, else `output` /
    `result` / `content` when a string, else the object's JSON."""
    try:
        r = json.loads(raw)
    except json.JSONDecodeError:
        return raw, None
    if not isinstance(r, dict):
        return raw, None
    e = r.get("error")
    if e is not None:
        if isinstance(e, dict) and isinstance(e.get("message"), str):
            return e["message"], True
        return (e if isinstance(e, str) else json.dumps(e)), True
    for k in ("output", "result", "content"):
        if k in r:
            v = r[k]
            return (v if isinstance(v, str) else json.dumps(v)), None
    return raw, None


def collect(args, build, out, problems):
    tmp = tempfile.mkdtemp(prefix="tw-live-")
    ws, home, label_ws = (os.path.join(tmp, d) for d in ("ws", "home", "label-ws"))
    for d in (ws, label_ws):
        workspace(d)
    os.makedirs(home)
    codes = truth(label_ws, COMMANDS)
    client = build(ws, codes)
    stack = R.Stack(args, tmp, client)
    try:
        client.setup(home, stack.url)
        for run in client.runs:
            # Each run starts from a fresh workspace (the previous one's edits undone).
            shutil.rmtree(ws)
            workspace(ws)
            p = subprocess.run(run.argv, cwd=ws, env=R.client_env(home, stack.url, ws, run.env),
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN_TIMEOUT)
            if p.returncode != 0:
                problems.append(f"{client.name} {run.script}: exit {p.returncode}: {p.stderr[-500:]}")
    finally:
        stack.stop()
    n = 0
    with open(stack.log) as f:
        events = [json.loads(line) for line in f]
    for e in events:
        if e["event"] != "result":
            continue
        steps = client.scripts.get(e["script"], [])
        if e["step"] >= len(steps):
            continue
        step = steps[e["step"]]
        raw = e["text"]
        api = getattr(client, "apis", {}).get(e["script"]) or {"gemini-cli": "gemini"}.get(client.name, "openai")
        text, explicit = gemini_text(raw) if api == "gemini" else (raw, None)
        if not re.search(step.match, raw, re.I | re.S):
            problems.append(f"{client.name} {e['script']} step {e['step']} ({step.tool}) dropped: "
                            f"{raw[:200]!r} does not match /{step.match}/")
            continue
        out.write(json.dumps({
            "source": f"live:{client.name}@{client.version}:{e['script']}",
            "provider": api,
            "tool_name": step.tool,
            "command": getattr(step, "command", None),
            "content": text[:MAX_CONTENT],
            "content_chars": len(text),
            "truncated": len(text) > MAX_CONTENT,
            "is_error": step.fails,
            "explicit_error_flag": explicit,
            "label_basis": "exit status of the command run with bash -c in a copy of the workspace"
            if getattr(step, "command", None) is not None else "what the scripted call does (a refused or impossible call fails)",
        }, ensure_ascii=False) + "\n")
        n += 1
    print(f"{client.name}: {n} results", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", help="the npm prefix the Gemini and Codex CLIs, OpenCode and Qwen Code are installed in")
    ap.add_argument("--toolwarden", default=os.path.join(ROOT, "target", "debug", "toolwarden"))
    ap.add_argument("--mock", default=os.path.join(ROOT, "target", "debug", "mock-provider"))
    ap.add_argument("--only", default="gemini,codex",
                    help="gemini,codex,opencode,qwen (--tools); pydantic-ai,langchain,genai,adk (--python)")
    ap.add_argument("--python", help="a python with the Python frameworks (.ci/agents_e2e.sh's py-frameworks venv)")
    args = ap.parse_args()
    if any(n in FRAMEWORKS for n in args.only.split(",")):
        out = subprocess.run([args.python, "-c", "import importlib.metadata as m; import json; print(json.dumps("
                              "{d: m.version(d) for d in ('pydantic-ai-slim', 'langchain', 'google-genai', "
                              "'google-adk')}))"], capture_output=True, text=True, check=True)
        have = json.loads(out.stdout)
        fw_versions = {"pydantic-ai": have["pydantic-ai-slim"], "langchain": have["langchain"],
                       "genai": have["google-genai"], "adk": have["google-adk"]}
    versions = {}
    packages = {"gemini": "@google/gemini-cli", "codex": "@openai/codex", "opencode": "opencode-ai",
                "qwen": "@qwen-code/qwen-code"}
    for name in set(packages) & set(args.only.split(",")):
        with open(os.path.join(args.tools, "node_modules", packages[name], "package.json")) as f:
            versions[name] = json.load(f)["version"]
    builders = {
        "gemini": lambda ws, codes: gemini_client(args.tools, ws, codes, versions["gemini"]),
        "codex": lambda ws, codes: codex_client(args.tools, ws, codes, versions["codex"]),
        "opencode": lambda ws, codes: opencode_client(args.tools, ws, codes, versions["opencode"]),
        "qwen": lambda ws, codes: qwen_client(args.tools, ws, codes, versions["qwen"]),
    }
    for fw in FRAMEWORKS:
        builders[fw] = lambda ws, codes, fw=fw: framework_client(fw, args.python, ws, codes, fw_versions[fw])
    problems = []
    for name in args.only.split(","):
        collect(args, builders[name], sys.stdout, problems)
    for p in problems:
        print("warning: " + p, file=sys.stderr)


if __name__ == "__main__":
    main()
