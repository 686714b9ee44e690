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
        crate::view::sniff(body)
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
