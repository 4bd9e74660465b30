//! The result of classifying an error: [`Diagnosis`] and its parts.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Declares [`ErrorKind`] together with [`ErrorKind::ALL`] and [`ErrorKind::as_str`], so that
/// the list of every kind is derived from the enum and cannot miss one.
macro_rules! error_kinds {
    ($( $(#[doc = $doc:literal])+ $variant:ident => $name:literal, )+) => {
        /// What went wrong, as one stable kind.
        ///
        /// The serde names (`thinking_block_order`, …) are the public contract: they appear in the
        /// CLI's JSON output, in the attempts file and in `corpus/errors`.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        #[serde(rename_all = "snake_case")]
        #[non_exhaustive]
        pub enum ErrorKind {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl ErrorKind {
            /// Every kind, in declaration order. Generated with the enum itself, so a kind added
            /// to the enum is in this list (and every test that walks it) by construction.
            pub const ALL: [ErrorKind; [$(ErrorKind::$variant),+].len()] =
                [$(ErrorKind::$variant),+];

            /// The stable snake_case name (the serde name).
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ErrorKind::$variant => $name, )+
                }
            }
        }
    };
}

error_kinds! {
    /// The open turn's first assistant message does not start with thinking (AN-16, AN-18), or a
    /// DeepSeek/Kimi `reasoning_content` was not passed back (DS-03, KM-01).
    ThinkingBlockOrder => "thinking_block_order",
    /// Thinking is off but the final assistant message holds thinking (AN-20).
    ThinkingDisabledViolation => "thinking_disabled_violation",
    /// Thinking in the latest assistant message differs from the original response (AN-22).
    ThinkingBlockModified => "thinking_block_modified",
    /// A thinking signature (or redacted data, or a Gemini `thoughtSignature`) failed to verify
    /// or is missing (AN-06, AN-23, AN-25, GM-01, GM-08).
    ThinkingSignatureInvalid => "thinking_signature_invalid",
    /// An assistant message ends with a thinking block (AN-19).
    ThinkingBlockTrailing => "thinking_block_trailing",
    /// A tool call has no result right after it (AN-08, AN-09, GM-10, OC-01).
    ToolResultMissing => "tool_result_missing",
    /// A tool result names no tool call of the previous message (AN-10, AN-15, GM-09, OC-02).
    ToolUseIdMismatch => "tool_use_id_mismatch",
    /// A tool call id does not have the form the provider requires (AN-12, MS-01 Mistral's 9
    /// alphanumerics, OC-06 OpenAI's 40 characters, RS-08 Responses item prefixes).
    ToolUseIdFormat => "tool_use_id_format",
    /// A message or text block is empty or blank (AN-04, AN-05, KM-04).
    EmptyContent => "empty_content",
    /// Roles are out of order: first message, alternation, trailing prefill (AN-01..AN-03, GM-09,
    /// MS-02, MS-03), or a role the endpoint does not take (a `system` message, CX-02).
    RoleOrder => "role_order",
    /// An OpenAI Responses reasoning item is orphaned, unknown or unverifiable (RS-01..RS-04).
    ReasoningItemOrphan => "reasoning_item_orphan",
    /// The request is larger than the model's context window.
    ContextLengthExceeded => "context_length_exceeded",
    /// A request parameter is wrong (sampling with thinking, budget, effort, tool choice, …); no
    /// transcript repair fixes it.
    RequestConfigInvalid => "request_config_invalid",
    /// The provider is overloaded (529, 503); retry later.
    RetryableOverloaded => "retryable_overloaded",
    /// A rate limit was hit (429); retry later.
    RetryableRateLimit => "retryable_rate_limit",
    /// A transient server error (500); retry.
    RetryableServer => "retryable_server",
    /// Nothing recognisable, or a rejection no kind describes (billing, a zero quota, a
    /// malformed request the provider does not explain): never worth sending again as it is.
    Unknown => "unknown",
}

