//! ## OR-02: Responses, an item with its id but without its reasoning item
//!
//! OR-02 (OpenAI Responses): an output item sent with its server id (`fc_…`, `msg_…`) needs the
//! reasoning item that preceded it in its response.
//!
//! The errors (api-rules-reasoning-2026-11.md §3.2, OR-02; V-Obs,
//! openai/openai-agents-python#722, mastra-ai/mastra#10713): `Item 'fc_<id>' of type
//! 'function_call' was provided without its required 'reasoning' item: 'rs_<id>'.`; `Item
//! 'msg_<id>' of type 'message' was provided without its required 'reasoning' item: 'rs_<id>'.`
//!
//! Detection: offline, which reasoning item an id belongs to is unknown (real accepted traffic
//! sends `fc_` items with no reasoning before them), so this rule acts only where turnkeeper
//! itself removed the reasoning item (OR-01, OR-03, OR-05, OR-12, OR-13): the function and custom
//! tool calls and assistant messages right after it.
//!
//! Repair (safe, laravel/ai PR #1052): their `id` member goes; `call_id` and everything else
//! stay. No `rs_` id is ever made up.
//!
//! Scope: format `responses`; OpenAI (xAI: nothing is removed, so nothing to strip); fix: safe.

use crate::id::RuleId;
use crate::wire::responses::{ResponsesCx, path, produced_with_id};

/// Runs OR-02.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    for i in 0..cx.items().len() {
        if !cx.st.reasoning_gone[i] {
            continue;
        }
        let mut j = i;
        while let Some(k) = cx.next_kept(j) {
            if !produced_with_id(cx.item(k)) {
                break;
            }
            if cx.id(k).is_some() {
                let id = cx.id_text(k);
                cx.strip_id(
                    RuleId::Or02,
                    k,
                    format!(
                        "the reasoning item {} before `{id}` was removed; sent with its id, the \
                         item would be \"provided without its required 'reasoning' item\"; \
                         the rest of the item stays (a call keeps its `call_id`)",
                        path(i)
                    ),
                );
            }
            j = k;
        }
    }
}
