//! Conversion of a stored OpenCode session to model messages, and on to an Anthropic Messages
//! request body, the way OpenCode + the AI SDK build it.
//!
//! Two stages, as upstream:
//!
//! 1. [`to_model_messages`]: OpenCode's `MessageV2.toModelMessages` (seed 003, "Message to Model
//!    Conversion", rules 1–10; peers.md §3.1 for the version read, v1.1.56) followed by the AI
//!    SDK's `convertToModelMessages`, which splits an assistant message at each `step-start`
//!    into one assistant message per step, each followed by a `tool` message with that step's
//!    results.
//! 2. [`to_anthropic_request`]: OpenCode's `ProviderTransform` filter for `@ai-sdk/anthropic`
//!    (drop `""` text and unsigned `""` reasoning, drop messages left empty; peers.md §3.1)
//!    and `@ai-sdk/anthropic`'s `convertToAnthropicMessagesPrompt` (peers.md §5.2): consecutive
//!    user/tool messages become one `user` message, consecutive assistant messages one
//!    `assistant` message; reasoning with `anthropic.signature` becomes `thinking`, with
//!    `anthropic.redactedData` `redacted_thinking`, and without either is dropped; the final
//!    assistant message's last text is trimmed.
//!
//! Every model part and every Anthropic block records the OpenCode part it came from, and every
//! place where content was dropped, moved or altered is reported as a [`ConversionNote`].

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::session::{Session, StoredMessage, StoredPart};
use super::types::{JsonText, MessageInfo, Part, ToolState, anthropic_meta};
use crate::json::write_string_as_serde;

/// Text sent for a `compaction` part (seed 003 rule 3).
pub const COMPACTION_PROMPT: &str = "What did we do so far?";
/// Text sent for a `subtask` part (seed 003 rule 4).
pub const SUBTASK_PROMPT: &str = "The following tool was executed by the user";
/// Error text of a tool call left pending/running (seed 003 rule 8).
pub const INTERRUPTED_TOOL: &str = "[Tool execution was interrupted]";
/// Output sent for a completed tool whose output was compacted (peers.md §3.1).
pub const COMPACTED_OUTPUT: &str = "[Old tool result content cleared]";
/// Header of the user message carrying tool attachments (seed 003 rule 10; peers.md §3.1).
pub const ATTACHMENTS_HEADER: &str = "Attached image(s) from tool result:";

/// The OpenCode message and part a model part or Anthropic block came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartRef {
    /// OpenCode message id.
    pub message_id: String,
    /// OpenCode part id.
    pub part_id: String,
}

impl PartRef {
    fn of(m: &StoredMessage, p: &StoredPart) -> Self {
        PartRef {
            message_id: m.id.clone(),
            part_id: p.id.clone(),
        }
    }
}

/// Role of a model message (the AI SDK's `ModelMessage` roles, without `system`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRole {
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `tool`: results of the preceding assistant step.
    Tool,
}

/// Output of a tool result, borrowed from the session (or one of the conversion's own texts).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput<'a> {
    /// The tool's output text.
    Text(&'a str),
    /// The tool's output as the session holds it (written into the request as it is).
    Stored(&'a JsonText),
    /// An error text (`is_error` on the wire).
    ErrorText(&'a str),
}

/// The content of one model part, borrowed from the session it was converted from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelContent<'a> {
    /// Text.
    Text {
        /// The text.
        text: &'a str,
        /// Provider metadata replayed with it.
        provider_metadata: Option<&'a Value>,
    },
    /// A file (user messages).
    File {
        /// `data:`, `http(s):` or `file:` URL.
        url: &'a str,
        /// MIME type.
        media_type: &'a str,
        /// File name.
        filename: Option<&'a str>,
    },
    /// Reasoning.
    Reasoning {
        /// The reasoning text.
        text: &'a str,
        /// Provider metadata (carries the Anthropic signature).
        provider_metadata: Option<&'a Value>,
    },
    /// A tool call.
    ToolCall {
        /// Call id.
        call_id: &'a str,
        /// Tool name.
        tool_name: &'a str,
        /// The input as compact JSON text, key order and number spelling kept.
        input: String,
        /// Provider metadata of the call.
        provider_metadata: Option<&'a Value>,
    },
    /// A tool result.
    ToolResult {
        /// Call id.
        call_id: &'a str,
        /// Tool name.
        tool_name: &'a str,
        /// The output.
        output: ToolOutput<'a>,
    },
}

/// One part of a model message, with the OpenCode part it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPart<'a> {
    /// Where it came from.
    pub origin: PartRef,
    /// What it is.
    pub content: ModelContent<'a>,
}

