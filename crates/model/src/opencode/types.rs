//! Typed views of OpenCode's stored records: messages, the 12 part types, errors, sessions.
//!
//! Shapes follow seed 003 (OpenCode's `MessageV2` structures) and opencode-storage.md §7 (the
//! schemas at v1.2.10). These are *views*: they are parsed tolerantly (unknown fields are
//! ignored, most fields are optional) and never written back. The exact stored bytes are kept
//! next to each view (see [`crate::opencode::StoredPart::raw`]), so nothing a view does not model
//! is lost.
//!
//! No serde tagged/untagged/flattened enums are used here: dispatch on `type` / `role` /
//! `status` / `name` is done by peeking that one field first and then deserializing the matching
//! struct (rust-anchors.md §3.1), so `Box<RawValue>` fields work and unknown kinds are kept.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON value kept as its exact text.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct RawJson(pub Box<RawValue>);

impl RawJson {
    /// The exact JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

/// Equal when the texts are the same JSON apart from insignificant whitespace (a pretty-printed
/// file and a compact SQLite `data` column holding the same value compare equal).
impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
            || super::convert::compact_json(self.0.get())
                == super::convert::compact_json(other.0.get())
    }
}

/// `{providerID, modelID}` as stored on user messages and subtask parts.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelRef {
    /// Provider id (`anthropic`, `openrouter`, ...).
    #[serde(rename = "providerID")]
    pub provider_id: String,
    /// Model id as the provider spells it.
    #[serde(rename = "modelID")]
    pub model_id: String,
}

/// Token counts of an assistant message or a step.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct Tokens {
    /// Total, when OpenCode recorded it.
    pub total: Option<f64>,
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Reasoning tokens.
    pub reasoning: f64,
    /// Cache reads and writes.
    pub cache: CacheTokens,
}

/// Cache token counts.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct CacheTokens {
    /// Tokens read from the cache.
    pub read: f64,
    /// Tokens written to the cache.
    pub write: f64,
}

/// `time` of a user message.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct MessageTime {
    /// Creation time, epoch milliseconds.
    pub created: i64,
    /// Completion time (assistant messages), epoch milliseconds.
    pub completed: Option<i64>,
}

/// Compaction summary attached to a user message.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct UserSummary {
    /// Summary title.
    pub title: Option<String>,
    /// Summary body.
    pub body: Option<String>,
    /// File diffs (kept as JSON values).
    pub diffs: Vec<Value>,
}

/// A user message (`role: "user"`), seed 003 "User Message".
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct UserMessage {
    /// `id` from the body, if present (the path/row id is authoritative).
    pub id: Option<String>,
    /// `sessionID` from the body, if present.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// Creation time.
    pub time: MessageTime,
    /// Compaction summary.
    pub summary: Option<UserSummary>,
    /// Agent to use.
    pub agent: Option<String>,
    /// Model for this message.
    pub model: Option<ModelRef>,
    /// Extra system prompt.
    pub system: Option<String>,
    /// Tool overrides (deprecated upstream).
    pub tools: Option<std::collections::BTreeMap<String, bool>>,
    /// Reasoning variant.
    pub variant: Option<String>,
    /// Output format (`{type:"text"}` or a JSON schema), kept as JSON.
    pub format: Option<Value>,
}

/// `path` of an assistant message.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct MessagePath {
    /// Working directory.
    pub cwd: String,
    /// Project root.
    pub root: String,
}

/// An assistant message (`role: "assistant"`), seed 003 "Assistant Message".
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct AssistantMessage {
    /// `id` from the body, if present.
    pub id: Option<String>,
    /// `sessionID` from the body, if present.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// Creation and completion times.
    pub time: MessageTime,
    /// The error the message ended with, if any.
    pub error: Option<MessageError>,
    /// The user message this answers.
    #[serde(rename = "parentID")]
    pub parent_id: Option<String>,
    /// Model that produced it.
    #[serde(rename = "modelID")]
    pub model_id: Option<String>,
    /// Provider that produced it.
    #[serde(rename = "providerID")]
    pub provider_id: Option<String>,
    /// Deprecated agent name.
    pub mode: Option<String>,
    /// Agent that generated it.
    pub agent: Option<String>,
    /// Working directory and project root.
    pub path: Option<MessagePath>,
    /// True for a compaction summary.
    pub summary: Option<bool>,
    /// Cumulative cost in USD.
    pub cost: Option<f64>,
    /// Token counts.
    pub tokens: Option<Tokens>,
    /// Provider finish reason (`stop`, `tool-calls`, ...).
    pub finish: Option<String>,
    /// Reasoning variant.
    pub variant: Option<String>,
}

/// The typed view of a message's info, chosen by its `role`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MessageInfo {
    /// `role: "user"`.
    User(UserMessage),
    /// `role: "assistant"`.
    Assistant(AssistantMessage),
    /// Any other role; kept only through the raw bytes.
    Unknown {
        /// The role found.
        role: String,
    },
}

impl MessageInfo {
    /// Creation time (`time.created`), 0 when unknown.
    pub fn created(&self) -> i64 {
        match self {
            MessageInfo::User(u) => u.time.created,
            MessageInfo::Assistant(a) => a.time.created,
            MessageInfo::Unknown { .. } => 0,
        }
    }
}

/// Data of an `APIError`.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct ApiErrorData {
    /// Error message.
    pub message: String,
    /// HTTP status.
    pub status_code: Option<i64>,
    /// Whether OpenCode would retry.
    pub is_retryable: bool,
    /// Response headers.
    pub response_headers: Option<std::collections::BTreeMap<String, String>>,
    /// Response body as text.
    pub response_body: Option<String>,
    /// Extra metadata.
    pub metadata: Option<std::collections::BTreeMap<String, String>>,
}

