// One conversation with LangChain.js's agent (`createAgent` from `langchain`,
// a LangGraph graph) through the gateway: real tools (files, shell) that
// fail or succeed, run to the final answer.
//
//   node langchain_js_agent.mjs PROVIDER MODE MARKER [thread]
//   PROVIDER: openai-chat | openai-responses | anthropic | google | bedrock
//             (`ChatOpenAI`, with `useResponsesApi` for Responses;
//             `ChatAnthropic`; `ChatGoogleGenerativeAI`; `ChatBedrockConverse`
//             on a `BedrockRuntimeClient` at the gateway's `/bedrock`, signing
//             with a key of its own: the gateway signs again)
//   MODE: invoke (`agent.invoke`) | stream (`agent.stream`, the model's
//         tokens and the state after each step)
// `thread`: the agent with a checkpointer (`MemorySaver`) and a second
// message on the same `thread_id` after the first run, which the graph
// sends with the thread's whole history: MARKER, then MARKER-cont.
//
// The agent's tool node answers every failure itself, with the defaults
// (`handleToolErrors`): a tool's exception as the error's text and `\n
// Please fix your mistakes.`, arguments its schema refuses (`Error invoking
// tool 'read_file' with kwargs …`), an unknown tool (`Error: x is not a
// valid tool, try one of […].`); each a `ToolMessage` with status "error",
// which only the Google provider sends on (`{"error": {"details": …}}`).
// Environment: E2E_NODE_MODULES (where LangChain.js and its providers are
// installed), E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
// exits non-zero on any error.
import { require, gateway, apiKey } from "./driver_env.mjs";
import { TOOLS, zodShapeOf } from "./workspace_tools.mjs";

const [provider, mode, marker, state = "none"] = process.argv.slice(2);
const { createAgent, tool } = require("langchain");
const { z } = require("zod");

const tools = TOOLS.map((t) =>
  tool(async (args) => t.run(args), {
    name: t.name,
    description: t.description,
    schema: z.object(zodShapeOf(z, t.args)),
  }),
);

function model() {
  switch (provider) {
    case "openai-chat":
    case "openai-responses": {
      const { ChatOpenAI } = require("@langchain/openai");
      const responses = provider === "openai-responses";
      return new ChatOpenAI({
        model: responses ? "gpt-4.1" : "gpt-4o",
        apiKey,
        configuration: { baseURL: `${gateway}/v1` },
        useResponsesApi: responses,
        maxRetries: 0,
      });
    }
    case "anthropic": {
      const { ChatAnthropic } = require("@langchain/anthropic");
      return new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey, anthropicApiUrl: gateway, maxRetries: 0 });
    }
    case "google": {
      const { ChatGoogleGenerativeAI } = require("@langchain/google-genai");
      return new ChatGoogleGenerativeAI({ model: "gemini-2.5-flash", apiKey, baseUrl: gateway, maxRetries: 0 });
    }
    case "bedrock": {
      const { ChatBedrockConverse } = require("@langchain/aws");
      const { BedrockRuntimeClient } = require("@aws-sdk/client-bedrock-runtime");
      const client = new BedrockRuntimeClient({
        region: "us-east-1",
        endpoint: `${gateway}/bedrock`,
        credentials: { accessKeyId: "AKIDFRAMEWORKCLIENT", secretAccessKey: "the-gateway-signs-again" },
        maxAttempts: 1,
      });
      return new ChatBedrockConverse({ model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", region: "us-east-1", client });
    }
    default:
      throw new Error(`unknown provider ${provider}`);
  }
}

let checkpointer;
// Room for long scripted runs.
const config = { recursionLimit: 1000 };
if (state === "thread") {
  const { MemorySaver } = require("@langchain/langgraph");
  checkpointer = new MemorySaver();
  config.configurable = { thread_id: marker };
} else if (state !== "none") {
  throw new Error(`unknown state ${state}`);
}
const agent = createAgent({ model: model(), tools, systemPrompt: "Run the checks.", checkpointer });

const textOf = (message) =>
  typeof message.content === "string"
    ? message.content
    : message.content.filter((b) => b.type === "text").map((b) => b.text).join("");

async function ask(text) {
  const input = { messages: [{ role: "user", content: text }] };
  if (mode === "invoke") {
    const final = await agent.invoke(input, config);
    return textOf(final.messages.at(-1));
  }
  if (mode === "stream") {
    // "messages" streams the model's tokens; "values" gives the state
    // after each step.
    let final;
    for await (const [kind, chunk] of await agent.stream(input, { ...config, streamMode: ["messages", "values"] })) {
      if (kind === "values") final = chunk;
    }
    return textOf(final.messages.at(-1));
  }
  throw new Error(`unknown mode ${mode}`);
}

console.log(await ask(`Run the checks. [[e2e:${marker}]]`));
if (checkpointer) console.log(await ask(`One more. [[e2e:${marker}-cont]]`));
