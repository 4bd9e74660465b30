//! The neutral transcript view every rule works on.
//!
//! A [`Transcript`] borrows its input and stores only spans: messages with a role and ordered
//! blocks, each block classified into a [`BlockKind`] with the handful of fields the rules read.
//! Blocks of all messages live in one flat vector, so a transcript of `n` messages costs two
//! allocations, not `n`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use crate::json::{Span, StrSpan};

/// The wire format a transcript was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// An Anthropic Messages API request body (`{"model", "messages", ...}`), or a response body
    /// (`{"type":"message","role":"assistant","content":[...]}`) read as one assistant message.
    Anthropic,
    /// A Gemini `generateContent` request body (`{"contents":[{"role","parts"}]}`).
    Gemini,
    /// An OpenCode session exported as a JSON array of `{info, parts}`.
    Opencode,
    /// An OpenAI Chat Completions request (`{"messages": [...]}` with OpenAI's roles and
    /// fields), as OpenAI and every OpenAI-compatible vendor take it. Read by
    /// [`wire::chat`](crate::wire::chat), not into a [`Transcript`].
    Chat,
    /// An OpenAI Responses request (`{"input": [...]}`). Read by
    /// [`wire::responses`](crate::wire::responses).
    Responses,
    /// A Bedrock Converse request (`{"messages": [{"role", "content": [{"text"}|{"toolUse"}|...]}]}`).
    /// Read by [`wire::converse`](crate::wire::converse).
    Converse,
}

impl Format {
    /// The name used on the command line and in JSON output.
    pub fn name(self) -> &'static str {
        self.name_inner()
    }

    /// True for the formats read into a [`Transcript`] (Anthropic, Gemini, OpenCode); the
    /// others are read by [`crate::wire`].
    pub fn is_transcript(self) -> bool {
        matches!(self, Format::Anthropic | Format::Gemini | Format::Opencode)
    }

    fn name_inner(self) -> &'static str {
        match self {
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Opencode => "opencode",
            Format::Chat => "chat",
            Format::Responses => "responses",
            Format::Converse => "converse",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether the body is a request (a conversation to send) or a response (one assistant turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// A request body or stored conversation.
    Request,
    /// A provider's response body: a single assistant message.
    Response,
}

/// A message's role, normalised across formats (Gemini's `model` is [`Role::Assistant`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `user`.
    User,
    /// `assistant` (Anthropic, OpenCode) or `model` (Gemini).
    Assistant,
    /// A mid-conversation `system` message (Anthropic, api-rules.md AN-30).
    System,
    /// Anything else, or a missing role.
    Other,
}

/// What a block is, for the rules. The exact wire type name is kept separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// Anthropic `thinking`, Gemini `thought: true` parts, OpenCode `reasoning` parts.
    Thinking,
    /// Anthropic `redacted_thinking`.
    RedactedThinking,
    /// Visible text.
    Text,
    /// A client tool call: Anthropic `tool_use`, Gemini `functionCall`, OpenCode `tool`.
    ToolCall,
    /// A client tool result: Anthropic `tool_result`, Gemini `functionResponse`.
    ToolResult,
    /// A call the provider runs itself: `server_tool_use`, `mcp_tool_use`, Gemini `executableCode`.
    ServerToolCall,
    /// The provider's own result: `web_search_tool_result` and the other `*_tool_result` server
    /// blocks, `mcp_tool_result`, Gemini `codeExecutionResult`.
    ServerToolResult,
    /// Images, documents, search results, files, container uploads.
    Media,
    /// Bookkeeping that carries no conversation content (OpenCode step markers, snapshots, ...;
    /// Anthropic `compaction`).
    Meta,
    /// A block type turnkeeper does not know. It is carried through untouched.
    Other,
}

impl BlockKind {
    /// True for thinking and redacted thinking.
    pub fn is_thinking(self) -> bool {
        matches!(self, BlockKind::Thinking | BlockKind::RedactedThinking)
    }
}

/// A set of [`BlockKind`]s, one bit each.
///
/// Each [`Message`] records the kinds of its blocks (and [`Draft::summary`](crate::Draft::summary)
/// keeps that true for edited messages), so a rule that only looks at, say, thinking blocks skips
/// every message without one without touching its blocks.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Kinds(u16);