/// The error an assistant message ended with (or a retry part records), chosen by `name`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MessageError {
    /// `APIError`: the provider answered with an error.
    Api(ApiErrorData),
    /// `ProviderAuthError`.
    ProviderAuth {
        /// Provider id.
        provider_id: String,
        /// Message.
        message: String,
    },
    /// `MessageOutputLengthError`: the output hit the length limit.
    OutputLength,
    /// `MessageAbortedError`: the user aborted the turn.
    Aborted {
        /// Message.
        message: String,
    },
    /// Any other named error (`UnknownError`, `ContextOverflowError`, ...).
    Other {
        /// The `name` field.
        name: String,
        /// `data.message`, when present.
        message: Option<String>,
    },
}

impl MessageError {
    /// True for `MessageAbortedError`.
    pub fn is_aborted(&self) -> bool {
        matches!(self, MessageError::Aborted { .. })
    }
}

impl<'de> Deserialize<'de> for MessageError {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Loose {
            #[serde(default)]
            name: String,
            #[serde(default)]
            data: Option<Value>,
        }
        let loose = Loose::deserialize(d)?;
        let data = loose.data.unwrap_or(Value::Null);
        let text = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(match loose.name.as_str() {
            "APIError" => MessageError::Api(
                serde_json::from_value::<ApiErrorData>(data.clone()).unwrap_or_else(|_| {
                    ApiErrorData {
                        message: text("message").unwrap_or_default(),
                        ..ApiErrorData::default()
                    }
                }),
            ),
            "ProviderAuthError" => MessageError::ProviderAuth {
                provider_id: text("providerID").unwrap_or_default(),
                message: text("message").unwrap_or_default(),
            },
            "MessageOutputLengthError" => MessageError::OutputLength,
            "MessageAbortedError" => MessageError::Aborted {
                message: text("message").unwrap_or_default(),
            },
            _ => MessageError::Other {
                message: text("message"),
                name: loose.name,
            },
        })
    }
}

/// `time` of text and reasoning parts.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct PartTime {
    /// Start, epoch milliseconds.
    pub start: i64,
    /// End, when the part finished streaming.
    pub end: Option<i64>,
}

/// `text`: user input or assistant output.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TextPart {
    /// The text.
    pub text: String,
    /// System-generated, not typed by the user.
    #[serde(default)]
    pub synthetic: Option<bool>,
    /// Excluded from the model context.
    #[serde(default)]
    pub ignored: Option<bool>,
    /// Streaming times.
    #[serde(default)]
    pub time: Option<PartTime>,
    /// Provider metadata.
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// `{value, start, end}`: a span of the prompt text.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct SourceText {
    /// The text.
    pub value: String,
    /// Start offset.
    pub start: i64,
    /// End offset.
    pub end: i64,
}

/// Where a file part came from (`file`, `symbol` or `resource`).
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct FilePartSource {
    /// `file`, `symbol` or `resource`.
    #[serde(rename = "type")]
    pub kind: String,
    /// File path (`file`, `symbol`).
    pub path: Option<String>,
    /// The referenced text.
    pub text: Option<SourceText>,
    /// LSP range (`symbol`).
    pub range: Option<Value>,
    /// Symbol name (`symbol`).
    pub name: Option<String>,
    /// MCP client name (`resource`).
    pub client_name: Option<String>,
    /// Resource URI (`resource`).
    pub uri: Option<String>,
}

/// `file`: an attachment.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FilePart {
    /// MIME type.
    pub mime: String,
    /// File name.
    #[serde(default)]
    pub filename: Option<String>,
    /// `data:` or `file:` URL.
    pub url: String,
    /// Origin info.
    #[serde(default)]
    pub source: Option<FilePartSource>,
}

/// Times of a tool state.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct ToolTime {
    /// Start, epoch milliseconds.
    pub start: i64,
    /// End.
    pub end: Option<i64>,
    /// Set when the output was compacted away.
    pub compacted: Option<i64>,
}

/// A JSON string as a record holds it: the literal, quotes and escapes included, in the escaping
/// serde_json writes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
/// `\u00xx`, everything else as it is; a record escaped otherwise, say `\/` or `\u00e9`, is
/// decoded and escaped that way when it is read). A tool's output is most of a session, and
/// converting the session to a request writes this literal as it is: serde_json would write the
/// same bytes for the decoded text, which is never decoded nor escaped again.
#[derive(Clone, PartialEq, Eq)]
pub struct JsonText(Box<str>);

impl JsonText {
    /// `text`, escaped.
    pub fn new(text: &str) -> JsonText {
        let mut out = String::with_capacity(text.len() + 2);
        crate::json::write_string_as_serde(&mut out, text);
        JsonText(out.into_boxed_str())
    }

    /// The literal, quotes included.
    pub fn literal(&self) -> &str {
        &self.0
    }

    /// The decoded text (borrowed when it has no escape).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        let inner = &self.0[1..self.0.len() - 1];
        if inner.contains('\\') {
            std::borrow::Cow::Owned(crate::json::unescape(inner))
        } else {
            std::borrow::Cow::Borrowed(inner)
        }
    }

    /// The length of the decoded text, in bytes, at most (the literal's, without its quotes).
    pub fn escaped_len(&self) -> usize {
        self.0.len() - 2
    }
}

impl Default for JsonText {
    fn default() -> Self {
        JsonText::new("")
    }
}

