//! OpenAI Responses request bodies (`POST /v1/responses`), as OpenAI, Azure, xAI, DeepSeek and
//! Bedrock's OpenAI-compatible endpoint take them.
//!
//! Field names follow the OpenAI SDK's request types (`ResponseCreateParams`, `ResponseInputItem`
//! and the item params: `response_reasoning_item_param.py`, `response_function_tool_call_param.py`,
//! ...) and api-rules-reasoning-2026-11.md §3.1: `input` is a string or an array of items, each
//! an object whose `type` names it (`message` may leave `type` out); a reasoning item carries an
//! `rs_` `id`, a `summary` array, an optional `content` array and an optional `encrypted_content`.
//! The reader records, per item, its span, its members (so a repair can remove or add one), its
//! kind and the few fields the rules read; everything else is validated and skipped.

use crate::error::ModelError;
use crate::json::{Kind, Scanner, Span, StrSpan, SyntaxError};
use crate::wire::{ArrayAt, Bad, Member, Value, key_is, read_root, value};

/// What an input item is, by its `type` (a `message` when `type` is absent and `role` present).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// `message` (with or without `type`).
    Message,
    /// `reasoning`.
    Reasoning,
    /// `function_call`.
    FunctionCall,
    /// `function_call_output`.
    FunctionCallOutput,
    /// `custom_tool_call`.
    CustomToolCall,
    /// `custom_tool_call_output`.
    CustomToolCallOutput,
    /// A call of a tool the model uses on its own or through the host (`web_search_call`,
    /// `file_search_call`, `computer_call`, `code_interpreter_call`, `local_shell_call`,
    /// `shell_call`, `apply_patch_call`, `mcp_call`, `mcp_list_tools`, `mcp_approval_request`,
    /// `image_generation_call`, `tool_search_call`): an item a model's response produces.
    HostedCall,
    /// The client's answer to a hosted call (`computer_call_output`, `local_shell_call_output`,
    /// `shell_call_output`, `apply_patch_call_output`, `mcp_approval_response`,
    /// `tool_search_output`).
    HostedOutput,
    /// `item_reference`: an item stored on the server, named by its `id`.
    ItemReference,
    /// `compaction` (an encrypted summary of earlier items, `cmp_` ids).
    Compaction,
    /// Any other `type`, or an item with neither `type` nor `role`.
    Other,
}

impl ItemKind {
    fn parse(t: &str) -> ItemKind {
        match t {
            "message" => ItemKind::Message,
            "reasoning" => ItemKind::Reasoning,
            "function_call" => ItemKind::FunctionCall,
            "function_call_output" => ItemKind::FunctionCallOutput,
            "custom_tool_call" => ItemKind::CustomToolCall,
            "custom_tool_call_output" => ItemKind::CustomToolCallOutput,
            "web_search_call"
            | "file_search_call"
            | "computer_call"
            | "code_interpreter_call"
            | "local_shell_call"
            | "shell_call"
            | "apply_patch_call"
            | "mcp_call"
            | "mcp_list_tools"
            | "mcp_approval_request"
            | "image_generation_call"
            | "tool_search_call" => ItemKind::HostedCall,
            "computer_call_output"
            | "local_shell_call_output"
            | "shell_call_output"
            | "apply_patch_call_output"
            | "mcp_approval_response"
            | "tool_search_output" => ItemKind::HostedOutput,
            "item_reference" => ItemKind::ItemReference,
            "compaction" => ItemKind::Compaction,
            _ => ItemKind::Other,
        }
    }
}

/// An item's `role` (messages only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `system`.
    System,
    /// `developer`.
    Developer,
    /// Anything else.
    Other,
}

impl Role {
    fn parse(s: &str) -> Role {
        match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" => Role::System,
            "developer" => Role::Developer,
            _ => Role::Other,
        }
    }
}

/// How an array-valued field of an item was found (`summary`, `content`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayField {
    /// No such key.
    Absent,
    /// `null`.
    Null,
    /// An array of `len` elements.
    Array {
        /// The array.
        span: Span,
        /// How many elements.
        len: u32,
    },
    /// A string (a message's `content` may be one).
    Text(StrSpan),
    /// Any other value.
    Other(Span),
}