/// A model message (the AI SDK's `ModelMessage`), borrowing the session's texts: converting
/// copies none of them.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelMessage<'a> {
    /// Role.
    pub role: ModelRole,
    /// Parts.
    pub content: Vec<ModelPart<'a>>,
    /// The OpenCode message it came from.
    pub message_id: &'a str,
}

/// What a conversion note reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoteKind {
    /// An assistant message with an error was skipped (seed 003 "Messages with Errors").
    ErroredMessageSkipped,
    /// A message without parts (or only ignored/step-start parts) was skipped.
    EmptyMessageSkipped,
    /// A pending/running tool part became an interrupted error result (seed 003 rule 8).
    ToolInterrupted,
    /// Provider metadata was not replayed because the message came from another model.
    MetadataDroppedOtherModel,
    /// A reasoning part had neither `anthropic.signature` nor `anthropic.redactedData`, so the
    /// AI SDK drops it (`unsupported reasoning metadata`, peers.md §5.2).
    ReasoningDroppedUnsigned,
    /// An empty (`""`) text or reasoning part was dropped by OpenCode's Anthropic filter.
    EmptyPartDropped,
    /// A message left empty after filtering was dropped.
    EmptyMessageDropped,
    /// The last text of a final assistant message was trimmed (AI SDK prefill rule).
    FinalTextTrimmed,
    /// A file part that cannot be sent to Anthropic was dropped.
    FileDropped,
    /// A tool call id was rewritten for a Claude model: every character outside
    /// `[a-zA-Z0-9_-]` becomes `_`, on the call and on its result (OpenCode's
    /// `normalizeMessages`, peers.md §3.1).
    ToolIdScrubbed,
}

/// A note on one message or part: something dropped, moved or altered by the conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionNote {
    /// What happened.
    pub kind: NoteKind,
    /// OpenCode message id.
    pub message_id: String,
    /// OpenCode part id, when it concerns one part.
    pub part_id: Option<String>,
}

/// Options of [`to_model_messages_with`].
#[derive(Debug, Clone, Default)]
pub struct ModelOptions {
    /// The target model, `modelID` or `providerID/modelID`. Assistant messages produced by a
    /// different model have their provider metadata dropped, as OpenCode does (peers.md §3.1).
    /// `None`: keep all metadata.
    pub target_model: Option<String>,
}

/// Converts a session to model messages with default options (all metadata kept).
pub fn to_model_messages(session: &Session) -> Vec<ModelMessage<'_>> {
    to_model_messages_with(session, &ModelOptions::default()).0
}

fn same_model(target: &str, info: &MessageInfo) -> bool {
    let MessageInfo::Assistant(a) = info else {
        return true;
    };
    let model = a.model_id.as_deref().unwrap_or_default();
    match target.split_once('/') {
        Some((provider, id)) => {
            a.provider_id.as_deref().unwrap_or_default() == provider && model == id
        }
        None => model == target,
    }
}

