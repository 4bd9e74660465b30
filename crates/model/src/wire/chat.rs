//! OpenAI Chat Completions request bodies, as every OpenAI-compatible vendor extends them.
//!
//! Field names follow the OpenAI SDK's request types (`ChatCompletionMessageParam`: `role`,
//! `content` as a string or an array of parts, `tool_calls`, `tool_call_id`, `name`) and the
//! vendors' reasoning fields (api-rules-reasoning-2026-11.md §1, §4–§7): `reasoning_content`
//! (DeepSeek, Kimi, Qwen, GLM, older vLLM), `reasoning` (OpenRouter, vLLM), `reasoning_details`
//! (OpenRouter, MiniMax with `reasoning_split`) and Gemini's
//! `tool_calls[i].extra_content.google.thought_signature`. MiniMax's `<think>` text stays part of
//! `content`, where it belongs.

use crate::error::ModelError;
use crate::json::{Kind, Scanner, Span, StrSpan, SyntaxError};
use crate::wire::{ArrayAt, Bad, Member, Value, key_is, read_root, shape, value};

/// A Chat message's `role`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    /// `system`.
    System,
    /// `developer` (OpenAI's newer name for system instructions).
    Developer,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `tool`: the answer to one tool call.
    Tool,
    /// `function`: the deprecated answer to a `function_call`.
    Function,
    /// Anything else, or no role.
    Other,
}

impl ChatRole {
    fn parse(s: &str) -> ChatRole {
        match s {
            "system" => ChatRole::System,
            "developer" => ChatRole::Developer,
            "user" => ChatRole::User,
            "assistant" => ChatRole::Assistant,
            "tool" => ChatRole::Tool,
            "function" => ChatRole::Function,
            _ => ChatRole::Other,
        }
    }
}

/// What a message's `content` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatContent {
    /// No `content` key.
    Absent,
    /// `null`.
    Null,
    /// A string; `blank` when it is empty or whitespace only.
    Text {
        /// The string.
        text: StrSpan,
        /// Empty or whitespace only.
        blank: bool,
    },
    /// An array of parts; `blank` when it has none, or only text parts that are blank.
    Parts {
        /// The array.
        span: Span,
        /// How many parts.
        count: u32,
        /// No part, or only blank text parts.
        blank: bool,
    },
    /// Any other value.
    Other(Span),
}

impl ChatContent {
    /// The same content after its bytes moved from offset `from` to offset `to`.
    fn moved(self, from: u32, to: u32) -> ChatContent {
        match self {
            ChatContent::Absent | ChatContent::Null => self,
            ChatContent::Text { text, blank } => ChatContent::Text {
                text: text.moved(from, to),
                blank,
            },
            ChatContent::Parts { span, count, blank } => ChatContent::Parts {
                span: span.moved(from, to),
                count,
                blank,
            },
            ChatContent::Other(span) => ChatContent::Other(span.moved(from, to)),
        }
    }

    /// True when the content holds something: a non-blank string or a non-blank part.
    pub fn has_content(&self) -> bool {
        match self {
            ChatContent::Text { blank, .. } | ChatContent::Parts { blank, .. } => !blank,
            ChatContent::Other(_) => true,
            ChatContent::Absent | ChatContent::Null => false,
        }
    }

    /// True when the key is there with a string or parts (blank or not).
    pub fn is_set(&self) -> bool {
        !matches!(self, ChatContent::Absent | ChatContent::Null)
    }
}

/// One entry of an assistant message's `tool_calls`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChatToolCall {
    /// The whole entry.
    pub span: Span,
    /// Its members.
    pub members_at: (u32, u32),
    /// `id`.
    pub id: Option<StrSpan>,
    /// `function.name`.
    pub name: Option<StrSpan>,
    /// True when an `extra_content` key is present.
    pub has_extra_content: bool,
    /// `extra_content.google.thought_signature` (Gemini's OpenAI-compatible endpoint).
    pub thought_signature: Option<StrSpan>,
}

