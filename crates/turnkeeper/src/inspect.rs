//! [`inspect`]: what a body is, and a summary of its messages.

use std::collections::BTreeMap;

use turnkeeper_model::wire::chat::{self, ChatContent, ChatRole};
use turnkeeper_model::{BodyKind, Content, Format, FormatHint, Sniffed, Transcript};
use turnkeeper_prevent::wire::{Provider, provider_of};

use crate::Error;

/// What [`inspect`] tells of a body: its format and why, its kind, model and thinking mode, and
/// one line per message. The fields are those of `turnkeeper inspect --json`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Inspection {
    /// The format it was read as.
    pub format: Format,
    /// Why that format: the sign [`sniff`](crate::sniff) went by, or `"given explicitly"` when
    /// the caller named it.
    pub why: String,
    /// A request or a response.
    pub body: BodyKind,
    /// The body's `model`, when it names one.
    pub model: Option<String>,
    /// The body's thinking mode (`thinking.type`), when it sets one.
    pub thinking: Option<String>,
    /// One summary per message, in order.
    pub messages: Vec<MessageSummary>,
    /// For a block transcript: how many blocks of each wire type (empty for the OpenAI-style
    /// families, whose messages have no blocks).
    pub blocks: BTreeMap<String, usize>,
    /// For an OpenAI-style body: where its model goes and how many tools it declares.
    pub wire: Option<WireTarget>,
}

/// One message of an [`Inspection`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MessageSummary {
    /// The role as written (`"?"` when the message has none).
    pub role: String,
    /// What it holds, one entry a piece, for people to read: each block's wire type; a string
    /// content's first 40 characters and size; `(no content)`; for a Chat message its fields
    /// (`content 12 bytes`, `reasoning_content (40 bytes)`, `2 tool call(s)`, `answers call_1`).
    /// Empty for an empty content array.
    pub parts: Vec<String>,
}

/// Where an OpenAI-style body goes, as its model id tells.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WireTarget {
    /// The vendor of the model ([`Provider::Unknown`] without a model).
    pub provider: Provider,
    /// The router prefix of the model id (`openrouter` in `openrouter/...`), when it has one.
    pub routed: Option<String>,
    /// How many tools the body declares.
    pub tools: usize,
}

/// Reads `body` as `hint` says (sniffed with [`FormatHint::Auto`]) and summarises it.
///
/// Block transcripts (Anthropic, Gemini, OpenCode) and OpenAI Chat bodies are summarised; the
/// other OpenAI-style families (Responses, Converse) are recognised but refused with
/// [`Error::NotInspected`] for now.
///
/// ```
/// use turnkeeper::{Format, FormatHint, inspect};
///
/// let body = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"},
///   {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"c2lnbmF0dXJl"},
///   {"type":"text","text":"hello"}]}]}"#;
/// let i = inspect(body, FormatHint::Auto)?;
/// assert_eq!(i.format, Format::Anthropic);
/// assert_eq!(i.model.as_deref(), Some("claude-sonnet-4-5"));
/// assert_eq!(i.messages[1].parts, ["thinking", "text"]);
/// assert_eq!(i.blocks["thinking"], 1);
/// # Ok::<(), turnkeeper::Error>(())
/// ```
///
/// # Errors
/// When the format cannot be told, the body cannot be read as it, or it is of a family not
/// summarised yet.
pub fn inspect(body: &str, hint: FormatHint) -> Result<Inspection, Error> {
    let why = match hint {
        FormatHint::Exactly(f) => Sniffed {
            format: f,
            why: "given explicitly".into(),
        },
        FormatHint::Auto => turnkeeper_model::sniff_detail(body)?,
    };
    if !why.format.is_transcript() {
        return inspect_wire(body, why);
    }
    let t = turnkeeper_model::read(body, FormatHint::Exactly(why.format))?;
    Ok(Inspection {
        format: t.format,
        why: why.why.into_owned(),
        body: t.body,
        model: t.model().map(|m| m.into_owned()),
        thinking: t.thinking_type().map(|m| m.into_owned()),
        messages: (0..t.messages.len()).map(|i| summary_of(&t, i)).collect(),
        blocks: t.block_counts(),
        wire: None,
    })
}

/// The summary of message `i` of a block transcript.
fn summary_of(t: &Transcript<'_>, i: usize) -> MessageSummary {
    let m = &t.messages[i];
    let role = m
        .role_raw
        .map(|r| r.decode(t.src).into_owned())
        .unwrap_or_else(|| "?".to_owned());
    let parts = match m.content {
        Content::String(s) => vec![format!(
            "\"{}\" (string, {} bytes)",
            clip(&s.decode(t.src), 40),
            s.span.len()
        )],
        Content::Blocks { .. } => t
            .blocks_of(i)
            .iter()
            .map(|b| b.type_name(t.src).into_owned())
            .collect(),
        Content::Missing => vec!["(no content)".to_owned()],
    };
    MessageSummary { role, parts }
}