/// Converts a session to model messages, returning the notes alongside.
///
/// Follows seed 003's ten rules:
/// 1. user `text` → text (unless `ignored`); 2. user `file` → file, except `text/plain` and
///    directories; 3. `compaction` → [`COMPACTION_PROMPT`]; 4. `subtask` → [`SUBTASK_PROMPT`];
/// 5. assistant `text` → text with its metadata; 6. completed `tool` → call + result (a
///    compacted output is sent as [`COMPACTED_OUTPUT`]); 7. errored `tool` → call + error
///    result; 8. pending/running `tool` → call + error result [`INTERRUPTED_TOOL`];
/// 9. `reasoning` → reasoning with its metadata; 10. tool attachments → a following user
///    message of file parts headed by [`ATTACHMENTS_HEADER`].
///
/// Assistant messages with an error are skipped, except a `MessageAbortedError` message with a
/// part other than `step-start`/`reasoning`. Each assistant message is then split at
/// `step-start` into one assistant message per step, each followed by a tool message holding
/// that step's results (AI SDK `convertToModelMessages`).
pub fn to_model_messages_with<'s>(
    session: &'s Session,
    options: &ModelOptions,
) -> (Vec<ModelMessage<'s>>, Vec<ConversionNote>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let note =
        |notes: &mut Vec<ConversionNote>, kind, m: &StoredMessage, p: Option<&StoredPart>| {
            notes.push(ConversionNote {
                kind,
                message_id: m.id.clone(),
                part_id: p.map(|p| p.id.clone()),
            });
        };
    for m in &session.messages {
        if m.parts.is_empty() {
            note(&mut notes, NoteKind::EmptyMessageSkipped, m, None);
            continue;
        }
        match &m.typed {
            MessageInfo::User(_) => {
                let mut content = Vec::new();
                for p in &m.parts {
                    let origin = PartRef::of(m, p);
                    let c = match &p.typed {
                        Part::Text(t) if t.ignored != Some(true) => ModelContent::Text {
                            text: &t.text,
                            provider_metadata: None,
                        },
                        Part::File(f)
                            if f.mime != "text/plain" && f.mime != "application/x-directory" =>
                        {
                            ModelContent::File {
                                url: &f.url,
                                media_type: &f.mime,
                                filename: f.filename.as_deref(),
                            }
                        }
                        Part::Compaction(_) => ModelContent::Text {
                            text: COMPACTION_PROMPT,
                            provider_metadata: None,
                        },
                        Part::Subtask(_) => ModelContent::Text {
                            text: SUBTASK_PROMPT,
                            provider_metadata: None,
                        },
                        _ => continue,
                    };
                    content.push(ModelPart { origin, content: c });
                }
                if content.is_empty() {
                    note(&mut notes, NoteKind::EmptyMessageSkipped, m, None);
                    continue;
                }
                out.push(ModelMessage {
                    role: ModelRole::User,
                    content,
                    message_id: &m.id,
                });
            }
            MessageInfo::Assistant(a) => {
                if a.error.is_some() && !is_sent(m) {
                    note(&mut notes, NoteKind::ErroredMessageSkipped, m, None);
                    continue;
                }
                let keep_meta = options
                    .target_model
                    .as_deref()
                    .is_none_or(|t| same_model(t, &m.typed));
                let meta = |v: &'s Option<Value>, notes: &mut Vec<ConversionNote>, p| {
                    if keep_meta {
                        v.as_ref()
                    } else {
                        if v.is_some() {
                            note(notes, NoteKind::MetadataDroppedOtherModel, m, Some(p));
                        }
                        None
                    }
                };
                let before = out.len();
                let mut step: Vec<ModelPart<'s>> = Vec::new();
                let mut results: Vec<ModelPart<'s>> = Vec::new();
                let mut attachments: Vec<ModelPart<'s>> = Vec::new();
                let flush = |out: &mut Vec<ModelMessage<'s>>,
                             step: &mut Vec<ModelPart<'s>>,
                             results: &mut Vec<ModelPart<'s>>| {
                    if !step.is_empty() {
                        out.push(ModelMessage {
                            role: ModelRole::Assistant,
                            content: std::mem::take(step),
                            message_id: &m.id,
                        });
                    }
                    if !results.is_empty() {
                        out.push(ModelMessage {
                            role: ModelRole::Tool,
                            content: std::mem::take(results),
                            message_id: &m.id,
                        });
                    }
                };
                for p in &m.parts {
                    let origin = PartRef::of(m, p);
                    match &p.typed {
                        Part::StepStart(_) => flush(&mut out, &mut step, &mut results),
                        Part::Text(t) => step.push(ModelPart {
                            origin,
                            content: ModelContent::Text {
                                text: &t.text,
                                provider_metadata: meta(&t.metadata, &mut notes, p),
                            },
                        }),
                        Part::Reasoning(r) => step.push(ModelPart {
                            origin,
                            content: ModelContent::Reasoning {
                                text: &r.text,
                                provider_metadata: meta(&r.metadata, &mut notes, p),
                            },
                        }),
                        Part::Tool(t) => {
                            let input = t
                                .state
                                .input()
                                .map_or_else(|| "{}".to_owned(), |raw| compact_json(raw.get()));
                            step.push(ModelPart {
                                origin: origin.clone(),
                                content: ModelContent::ToolCall {
                                    call_id: &t.call_id,
                                    tool_name: &t.tool,
                                    input,
                                    provider_metadata: meta(&t.metadata, &mut notes, p),
                                },
                            });
                            let output = match &t.state {
                                ToolState::Completed(c) => {
                                    for att in c.attachments.iter().flatten() {
                                        if let Some(file) = attachment(att) {
                                            attachments.push(ModelPart {
                                                origin: origin.clone(),
                                                content: file,
                                            });
                                        }
                                    }
                                    let compacted =
                                        c.time.as_ref().is_some_and(|t| t.compacted.is_some());
                                    if compacted {
                                        ToolOutput::Text(COMPACTED_OUTPUT)
                                    } else {
                                        ToolOutput::Stored(&c.output)
                                    }
                                }
                                ToolState::Error(e) => ToolOutput::ErrorText(&e.error),
                                _ => {
                                    note(&mut notes, NoteKind::ToolInterrupted, m, Some(p));
                                    ToolOutput::ErrorText(INTERRUPTED_TOOL)
                                }
                            };
                            results.push(ModelPart {
                                origin,
                                content: ModelContent::ToolResult {
                                    call_id: &t.call_id,
                                    tool_name: &t.tool,
                                    output,
                                },
                            });
                        }
                        _ => {}
                    }
                }
                flush(&mut out, &mut step, &mut results);
                if out.len() == before {
                    note(&mut notes, NoteKind::EmptyMessageSkipped, m, None);
                }
                if let Some(first) = attachments.first() {
                    let mut content = vec![ModelPart {
                        origin: first.origin.clone(),
                        content: ModelContent::Text {
                            text: ATTACHMENTS_HEADER,
                            provider_metadata: None,
                        },
                    }];
                    content.extend(attachments);
                    out.push(ModelMessage {
                        role: ModelRole::User,
                        content,
                        message_id: &m.id,
                    });
                }
            }
            MessageInfo::Unknown { .. } => {
                note(&mut notes, NoteKind::EmptyMessageSkipped, m, None);
            }
        }
    }
    (out, notes)
}