impl ArrayField {
    /// The same field after its bytes moved from offset `from` to offset `to`.
    fn moved(self, from: u32, to: u32) -> ArrayField {
        match self {
            ArrayField::Absent | ArrayField::Null => self,
            ArrayField::Array { span, len } => ArrayField::Array {
                span: span.moved(from, to),
                len,
            },
            ArrayField::Text(t) => ArrayField::Text(t.moved(from, to)),
            ArrayField::Other(span) => ArrayField::Other(span.moved(from, to)),
        }
    }

    /// True for an array with at least one element, a non-empty string or any other value.
    pub fn is_non_empty(&self) -> bool {
        match self {
            ArrayField::Absent | ArrayField::Null => false,
            ArrayField::Array { len, .. } => *len > 0,
            ArrayField::Text(s) => !s.span.is_empty(),
            ArrayField::Other(_) => true,
        }
    }

    /// True when the key is there (whatever its value, `null` included).
    pub fn is_present(&self) -> bool {
        !matches!(self, ArrayField::Absent)
    }
}

/// A reasoning item's `encrypted_content`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encrypted {
    /// No such key.
    Absent,
    /// `null`.
    Null,
    /// A string (possibly empty).
    Text(StrSpan),
    /// Any other value.
    Other(Span),
}

impl Encrypted {
    /// The same value after its bytes moved from offset `from` to offset `to`.
    fn moved(self, from: u32, to: u32) -> Encrypted {
        match self {
            Encrypted::Absent | Encrypted::Null => self,
            Encrypted::Text(t) => Encrypted::Text(t.moved(from, to)),
            Encrypted::Other(span) => Encrypted::Other(span.moved(from, to)),
        }
    }

    /// True for a non-empty string: state the server can decrypt, with or without an `id`.
    pub fn is_set(&self) -> bool {
        matches!(self, Encrypted::Text(s) if !s.span.is_empty())
    }
}

/// One item of `input`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The whole item object.
    pub span: Span,
    /// What it is.
    pub kind: ItemKind,
    /// `type`, when present (the raw name, for reports on [`ItemKind::Other`]).
    pub type_name: Option<StrSpan>,
    /// Its members, in order (for removing or adding one).
    pub members: Vec<Member>,
    /// `role` (messages).
    pub role: Option<Role>,
    /// `id` (`rs_…`, `fc_…`, `msg_…`, `ctc_…`, ...; the referenced id of an `item_reference`).
    pub id: Option<StrSpan>,
    /// `call_id` (function and custom tool calls and their outputs, computer and shell calls).
    pub call_id: Option<StrSpan>,
    /// `name` (function and custom tool calls).
    pub name: Option<StrSpan>,
    /// `content`: a message's string or parts, a reasoning item's `reasoning_text` array.
    pub content: ArrayField,
    /// `summary` (reasoning).
    pub summary: ArrayField,
    /// `encrypted_content` (reasoning, compaction).
    pub encrypted: Encrypted,
}

impl Item {
    /// The same item after its bytes moved from offset `from` to offset `to`.
    fn moved(&self, from: u32, to: u32) -> Item {
        Item {
            span: self.span.moved(from, to),
            kind: self.kind,
            type_name: self.type_name.map(|x| x.moved(from, to)),
            members: self.members.iter().map(|m| m.moved(from, to)).collect(),
            role: self.role,
            id: self.id.map(|x| x.moved(from, to)),
            call_id: self.call_id.map(|x| x.moved(from, to)),
            name: self.name.map(|x| x.moved(from, to)),
            content: self.content.moved(from, to),
            summary: self.summary.moved(from, to),
            encrypted: self.encrypted.moved(from, to),
        }
    }

    /// The index of member `name`.
    pub fn member(&self, src: &str, name: &str) -> Option<usize> {
        crate::wire::member_index(src, &self.members, name)
    }

    /// True for an item a model's response produces, one a reasoning item can precede:
    /// an assistant message, a function or custom tool call, a hosted call. An `item_reference`
    /// and an unknown type are neither this nor its opposite (see [`Item::is_client_input`]).
    pub fn is_model_output(&self) -> bool {
        match self.kind {
            ItemKind::Message => self.role == Some(Role::Assistant),
            ItemKind::FunctionCall | ItemKind::CustomToolCall | ItemKind::HostedCall => true,
            _ => false,
        }
    }

    /// True for an item no response produces: a user, system or developer message, a tool's
    /// output (function, custom or hosted).
    pub fn is_client_input(&self) -> bool {
        match self.kind {
            ItemKind::Message => {
                matches!(self.role, Some(Role::User | Role::System | Role::Developer))
            }
            ItemKind::FunctionCallOutput
            | ItemKind::CustomToolCallOutput
            | ItemKind::HostedOutput => true,
            _ => false,
        }
    }
}

