// What every Node.js driver here reads from its environment, and the AI
// SDK's providers at the gateway (the AI SDK's own driver and Mastra's).
//
// Environment: E2E_NODE_MODULES (where the driver's packages are
// installed), E2E_GATEWAY (the gateway's URL), E2E_KEY, E2E_WORKSPACE (the
// tools' cwd).
import { createRequire } from "node:module";
import { resolve } from "node:path";

const need = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};

export const require = createRequire(resolve(need("E2E_NODE_MODULES"), "package.json"));
export const gateway = need("E2E_GATEWAY");
export const apiKey = need("E2E_KEY");
export const cwd = need("E2E_WORKSPACE");

// The AI SDK's model for PROVIDER (anthropic | openai-chat |
// openai-responses | google) at the gateway.
export function aiSdkModel(provider) {
  switch (provider) {
    case "anthropic":
      return require("@ai-sdk/anthropic").createAnthropic({ baseURL: `${gateway}/v1`, apiKey })("claude-sonnet-4-5");
    case "openai-chat":
      return require("@ai-sdk/openai").createOpenAI({ baseURL: `${gateway}/v1`, apiKey }).chat("gpt-4o");
    case "openai-responses":
      return require("@ai-sdk/openai").createOpenAI({ baseURL: `${gateway}/v1`, apiKey }).responses("gpt-4.1");
    case "google":
      return require("@ai-sdk/google")
        .createGoogleGenerativeAI({ baseURL: `${gateway}/v1beta`, apiKey })("gemini-2.5-flash");
    default:
      throw new Error(`unknown provider ${provider}`);
  }
}
