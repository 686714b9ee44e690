// One conversation with an official TypeScript SDK's own tool loop through the
// gateway: real tools (files, shell) that fail or succeed, run until the model
// answers with text.
//
//   node sdk_js_agent.mjs API MODE MARKER [STATE]
//   API openai-chat, MODE run | stream: `openai`'s `chat.completions.runTools`
//     (its runner calls the tools and sends their results);
//   API openai-responses, MODE create | stream | ws: the loop the Responses
//     guide shows (`responses.create`, `responses.stream`, or `ResponsesWS`,
//     the SDK's WebSocket mode), the model's output items sent back as input;
//   API anthropic, MODE run | stream: `@anthropic-ai/sdk`'s
//     `beta.messages.toolRunner` (a thrown error becomes an `is_error` result);
//   API agents-chat | agents-responses, MODE run | stream: the OpenAI Agents
//     SDK for TypeScript (`@openai/agents`), its `Runner` on a Chat
//     Completions or a Responses model (a thrown error becomes the SDK's
//     own "An error occurred while running the tool" text). STATE (on the
//     Responses model) keeps the conversation on the API's side, each
//     request carrying only its new items: `conversation` (a conversation
//     made with `conversations.create`, passed as `conversationId`),
//     `session` (an `OpenAIConversationsSession`, over two runs: MARKER, then
//     MARKER-cont given the first's history), `previous` (two runs, the
//     second continuing the first's last response: `previousResponseId`).
// Environment: E2E_NODE_MODULES (where the SDKs are installed), E2E_GATEWAY
// (the gateway's URL), E2E_KEY, E2E_WORKSPACE (the tools' cwd).
// Prints the model's final text; exits non-zero on any error.
import { require, gateway, apiKey } from "./driver_env.mjs";
import { TOOLS, schemaOf } from "./workspace_tools.mjs";

const [api, mode, marker, state = "none"] = process.argv.slice(2);
const prompt = `Run the checks. [[e2e:${marker}]]`;
const MAX_TURNS = 12;

// The tools: name, description, JSON schema, and what they do (they throw on
// failure, as code does).
const tools = TOOLS.map((t) => [t.name, t.description, schemaOf(t.args), t.run]);

// Where the SDK leaves a tool's exception to the caller (`runTools`, the
// Responses loop), the caller answers with its message, as the guides do.
const answer = async (run, args) => {
  try {
    return String(await run(args));
  } catch (e) {
    return `Error: ${e instanceof Error ? e.message : String(e)}`;
  }
};

function openai() {
  const OpenAI = require("openai").default ?? require("openai");
  return new OpenAI({ baseURL: `${gateway}/v1`, apiKey, maxRetries: 0, timeout: 30_000 });
}

async function openaiChat() {
  const runner = openai().chat.completions.runTools(
    {
      model: "gpt-4o",
      messages: [{ role: "user", content: prompt }],
      stream: mode === "stream",
      tools: tools.map(([name, description, parameters, run]) => ({
        type: "function",
        function: { name, description, parameters, parse: JSON.parse, function: (args) => answer(run, args) },
      })),
    },
    { maxChatCompletions: MAX_TURNS },
  );
  if (mode === "stream") {
    for await (const _ of runner) {
      // drain the chunks
    }
  } else if (mode !== "run") {
    throw new Error(`unknown mode ${mode}`);
  }
  return await runner.finalContent();
}

const outputText = (response) =>
  response.output
    .filter((o) => o.type === "message")
    .flatMap((o) => o.content)
    .filter((c) => c.type === "output_text")
    .map((c) => c.text)
    .join("");