/// What `input` holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Input {
    /// No `input` key.
    #[default]
    Absent,
    /// A string (one user message).
    Text(StrSpan),
    /// An array of items (see [`ResponsesBody::items`]).
    Items,
}

/// A Responses request body, read. The default is the reading of nothing: an empty text, no
/// item.
#[derive(Clone, Debug, Default)]
pub struct ResponsesBody<'a> {
    /// The input.
    pub src: &'a str,
    /// The top-level object.
    pub root: Span,
    /// Its members.
    pub root_members: Vec<Member>,
    /// `model`.
    pub model: Option<StrSpan>,
    /// What `input` is.
    pub input: Input,
    /// The `input` array (elements' spans), when it is one.
    pub input_at: ArrayAt,
    /// The items of the `input` array.
    pub items: Vec<Item>,
    /// `store`: `Some(b)` for a boolean, `None` when absent or not a boolean (the API's default
    /// is `true`).
    pub store: Option<bool>,
    /// `previous_response_id`, when a string.
    pub previous_response_id: Option<StrSpan>,
    /// True when a `conversation` key is present and not `null` (server-held history).
    pub conversation: bool,
    /// `include`, whatever its value.
    pub include: Option<Value>,
    /// True when `include` lists `reasoning.encrypted_content`.
    pub include_encrypted: bool,
    /// `reasoning.effort`.
    pub reasoning_effort: Option<StrSpan>,
    /// `instructions`, whatever its value.
    pub instructions: Option<Value>,
    /// How many `tools` were declared (0 without the key).
    pub tool_count: usize,
}

impl<'a> ResponsesBody<'a> {
    /// The model named in the body.
    pub fn model(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.model.map(|m| m.decode(self.src))
    }

    /// True when the server holds earlier items this request continues from
    /// (`previous_response_id` or `conversation`).
    pub fn has_server_history(&self) -> bool {
        self.previous_response_id.is_some() || self.conversation
    }

    /// The location of item `i`, as reports write it.
    pub fn path(i: usize) -> String {
        format!("input[{i}]")
    }
}

type R<T> = Result<T, SyntaxError>;

/// Reads a Responses request body.
///
/// # Errors
/// A [`ModelError`] naming the place for invalid JSON, a body that is not an object, or an
/// `input` array holding something other than objects.
pub fn read(src: &str) -> Result<ResponsesBody<'_>, ModelError> {
    read_with(src, None).map(|(b, _)| b)
}

/// [`read`], against the reading of an earlier body (`prev`, over its own text): each item of
/// `input` that is, byte for byte, `prev`'s item at the same place has its reading moved over
/// instead of being scanned; the rest of the body is read as [`read`] reads it. Returns the
/// reading, equal to [`read`]'s, and how many items were moved over.
///
/// # Errors
/// As [`read`].
pub fn read_reusing<'a>(
    src: &'a str,
    prev: &ResponsesBody<'_>,
) -> Result<(ResponsesBody<'a>, usize), ModelError> {
    read_with(src, Some(Earlier::of(prev)))
}

/// What is kept of an earlier body's reading to read a later body against: its items, over the
/// bytes of its text (only compared with the new text, so not checked as UTF-8 again).
#[derive(Clone, Copy, Debug)]
pub struct Earlier<'p> {
    /// The earlier body's text, as bytes.
    pub src: &'p [u8],
    /// Its `input` items.
    pub items: &'p [Item],
}