impl ErrorKind {
    /// Whether sending the same request again later can succeed.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RetryableOverloaded
                | ErrorKind::RetryableRateLimit
                | ErrorKind::RetryableServer
        )
    }

    /// Parse a serde name back into a kind.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The provider (or gateway) the error text points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Provider {
    /// Anthropic Messages API.
    Anthropic,
    /// Amazon Bedrock (InvokeModel or Converse).
    Bedrock,
    /// Google Vertex AI (Claude or Gemini).
    Vertex,
    /// Google Gemini API.
    Gemini,
    /// OpenAI (Chat Completions or Responses).
    #[serde(rename = "openai")]
    OpenAi,
    /// OpenRouter.
    #[serde(rename = "openrouter")]
    OpenRouter,
    /// DeepSeek.
    #[serde(rename = "deepseek")]
    DeepSeek,
    /// Moonshot Kimi.
    Kimi,
    /// A LiteLLM gateway.
    #[serde(rename = "litellm")]
    LiteLlm,
    /// Mistral (La Plateforme, or a mistral-common server).
    Mistral,
    /// MiniMax.
    #[serde(rename = "minimax")]
    MiniMax,
    /// Z.ai / Zhipu GLM.
    Zhipu,
    /// Not recognisable from the text.
    #[default]
    Unknown,
}

impl Provider {
    /// The stable lowercase name (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::Bedrock => "bedrock",
            Provider::Vertex => "vertex",
            Provider::Gemini => "gemini",
            Provider::OpenAi => "openai",
            Provider::OpenRouter => "openrouter",
            Provider::DeepSeek => "deepseek",
            Provider::Kimi => "kimi",
            Provider::LiteLlm => "litellm",
            Provider::Mistral => "mistral",
            Provider::MiniMax => "minimax",
            Provider::Zhipu => "zhipu",
            Provider::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in the request the error points: `messages.N.content.M`.
///
/// `N` is the index of the request's list of turns, whatever the format calls it: Anthropic's
/// `messages.N`, a Chat Completions "message index N" or "at index N" (DeepSeek, Kimi), an
/// OpenAI Responses input item `input[N]`, a Gemini `contents[N]` (or Vertex's "N. content
/// block"), a Bedrock `messages.N.member.content.M.member`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Location {
    /// Message index `N`, when named.
    pub message: Option<u32>,
    /// Content block index `M`, when named.
    pub block: Option<u32>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.message, self.block) {
            (Some(m), Some(b)) => write!(f, "messages[{m}].content[{b}]"),
            (Some(m), None) => write!(f, "messages[{m}]"),
            (None, Some(b)) => write!(f, "content[{b}]"),
            (None, None) => f.write_str("(no location)"),
        }
    }
}

/// Token figures named by a context-length error, e.g. `219898 tokens > 200000 maximum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenFigures {
    /// How many tokens the request has (or asked for in total), when named.
    pub actual: Option<u64>,
    /// The limit it exceeded, when named.
    pub limit: Option<u64>,
}

/// Which request parameter a [`ErrorKind::RequestConfigInvalid`] error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConfigField {
    /// `temperature` with thinking on.
    Temperature,
    /// `top_p` with thinking on.
    TopP,
    /// `top_k` with thinking on.
    TopK,
    /// `thinking.budget_tokens` below its minimum.
    BudgetTokens,
    /// `max_tokens` not greater than `thinking.budget_tokens`.
    MaxTokens,
    /// A forced `tool_choice` with thinking on.
    ToolChoice,
    /// The model does not support thinking at all.
    ModelWithoutThinking,
    /// Manual (`enabled`) thinking is not supported; use adaptive.
    ManualThinkingUnsupported,
    /// Adaptive thinking is not supported on this model.
    AdaptiveThinkingUnsupported,
    /// Vertex `include_thoughts` without thinking.
    IncludeThoughts,
    /// A tool definition (name, schema, type) is invalid, or a tool the history references is
    /// missing from `tools`.
    ToolDefinition,
    /// `output_config.effort` (or a per-message effort) is not accepted by this model or mode.
    Effort,
    /// OpenAI-style `reasoning_effort` (value unsupported, or not allowed with function tools).
    ReasoningEffort,
    /// The `thinking.type` value (or a field beside it) is not accepted by this model.
    ThinkingType,
    /// `context_management` (context editing) is not accepted, or needs thinking on.
    ContextManagement,
    /// Deferred tools (`defer_loading`, tool search) conflict with another setting.
    DeferLoading,
    /// Bedrock Converse `toolConfig` must be sent when the history holds tool blocks.
    ToolConfig,
    /// The system prompt holds something the provider forbids.
    SystemPrompt,
    /// The model id is not one the provider (or this endpoint) knows: invalid, or retired.
    Model,
    /// Too many `cache_control` breakpoints ("A maximum of 4 blocks with cache_control may be
    /// provided").
    CacheControl,
    /// `temperature` and `top_p` sent together to a model that takes only one of them.
    TemperatureAndTopP,
    /// The model (or every endpoint serving it) does not support tools at all.
    ToolsUnsupported,
    /// OpenAI Responses reasoning input items the target cannot take: sent to a model without
    /// reasoning (OR-13), or a shape a local Responses server cannot read (LS-03).
    ReasoningItems,
    /// `include: ["reasoning.encrypted_content"]` (or encrypted content at all) on a model or
    /// server that does not support it (OR-16, LS-03).
    Include,
}

