//! Amazon Bedrock Converse request bodies (`Converse` / `ConverseStream`).
//!
//! Field names follow the AWS API reference (`API_runtime_Converse.html`, `Message`,
//! `ContentBlock`, `ToolUseBlock`, `ToolResultBlock`, `ReasoningContentBlock`,
//! `ReasoningTextBlock`) and api-rules-reasoning-2026-11.md §8.1: a message is
//! `{role, content: [ContentBlock]}`, and a content block is a union keyed by name, not by a
//! `type`: `{text}`, `{image}`, `{document}`, `{video}`, `{toolUse: {toolUseId, name, input}}`,
//! `{toolResult: {toolUseId, content, status}}`,
//! `{reasoningContent: {reasoningText: {text, signature?}} | {redactedContent}}`, `{cachePoint}`,
//! `{guardContent}`, `{citationsContent}`. The model is not in the body (it is in the URL), except
//! when a gateway adds a `modelId`; Claude's thinking settings ride in
//! `additionalModelRequestFields.thinking`.
//!
//! The reader keeps spans only: each message's members and its content array's elements, so a
//! repair can remove or reorder blocks by rewriting that array with
//! [`write_array`](crate::wire::write_array), every block keeping its bytes.

use crate::error::ModelError;
use crate::json::{Kind, Scanner, Span, StrSpan, SyntaxError};
use crate::wire::{ArrayAt, Bad, Member, Value, key_is, read_root, shape, value};

/// A Converse message's `role`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConverseRole {
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// Anything else, or no role.
    Other,
}

/// What a content block is, by its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BlockKind {
    /// `{text}`.
    Text,
    /// `{image}`.
    Image,
    /// `{document}`.
    Document,
    /// `{video}`.
    Video,
    /// `{toolUse}`.
    ToolUse,
    /// `{toolResult}`.
    ToolResult,
    /// `{reasoningContent}`.
    Reasoning,
    /// `{cachePoint}`.
    CachePoint,
    /// `{guardContent}`.
    GuardContent,
    /// `{citationsContent}`.
    CitationsContent,
    /// Any other key, no key, or an element that is not an object.
    Other,
}

impl BlockKind {
    fn parse(s: &str) -> BlockKind {
        match s {
            "text" => BlockKind::Text,
            "image" => BlockKind::Image,
            "document" => BlockKind::Document,
            "video" => BlockKind::Video,
            "toolUse" => BlockKind::ToolUse,
            "toolResult" => BlockKind::ToolResult,
            "reasoningContent" => BlockKind::Reasoning,
            "cachePoint" => BlockKind::CachePoint,
            "guardContent" => BlockKind::GuardContent,
            "citationsContent" => BlockKind::CitationsContent,
            _ => BlockKind::Other,
        }
    }
}

/// Which member of the `reasoningContent` union is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningForm {
    /// `reasoningText: {text, signature?}`.
    ReasoningText,
    /// `redactedContent` (base64 bytes).
    RedactedContent,
    /// Neither, both, or not an object.
    Other,
}

/// A `reasoningContent` block, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reasoning {
    /// Which member of the union is set.
    pub form: ReasoningForm,
    /// The `reasoningText` object, when there is one.
    pub reasoning_text: Option<Span>,
    /// `reasoningText.text`, whatever its value (`None` when the key is absent).
    pub text: Option<Value>,
    /// `reasoningText.signature` as a string; `None` when absent, null or not a string.
    pub signature: Option<StrSpan>,
    /// `redactedContent` as a string.
    pub redacted: Option<StrSpan>,
}

impl Reasoning {
    /// True when the block carries something a provider signed: a non-empty signature, or
    /// redacted (encrypted) content.
    pub fn is_signed(&self) -> bool {
        self.signature.is_some_and(|s| !s.span.is_empty())
            || self.redacted.is_some_and(|r| !r.span.is_empty())
    }

    /// True when `reasoningText.text` is there and `null`.
    pub fn text_is_null(&self) -> bool {
        self.text.is_some_and(|v| v.kind == Kind::Null)
    }
}