impl<'p> Earlier<'p> {
    /// The earlier reading `prev`.
    pub fn of(prev: &'p ResponsesBody<'_>) -> Earlier<'p> {
        Earlier {
            src: prev.src.as_bytes(),
            items: &prev.items,
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
) -> Result<(ResponsesBody<'a>, usize), ModelError> {
    read_with(src, Some(prev))
}

fn read_with<'a>(
    src: &'a str,
    prev: Option<Earlier<'_>>,
) -> Result<(ResponsesBody<'a>, usize), ModelError> {
    let mut reused = 0;
    let mut b = ResponsesBody {
        src,
        root: Span::default(),
        root_members: Vec::new(),
        model: None,
        input: Input::Absent,
        input_at: ArrayAt::default(),
        items: Vec::new(),
        store: None,
        previous_response_id: None,
        conversation: false,
        include: None,
        include_encrypted: false,
        reasoning_effort: None,
        instructions: None,
        tool_count: 0,
    };
    let mut bad: Bad = None;
    let root = read_root(
        src,
        "expected a Responses request object",
        &mut bad,
        |s, key, bad| -> R<()> {
            if key_is(src, key, "input") {
                b.items.clear();
                b.input_at = ArrayAt::default();
                reused = 0;
                match s.peek_kind()? {
                    Kind::Array => {
                        b.input = Input::Items;
                        let mut elems = Vec::new();
                        let span = s.array(|s, i| -> R<()> {
                            s.skip_ws();
                            let at = s.pos();
                            if s.peek_kind()? != Kind::Object {
                                bad.get_or_insert((
                                    at,
                                    format!("input[{i}]"),
                                    "expected an input item object",
                                ));
                                elems.push(s.skip_value()?);
                                return Ok(());
                            }
                            if let Some(p) = prev
                                && let Some(pi) = p.items.get(b.items.len())
                                && pi.span.bytes(p.src).is_some_and(|t| s.skip_verbatim(t))
                            {
                                let it = pi.moved(pi.span.start, at as u32);
                                elems.push(it.span);
                                b.items.push(it);
                                reused += 1;
                                return Ok(());
                            }
                            let it = read_item(s)?;
                            elems.push(it.span);
                            b.items.push(it);
                            Ok(())
                        })?;
                        b.input_at = ArrayAt { span, elems };
                    }
                    Kind::String => b.input = Input::Text(s.string()?),
                    _ => {
                        bad.get_or_insert((
                            s.pos(),
                            "input".into(),
                            "`input` must be a string or an array of items",
                        ));
                        s.skip_value()?;
                    }
                }
            } else if key_is(src, key, "model") {
                b.model = s.opt_string()?;
            } else if key_is(src, key, "store") {
                b.store = s.opt_bool()?;
            } else if key_is(src, key, "previous_response_id") {
                b.previous_response_id = s.opt_string()?;
            } else if key_is(src, key, "conversation") {
                b.conversation = s.peek_kind()? != Kind::Null;
                s.skip_value()?;
            } else if key_is(src, key, "include") {
                let kind = s.peek_kind()?;
                let mut has = false;
                let span = if kind == Kind::Array {
                    s.array(|s, _| -> R<()> {
                        if let Some(t) = s.opt_string()? {
                            has |= key_is(src, t, "reasoning.encrypted_content");
                        }
                        Ok(())
                    })?
                } else {
                    s.skip_value()?
                };
                b.include_encrypted = has;
                b.include = Some(Value {
                    span,
                    kind,
                    string: None,
                });
            } else if key_is(src, key, "reasoning") && s.peek_kind()? == Kind::Object {
                s.object(|s, k| -> R<()> {
                    if key_is(src, k, "effort") {
                        b.reasoning_effort = s.opt_string()?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            } else if key_is(src, key, "instructions") {
                b.instructions = Some(value(s)?);
            } else if key_is(src, key, "tools") && s.peek_kind()? == Kind::Array {
                let mut n = 0;
                s.array(|s, _| -> R<()> {
                    n += 1;
                    s.skip_value().map(|_| ())
                })?;
                b.tool_count = n;
            } else {
                s.skip_value()?;
            }
            Ok(())
        },
    )?;
    b.root = root.span;
    b.root_members = root.members;
    Ok((b, reused))
}

fn read_array_field(s: &mut Scanner<'_>) -> R<ArrayField> {
    match s.peek_kind()? {
        Kind::Null => {
            s.null()?;
            Ok(ArrayField::Null)
        }
        Kind::String => Ok(ArrayField::Text(s.string()?)),
        Kind::Array => {
            let mut len = 0u32;
            let span = s.array(|s, _| -> R<()> {
                len += 1;
                s.skip_value().map(|_| ())
            })?;
            Ok(ArrayField::Array { span, len })
        }
        _ => Ok(ArrayField::Other(s.skip_value()?)),
    }
}

fn read_item(s: &mut Scanner<'_>) -> R<Item> {
    let src = s.src();
    let mut it = Item {
        span: Span::default(),
        kind: ItemKind::Other,
        type_name: None,
        members: Vec::new(),
        role: None,
        id: None,
        call_id: None,
        name: None,
        content: ArrayField::Absent,
        summary: ArrayField::Absent,
        encrypted: Encrypted::Absent,
    };
    let mut members = Vec::new();
    it.span = s.object(|s, key| -> R<()> {
        s.skip_ws();
        let start = s.pos();
        if key_is(src, key, "type") {
            it.type_name = s.opt_string()?;
        } else if key_is(src, key, "role") {
            it.role = s.opt_string()?.map(|r| Role::parse(&r.decode(src)));
        } else if key_is(src, key, "id") {
            it.id = s.opt_string()?;
        } else if key_is(src, key, "call_id") {
            it.call_id = s.opt_string()?;
        } else if key_is(src, key, "name") {
            it.name = s.opt_string()?;
        } else if key_is(src, key, "content") {
            it.content = read_array_field(s)?;
        } else if key_is(src, key, "summary") {
            it.summary = read_array_field(s)?;
        } else if key_is(src, key, "encrypted_content") {
            it.encrypted = match s.peek_kind()? {
                Kind::Null => {
                    s.null()?;
                    Encrypted::Null
                }
                Kind::String => Encrypted::Text(s.string()?),
                _ => Encrypted::Other(s.skip_value()?),
            };
        } else {
            s.skip_value()?;
        }
        members.push(Member {
            key,
            value: Span::new(start, s.pos()),
        });
        Ok(())
    })?;
    it.members = members;
    it.kind = match it.type_name {
        Some(t) => ItemKind::parse(&t.decode(src)),
        None if it.role.is_some() => ItemKind::Message,
        None => ItemKind::Other,
    };
    Ok(it)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(b: &ResponsesBody<'_>) -> Vec<ItemKind> {
        b.items.iter().map(|i| i.kind).collect()
    }

    fn raw(src: &str, s: Option<StrSpan>) -> Option<&str> {
        s.map(|s| s.raw(src))
    }

    #[test]
    fn a_stateless_tool_turn_is_read_with_its_reasoning_and_call() {
        let src = r#"{"model":"gpt-5","store":false,"include":["reasoning.encrypted_content"],
 "reasoning":{"effort":"low","summary":"auto"},"instructions":"be brief",
 "input":[
  {"role":"user","content":"weather?"},
  {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"t"}],"encrypted_content":"gAAA"},
  {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{}"},
  {"type":"function_call_output","call_id":"call_1","output":"sunny"}],
 "tools":[{"type":"function","name":"get_weather"}]}"#;
        let b = read(src).expect("read");
        assert_eq!(b.model().as_deref(), Some("gpt-5"));
        assert_eq!(b.store, Some(false));
        assert!(b.include_encrypted);
        assert_eq!(raw(src, b.reasoning_effort), Some("low"));
        assert!(b.instructions.is_some_and(|v| v.string.is_some()));
        assert_eq!(b.tool_count, 1);
        assert_eq!(b.input, Input::Items);
        assert_eq!(
            kinds(&b),
            [
                ItemKind::Message,
                ItemKind::Reasoning,
                ItemKind::FunctionCall,
                ItemKind::FunctionCallOutput
            ]
        );
        let r = &b.items[1];
        assert_eq!(raw(src, r.id), Some("rs_1"));
        assert!(matches!(r.summary, ArrayField::Array { len: 1, .. }));
        assert_eq!(r.content, ArrayField::Absent);
        assert!(r.encrypted.is_set());
        assert_eq!(r.members.len(), 4);
        assert_eq!(r.member(src, "summary"), Some(2));
        let c = &b.items[2];
        assert_eq!(raw(src, c.id), Some("fc_1"));
        assert_eq!(raw(src, c.call_id), Some("call_1"));
        assert_eq!(raw(src, c.name), Some("get_weather"));
        assert!(c.is_model_output());
        assert_eq!(raw(src, b.items[3].call_id), Some("call_1"));
        assert!(b.items[3].is_client_input());
        assert_eq!(b.items[0].role, Some(Role::User));
        assert!(matches!(b.items[0].content, ArrayField::Text(_)));
        assert_eq!(b.input_at.elems.len(), 4);
        assert_eq!(b.input_at.elems[1].get(src), b.items[1].span.get(src));
        assert!(!b.has_server_history());
    }

    #[test]
    fn every_item_type_gets_its_kind() {
        let src = r#"{"input":[
 {"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":"hi"}]},
 {"type":"reasoning","id":"rs_2","content":[{"type":"reasoning_text","text":"x"}],"encrypted_content":null},
 {"type":"reasoning","summary":null,"encrypted_content":""},
 {"type":"custom_tool_call","call_id":"c1","name":"apply","input":"x"},
 {"type":"custom_tool_call_output","call_id":"c1","output":"ok"},
 {"type":"web_search_call","id":"ws_1","status":"completed"},
 {"type":"computer_call","id":"cu_1","call_id":"c2"},
 {"type":"computer_call_output","call_id":"c2"},
 {"type":"local_shell_call","id":"lsh_1","call_id":"c3"},
 {"type":"local_shell_call_output","id":"c3","output":"x"},
 {"type":"mcp_call","id":"mcp_1"},
 {"type":"image_generation_call","id":"ig_1"},
 {"type":"code_interpreter_call","id":"ci_1"},
 {"type":"file_search_call","id":"fs_1"},
 {"type":"item_reference","id":"rs_9"},
 {"type":"compaction","id":"cmp_1","encrypted_content":"gAAA"},
 {"type":"future_thing"},
 {"content":"no type, no role"},
 {"role":"developer","content":"rules"}]}"#;
        let b = read(src).expect("read");
        assert_eq!(
            kinds(&b),
            [
                ItemKind::Message,
                ItemKind::Reasoning,
                ItemKind::Reasoning,
                ItemKind::CustomToolCall,
                ItemKind::CustomToolCallOutput,
                ItemKind::HostedCall,
                ItemKind::HostedCall,
                ItemKind::HostedOutput,
                ItemKind::HostedCall,
                ItemKind::HostedOutput,
                ItemKind::HostedCall,
                ItemKind::HostedCall,
                ItemKind::HostedCall,
                ItemKind::HostedCall,
                ItemKind::ItemReference,
                ItemKind::Compaction,
                ItemKind::Other,
                ItemKind::Other,
                ItemKind::Message,
            ]
        );
        let r = &b.items[1];
        assert_eq!(r.summary, ArrayField::Absent);
        assert!(matches!(r.content, ArrayField::Array { len: 1, .. }));
        assert!(r.content.is_non_empty());
        assert_eq!(r.encrypted, Encrypted::Null);
        assert!(!r.encrypted.is_set());
        let r2 = &b.items[2];
        assert_eq!(r2.summary, ArrayField::Null);
        assert!(r2.summary.is_present());
        assert!(matches!(r2.encrypted, Encrypted::Text(_)));
        assert!(!r2.encrypted.is_set());
        assert!(b.items[0].is_model_output());
        assert!(!b.items[14].is_model_output() && !b.items[14].is_client_input());
        assert_eq!(raw(src, b.items[14].id), Some("rs_9"));
        assert_eq!(raw(src, b.items[16].type_name), Some("future_thing"));
        assert_eq!(b.items[18].role, Some(Role::Developer));
        assert!(b.items[18].is_client_input());
    }

    #[test]
    fn string_input_and_server_history_are_read() {
        let src = r#"{"model":"o3","input":"hello","previous_response_id":"resp_1","store":true}"#;
        let b = read(src).expect("read");
        assert!(matches!(b.input, Input::Text(t) if t.raw(src) == "hello"));
        assert!(b.items.is_empty());
        assert_eq!(b.store, Some(true));
        assert!(b.has_server_history());
        let b = read(r#"{"input":[],"conversation":{"id":"conv_1"}}"#).expect("read");
        assert!(b.has_server_history());
        let b = read(r#"{"input":[],"conversation":null,"store":null}"#).expect("read");
        assert!(!b.has_server_history());
        assert_eq!(b.store, None);
    }

    #[test]
    fn bodies_that_are_no_responses_request_are_refused_with_the_place() {
        for (src, expect) in [
            ("[1]", "expected a Responses request object"),
            (
                r#"{"input":[1]}"#,
                "input[0]: expected an input item object",
            ),
            (
                r#"{"input":7}"#,
                "`input` must be a string or an array of items",
            ),
        ] {
            let e = read(src).expect_err("refused").to_string();
            assert!(e.contains(expect), "{src}: {e}");
        }
        assert!(matches!(
            read(r#"{"input":[}"#),
            Err(ModelError::Syntax { .. })
        ));
        assert!(matches!(
            read(r#"{"input":[{"type":"reasoning","summary":[}]}"#),
            Err(ModelError::Syntax { .. })
        ));
    }
}
