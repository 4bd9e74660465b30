//! An OpenCode session as the Chat Completions request OpenCode sends an OpenAI-compatible
//! provider (Kimi, DeepSeek, Qwen, GLM, OpenCode Zen, OpenRouter, a local server, ...).
//!
//! OpenCode turns its stored messages into the AI SDK's model messages (one assistant message per
//! step, the step's tool results as a `tool` message: [`to_model_messages_with`]), and the
//! AI SDK's OpenAI-compatible provider writes them as Chat messages: a user message's text parts
//! as its `content`, an assistant step's text as `content` and its calls as `tool_calls`
//! (`{id, type: "function", function: {name, arguments}}`), each tool result as a `tool` message
//! answering its call. Reasoning goes where the model's `interleaved` capability says: for the
//! models that replay it (Kimi, DeepSeek, GLM, Qwen: `reasoning_content`) OpenCode concatenates
//! a step's reasoning parts into that field and leaves it out where the step had none; for
//! DeepSeek it gives every assistant message the field, empty when the step had no reasoning
//! (peers.md §3.1, OpenCode's `transform.ts` `normalizeMessages`; anomalyco/opencode PR
//! #24180). Other models get no reasoning at all.

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::opencode::convert::{
    ModelContent, ModelOptions, ModelRole, PartRef, ToolOutput, to_model_messages_with,
};
use crate::opencode::session::Session;

/// How OpenCode writes reasoning for the target model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interleaved {
    /// Reasoning is not sent.
    #[default]
    None,
    /// A step's reasoning goes into `reasoning_content`, absent where the step had none.
    ReasoningContent,
    /// As `ReasoningContent`, and a step without reasoning gets `reasoning_content: ""`
    /// (OpenCode's DeepSeek handling).
    ReasoningContentAlways,
}

impl Interleaved {
    /// What OpenCode does for `model` (a model id, with or without a vendor prefix).
    pub fn for_model(model: &str) -> Interleaved {
        let m = model.to_ascii_lowercase();
        let bare = m.rsplit('/').next().unwrap_or(&m);
        if bare.starts_with("deepseek") {
            Interleaved::ReasoningContentAlways
        } else if ["kimi", "moonshot", "glm", "qwen", "qwq", "minimax"]
            .iter()
            .any(|p| bare.starts_with(p))
        {
            Interleaved::ReasoningContent
        } else {
            Interleaved::None
        }
    }
}

/// The converted request and where each message and tool call came from.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// The request body.
    pub body: String,
    /// For each message of `messages`, the OpenCode message it came from (`None` for the
    /// appended next prompt).
    pub message_ids: Vec<Option<String>>,
    /// For each message, the OpenCode part of each tool call (assistant) or of the result
    /// (tool message), in order.
    pub parts: Vec<Vec<PartRef>>,
}

/// The text of the user message appended when the session ends with the assistant's reply: the
/// request the session's next prompt produces.
pub const NEXT_PROMPT: &str = "(next prompt)";

/// Converts `session` to the Chat request OpenCode sends `model` next (`model` is the
/// `modelID`; `interleaved` says how reasoning goes). A user message `(next prompt)` is appended
/// when the session ends with an assistant message.
pub fn to_chat_request(session: &Session, model: &str, interleaved: Interleaved) -> ChatRequest {
    let (mms, _notes) = to_model_messages_with(
        session,
        &ModelOptions {
            target_model: Some(model.to_owned()),
        },
    );
    let mut messages: Vec<Value> = Vec::new();
    let mut message_ids = Vec::new();
    let mut parts: Vec<Vec<PartRef>> = Vec::new();
    for mm in &mms {
        match mm.role {
            ModelRole::User => {
                let mut content: Vec<Value> = Vec::new();
                for p in &mm.content {
                    match &p.content {
                        ModelContent::Text { text, .. } => {
                            content.push(json!({"type": "text", "text": text}));
                        }
                        ModelContent::File {
                            url, media_type, ..
                        } if media_type.starts_with("image/") => {
                            content.push(json!({"type": "image_url", "image_url": {"url": url}}));
                        }
                        _ => {}
                    }
                }
                let content = match content.as_slice() {
                    [one] if one["type"] == "text" => one["text"].clone(),
                    _ => Value::Array(content),
                };
                messages.push(json!({"role": "user", "content": content}));
                message_ids.push(Some(mm.message_id.to_owned()));
                parts.push(Vec::new());
            }
            ModelRole::Assistant => {
                let mut text = String::new();
                let mut reasoning: Option<String> = None;
                let mut calls: Vec<Value> = Vec::new();
                let mut origins = Vec::new();
                for p in &mm.content {
                    match &p.content {
                        ModelContent::Text { text: t, .. } => text.push_str(t),
                        ModelContent::Reasoning { text: r, .. } => {
                            reasoning.get_or_insert_with(String::new).push_str(r);
                        }
                        ModelContent::ToolCall {
                            call_id,
                            tool_name,
                            input,
                            ..
                        } => {
                            calls.push(json!({
                                "id": call_id,
                                "type": "function",
                                "function": {"name": tool_name, "arguments": input},
                            }));
                            origins.push(p.origin.clone());
                        }
                        _ => {}
                    }
                }
                let mut m = serde_json::Map::new();
                m.insert("role".into(), json!("assistant"));
                m.insert("content".into(), json!(text));
                match (interleaved, reasoning) {
                    (Interleaved::None, _) => {}
                    (_, Some(r)) => {
                        m.insert("reasoning_content".into(), json!(r));
                    }
                    (Interleaved::ReasoningContentAlways, None) => {
                        m.insert("reasoning_content".into(), json!(""));
                    }
                    (Interleaved::ReasoningContent, None) => {}
                }
                if !calls.is_empty() {
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(m));
                message_ids.push(Some(mm.message_id.to_owned()));
                parts.push(origins);
            }
            ModelRole::Tool => {
                for p in &mm.content {
                    if let ModelContent::ToolResult {
                        call_id, output, ..
                    } = &p.content
                    {
                        let text = match output {
                            ToolOutput::Text(t) | ToolOutput::ErrorText(t) => Cow::Borrowed(*t),
                            ToolOutput::Stored(t) => t.text(),
                        };
                        messages.push(json!({
                            "role": "tool",
                            "tool_call_id": call_id,
                            "content": text,
                        }));
                        message_ids.push(Some(mm.message_id.to_owned()));
                        parts.push(vec![p.origin.clone()]);
                    }
                }
            }
        }
    }
    if messages.last().is_some_and(|m| m["role"] != "user") {
        messages.push(json!({"role": "user", "content": NEXT_PROMPT}));
        message_ids.push(None);
        parts.push(Vec::new());
    }
    let body = json!({"model": model, "messages": messages}).to_string();
    ChatRequest {
        body,
        message_ids,
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_reasoning_follows_the_model() {
        for (m, want) in [
            ("deepseek-v4-flash", Interleaved::ReasoningContentAlways),
            (
                "deepseek-ai/deepseek-v4-flash",
                Interleaved::ReasoningContentAlways,
            ),
            ("moonshotai/kimi-k2.6", Interleaved::ReasoningContent),
            ("glm-4.6", Interleaved::ReasoningContent),
            ("gpt-5", Interleaved::None),
            ("claude-sonnet-4-5", Interleaved::None),
        ] {
            assert_eq!(Interleaved::for_model(m), want, "{m}");
        }
    }
}