impl std::fmt::Debug for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// True when `inner`, the text between a validated string literal's quotes, has only the escapes
/// serde_json writes (see [`JsonText`]). Only `\u` and `\/` escapes can differ from those (the
/// other escapes of validated text are serde's own), so only they are looked at: each found with
/// `memchr`'s substring search, and taken as an escape when an odd run of backslashes ends at it
/// (`\\u` is an escaped backslash, then a `u`).
fn escaped_as_serde(inner: &str) -> bool {
    let b = inner.as_bytes();
    let escape_at = |i: usize| b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0;
    if memchr::memmem::find_iter(b, b"\\/").any(escape_at) {
        return false;
    }
    // serde_json writes `\u00xx`, lower-case, for a control character without a short form
    // (all below 0x20 but `\b` 08, `\t` 09, `\n` 0a, `\f` 0c, `\r` 0d).
    memchr::memmem::find_iter(b, b"\\u").all(|i| {
        !escape_at(i)
            || matches!(
                b.get(i + 2..i + 6),
                Some(
                    [b'0', b'0', b'0', b'0'..=b'7' | b'b' | b'e' | b'f']
                    | [b'0', b'0', b'1', b'0'..=b'9' | b'a'..=b'f'],
                )
            )
    })
}

impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        // The literal, checked as serde checks any value (escapes, control characters).
        let raw = Box::<RawValue>::deserialize(d)?;
        let literal = raw.get();
        if let Some(inner) = literal.strip_prefix('"').and_then(|l| l.strip_suffix('"'))
            && escaped_as_serde(inner)
        {
            return Ok(JsonText(raw.into()));
        }
        // Another escaping, decoded (which refuses a lone surrogate, as a `String` does) and
        // escaped as serde_json does; or no string, refused as a `String` refuses it.
        let text: String = serde_json::from_str(literal).map_err(D::Error::custom)?;
        Ok(JsonText::new(&text))
    }
}

/// `pending`: the call is streaming.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct ToolPending {
    /// Partial input.
    pub input: Option<RawJson>,
    /// Raw input text streamed so far.
    pub raw: Option<String>,
}

/// `running`: the tool is executing.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct ToolRunning {
    /// Input.
    pub input: Option<RawJson>,
    /// Display title.
    pub title: Option<String>,
    /// Metadata.
    pub metadata: Option<Value>,
    /// Start time.
    pub time: Option<ToolTime>,
}

/// `completed`: the tool returned.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct ToolCompleted {
    /// Input.
    pub input: Option<RawJson>,
    /// Output text, as the record holds it (decoded by [`JsonText::text`]).
    pub output: JsonText,
    /// Display title.
    pub title: Option<String>,
    /// Metadata.
    pub metadata: Option<Value>,
    /// Times; `compacted` set means the output was cleared.
    pub time: Option<ToolTime>,
    /// Files returned by the tool (file parts, kept as JSON).
    pub attachments: Option<Vec<Value>>,
}

/// `error`: the tool failed (or was aborted).
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct ToolFailed {
    /// Input.
    pub input: Option<RawJson>,
    /// Error text.
    pub error: String,
    /// Metadata.
    pub metadata: Option<Value>,
    /// Times.
    pub time: Option<ToolTime>,
}

/// The state of a tool part, chosen by `status`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolState {
    /// `pending`.
    Pending(ToolPending),
    /// `running`.
    Running(ToolRunning),
    /// `completed`.
    Completed(ToolCompleted),
    /// `error`.
    Error(ToolFailed),
    /// Any other status.
    Unknown {
        /// The status found.
        status: String,
        /// The input, if any.
        input: Option<RawJson>,
    },
}

impl ToolState {
    /// The call's input as stored (`None` when absent).
    pub fn input(&self) -> Option<&RawJson> {
        match self {
            ToolState::Pending(s) => s.input.as_ref(),
            ToolState::Running(s) => s.input.as_ref(),
            ToolState::Completed(s) => s.input.as_ref(),
            ToolState::Error(s) => s.input.as_ref(),
            ToolState::Unknown { input, .. } => input.as_ref(),
        }
    }

    /// The `status` string.
    pub fn status(&self) -> &str {
        match self {
            ToolState::Pending(_) => "pending",
            ToolState::Running(_) => "running",
            ToolState::Completed(_) => "completed",
            ToolState::Error(_) => "error",
            ToolState::Unknown { status, .. } => status,
        }
    }
}

/// Every field of every tool state, so that [`OnePassToolPart`] reads a state in the same pass
/// as its part: when this reads, the per-status struct would read the same values (its fields
/// are a subset, with the same types and defaults, and a duplicate of any of them fails here as
/// it would there). When it does not (say a `pending` state with a numeric `output`, which
/// `pending` ignores), [`parse_part`] reads the part as a [`ToolPart`], its state status first.
#[derive(Deserialize, Default)]
#[serde(default)]
struct LooseState {
    status: String,
    input: Option<RawJson>,
    raw: Option<String>,
    title: Option<String>,
    metadata: Option<Value>,
    time: Option<ToolTime>,
    output: JsonText,
    attachments: Option<Vec<Value>>,
    error: String,
}

impl LooseState {
    fn into_state(self) -> ToolState {
        let LooseState {
            status,
            input,
            raw,
            title,
            metadata,
            time,
            output,
            attachments,
            error,
        } = self;
        match status.as_str() {
            "pending" => ToolState::Pending(ToolPending { input, raw }),
            "running" => ToolState::Running(ToolRunning {
                input,
                title,
                metadata,
                time,
            }),
            "completed" => ToolState::Completed(ToolCompleted {
                input,
                output,
                title,
                metadata,
                time,
                attachments,
            }),
            "error" => ToolState::Error(ToolFailed {
                input,
                error,
                metadata,
                time,
            }),
            _ => ToolState::Unknown { status, input },
        }
    }
}