/// One element of a message's `content`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConverseBlock {
    /// The whole element.
    pub span: Span,
    /// What it is, by its first key (a union has one).
    pub kind: BlockKind,
    /// How many members the element has (a valid union member has exactly one).
    pub members: u32,
    /// For a text block: the text, when it is a string.
    pub text: Option<StrSpan>,
    /// For a text block: the text is empty or whitespace only (or not a string).
    pub text_blank: bool,
    /// For `toolUse` / `toolResult`: `toolUseId`.
    pub tool_use_id: Option<StrSpan>,
    /// For `toolUse`: `name`.
    pub name: Option<StrSpan>,
    /// For `toolResult`: `status`.
    pub status: Option<StrSpan>,
    /// For `toolResult`: how many elements its `content` has (`None` when it is no array).
    pub result_items: Option<u32>,
    /// For `toolResult`: its `content` holds a `document` element whose source is an
    /// `s3Location`.
    pub result_s3_document: bool,
    /// For `document`, `image`, `video`: the source is an `s3Location`.
    pub s3_source: bool,
    /// For `reasoningContent`: what it holds.
    pub reasoning: Option<Reasoning>,
}

impl ConverseBlock {
    fn new(span: Span) -> ConverseBlock {
        ConverseBlock {
            span,
            kind: BlockKind::Other,
            members: 0,
            text: None,
            text_blank: false,
            tool_use_id: None,
            name: None,
            status: None,
            result_items: None,
            result_s3_document: false,
            s3_source: false,
            reasoning: None,
        }
    }

    /// True for a `reasoningContent` block.
    pub fn is_reasoning(&self) -> bool {
        self.kind == BlockKind::Reasoning
    }
}

/// What a message's `content` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConverseContent {
    /// No `content` key.
    Absent,
    /// An array (its elements' spans; the blocks are in [`ConverseMessage::blocks`]).
    Array(ArrayAt),
    /// Any other value.
    Other(Span),
}

/// One message of a Converse body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConverseMessage {
    /// The whole message object.
    pub span: Span,
    /// Its role.
    pub role: ConverseRole,
    /// Its members, in order.
    pub members: Vec<Member>,
    /// `content`.
    pub content: ConverseContent,
    /// The content blocks, one per element of the content array.
    pub blocks: Vec<ConverseBlock>,
}

impl ConverseMessage {
    /// The content array, when `content` is one.
    pub fn content_array(&self) -> Option<&ArrayAt> {
        match &self.content {
            ConverseContent::Array(a) => Some(a),
            _ => None,
        }
    }

    /// True when any block is `reasoningContent`.
    pub fn has_reasoning(&self) -> bool {
        self.blocks.iter().any(ConverseBlock::is_reasoning)
    }

    /// True when a `reasoningContent` block carries a signature or redacted content.
    pub fn has_signed_reasoning(&self) -> bool {
        self.blocks
            .iter()
            .filter_map(|b| b.reasoning)
            .any(|r| r.is_signed())
    }
}

/// A Converse request body, read.
#[derive(Clone, Debug)]
pub struct ConverseBody<'a> {
    /// The input.
    pub src: &'a str,
    /// The top-level object.
    pub root: Span,
    /// Its members.
    pub root_members: Vec<Member>,
    /// `modelId`, when a gateway puts it in the body (the Converse API takes it in the URL).
    pub model_id: Option<StrSpan>,
    /// The `messages` array.
    pub messages_at: ArrayAt,
    /// The messages.
    pub messages: Vec<ConverseMessage>,
    /// The `system` array, when there is one.
    pub system: Option<ArrayAt>,
    /// True when a `toolConfig` object is present.
    pub tool_config: bool,
    /// How many entries `toolConfig.tools` has (0 without it).
    pub tool_count: usize,
    /// The key of `toolConfig.toolChoice` (`auto`, `any`, `tool`).
    pub tool_choice: Option<StrSpan>,
    /// The `inferenceConfig` object.
    pub inference_config: Option<Span>,
    /// `inferenceConfig.maxTokens`.
    pub max_tokens: Option<u64>,
    /// The `additionalModelRequestFields` value.
    pub additional_fields: Option<Span>,
    /// `additionalModelRequestFields.thinking` (Claude's thinking settings), when an object.
    pub thinking: Option<Span>,
    /// `additionalModelRequestFields.thinking.type`.
    pub thinking_type: Option<StrSpan>,
    /// `additionalModelRequestFields.thinking.budget_tokens`.
    pub budget_tokens: Option<u64>,
}

