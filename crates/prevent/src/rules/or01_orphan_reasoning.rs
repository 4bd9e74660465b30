//! ## OR-01: Responses, a reasoning item without its following item
//!
//! OR-01 (OpenAI Responses): a reasoning item sent with its `id` must be immediately followed by
//! the item it produced (a `message`, a `function_call`, a hosted call of the same response).
//!
//! The error (api-rules-reasoning-2026-11.md §3.2, OR-01; V-Obs, vercel/ai#7099,
//! continuedev/continue#8933, and a real 400 in ../shared/real-traffic): `Item 'rs_<id>' of type
//! 'reasoning' was provided without its required following item.` (`param: "input"`)
//!
//! Detection: the next item left is none (a stream cut after the reasoning), another reasoning
//! item, or an item no response produces (a user, system or developer message, a tool output).
//! With `store` not false, an assistant message without its `msg_` id after it is no successor
//! either: the server cannot tie it to the stored reasoning (the real 400 above: pydantic-ai's
//! modified-history test). An id-less reasoning item (Codex, opencode) is not checked, nor one
//! followed by an `item_reference` or an item of unknown type.
//!
//! Repair (safe): the orphan reasoning item goes whole (fingerprint reported); nothing depends
//! on it.
//!
//! Scope: format `responses`; OpenAI (xAI: warning); fix: safe.

use turnkeeper_model::wire::responses::{ItemKind, Role};

use crate::id::RuleId;
use crate::wire::responses::{ResponsesCx, path};

/// Runs OR-01.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    for i in cx.kept(ItemKind::Reasoning) {
        if cx.item(i).id.is_none() {
            continue;
        }
        let why = match cx.next_kept(i) {
            None => Some("it is the last item".to_owned()),
            Some(j) => {
                let n = cx.item(j);
                if n.kind == ItemKind::Reasoning {
                    Some(format!("{} is another reasoning item", path(j)))
                } else if n.is_client_input() {
                    Some(format!("{} is no model output", path(j)))
                } else if cx.body.store != Some(false)
                    && n.kind == ItemKind::Message
                    && n.role == Some(Role::Assistant)
                    && cx.id(j).is_none()
                {
                    Some(format!(
                        "{} is an assistant message without its `msg_` id, which the server \
                         cannot tie to it",
                        path(j)
                    ))
                } else {
                    None
                }
            }
        };
        let Some(why) = why else { continue };
        let id = cx.id_text(i);
        cx.find(
            RuleId::Or01,
            i,
            format!(
                "\"Item '{id}' of type 'reasoning' was provided without its required following \
                 item.\" ({why})"
            ),
            Some("remove the orphan reasoning item whole"),
        );
        cx.remove(
            RuleId::Or01,
            i,
            format!("`{id}` is not followed by the item it produced ({why})"),
        );
    }
}