impl Kinds {
    /// No kind.
    pub const EMPTY: Kinds = Kinds(0);
    /// Thinking and redacted thinking.
    pub const THINKING: Kinds = Kinds::of(BlockKind::Thinking).with(BlockKind::RedactedThinking);
    /// Server tool calls and their results.
    pub const SERVER_TOOLS: Kinds =
        Kinds::of(BlockKind::ServerToolCall).with(BlockKind::ServerToolResult);
    /// Client tool calls and results.
    pub const CLIENT_TOOLS: Kinds = Kinds::of(BlockKind::ToolCall).with(BlockKind::ToolResult);

    /// The set holding `k` only.
    pub const fn of(k: BlockKind) -> Kinds {
        Kinds(1 << k as u16)
    }
    /// This set with `k` added.
    pub const fn with(self, k: BlockKind) -> Kinds {
        Kinds(self.0 | 1 << k as u16)
    }
    /// Adds `k`.
    pub fn insert(&mut self, k: BlockKind) {
        *self = self.with(k);
    }
    /// True when `k` is in the set.
    pub const fn contains(self, k: BlockKind) -> bool {
        self.0 & (1 << k as u16) != 0
    }
    /// True when the two sets share a kind.
    pub const fn intersects(self, other: Kinds) -> bool {
        self.0 & other.0 != 0
    }
    /// True when the set holds no kind.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// True when every kind in the set is `k` (and the set is not empty).
    pub const fn is_only(self, k: BlockKind) -> bool {
        self.0 == Kinds::of(k).0
    }
}

impl fmt::Debug for Kinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ALL: [BlockKind; 10] = [
            BlockKind::Thinking,
            BlockKind::RedactedThinking,
            BlockKind::Text,
            BlockKind::ToolCall,
            BlockKind::ToolResult,
            BlockKind::ServerToolCall,
            BlockKind::ServerToolResult,
            BlockKind::Media,
            BlockKind::Meta,
            BlockKind::Other,
        ];
        f.debug_set()
            .entries(ALL.iter().filter(|k| self.contains(**k)))
            .finish()
    }
}

/// What a message's blocks hold, kept so rules can skip messages that have nothing for them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// The kinds of its blocks.
    pub kinds: Kinds,
    /// True when some block carries a field its type does not define
    /// ([`Block::has_extra_fields`]).
    pub extra_fields: bool,
    /// True when some block lacks a field its type requires ([`Block::lacks_required_field`]).
    pub missing_required: bool,
    /// True when some text block may be blank: the reader found its text empty or whitespace
    /// only, or did not look ([`Facts::text_blank`] unknown). False means every text block is
    /// known to hold text, and a rule about blank text has nothing to do here.
    pub maybe_blank_text: bool,
}

impl Summary {
    /// Adds one block to the summary.
    pub fn add(&mut self, b: &Block) {
        self.kinds.insert(b.kind());
        self.extra_fields |= b.has_extra_fields();
        self.missing_required |= b.lacks_required_field();
        self.maybe_blank_text |= b.kind() == BlockKind::Text && b.facts.text_blank != Some(false);
    }

    /// The summary of a list of blocks.
    pub fn of<'b>(blocks: impl IntoIterator<Item = &'b Block>) -> Summary {
        let mut s = Summary::default();
        for b in blocks {
            s.add(b);
        }
        s
    }
}

/// What the Anthropic reader works out about a block's strings while their bytes are in cache,
/// so that rules need not read them again from a large input. `None` means not worked out
/// (blocks from the other readers); rules then read the text themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// For a text block: its text is empty or whitespace only.
    pub text_blank: Option<bool>,
    /// For a tool call or result: its `id` or `tool_use_id` is a valid tool id
    /// ([`crate::json::is_tool_id`]).
    pub tool_id_valid: Option<bool>,
    /// For a thinking or redacted thinking block: its `signature` or `data` has no escapes, at
    /// least 8 bytes, and only base64 bytes ([`crate::json::is_base64`]).
    pub signature_base64: Option<bool>,
    /// For a block whose `content` is a list: `true` when no element of it can be what AN-06
    /// looks for inside a tool result (a `text` element whose text may be blank or is missing,
    /// an element carrying `signature` or a field another SDK leaves); `false` when one may be
    /// (the rule then reads the list itself).
    pub nested_clean: Option<bool>,
    /// For a block whose `content` is a list: `false` when no element of it is a
    /// `tool_reference` (what AN-37 looks for); `true` when one may be (an element typed so, or
    /// with an escaped `type`).
    pub nested_refs: Option<bool>,
}

