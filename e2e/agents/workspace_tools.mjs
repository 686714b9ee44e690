// The tools the Node.js drivers give their agents: plain functions on the
// workspace (E2E_WORKSPACE) that really fail, by throwing, or succeed, as
// `workspace_tools.py` is for the Python drivers. Each driver wraps them as
// its SDK expects; every argument is a string.
import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { cwd } from "./driver_env.mjs";

export const TOOLS = [
  {
    name: "read_file",
    description: "Read a text file.",
    args: ["path"],
    run: ({ path }) => readFileSync(resolve(cwd, path), "utf8"),
  },
  {
    name: "run_shell",
    description: "Run a shell command; fails when it exits non-zero.",
    args: ["command"],
    run: ({ command }) => execSync(command, { cwd, encoding: "utf8", stdio: "pipe" }),
  },
  {
    name: "edit_file",
    description: "Replace text in a file.",
    args: ["path", "old", "new"],
    run: ({ path, old, new: replacement }) => {
      const file = resolve(cwd, path);
      const text = readFileSync(file, "utf8");
      if (!text.includes(old)) throw new Error(`edit_file: ${JSON.stringify(old)} not found in ${path}`);
      writeFileSync(file, text.replace(old, replacement));
      return "edited";
    },
  },
  {
    name: "explode",
    description: "A tool with a bug: it always throws a TypeError.",
    args: [],
    run: () => {
      const config = JSON.parse("null");
      return config.value;
    },
  },
];

// A tool's arguments as a zod shape (`z` is the driver's own zod), each a
// string: for the SDKs that take their tools' schemas in zod.
export const zodShapeOf = (z, args) => Object.fromEntries(args.map((a) => [a, z.string()]));

// A tool's arguments as a JSON schema: each a required string, no others.
export const schemaOf = (args) => ({
  type: "object",
  properties: Object.fromEntries(args.map((a) => [a, { type: "string" }])),
  required: args,
  additionalProperties: false,
});
