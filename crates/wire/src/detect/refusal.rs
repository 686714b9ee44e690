//! The `harness_refusal` rule: the agent harness refused or cancelled the
//! call, so the tool never ran (or was stopped). One general pattern per
//! kind of refusal, matched on the first line, each written from the
//! clients' sources (Gemini CLI `scheduler/policy.ts`, `shell.ts`,
//! `tool-executor.ts`; Codex CLI `safety.rs`, exec policy; Claude Code's
//! recorded results):
//!
//! | kind | e.g. |
//! |---|---|
//! | refused by a policy, a sandbox, a hook or approval settings | `Tool execution denied by policy.`, `patch rejected: writing outside of the project; rejected by user approval settings` |
//! | approval required where none can be given | `MCP tool call requires approval, but approval policy is never`, `approval policy is Never; reject command — you cannot ask for escalated permissions …`, `Tool execution for "Shell" requires user confirmation, which is not supported in non-interactive mode.` |
//! | auto-denied | `auto-denied in non-interactive mode` |
//! | blocked by the sandbox | `writing is blocked by read-only sandbox`, `sandbox denied: …` |
//! | path outside the workspace | `Path not in workspace: …`, `File path must be within one of the workspace directories: …` |
//! | cancelled by the user or a timeout | `[Operation Cancelled] Reason: User denied execution.`, `Command was automatically cancelled because it exceeded the timeout of 5.0 minutes` |
//! | an edit's text not in the file | `No match found: old_str not found in /a/b.txt; no changes made; …` (the GitHub Copilot CLI) |
//! | an edit that cannot be made as asked | `Found 2 occurrences of the text in /a/b.txt. The text must be unique. …` (pi), `Found 2 matches of the string to replace, but replace_all is false.` (Claude Code), `No changes made to /a/b.txt. The replacement produced identical content.` (pi), `oldString and newString must be different` (OpenCode), `oldText must not be empty in /a/b.txt.`, `edits[0] and edits[1] overlap in /a/b.txt. …` (pi) |
//! | file changed since it was read | `File has been modified since read, either by the user or by a linter.`, `File has not been read yet. Read it first before writing to it.`, `File /a/b.txt has not been read in this session. Use the read_file tool first …` (Qwen Code), `You must use the Read tool to read /a/b.txt before editing it.` (the Continue CLI) |
//! | a tool the harness has turned off | `Tool "list_directory" is a built-in tool that is disabled by default because glob covers directory listing in most cases.` (Qwen Code) |
//! | a background session the harness does not have | `No session found for x` (OpenClaw's `process`) |
//! | a tool the harness does not have | `Model tried to call unavailable tool 'x'. Available tools: a, b.` (Vercel AI SDK), `Tool 'x' is not available.` (this project's runtime), `Unknown tool: x`, ``The tool call with name `x` is not part of the provided tools, …`` (Semantic Kernel) |

/// The rule's patterns that open the first line (ASCII case-insensitive,
/// anchored; part of the first-line [`regex::bytes::RegexSet`]).
pub(super) const START: &str = concat!(
    r"^(?:",
    // [Operation Cancelled] Reason: …
    r"\[(?:operation|request|tool\s+call|execution)\s+(?:cancell?ed|aborted|denied|rejected|blocked)\]",
    // patch rejected: … / command blocked: … / request denied: …
    r"|(?:[\w-]+\s+){0,2}(?:rejected|denied|blocked|refused|disallowed)\s*:\s",
    // approval required by policy …
    r"|(?:user\s+)?(?:approval|confirmation)\s+(?:is\s+)?required\b",
    // Path not in workspace: …
    r"|(?:[\w-]+\s+)?path\s+(?:is\s+)?not\s+(?:with)?in\s+(?:the\s+)?(?:workspace|project)",
    // Command was cancelled by user … / was automatically cancelled because it exceeded the timeout
    r"|(?:the\s+)?(?:[\w-]+\s+)?(?:command|operation|request|tool(?:\s+call)?|call|execution|process|task|job)\s+",
    r"(?:was\s+|has\s+been\s+)?(?:automatically\s+)?(?:cancell?ed|aborted|interrupted|killed|terminated)\b",
    // Tool "list_directory" is a built-in tool that is disabled by default
    // (Qwen Code) / Tool 'x' is disabled: a quoted name
    r"|tool\s+(?:\x22[^\x22\n]*\x22|'[^'\n]*'|`[^`\n]*`)\s+(?:is|has\s+been)\s+(?:[\w-]+\s+){0,5}disabled\b",
    // File has been modified since read / File has not been read yet /
    // File /a/b.txt has not been read in this session (Qwen Code)
    r"|(?:the\s+)?file(?:\s+\S+)?\s+has\s+(?:been\s+(?:modified|changed|updated)\s+since\s+(?:it\s+was\s+)?(?:last\s+)?read",
    r"|(?:unexpectedly\s+)?(?:been\s+)?(?:modified|changed)\s+since",
    r"|not\s+been\s+read\s+(?:yet|in\s+this\s+(?:session|conversation)))",
    // No match found: old_str not found in /a/b; no changes made (the
    // GitHub Copilot CLI's `edit`: a negation's opening, which
    // failure_statement leaves alone)
    r"|no\s+match\s+found:\s+(?:old_str|old_string|old_text)\s+(?:was\s+)?not\s+found\b",
    // An edit refused before it was made: its text found more than once
    // (pi's `Found 2 occurrences of the text in /a/b.txt. The text must be
    // unique.`, Claude Code's `Found 2 matches of the string to replace,
    // but replace_all is false.`, OpenCode's `Found multiple matches for
    // oldString. Provide more surrounding lines …`), a change that changes
    // nothing (pi's `No changes made to /a/b.txt. The replacement produced
    // identical content.`, Claude Code's `No changes to make: old_string
    // and new_string are exactly the same.`, OpenCode's `oldString and
    // newString must be different`), an empty text to replace, edits that
    // overlap (pi's `edits[0] and edits[1] overlap in /a/b.txt`)
    r"|found\s+(?:\d+|multiple|several)\s+(?:occurrences|matches|instances)\b[^\n]{0,300}?",
    r"(?:must\s+be\s+unique|replace_all\s+is\s+false|provide\s+more\s+(?:surrounding\s+)?(?:context|lines))",
    // (not a write of what the file holds: OpenClaw's `No changes made to
    // /a/b.txt. The file already has identical content.`, a success)
    r"|no\s+changes\s+(?:made|to\s+make)\b[^\n]{0,300}?",
    r"(?:(?:replacements?|edits?)\s+produced\s+identical\s+content|are\s+(?:exactly\s+)?the\s+same)",
    r"|(?:edits\[\d+\]\.)?(?:old_?str(?:ing)?|old_?text|search)\s+and\s+(?:new_?str(?:ing)?|new_?text|replace)\s+",
    r"(?:must\s+(?:be\s+different|differ)|are\s+(?:exactly\s+)?(?:the\s+same|identical))",
    r"|(?:edits\[\d+\]\.)?(?:old_?str(?:ing)?|old_?text)\s+(?:must\s+not|cannot|can't|may\s+not)\s+be\s+empty\b",
    r"|edits\[\d+\]\s+and\s+edits\[\d+\]\s+overlap\b",
    // A background session, process or job the harness does not have
    // (OpenClaw's `process`: `No session found for x`)
    r"|no\s+(?:(?:running|active|finished|background)\s+)?(?:session|process|job|shell)\s+(?:found\s+)?",
    r"(?:for|with\s+(?:id|name))\s+\S",
    // You must use the Read tool to read /a/b.txt before editing it
    // (the Continue CLI)
    r"|you\s+must\s+(?:first\s+)?(?:use\s+the\s+[\w-]+\s+tool\s+to\s+)?read\s+\S[^\n]{0,300}?\s+before\s+",
    r"(?:editing|writing|modifying|changing|updating)\b",
    r")",
);

