// One conversation with the Vercel AI SDK through the gateway: real tools
// (files, shell) that fail or succeed, multi-step, generateText or streamText.
//
//   node ai_sdk_agent.mjs PROVIDER MODE MARKER
//   PROVIDER: anthropic | openai-chat | openai-responses | google
//   MODE: generate | stream
// Environment: E2E_NODE_MODULES (where `ai` and the providers are installed),
// E2E_GATEWAY (the gateway's URL), E2E_KEY, E2E_WORKSPACE (the tools' cwd).
// Prints the model's final text; exits non-zero on any error.
import { require, aiSdkModel } from "./driver_env.mjs";
import { TOOLS, schemaOf } from "./workspace_tools.mjs";

const [provider, mode, marker] = process.argv.slice(2);
const { generateText, streamText, tool, stepCountIs, jsonSchema } = require("ai");

const tools = Object.fromEntries(
  TOOLS.map((t) => [
    t.name,
    tool({ description: t.description, inputSchema: jsonSchema(schemaOf(t.args)), execute: async (args) => t.run(args) }),
  ]),
);

const request = {
  model: aiSdkModel(provider),
  tools,
  stopWhen: stepCountIs(12),
  maxRetries: 0,
  prompt: `Run the checks. [[e2e:${marker}]]`,
};
let text;
if (mode === "generate") {
  text = (await generateText(request)).text;
} else if (mode === "stream") {
  let failure;
  const result = streamText({ ...request, onError: ({ error }) => (failure = error) });
  for await (const _ of result.textStream) {
    // drain
  }
  text = await result.text;
  if (failure) throw failure;
} else {
  throw new Error(`unknown mode ${mode}`);
}
console.log(text);
