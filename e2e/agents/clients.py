"""The agent programs the suite drives, and the script of tool turns the mock
provider plays for each conversation.

A step is one tool call the mock "model" makes: the tool, its arguments,
whether the agent's execution of it must fail, and a pattern the result text
must match (so the script is known to have done what it says). Each client
gets the same six kinds of step in its own tools' terms: a read of a missing
file, a failing shell command, a succeeding one, an edit that fails, an
unknown tool, a tool that throws. The OpenAI Agents SDK also runs the
Responses API's built-in client tools (its ShellTool and ApplyPatchTool): a
failing and a succeeding command, a patch that applies and one that fails.
"""

import json
import os
import shlex
import subprocess
import uuid
from dataclasses import dataclass, field


@dataclass
class Step:
    tool: str
    args: object  # a dict; a string is a freeform (custom) tool's input
    fails: bool
    match: str  # a regex the result text must match (case-insensitive)
    # The call the mock must have made ("function", "custom", or a built-in
    # tool's: "shell", "apply_patch"), when it matters; for a built-in tool
    # its result carries its own failure (a shell command's exit code, a
    # patch's status), which must then agree with `fails`.
    kind: str | None = None


@dataclass
class Run:
    """One agent process; `script` names the conversation it starts."""

    script: str
    argv: list
    env: dict = field(default_factory=dict)


@dataclass
class Client:
    name: str
    version: str
    runs: list
    scripts: dict  # script name -> [Step]
    conversations: int  # sessions the gateway must record
    setup: object = None  # callable(home, gateway) writing the client's config
    # Issue 18: extra mock-provider arguments, and callable(tmp, mock_url) ->
    # (gateway arguments, gateway environment) for the cloud modes.
    mock_args: list = field(default_factory=list)
    gateway: object = None
    # Runs at once (each its own conversation, none writing the workspace):
    # the Python frameworks' processes spend their time starting up.
    parallel: int = 1
    # Its Responses turns go over a WebSocket on /v1/responses: the mock
    # must have seen them as messages there, and no POST.
    websocket: bool = False
    # A tool of the client's own that ends a run (smolagents'
    # `final_answer`): the mock calls it with the final text.
    final_tool: str | None = None
    # The sessions a client names for its side requests, as a regex whose
    # group 1 is the conversation's session (Kilo's `title-<session>`): each
    # must name a conversation's, and none is counted as a conversation.
    side_sessions: str | None = None


def final_text(script):
    return f"E2E-DONE {script}: all steps ran."


def scripts_json(clients):
    return json.dumps({"scripts": {
        name: {"steps": [{"tool": s.tool, "args": s.args} for s in steps],
               "final_text": final_text(name),
               "gemini_ids": name.endswith("-ids"),
               "final_tool": c.final_tool,
               "calls_alone": name.endswith("-alone")}
        for c in clients for name, steps in c.scripts.items()}})


UNKNOWN = Step("no_such_tool", {"x": 1}, True, r"no_such_tool|not (found|available)|unsupported|no such tool")


# === Claude Code ===

