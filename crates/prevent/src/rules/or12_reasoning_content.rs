//! ## OR-12: Responses, a reasoning item with content, sent to OpenAI
//!
//! OR-12 (OpenAI Responses): OpenAI rejects a non-empty `content` (`reasoning_text` parts) on an
//! input reasoning item; only `summary` and `encrypted_content` carry state. It is typical of
//! Claude thinking or vLLM reasoning translated into a reasoning item (XP-01).
//!
//! The error (api-rules-reasoning-2026-11.md §3.2, OR-12; V-Obs, musistudio/claude-code-router#1783):
//! `Invalid 'input[N].content': array too long. Expected an array with maximum length 0, but got
//! an array with length 1 instead.` (`code: array_above_max_length`)
//!
//! Repair (safe): the research suggests removing `content`; turnkeeper never edits a reasoning
//! item, so the item goes whole (fingerprint reported), and OR-02 strips the server ids of what
//! it produced. DeepSeek's Responses endpoint takes such items (real traffic): not checked there.
//!
//! Scope: format `responses`; OpenAI (xAI: warning); fix: safe.

use turnkeeper_model::wire::responses::{ArrayField, ItemKind};

use crate::id::RuleId;
use crate::wire::responses::{ResponsesCx, path};

/// Runs OR-12.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    for i in cx.kept(ItemKind::Reasoning) {
        let content = cx.item(i).content;
        if !content.is_non_empty() {
            continue;
        }
        let len = match content {
            ArrayField::Array { len, .. } => len,
            _ => 1,
        };
        cx.find(
            RuleId::Or12,
            i,
            format!(
                "a reasoning item with `content` (another provider's reasoning text): \"Invalid \
                 '{}.content': array too long. Expected an array with maximum length 0, but got \
                 an array with length {len} instead.\"",
                path(i)
            ),
            Some("remove the reasoning item whole (its content is never edited)"),
        );
        cx.remove(
            RuleId::Or12,
            i,
            "OpenAI takes no reasoning `content`, and a reasoning item is never edited: it goes \
             whole"
                .into(),
        );
    }
}