impl<'de> Deserialize<'de> for ToolState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Peek {
            #[serde(default)]
            status: String,
            #[serde(default)]
            input: Option<RawJson>,
        }
        let raw = Box::<RawValue>::deserialize(d)?;
        let text = raw.get();
        let peek: Peek = serde_json::from_str(text).map_err(D::Error::custom)?;
        Ok(match peek.status.as_str() {
            "pending" => ToolState::Pending(serde_json::from_str(text).map_err(D::Error::custom)?),
            "running" => ToolState::Running(serde_json::from_str(text).map_err(D::Error::custom)?),
            "completed" => {
                ToolState::Completed(serde_json::from_str(text).map_err(D::Error::custom)?)
            }
            "error" => ToolState::Error(serde_json::from_str(text).map_err(D::Error::custom)?),
            _ => ToolState::Unknown {
                status: peek.status,
                input: peek.input,
            },
        })
    }
}

/// `tool`: one tool call through its life.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolPart {
    /// The provider's tool-call id (`toolu_…`).
    #[serde(rename = "callID")]
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// Lifecycle state.
    pub state: ToolState,
    /// Provider metadata of the call.
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// [`ToolPart`] with its state read in the same pass ([`LooseState`]): when this reads, the
/// [`ToolPart`] would read the same; when it does not, [`parse_part`] reads a [`ToolPart`] and
/// reports its error.
#[derive(Deserialize)]
struct OnePassToolPart {
    #[serde(rename = "callID")]
    call_id: String,
    tool: String,
    state: LooseState,
    #[serde(default)]
    metadata: Option<Value>,
}

impl OnePassToolPart {
    fn into_part(self) -> ToolPart {
        ToolPart {
            call_id: self.call_id,
            tool: self.tool,
            state: self.state.into_state(),
            metadata: self.metadata,
        }
    }
}

/// `reasoning`: a thinking block as OpenCode stores it.
///
/// For Anthropic, the signature lives in `metadata.anthropic.signature` and redacted thinking is
/// an empty-text reasoning part with `metadata.anthropic.redactedData` (opencode-storage.md
/// §7.4; peers.md §1.6).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReasoningPart {
    /// The thinking text.
    pub text: String,
    /// Provider metadata.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// Streaming times (required upstream; absent means damaged or foreign).
    #[serde(default)]
    pub time: Option<PartTime>,
}

impl ReasoningPart {
    /// `metadata.anthropic.signature`, when it is a string.
    pub fn anthropic_signature(&self) -> Option<&str> {
        anthropic_meta(self.metadata.as_ref(), "signature")
    }

    /// `metadata.anthropic.redactedData`, when it is a string.
    pub fn anthropic_redacted_data(&self) -> Option<&str> {
        anthropic_meta(self.metadata.as_ref(), "redactedData")
    }
}

pub(crate) fn anthropic_meta<'a>(meta: Option<&'a Value>, key: &str) -> Option<&'a str> {
    meta?.get("anthropic")?.get(key)?.as_str()
}

/// `agent`: the user invoked `@agent`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AgentPart {
    /// Agent name.
    pub name: String,
    /// Position in the prompt.
    #[serde(default)]
    pub source: Option<SourceText>,
}

/// `subtask`: a pending Task-tool execution.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SubtaskPart {
    /// Task prompt.
    pub prompt: String,
    /// Short description.
    #[serde(default)]
    pub description: String,
    /// Sub-agent.
    #[serde(default)]
    pub agent: String,
    /// Model override.
    #[serde(default)]
    pub model: Option<ModelRef>,
    /// Originating command.
    #[serde(default)]
    pub command: Option<String>,
}

/// `compaction`: a compaction request.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct CompactionPart {
    /// Triggered automatically (vs. by the user).
    pub auto: bool,
}

/// `step-start`: a model step begins.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct StepStartPart {
    /// Git snapshot hash.
    pub snapshot: Option<String>,
}

/// `step-finish`: a model step ended.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct StepFinishPart {
    /// Finish reason.
    pub reason: Option<String>,
    /// Git snapshot hash.
    pub snapshot: Option<String>,
    /// Step cost in USD.
    pub cost: Option<f64>,
    /// Step tokens.
    pub tokens: Option<Tokens>,
}

/// `snapshot`: a filesystem snapshot.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SnapshotPart {
    /// Snapshot id.
    pub snapshot: String,
}

/// `patch`: files changed by a step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PatchPart {
    /// Patch hash.
    pub hash: String,
    /// Changed paths.
    #[serde(default)]
    pub files: Vec<String>,
}

/// `{created}` times.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct CreatedTime {
    /// Epoch milliseconds.
    pub created: i64,
}

/// `retry`: a retried API call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RetryPart {
    /// Attempt number.
    #[serde(default)]
    pub attempt: i64,
    /// The error that caused the retry.
    #[serde(default)]
    pub error: Option<MessageError>,
    /// When.
    #[serde(default)]
    pub time: Option<CreatedTime>,
}

/// The typed view of a part, chosen by its `type` (seed 003 "Part Types").
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Part {
    /// `text`.
    Text(TextPart),
    /// `file`.
    File(FilePart),
    /// `tool`.
    Tool(ToolPart),
    /// `reasoning`.
    Reasoning(ReasoningPart),
    /// `agent`.
    Agent(AgentPart),
    /// `subtask`.
    Subtask(SubtaskPart),
    /// `compaction`.
    Compaction(CompactionPart),
    /// `step-start`.
    StepStart(StepStartPart),
    /// `step-finish`.
    StepFinish(StepFinishPart),
    /// `snapshot`.
    Snapshot(SnapshotPart),
    /// `patch`.
    Patch(PatchPart),
    /// `retry`.
    Retry(RetryPart),
    /// Any other type (plugins write `thinking`, `tool_use`, ...); kept through the raw bytes.
    Unknown {
        /// The `type` found.
        kind: String,
    },
}

