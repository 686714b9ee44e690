//! The request that continues a conversation after one step, in each
//! dialect: the user's first message, the model's turn as the response
//! gave it, then the step's messages (what both step suites validate).

use serde_json::{Value, json};
use toolwarden_wire::Dialect;

pub fn next_request(dialect: Dialect, resp: &Value, messages: &[Value]) -> Value {
    let mut turns = Vec::new();
    match dialect {
        Dialect::OpenAiChat => {
            turns.push(json!({"role": "user", "content": "go"}));
            turns.push(resp["choices"][0]["message"].clone());
            turns.extend(messages.iter().cloned());
            json!({"model": "gpt-4o", "messages": turns})
        }
        Dialect::OpenAiResponses => {
            turns.push(json!({"role": "user", "content": "go"}));
            turns.extend(resp["output"].as_array().unwrap().iter().cloned());
            turns.extend(messages.iter().cloned());
            json!({"model": "gpt-4.1", "input": turns})
        }
        Dialect::Anthropic => {
            turns.push(json!({"role": "user", "content": "go"}));
            turns.push(json!({"role": "assistant", "content": resp["content"].clone()}));
            turns.extend(messages.iter().cloned());
            json!({"model": "claude-sonnet-4", "max_tokens": 100, "messages": turns})
        }
        Dialect::Gemini => {
            turns.push(json!({"role": "user", "parts": [{"text": "go"}]}));
            turns.push(resp["candidates"][0]["content"].clone());
            turns.extend(messages.iter().cloned());
            json!({"contents": turns})
        }
        Dialect::BedrockConverse => {
            turns.push(json!({"role": "user", "content": [{"text": "go"}]}));
            turns.push(resp["output"]["message"].clone());
            turns.extend(messages.iter().cloned());
            json!({"messages": turns})
        }
    }
}
