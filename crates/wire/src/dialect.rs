//! The five provider dialects.

use std::{fmt, str::FromStr};

/// A provider API whose tool calls and results this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    OpenAiChat,
    /// OpenAI Responses (`/v1/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// Google Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
    /// AWS Bedrock Converse (`/model/{modelId}/converse`, `/converse-stream`).
    BedrockConverse,
}

impl Dialect {
    /// All dialects, in a stable order.
    pub const ALL: [Dialect; 5] = [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::BedrockConverse,
    ];

    /// The name used on the command line, in metrics and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "openai-chat",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::BedrockConverse => "bedrock-converse",
        }
    }

    /// The provider that serves this dialect: `openai`, `anthropic`,
    /// `gemini` or `bedrock`.
    pub fn provider(self) -> &'static str {
        match self {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::BedrockConverse => "bedrock",
        }
    }

    /// Guess the dialect of a request body from its top-level keys:
    /// `contents` → Gemini, `input` → Responses, `toolConfig` /
    /// `inferenceConfig` or `toolUse`/`toolResult` blocks → Bedrock Converse, `messages` with a top-level
    /// `system`/`max_tokens` or `tool_use`/`tool_result` blocks → Anthropic,
    /// `messages` otherwise → Chat.
    pub fn sniff(body: &[u8]) -> Option<Dialect> {
        sniff(body)
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai-chat" | "chat" | "openai" => Ok(Dialect::OpenAiChat),
            "openai-responses" | "responses" => Ok(Dialect::OpenAiResponses),
            "anthropic" | "messages" => Ok(Dialect::Anthropic),
            "gemini" | "google" => Ok(Dialect::Gemini),
            "bedrock-converse" | "converse" | "bedrock" => Ok(Dialect::BedrockConverse),
            other => Err(format!(
                "unknown dialect '{other}' (expected openai-chat, openai-responses, anthropic, gemini or bedrock-converse)"
            )),
        }
    }
}

/// See [`Dialect::sniff`].
fn sniff(body: &[u8]) -> Option<Dialect> {
    #[derive(serde::Deserialize)]
    struct Top<'a> {
        #[serde(borrow, default)]
        contents: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        input: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        messages: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        system: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        anthropic_version: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default, rename = "toolConfig")]
        tool_config: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default, rename = "inferenceConfig")]
        inference_config: Option<&'a serde_json::value::RawValue>,
    }
    let top: Top<'_> = serde_json::from_slice(body).ok()?;
    if top.contents.is_some() {
        return Some(Dialect::Gemini);
    }
    if top.input.is_some() && top.messages.is_none() {
        return Some(Dialect::OpenAiResponses);
    }
    let messages = top.messages?.get();
    let converse_blocks = ["\"toolUse\"", "\"toolResult\""]
        .iter()
        .any(|needle| memchr::memmem::find(messages.as_bytes(), needle.as_bytes()).is_some());
    if converse_blocks || top.tool_config.is_some() || top.inference_config.is_some() {
        return Some(Dialect::BedrockConverse);
    }
    let anthropic_blocks = ["\"tool_use\"", "\"tool_result\"", "\"thinking\""]
        .iter()
        .any(|needle| memchr::memmem::find(messages.as_bytes(), needle.as_bytes()).is_some());
    let chat_markers = [
        "\"tool_calls\"",
        "\"tool_call_id\"",
        "\"role\":\"system\"",
        "\"role\": \"system\"",
    ]
    .iter()
    .any(|needle| memchr::memmem::find(messages.as_bytes(), needle.as_bytes()).is_some());
    if anthropic_blocks
        || top.anthropic_version.is_some()
        || (top.system.is_some() && !chat_markers)
    {
        Some(Dialect::Anthropic)
    } else {
        Some(Dialect::OpenAiChat)
    }
}