impl Part {
    /// The `type` string of this part.
    pub fn kind(&self) -> &str {
        match self {
            Part::Text(_) => "text",
            Part::File(_) => "file",
            Part::Tool(_) => "tool",
            Part::Reasoning(_) => "reasoning",
            Part::Agent(_) => "agent",
            Part::Subtask(_) => "subtask",
            Part::Compaction(_) => "compaction",
            Part::StepStart(_) => "step-start",
            Part::StepFinish(_) => "step-finish",
            Part::Snapshot(_) => "snapshot",
            Part::Patch(_) => "patch",
            Part::Retry(_) => "retry",
            Part::Unknown { kind } => kind,
        }
    }
}

/// Ids found inside a stored body (the location's ids are authoritative).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct BodyIds {
    /// `id`.
    pub id: Option<String>,
    /// `sessionID`.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// `messageID`.
    #[serde(rename = "messageID")]
    pub message_id: Option<String>,
}

/// What is read of a record before its typed parse: the discriminant (`type` of a part, `role`
/// of a message) and the ids. Spelled out rather than `#[serde(flatten)]`ed from [`BodyIds`]:
/// flatten buffers every other field of the record (a tool's whole output) to pick these out.
/// Both discriminants are read leniently (a value that is not a string counts as absent), so a
/// part with a `role` field of its own, or a message with a `type`, still reads.
#[derive(Deserialize)]
struct Peek {
    #[serde(default, rename = "type", deserialize_with = "string_or_none")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "string_or_none")]
    role: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default, rename = "sessionID")]
    session_id: Option<String>,
    #[serde(default, rename = "messageID")]
    message_id: Option<String>,
}

/// A string value, or `None` for any other JSON value.
fn string_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// The ids of a record as `serde_json::from_str::<BodyIds>` reads them, with a failed reading
/// giving no ids; in one pass of the scanner when [`quick_peeked`] can.
pub(crate) fn body_ids(json: &str) -> BodyIds {
    match quick_peeked(json) {
        Some(p) => p.ids,
        None => serde_json::from_str(json).unwrap_or_default(),
    }
}

/// [`peek`]'s common case in one pass of the crate's scanner, which skips long strings (a tool's
/// output) faster than serde's `IgnoredAny` does. `None` when the record is anything but a plain
/// object (see [`peek_object`]); then serde reads it, so the result and every error are serde's.
fn quick_peeked(json: &str) -> Option<Peeked> {
    let mut sc = crate::json::Scanner::new(json).ok()?;
    let (_, peeked) = peek_object(&mut sc).ok()?;
    sc.finish().ok()?;
    peeked
}

/// What the scanner read of a record in passing: its discriminants (`None` when absent or not
/// a string, as `string_or_none` reads them) and its ids, for [`parse_part_peeked`] and
/// [`parse_message_peeked`]. Only made when serde's [`Peek`] would read the same.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Peeked {
    kind: Option<String>,
    role: Option<String>,
    ids: BodyIds,
}

impl Peeked {
    /// The discriminant `key` (`"type"` or `"role"`, `None` when absent or not a string) and
    /// the ids.
    fn discriminant(self, key: &str) -> (Option<String>, BodyIds) {
        (if key == "type" { self.kind } else { self.role }, self.ids)
    }
}

/// Reads the object at the scanner's position (any other value is an error), returning its
/// span and, when nothing in it is unusual, its [`Peeked`]. An unusual record is still read to
/// its end, so a caller reading a larger document can go on.
///
/// When this returns a [`Peeked`], serde's reading of [`Peek`] returns the same: the scanner
/// accepts only strict JSON, the five keys [`Peek`] knows must each appear at most once (serde
/// rejects duplicates), keys and discriminants must be spelled without escapes, the
/// discriminants follow `string_or_none`, and an id must be an unescaped string or null.
///
/// # Errors
/// On a syntax error.
pub(crate) fn peek_object(
    sc: &mut crate::json::Scanner<'_>,
) -> Result<(crate::json::Span, Option<Peeked>), crate::json::SyntaxError> {
    use crate::json::Kind;
    let json = sc.src();
    let mut unusual = false;
    let mut kind: Option<Option<String>> = None;
    let mut role: Option<Option<String>> = None;
    let mut ids: [Option<Option<String>>; 3] = [None, None, None];
    let span = sc.object(|sc, k| {
        // A key spelled with escapes could still be one of ours: serde decides.
        let name = if k.escaped { "" } else { k.raw(json) };
        let slot = match name {
            "type" | "role" => {
                let slot = if name == "type" { &mut kind } else { &mut role };
                if slot.is_some() {
                    unusual = true;
                    sc.skip_value()?;
                    return Ok(());
                }
                let v = sc.opt_string()?;
                unusual |= v.is_some_and(|v| v.escaped);
                *slot = Some(v.map(|v| v.raw(json).to_owned()));
                return Ok(());
            }
            "id" => 0,
            "sessionID" => 1,
            "messageID" => 2,
            _ => {
                unusual |= k.escaped;
                sc.skip_value()?;
                return Ok(());
            }
        };
        if ids[slot].is_some() {
            unusual = true;
            sc.skip_value()?;
            return Ok(());
        }
        ids[slot] = Some(match sc.peek_kind()? {
            Kind::Null => {
                sc.null()?;
                None
            }
            Kind::String => {
                let v = sc.string()?;
                unusual |= v.escaped;
                Some(v.raw(json).to_owned())
            }
            _ => {
                unusual = true;
                sc.skip_value()?;
                None
            }
        });
        Ok(())
    })?;
    if unusual {
        return Ok((span, None));
    }
    let [id, session_id, message_id] = ids;
    Ok((
        span,
        Some(Peeked {
            kind: kind.flatten(),
            role: role.flatten(),
            ids: BodyIds {
                id: id.flatten(),
                session_id: session_id.flatten(),
                message_id: message_id.flatten(),
            },
        }),
    ))
}