impl ConfigField {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigField::Temperature => "temperature",
            ConfigField::TopP => "top_p",
            ConfigField::TopK => "top_k",
            ConfigField::BudgetTokens => "budget_tokens",
            ConfigField::MaxTokens => "max_tokens",
            ConfigField::ToolChoice => "tool_choice",
            ConfigField::ModelWithoutThinking => "model_without_thinking",
            ConfigField::ManualThinkingUnsupported => "manual_thinking_unsupported",
            ConfigField::AdaptiveThinkingUnsupported => "adaptive_thinking_unsupported",
            ConfigField::IncludeThoughts => "include_thoughts",
            ConfigField::ToolDefinition => "tool_definition",
            ConfigField::Effort => "effort",
            ConfigField::ReasoningEffort => "reasoning_effort",
            ConfigField::ThinkingType => "thinking_type",
            ConfigField::ContextManagement => "context_management",
            ConfigField::DeferLoading => "defer_loading",
            ConfigField::ToolConfig => "tool_config",
            ConfigField::SystemPrompt => "system_prompt",
            ConfigField::Model => "model",
            ConfigField::CacheControl => "cache_control",
            ConfigField::TemperatureAndTopP => "temperature_and_top_p",
            ConfigField::ToolsUnsupported => "tools_unsupported",
            ConfigField::ReasoningItems => "reasoning_items",
            ConfigField::Include => "include",
        }
    }
}

/// What the classifier found in one error text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Diagnosis {
    /// The kind of error.
    pub kind: ErrorKind,
    /// Whether retrying the same request later can succeed.
    pub retryable: bool,
    /// The provider the text points at.
    pub provider: Provider,
    /// The innermost HTTP status found in the text, else the one given.
    pub status: Option<u16>,
    /// `messages.N.content.M`, when named.
    pub location: Location,
    /// Tool call ids the error names (`tool_use` ids, `tool_call_id`s, `call_id`s).
    pub tool_use_ids: Vec<String>,
    /// Reasoning item ids the error names (OpenAI Responses `rs_…`, `cmp_…`).
    pub reasoning_ids: Vec<String>,
    /// Other OpenAI Responses input item ids the error names: the item that lacks its
    /// reasoning (`fc_…`, `msg_…`, OR-02), or a duplicated item (OR-14). Told apart from
    /// [`Diagnosis::reasoning_ids`] by the error's grammar (`Item 'X' of type 'T'`), not by prefix.
    pub item_ids: Vec<String>,
    /// Token figures of a context-length error.
    pub tokens: Option<TokenFigures>,
    /// How long the provider asks to wait, in milliseconds.
    #[serde(rename = "retry_after_ms", with = "crate::duration_ms::option")]
    pub retry_after: Option<Duration>,
    /// The AN-25 variant of the signature error: the block is bound to a different conversation.
    pub prefix_binding: bool,
    /// A quota that waiting does not restore: billing (`insufficient_quota`), or a limit of zero
    /// for this model or tier (Gemini's `limit: 0`, `quotaValue: "0"`). The kind is then
    /// [`ErrorKind::Unknown`] (no kind of ours describes it, as the corpus labels it) and it is
    /// never retryable, whatever the status (429) says; this flag says why, so that a caller can
    /// tell the user to change the model, the key or the plan instead of waiting.
    pub quota_exhausted: bool,
    /// For [`ErrorKind::RequestConfigInvalid`]: the parameter at fault, when recognised.
    pub config: Option<ConfigField>,
    /// The request parameter the error itself names, as it names it (an OpenAI `param` field, the
    /// path before a validation message such as `tools.defer_loading`), when it names one.
    pub param: Option<String>,
    /// The innermost human-readable message text.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    #[test]
    fn every_kind_is_listed_once_under_its_serde_name() {
        let mut seen = std::collections::BTreeSet::new();
        for k in ErrorKind::ALL {
            assert!(seen.insert(k), "{k} twice");
            let json = serde_json::to_string(&k).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(ErrorKind::from_name(k.as_str()), Some(k));
        }
    }
}