/// One message of a Chat body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatMessage {
    /// The whole message object.
    pub span: Span,
    /// Its role.
    pub role: ChatRole,
    /// Its members, in order (for removing or adding one).
    pub members: Vec<Member>,
    /// `content`.
    pub content: ChatContent,
    /// `reasoning_content`, whatever its value.
    pub reasoning_content: Option<Value>,
    /// `reasoning`, whatever its value.
    pub reasoning: Option<Value>,
    /// `reasoning_details`, whatever its value.
    pub reasoning_details: Option<Value>,
    /// `tool_calls` as an array (elements' spans), when it is one.
    pub tool_calls: Option<ArrayAt>,
    /// The entries of `tool_calls`.
    pub calls: Vec<ChatToolCall>,
    /// `tool_call_id` of a tool message.
    pub tool_call_id: Option<StrSpan>,
    /// True when the message has a deprecated `function_call`.
    pub function_call: bool,
    /// True when the message has `refusal` or `audio` (an assistant message that needs no
    /// content).
    pub other_output: bool,
}

impl ChatMessage {
    /// The same message after its bytes moved from offset `from` to offset `to`, its tool
    /// calls' members taken from `prev_members` (the body it was read in) and appended to
    /// `members` (the body it moves into).
    fn moved(
        &self,
        from: u32,
        to: u32,
        prev_members: &[Member],
        members: &mut Vec<Member>,
    ) -> ChatMessage {
        let calls = self
            .calls
            .iter()
            .map(|c| {
                // A non-object entry has no span and no members: it stays as read.
                if *c == ChatToolCall::default() {
                    return *c;
                }
                let first = members.len() as u32;
                let (a, b) = c.members_at;
                members.extend(
                    prev_members
                        .get(a as usize..b as usize)
                        .unwrap_or_default()
                        .iter()
                        .map(|m| m.moved(from, to)),
                );
                ChatToolCall {
                    span: c.span.moved(from, to),
                    members_at: (first, members.len() as u32),
                    id: c.id.map(|x| x.moved(from, to)),
                    name: c.name.map(|x| x.moved(from, to)),
                    has_extra_content: c.has_extra_content,
                    thought_signature: c.thought_signature.map(|x| x.moved(from, to)),
                }
            })
            .collect();
        ChatMessage {
            span: self.span.moved(from, to),
            role: self.role,
            members: self.members.iter().map(|m| m.moved(from, to)).collect(),
            content: self.content.moved(from, to),
            reasoning_content: self.reasoning_content.map(|v| v.moved(from, to)),
            reasoning: self.reasoning.map(|v| v.moved(from, to)),
            reasoning_details: self.reasoning_details.map(|v| v.moved(from, to)),
            tool_calls: self.tool_calls.as_ref().map(|a| a.moved(from, to)),
            calls,
            tool_call_id: self.tool_call_id.map(|x| x.moved(from, to)),
            function_call: self.function_call,
            other_output: self.other_output,
        }
    }

    /// True when any vendor's reasoning field is present.
    pub fn has_reasoning_field(&self) -> bool {
        self.reasoning_content.is_some()
            || self.reasoning.is_some()
            || self.reasoning_details.is_some()
    }

    /// The index of member `name`.
    pub fn member(&self, src: &str, name: &str) -> Option<usize> {
        crate::wire::member_index(src, &self.members, name)
    }
}

/// A Chat Completions request body, read. The default is the reading of nothing: an empty text,
/// no message.
#[derive(Clone, Debug, Default)]
pub struct ChatBody<'a> {
    /// The input.
    pub src: &'a str,
    /// The top-level object.
    pub root: Span,
    /// Its members.
    pub root_members: Vec<Member>,
    /// `model`.
    pub model: Option<StrSpan>,
    /// The `messages` array.
    pub messages_at: ArrayAt,
    /// The messages.
    pub messages: Vec<ChatMessage>,
    /// How many `tools` were declared (0 without the key).
    pub tool_count: usize,
    /// `thinking.type` (DeepSeek, Kimi, GLM, Qwen take a `thinking` object).
    pub thinking_type: Option<StrSpan>,
    /// `thinking.keep` (Kimi's preserved thinking).
    pub thinking_keep: Option<StrSpan>,
    /// `enable_thinking` (Qwen / DashScope, vLLM chat templates).
    pub enable_thinking: Option<bool>,
    /// `reasoning_effort`.
    pub reasoning_effort: Option<StrSpan>,
    /// The tool calls, flat (messages index into it by [`ChatToolCall::members_at`]).
    pub call_members: Vec<Member>,
}