/// Reads the [`Peek`] of a record and returns its discriminant `key` (`"type"` or `"role"`, an
/// error when missing) with its ids: from `peeked` when a scanner already read the record in
/// passing, else read now. Records are objects: a derived struct also accepts an array of its
/// fields, which no OpenCode record is (a broken array is still invalid JSON).
fn peek(
    json: &str,
    key: &'static str,
    peeked: Option<Peeked>,
) -> Result<(String, BodyIds), serde_json::Error> {
    match peeked
        .or_else(|| quick_peeked(json))
        .map(|p| p.discriminant(key))
    {
        Some((Some(discriminant), ids)) => Ok((discriminant, ids)),
        _ => serde_peek(json, key),
    }
}

/// [`peek`] by serde alone: the reading whose results and errors [`quick_peeked`] reproduces.
fn serde_peek(json: &str, key: &'static str) -> Result<(String, BodyIds), serde_json::Error> {
    use serde::de::Error as _;
    if json.trim_start().starts_with('[') {
        serde_json::from_str::<serde::de::IgnoredAny>(json)?;
        return Err(serde_json::Error::custom(
            "expected a JSON object, found an array",
        ));
    }
    let p: Peek = serde_json::from_str(json)?;
    let discriminant = if key == "type" { p.kind } else { p.role };
    let discriminant = discriminant.ok_or_else(|| serde_json::Error::missing_field(key))?;
    let ids = BodyIds {
        id: p.id,
        session_id: p.session_id,
        message_id: p.message_id,
    };
    Ok((discriminant, ids))
}

/// Parses the typed view of a part from its JSON text.
///
/// # Errors
/// The serde error when the text is not JSON, has no string `type`, or a known type lacks a
/// required field.
pub fn parse_part(json: &str) -> Result<(BodyIds, Part), serde_json::Error> {
    parse_part_peeked(json, None)
}

/// [`parse_part`] with what a scanner already read of the part in passing.
pub(crate) fn parse_part_peeked(
    json: &str,
    peeked: Option<Peeked>,
) -> Result<(BodyIds, Part), serde_json::Error> {
    let (kind, ids) = peek(json, "type", peeked)?;
    let part = match kind.as_str() {
        "text" => Part::Text(serde_json::from_str(json)?),
        "file" => Part::File(serde_json::from_str(json)?),
        "tool" => Part::Tool(match serde_json::from_str::<OnePassToolPart>(json) {
            Ok(p) => p.into_part(),
            Err(_) => serde_json::from_str(json)?,
        }),
        "reasoning" => Part::Reasoning(serde_json::from_str(json)?),
        "agent" => Part::Agent(serde_json::from_str(json)?),
        "subtask" => Part::Subtask(serde_json::from_str(json)?),
        "compaction" => Part::Compaction(serde_json::from_str(json)?),
        "step-start" => Part::StepStart(serde_json::from_str(json)?),
        "step-finish" => Part::StepFinish(serde_json::from_str(json)?),
        "snapshot" => Part::Snapshot(serde_json::from_str(json)?),
        "patch" => Part::Patch(serde_json::from_str(json)?),
        "retry" => Part::Retry(serde_json::from_str(json)?),
        _ => Part::Unknown { kind },
    };
    Ok((ids, part))
}

/// Parses the typed view of a message info from its JSON text.
///
/// # Errors
/// The serde error when the text is not JSON, has no string `role`, or a field has the wrong
/// type.
pub fn parse_message(json: &str) -> Result<(BodyIds, MessageInfo), serde_json::Error> {
    parse_message_peeked(json, None)
}

/// [`parse_message`] with what a scanner already read of the message in passing.
pub(crate) fn parse_message_peeked(
    json: &str,
    peeked: Option<Peeked>,
) -> Result<(BodyIds, MessageInfo), serde_json::Error> {
    let (role, ids) = peek(json, "role", peeked)?;
    let info = match role.as_str() {
        "user" => MessageInfo::User(serde_json::from_str(json)?),
        "assistant" => MessageInfo::Assistant(serde_json::from_str(json)?),
        _ => MessageInfo::Unknown { role },
    };
    Ok((ids, info))
}

/// `time` of a session.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(default)]
pub struct SessionTime {
    /// Created, epoch milliseconds.
    pub created: i64,
    /// Last updated.
    pub updated: i64,
    /// Set while compaction runs.
    pub compacting: Option<i64>,
    /// Set when archived.
    pub archived: Option<i64>,
}