/// The rule's patterns found anywhere in the first line (unanchored, so
/// the regex engine's literal prefilter skips lines without the words).
pub(super) const INLINE: &str = concat!(
    // … requires approval, but approval policy is never / … requires user
    // confirmation, which is not supported in non-interactive mode / the
    // following parts require approval: … / Tool requires confirmation
    r"\b(?:requires?|required|needs?)\s+(?:\w+\s+){0,2}(?:approval|confirmation)",
    r"(?:\s*[:,;]|\s+(?:but|which|in\s+non-interactive|and\s+(?:was|has\s+been))\b|\s*\.?\s*$)",
    // auto-denied / automatically rejected
    r"|\b(?:auto-?(?:denied|rejected)|automatically\s+(?:denied|rejected))\b",
    // denied by policy / rejected by user approval settings / blocked by the sandbox
    r"|\b(?:denied|rejected|blocked|refused|disallowed|not\s+allowed|prevented)\s+by\s+(?:the\s+|your\s+)?",
    r"(?:[\w-]+\s+){0,2}(?:policy|policies|sandbox|hook|approval\s+settings|permission\s+settings|administrator|admin)\b",
    // writing is blocked by read-only sandbox / sandbox denied / failed in sandbox
    r"|\b(?:sandbox\s+(?:denied|blocked|violation|error)|(?:failed|denied|blocked)\s+in\s+(?:the\s+)?sandbox)\b",
    // must be within one of the workspace directories
    r"|\b(?:must\s+be|is\s+not|isn't|not)\s+(?:with)?in\s+(?:one\s+of\s+)?(?:the\s+)?(?:allowed\s+)?",
    r"(?:workspace|project\s+(?:root|director)|working\s+director|allowed\s+director)",
    // resolves outside the allowed workspace / writing outside of the project
    r"|\b(?:writing|resolves|points|is|lies)\s+outside\s+(?:of\s+)?(?:the\s+)?(?:allowed\s+)?",
    r"(?:workspace|project|working\s+director|sandbox|root\s+director)",
    // approval policy is Never; reject command — you cannot ask for escalated permissions
    r"|;\s*reject(?:ed)?\s+(?:the\s+)?(?:command|call|request|patch|tool\s+call)\b",
    // cd to '/x' was blocked.
    r"|\s(?:was|has\s+been)\s+(?:blocked|denied|rejected)\s*[.:]",
    // a call of a tool the harness does not have, said mid-line (the
    // openings `Unknown tool: x`, `Tool x not found` are failure_statement's):
    // Model tried to call unavailable tool 'x'.
    r"|\b(?:unavailable|non-?existent|unregistered)\s+tool\b",
    r"|\btried\s+to\s+call\s+(?:an?\s+)?(?:unknown|invalid)\s+tool\b",
    // The tool call with name `x` is not part of the provided tools
    // (Semantic Kernel)
    r"|\bis\s+not\s+(?:part\s+of|among|one\s+of)\s+(?:the\s+)?(?:provided|available|registered|supplied|given|allowed)\s+tools\b",
);

/// Words one of which every [`INLINE`] phrase holds, lower case as they
/// appear mid-sentence: searched in one SIMD pass (Aho-Corasick, Teddy),
/// so that lines without any of them (nearly all) cost next to nothing.
pub(super) const INLINE_GATE: &[&str] = &[
    "approv",
    "confirm",
    "denied",
    "reject",
    "block",
    "sandbox",
    "workspace",
    "outside",
    "refused",
    "disallow",
    "not allowed",
    "prevented",
    " tool",
];