impl<'a> ChatBody<'a> {
    /// The model named in the body.
    pub fn model(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.model.map(|m| m.decode(self.src))
    }

    /// The members of tool call `c`.
    pub fn call_members(&self, c: &ChatToolCall) -> &[Member] {
        self.call_members
            .get(c.members_at.0 as usize..c.members_at.1 as usize)
            .unwrap_or_default()
    }
}

type R<T> = Result<T, SyntaxError>;

/// Reads a Chat Completions request body.
///
/// # Errors
/// A [`ModelError`] naming the place for invalid JSON, or a body without a `messages` array of
/// objects.
pub fn read(src: &str) -> Result<ChatBody<'_>, ModelError> {
    read_with(src, None).map(|(b, _)| b)
}

/// [`read`], against the reading of an earlier body (`prev`, over its own text): each message
/// that is, byte for byte, `prev`'s message at the same place has its reading moved over
/// instead of being scanned; the rest of the body is read as [`read`] reads it. Returns the
/// reading, equal to [`read`]'s, and how many messages were moved over.
///
/// A proxy sees each conversation again a turn longer at every request; reading it against the
/// last request's reading costs a byte comparison of what it repeats.
///
/// # Errors
/// As [`read`].
pub fn read_reusing<'a>(
    src: &'a str,
    prev: &ChatBody<'_>,
) -> Result<(ChatBody<'a>, usize), ModelError> {
    read_with(src, Some(Earlier::of(prev)))
}

/// What is kept of an earlier body's reading to read a later body against: its messages and
/// their calls' members, over the bytes of its text (only compared with the new text, so not
/// checked as UTF-8 again).
#[derive(Clone, Copy, Debug)]
pub struct Earlier<'p> {
    /// The earlier body's text, as bytes.
    pub src: &'p [u8],
    /// Its messages.
    pub messages: &'p [ChatMessage],
    /// Its tool calls' members ([`ChatBody::call_members`]).
    pub call_members: &'p [Member],
}

impl<'p> Earlier<'p> {
    /// The earlier reading `prev`.
    pub fn of(prev: &'p ChatBody<'_>) -> Earlier<'p> {
        Earlier {
            src: prev.src.as_bytes(),
            messages: &prev.messages,
            call_members: &prev.call_members,
        }
    }
}

/// [`read_reusing`] against what is kept of an earlier body's reading.
///
/// # Errors
/// As [`read`].
pub fn read_against<'a>(
    src: &'a str,
    prev: Earlier<'_>,
) -> Result<(ChatBody<'a>, usize), ModelError> {
    read_with(src, Some(prev))
}

