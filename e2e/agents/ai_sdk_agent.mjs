// One conversation with the Vercel AI SDK through the gateway: real tools
// (files, shell) that fail or succeed, multi-step, generateText or streamText.
//
//   node ai_sdk_agent.mjs PROVIDER MODE MARKER
//   PROVIDER: anthropic | openai-chat | openai-responses | google
//   MODE: generate | stream
// Environment: E2E_NODE_MODULES (where `ai` and the providers are installed),
// E2E_GATEWAY (the gateway's URL), E2E_KEY, E2E_WORKSPACE (the tools' cwd).
// Prints the model's final text; exits non-zero on any error.
import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { require, cwd, aiSdkModel } from "./driver_env.mjs";

const [provider, mode, marker] = process.argv.slice(2);
const { generateText, streamText, tool, stepCountIs, jsonSchema } = require("ai");

const object = (properties) =>
  jsonSchema({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });
const str = { type: "string" };
const tools = {
  read_file: tool({
    description: "Read a text file.",
    inputSchema: object({ path: str }),
    execute: async ({ path }) => readFileSync(resolve(cwd, path), "utf8"),
  }),
  run_shell: tool({
    description: "Run a shell command; fails when it exits non-zero.",
    inputSchema: object({ command: str }),
    execute: async ({ command }) => execSync(command, { cwd, encoding: "utf8", stdio: "pipe" }),
  }),
  edit_file: tool({
    description: "Replace text in a file.",
    inputSchema: object({ path: str, old: str, new: str }),
    execute: async ({ path, old, new: replacement }) => {
      const file = resolve(cwd, path);
      const text = readFileSync(file, "utf8");
      if (!text.includes(old)) throw new Error(`edit_file: ${JSON.stringify(old)} not found in ${path}`);
      writeFileSync(file, text.replace(old, replacement));
      return "edited";
    },
  }),
  explode: tool({
    description: "A tool with a bug: it always throws a TypeError.",
    inputSchema: object({}),
    execute: async () => {
      const config = JSON.parse("null");
      return config.value;
    },
  }),
};

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