/// One content block (or Gemini part, or OpenCode part), as spans into its source text.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// The whole block value.
    pub span: Span,
    /// The classification.
    pub kind: Option<BlockKind>,
    /// The wire type name (`"tool_use"`, `"functionCall"`, `"step-start"`, ...). For Anthropic and
    /// OpenCode this is the `type` field's raw contents; for Gemini a static name chosen by the
    /// reader, stored in `static_type`.
    pub type_name: Option<StrSpan>,
    /// For formats whose parts have no `type` field (Gemini), the part kind's name.
    pub static_type: Option<&'static str>,
    /// `id` of a tool call (`tool_use.id`, `server_tool_use.id`, `functionCall.id`, OpenCode
    /// `callID`).
    pub id: Option<StrSpan>,
    /// `tool_use_id` of a result (or Gemini `functionResponse.id`).
    pub tool_use_id: Option<StrSpan>,
    /// Tool name (`name`, OpenCode `tool`).
    pub name: Option<StrSpan>,
    /// The text: `text` for text blocks, `thinking` for thinking blocks.
    pub text: Option<StrSpan>,
    /// `signature` (Anthropic), `thoughtSignature` (Gemini), `metadata.anthropic.signature`
    /// (OpenCode reasoning parts).
    pub signature: Option<StrSpan>,
    /// True when a `signature` key was present, whatever its value (a non-string counts).
    pub has_signature_key: bool,
    /// `data` of a redacted thinking block.
    pub data: Option<StrSpan>,
    /// True when the block carries `cache_control`.
    pub cache_control: Option<Span>,
    /// `is_error` of a tool result.
    pub is_error: Option<bool>,
    /// The `content` value of a tool result (string or array), or the `input` of a call.
    pub content: Option<Span>,
    /// When `content` is a string, its contents.
    pub content_str: Option<StrSpan>,
    /// Gemini `thought: true`.
    pub thought: bool,
    /// OpenCode tool part state (`pending`, `running`, `completed`, `error`).
    pub state: Option<StrSpan>,
    /// OpenCode `synthetic: true`.
    pub synthetic: bool,
    /// OpenCode part `id`.
    pub part_id: Option<StrSpan>,
    /// A field another SDK left on an Anthropic block (`thoughtSignature`, `providerOptions`,
    /// ...), which the Anthropic schema rejects.
    pub foreign_key: Option<StrSpan>,
    /// What the reader found out about its strings.
    pub facts: Facts,
    /// Index of the message this block belongs to.
    pub msg: u32,
    /// Index of the block within its message.
    pub pos: u32,
}

impl Block {
    /// The classification ([`BlockKind::Other`] when unknown).
    pub fn kind(&self) -> BlockKind {
        self.kind.unwrap_or(BlockKind::Other)
    }