impl<'a> ConverseBody<'a> {
    /// The model named in the body (`modelId`), if any.
    pub fn model(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.model_id.map(|m| m.decode(self.src))
    }

    /// `additionalModelRequestFields.thinking.type`, decoded.
    pub fn thinking_type(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.thinking_type.map(|t| t.decode(self.src))
    }
}

type R<T> = Result<T, SyntaxError>;

/// Reads a Converse request body.
///
/// # Errors
/// A [`ModelError`] naming the place for invalid JSON, or a body without a `messages` array of
/// objects.
pub fn read(src: &str) -> Result<ConverseBody<'_>, ModelError> {
    let mut b = ConverseBody {
        src,
        root: Span::default(),
        root_members: Vec::new(),
        model_id: None,
        messages_at: ArrayAt::default(),
        messages: Vec::new(),
        system: None,
        tool_config: false,
        tool_count: 0,
        tool_choice: None,
        inference_config: None,
        max_tokens: None,
        additional_fields: None,
        thinking: None,
        thinking_type: None,
        budget_tokens: None,
    };
    let mut have_messages = false;
    let mut bad: Bad = None;
    let root = read_root(
        src,
        "expected a Converse request object",
        &mut bad,
        |s, key, bad| -> R<()> {
            if key_is(src, key, "messages") && s.peek_kind()? == Kind::Array {
                have_messages = true;
                b.messages.clear();
                let mut elems = Vec::new();
                let span = s.array(|s, i| -> R<()> {
                    s.skip_ws();
                    let at = s.pos();
                    if s.peek_kind()? != Kind::Object {
                        bad.get_or_insert((
                            at,
                            format!("messages[{i}]"),
                            "expected a message object",
                        ));
                        elems.push(s.skip_value()?);
                        return Ok(());
                    }
                    let m = read_message(s)?;
                    elems.push(m.span);
                    b.messages.push(m);
                    Ok(())
                })?;
                b.messages_at = ArrayAt { span, elems };
            } else if key_is(src, key, "modelId") {
                b.model_id = s.opt_string()?;
            } else if key_is(src, key, "system") && s.peek_kind()? == Kind::Array {
                let mut elems = Vec::new();
                let span = s.array(|s, _| -> R<()> {
                    s.skip_ws();
                    elems.push(s.skip_value()?);
                    Ok(())
                })?;
                b.system = Some(ArrayAt { span, elems });
            } else if key_is(src, key, "toolConfig") && s.peek_kind()? == Kind::Object {
                b.tool_config = true;
                s.object(|s, k| -> R<()> {
                    if key_is(src, k, "tools") && s.peek_kind()? == Kind::Array {
                        let mut n = 0;
                        s.array(|s, _| -> R<()> {
                            n += 1;
                            s.skip_value().map(|_| ())
                        })?;
                        b.tool_count = n;
                    } else if key_is(src, k, "toolChoice") && s.peek_kind()? == Kind::Object {
                        s.object(|s, c| -> R<()> {
                            b.tool_choice.get_or_insert(c);
                            s.skip_value().map(|_| ())
                        })?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            } else if key_is(src, key, "inferenceConfig") && s.peek_kind()? == Kind::Object {
                let span = s.object(|s, k| -> R<()> {
                    if key_is(src, k, "maxTokens") {
                        b.max_tokens = s.opt_u64()?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
                b.inference_config = Some(span);
            } else if key_is(src, key, "additionalModelRequestFields")
                && s.peek_kind()? == Kind::Object
            {
                let span = s.object(|s, k| -> R<()> {
                    s.skip_ws();
                    if key_is(src, k, "thinking") && s.peek_kind()? == Kind::Object {
                        let t = s.object(|s, tk| -> R<()> {
                            if key_is(src, tk, "type") {
                                b.thinking_type = s.opt_string()?;
                            } else if key_is(src, tk, "budget_tokens") {
                                b.budget_tokens = s.opt_u64()?;
                            } else {
                                s.skip_value()?;
                            }
                            Ok(())
                        })?;
                        b.thinking = Some(t);
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
                b.additional_fields = Some(span);
            } else {
                s.skip_value()?;
            }
            Ok(())
        },
    )?;
    b.root = root.span;
    b.root_members = root.members;
    if !have_messages {
        return Err(shape(
            0,
            "messages".into(),
            "a Converse body needs a `messages` array",
        ));
    }
    Ok(b)
}

fn read_message(s: &mut Scanner<'_>) -> R<ConverseMessage> {
    let src = s.src();
    let mut m = ConverseMessage {
        span: Span::default(),
        role: ConverseRole::Other,
        members: Vec::new(),
        content: ConverseContent::Absent,
        blocks: Vec::new(),
    };
    let mut members = Vec::new();
    m.span = s.object(|s, key| -> R<()> {
        s.skip_ws();
        let start = s.pos();
        if key_is(src, key, "role") {
            if let Some(r) = s.opt_string()? {
                m.role = if key_is(src, r, "user") {
                    ConverseRole::User
                } else if key_is(src, r, "assistant") {
                    ConverseRole::Assistant
                } else {
                    ConverseRole::Other
                };
            }
        } else if key_is(src, key, "content") {
            if s.peek_kind()? == Kind::Array {
                let mut elems = Vec::new();
                m.blocks.clear();
                let span = s.array(|s, _| -> R<()> {
                    s.skip_ws();
                    let b = read_block(s)?;
                    elems.push(b.span);
                    m.blocks.push(b);
                    Ok(())
                })?;
                m.content = ConverseContent::Array(ArrayAt { span, elems });
            } else {
                m.content = ConverseContent::Other(s.skip_value()?);
            }
        } else {
            s.skip_value()?;
        }
        members.push(Member {
            key,
            value: Span::new(start, s.pos()),
        });
        Ok(())
    })?;
    m.members = members;
    Ok(m)
}

fn read_block(s: &mut Scanner<'_>) -> R<ConverseBlock> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        let span = s.skip_value()?;
        return Ok(ConverseBlock::new(span));
    }
    let mut b = ConverseBlock::new(Span::default());
    b.span = s.object(|s, key| -> R<()> {
        b.members += 1;
        let kind = if key.escaped {
            BlockKind::parse(&key.decode(src))
        } else {
            BlockKind::parse(key.raw(src))
        };
        if b.members > 1 {
            // A union has one member; a second one is skipped (rules see `members`).
            s.skip_value()?;
            return Ok(());
        }
        b.kind = kind;
        match kind {
            BlockKind::Text => {
                b.text = s.opt_string()?;
                b.text_blank = b.text.is_none_or(|t| t.is_blank(src));
            }
            BlockKind::ToolUse if s.peek_kind()? == Kind::Object => {
                s.object(|s, k| -> R<()> {
                    if key_is(src, k, "toolUseId") {
                        b.tool_use_id = s.opt_string()?;
                    } else if key_is(src, k, "name") {
                        b.name = s.opt_string()?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            }
            BlockKind::ToolResult if s.peek_kind()? == Kind::Object => {
                s.object(|s, k| -> R<()> {
                    if key_is(src, k, "toolUseId") {
                        b.tool_use_id = s.opt_string()?;
                    } else if key_is(src, k, "status") {
                        b.status = s.opt_string()?;
                    } else if key_is(src, k, "content") && s.peek_kind()? == Kind::Array {
                        let mut n = 0u32;
                        let mut s3_doc = false;
                        s.array(|s, _| -> R<()> {
                            n += 1;
                            if s.peek_kind()? != Kind::Object {
                                return s.skip_value().map(|_| ());
                            }
                            s.object(|s, ik| -> R<()> {
                                if key_is(src, ik, "document") {
                                    s3_doc |= media_from_s3(s)?;
                                } else {
                                    s.skip_value()?;
                                }
                                Ok(())
                            })?;
                            Ok(())
                        })?;
                        b.result_items = Some(n);
                        b.result_s3_document = s3_doc;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            }
            BlockKind::Document | BlockKind::Image | BlockKind::Video => {
                b.s3_source = media_from_s3(s)?;
            }
            BlockKind::Reasoning => {
                b.reasoning = Some(read_reasoning(s)?);
            }
            _ => {
                s.skip_value()?;
            }
        }
        Ok(())
    })?;
    Ok(b)
}

/// Reads a `document`/`image`/`video` object: true when its `source` is an `s3Location`.
fn media_from_s3(s: &mut Scanner<'_>) -> R<bool> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        s.skip_value()?;
        return Ok(false);
    }
    let mut s3 = false;
    s.object(|s, k| -> R<()> {
        if key_is(src, k, "source") && s.peek_kind()? == Kind::Object {
            s.object(|s, sk| -> R<()> {
                s3 |= key_is(src, sk, "s3Location");
                s.skip_value().map(|_| ())
            })?;
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    Ok(s3)
}

fn read_reasoning(s: &mut Scanner<'_>) -> R<Reasoning> {
    let src = s.src();
    let mut r = Reasoning {
        form: ReasoningForm::Other,
        reasoning_text: None,
        text: None,
        signature: None,
        redacted: None,
    };
    if s.peek_kind()? != Kind::Object {
        s.skip_value()?;
        return Ok(r);
    }
    let mut seen = 0;
    s.object(|s, k| -> R<()> {
        s.skip_ws();
        if key_is(src, k, "reasoningText") {
            seen += 1;
            r.form = ReasoningForm::ReasoningText;
            if s.peek_kind()? == Kind::Object {
                let span = s.object(|s, tk| -> R<()> {
                    if key_is(src, tk, "text") {
                        r.text = Some(value(s)?);
                    } else if key_is(src, tk, "signature") {
                        r.signature = if s.peek_kind()? == Kind::String {
                            Some(s.string()?)
                        } else {
                            s.skip_value()?;
                            None
                        };
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
                r.reasoning_text = Some(span);
            } else {
                s.skip_value()?;
            }
        } else if key_is(src, k, "redactedContent") {
            seen += 1;
            r.form = ReasoningForm::RedactedContent;
            r.redacted = if s.peek_kind()? == Kind::String {
                Some(s.string()?)
            } else {
                s.skip_value()?;
                None
            };
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    if seen != 1 {
        r.form = ReasoningForm::Other;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL_TURN: &str = r#"{"messages": [
 {"role": "user", "content": [{"text": "weather?"}]},
 {"role": "assistant", "content": [
   {"reasoningContent": {"reasoningText": {"text": "call it", "signature": "c2ln"}}},
   {"text": " "},
   {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {}}}]},
 {"role": "user", "content": [
   {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "sunny"}], "status": "success"}},
   {"cachePoint": {"type": "default"}}]}],
 "system": [{"text": "be brief"}],
 "inferenceConfig": {"maxTokens": 2048},
 "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather"}}], "toolChoice": {"auto": {}}},
 "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}"#;

    #[test]
    fn a_claude_tool_turn_is_read_block_by_block() {
        let src = TOOL_TURN;
        let b = read(src).expect("read");
        assert_eq!(b.messages.len(), 3);
        let roles: Vec<ConverseRole> = b.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                ConverseRole::User,
                ConverseRole::Assistant,
                ConverseRole::User
            ]
        );
        let kinds: Vec<BlockKind> = b.messages[1].blocks.iter().map(|k| k.kind).collect();
        assert_eq!(
            kinds,
            [BlockKind::Reasoning, BlockKind::Text, BlockKind::ToolUse]
        );
        let a = &b.messages[1];
        let r = a.blocks[0].reasoning.expect("reasoning");
        assert_eq!(r.form, ReasoningForm::ReasoningText);
        assert_eq!(
            r.text.and_then(|t| t.string).map(|t| t.raw(src)),
            Some("call it")
        );
        assert_eq!(r.signature.map(|t| t.raw(src)), Some("c2ln"));
        assert!(r.is_signed() && !r.text_is_null());
        assert!(a.has_signed_reasoning());
        assert!(a.blocks[1].text_blank);
        assert_eq!(
            a.blocks[2].tool_use_id.map(|t| t.raw(src)),
            Some("tooluse_1")
        );
        assert_eq!(a.blocks[2].name.map(|t| t.raw(src)), Some("get_weather"));
        assert_eq!(
            a.blocks[0].span.get(src),
            r#"{"reasoningContent": {"reasoningText": {"text": "call it", "signature": "c2ln"}}}"#
        );
        let u = &b.messages[2];
        assert_eq!(u.blocks[0].kind, BlockKind::ToolResult);
        assert_eq!(
            u.blocks[0].tool_use_id.map(|t| t.raw(src)),
            Some("tooluse_1")
        );
        assert_eq!(u.blocks[0].status.map(|t| t.raw(src)), Some("success"));
        assert_eq!(u.blocks[0].result_items, Some(1));
        assert_eq!(u.blocks[1].kind, BlockKind::CachePoint);
        let arr = u.content_array().expect("array");
        assert_eq!(arr.elems.len(), 2);
        assert_eq!(
            arr.elems[1].get(src),
            r#"{"cachePoint": {"type": "default"}}"#
        );
        assert_eq!(b.system.as_ref().map(|s| s.elems.len()), Some(1));
        assert!(b.tool_config);
        assert_eq!(b.tool_count, 1);
        assert_eq!(b.tool_choice.map(|t| t.raw(src)), Some("auto"));
        assert_eq!(b.max_tokens, Some(2048));
        assert_eq!(b.thinking_type().as_deref(), Some("enabled"));
        assert_eq!(b.budget_tokens, Some(1024));
        assert_eq!(b.model(), None);
        assert_eq!(b.root_members.len(), 5);
        assert_eq!(b.messages_at.elems.len(), 3);
    }

    #[test]
    fn reasoning_forms_are_told_apart() {
        let src = r#"{"modelId":"us.deepseek.r1-v1:0","messages":[{"role":"assistant","content":[
 {"reasoningContent":{"redactedContent":"ZW5j"}},
 {"reasoningContent":{"reasoningText":{"text":null,"signature":"c2ln"}}},
 {"reasoningContent":{"reasoningText":{"text":"plain"}}},
 {"reasoningContent":{"reasoningText":{"text":"x"},"redactedContent":"ZW5j"}},
 {"reasoningContent":"odd"},
 {"text":"a","cachePoint":{}},
 {"document":{"name":"d","format":"pdf","source":{"s3Location":{"uri":"s3://b/k"}}}},
 {"toolResult":{"toolUseId":"t","content":[{"document":{"source":{"s3Location":{}}}}]}},
 7]}]}"#;
        let b = read(src).expect("read");
        assert_eq!(b.model().as_deref(), Some("us.deepseek.r1-v1:0"));
        let bl = &b.messages[0].blocks;
        assert_eq!(bl.len(), 9);
        let r: Vec<Option<Reasoning>> = bl.iter().map(|b| b.reasoning).collect();
        let r0 = r[0].expect("redacted");
        assert_eq!(r0.form, ReasoningForm::RedactedContent);
        assert!(r0.is_signed());
        let r1 = r[1].expect("null text");
        assert!(r1.text_is_null() && r1.is_signed());
        let r2 = r[2].expect("unsigned");
        assert!(!r2.is_signed() && !r2.text_is_null());
        assert_eq!(r[3].map(|r| r.form), Some(ReasoningForm::Other));
        assert_eq!(r[4].map(|r| r.form), Some(ReasoningForm::Other));
        assert_eq!((bl[5].kind, bl[5].members), (BlockKind::Text, 2));
        assert!(bl[6].s3_source && bl[6].kind == BlockKind::Document);
        assert!(bl[7].result_s3_document);
        assert_eq!(bl[8].kind, BlockKind::Other);
        assert_eq!(bl[8].span.get(src), "7");
    }

    #[test]
    fn bodies_that_are_no_converse_request_are_refused_with_the_place() {
        for (src, expect) in [
            ("[1]", "expected a Converse request object"),
            (
                r#"{"system":[]}"#,
                "a Converse body needs a `messages` array",
            ),
            (
                r#"{"messages":[1]}"#,
                "messages[0]: expected a message object",
            ),
        ] {
            let e = read(src).expect_err("refused").to_string();
            assert!(e.contains(expect), "{src}: {e}");
        }
        assert!(matches!(
            read(r#"{"messages":[}"#),
            Err(ModelError::Syntax { .. })
        ));
    }
}