fn attachment(value: &Value) -> Option<ModelContent<'_>> {
    let mime = value.get("mime")?.as_str()?;
    let url = value.get("url")?.as_str()?;
    Some(ModelContent::File {
        url,
        media_type: mime,
        filename: value.get("filename").and_then(Value::as_str),
    })
}

/// Whether OpenCode sends this stored message to the model (seed 003 "Messages with Errors"):
/// user messages always; assistant messages unless they carry an error, except an aborted one
/// with some part besides step markers and reasoning. Messages of other roles never.
pub fn is_sent(m: &StoredMessage) -> bool {
    match &m.typed {
        MessageInfo::User(_) => true,
        MessageInfo::Assistant(a) => match &a.error {
            None => true,
            Some(e) => {
                e.is_aborted()
                    && m.parts
                        .iter()
                        .any(|p| !matches!(p.typed, Part::StepStart(_) | Part::Reasoning(_)))
            }
        },
        _ => false,
    }
}

/// Removes insignificant whitespace from JSON text, keeping key order, number spelling and
/// string escapes exactly (`JSON.stringify` output of the same value is what both stores hold).
pub fn compact_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Anthropic
// ---------------------------------------------------------------------------------------------

/// The `thinking` parameter of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingMode {
    /// `{"type":"enabled","budget_tokens":N}`: manual thinking.
    Manual {
        /// `budget_tokens`.
        budget_tokens: u32,
    },
    /// `{"type":"adaptive"}`: interleaved thinking is allowed, order is kept.
    Adaptive,
    /// No `thinking` parameter.
    Off,
}

impl ThinkingMode {
    /// The request's `thinking` parameter as JSON text (`{"type":"adaptive"}`,
    /// `{"type":"enabled","budget_tokens":N}`), or `None` for no parameter.
    pub fn param_json(self) -> Option<String> {
        match self {
            ThinkingMode::Manual { budget_tokens } => Some(format!(
                "{{\"type\":\"enabled\",\"budget_tokens\":{budget_tokens}}}"
            )),
            ThinkingMode::Adaptive => Some("{\"type\":\"adaptive\"}".to_owned()),
            ThinkingMode::Off => None,
        }
    }
}