/// The session record (opencode-storage.md §7.1; SQLite columns §5.3).
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionInfo {
    /// Session id (`ses_…`); the path/row id is authoritative.
    pub id: String,
    /// Short slug.
    pub slug: Option<String>,
    /// Project id (root-commit hash or `global`).
    #[serde(rename = "projectID")]
    pub project_id: Option<String>,
    /// Directory the session was created in.
    pub directory: Option<String>,
    /// Parent session (sub-agent sessions).
    #[serde(rename = "parentID")]
    pub parent_id: Option<String>,
    /// Title.
    pub title: String,
    /// OpenCode version that created it.
    pub version: Option<String>,
    /// Times.
    pub time: SessionTime,
    /// Summary (additions, deletions, files, ...), kept as JSON.
    pub summary: Option<Value>,
    /// Share info, kept as JSON.
    pub share: Option<Value>,
    /// Pending revert marker, kept as JSON.
    pub revert: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records the fast readings are checked on: ordinary parts and messages, and every
    /// way a record can make them give up or differ (escapes, duplicates, ill-typed ids and
    /// states, arrays, trailing bytes, broken JSON).
    const RECORDS: &[&str] = &[
        r#"{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"text","text":"hi"}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","input":{"cmd":"ls"},"output":"a\nb","title":"ls","metadata":{"x":1},"time":{"start":1,"end":2}},"id":"prt_2"}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"pending","input":{},"raw":"{","output":5}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"running","input":{},"time":{"start":1}}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"error","error":"boom","input":{"a":[1,2]}}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"queued","input":{"a":1}}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","output":"x","output":"y"}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":7}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","output":"say \"hi\"\n\ttab \\ back\/slash \b\f\r é"}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","output":"esc \u001b[0m, pair \ud83d\ude00, \u00e9"}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","output":"lone \ud800 surrogate"}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","output":null}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"running","input":{},"output":null}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","output":["a"]}}"#,
        r#"{"type":"tool","callID":"toolu_1","tool":"bash","state":{"status":"completed","output":""}}"#,
        r#"{"type":"reasoning","text":"t","metadata":{"anthropic":{"signature":"c2ln"}},"id":null}"#,
        r#"{"role":"user","id":"msg_1","sessionID":"ses_1","time":{"created":1}}"#,
        r#"{"role":"assistant","id":"msg_2","parentID":"msg_1"}"#,
        r#"{"t\u0079pe":"text","text":"escaped key"}"#,
        r#"{"type":"te\u0078t","text":"escaped discriminant"}"#,
        r#"{"type":"text","text":"x","id":"prt_\u0031"}"#,
        r#"{"type":"text","text":"x","id":"prt_1","id":"prt_2"}"#,
        r#"{"type":"text","type":"file","text":"x"}"#,
        r#"{"type":"text","text":"x","id":5}"#,
        r#"{"type":"text","text":"x","sessionID":{"a":1}}"#,
        r#"{"type":5,"text":"x"}"#,
        r#"{"type":"mystery","data":[1,{"b":null}],"id":"prt_9"}"#,
        r#"{"text":"no discriminant","id":"prt_1"}"#,
        r#"["text","prt_1"]"#,
        r#"{"type":"text","text":"x"} trailing"#,
        r#"{"type":"text","text":"x""#,
        "{\"type\":\"text\",\"text\":\"a control character: \u{1}\"}",
        "  {\"type\" : \"text\" , \"text\" : \"spaced\" }  ",
        r#"{}"#,
        r#"5"#,
    ];

    /// The scanner's reading of the discriminant and ids agrees with serde's on every record
    /// it reads, and the ids a loader takes are serde's in every case.
    #[test]
    fn quick_peek_reads_what_serde_reads() {
        for json in RECORDS {
            for key in ["type", "role"] {
                if let Some((Some(discriminant), ids)) =
                    quick_peeked(json).map(|p| p.discriminant(key))
                {
                    let slow = serde_peek(json, key).expect("serde reads what the scanner read");
                    assert_eq!((discriminant, ids), slow, "{key} of {json}");
                }
                let slow = serde_peek(json, key);
                let both = peek(json, key, None);
                assert_eq!(both.as_ref().ok(), slow.as_ref().ok(), "{key} of {json}");
                assert_eq!(
                    both.err().map(|e| e.to_string()),
                    slow.err().map(|e| e.to_string()),
                    "{key} of {json}"
                );
            }
            let slow: BodyIds = serde_json::from_str(json).unwrap_or_default();
            assert_eq!(body_ids(json), slow, "ids of {json}");
        }
    }

    /// A tool state read in one pass is the state read status first.
    #[test]
    fn loose_tool_states_read_as_the_per_status_structs() {
        let mut checked = 0;
        for json in RECORDS {
            // The state's exact text (duplicate keys and all), not a re-serialised value.
            #[derive(Deserialize)]
            struct Holder<'a> {
                #[serde(borrow, default)]
                state: Option<&'a RawValue>,
            }
            let Some(text) = serde_json::from_str::<Holder<'_>>(json)
                .ok()
                .and_then(|h| h.state)
                .map(RawValue::get)
            else {
                continue;
            };
            checked += 1;
            #[derive(Deserialize)]
            struct Status {
                #[serde(default)]
                status: String,
                #[serde(default)]
                input: Option<RawJson>,
            }
            let slow = (|| -> Result<ToolState, serde_json::Error> {
                let peek: Status = serde_json::from_str(text)?;
                Ok(match peek.status.as_str() {
                    "pending" => ToolState::Pending(serde_json::from_str(text)?),
                    "running" => ToolState::Running(serde_json::from_str(text)?),
                    "completed" => ToolState::Completed(serde_json::from_str(text)?),
                    "error" => ToolState::Error(serde_json::from_str(text)?),
                    _ => ToolState::Unknown {
                        status: peek.status,
                        input: peek.input,
                    },
                })
            })();
            // The one-pass reading where it reads, else the per-status one (as `parse_part`).
            let fast = match serde_json::from_str::<LooseState>(text) {
                Ok(state) => Ok(state.into_state()),
                Err(_) => serde_json::from_str::<ToolState>(text),
            };
            assert_eq!(fast.as_ref().ok(), slow.as_ref().ok(), "{text}");
            assert_eq!(fast.is_err(), slow.is_err(), "{text}");
        }
        assert_eq!(checked, 14, "every tool state of RECORDS was compared");
        // And whole tool parts: the one-pass reading, where it reads, is the ToolPart's.
        for json in RECORDS {
            let slow = serde_json::from_str::<ToolPart>(json);
            if let Ok(fast) = serde_json::from_str::<OnePassToolPart>(json) {
                assert_eq!(Some(fast.into_part()), slow.ok(), "{json}");
            }
        }
    }

    /// Records are objects: an array of what would be their fields is refused, as it was while
    /// the ids were read through `#[serde(flatten)]` (a derived struct alone accepts arrays).
    #[test]
    fn records_must_be_objects() {
        assert!(parse_part(r#"["step-start"]"#).is_err());
        assert!(parse_part(r#" ["mystery","prt_1"]"#).is_err());
        assert!(parse_message(r#"["user"]"#).is_err());
        let (ids, part) = parse_part(
            r#" {"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"step-start"}"#,
        )
        .expect("an object parses");
        assert_eq!(ids.id.as_deref(), Some("prt_1"));
        assert_eq!(ids.message_id.as_deref(), Some("msg_1"));
        assert!(matches!(part, Part::StepStart(_)));
        // The other kind of record's discriminant is not this record's business.
        assert!(parse_part(r#"{"id":"prt_2","type":"step-start","role":7}"#).is_ok());
        assert!(parse_message(r#"{"id":"msg_1","role":"user","type":[1]}"#).is_ok());
        // Its own is required.
        assert!(parse_part(r#"{"id":"prt_3"}"#).is_err());
        assert!(parse_message(r#"{"id":"msg_2","role":3}"#).is_err());
    }
}

#[cfg(test)]
mod json_text_tests {
    use super::JsonText;
    use proptest::prelude::*;

    /// `text` in every escape form: each character as `\u` escapes (upper-case hex for odd
    /// positions, pairs for the astral plane), `/` as `\/`.
    fn by_hand(text: &str) -> String {
        let mut out = String::from('"');
        for (i, c) in text.chars().enumerate() {
            if c == '/' {
                out.push_str("\\/");
                continue;
            }
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                if i % 2 == 0 {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\u{u:04X}"));
                }
            }
        }
        out.push('"');
        out
    }

    proptest! {
        /// Whatever the escaping of a record, its `JsonText` is the literal serde_json writes for
        /// the decoded text, and decodes to that text; serde's own escaping is kept as it is.
        #[test]
        fn a_stored_string_is_held_in_serde_s_escaping(
            text in proptest::collection::vec(
                proptest::sample::select(vec!['a', 'u', '0', ' ', '"', '\\', '/', '\n', '\t', '\r', '\u{8}', '\u{c}', '\u{1}', '\u{1f}', '\u{7f}', 'é', '😀', '\u{2028}']),
                0..60,
            ).prop_map(|v| v.into_iter().collect::<String>()),
        ) {
            let serde = serde_json::to_string(&text).unwrap_or_default();
            // serde's escaping is recognised as such (kept, not rewritten), any other is not.
            let hand = by_hand(&text);
            prop_assert!(super::escaped_as_serde(&serde[1..serde.len() - 1]));
            prop_assert_eq!(super::escaped_as_serde(&hand[1..hand.len() - 1]), hand == serde);
            for written in [serde.clone(), hand] {
                let read: JsonText = serde_json::from_str(&written).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(read.literal(), serde.as_str());
                prop_assert_eq!(read.text(), text.as_str());
                prop_assert_eq!(read.escaped_len(), serde.len() - 2);
            }
            let made = JsonText::new(&text);
            prop_assert_eq!(made.literal(), serde.as_str());
        }
    }

    #[test]
    fn what_is_no_string_fails_as_it_fails_for_a_string() {
        for json in ["null", "true", "5", "-5", "1.5", "[1]", "{}"] {
            let ours = serde_json::from_str::<JsonText>(json).map(|_| ());
            let serde = serde_json::from_str::<String>(json).map(|_| ());
            let message = |e: serde_json::Error| {
                let m = e.to_string();
                m.split(" at line").next().unwrap_or_default().to_owned()
            };
            assert_eq!(ours.map_err(message), serde.map_err(message), "{json}");
        }
    }

    #[test]
    fn a_lone_surrogate_fails_as_it_fails_for_a_string() {
        for json in [r#""lone \ud800 here""#, r#""\udc00""#] {
            let ours = serde_json::from_str::<JsonText>(json);
            let serde = serde_json::from_str::<String>(json);
            assert!(ours.is_err() && serde.is_err(), "{json}");
        }
    }

    #[test]
    fn short_escapes_written_long_are_rewritten() {
        for (json, literal) in [
            (r#""\u0008\u0009\u000a\u000c\u000d""#, r#""\b\t\n\f\r""#),
            (r#""\u001b[0m \u001f""#, r#""\u001b[0m \u001f""#),
            (r#""\u00e9\/""#, "\"é/\""),
            (r#""tab\tend""#, r#""tab\tend""#),
            // Each control character with a short form, alone (its hex digit a letter or not).
            (r#""\u000a""#, r#""\n""#),
            (r#""\u000c""#, r#""\f""#),
            (r#""\u000d""#, r#""\r""#),
            (r#""\u0009""#, r#""\t""#),
            (r#""\u000b""#, r#""\u000b""#),
        ] {
            let read: JsonText = serde_json::from_str(json).expect(json);
            assert_eq!(read.literal(), literal, "{json}");
        }
    }
}