async function openaiResponses() {
  const client = openai();
  const byName = new Map(tools.map(([name, , , run]) => [name, run]));
  const defs = tools.map(([name, description, parameters]) => ({
    type: "function",
    name,
    description,
    parameters,
    strict: true,
  }));
  let socket;
  if (mode === "ws") {
    const { ResponsesWS } = require("openai/resources/responses/ws");
    socket = new ResponsesWS(client);
  }
  const respond = async (input) => {
    const body = { model: "gpt-4.1", input, tools: defs, store: false };
    switch (mode) {
      case "create":
        return await client.responses.create(body);
      case "stream":
        return await client.responses.stream(body).finalResponse();
      case "ws": {
        socket.send({ type: "response.create", ...body });
        for await (const event of socket.stream()) {
          if (event.type === "error") throw event.error;
          if (event.type === "close") throw new Error("the socket closed before the response completed");
          if (event.type !== "message") continue;
          const m = event.message;
          if (m.type === "response.completed") return m.response;
          if (m.type === "error" || m.type === "response.failed") throw new Error(JSON.stringify(m));
        }
        throw new Error("the socket's events ended before the response completed");
      }
      default:
        throw new Error(`unknown mode ${mode}`);
    }
  };
  const input = [{ role: "user", content: prompt }];
  try {
    for (let turn = 0; turn < MAX_TURNS; turn++) {
      const response = await respond(input);
      const calls = response.output.filter((o) => o.type === "function_call");
      // (`output_text` is the SDK's, added to what `create` and `stream`
      // return; a socket's event carries the API's object.)
      if (calls.length === 0) return response.output_text ?? outputText(response);
      input.push(...response.output);
      for (const call of calls) {
        const run = byName.get(call.name);
        const output = run
          ? await answer(run, JSON.parse(call.arguments))
          : `Error: no such tool ${JSON.stringify(call.name)}`;
        input.push({ type: "function_call_output", call_id: call.call_id, output });
      }
    }
    throw new Error(`no answer after ${MAX_TURNS} turns`);
  } finally {
    socket?.close({ code: 1000, reason: "done" });
  }
}

async function anthropic() {
  const Anthropic = require("@anthropic-ai/sdk").default ?? require("@anthropic-ai/sdk");
  const { betaTool } = require("@anthropic-ai/sdk/helpers/beta/json-schema");
  const client = new Anthropic({ baseURL: gateway, apiKey, maxRetries: 0, timeout: 30_000 });
  const runner = client.beta.messages.toolRunner({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    max_iterations: MAX_TURNS,
    stream: mode === "stream",
    messages: [{ role: "user", content: prompt }],
    tools: tools.map(([name, description, inputSchema, run]) =>
      betaTool({ name, description, inputSchema, run: async (args) => String(await run(args)) }),
    ),
  });
  let message;
  if (mode === "stream") {
    for await (const stream of runner) {
      await stream.finalMessage();
    }
    message = await runner.done();
  } else if (mode === "run") {
    message = await runner.runUntilDone();
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  return message.content
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}

async function agents() {
  const sdk = require("@openai/agents");
  const client = openai();
  const model =
    api === "agents-chat"
      ? new sdk.OpenAIChatCompletionsModel(client, "gpt-4o")
      : new sdk.OpenAIResponsesModel(client, "gpt-4.1");
  const agent = new sdk.Agent({
    name: "checker",
    instructions: "Run the checks with your tools.",
    model,
    tools: tools.map(([name, description, parameters, run]) =>
      sdk.tool({ name, description, parameters, strict: true, execute: async (args) => String(await run(args)) }),
    ),
  });
  // As the Python suite runs it: an unknown tool is the model's error to
  // recover from, not the run's end.
  const runner = new sdk.Runner({ toolNotFoundBehavior: "return_error_to_model", tracingDisabled: true });
  const once = async (text, options) => {
    if (mode === "run") {
      return await runner.run(agent, text, { maxTurns: MAX_TURNS, ...options });
    }
    if (mode !== "stream") throw new Error(`unknown mode ${mode}`);
    const result = await runner.run(agent, text, { maxTurns: MAX_TURNS, stream: true, ...options });
    for await (const _ of result) {
      // drain the events
    }
    await result.completed;
    if (result.error) throw result.error;
    return result;
  };
  const more = `One more. [[e2e:${marker}-cont]]`;
  if (state === "none") return (await once(prompt, {})).finalOutput;
  if (state === "conversation") {
    const conversation = await client.conversations.create({ items: [] });
    return (await once(prompt, { conversationId: conversation.id })).finalOutput;
  }
  if (state === "session") {
    const session = new sdk.OpenAIConversationsSession({ client });
    const first = await once(prompt, { session });
    return `${first.finalOutput}\n${(await once(more, { session })).finalOutput}`;
  }
  if (state === "previous") {
    const first = await once(prompt, {});
    const previousResponseId = first.lastResponseId;
    if (!previousResponseId) throw new Error("the first run has no lastResponseId");
    return `${first.finalOutput}\n${(await once(more, { previousResponseId })).finalOutput}`;
  }
  throw new Error(`unknown state ${state}`);
}

const runs = {
  "openai-chat": openaiChat,
  "openai-responses": openaiResponses,
  anthropic,
  "agents-chat": agents,
  "agents-responses": agents,
};
if (!runs[api]) throw new Error(`unknown API ${api}`);
console.log(await runs[api]());