/// Options of [`to_anthropic_request`].
#[derive(Debug, Clone)]
pub struct AnthropicOptions {
    /// The thinking mode of the request.
    pub thinking: ThinkingMode,
    /// `max_tokens`.
    pub max_tokens: u32,
    /// Apply OpenCode's `@ai-sdk/anthropic` filter (drop `""` text and unsigned `""`
    /// reasoning, drop messages left empty). Default true, as OpenCode sends it.
    pub opencode_filter: bool,
    /// Rewrite tool call ids as OpenCode does for a model whose id contains `claude`
    /// ([`NoteKind::ToolIdScrubbed`]). Default true.
    pub scrub_tool_ids: bool,
}

impl Default for AnthropicOptions {
    fn default() -> Self {
        AnthropicOptions {
            thinking: ThinkingMode::Adaptive,
            max_tokens: 32_000,
            opencode_filter: true,
            scrub_tool_ids: true,
        }
    }
}

/// An Anthropic request body with the provenance of every block.
#[derive(Debug, Clone, PartialEq)]
pub struct AnthropicRequest {
    /// The request body, JSON text.
    pub body: String,
    /// `blocks[i][j]` is the OpenCode part that `messages[i].content[j]` came from.
    pub blocks: Vec<Vec<PartRef>>,
    /// `messages[i]` lists the OpenCode messages that request message `i` came from, in order
    /// (more than one when the AI SDK merged consecutive messages of one role); a message that
    /// kept no block is located through it.
    pub messages: Vec<Vec<String>>,
    /// Everything dropped, moved or altered on the way.
    pub notes: Vec<ConversionNote>,
}

impl AnthropicRequest {
    /// The OpenCode part behind `messages[message].content[block]`.
    pub fn origin(&self, message: usize, block: usize) -> Option<&PartRef> {
        self.blocks.get(message)?.get(block)
    }

    /// The (first) OpenCode message behind `messages[message]`.
    pub fn message_origin(&self, message: usize) -> Option<&str> {
        self.messages.get(message)?.first().map(String::as_str)
    }
}

#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<ThinkingParam>,
    messages: Vec<WireMessage<'a>>,
}

/// The body as `serde_json::to_string` writes it (a test holds the two to the same bytes), with
/// strings escaped by [`write_string_as_serde`]: a converted session is mostly tool output and
/// text, and serde_json's escaping, a byte at a time, was a sixth of checking a session.
impl Body<'_> {
    fn to_json(&self) -> String {
        // Sized once, not grown by doubling (a megabyte body was copied and faulted in again at
        // each step): the text twice over, for its escapes, and a little per block. Code and
        // logs escape far more than a sixteenth (a 1 MB export of tool output outgrew that and
        // was copied once more, dhat); capacity never written is never faulted in.
        let text: usize = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .map(|b| b.text_len() + 64)
            .sum();
        let mut out = String::with_capacity(256 + 2 * text);
        out.push('{');
        if let Some(model) = self.model {
            out.push_str("\"model\":");
            write_string_as_serde(&mut out, model);
            out.push(',');
        }
        out.push_str("\"max_tokens\":");
        out.push_str(&self.max_tokens.to_string());
        if let Some(t) = &self.thinking {
            out.push_str(",\"thinking\":{\"type\":");
            write_string_as_serde(&mut out, t.kind);
            if let Some(budget) = t.budget_tokens {
                out.push_str(",\"budget_tokens\":");
                out.push_str(&budget.to_string());
            }
            out.push('}');
        }
        out.push_str(",\"messages\":[");
        for (i, m) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"role\":");
            write_string_as_serde(&mut out, m.role);
            out.push_str(",\"content\":[");
            for (j, b) in m.content.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                b.write_json(&mut out);
            }
            out.push_str("]}");
        }
        out.push_str("]}");
        out
    }
}

