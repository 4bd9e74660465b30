//! ## OR-03: Responses, an item the server cannot resolve under `store: false`
//!
//! OR-03 (OpenAI Responses): with `store: false` (or zero data retention) nothing is kept on the
//! server, so a reasoning item sent by its `rs_` id without `encrypted_content`, or an
//! `item_reference`, names nothing.
//!
//! The error (api-rules-reasoning-2026-11.md §3.2, OR-03; V-Obs, anomalyco/opencode#7724, #8987):
//! 404 `Item with id 'rs_<id>' not found. Items are not persisted when `store` is set to false.
//! Try again with `store` set to true, or remove this item from your input.`
//!
//! Repair (safe): such a reasoning item goes whole (fingerprint reported), and so does a
//! reference to a reasoning item (`rs_`); OR-02 strips the server ids of what they produced. A
//! reference to any other item is reported only: it stands for a message or call whose content
//! turnkeeper does not have. With `store` absent (the API's default is `true`) nothing is found.
//!
//! Scope: format `responses`; OpenAI (xAI: warning); fix: safe.

use turnkeeper_model::wire::responses::ItemKind;

use crate::id::RuleId;
use crate::wire::responses::ResponsesCx;

/// Runs OR-03.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    if cx.body.store != Some(false) {
        return;
    }
    for i in 0..cx.items().len() {
        if !cx.st.keep[i] {
            continue;
        }
        let it = cx.item(i);
        let Some(id) = it.id else { continue };
        let id = cx.text(id).into_owned();
        let error = format!(
            "\"Item with id '{id}' not found. Items are not persisted when `store` is set to false.\""
        );
        match it.kind {
            ItemKind::Reasoning if !it.encrypted.is_set() => {
                cx.find(
                    RuleId::Or03,
                    i,
                    format!("a reasoning item with an id and no `encrypted_content`: {error}"),
                    Some("remove the reasoning item whole (OR-02 strips the ids of what it produced)"),
                );
                cx.remove(
                    RuleId::Or03,
                    i,
                    format!(
                        "store is false and `{id}` has no encrypted_content: the server cannot \
                         resolve it"
                    ),
                );
            }
            ItemKind::ItemReference => {
                let reasoning = id.starts_with("rs_");
                cx.find(
                    RuleId::Or03,
                    i,
                    format!("an item_reference: {error}"),
                    reasoning.then_some("remove the reference to the reasoning item"),
                );
                if reasoning {
                    cx.remove(
                        RuleId::Or03,
                        i,
                        format!("store is false: the reasoning item `{id}` cannot be referenced"),
                    );
                }
            }
            _ => {}
        }
    }
}