/// An OpenAI-style body: Chat is summarised, the other families refused.
fn inspect_wire(text: &str, why: Sniffed) -> Result<Inspection, Error> {
    if why.format != Format::Chat {
        return Err(Error::NotInspected {
            format: why.format,
            why: why.why.into_owned(),
        });
    }
    let body = chat::read(text)?;
    let model = body.model().map(|m| m.into_owned());
    let (provider, routed) = model
        .as_deref()
        .map(provider_of)
        .unwrap_or((Provider::Unknown, None));
    let messages = body
        .messages
        .iter()
        .map(|m| {
            let mut parts = Vec::new();
            match m.content {
                ChatContent::Absent => parts.push("no content".to_owned()),
                ChatContent::Null => parts.push("content null".to_owned()),
                ChatContent::Text { text, blank } => parts.push(format!(
                    "content {} bytes{}",
                    text.span.len(),
                    if blank { " (blank)" } else { "" }
                )),
                ChatContent::Parts { count, .. } => parts.push(format!("{count} part(s)")),
                ChatContent::Other(_) => parts.push("content of another type".to_owned()),
            }
            for (key, v) in [
                ("reasoning_content", m.reasoning_content),
                ("reasoning", m.reasoning),
                ("reasoning_details", m.reasoning_details),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{key} ({} bytes)", v.span.len()));
                }
            }
            if !m.calls.is_empty() {
                parts.push(format!("{} tool call(s)", m.calls.len()));
            }
            if let Some(id) = m.tool_call_id {
                parts.push(format!("answers {}", id.decode(text)));
            }
            MessageSummary {
                role: chat_role(m.role).to_owned(),
                parts,
            }
        })
        .collect();
    Ok(Inspection {
        format: why.format,
        why: why.why.into_owned(),
        body: BodyKind::Request,
        model,
        thinking: body.thinking_type.map(|t| t.decode(text).into_owned()),
        messages,
        blocks: BTreeMap::new(),
        wire: Some(WireTarget {
            provider,
            routed,
            tools: body.tool_count,
        }),
    })
}

/// A Chat role as the JSON output names it (serde's lowercase names).
fn chat_role(r: ChatRole) -> &'static str {
    match r {
        ChatRole::System => "system",
        ChatRole::Developer => "developer",
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
        ChatRole::Tool => "tool",
        ChatRole::Function => "function",
        ChatRole::Other => "other",
    }
}

/// The first `n` characters of `s` on one line (control characters as spaces), with `…` when
/// cut.
fn clip(s: &str, n: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= n {
        one_line
    } else {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_body_is_summarised_with_its_provider() {
        let body = r#"{"model":"openrouter/deepseek/deepseek-chat","messages":[
            {"role":"user","content":"hi"},
            {"role":"assistant","content":" ","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"ok"}],"tools":[]}"#;
        let i = inspect(body, FormatHint::Auto).expect("a chat body");
        assert_eq!(i.format, Format::Chat);
        let w = i.wire.expect("a wire target");
        assert_eq!(w.provider, Provider::DeepSeek);
        assert_eq!(w.routed.as_deref(), Some("openrouter/deepseek"));
        assert_eq!(i.messages[1].role, "assistant");
        assert_eq!(
            i.messages[1].parts,
            [
                "content 1 bytes (blank)",
                "reasoning_content (3 bytes)",
                "1 tool call(s)"
            ]
        );
        assert_eq!(i.messages[2].parts, ["content 2 bytes", "answers c1"]);
        assert!(i.blocks.is_empty());
    }

    #[test]
    fn string_content_is_clipped_and_given_format_is_said() {
        let long = "x".repeat(50);
        let body = format!(r#"{{"messages":[{{"role":"user","content":"{long}"}}]}}"#);
        let i = inspect(&body, FormatHint::Exactly(Format::Anthropic)).expect("readable");
        assert_eq!(i.why, "given explicitly");
        assert_eq!(
            i.messages[0].parts,
            [format!("\"{}…\" (string, 50 bytes)", "x".repeat(40))]
        );
    }

    #[test]
    fn responses_body_is_refused_by_name() {
        let body = r#"{"model":"gpt-5","input":[{"role":"user","content":"hi"}]}"#;
        match inspect(body, FormatHint::Auto) {
            Err(Error::NotInspected { format, .. }) => assert_eq!(format, Format::Responses),
            other => panic!("expected NotInspected, got {other:?}"),
        }
    }
}