impl Block<'_> {
    /// The bytes of the block's strings, unescaped.
    fn text_len(&self) -> usize {
        match self {
            Block::Text { text, .. } => text.len(),
            Block::Media { source, title, .. } => {
                [&source.media_type, &source.data, &source.url, title]
                    .into_iter()
                    .flatten()
                    .map(String::len)
                    .sum()
            }
            Block::Thinking {
                thinking,
                signature,
                ..
            } => thinking.len() + signature.len(),
            Block::Redacted { data, .. } => data.len(),
            Block::ToolUse {
                id, name, input, ..
            } => id.len() + name.len() + input.get().len(),
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                tool_use_id.len()
                    + match content {
                        Content::Text(t) => t.len(),
                        Content::Stored(t) => t.escaped_len(),
                    }
            }
        }
    }

    /// The block as serde writes it: fields in declaration order, `None`s left out.
    fn write_json(&self, out: &mut String) {
        // Every object written here (the block, a media source) opens with its `type`.
        let open = |out: &mut String, kind: &str| {
            out.push_str("{\"type\":");
            write_string_as_serde(out, kind);
        };
        let field = |out: &mut String, key: &str, value: &str| {
            out.push_str(",\"");
            out.push_str(key);
            out.push_str("\":");
            write_string_as_serde(out, value);
        };
        match self {
            Block::Text { kind, text } => {
                open(out, kind);
                field(out, "text", text);
            }
            Block::Media {
                kind,
                source,
                title,
            } => {
                open(out, kind);
                out.push_str(",\"source\":");
                open(out, source.kind);
                for (key, value) in [
                    ("media_type", &source.media_type),
                    ("data", &source.data),
                    ("url", &source.url),
                ] {
                    if let Some(v) = value {
                        field(out, key, v);
                    }
                }
                out.push('}');
                if let Some(t) = title {
                    field(out, "title", t);
                }
            }
            Block::Thinking {
                kind,
                thinking,
                signature,
            } => {
                open(out, kind);
                field(out, "thinking", thinking);
                field(out, "signature", signature);
            }
            Block::Redacted { kind, data } => {
                open(out, kind);
                field(out, "data", data);
            }
            Block::ToolUse {
                kind,
                id,
                name,
                input,
            } => {
                open(out, kind);
                field(out, "id", id);
                field(out, "name", name);
                out.push_str(",\"input\":");
                out.push_str(input.get());
            }
            Block::ToolResult {
                kind,
                tool_use_id,
                content,
                is_error,
            } => {
                open(out, kind);
                field(out, "tool_use_id", tool_use_id);
                match content {
                    Content::Text(t) => field(out, "content", t),
                    Content::Stored(t) => {
                        out.push_str(",\"content\":");
                        out.push_str(t.literal());
                    }
                }
                if let Some(e) = is_error {
                    out.push_str(if *e {
                        ",\"is_error\":true"
                    } else {
                        ",\"is_error\":false"
                    });
                }
            }
        }
        out.push('}');
    }
}

#[derive(Serialize)]
struct ThinkingParam {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_tokens: Option<u32>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
struct Source {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    media_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

/// Wire blocks; each variant carries its own `type` so no serde tagging is involved.
#[derive(Serialize)]
#[serde(untagged)]
enum Block<'a> {
    Text {
        #[serde(rename = "type")]
        kind: &'static str,
        text: Cow<'a, str>,
    },
    Media {
        #[serde(rename = "type")]
        kind: &'static str,
        source: Source,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    Thinking {
        #[serde(rename = "type")]
        kind: &'static str,
        thinking: &'a str,
        signature: &'a str,
    },
    Redacted {
        #[serde(rename = "type")]
        kind: &'static str,
        data: &'a str,
    },
    ToolUse {
        #[serde(rename = "type")]
        kind: &'static str,
        id: String,
        name: &'a str,
        input: Box<RawValue>,
    },
    ToolResult {
        #[serde(rename = "type")]
        kind: &'static str,
        tool_use_id: String,
        content: Content<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
}

/// A tool result's text: made here, or a session's stored output, whose literal is already
/// escaped as serde_json escapes it ([`JsonText`]) and is written as it is.
#[derive(Debug, Clone, Copy)]
enum Content<'a> {
    Text(&'a str),
    Stored(&'a JsonText),
}

impl Serialize for Content<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(t) => s.serialize_str(t),
            Content::Stored(t) => s.serialize_str(&t.text()),
        }
    }
}

/// The target model: the argument, else the last user message's model.
/// OpenCode's tool id rewrite for Claude models: every character outside `[a-zA-Z0-9_-]`
/// becomes `_` (no collision handling, as upstream).
fn scrubbed(id: &str, scrub: bool) -> String {
    if !scrub {
        return id.to_owned();
    }
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn target_model(session: &Session, model: Option<&str>) -> Option<String> {
    if let Some(m) = model {
        return Some(m.to_owned());
    }
    session.messages.iter().rev().find_map(|m| match &m.typed {
        MessageInfo::User(u) => u.model.as_ref().map(|r| r.model_id.clone()),
        _ => None,
    })
}

fn file_block(url: &str, media_type: &str, filename: Option<&str>) -> Option<Block<'static>> {
    let kind = if media_type.starts_with("image/") {
        "image"
    } else if media_type == "application/pdf" {
        "document"
    } else {
        return None;
    };
    let source = if let Some(rest) = url.strip_prefix("data:") {
        let (head, data) = rest.split_once(',')?;
        if !head.ends_with(";base64") {
            return None;
        }
        Source {
            kind: "base64",
            media_type: Some(media_type.to_owned()),
            data: Some(data.to_owned()),
            url: None,
        }
    } else if url.starts_with("https://") || url.starts_with("http://") {
        Source {
            kind: "url",
            media_type: None,
            data: None,
            url: Some(url.to_owned()),
        }
    } else {
        return None;
    };
    Some(Block::Media {
        kind,
        source,
        title: if kind == "document" {
            filename.map(str::to_owned)
        } else {
            None
        },
    })
}

/// One converted message: its role, the OpenCode message it came from, and its blocks with
/// their origins.
type Converted<'a> = (&'static str, &'a str, Vec<(Block<'a>, PartRef)>);