def claude(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "claude")
    main = [
        Step("Read", {"file_path": f"{ws}/missing.txt"}, True, r"does not exist|no such file"),
        Step("Bash", {"command": "ls missing-dir", "description": "list"}, True, r"no such file|exit code"),
        Step("Bash", {"command": "echo e2e-ok", "description": "echo"}, False, r"e2e-ok"),
        Step("Edit", {"file_path": f"{ws}/present.txt", "old_string": "absent text", "new_string": "x"}, True,
             r"not been read|not found|string to replace"),
        UNKNOWN,
        Step("Read", {"file_path": 42, "limit": "many"}, True, r"InputValidationError|expected|invalid"),
        Step("Agent", {"description": "sub", "prompt": "Check the workspace. [[e2e:claude-sub]]",
                      "subagent_type": "general-purpose", "run_in_background": False}, False, "E2E-DONE claude-sub"),
        # Claude Code 2.1.3xx runs a subagent in the background unless told
        # otherwise: the call's result is the launch, and the subagent's own
        # requests go on beside the main agent's.
        Step("Agent", {"description": "bg", "prompt": "Check in the background. [[e2e:claude-bg]]",
                      "subagent_type": "general-purpose", "run_in_background": True}, False,
             r"(?i)async agent launched|agentId"),
    ]
    bg = [Step("Bash", {"command": "echo e2e-bg", "description": "echo"}, False, r"e2e-bg")]
    sub = [
        Step("Read", {"file_path": f"{ws}/present.txt"}, False, r"hello e2e"),
        Step("Bash", {"command": "cat missing.txt", "description": "cat"}, True, r"no such file|exit code"),
    ]
    cont = [Step("Bash", {"command": "echo again", "description": "echo"}, False, r"again")]
    fork = [Step("Bash", {"command": "echo forked", "description": "echo"}, False, r"forked")]
    common = [bin_, "--dangerously-skip-permissions", "--model", "claude-sonnet-4-5", "--output-format", "text"]
    env = {"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "ANTHROPIC_API_KEY": key}
    return Client(
        "Claude Code", version,
        runs=[Run("claude-main", common + ["-p", "Run the checks. [[e2e:claude-main]]"], env),
              Run("claude-cont", common + ["-c", "-p", "One more. [[e2e:claude-cont]]"], env),
              Run("claude-fork", common + ["-c", "--fork-session", "-p", "Fork. [[e2e:claude-fork]]"], env)],
        scripts={"claude-main": main, "claude-sub": sub, "claude-bg": bg, "claude-cont": cont,
                 "claude-fork": fork},
        conversations=2,  # the subagent and `-c` belong to the first run's session; the fork has its own
    )


# === Claude Code through the cloud routes (issue 18) ===

AWS_KEY_ID, AWS_SECRET = "AKIDAGENTSE2E", "agents/e2e/secret"
GOOGLE_TOKEN = "ya29.agents-e2e-gateway-token"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def claude_cloud_steps(ws):
    return [
        Step("Read", {"file_path": f"{ws}/missing.txt"}, True, r"does not exist|no such file"),
        Step("Bash", {"command": "ls missing-dir", "description": "list"}, True, r"no such file|exit code"),
        Step("Bash", {"command": "echo e2e-ok", "description": "echo"}, False, r"e2e-ok"),
        Step("Read", {"file_path": f"{ws}/present.txt"}, False, r"hello e2e"),
    ]


def claude_cloud_env():
    return {"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}


def claude_bedrock(tools, ws, key, version):
    """`CLAUDE_CODE_USE_BEDROCK` with `CLAUDE_CODE_SKIP_BEDROCK_AUTH`: the client
    does not sign; the gateway signs with its AWS credentials, the mock checks
    the signature."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "claude")
    env = claude_cloud_env()
    env.update({"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1", "AWS_REGION": "us-east-1",
                "ANTHROPIC_BEDROCK_BASE_URL": "{gateway}/bedrock"})
    argv = [bin_, "--dangerously-skip-permissions", "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "--output-format", "text", "-p", "Run the checks. [[e2e:claude-bedrock]]"]

    return Client("Claude Code (Bedrock)", version, runs=[Run("claude-bedrock", argv, env)],
                  scripts={"claude-bedrock": claude_cloud_steps(ws)}, conversations=1,
                  mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def claude_bedrock_key(tools, ws, key, version):
    """`CLAUDE_CODE_USE_BEDROCK` with a Bedrock API key
    (`AWS_BEARER_TOKEN_BEDROCK`): the gateway passes the client's key on
    unsigned. Its own credentials are not the mock's AWS key, so a request
    it signed instead would be refused."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "claude")
    env = claude_cloud_env()
    env.update({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_BEARER_TOKEN_BEDROCK": BEDROCK_API_KEY,
                "AWS_REGION": "us-east-1", "ANTHROPIC_BEDROCK_BASE_URL": "{gateway}/bedrock"})
    argv = [bin_, "--dangerously-skip-permissions", "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "--output-format", "text", "-p", "Run the checks. [[e2e:claude-bedrock-key]]"]
    return Client("Claude Code (Bedrock API key)", version, runs=[Run("claude-bedrock-key", argv, env)],
                  scripts={"claude-bedrock-key": claude_cloud_steps(ws)}, conversations=1,
                  mock_args=["--aws-key", "AKIDNOTTHEGATEWAYS:another-secret", "--bedrock-api-key", BEDROCK_API_KEY],
                  gateway=bedrock_gateway)


BEDROCK_API_KEY = "ABSKQmVkcm9ja0FQSUtleS1hZ2VudHMtZTJl"

# The gateway's test certificate (localhost and 127.0.0.1) and its CA.
TLS_DIR = os.path.join(ROOT, "crates/gateway/tests/tls")


def claude_https(tools, ws, key, version):
    """Claude Code through the gateway serving HTTPS (`--tls-cert`,
    `--tls-key`: the test certificate), trusting its CA as Node programs do,
    by `NODE_EXTRA_CA_CERTS`."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "claude")
    env = claude_cloud_env()
    env.update({"ANTHROPIC_API_KEY": key, "NODE_EXTRA_CA_CERTS": os.path.join(TLS_DIR, "ca.pem")})
    argv = [bin_, "--dangerously-skip-permissions", "--model", "claude-sonnet-4-5",
            "--output-format", "text", "-p", "Run the checks. [[e2e:claude-https]]"]
    return Client("Claude Code (HTTPS)", version, runs=[Run("claude-https", argv, env)],
                  scripts={"claude-https": claude_cloud_steps(ws)}, conversations=1, gateway=https_gateway)


def https_gateway(tmp, mock_url):
    """The gateway serving HTTPS with the test certificate."""
    return (["--tls-cert", os.path.join(TLS_DIR, "server.pem"), "--tls-key", os.path.join(TLS_DIR, "server.key")], {})

# The mock checks requests' SigV4 signatures with this key, as AWS does; the
# gateway signs with it.
BEDROCK_MOCK_ARGS = ["--aws-key", f"{AWS_KEY_ID}:{AWS_SECRET}"]


def bedrock_gateway(tmp, mock_url):
    """The gateway's Bedrock upstream at the mock, and its AWS credentials."""
    return (["--bedrock-upstream", mock_url, "--bedrock-region", "us-east-1"],
            {"AWS_ACCESS_KEY_ID": AWS_KEY_ID, "AWS_SECRET_ACCESS_KEY": AWS_SECRET})


def claude_vertex(tools, ws, key, version):
    """`CLAUDE_CODE_USE_VERTEX` with `CLAUDE_CODE_SKIP_VERTEX_AUTH`: the client
    sends no token; the gateway adds its own (a service account's JWT
    exchanged at the mock's token endpoint), which the mock requires."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "claude")
    env = claude_cloud_env()
    env.update({"CLAUDE_CODE_USE_VERTEX": "1", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
                "ANTHROPIC_VERTEX_PROJECT_ID": "e2e-project", "CLOUD_ML_REGION": "us-east5",
                "ANTHROPIC_VERTEX_BASE_URL": "{gateway}/vertex/v1"})
    argv = [bin_, "--dangerously-skip-permissions", "--model", "claude-sonnet-4-5@20250929",
            "--output-format", "text", "-p", "Run the checks. [[e2e:claude-vertex]]"]

    def gateway(tmp, mock_url):
        with open(os.path.join(ROOT, "crates/mock-provider/keys/google-test-service-account.pem")) as f:
            pem = f.read()
        creds = os.path.join(tmp, "service-account.json")
        with open(creds, "w") as f:
            json.dump({"type": "service_account", "project_id": "e2e-project", "private_key_id": "e2e",
                       "private_key": pem, "client_email": "gw@e2e-project.iam.gserviceaccount.com",
                       "token_uri": f"{mock_url}/token"}, f)
        return (["--vertex-upstream", mock_url], {"GOOGLE_APPLICATION_CREDENTIALS": creds})

    return Client("Claude Code (Vertex AI)", version, runs=[Run("claude-vertex", argv, env)],
                  scripts={"claude-vertex": claude_cloud_steps(ws)}, conversations=1,
                  mock_args=["--google-token", GOOGLE_TOKEN], gateway=gateway)


# === Gemini CLI ===

def gemini_settings(home, gateway):
    quiet_settings(home, ".gemini", {"security": {"auth": {"selectedType": "gemini-api-key"}}})


def quiet_settings(home, folder, extra):
    """`HOME/FOLDER/settings.json` of the Gemini CLI and its fork Qwen Code:
    no telemetry, no usage statistics, no update checks, and `extra`."""
    d = os.path.join(home, folder)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "settings.json"), "w") as f:
        json.dump({**extra, "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False},
                   "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}, f)


def gemini_steps(ws):
    """The Gemini CLI's checks: failures of its file, shell and edit tools,
    a success, an unknown tool and arguments of the wrong type."""
    return [
        Step("read_file", {"file_path": f"{ws}/missing.txt"}, True, r"not found|does not exist|no such file"),
        Step("run_shell_command", {"command": "ls missing-dir"}, True, r"exit code: [1-9]|no such file"),
        Step("run_shell_command", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
        Step("replace", {"file_path": f"{ws}/present.txt", "old_string": "absent text", "new_string": "x",
                         "instruction": "replace"}, True, r"could not find|0 occurrences|failed to edit"),
        UNKNOWN,
        Step("read_file", {"file_path": 42}, True, r"must be string|invalid|params"),
    ]


def gemini(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "gemini")

    # It sends no session id of its own: one session per run as `toolwarden
    # env` says, with a header on all its requests, side requests included.
    runs = [Run(s, [bin_, "--yolo", "--skip-trust", "-p", f"Run the checks. [[e2e:{s}]]"],
                {"GEMINI_API_KEY": key, "GEMINI_CLI_CUSTOM_HEADERS": f"x-session-id: {uuid.uuid4()}"})
            for s in ("gemini-noids", "gemini-ids")]
    return Client("Gemini CLI", version, runs=runs,
                  scripts={"gemini-noids": gemini_steps(ws), "gemini-ids": gemini_steps(ws)},
                  conversations=2, setup=gemini_settings)


def gemini_https(tools, ws, key, version):
    """The Gemini CLI through the gateway serving HTTPS, trusting its CA as
    Node programs do, by `NODE_EXTRA_CA_CERTS`."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "gemini")
    env = {"GEMINI_API_KEY": key, "GEMINI_CLI_CUSTOM_HEADERS": f"x-session-id: {uuid.uuid4()}",
           "NODE_EXTRA_CA_CERTS": os.path.join(TLS_DIR, "ca.pem")}
    run = Run("gemini-https", [bin_, "--yolo", "--skip-trust", "-p", "Run the checks. [[e2e:gemini-https]]"], env)
    return Client("Gemini CLI (HTTPS)", version, runs=[run], scripts={"gemini-https": gemini_steps(ws)},
                  conversations=1, setup=gemini_settings, gateway=https_gateway)


def gemini_compressing_settings(home, gateway):
    """The Gemini CLI's settings, compressing its history once its last
    prompt passed 0.1% of the model's context (the mock reports a quarter
    of the request's bytes as its prompt tokens: ~3000 with the CLI's
    system prompt, over 0.1% of Gemini's 1 M)."""
    gemini_settings(home, gateway)
    path = os.path.join(home, ".gemini", "settings.json")
    with open(path) as f:
        settings = json.load(f)
    settings["model"] = {"compressionThreshold": 0.001}
    with open(path, "w") as f:
        json.dump(settings, f)


def gemini_compressed(tools, ws, key, version):
    """The Gemini CLI compressing its history, with no session header. Its
    compression splits the history at a user prompt, so the second run
    resumes the first (`--resume latest`): before answering the second
    prompt's first call it replaces the first run's turns with a
    `<state_snapshot>` summary, its first turn changes, and the answers go
    in a new fingerprint session while their calls were recorded in the
    old one. Each call must still count once, with its result."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "gemini")
    first = [
        Step("run_shell_command", {"command": "echo e2e-first"}, False, r"e2e-first"),
        Step("read_file", {"file_path": f"{ws}/present.txt"}, False, r"hello e2e"),
    ]
    second = [
        Step("run_shell_command", {"command": "echo e2e-second"}, False, r"e2e-second"),
        Step("read_file", {"file_path": f"{ws}/missing.txt"}, True, r"not found|does not exist|no such file"),
        Step("run_shell_command", {"command": "ls missing-dir"}, True, r"exit code: [1-9]|no such file"),
    ]
    common = [bin_, "--yolo", "--skip-trust"]
    env = {"GEMINI_API_KEY": key}
    runs = [Run("gemini-compress-a", common + ["-p", "Run the checks. [[e2e:gemini-compress-a]]"], env),
            Run("gemini-compress-b", common + ["--resume", "latest", "-p", "Again. [[e2e:gemini-compress-b]]"],
                env)]
    # Fingerprint sessions: the conversation before and after its compression,
    # and side requests' own (each run's router classifier; the summarizer's
    # requests, their first turn the compressed part's, once per compression
    # that changed it).
    return Client("Gemini CLI (compressed history)", version, runs=runs,
                  scripts={"gemini-compress-a": first, "gemini-compress-b": second},
                  conversations=6, setup=gemini_compressing_settings)


# === Codex CLI ===

def codex_config(home):
    """The model and quiet settings; the provider comes on the command line
    (`codex_overrides`). `.ci/ws_e2e.sh` runs Codex with the provider in
    this file instead."""
    d = os.path.join(home, ".codex")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write("""model = "gpt-5.5"
check_for_update_on_startup = false

[analytics]
enabled = false

[otel]
exporter = "none"
""")


def codex_overrides(toolwarden, gateway):
    """The `-c` arguments of the one-run line `toolwarden env` prints for the
    Codex CLI, split as a shell splits them: what a user would paste."""
    out = subprocess.run([toolwarden, "env", "--url", gateway],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("#   codex -c "))
    words = shlex.split(line[1:])
    assert words[0] == "codex", line
    return words[1:]


def codex_steps():
    """The Codex CLI's checks with gpt-5.5, from Codex's own catalog:
    `exec_command`, and `apply_patch` as a freeform (custom) tool whose
    input is the patch itself."""
    patch = "*** Begin Patch\n*** Update File: present.txt\n@@\n-absent text\n+x\n*** End Patch\n"
    return [
        Step("exec_command", {"cmd": "cat missing.txt"}, True, r"no such file"),
        Step("exec_command", {"cmd": "ls missing-dir"}, True, r"no such file"),
        Step("exec_command", {"cmd": "echo e2e-ok"}, False, r"e2e-ok"),
        Step("apply_patch", patch, True, r"failed to find|expected lines|verification failed"),
        UNKNOWN,
        Step("exec_command", {"cmd": 42}, True, r"failed to parse|invalid type|missing field"),
    ]


def codex_run(tools, ws, key, toolwarden, script, extra_env):
    """One `codex exec` run with the provider from `toolwarden env`'s line,
    and the setup that writes its config and adds that line's arguments."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "codex")
    argv = [bin_, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
            "-C", ws, f"Run the checks. [[e2e:{script}]]"]
    run = Run(script, argv, {"OPENAI_API_KEY": key, **extra_env})

    def setup(home, gateway):
        codex_config(home)
        run.argv[1:1] = codex_overrides(toolwarden, gateway)

    return run, setup


def codex(tools, ws, key, version, toolwarden):
    run, setup = codex_run(tools, ws, key, toolwarden, "codex-main", {})
    return Client("Codex CLI", version, runs=[run],
                  scripts={"codex-main": codex_steps()}, conversations=1, setup=setup)


def codex_https(tools, ws, key, version, toolwarden):
    """The Codex CLI through the gateway serving HTTPS, in WebSocket mode
    (`supports_websockets`: its turns over `wss://`), trusting the gateway's
    CA by `CODEX_CA_CERTIFICATE`, the variable Codex reads for its HTTPS and
    WebSocket connections."""
    run, codex_setup = codex_run(tools, ws, key, toolwarden, "codex-https",
                                 {"CODEX_CA_CERTIFICATE": os.path.join(TLS_DIR, "ca.pem")})

    def setup(home, gateway):
        codex_setup(home, gateway)
        run.argv[1:1] = ["-c", "model_providers.toolwarden.supports_websockets=true"]

    return Client("Codex CLI (HTTPS, WebSocket)", version, runs=[run],
                  scripts={"codex-https": codex_steps()}, conversations=1, setup=setup, gateway=https_gateway,
                  websocket=True)


# === OpenCode ===

OPENCODE_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5.5", "google": "gemini-2.5-pro"}
# Nothing fetched from the network: no update, no models.dev catalog (the
# one built in names these models), no language servers.
OPENCODE_ENV = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"}


def opencode_settings(home, gateway):
    """OpenCode's config as `toolwarden env` says: Anthropic and OpenAI from
    `ANTHROPIC_BASE_URL` and `OPENAI_BASE_URL` (the run's environment; the
    AI SDK's Anthropic provider posts to `{base}/messages`, which the
    gateway takes as `/v1/messages`), Gemini's base URL here, as OpenCode's
    documentation sets a provider's (`provider.<id>.options.baseURL`)."""
    d = os.path.join(home, ".config", "opencode")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "opencode.json"), "w") as f:
        json.dump({"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
                   "provider": {"google": {"options": {"baseURL": f"{gateway}/v1beta"}}}}, f)


def opencode_steps(ws, provider):
    """OpenCode's checks on `provider`."""
    # On OpenAI's GPT models OpenCode edits with `apply_patch` (a
    # function tool whose `patchText` is the patch) instead of `edit`.
    edit = (Step("apply_patch", {"patchText": "*** Begin Patch\n*** Update File: present.txt\n@@\n-absent text\n+x\n"
                                              "*** End Patch"}, True, r"failed to find|expected lines|verification failed")
            if provider == "openai" else
            Step("edit", {"filePath": f"{ws}/present.txt", "oldString": "absent text", "newString": "x"}, True,
                 r"could not find oldString"))
    # OpenCode answers a call of a tool it lacks by renaming the call, in
    # the history it sends back, to its own `invalid` tool. Gemini's
    # calls here have no ids (the AI SDK sends none back), so a call is
    # known by its name and that call and its answer are another call
    # (README, "Gemini calls without ids"): no unknown tool on Gemini.
    unknown = [UNKNOWN] if provider != "google" else []
    return [
        Step("read", {"filePath": f"{ws}/missing.txt"}, True, r"file not found"),
        Step("bash", {"command": "ls missing-dir", "description": "list"}, True, r"no such file"),
        Step("bash", {"command": "echo e2e-ok", "description": "echo"}, False, r"e2e-ok"),
        # ended by OpenCode's timeout: its `<shell_metadata>` trailer says so
        Step("bash", {"command": "sleep 5", "description": "wait", "timeout": 500}, True,
             r"terminated command after exceeding timeout"),
        edit,
        *unknown,
        Step("read", {"filePath": 42}, True, r"called with invalid arguments"),
    ]


def opencode(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "opencode")

    env = {"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key, "GOOGLE_GENERATIVE_AI_API_KEY": key,
           "OPENAI_BASE_URL": "{gateway}/v1", **OPENCODE_ENV}
    def run(provider, script, prompt, *more):
        return Run(script, [bin_, "run", "--pure", "--model", f"{provider}/{OPENCODE_MODELS[provider]}", *more,
                            f"{prompt} [[e2e:{script}]]"], env)

    # The mock gives Gemini calls ids (`-ids`); the AI SDK does not send
    # them back.
    runs = [run(p, f"opencode-{p}-ids", "Run the checks.") for p in OPENCODE_MODELS]
    scripts = {r.script: opencode_steps(ws, p) for r, p in zip(runs, OPENCODE_MODELS)}
    # `-c` continues the last session: the Anthropic one, run just before.
    runs.insert(1, run("anthropic", "opencode-cont", "One more.", "-c"))
    scripts["opencode-cont"] = [Step("bash", {"command": "echo again", "description": "echo"}, False, r"again")]
    return Client("OpenCode", version, runs=runs, scripts=scripts,
                  conversations=len(OPENCODE_MODELS), setup=opencode_settings)


def opencode_https(tools, ws, key, version):
    """OpenCode (on Bun) through the gateway serving HTTPS, on Anthropic,
    trusting the gateway's CA by `NODE_EXTRA_CA_CERTS`, which Bun reads as
    Node.js does."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "opencode")
    env = {"ANTHROPIC_API_KEY": key, "NODE_EXTRA_CA_CERTS": os.path.join(TLS_DIR, "ca.pem"), **OPENCODE_ENV}
    model = f"anthropic/{OPENCODE_MODELS['anthropic']}"
    run = Run("opencode-https", [bin_, "run", "--pure", "--model", model, "Run the checks. [[e2e:opencode-https]]"],
              env)
    return Client("OpenCode (HTTPS)", version, runs=[run], scripts={"opencode-https": opencode_steps(ws, "anthropic")},
                  conversations=1, setup=opencode_settings, gateway=https_gateway)


# === Kilo CLI ===

# Kilo Code's CLI is built on OpenCode: the same `run`, tools and
# providers, its own names for the config and the environment.
KILO_ENV = {"KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1",
            "KILO_DISABLE_SHARE": "1", "KILO_DISABLE_SESSION_INGEST": "1", "KILO_DISABLE_CODEBASE_INDEXING": "1",
            "KILO_DISABLE_PRESENCE": "1", "KILO_DISABLE_CLAUDE_CODE": "1", "KILO_DISABLE_EXTERNAL_SKILLS": "1"}


def kilo_settings(home, gateway):
    """Kilo's config (`~/.config/kilo/kilo.json`), shaped as OpenCode's."""
    d = os.path.join(home, ".config", "kilo")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kilo.json"), "w") as f:
        json.dump({"$schema": "https://app.kilo.ai/config.json", "autoupdate": False, "share": "disabled",
                   "provider": {"google": {"options": {"baseURL": f"{gateway}/v1beta"}}}}, f)


def kilo(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "kilo")
    env = {"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key, "GOOGLE_GENERATIVE_AI_API_KEY": key,
           "OPENAI_BASE_URL": "{gateway}/v1", **KILO_ENV}

    def run(provider, script, prompt, *more):
        return Run(script, [bin_, "run", "--pure", "--auto", "--model", f"{provider}/{OPENCODE_MODELS[provider]}",
                            *more, f"{prompt} [[e2e:{script}]]"], env)

    runs = [run(p, f"kilo-{p}-ids", "Run the checks.") for p in OPENCODE_MODELS]
    scripts = {r.script: opencode_steps(ws, p) for r, p in zip(runs, OPENCODE_MODELS)}
    runs.insert(1, run("anthropic", "kilo-cont", "One more.", "-c"))
    scripts["kilo-cont"] = [Step("bash", {"command": "echo again", "description": "echo"}, False, r"again")]
    # Its `x-session-id` names the conversation (`ses_…`, kept by `-c`);
    # the request for the session's title, with no tools, names
    # `title-ses_…`, a session of its own, which the gateway keeps as the
    # client named it. That request races the run's end, so a run may exit
    # before sending it.
    return Client("Kilo CLI", version, runs=runs, scripts=scripts, conversations=len(OPENCODE_MODELS),
                  setup=kilo_settings, side_sessions=r"title-(ses_\w+)")



# === Factory's Droid ===

# Its own models with a key of the user's ("BYOK", `customModels` in
# `~/.factory/settings.json`), one per API it speaks; with
# `FACTORY_AIRGAP_ENABLED` it runs without a Factory account.
DROID_MODELS = [("anthropic", "claude-sonnet-4-5", "{gateway}"), ("openai", "gpt-5.5", "{gateway}/v1"),
                ("generic-chat-completion-api", "gpt-4.1", "{gateway}/v1")]


def droid_settings(key):
    def setup(home, gateway):
        d = os.path.join(home, ".factory")
        os.makedirs(d, exist_ok=True)
        models = [{"model": m, "displayName": f"gw-{p}", "baseUrl": url.replace("{gateway}", gateway), "apiKey": key,
                   "provider": p, "maxOutputTokens": 8192} for p, m, url in DROID_MODELS]
        with open(os.path.join(d, "settings.json"), "w") as f:
            json.dump({"customModels": models}, f)
    return setup


def droid_steps(ws, provider):
    """Droid's checks on `provider`: on OpenAI's APIs it edits with
    `ApplyPatch`, a freeform (custom) tool on Responses, a function taking
    the patch as `input` on Chat Completions."""
    patch = "*** Begin Patch\n*** Update File: present.txt\n@@\n-absent text\n+x\n*** End Patch"
    edit = {"anthropic": Step("Edit", {"file_path": f"{ws}/present.txt", "old_str": "absent text", "new_str": "x"},
                              True, r"text to replace was not found"),
            "openai": Step("ApplyPatch", patch, True, r"failed to apply patch", kind="custom"),
            "generic-chat-completion-api": Step("ApplyPatch", {"input": patch}, True, r"failed to apply patch")}[provider]
    return [
        Step("Read", {"file_path": f"{ws}/missing.txt"}, True, r"ENOENT: no such file"),
        Step("Execute", {"summary": "List a missing directory", "command": "ls missing-dir"}, True,
             r"command failed \(exit code: 2\)"),
        Step("Execute", {"summary": "Print a test marker", "command": "echo e2e-ok"}, False, r"e2e-ok"),
        # Not flagged on Anthropic: the text alone says so.
        Step("Execute", {"summary": "Wait past the timeout", "command": "sleep 5", "timeout": 1}, True,
             r"timed out after 1 seconds"),
        edit,
        UNKNOWN,
        Step("Read", {"file_path": 42}, True, r"file_path is required and must be a string"),
    ]


def droid(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "droid")
    env = {"FACTORY_AIRGAP_ENABLED": "1", "FACTORY_DISABLE_KEYRING": "1"}
    def run(script, model, prompt, *more):
        return Run(script, [bin_, "exec", "--skip-permissions-unsafe", "-m", model, *more,
                            f"{prompt} [[e2e:{script}]]"], env)

    runs = [run(f"droid-{p}", f"custom:gw-{p}-{i}", "Run the checks.") for i, (p, _, _) in enumerate(DROID_MODELS)]
    scripts = {r.script: droid_steps(ws, p) for r, (p, _, _) in zip(runs, DROID_MODELS)}
    # No continued run: `droid exec -s <id>` fetches the session from
    # Factory's service, which airgap mode blocks (`AirgapBlockedError`).
    return Client("Droid", version, runs=runs, scripts=scripts, conversations=len(DROID_MODELS),
                  setup=droid_settings(key))

# === Qwen Code ===

# Its auth types, each with a model; the gateway's URL comes from the
# environment (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`).
QWEN_AUTH = {"openai": "qwen3-coder-plus", "openai-responses": "gpt-5.5", "anthropic": "claude-sonnet-4-5",
             "gemini": "gemini-2.5-pro"}


def qwen_settings(home, gateway):
    quiet_settings(home, ".qwen", {})


def qwen(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "qwen")

    def steps():
        return [
            Step("read_file", {"file_path": f"{ws}/missing.txt"}, True, r"not found|does not exist|no such file"),
            Step("run_shell_command", {"command": "ls missing-dir"}, True, r"exit code: [1-9]|no such file"),
            Step("run_shell_command", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
            # Qwen Code refuses to edit a file it has not read in the session.
            Step("edit", {"file_path": f"{ws}/present.txt", "old_string": "absent text", "new_string": "x"}, True,
                 r"has not been read in this session"),
            UNKNOWN,
            # It reads the number as the path "42".
            Step("read_file", {"file_path": 42}, True, r"must be absolute"),
        ]

    env = {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": "{gateway}/v1", "ANTHROPIC_API_KEY": key,
           "GEMINI_API_KEY": key}

    def run(auth, script, prompt, *more):
        return Run(script, [bin_, "--auth-type", auth, "--model", QWEN_AUTH[auth], "--yolo", *more,
                            f"{prompt} [[e2e:{script}]]"], env)

    # Each run, then `-c` (it resumes the project's latest session), which
    # sends the first message without the date reminder it began with.
    runs, scripts = [], {}
    for a in QWEN_AUTH:
        runs += [run(a, f"qwen-{a}", "Run the checks."), run(a, f"qwen-{a}-cont", "One more.", "-c")]
        scripts[f"qwen-{a}"] = steps()
        scripts[f"qwen-{a}-cont"] = [Step("run_shell_command", {"command": "echo again"}, False, r"again")]
    return Client("Qwen Code", version, runs=runs, scripts=scripts, conversations=len(QWEN_AUTH),
                  setup=qwen_settings)


# === Cline ===

# Its providers that take a base URL, each with a model: Chat Completions
# (`openai-compatible`), Responses (`openai-native`) and Anthropic.
CLINE_PROVIDERS = {"openai-compatible": ("gpt-5.5", "/v1"), "openai-native": ("gpt-5.5", "/v1"),
                   "anthropic": ("claude-sonnet-4-5", "")}


def cline_steps(ws, provider, sub):
    # Its edit tool: `apply_patch` on OpenAI's APIs, `editor` on Anthropic.
    if provider == "anthropic":
        edit = Step("editor", {"path": f"{ws}/present.txt", "old_text": "absent text", "new_text": "x"}, True,
                    r"no replacement|editor operation failed")
    else:
        patch = "*** Begin Patch\n*** Update File: present.txt\n@@\n-absent text\n+x\n*** End Patch"
        edit = Step("apply_patch", {"input": patch}, True, r"could not be applied")
    return [
        # Its batch tools answer with an item per file or command.
        Step("read_files", {"files": [{"path": f"{ws}/missing.txt"}]}, True, r"ENOENT|no such file"),
        Step("run_commands", {"commands": ["ls missing-dir"]}, True, r"exited with code 2"),
        Step("run_commands", {"commands": ["echo e2e-ok"]}, False, r"e2e-ok"),
        # A batch with one failed command is a failed call.
        Step("run_commands", {"commands": ["echo first-ok", "ls missing-dir"]}, True,
             r"first-ok.*exited with code 2"),
        edit,
        # (Cline stops a run after three failed calls in a row.)
        Step("run_commands", {"commands": ["echo between"]}, False, r"between"),
        UNKNOWN,
        Step("read_files", {"files": 42}, True, r"invalid input"),
        Step("read_files", {"files": [{"path": f"{ws}/present.txt"}]}, False, r"hello e2e"),
        # A subagent: a conversation of its own, answered as the call's result.
        Step("spawn_agent", {"systemPrompt": "You check the workspace.", "task": f"Check it. [[e2e:{sub}]]"},
             False, f"E2E-DONE {sub}"),
    ]


def cline(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "cline")

    def setup(home, gateway):
        d = os.path.join(home, ".cline", "data", "settings")
        os.makedirs(d)
        providers = {p: {"settings": {"provider": p, "apiKey": key, "model": model, "baseUrl": gateway + path},
                         "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}
                     for p, (model, path) in CLINE_PROVIDERS.items()}
        with open(os.path.join(d, "providers.json"), "w") as f:
            json.dump({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {}, "providers": providers}, f)

    # Sessions run in the process (`local`): by default the first run starts
    # a hub daemon that outlives it, and later runs join it.
    env = {"CLINE_SESSION_BACKEND_MODE": "local"}
    runs, scripts = [], {}
    for p, (model, _) in CLINE_PROVIDERS.items():
        main, sub = f"cline-{p}", f"cline-{p}-sub"
        runs.append(Run(main, [bin_, "-P", p, "-m", model, f"Run the checks. [[e2e:{main}]]"], env))
        scripts[main] = cline_steps(ws, p, sub)
        scripts[sub] = [Step("run_commands", {"commands": ["cat missing.txt"]}, True, r"no such file")]
    return Client("Cline", version, runs=runs, scripts=scripts, conversations=2 * len(CLINE_PROVIDERS), setup=setup)


# === the Continue CLI ===

# Its models, each a config file of its own: the `openai` provider sends
# Chat Completions for gpt-4.1 and Responses for gpt-5.5.
CONTINUE_MODELS = {"openai-chat": ("openai", "gpt-4.1", "/v1"), "openai-responses": ("openai", "gpt-5.5", "/v1"),
                   "anthropic": ("anthropic", "claude-sonnet-4-5", "/v1/")}


def continue_steps(ws):
    return [
        Step("Read", {"filepath": f"{ws}/missing.txt"}, True, r"file does not exist"),
        Step("Bash", {"command": "ls missing-dir"}, True, r"exit code 2"),
        Step("Bash", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
        # It refuses to edit a file not read first.
        Step("MultiEdit", {"file_path": f"{ws}/present.txt", "edits": [{"old_string": "absent text", "new_string": "x"}]},
             True, r"must use the Read tool"),
        UNKNOWN,
        # A tool that threw is answered with the exception's message alone.
        Step("Read", {"filepath": 42}, True, r"is not a function"),
        Step("List", {"dirpath": f"{ws}/missing-dir"}, True, r"directory does not exist"),
        Step("Bash", {"command": "cat missing.txt"}, True, r"no such file"),
        Step("Read", {"filepath": f"{ws}/present.txt"}, False, r"hello e2e"),
        Step("Write", {"filepath": f"{ws}/written.txt", "content": "new e2e"}, False, r"written|success|creat"),
    ]


def continue_cli(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "cn")

    # Beside the workspace, not in it.
    folder = os.path.join(os.path.dirname(ws), "continue-config")
    configs = {name: os.path.join(folder, f"{name}.yaml") for name in CONTINUE_MODELS}

    def setup(home, gateway):
        os.makedirs(folder)
        for name, (provider, model, path) in CONTINUE_MODELS.items():
            with open(configs[name], "w") as f:
                f.write(f"name: e2e\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: gateway\n"
                        f"    provider: {provider}\n    model: {model}\n    apiKey: {key}\n"
                        f"    apiBase: {gateway}{path}\n    roles: [chat]\n")

    runs, scripts = [], {}
    for name in CONTINUE_MODELS:
        main, cont = f"continue-{name}", f"continue-{name}-cont"
        common = [bin_, "-p", "--config", configs[name], "--auto"]
        runs += [Run(main, common + [f"Run the checks. [[e2e:{main}]]"]),
                 # `--resume`: the home's last session, its history resent.
                 Run(cont, common + ["--resume", f"One more. [[e2e:{cont}]]"])]
        scripts[main] = continue_steps(ws)
        scripts[cont] = [Step("Bash", {"command": "echo again"}, False, r"again")]
    return Client("Continue CLI", version, runs=runs, scripts=scripts, conversations=len(CONTINUE_MODELS),
                  setup=setup)


# === the GitHub Copilot CLI ===

# Its own model providers (BYOK: `COPILOT_PROVIDER_*`), each with the
# model that picks its tools: gpt-5.5 on Responses edits with the
# freeform `apply_patch`, gpt-4.1 and Claude with `edit` and `create`.
COPILOT_MODES = {
    "responses": ("gpt-5.5", {"COPILOT_PROVIDER_WIRE_API": "responses",
                              "COPILOT_PROVIDER_BASE_URL": "{gateway}/v1"}),
    "completions": ("gpt-4.1", {"COPILOT_PROVIDER_WIRE_API": "completions",
                                "COPILOT_PROVIDER_BASE_URL": "{gateway}/v1"}),
    "anthropic": ("claude-sonnet-4.5", {"COPILOT_PROVIDER_TYPE": "anthropic",
                                        "COPILOT_PROVIDER_BASE_URL": "{gateway}"}),
}


def copilot_steps(ws, model, sub):
    if model == "gpt-5.5":
        patch = "*** Begin Patch\n*** Update File: present.txt\n@@\n-absent text\n+x\n*** End Patch\n"
        edits = [Step("apply_patch", patch, True, r"failed to apply patch")]
    else:
        edits = [Step("edit", {"path": f"{ws}/present.txt", "old_str": "absent text", "new_str": "x"}, True,
                      r"old_str not found"),
                 Step("create", {"path": f"{ws}/present.txt", "file_text": "x"}, True, r"already exists")]
    return [
        Step("view", {"path": f"{ws}/missing.txt"}, True, r"does not exist"),
        # Its shell's status follows the output: `<shellId: 0 completed with exit code 2>`.
        Step("bash", {"command": "ls missing-dir", "description": "list"}, True, r"exit code 2"),
        Step("bash", {"command": "echo e2e-ok", "description": "echo"}, False, r"e2e-ok"),
        *edits,
        UNKNOWN,
        Step("view", {"path": 42}, True, r"expected string"),
        Step("bash", {"command": "cat missing.txt", "description": "cat"}, True, r"no such file"),
        Step("view", {"path": f"{ws}/present.txt"}, False, r"hello e2e"),
        # A subagent: a conversation of its own, its final text the call's result.
        Step("task", {"description": "check the workspace", "prompt": f"Check it. [[e2e:{sub}]]",
                      "agent_type": "task", "name": "checker"}, False, f"E2E-DONE {sub}"),
    ]


def copilot_run(tools, key, model, provider_env, script, *more):
    bin_ = os.path.join(tools, "node_modules", ".bin", "copilot")
    # Offline: no GitHub sign-in, telemetry or update, only the provider.
    env = {"COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false", "COPILOT_PROVIDER_API_KEY": key,
           "COPILOT_MODEL": model, **provider_env}
    return Run(script, [bin_, "--yolo", *more, "-p", f"Run the checks. [[e2e:{script}]]"], env)


def copilot(tools, ws, key, version):
    runs, scripts = [], {}
    for mode, (model, provider_env) in COPILOT_MODES.items():
        main, sub, cont = f"copilot-{mode}", f"copilot-{mode}-sub", f"copilot-{mode}-cont"
        runs += [copilot_run(tools, key, model, provider_env, main),
                 # `--continue`: the most recent session, its history resent.
                 copilot_run(tools, key, model, provider_env, cont, "--continue")]
        scripts[main] = copilot_steps(ws, model, sub)
        scripts[sub] = [Step("bash", {"command": "cat missing.txt", "description": "cat"}, True, r"no such file")]
        scripts[cont] = [Step("bash", {"command": "echo again", "description": "echo"}, False, r"again")]
    # Each run's conversation and its subagent's.
    return Client("GitHub Copilot CLI", version, runs=runs, scripts=scripts, conversations=2 * len(COPILOT_MODES))


def copilot_ws(tools, ws, key, version):
    """Responses over a WebSocket (`COPILOT_PROVIDER_TRANSPORT=websockets`):
    every turn a message on `/v1/responses`, none POSTed."""
    model, provider_env = COPILOT_MODES["responses"]
    provider_env = {**provider_env, "COPILOT_PROVIDER_TRANSPORT": "websockets"}
    run = copilot_run(tools, key, model, provider_env, "copilot-ws")
    return Client("GitHub Copilot CLI (WebSocket)", version, runs=[run],
                  scripts={"copilot-ws": copilot_steps(ws, model, "copilot-ws-sub"),
                           "copilot-ws-sub": [Step("bash", {"command": "cat missing.txt", "description": "cat"},
                                                   True, r"no such file")]},
                  conversations=2, websocket=True)


# === pi (`@mariozechner/pi-coding-agent`) ===

# Its built-in providers at the gateway by `baseUrl` alone in its
# `models.json` (their models and API keys kept: OpenAI's models on
# Responses), and a provider of its own for Chat Completions, as for an
# OpenAI-compatible server. Name: (api, model, path, provider's own).
PI_PROVIDERS = {"openai": ("openai-responses", "gpt-5.5", "/v1", False),
                "anthropic": ("anthropic-messages", "claude-sonnet-4-5", "", False),
                "google": ("google-generative-ai", "gemini-2.5-pro", "/v1beta", False),
                "gw-chat": ("openai-completions", "gpt-4.1", "/v1", True)}


def pi_steps(ws, api):
    # The Gemini API's calls here carry no ids, and pi's unknown-tool answer
    # is named by the call: a call is known by its name there (README,
    # "Gemini calls without ids").
    unknown = [UNKNOWN] if api != "google-generative-ai" else []
    return [
        Step("read", {"path": f"{ws}/missing.txt"}, True, r"ENOENT|no such file"),
        # Its bash appends the status to the output.
        Step("bash", {"command": "ls missing-dir"}, True, r"exited with code 2"),
        Step("bash", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
        Step("edit", {"path": f"{ws}/present.txt", "edits": [{"oldText": "absent text", "newText": "x"}]}, True,
             r"could not find the exact text"),
        *unknown,
        # (a number it would take as the path "42")
        Step("read", {"path": {"not": "a path"}}, True, r"validation failed"),
        Step("ls", {"path": f"{ws}/missing-dir"}, True, r"path not found"),
        # Its edits refused before any is made.
        Step("edit", {"path": f"{ws}/present.txt", "edits": [{"oldText": "hello", "newText": "hello"}]}, True,
             r"identical content"),
        Step("edit", {"path": f"{ws}/present.txt", "edits": []}, True, r"input is invalid"),
        # Its bash's own timeout.
        Step("bash", {"command": "echo started; sleep 5", "timeout": 1}, True, r"started.*timed out after 1 second"),
        Step("read", {"path": f"{ws}/present.txt", "offset": 99}, True, r"beyond end of file"),
        Step("bash", {"command": "cat missing.txt"}, True, r"no such file"),
        Step("read", {"path": f"{ws}/present.txt"}, False, r"hello e2e"),
        Step("write", {"path": f"{ws}/written.txt", "content": "new e2e"}, False, r"wrote|written|success"),
    ]


def pi(tools, ws, key, version):
    bin_ = os.path.join(tools, "node_modules", ".bin", "pi")

    def setup(home, gateway):
        d = os.path.join(home, ".pi", "agent")
        os.makedirs(d)
        providers = {name: {"baseUrl": gateway + path, **({"api": api, "apiKey": key, "models": [{"id": model}]}
                                                          if own else {})}
                     for name, (api, model, path, own) in PI_PROVIDERS.items()}
        with open(os.path.join(d, "models.json"), "w") as f:
            json.dump({"providers": providers}, f)

    # Offline: no version check or package update at start.
    env = {"PI_OFFLINE": "1", "ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key, "GEMINI_API_KEY": key}
    runs, scripts = [], {}
    for name, (api, model, _, _) in PI_PROVIDERS.items():
        main, cont = f"pi-{name}", f"pi-{name}-cont"
        common = [bin_, "--model", f"{name}/{model}", "--tools", "read,bash,edit,write,ls", "-p"]
        runs += [Run(main, common + [f"Run the checks. [[e2e:{main}]]"], env),
                 # `-c`: the directory's last session, its history resent.
                 Run(cont, common[:-1] + ["-c", "-p", f"One more. [[e2e:{cont}]]"], env)]
        scripts[main] = pi_steps(ws, api)
        scripts[cont] = [Step("bash", {"command": "echo again"}, False, r"again")]
    return Client("pi", version, runs=runs, scripts=scripts, conversations=len(PI_PROVIDERS), setup=setup)


def pi_bedrock(tools, ws, key, version):
    """pi's `amazon-bedrock` provider (Converse, streamed) at the gateway's
    `/bedrock` by `baseUrl`, signing with a key of its own; the gateway
    signs again with the key the mock takes."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "pi")
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

    def setup(home, gateway):
        d = os.path.join(home, ".pi", "agent")
        os.makedirs(d)
        with open(os.path.join(d, "models.json"), "w") as f:
            json.dump({"providers": {"amazon-bedrock": {"baseUrl": f"{gateway}/bedrock"}}}, f)

    env = {"PI_OFFLINE": "1", "AWS_ACCESS_KEY_ID": "AKIDPICLIENT", "AWS_SECRET_ACCESS_KEY": "pi/client/secret",
           "AWS_REGION": "us-east-1"}
    common = [bin_, "--model", f"amazon-bedrock/{model}", "--tools", "read,bash,edit,write,ls"]
    runs = [Run("pi-bedrock", common + ["-p", "Run the checks. [[e2e:pi-bedrock]]"], env),
            Run("pi-bedrock-cont", common + ["-c", "-p", "One more. [[e2e:pi-bedrock-cont]]"], env)]
    scripts = {"pi-bedrock": pi_steps(ws, "bedrock-converse-stream"),
               "pi-bedrock-cont": [Step("bash", {"command": "echo again"}, False, r"again")]}
    return Client("pi (Bedrock)", version, runs=runs, scripts=scripts, conversations=1, setup=setup,
                  mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


# === OpenClaw (on pi's agent core) ===

# Providers of its own in `openclaw.json` (`models.providers`, merged with
# its catalog), one per API: name -> (api, model, path).
OPENCLAW_PROVIDERS = {"gw-chat": ("openai-completions", "gpt-4.1", "/v1"),
                      "gw-responses": ("openai-responses", "gpt-5.5", "/v1"),
                      "gw-anthropic": ("anthropic-messages", "claude-sonnet-4-5", "")}


def openclaw_steps(ws):
    """Its tools' failures: pi's read, edit and ls answered as JSON
    (`{"status": "error", "tool": …, "error": …}`), its own exec and
    process in their words; none flagged on OpenAI's APIs."""
    patch = "*** Begin Patch\n*** Update File: present.txt\n@@\n-absent text\n+x\n*** End Patch"
    return [
        Step("read", {"path": f"{ws}/missing.txt"}, True, r"file not found"),
        # Its exec appends the status in brackets: `(Command exited with code 2)`.
        Step("exec", {"command": "ls missing-dir"}, True, r"exited with code 2"),
        Step("exec", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
        Step("edit", {"path": f"{ws}/present.txt", "edits": [{"oldText": "absent text", "newText": "x"}]}, True,
             r"could not find the exact text"),
        UNKNOWN,
        Step("read", {"path": {"not": "a path"}}, True, r"validation failed"),
        Step("ls", {"path": f"{ws}/missing-dir"}, True, r"ENOENT"),
        Step("exec", {"command": "echo started; sleep 5", "timeoutSeconds": 1}, True, r"timed out|timeout"),
        Step("exec", {"command": "echo x", "timeout": 1}, True, r"is unsupported"),
        Step("apply_patch", {"input": patch}, True, r"failed to find expected lines"),
        # A background session it does not have.
        Step("process", {"action": "poll", "sessionId": "nope"}, True, r"no session found"),
        Step("process", {"action": "poll"}, True, r"sessionId is required"),
        Step("read", {"path": f"{ws}/present.txt"}, False, r"hello e2e"),
        # (after the first run, a write of what the file holds: `No changes
        # made to … The file already has identical content.`, a success)
        Step("write", {"path": f"{ws}/written.txt", "content": "new e2e"}, False,
             r"successfully wrote|already has identical content"),
    ]


def openclaw(tools, ws, key, version, node_dir):
    """`openclaw agent --local` (the embedded agent, no OpenClaw gateway of
    its own), on the Node.js it needs (>= 24) from `node_dir`."""
    bin_ = os.path.join(tools, "node_modules", ".bin", "openclaw")

    def setup(home, gateway):
        d = os.path.join(home, ".openclaw")
        os.makedirs(d)
        providers = {name: {"baseUrl": gateway + path, "api": api, "apiKey": key,
                            "models": [{"id": model, "name": model}]}
                     for name, (api, model, path) in OPENCLAW_PROVIDERS.items()}
        with open(os.path.join(d, "openclaw.json"), "w") as f:
            json.dump({"models": {"mode": "merge", "providers": providers},
                       "agents": {"defaults": {"workspace": ws}}}, f)

    env = {"PATH": node_dir + os.pathsep + os.environ["PATH"]}
    runs, scripts = [], {}
    for name, (api, model, _) in OPENCLAW_PROVIDERS.items():
        main = f"openclaw-{name}"
        common = [bin_, "agent", "--local", "--session-id", main, "--model", f"{name}/{model}", "-m"]
        runs.append(Run(main, common + [f"Run the checks. [[e2e:{main}]]"], env))
        scripts[main] = openclaw_steps(ws)
    # The same session id again: its history resent, one session.
    cont = "openclaw-gw-chat-cont"
    runs.append(Run(cont, runs[0].argv[:-1] + [f"One more. [[e2e:{cont}]]"], env))
    scripts[cont] = [Step("exec", {"command": "echo again"}, False, r"again")]
    return Client("OpenClaw", version, runs=runs, scripts=scripts, conversations=len(OPENCLAW_PROVIDERS),
                  setup=setup)


# === the SDKs, with tools defined in e2e/agents/ ===

def sdk_steps(thrown=None):
    """`thrown`: what the SDK sends instead of a tool's exception, when it
    hides the exception's text."""
    def raised(own):
        return thrown or own
    return [
        Step("read_file", {"path": "missing.txt"}, True, raised(r"ENOENT|no such file")),
        Step("run_shell", {"command": "ls missing-dir"}, True, raised(r"command failed|exit status|no such file")),
        Step("run_shell", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
        Step("edit_file", {"path": "present.txt", "old": "absent text", "new": "x"}, True, raised(r"not found in")),
        UNKNOWN,
        Step("explode", {}, True, raised(r"cannot read properties of null|has no attribute")),
    ]


def ai_sdk(name, tools, ws, key, version, node, here):
    """The Vercel AI SDK installed under `tools`, run by `node`; `name` (the
    suite's name for it, `ai` or `ai6`) starts its conversations' names."""
    runs, scripts = [], {}
    for provider in ("anthropic", "openai-chat", "openai-responses", "google"):
        for mode in ("generate", "stream"):
            s = f"{name}-{provider}-{mode}"
            scripts[s] = sdk_steps()
            runs.append(Run(s, [node, os.path.join(here, "ai_sdk_agent.mjs"), provider, mode, s],
                            {"E2E_NODE_MODULES": os.path.join(tools, "node_modules")}))
    return Client(f"Vercel AI SDK ({name})", version, runs=runs, scripts=scripts, conversations=len(runs))


def sdk_js(tools, ws, key, version, node, here):
    """The official TypeScript SDKs' own tool loops (`openai`'s `runTools`,
    the Responses loop over HTTP and over `ResponsesWS`, `@anthropic-ai/sdk`'s
    `toolRunner`, `@openai/agents`' `Runner`), installed under `tools`, run by
    `node` (>= 22)."""
    runs, scripts = [], {}
    for api, modes in (("openai-chat", ("run", "stream")), ("openai-responses", ("create", "stream", "ws")),
                       ("anthropic", ("run", "stream")), ("agents-chat", ("run", "stream")),
                       ("agents-responses", ("run", "stream"))):
        for mode in modes:
            s = f"sdk-js-{api}-{mode}"
            # The Agents SDK tells the model only that the tool failed.
            thrown = r"^An error occurred while running the tool" if api.startswith("agents") else None
            scripts[s] = sdk_steps(thrown)
            runs.append(Run(s, [node, os.path.join(here, "sdk_js_agent.mjs"), api, mode, s],
                            {"E2E_NODE_MODULES": os.path.join(tools, "node_modules")}))
    # The Agents SDK with the conversation on the API's side: each request
    # carries only its new items.
    for state in ("conversation", "session", "previous"):
        for mode in ("run", "stream"):
            s = f"sdk-js-agents-{state}-{mode}"
            scripts[s] = sdk_steps(r"^An error occurred while running the tool")
            if state != "conversation":
                # The second run, given the first's history or its last response.
                scripts[f"{s}-cont"] = [Step("read_file", {"path": "present.txt"}, False, r"hello e2e")]
            runs.append(Run(s, [node, os.path.join(here, "sdk_js_agent.mjs"), "agents-responses", mode, s, state],
                            {"E2E_NODE_MODULES": os.path.join(tools, "node_modules")}))
    return Client("OpenAI and Anthropic TypeScript SDKs", version, runs=runs, scripts=scripts,
                  conversations=len(runs))


def builtin_steps(script):
    """The Responses API's built-in client tools, as the Agents SDK's
    ShellTool and ApplyPatchTool run them: the model's calls are
    `shell_call` (args: its action) and `apply_patch_call` (args: its
    operation), the results `shell_call_output` (failed: a non-zero exit)
    and `apply_patch_call_output` (failed: status "failed")."""
    # A context line and a line added after it: applies again in the next
    # run on the same workspace, and its result shows the file as patched.
    diff = f"@@\n hello e2e\n+patched by {script}\n"
    return [
        Step("shell", {"commands": ["ls missing-dir"], "timeout_ms": 20000}, True, r"no such file", kind="shell"),
        Step("shell", {"commands": ["echo e2e-ok"], "timeout_ms": 20000}, False, r"^e2e-ok", kind="shell"),
        Step("apply_patch", {"type": "update_file", "path": "present.txt", "diff": diff}, False,
             rf"Updated present\.txt:\s+hello e2e\npatched by {script}\n", kind="apply_patch"),
        Step("apply_patch", {"type": "delete_file", "path": "missing.txt"}, True,
             r"delete_file: missing\.txt does not exist", kind="apply_patch"),
    ]


def openai_agents(ws, key, version, python, here):
    runs, scripts = [], {}
    # By default the Agents SDK tells the model only that the tool failed.
    thrown = r"^An error occurred while running the tool"
    for kind in ("chat", "responses", "builtin"):
        for mode in ("run", "streamed"):
            s = f"agents-{kind}-{mode}"
            scripts[s] = builtin_steps(s) if kind == "builtin" else sdk_steps(thrown=thrown)
            runs.append(Run(s, [python, os.path.join(here, "openai_agents_agent.py"), kind, mode, s]))
    # The conversation kept on the API's side: each request carries only its
    # new items (the function_call_outputs without their calls); and an
    # OpenAIResponsesCompactionSession, whose history is compacted by
    # `responses.compact` (from its input) after the first run.
    for state in ("chained", "conversation", "session", "compaction"):
        for mode in ("run", "streamed"):
            s = f"agents-{state}-{mode}"
            scripts[s] = sdk_steps(thrown=thrown)
            if state in ("session", "compaction"):
                # The second run on the session, given the first's history.
                scripts[f"{s}-cont"] = [Step("read_file", {"path": "present.txt"}, False, r"hello e2e")]
            runs.append(Run(s, [python, os.path.join(here, "openai_agents_agent.py"), "responses", mode, s,
                                state]))
    # The compaction session's `responses.compact` request (after the first
    # run, its history past the threshold) names no `instructions`: a
    # fingerprint session of its own, its outputs counted where they were.
    compactions = sum(1 for r in runs if r.script.startswith("agents-compaction-"))
    return Client("OpenAI Agents SDK", version, runs=runs, scripts=scripts,
                  conversations=len(runs) + compactions)


# === Python agent frameworks (Pydantic AI, LangGraph, google-genai) ===

# Bedrock: the Converse API through boto3, which signs with a key of its
# own; the gateway signs again with its credentials (the mock checks them).
PY_PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "google", "bedrock")


def continued(runs, scripts, argv, name, modes, state, providers=PY_PROVIDERS):
    """A conversation of two runs per provider and mode: a failing read and
    a command, then a second message sent with the whole history (the
    first's calls and results resent: each counts once, in one session)."""
    for provider in providers:
        for mode in modes:
            s = f"{name}-{state}-{provider}-{mode}" if provider else f"{name}-{state}-{mode}"
            scripts[s] = [
                Step("read_file", {"path": "missing.txt"}, True, r"no such file"),
                Step("run_shell", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
            ]
            scripts[f"{s}-cont"] = [Step("read_file", {"path": "present.txt"}, False, r"hello e2e")]
            runs.append(Run(s, argv + ([provider] if provider else []) + [mode, s, state]))


def py_framework(name, title, version, python, here, driver, modes, steps, state, providers=PY_PROVIDERS,
                 **client):
    """A Python framework's driver (`e2e/agents/DRIVER`) on each provider in
    each mode with `steps`, and a conversation continued by its `state`
    (see [`continued`])."""
    runs, scripts = [], {}
    argv = [python, os.path.join(here, driver)]
    for provider in providers:
        for mode in modes:
            s = f"{name}-{provider}-{mode}"
            scripts[s] = steps()
            runs.append(Run(s, argv + [provider, mode, s]))
    continued(runs, scripts, argv, name, modes, state, providers=providers)
    return Client(title, version, runs=runs, scripts=scripts, conversations=len(runs), parallel=2, **client)


def pydantic_ai(ws, key, version, python, here):
    """Pydantic AI's agent loop on five models. Its tools report failures as
    `ToolFailed` or `ModelRetry`; it answers an unknown tool and arguments
    that fail validation with a retry prompt (no `explode`: an exception it
    does not know ends the run)."""
    def steps():
        return [
            Step("read_file", {"path": "missing.txt"}, True, r"FileNotFoundError|no such file"),
            Step("run_shell", {"command": "ls missing-dir"}, True, r"exit status"),
            Step("run_shell", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
            Step("edit_file", {"path": "present.txt", "old": "absent text", "new": "x"}, True, r"not found in"),
            Step("no_such_tool", {"x": 1}, True, r"Unknown tool name: 'no_such_tool'"),
            Step("read_file", {"path": 42}, True, r"valid string"),
        ]
    return py_framework("pydantic-ai", "Pydantic AI", version, python, here, "pydantic_ai_agent.py",
                        ("run", "stream"), steps, "history", mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def langchain(ws, key, version, python, here):
    """LangChain's agent (`create_agent`, a LangGraph graph) on five chat
    models, with the documented middleware returning a tool's exception to
    the model; its tool node answers an unknown tool and invalid arguments."""
    def steps():
        return sdk_steps(thrown=None)[:5] + [
            Step("explode", {}, True, r"Tool error: AttributeError: 'NoneType' object has no attribute"),
            Step("read_file", {"path": 42}, True, r"valid string|validation error"),
        ]
    return py_framework("langchain", "LangChain agent", version, python, here, "langchain_agent.py",
                        ("invoke", "stream"), steps, "thread", mock_args=BEDROCK_MOCK_ARGS,
                        gateway=bedrock_gateway)


def genai(ws, key, version, python, here):
    """Google's Gen AI SDK, its automatic function calling on the Gemini API:
    calls without ids (as the API sends them) and with ids, which AFC does
    not send back. AFC raises on a function it was not given: no unknown
    tool."""
    runs, scripts = [], {}
    for ids in ("noids", "ids"):
        for mode in ("generate", "stream"):
            s = f"genai-{mode}-{ids}"
            scripts[s] = [
                Step("read_file", {"path": "missing.txt"}, True, r'"error".*No such file'),
                Step("run_shell", {"command": "ls missing-dir"}, True, r'"error".*exit status'),
                Step("run_shell", {"command": "echo e2e-ok"}, False, r'"result".*e2e-ok'),
                Step("edit_file", {"path": "present.txt", "old": "absent text", "new": "x"}, True,
                     r'"error".*not found in'),
                Step("explode", {}, True, r"\"error\".*has no attribute"),
                Step("read_file", {"path": 42}, True, r'"error"'),
            ]
            runs.append(Run(s, [python, os.path.join(here, "genai_agent.py"), mode, s]))
    continued(runs, scripts, [python, os.path.join(here, "genai_agent.py")], "genai", ("generate", "stream"),
              "chat", providers=(None,))
    return Client("Google Gen AI SDK", version, runs=runs, scripts=scripts, conversations=len(runs), parallel=2)


def adk(ws, key, version, python, here):
    """Google's Agent Development Kit on Gemini (its `Gemini` model) and on
    OpenAI Chat and Anthropic through LiteLLM (its `LiteLlm` model), with
    the `ReflectAndRetryToolPlugin` answering a tool's exception (its
    `error_type` and `error_details`, which the detector reads); and a
    second message in each one's session."""
    def steps():
        return sdk_steps(thrown=None)[:4] + [
            UNKNOWN,
            Step("explode", {}, True, r"has no attribute"),
            Step("read_file", {"path": 42}, True, r"TypeError.*PosixPath"),
        ]
    return py_framework("adk", "Google ADK", version, python, here, "adk_agent.py", ("run", "stream"), steps,
                        "session", providers=("google", "openai-chat", "anthropic"))


def smolagents(ws, key, version, python, here):
    """Hugging Face smolagents' `ToolCallingAgent` on Chat Completions,
    through its `OpenAIServerModel`, its default `InferenceClientModel` and
    its `LiteLLMModel`, and through its `LiteLLMModel` on Anthropic, Gemini
    and Bedrock Converse, the model writing text beside its calls or not
    (`-alone`): the calls are the API's, but the agent answers them in text (`Observation:`, and for a
    tool that raised `Error:`, the step's calls forgotten, joined to the
    user text before it when the model wrote none). Each run ends with the
    agent's `final_answer` tool, whose answer no request carries. Not
    scripted: an unknown tool and arguments of the wrong type, which the
    agent answers with an error that names no call (they stay unanswered,
    README)."""
    runs, scripts = [], {}
    for provider in ("openai-chat", "hf-inference", "litellm-chat", "litellm-anthropic", "litellm-gemini",
                     "litellm-bedrock"):
        for mode in ("run", "stream"):
            for said in ("said", "alone"):
                s = f"smolagents-{provider}-{mode}-{said}"
                scripts[s] = [
                    Step("read_file", {"path": "missing.txt"}, True, r"FileNotFoundError.*No such file"),
                    Step("run_shell", {"command": "echo e2e-ok"}, False, r"^e2e-ok$"),
                    Step("run_shell", {"command": "ls missing-dir"}, True, r"RuntimeError: exit status"),
                    Step("edit_file", {"path": "present.txt", "old": "absent text", "new": "x"}, True,
                         r"not found in"),
                    Step("explode", {}, True, r"has no attribute"),
                    Step("read_file", {"path": "present.txt"}, False, r"^hello e2e$"),
                    Step("read_file", {"path": "missing.txt"}, True, r"FileNotFoundError.*No such file"),
                ]
                runs.append(Run(s, [python, os.path.join(here, "smolagents_agent.py"), provider, mode, s]))
    return Client("smolagents", version, runs=runs, scripts=scripts, conversations=len(runs), parallel=2,
                  final_tool="final_answer", mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def crewai(ws, key, version, python, here):
    """CrewAI's crew of two agents on its native providers (the official
    OpenAI SDK on Chat and Responses, Anthropic's, google-genai's, and
    boto3's Converse API), whole and streamed: tool calls of the API's own,
    each answered by the API's result message, a tool's exception and an
    unknown tool answered in the result's text (`Error executing tool: …`,
    `Tool not found`); and the checker's work delegated to the reader
    (`delegate_work_to_coworker`), a conversation of its own inside that
    call. Not run: CrewAI 1.15's streamed Responses and Converse answers,
    whose tool calls it drops (crewAIInc/crewAI#7497, #7438; README)."""
    def steps(s):
        return [
            Step("read_file", {"path": "missing.txt"}, True, r"Error executing tool: \[Errno 2\] No such file"),
            Step("run_shell", {"command": "ls missing-dir"}, True, r"Error executing tool: exit status 2"),
            Step("run_shell", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
            Step("edit_file", {"path": "present.txt", "old": "absent text", "new": "x"}, True,
                 r"Error executing tool: edit_file: .* not found in"),
            Step("no_such_tool", {"x": 1}, True, r"\bTool not found\b"),
            Step("explode", {}, True, r"Error executing tool: 'NoneType' object has no attribute"),
            Step("read_file", {"path": 42}, True, r"arguments validation failed.*valid string"),
            Step("delegate_work_to_coworker",
                 {"task": f"Read present.txt. [[e2e:{s}-sub]]", "context": "A file of the workspace.",
                  "coworker": "Reader"}, False, f"E2E-DONE {s}-sub"),
        ]
    runs, scripts = [], {}
    for provider in ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"):
        for mode in ("run", "stream"):
            if mode == "stream" and provider in ("openai-responses", "bedrock"):
                continue
            s = f"crewai-{provider}-{mode}"
            scripts[s] = steps(s)
            scripts[f"{s}-sub"] = [
                Step("read_file", {"path": "present.txt"}, False, r"hello e2e"),
                Step("run_shell", {"command": "cat missing.txt"}, True,
                     r"Error executing tool: exit status 1: cat: missing.txt"),
            ]
            runs.append(Run(s, [python, os.path.join(here, "crewai_agent.py"), provider, mode, s]))
    return Client("CrewAI", version, runs=runs, scripts=scripts, conversations=2 * len(runs), parallel=2,
                  mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def workspace_steps(read_missing, ls_fails, edit_fails, unknown, explode, bad_arg, cat_missing):
    """The eight steps a Python framework's driver runs with the workspace's
    tools, each failure matched by the framework's own words: a read of a
    missing file, a failing `ls`, a succeeding command, an edit that cannot
    apply, an unknown tool, a tool that throws, a path of the wrong type,
    a `cat` of a missing file (a file reader's failure)."""
    return [
        Step("read_file", {"path": "missing.txt"}, True, read_missing),
        Step("run_shell", {"command": "ls missing-dir"}, True, ls_fails),
        Step("run_shell", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
        Step("edit_file", {"path": "present.txt", "old": "absent text", "new": "x"}, True, edit_fails),
        Step("no_such_tool", {"x": 1}, True, unknown),
        Step("explode", {}, True, explode),
        Step("read_file", {"path": 42}, True, bad_arg),
        Step("run_shell", {"command": "cat missing.txt"}, True, cat_missing),
    ]


def strands(ws, key, version, python, here):
    """Strands Agents on five models (its OpenAI Chat and Responses,
    Anthropic, Gemini and Bedrock Converse models), by `agent(prompt)`
    (whole answers where the model class allows them) and by
    `stream_async`: the API's own calls and results, a tool's exception and
    an unknown tool answered in the result's text (on Gemini as its content
    blocks, `{"output": [{"text": …}]}`); and a second message to the same
    agent (its conversation kept in the agent, both in one event loop)."""
    def steps():
        return workspace_steps(
            read_missing=r"Error: FileNotFoundError - \[Errno 2\] No such file",
            ls_fails=r"Error: RuntimeError - exit status 2: ls: cannot access",
            edit_fails=r"Error: edit_file: .* not found in",
            unknown=r"Unknown tool: no_such_tool",
            explode=r"Error: AttributeError - 'NoneType' object has no attribute",
            bad_arg=r"Error: Validation failed for input parameters.*valid string",
            cat_missing=r"Error: RuntimeError - exit status 1: cat: missing.txt: No such file",
        )
    return py_framework("strands", "Strands Agents", version, python, here, "strands_agent.py",
                        ("invoke", "stream"), steps, "session",
                        providers=("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"),
                        mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def agent_framework(ws, key, version, python, here):
    """Microsoft Agent Framework's `Agent` on five chat clients (OpenAI Chat
    Completions and Responses, Anthropic, Gemini, Bedrock Converse), run
    whole and streamed: the API's own calls and results, a tool's exception,
    an unknown tool and arguments that fail validation answered in the
    result's text, in detail (`include_detailed_errors`) on a first run; and
    per model and mode a conversation of two messages in one `AgentSession`
    with the default text, `Error: Function failed.`."""
    def steps():
        return workspace_steps(
            read_missing=r"Error: Function failed\. Exception: \[Errno 2\] No such file",
            ls_fails=r"Error: Function failed\. Exception: exit status 2: ls: cannot access",
            edit_fails=r"Error: Function failed\. Exception: edit_file: .* not found in",
            unknown=r'Error: Requested function \\?"no_such_tool\\?" not found\.',
            explode=r"Error: Function failed\. Exception: 'NoneType' object has no attribute",
            bad_arg=r"Error: Argument parsing failed\. Exception: Invalid arguments for 'read_file'",
            cat_missing=r"Error: Function failed\. Exception: exit status 1: cat: missing.txt: No such file",
        )
    runs, scripts = [], {}
    argv = [python, os.path.join(here, "agent_framework_agent.py")]
    for provider in ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"):
        for mode in ("run", "stream"):
            s = f"agent-framework-{provider}-{mode}"
            scripts[s] = steps()
            runs.append(Run(s, argv + [provider, mode, s]))
            s = f"agent-framework-session-{provider}-{mode}"
            scripts[s] = [
                Step("read_file", {"path": "missing.txt"}, True, r"Error: Function failed\.(?! Exception)"),
                Step("run_shell", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
            ]
            scripts[f"{s}-cont"] = [Step("read_file", {"path": "present.txt"}, False, r"hello e2e")]
            runs.append(Run(s, argv + [provider, mode, s, "session"]))
    return Client("Microsoft Agent Framework", version, runs=runs, scripts=scripts, conversations=len(runs),
                  parallel=2, mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def llamaindex(ws, key, version, python, here):
    """LlamaIndex's `FunctionAgent` on five LLMs (OpenAI Chat and
    Responses, Anthropic, Gemini through google-genai, Bedrock Converse),
    whole and streamed: the API's own calls and results, a tool's exception
    answered with its message alone (`str(exception)`, no flag on any API),
    an unknown tool with `Tool … not found.`; and a second message
    given the same `Memory`."""
    def steps():
        return workspace_steps(
            read_missing=r"\[Errno 2\] No such file",
            ls_fails=r"exit status 2: ls: cannot access",
            edit_fails=r"edit_file: 'absent text' not found in",
            unknown=r"Tool no_such_tool not found\.",
            explode=r"'NoneType' object has no attribute 'value'",
            bad_arg=r"unsupported operand type\(s\) for /: 'PosixPath' and 'int'",
            cat_missing=r"exit status 1: cat: missing.txt",
        )
    return py_framework("llamaindex", "LlamaIndex agent", version, python, here, "llamaindex_agent.py",
                        ("run", "stream"), steps, "memory",
                        providers=("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"),
                        mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def agno(ws, key, version, python, here):
    """Agno's `Agent` on five models (OpenAI Chat and Responses, Anthropic,
    Gemini, Bedrock Converse), whole and streamed: the API's own calls and
    results, a tool's exception answered with its message alone, arguments
    of the wrong type with pydantic's error, an unknown tool in a sentence
    of its own, none flagged (on Bedrock each wrapped in a `json` block,
    `{"result": …}`); and a second run in the same session, the first's
    messages in its context."""
    def steps():
        return workspace_steps(
            read_missing=r"\[Errno 2\] No such file",
            ls_fails=r"exit status 2: ls: cannot access",
            edit_fails=r"edit_file: 'absent text' not found in",
            unknown=r"Error: The requested tool does not exist or is not available\.",
            explode=r"'NoneType' object has no attribute 'value'",
            bad_arg=r"1 validation error for read_file",
            cat_missing=r"exit status 1: cat: missing.txt",
        )
    return py_framework("agno", "Agno", version, python, here, "agno_agent.py", ("run", "stream"), steps, "history",
                        providers=("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"),
                        mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)



def agentscope(ws, key, version, python, here):
    """AgentScope's `Agent` (2.x) on four models (OpenAI Chat and Responses,
    Anthropic, Gemini), the model's answers whole and streamed: every
    failure answered with the exception's text alone, flagged on no API
    (on Gemini as `{"output": …}`); and a second message to the same agent,
    the first's context sent with it. On Gemini it sends its system prompt
    as the opening user content, the user's message as the next."""
    def steps():
        return workspace_steps(
            read_missing=r"\[Errno 2\] No such file or directory: .*missing\.txt",
            ls_fails=r"exit status 2: ls: cannot access",
            edit_fails=r"edit_file: 'absent text' not found in",
            unknown=r"ToolNotFoundError: The tool named 'no_such_tool' doesn't exist\.",
            explode=r"'NoneType' object has no attribute 'value'",
            # It checks no argument's type: the path 42 is read as a file.
            bad_arg=r"No such file or directory: .*/42'",
            cat_missing=r"exit status 1: cat: missing\.txt",
        )
    return py_framework("agentscope", "AgentScope", version, python, here, "agentscope_agent.py", ("reply", "stream"),
                        steps, "history", providers=("openai-chat", "openai-responses", "anthropic", "gemini"))

def autogen(ws, key, version, python, here):
    """AutoGen's `AssistantAgent` on autogen-ext's OpenAI Chat, Anthropic
    and Anthropic-on-Bedrock (`invoke`) clients, whole and streamed: the
    API's own calls and results, a tool's exception answered with its
    message alone, arguments of the wrong type with pydantic's error, an
    unknown tool in a sentence of its own, none flagged (no `is_error`); and
    a second task to the same agent."""
    def steps():
        return workspace_steps(
            read_missing=r"^\[Errno 2\] No such file",
            ls_fails=r"^exit status 2: ls: cannot access",
            edit_fails=r"^edit_file: 'absent text' not found in",
            unknown=r"^Error: tool 'no_such_tool' not found in any workbench$",
            explode=r"^'NoneType' object has no attribute 'value'$",
            bad_arg=r"^1 validation error for read_fileargs\n",
            cat_missing=r"^exit status 1: cat: missing.txt",
        )
    return py_framework("autogen", "AutoGen", version, python, here, "autogen_agent.py", ("run", "stream"), steps,
                        "again", providers=("openai-chat", "anthropic", "bedrock"),
                        mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def semantic_kernel(ws, key, version, python, here):
    """Semantic Kernel's agents on seven services (a `ChatCompletionAgent` on
    its OpenAI Chat Completions, Azure OpenAI, Anthropic, Google AI and
    Bedrock Converse services; an `OpenAIResponsesAgent` and an
    `AzureResponsesAgent`), whole and streamed: the kernel's functions called by their
    plugin-qualified names (`Tools-read_file`), a function's exception, an
    unknown function, arguments missing or unexpected answered in
    sentences of the kernel's own, none flagged; and a second message on
    the same thread."""
    def steps():
        return workspace_steps(
            read_missing=r"An error occurred while invoking the function Tools-read_file: \[Errno 2\] No such file",
            ls_fails=r"Tools-run_shell: exit status 2: ls: cannot access",
            edit_fails=r"Tools-edit_file: edit_file: 'absent text' not found in",
            unknown=r"The tool call with name `no_such_tool` is not part of the provided tools",
            explode=r"Tools-explode: 'NoneType' object has no attribute 'value'",
            bad_arg=r"Tools-read_file: \[Errno 2\] No such file or directory: .*/42'",
            cat_missing=r"Tools-run_shell: exit status 1: cat: missing.txt",
        ) + [
            Step("read_file", {}, True, r"Missing required argument\(s\): \['path'\]\. Please revise the arguments"),
            Step("read_file", {"path": "present.txt", "encoding": "utf-8"}, True,
                 r"Received unexpected argument\(s\): \['encoding'\]\."),
        ]
    def gateway(tmp, mock_url):
        args, env = bedrock_gateway(tmp, mock_url)
        return args + ["--azure-upstream", mock_url], env
    client = py_framework("semantic-kernel", "Semantic Kernel", version, python, here, "semantic_kernel_agent.py",
                          ("invoke", "stream"), steps, "thread",
                          providers=("openai-chat", "openai-responses", "azure-chat", "azure-responses", "anthropic",
                                     "gemini", "bedrock"),
                          mock_args=BEDROCK_MOCK_ARGS, gateway=gateway)
    # The kernel's functions are named by their plugin's name too: with a
    # dash, and on Gemini with two underscores (a name it can take).
    for name, script in client.scripts.items():
        for step in script:
            if step.tool != "no_such_tool":
                step.tool = ("Tools__" if "-gemini-" in name else "Tools-") + step.tool
    return client


def haystack(ws, key, version, python, here):
    """Haystack's `Agent` on five chat generators (OpenAI Chat Completions
    and Responses, and the integrations' Anthropic, Google Gen AI and
    Bedrock Converse ones), whole and streamed: a tool's exception as
    `Failed to invoke Tool `…` with parameters {…}. Error: …`, an unknown
    tool as `Tool '…' not found. Available tools: …`, both flagged on
    Anthropic (`is_error`) and Bedrock (`status: error`), on Gemini in a
    `{"result": …}` of their own; no arguments checked (a path of the wrong
    type, missing or unexpected ones reach the function, whose `TypeError`
    is the failure); and a second message given the first run's messages."""
    def whole(pattern):
        # The whole result, on Gemini inside `{"result": …}`.
        return r'^(?:\{"result":")?' + pattern + r'(?:"\})?$'

    def failed(tool, params, error):
        return whole(rf"Failed to invoke Tool `{tool}` with parameters {params}\. Error: {error}")

    def steps():
        return workspace_steps(
            read_missing=failed("read_file", r"\{'path': 'missing.txt'\}",
                                r"\[Errno 2\] No such file or directory: .*"),
            ls_fails=failed("run_shell", r"\{'command': 'ls missing-dir'\}", r"exit status 2: ls: cannot access .*"),
            edit_fails=failed("edit_file", r"\{'new': 'x', 'old': 'absent text', 'path': 'present.txt'\}",
                              r"edit_file: 'absent text' not found in present.txt"),
            unknown=whole(r"Tool 'no_such_tool' not found\. Available tools: read_file, run_shell, edit_file, explode"),
            explode=failed("explode", r"\{\}", r"'NoneType' object has no attribute 'value'"),
            bad_arg=failed("read_file", r"\{'path': 42\}",
                           r"unsupported operand type\(s\) for /: 'PosixPath' and 'int'"),
            cat_missing=failed("run_shell", r"\{'command': 'cat missing.txt'\}",
                               r"exit status 1: cat: missing.txt: No such file or directory"),
        ) + [
            Step("read_file", {}, True,
                 failed("read_file", r"\{\}", r"read_file\(\) missing 1 required positional argument: 'path'")),
            Step("read_file", {"path": "present.txt", "encoding": "utf-8"}, True,
                 failed("read_file", r"\{'encoding': 'utf-8', 'path': 'present.txt'\}",
                        r"read_file\(\) got an unexpected keyword argument 'encoding'")),
        ]
    return py_framework("haystack", "Haystack", version, python, here, "haystack_agent.py", ("run", "stream"), steps,
                        "history", providers=("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"),
                        mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)


def mastra(tools, ws, key, version, node, here):
    """Mastra's `Agent` (installed under `tools`, run by `node` >= 22) on the
    AI SDK's Anthropic, OpenAI Chat, OpenAI Responses and Google providers,
    `generate` and `stream`: a tool's exception answered with its message,
    an unknown tool, arguments its schema refuses (`{"error": true,
    "message": "Tool input validation failed for read_file. …"}`), none
    flagged; and per provider and mode a second run given the first's
    messages."""
    def steps():
        return sdk_steps() + [
            Step("read_file", {"path": 42}, True, r'"error":true,"message":"Tool input validation failed for read_file'),
        ]
    env = {"E2E_NODE_MODULES": os.path.join(tools, "node_modules")}
    runs, scripts = [], {}
    argv = [node, os.path.join(here, "mastra_agent.mjs")]
    for provider in ("anthropic", "openai-chat", "openai-responses", "google"):
        for mode in ("generate", "stream"):
            s = f"mastra-{provider}-{mode}"
            scripts[s] = steps()
            runs.append(Run(s, argv + [provider, mode, s], env))
    start = len(runs)
    continued(runs, scripts, argv, "mastra", ("generate", "stream"), "history",
              providers=("anthropic", "openai-chat", "openai-responses", "google"))
    for run in runs[start:]:
        run.env = env
    return Client("Mastra", version, runs=runs, scripts=scripts, conversations=len(runs), parallel=2)



def adk_js(tools, ws, key, version, node, here):
    """Google's Agent Development Kit for TypeScript (installed under
    `tools`) on Gemini, its events read whole and streamed: a tool's
    exception, and arguments its zod schema refuses, answered as
    `{"error": "Error in tool 'x': …"}`; and per mode a second message in
    the run's session. No unknown tool: ADK for TypeScript ends the run on
    one (an error event, `Function x is not found in the toolsDict.`),
    leaving the call unanswered, where ADK for Python answers it."""
    def steps():
        return [s for s in sdk_steps() if s is not UNKNOWN] + [
            Step("read_file", {"path": 42}, True, r"expected string, received number")]
    env = {"E2E_NODE_MODULES": os.path.join(tools, "node_modules")}
    runs, scripts = [], {}
    argv = [node, os.path.join(here, "adk_js_agent.mjs")]
    for mode in ("run", "stream"):
        s = f"adk-js-{mode}-ids"
        scripts[s] = steps()
        runs.append(Run(s, argv + [mode, s], env))
    start = len(runs)
    continued(runs, scripts, argv, "adk-js", ("run", "stream"), "session", providers=(None,))
    for run in runs[start:]:
        run.env = env
    return Client("Google ADK for TypeScript", version, runs=runs, scripts=scripts, conversations=len(runs),
                  parallel=2)

def langchain_js(tools, ws, key, version, node, here):
    """LangChain.js's agent (`createAgent`, a LangGraph graph; installed
    under `tools`, run by `node` >= 22) on five chat models, its tool node's
    defaults answering every failure: a tool's exception as the error's
    text and `\\n Please fix your mistakes.`, arguments its schema refuses
    (`Error invoking tool 'read_file' with kwargs …`), an unknown tool
    (`Error: no_such_tool is not a valid tool, try one of […].`), each a
    `ToolMessage` with status "error", flagged by the Google provider
    alone; and per model and mode a thread kept by a checkpointer
    given a second message (its whole history resent)."""
    def steps():
        return sdk_steps()[:5] + [
            Step("explode", {}, True, r"TypeError: Cannot read properties of null.*Please fix your mistakes"),
            Step("read_file", {"path": 42}, True, r"Error invoking tool 'read_file' .*did not match expected schema"),
        ]
    providers = ("openai-chat", "openai-responses", "anthropic", "google", "bedrock")
    env = {"E2E_NODE_MODULES": os.path.join(tools, "node_modules")}
    client = py_framework("langchain-js", "LangChain.js agent", version, node, here, "langchain_js_agent.mjs",
                          ("invoke", "stream"), steps, "thread", providers=providers,
                          mock_args=BEDROCK_MOCK_ARGS, gateway=bedrock_gateway)
    for run in client.runs:
        run.env = env
    return client


def claude_agent_sdk_steps(explode, denied):
    """The steps of a Claude Agent SDK driver: the workspace's tools in its
    in-process MCP server (`mcp__ws__…`), failures reported (`run_shell`,
    `edit_file`) or thrown (`read_file`, `explode`: `explode`'s words are the
    language's), an unknown tool, arguments the tool's schema refuses,
    Claude Code's `Bash` failing and a command the driver's permission
    check denies (`denied`: its words)."""
    def ws_tool(name):
        return "mcp__ws__" + name
    return [
        Step(ws_tool("read_file"), {"path": "missing.txt"}, True, r"ENOENT|No such file"),
        Step(ws_tool("run_shell"), {"command": "ls missing-dir"}, True, r"Error: .*ls: cannot access"),
        Step(ws_tool("run_shell"), {"command": "echo e2e-ok"}, False, r"e2e-ok"),
        Step(ws_tool("edit_file"), {"path": "present.txt", "old": "absent text", "new": "x"}, True,
             r"Error: edit_file: .* not found in"),
        UNKNOWN,
        Step(ws_tool("explode"), {}, True, explode),
        Step(ws_tool("read_file"), {"path": 42}, True, r"(?i)invalid|expected string|not of type"),
        Step("Bash", {"command": "cat missing.txt", "description": "cat"}, True, r"no such file|exit code"),
        Step("Bash", {"command": "rm -rf build", "description": "clean"}, True, denied),
    ]


def claude_agent_sdk_continued(scripts, name):
    """A conversation of two messages, `name` and `name-cont`."""
    scripts[name] = [
        Step("mcp__ws__read_file", {"path": "missing.txt"}, True, r"ENOENT|No such file"),
        Step("mcp__ws__run_shell", {"command": "echo e2e-ok"}, False, r"e2e-ok"),
    ]
    scripts[f"{name}-cont"] = [Step("mcp__ws__read_file", {"path": "present.txt"}, False, r"hello e2e")]


def claude_agent_sdk_runs(name, argv, env, modes, explode, denied):
    """A Claude Agent SDK driver's run per mode, each with
    [`claude_agent_sdk_steps`]: the runs and their scripts."""
    runs, scripts = [], {}
    for mode in modes:
        s = f"{name}-{mode}"
        scripts[s] = claude_agent_sdk_steps(explode, denied)
        runs.append(Run(s, argv + [mode, s], env))
    return runs, scripts


CLAUDE_AGENT_SDK_ENV = {"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
                        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}


def claude_agent_sdk(tools, ws, key, version, node, here):
    """The Claude Agent SDK for TypeScript (installed under `tools`, run by
    `node`), the Claude Code binary it ships driven by `query`: the
    workspace's tools as an in-process MCP server (`mcp__ws__read_file`, …)
    beside Claude Code's own `Bash`, the prompt as a string and as
    streaming input; a tool's failure reported (`isError`) or thrown, a
    command the permission callback (`canUseTool`) denies; and a second
    query resuming the first's session (`resume`)."""
    env = dict(CLAUDE_AGENT_SDK_ENV, E2E_NODE_MODULES=os.path.join(tools, "node_modules"), ANTHROPIC_API_KEY=key)
    argv = [node, os.path.join(here, "claude_agent_sdk_agent.mjs")]
    runs, scripts = claude_agent_sdk_runs("claude-agent-sdk", argv, env, ("text", "stream"),
                                          r"Cannot read properties of null",
                                          r"Destructive commands are not allowed in this workspace")
    for mode in ("text", "stream"):
        s = f"claude-agent-sdk-resume-{mode}"
        claude_agent_sdk_continued(scripts, s)
        runs.append(Run(s, argv + [mode, s, "resume"], env))
    return Client("Claude Agent SDK", version, runs=runs, scripts=scripts, conversations=len(runs), parallel=2)


def claude_agent_sdk_py(ws, key, version, python, here):
    """The Claude Agent SDK for Python (`python`: its venv's), the Claude
    Code binary its wheel bundles, by the `query` function and by a
    `ClaudeSDKClient`: the same tools and failures as the TypeScript SDK's
    driver, a command a `PreToolUse` hook denies; and two messages to one
    connected client (its Claude Code process going on with the session)."""
    env = dict(CLAUDE_AGENT_SDK_ENV, ANTHROPIC_API_KEY=key)
    argv = [python, os.path.join(here, "claude_agent_sdk_agent.py")]
    runs, scripts = claude_agent_sdk_runs("claude-agent-sdk-py", argv, env, ("query", "client"),
                                          r"'NoneType' object has no attribute 'value'",
                                          r"Destructive commands are blocked by policy")
    s = "claude-agent-sdk-py-client-cont"
    claude_agent_sdk_continued(scripts, s)
    runs.append(Run(s, argv + ["client", s, "client"], env))
    return Client("Claude Agent SDK (Python)", version, runs=runs, scripts=scripts, conversations=len(runs),
                  parallel=2)
