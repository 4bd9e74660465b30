//! ## OR-14: Responses, a duplicate item id with previous_response_id
//!
//! OR-14 (OpenAI Responses): with `previous_response_id`, items already in the server's chain
//! must not be sent again.
//!
//! The error (api-rules-reasoning-2026-11.md §3.2, OR-14; V-Obs, vercel/ai PR #15492,
//! HKUDS/nanobot PR #3961): `Duplicate item found with id rs_<id>. Remove duplicate items from
//! your input and try again.`
//!
//! Detection: offline, the chain's items are unknown; what can be seen is an id sent twice in
//! the input itself.
//!
//! Repair: none. Which copy the chain holds, and what else of it was resent, cannot be told from
//! the body: reported only.
//!
//! Scope: format `responses`; OpenAI (xAI: warning); fix: none.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::id::RuleId;
use crate::wire::responses::ResponsesCx;

/// Runs OR-14.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    if cx.body.previous_response_id.is_none() {
        return;
    }
    let mut seen: HashSet<Cow<'_, str>> = HashSet::new();
    for i in 0..cx.items().len() {
        if !cx.st.keep[i] {
            continue;
        }
        let Some(id) = cx.id(i) else { continue };
        let id = cx.text(id);
        if seen.insert(id.clone()) {
            continue;
        }
        cx.find(
            RuleId::Or14,
            i,
            format!(
                "\"Duplicate item found with id {id}. Remove duplicate items from your input and \
                 try again.\""
            ),
            None,
        );
    }
}