/// Builds the Anthropic Messages request body OpenCode would send for this session.
///
/// `model` is the target model (`modelID` or `providerID/modelID`); `None` takes the last user
/// message's model. Messages produced by another model lose their provider metadata, so their
/// reasoning has no signature and is dropped (peers.md §3.5 names this as a weakness of
/// OpenCode; it is reproduced here and reported).
///
/// The body is `{model, max_tokens, thinking?, messages}`. See the module docs for the rules;
/// every block is traceable through [`AnthropicRequest::blocks`].
pub fn to_anthropic_request(
    session: &Session,
    model: Option<&str>,
    options: &AnthropicOptions,
) -> AnthropicRequest {
    let target = target_model(session, model);
    let (model_messages, mut notes) = to_model_messages_with(
        session,
        &ModelOptions {
            target_model: target.clone(),
        },
    );
    let note = |notes: &mut Vec<ConversionNote>, kind, origin: &PartRef, part: bool| {
        notes.push(ConversionNote {
            kind,
            message_id: origin.message_id.clone(),
            part_id: part.then(|| origin.part_id.clone()),
        });
    };

    // Per model message: blocks with origins.
    let mut converted: Vec<Converted<'_>> = Vec::new();
    for mm in &model_messages {
        let role = match mm.role {
            ModelRole::Assistant => "assistant",
            ModelRole::User | ModelRole::Tool => "user",
        };
        let mut blocks: Vec<(Block<'_>, PartRef)> = Vec::new();
        let mut filtered = 0usize;
        for part in &mm.content {
            let origin = part.origin.clone();
            let block = match &part.content {
                ModelContent::Text { text, .. } => {
                    if options.opencode_filter && text.is_empty() {
                        note(&mut notes, NoteKind::EmptyPartDropped, &origin, true);
                        filtered += 1;
                        continue;
                    }
                    Block::Text {
                        kind: "text",
                        text: Cow::Borrowed(text),
                    }
                }
                ModelContent::File {
                    url,
                    media_type,
                    filename,
                } => match file_block(url, media_type, *filename) {
                    Some(b) => b,
                    None => {
                        note(&mut notes, NoteKind::FileDropped, &origin, true);
                        continue;
                    }
                },
                ModelContent::Reasoning {
                    text,
                    provider_metadata,
                } => {
                    let signature = anthropic_meta(*provider_metadata, "signature");
                    let redacted = anthropic_meta(*provider_metadata, "redactedData");
                    match (signature, redacted) {
                        (Some(sig), _) => Block::Thinking {
                            kind: "thinking",
                            thinking: text,
                            signature: sig,
                        },
                        (None, Some(data)) => Block::Redacted {
                            kind: "redacted_thinking",
                            data,
                        },
                        (None, None) => {
                            let kind = if options.opencode_filter && text.is_empty() {
                                filtered += 1;
                                NoteKind::EmptyPartDropped
                            } else {
                                NoteKind::ReasoningDroppedUnsigned
                            };
                            note(&mut notes, kind, &origin, true);
                            continue;
                        }
                    }
                }
                ModelContent::ToolCall {
                    call_id,
                    tool_name,
                    input,
                    ..
                } => {
                    let input = RawValue::from_string(input.clone()).unwrap_or_else(|_| {
                        RawValue::from_string("{}".to_owned()).unwrap_or_default()
                    });
                    let id = scrubbed(call_id, options.scrub_tool_ids);
                    if id != *call_id {
                        note(&mut notes, NoteKind::ToolIdScrubbed, &origin, true);
                    }
                    Block::ToolUse {
                        kind: "tool_use",
                        id,
                        name: tool_name,
                        input,
                    }
                }
                ModelContent::ToolResult {
                    call_id, output, ..
                } => {
                    let (content, is_error) = match output {
                        ToolOutput::Text(t) => (Content::Text(t), None),
                        ToolOutput::Stored(t) => (Content::Stored(t), None),
                        ToolOutput::ErrorText(t) => (Content::Text(t), Some(true)),
                    };
                    Block::ToolResult {
                        kind: "tool_result",
                        tool_use_id: scrubbed(call_id, options.scrub_tool_ids),
                        content,
                        is_error,
                    }
                }
            };
            blocks.push((block, origin));
        }
        // The blocks go in the parts' order, as OpenCode sends them: it does not move a thinking
        // block stored after the text or tool parts of its step (seed 002's proposed fix was not
        // taken; OpenCode 1.18.33, run against a mock in integrations/opencode/e2e, sends
        // `[tool_use, thinking, text]` for such a step, which the API rejects).
        // OpenCode's filter runs before the AI SDK: it drops a message only when its own
        // filtering emptied it; one emptied by the AI SDK (unsigned reasoning) is sent empty.
        if blocks.is_empty() && options.opencode_filter && filtered == mm.content.len() {
            notes.push(ConversionNote {
                kind: NoteKind::EmptyMessageDropped,
                message_id: mm.message_id.to_owned(),
                part_id: None,
            });
            continue;
        }
        converted.push((role, mm.message_id, blocks));
    }

    // Group consecutive same-role messages (AI SDK groupIntoBlocks).
    let mut messages: Vec<WireMessage<'_>> = Vec::new();
    let mut origins: Vec<Vec<PartRef>> = Vec::new();
    let mut message_origins: Vec<Vec<String>> = Vec::new();
    for (role, id, blocks) in converted {
        let (b, o): (Vec<Block<'_>>, Vec<PartRef>) = blocks.into_iter().unzip();
        match messages.last_mut() {
            Some(last) if last.role == role => {
                last.content.extend(b);
                if let Some(lo) = origins.last_mut() {
                    lo.extend(o);
                }
                if let Some(mo) = message_origins.last_mut()
                    && mo.last().is_none_or(|l| l != id)
                {
                    mo.push(id.to_owned());
                }
            }
            _ => {
                messages.push(WireMessage { role, content: b });
                origins.push(o);
                message_origins.push(vec![id.to_owned()]);
            }
        }
    }

    // The final assistant message's last text is trimmed (AI SDK).
    if let (Some(last), Some(last_origins)) = (messages.last_mut(), origins.last())
        && last.role == "assistant"
        && let Some(idx) = last
            .content
            .iter()
            .rposition(|b| matches!(b, Block::Text { .. }))
        && let Block::Text { text, .. } = &mut last.content[idx]
    {
        let trimmed = text.trim();
        if trimmed.len() != text.len() {
            *text = Cow::Owned(trimmed.to_owned());
            if let Some(origin) = last_origins.get(idx) {
                note(&mut notes, NoteKind::FinalTextTrimmed, origin, true);
            }
        }
    }

    let thinking = match options.thinking {
        ThinkingMode::Manual { budget_tokens } => Some(ThinkingParam {
            kind: "enabled",
            budget_tokens: Some(budget_tokens),
        }),
        ThinkingMode::Adaptive => Some(ThinkingParam {
            kind: "adaptive",
            budget_tokens: None,
        }),
        ThinkingMode::Off => None,
    };
    let body = Body {
        model: target.as_deref(),
        max_tokens: options.max_tokens,
        thinking,
        messages,
    };
    let json = body.to_json();
    // Every conversion in a debug build (the tests, the fuzz targets) holds the hand-written
    // body to serde's bytes.
    debug_assert_eq!(
        Some(&json),
        serde_json::to_string(&body).ok().as_ref(),
        "Body::to_json differs from serde_json"
    );
    let body = json;
    AnthropicRequest {
        body,
        blocks: origins,
        messages: message_origins,
        notes,
    }
}
