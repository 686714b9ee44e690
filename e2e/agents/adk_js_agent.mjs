// One conversation with Google's Agent Development Kit for TypeScript
// (`@google/adk`) through the gateway: an `LlmAgent` with the workspace's
// tools (`FunctionTool`s with zod schemas) on its `Gemini` model, run by an
// `InMemoryRunner`, its events read whole or streamed (`StreamingMode.SSE`).
//
//   node adk_js_agent.mjs MODE MARKER [session]
//   MODE: run | stream
// `session`: a second message in the same session after the first run, which
// ADK sends with the session's whole history: MARKER, then MARKER-cont.
//
// The Gemini API is reached at the gateway by `GOOGLE_GEMINI_BASE_URL`, which
// the Google Gen AI SDK under ADK reads; its key by `GOOGLE_GENAI_API_KEY`.
// Environment: E2E_NODE_MODULES (where ADK is installed), E2E_GATEWAY,
// E2E_KEY, E2E_WORKSPACE. Prints the final text; exits non-zero on any error.
import { require, apiKey } from "./driver_env.mjs";
import { TOOLS, zodShapeOf } from "./workspace_tools.mjs";

const [mode, marker, state = "none"] = process.argv.slice(2);
const { LlmAgent, FunctionTool, Gemini, InMemoryRunner, StreamingMode } = require("@google/adk");
const { z } = require("zod");

const tools = TOOLS.map(
  (t) =>
    new FunctionTool({
      name: t.name,
      description: t.description,
      parameters: z.object(zodShapeOf(z, t.args)),
      execute: async (args) => t.run(args),
    }),
);

const agent = new LlmAgent({
  name: "e2e",
  model: new Gemini({ model: "gemini-2.5-flash", apiKey }),
  instruction: "Run the checks.",
  tools,
});
const runner = new InMemoryRunner({ agent, appName: "e2e" });
const session = await runner.sessionService.createSession({ appName: "e2e", userId: "e2e" });
const streamingMode = { run: StreamingMode.NONE, stream: StreamingMode.SSE }[mode];
if (streamingMode === undefined) throw new Error(`unknown mode ${mode}`);

const messages = [`Run the checks. [[e2e:${marker}]]`];
if (state === "session") messages.push(`One more. [[e2e:${marker}-cont]]`);
else if (state !== "none") throw new Error(`unknown state ${state}`);

for (const text of messages) {
  let final = "";
  for await (const event of runner.runAsync({
    userId: "e2e",
    sessionId: session.id,
    newMessage: { role: "user", parts: [{ text }] },
    runConfig: { streamingMode },
  })) {
    if (event.errorCode) throw new Error(`ADK event error ${event.errorCode}: ${event.errorMessage}`);
    const parts = event.content?.parts ?? [];
    if (!event.partial && parts.some((p) => p.text) && !parts.some((p) => p.functionCall)) {
      final = parts.map((p) => p.text ?? "").join("");
    }
  }
  console.log(final);
}