    /// The wire type name.
    pub fn type_name<'s>(&self, src: &'s str) -> Cow<'s, str> {
        if let Some(t) = self.static_type {
            Cow::Borrowed(t)
        } else if let Some(t) = self.type_name {
            t.decode(src)
        } else {
            Cow::Borrowed("")
        }
    }

    /// The same block after its bytes moved from offset `from` to offset `to` of a new text.
    pub fn moved(&self, from: u32, to: u32) -> Block {
        let s = |x: Option<StrSpan>| x.map(|x| x.moved(from, to));
        let p = |x: Option<Span>| x.map(|x| x.moved(from, to));
        Block {
            span: self.span.moved(from, to),
            kind: self.kind,
            type_name: s(self.type_name),
            static_type: self.static_type,
            id: s(self.id),
            tool_use_id: s(self.tool_use_id),
            name: s(self.name),
            text: s(self.text),
            signature: s(self.signature),
            has_signature_key: self.has_signature_key,
            data: s(self.data),
            cache_control: p(self.cache_control),
            is_error: self.is_error,
            content: p(self.content),
            content_str: s(self.content_str),
            thought: self.thought,
            state: s(self.state),
            synthetic: self.synthetic,
            part_id: s(self.part_id),
            foreign_key: s(self.foreign_key),
            facts: self.facts,
            msg: self.msg,
            pos: self.pos,
        }
    }

    /// The tool id the block carries: `id` of a call, `tool_use_id` of a result.
    pub fn tool_id(&self) -> Option<StrSpan> {
        match self.kind() {
            BlockKind::ToolCall => self.id,
            BlockKind::ToolResult => self.tool_use_id,
            _ => None,
        }
    }

    /// The field a thinking block's signature is in: `signature` of thinking, `data` of
    /// redacted thinking.
    pub fn signature_field(&self) -> Option<StrSpan> {
        match self.kind() {
            BlockKind::Thinking => self.signature,
            BlockKind::RedactedThinking => self.data,
            _ => None,
        }
    }

    /// True when the tool id ([`Block::tool_id`]) is a valid one ([`crate::json::is_tool_id`]):
    /// the reader's fact, or else the id itself.
    pub fn tool_id_valid(&self, src: &str) -> bool {
        self.facts
            .tool_id_valid
            .unwrap_or_else(|| self.worked_out_facts(src).tool_id_valid == Some(true))
    }

    /// True when the signature ([`Block::signature_field`]) has no escapes, at least
    /// [`crate::json::MIN_SIGNATURE_BYTES`] bytes, and only base64 bytes: the reader's fact, or
    /// else the string itself.
    pub fn signature_is_base64(&self, src: &str) -> bool {
        self.facts
            .signature_base64
            .unwrap_or_else(|| self.worked_out_facts(src).signature_base64 == Some(true))
    }

    /// The [`Facts`] of this block, worked out from `src` (what the reader records).
    pub fn worked_out_facts(&self, src: &str) -> Facts {
        let mut f = Facts::default();
        match self.kind() {
            BlockKind::Text => f.text_blank = Some(self.text.is_none_or(|t| t.is_blank(src))),
            BlockKind::ToolCall | BlockKind::ToolResult => {
                f.tool_id_valid = Some(
                    self.tool_id()
                        .is_some_and(|s| crate::json::is_tool_id(&s.decode(src))),
                );
            }
            BlockKind::Thinking | BlockKind::RedactedThinking => {
                f.signature_base64 = Some(self.signature_field().is_some_and(|s| {
                    !s.escaped
                        && s.span.len() >= crate::json::MIN_SIGNATURE_BYTES
                        && crate::json::is_base64(s.raw(src).as_bytes())
                }));
            }
            _ => {}
        }
        f
    }

    /// True when the block carries a field its type does not define: a field another SDK left
    /// ([`Block::foreign_key`]), `signature` on a block that is not thinking, or `cache_control`
    /// on a thinking block (api-rules.md AN-06). A [`BlockKind::Meta`] block may be signed: the
    /// on-demand `compaction` block comes back signed and is sent back as it came
    /// (api-rules-2026-11.md AN-36).
    pub fn has_extra_fields(&self) -> bool {
        self.foreign_key.is_some()
            || match self.kind() {
                k if k.is_thinking() => self.cache_control.is_some(),
                BlockKind::Meta => false,
                _ => self.has_signature_key,
            }
    }

    /// True when the block lacks a field its type requires (api-rules.md AN-06, "Field
    /// required"): a thinking block without `signature` or `thinking`, a `tool_use` without
    /// `input`. Only Anthropic blocks are judged.
    pub fn lacks_required_field(&self) -> bool {
        match self.kind() {
            BlockKind::Thinking => {
                self.type_name.is_some() && (!self.has_signature_key || self.text.is_none())
            }
            BlockKind::ToolCall => self.type_name.is_some() && self.content.is_none(),
            _ => false,
        }
    }

    /// True when the block's text is empty or whitespace only (text blocks) or when a tool
    /// result's content is an empty string or array.
    pub fn is_blank(&self, src: &str) -> bool {
        match self.kind() {
            BlockKind::Text => self
                .facts
                .text_blank
                .unwrap_or_else(|| self.worked_out_facts(src).text_blank == Some(true)),
            _ => false,
        }
    }
}

/// A message's content: a string, an array of blocks, or missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// `"content": "..."`.
    String(StrSpan),
    /// `"content": [...]`: blocks `range` of the transcript's flat block list.
    Blocks {
        /// Index of the first block in [`Transcript::blocks`].
        first: u32,
        /// Number of blocks.
        len: u32,
    },
    /// No content key, or a value of another type.
    Missing,
}

