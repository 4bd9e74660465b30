//! The repair policy: which of the safe repairs to use.
//!
//! There is deliberately no option to synthesise a thinking block. A thinking block without the
//! provider's signature fails signature verification (api-rules.md AN-23, AN-06), and copying a
//! real one from another turn is a lie the API detects (AN-22, AN-25). The seed's
//! `[Continuing from previous reasoning]` placeholder is exactly that failure.

use serde::{Deserialize, Serialize};

/// What to do when manual-mode thinking is missing from the open tool loop (api-rules.md AN-16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingThinking {
    /// Put the original turn back from the turn store, byte-identical.
    Restore,
    /// Send this request with `thinking: {"type":"disabled"}` (allowed: the last message is a
    /// user tool-result message, AN-20).
    DisableThinking,
    /// Switch to `thinking: {"type":"adaptive"}` where the model accepts it (AN-17).
    Adaptive,
    /// Close the tool loop with a plain user message so a new turn starts.
    CloseLoop,
}

/// What to do when a prefix-bound signature's prefix was edited (api-rules.md AN-25).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PrefixEdit {
    /// Strip every thinking block from the edit point on.
    #[default]
    StripAfterEdit,
    /// Ask the API to drop failing blocks (`prefix_mismatch_behavior: "drop_block"` and the
    /// `thinking-binding-controls-2026-08-01` beta).
    DropBlock,
    /// Leave it and report an error.
    Fail,
}

/// The form tool-call ids must take for the target (api-rules.md AN-12; api-rules-2026-11 MS-01
/// and OC-06). AN-12 rewrites the ids that do not fit, deterministically, on the call and on its
/// results alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolIdForm {
    /// Anthropic: `^[a-zA-Z0-9_-]+$`. Only ids outside the pattern are rewritten.
    #[default]
    Anthropic,
    /// Mistral: exactly 9 characters from `[a-zA-Z0-9]` (MS-01).
    Alnum9,
    /// Anthropic's alphabet and at most this many characters (OpenAI Chat Completions: 40,
    /// OC-06; Responses `call_id`: 64).
    MaxLen(usize),
}

/// The policy. `Policy::default()` is the safe one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Strategies for AN-16, tried in order; empty means "report, do not repair".
    pub on_missing_thinking: Vec<MissingThinking>,
    /// Strategy for AN-25.
    pub on_prefix_edit: PrefixEdit,
    /// The `content` of a synthetic `tool_result` for a call that never got one.
    pub tool_result_placeholder: String,
    /// Merge consecutive same-role messages (AN-02). `None`: only when the profile needs it.
    pub merge_same_role: Option<bool>,
    /// The form tool-call ids must take (AN-12). Anthropic's unless a provider asked otherwise.
    #[serde(default)]
    pub tool_ids: ToolIdForm,
    /// Bedrock Converse, BR-04: fill a null `reasoningText.text` of a signed block with `""`
    /// (the omitted-display form). Inferred in the research, never seen accepted, and an edit
    /// inside a reasoning block, so off by default; reported as a lossy stand-in when on.
    #[serde(default)]
    pub bedrock_empty_reasoning_text: bool,
    /// Allow the provider-documented empty stand-ins (`reasoning_content: ""` for DeepSeek and
    /// Kimi, `summary: []` on Responses reasoning items, Google's dummy thought signature), each
    /// only on its own provider's target and reported as lossy. `false`: report, do not repair.
    #[serde(default = "yes")]
    pub empty_stand_ins: bool,
    /// Mid-conversation `system` messages on a target that takes none (CX-02): fold each into
    /// the user message beside it. `None`: on the targets known to refuse them (DeepSeek's and
    /// Qwen's Anthropic-compatible endpoints); `Some(true)`: on any target (set when a provider
    /// has refused one, whatever its model is called); `Some(false)`: report, do not repair.
    #[serde(default)]
    pub fold_system_messages: Option<bool>,
}

fn yes() -> bool {
    true
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            on_missing_thinking: vec![MissingThinking::Restore, MissingThinking::DisableThinking],
            on_prefix_edit: PrefixEdit::StripAfterEdit,
            tool_result_placeholder: "The tool call did not complete: no result was recorded."
                .to_owned(),
            merge_same_role: None,
            tool_ids: ToolIdForm::Anthropic,
            empty_stand_ins: true,
            bedrock_empty_reasoning_text: false,
            fold_system_messages: None,
        }
    }
}