fn read_with<'a>(
    src: &'a str,
    prev: Option<Earlier<'_>>,
) -> Result<(ChatBody<'a>, usize), ModelError> {
    let mut reused = 0;
    let mut b = ChatBody {
        src,
        root: Span::default(),
        root_members: Vec::new(),
        model: None,
        messages_at: ArrayAt::default(),
        messages: Vec::new(),
        tool_count: 0,
        thinking_type: None,
        thinking_keep: None,
        enable_thinking: None,
        reasoning_effort: None,
        call_members: Vec::new(),
    };
    let mut have_messages = false;
    let mut bad: Bad = None;
    let root = read_root(
        src,
        "expected a Chat Completions request object",
        &mut bad,
        |s, key, bad| -> R<()> {
            if key_is(src, key, "messages") && s.peek_kind()? == Kind::Array {
                have_messages = true;
                b.messages.clear();
                b.call_members.clear();
                reused = 0;
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
                    if let Some(p) = prev
                        && let Some(pm) = p.messages.get(b.messages.len())
                        && pm.span.bytes(p.src).is_some_and(|t| s.skip_verbatim(t))
                    {
                        let m = pm.moved(
                            pm.span.start,
                            at as u32,
                            p.call_members,
                            &mut b.call_members,
                        );
                        elems.push(m.span);
                        b.messages.push(m);
                        reused += 1;
                        return Ok(());
                    }
                    let m = read_message(s, &mut b.call_members)?;
                    elems.push(m.span);
                    b.messages.push(m);
                    Ok(())
                })?;
                b.messages_at = ArrayAt { span, elems };
            } else if key_is(src, key, "model") {
                b.model = s.opt_string()?;
            } else if key_is(src, key, "tools") && s.peek_kind()? == Kind::Array {
                let mut n = 0;
                s.array(|s, _| -> R<()> {
                    n += 1;
                    s.skip_value().map(|_| ())
                })?;
                b.tool_count = n;
            } else if key_is(src, key, "thinking") && s.peek_kind()? == Kind::Object {
                s.object(|s, k| -> R<()> {
                    if key_is(src, k, "type") {
                        b.thinking_type = s.opt_string()?;
                    } else if key_is(src, k, "keep") {
                        b.thinking_keep = s.opt_string()?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            } else if key_is(src, key, "enable_thinking") {
                b.enable_thinking = s.opt_bool()?;
            } else if key_is(src, key, "reasoning_effort") {
                b.reasoning_effort = s.opt_string()?;
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
            "a Chat Completions body needs a `messages` array",
        ));
    }
    Ok((b, reused))
}

fn read_message(s: &mut Scanner<'_>, call_members: &mut Vec<Member>) -> R<ChatMessage> {
    let src = s.src();
    let mut m = ChatMessage {
        span: Span::default(),
        role: ChatRole::Other,
        members: Vec::new(),
        content: ChatContent::Absent,
        reasoning_content: None,
        reasoning: None,
        reasoning_details: None,
        tool_calls: None,
        calls: Vec::new(),
        tool_call_id: None,
        function_call: false,
        other_output: false,
    };
    let mut members = Vec::new();
    let mark = call_members.len();
    m.span = s.object(|s, key| -> R<()> {
        s.skip_ws();
        let start = s.pos();
        if key_is(src, key, "role") {
            if let Some(r) = s.opt_string()? {
                m.role = ChatRole::parse(&r.decode(src));
            }
        } else if key_is(src, key, "content") {
            m.content = read_content(s)?;
        } else if key_is(src, key, "reasoning_content") {
            m.reasoning_content = Some(value(s)?);
        } else if key_is(src, key, "reasoning") {
            m.reasoning = Some(value(s)?);
        } else if key_is(src, key, "reasoning_details") {
            m.reasoning_details = Some(value(s)?);
        } else if key_is(src, key, "tool_call_id") {
            m.tool_call_id = s.opt_string()?;
        } else if key_is(src, key, "function_call") {
            m.function_call = s.peek_kind()? == Kind::Object;
            s.skip_value()?;
        } else if key_is(src, key, "refusal") || key_is(src, key, "audio") {
            m.other_output |= s.peek_kind()? != Kind::Null;
            s.skip_value()?;
        } else if key_is(src, key, "tool_calls") && s.peek_kind()? == Kind::Array {
            // A repeated `tool_calls` replaces the calls read before it, and so their members:
            // the body's members stay exactly those of the calls it keeps.
            call_members.truncate(mark);
            let mut elems = Vec::new();
            let mut calls = Vec::new();
            let span = s.array(|s, _| -> R<()> {
                s.skip_ws();
                if s.peek_kind()? != Kind::Object {
                    elems.push(s.skip_value()?);
                    calls.push(ChatToolCall::default());
                    return Ok(());
                }
                let c = read_call(s, call_members)?;
                elems.push(c.span);
                calls.push(c);
                Ok(())
            })?;
            m.tool_calls = Some(ArrayAt { span, elems });
            m.calls = calls;
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

fn read_call(s: &mut Scanner<'_>, call_members: &mut Vec<Member>) -> R<ChatToolCall> {
    let src = s.src();
    let mut c = ChatToolCall::default();
    let first = call_members.len() as u32;
    c.span = s.object(|s, key| -> R<()> {
        s.skip_ws();
        let start = s.pos();
        if key_is(src, key, "id") {
            c.id = s.opt_string()?;
        } else if key_is(src, key, "function") && s.peek_kind()? == Kind::Object {
            s.object(|s, k| -> R<()> {
                if key_is(src, k, "name") {
                    c.name = s.opt_string()?;
                } else {
                    s.skip_value()?;
                }
                Ok(())
            })?;
        } else if key_is(src, key, "extra_content") {
            c.has_extra_content = true;
            if s.peek_kind()? == Kind::Object {
                s.object(|s, k| -> R<()> {
                    if key_is(src, k, "google") && s.peek_kind()? == Kind::Object {
                        s.object(|s, k2| -> R<()> {
                            if key_is(src, k2, "thought_signature") {
                                c.thought_signature = s.opt_string()?;
                            } else {
                                s.skip_value()?;
                            }
                            Ok(())
                        })?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            } else {
                s.skip_value()?;
            }
        } else {
            s.skip_value()?;
        }
        call_members.push(Member {
            key,
            value: Span::new(start, s.pos()),
        });
        Ok(())
    })?;
    c.members_at = (first, call_members.len() as u32);
    Ok(c)
}

fn read_content(s: &mut Scanner<'_>) -> R<ChatContent> {
    let src = s.src();
    match s.peek_kind()? {
        Kind::Null => {
            s.null()?;
            Ok(ChatContent::Null)
        }
        Kind::String => {
            let text = s.string()?;
            Ok(ChatContent::Text {
                text,
                blank: text.is_blank(src),
            })
        }
        Kind::Array => {
            let mut count = 0u32;
            let mut blank = true;
            let span = s.array(|s, _| -> R<()> {
                count += 1;
                if s.peek_kind()? != Kind::Object {
                    blank = false;
                    return s.skip_value().map(|_| ());
                }
                let mut is_text = false;
                let mut text_blank = true;
                s.object(|s, k| -> R<()> {
                    if key_is(src, k, "type") {
                        is_text = s.opt_string()?.is_some_and(|t| key_is(src, t, "text"));
                    } else if key_is(src, k, "text") {
                        text_blank = s.opt_string()?.is_none_or(|t| t.is_blank(src));
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
                if !(is_text && text_blank) {
                    blank = false;
                }
                Ok(())
            })?;
            Ok(ChatContent::Parts { span, count, blank })
        }
        _ => Ok(ChatContent::Other(s.skip_value()?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kimi_tool_turn_is_read_with_its_reasoning_and_calls() {
        let src = r#"{"model":"kimi-k2-thinking","messages":[
 {"role":"system","content":"be brief"},
 {"role":"user","content":"weather?"},
 {"role":"assistant","content":"","reasoning_content":"call it","tool_calls":[{"id":"functions.get_weather:0","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
 {"role":"tool","tool_call_id":"functions.get_weather:0","content":"sunny"}],
 "tools":[{"type":"function","function":{"name":"get_weather"}}]}"#;
        let b = read(src).expect("read");
        assert_eq!(b.model().as_deref(), Some("kimi-k2-thinking"));
        assert_eq!(b.messages.len(), 4);
        assert_eq!(b.tool_count, 1);
        let roles: Vec<ChatRole> = b.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                ChatRole::System,
                ChatRole::User,
                ChatRole::Assistant,
                ChatRole::Tool
            ]
        );
        let a = &b.messages[2];
        assert!(matches!(a.content, ChatContent::Text { blank: true, .. }));
        assert!(a.reasoning_content.is_some_and(|v| v.string.is_some()));
        assert_eq!(a.calls.len(), 1);
        assert_eq!(
            a.calls[0].id.map(|i| i.raw(src)),
            Some("functions.get_weather:0")
        );
        assert_eq!(a.calls[0].name.map(|i| i.raw(src)), Some("get_weather"));
        assert_eq!(
            b.messages[3].tool_call_id.map(|i| i.raw(src)),
            Some("functions.get_weather:0")
        );
        assert_eq!(a.members.len(), 4);
        assert_eq!(b.messages_at.elems.len(), 4);
    }

    #[test]
    fn bodies_that_are_no_chat_request_are_refused_with_the_place() {
        for (src, expect) in [
            ("[1]", "expected a Chat Completions request object"),
            (
                r#"{"model":"x"}"#,
                "a Chat Completions body needs a `messages` array",
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