/// One message.
#[derive(Clone, Debug)]
pub struct Message {
    /// The whole message object.
    pub span: Span,
    /// The normalised role.
    pub role: Role,
    /// The raw role string.
    pub role_raw: Option<StrSpan>,
    /// The content.
    pub content: Content,
    /// The span of the content value (string or array), if any.
    pub content_span: Option<Span>,
    /// OpenCode message `id`.
    pub id: Option<StrSpan>,
    /// OpenCode assistant `error` present (the value span).
    pub error: Option<Span>,
    /// OpenCode error `name` (e.g. `MessageAbortedError`).
    pub error_name: Option<StrSpan>,
    /// OpenCode assistant `time.completed` present.
    pub completed: bool,
    /// What its blocks hold (filled in by the reader).
    pub summary: Summary,
}

impl Message {
    /// The same message after its bytes moved from offset `from` to offset `to` of a new text,
    /// with its blocks now starting at index `first_block` of the new flat list.
    pub fn moved(&self, from: u32, to: u32, first_block: u32) -> Message {
        let s = |x: Option<StrSpan>| x.map(|x| x.moved(from, to));
        let p = |x: Option<Span>| x.map(|x| x.moved(from, to));
        Message {
            span: self.span.moved(from, to),
            role: self.role,
            role_raw: s(self.role_raw),
            content: match self.content {
                Content::String(st) => Content::String(st.moved(from, to)),
                Content::Blocks { len, .. } => Content::Blocks {
                    first: first_block,
                    len,
                },
                Content::Missing => Content::Missing,
            },
            content_span: p(self.content_span),
            id: s(self.id),
            error: p(self.error),
            error_name: s(self.error_name),
            completed: self.completed,
            summary: self.summary,
        }
    }

    /// A message with `role` and nothing else read yet (the readers fill it in).
    pub fn empty(role: Role) -> Message {
        Message {
            span: Span::default(),
            role,
            role_raw: None,
            content: Content::Missing,
            content_span: None,
            id: None,
            error: None,
            error_name: None,
            completed: true,
            summary: Summary::default(),
        }
    }
}

/// The request's `thinking` parameter (Anthropic), or Gemini's `thinkingConfig`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThinkingParam {
    /// The whole value.
    pub span: Option<Span>,
    /// `thinking.type` as given (`enabled`, `adaptive`, `disabled`).
    pub kind: Option<StrSpan>,
    /// `thinking.budget_tokens` (Gemini: `thinkingBudget`).
    pub budget_tokens: Option<u64>,
    /// True when `thinking.block_binding.prefix_mismatch_behavior` is `drop_block`.
    pub drop_block: bool,
}

/// Request-level settings the rules look at, as spans.
#[derive(Clone, Debug, Default)]
pub struct RequestMeta {
    /// `model` (Anthropic) or `modelVersion` (responses).
    pub model: Option<StrSpan>,
    /// `thinking` (Anthropic) or `generationConfig.thinkingConfig` (Gemini).
    pub thinking: ThinkingParam,
    /// `max_tokens`.
    pub max_tokens: Option<u64>,
    /// `temperature` value span.
    pub temperature: Option<Span>,
    /// `top_p` value span.
    pub top_p: Option<Span>,
    /// `top_k` value span.
    pub top_k: Option<Span>,
    /// `tool_choice.type`.
    pub tool_choice: Option<StrSpan>,
    /// `system` value span.
    pub system: Option<Span>,
    /// `tools` value span.
    pub tools: Option<Span>,
    /// `anthropic_beta` array inside the body (Bedrock InvokeModel, api-rules.md AN-32).
    pub betas: Option<Span>,
    /// Response bodies: `stop_reason`.
    pub stop_reason: Option<StrSpan>,
    /// Response bodies: `id`.
    pub response_id: Option<StrSpan>,
    /// Every top-level key with its value span, in input order (for request-level edits).
    pub top_keys: Vec<(StrSpan, Span)>,
}

/// A transcript: the neutral view over one input text.
#[derive(Clone, Debug)]
pub struct Transcript<'a> {
    /// The input text.
    pub src: &'a str,
    /// The format it was read as.
    pub format: Format,
    /// Request or response.
    pub body: BodyKind,
    /// The whole top-level value.
    pub root: Span,
    /// The messages array (`messages`, `contents`, the export array), or for a response body the
    /// `content` array of its single message.
    pub messages_span: Option<Span>,
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// All blocks of all messages, in order.
    pub blocks: Vec<Block>,
    /// Request-level settings.
    pub meta: RequestMeta,
}

