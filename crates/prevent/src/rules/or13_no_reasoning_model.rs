//! ## OR-13: Responses, reasoning items to a model without reasoning
//!
//! OR-13 (OpenAI Responses): reasoning items can only go to a reasoning-capable (or computer-use)
//! model. It breaks when a conversation switches from a reasoning model to one without
//! reasoning (`gpt-4o`, `gpt-4.1`, `gpt-5-chat-latest`).
//!
//! The error (api-rules-reasoning-2026-11.md §3.2, OR-13; V-Obs, text quoted in peer code
//! comments, scenario in openai/openai-python#2364): `Reasoning input items can only be provided
//! to a reasoning or computer use model. Remove reasoning items from your input and try again.`
//!
//! Repair (safe): every reasoning item goes whole (fingerprint reported); OR-02 then strips the
//! server ids of the items they produced. Fires only for a model known to have no reasoning,
//! never for an unknown one.
//!
//! Scope: format `responses`; OpenAI (xAI: warning); fix: safe.

use turnkeeper_model::wire::responses::ItemKind;

use crate::id::RuleId;
use crate::wire::responses::{ResponsesCx, without_reasoning};

/// Runs OR-13.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    if !without_reasoning(cx.target) {
        return;
    }
    let model = cx.target.model.clone().unwrap_or_default();
    for i in cx.kept(ItemKind::Reasoning) {
        cx.find(
            RuleId::Or13,
            i,
            format!(
                "a reasoning item sent to {model}, a model without reasoning: \"Reasoning input \
                 items can only be provided to a reasoning or computer use model.\""
            ),
            Some("remove the reasoning item whole (OR-02 strips the ids of what it produced)"),
        );
        cx.remove(RuleId::Or13, i, format!("{model} takes no reasoning items"));
    }
}
