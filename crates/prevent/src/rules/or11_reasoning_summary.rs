//! ## OR-11: Responses, a reasoning item without summary
//!
//! OR-11 (OpenAI Responses): every input reasoning item must carry `summary`, even `[]` (the
//! SDK's `ResponseReasoningItemParam` marks it `Required`). It is often dropped when the summary
//! was empty, or by a translator.
//!
//! The errors (api-rules-reasoning-2026-11.md §3.2, OR-11; V-Obs + V-Doc, BerriAI/litellm PR
//! #24690, lidge-jun/opencodex PR #4673): `Missing required parameter: 'input[N].summary'.`; a
//! Responses-compatible upstream: `` `input[N]` missing required field `summary` ``
//!
//! Repair (lossy stand-in): `"summary": []` is added after the item's last member, the item's own
//! bytes unchanged: an empty field the provider documents, not reasoning text. Reported as lossy;
//! off with `Policy::empty_stand_ins = false` (then reported only).
//!
//! Scope: format `responses`; OpenAI (xAI: warning; its documented items carry `summary: []`);
//! fix: lossy.

use turnkeeper_model::wire::responses::ItemKind;

use crate::id::RuleId;
use crate::wire::responses::{ResponsesCx, path};

/// Runs OR-11.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    for i in cx.kept(ItemKind::Reasoning) {
        if cx.item(i).summary.is_present() || cx.st.summary_added[i] {
            continue;
        }
        let fix = cx.policy.empty_stand_ins;
        cx.find(
            RuleId::Or11,
            i,
            format!("\"Missing required parameter: '{}.summary'.\"", path(i)),
            fix.then_some(
                "add `\"summary\": []`, the provider's empty stand-in (lossy: the model sees no \
                 summary for this item)",
            ),
        );
        cx.add_empty_summary(
            RuleId::Or11,
            i,
            "added an empty summary, which the API requires on every reasoning item; lossy: \
             the model sees no summary for this item; the item's own members are unchanged"
                .into(),
        );
    }
}