/// The blocks of message `i` of `messages`, among `blocks` (empty for string content or an index
/// out of range): [`Transcript::blocks_of`] over a reading's parts.
pub(crate) fn blocks_of<'b>(messages: &[Message], blocks: &'b [Block], i: usize) -> &'b [Block] {
    match messages.get(i).map(|m| m.content) {
        Some(Content::Blocks { first, len }) => blocks
            .get(first as usize..(first + len) as usize)
            .unwrap_or(&[]),
        _ => &[],
    }
}

impl<'a> Transcript<'a> {
    /// The blocks of message `i` (empty for string content or an index out of range).
    pub fn blocks_of(&self, i: usize) -> &[Block] {
        blocks_of(&self.messages, &self.blocks, i)
    }

    /// The index in [`Transcript::blocks`] of block `j` of message `i`.
    pub fn block_index(&self, i: usize, j: usize) -> Option<usize> {
        match self.messages.get(i)?.content {
            Content::Blocks { first, len } if (j as u32) < len => Some(first as usize + j),
            _ => None,
        }
    }

    /// The model named in the body, if any.
    pub fn model(&self) -> Option<Cow<'a, str>> {
        self.meta.model.map(|m| m.decode(self.src))
    }

    /// The `thinking.type` given in the body, if any.
    pub fn thinking_type(&self) -> Option<Cow<'a, str>> {
        self.meta.thinking.kind.map(|k| k.decode(self.src))
    }

    /// Counts blocks by wire type name (a string `content` is not a block).
    pub fn block_counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for b in &self.blocks {
            *counts
                .entry(b.type_name(self.src).into_owned())
                .or_insert(0) += 1;
        }
        counts
    }

    /// The path of message `i` in the source format (`messages[3]`, `contents[3]`, `[3]`).
    pub fn message_path(&self, i: usize) -> String {
        if self.is_export_document() {
            return export_path(true, i, None);
        }
        message_path(self.format, self.body, i)
    }

    /// True for an `opencode export` document (`{info, messages, todos}`), whose messages sit
    /// under `messages` rather than at the top level.
    fn is_export_document(&self) -> bool {
        self.format == Format::Opencode && self.messages_span.is_some_and(|m| m != self.root)
    }

    /// The path of block `j` of message `i` (`messages[3].content[2]`, `contents[1].parts[0]`).
    pub fn block_path(&self, i: usize, j: usize) -> String {
        if self.is_export_document() {
            return export_path(true, i, Some(j));
        }
        block_path(self.format, self.body, i, j)
    }
}

/// The path of message `i` of an OpenCode export, or of its part `j`: `[3]`, `[3].parts[2]`,
/// or under `messages` in an `opencode export` document (`document`: `messages[3].parts[2]`).
pub fn export_path(document: bool, i: usize, j: Option<usize>) -> String {
    let mut out = String::with_capacity(32);
    write_export_path(&mut out, document, i, j);
    out
}

/// Appends [`export_path`] to `out`, without `format!`'s machinery: the OpenCode loader writes
/// one for every record of a session it reads.
pub fn write_export_path(out: &mut String, document: bool, i: usize, j: Option<usize>) {
    fn push_index(out: &mut String, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.push('[');
        out.extend(digits[at..].iter().map(|&d| char::from(d)));
        out.push(']');
    }
    if document {
        out.push_str("messages");
    }
    push_index(out, i);
    if let Some(j) = j {
        out.push_str(".parts");
        push_index(out, j);
    }
}

/// The path of message `i` of a body of this format and kind (`messages[3]`, `contents[3]`,
/// `[3]`; empty for a response body, which is one message).
pub fn message_path(format: Format, body: BodyKind, i: usize) -> String {
    match (format, body) {
        (_, BodyKind::Response) => String::new(),
        (Format::Anthropic | Format::Chat | Format::Converse, _) => format!("messages[{i}]"),
        (Format::Responses, _) => format!("input[{i}]"),
        (Format::Gemini, _) => format!("contents[{i}]"),
        (Format::Opencode, _) => format!("[{i}]"),
    }
}

/// The path of block `j` of message `i` of a body of this format and kind
/// (`messages[3].content[2]`, `contents[1].parts[0]`, `content[2]` in a response).
pub fn block_path(format: Format, body: BodyKind, i: usize, j: usize) -> String {
    let field = match format {
        Format::Anthropic | Format::Chat | Format::Converse | Format::Responses => "content",
        Format::Gemini | Format::Opencode => "parts",
    };
    match body {
        BodyKind::Response => format!("{field}[{j}]"),
        BodyKind::Request => format!("{}.{field}[{j}]", message_path(format, body, i)),
    }
}
