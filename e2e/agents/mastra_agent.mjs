// One conversation with a Mastra agent (`@mastra/core`) through the gateway:
// real tools (files, shell) that fail or succeed, run to the final answer.
//
//   node mastra_agent.mjs PROVIDER MODE MARKER [history]
//   PROVIDER: anthropic | openai-chat | openai-responses | google (the AI
//             SDK's providers, as Mastra takes them, at the gateway)
//   MODE: generate (`agent.generate`) | stream (`agent.stream`, its text
//         drained)
// `history`: a second run given the first's messages and a new one: MARKER,
// then MARKER-cont.
//
// Mastra runs each call and answers it with the API's result message: a
// tool's exception as its message, arguments its schema refuses as
// `{"error": true, "message": "Tool input validation failed for …"}`, an
// unknown tool `Tool "x" not found. Available tools: …`; none flagged.
// Environment: E2E_NODE_MODULES (where Mastra and the providers are
// installed), E2E_GATEWAY, E2E_KEY, E2E_WORKSPACE. Prints the final text;
// exits non-zero on any error.
import { require, aiSdkModel } from "./driver_env.mjs";
import { TOOLS, zodShapeOf } from "./workspace_tools.mjs";

const [provider, mode, marker, state = "none"] = process.argv.slice(2);
const { Agent } = require("@mastra/core/agent");
const { createTool } = require("@mastra/core/tools");
const { z } = require("zod");

const tools = Object.fromEntries(
  TOOLS.map((t) => [
    t.name,
    createTool({
      id: t.name,
      description: t.description,
      inputSchema: z.object(zodShapeOf(z, t.args)),
      execute: async (args) => t.run(args),
    }),
  ]),
);

const agent = new Agent({ id: "checker", name: "checker", instructions: "Run the checks.", model: aiSdkModel(provider), tools });

// The run's answer and its messages (the prompt's included), for a run
// that continues it.
async function ask(messages) {
  const options = { maxSteps: 20, modelSettings: { maxRetries: 0 } };
  if (mode === "generate") {
    const result = await agent.generate(messages, options);
    return { text: result.text, messages: result.response.messages };
  }
  if (mode === "stream") {
    const result = await agent.stream(messages, options);
    for await (const _ of result.textStream) {
      // drain
    }
    return { text: await result.text, messages: (await result.response).messages };
  }
  throw new Error(`unknown mode ${mode}`);
}

const first = [{ role: "user", content: `Run the checks. [[e2e:${marker}]]` }];
const done = await ask(first);
console.log(done.text);
if (state === "history") {
  const more = await ask([...first, ...done.messages, { role: "user", content: `One more. [[e2e:${marker}-cont]]` }]);
  console.log(more.text);
} else if (state !== "none") {
  throw new Error(`unknown state ${state}`);
}
