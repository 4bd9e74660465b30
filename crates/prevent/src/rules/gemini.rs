//! Gemini rules that pairing does not cover: roles (GM-12), empty contents and parts (GM-13),
//! and thought signatures on function calls (GM-01, GM-02, GM-05).

use turnkeeper_model::edit::object;
use turnkeeper_model::{BlockKind, Draft, Format, NewBlock, Role};

use crate::ctx::{Ctx, Sink};
use crate::finding::Severity;
use crate::id::RuleId;
use crate::profile::GeminiSignatures;

/// The documented dummy that works on both the Gemini API and Vertex AI (api-rules.md GM-05).
pub const DUMMY_SIGNATURE: &str = "skip_thought_signature_validator";

/// GM-12: roles are `user` and `model` only.
pub fn gm12_roles(_ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    for i in 0..d.len() {
        if d.role(i) == Role::Other {
            s.find(
                d,
                RuleId::Gm12,
                Severity::Error,
                i,
                None,
                "a content whose role is neither `user` nor `model`",
                None,
            );
        }
    }
}

/// GM-13: a content with no parts, or an empty part, is invalid. Empty text parts without a
/// signature are removed; contents left with no parts are removed.
pub fn gm13_empty(_ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let mut i = 0;
    while i < d.len() {
        let mut j = 0;
        while j < d.block_count(i) {
            let Some(b) = d.block(i, j) else { break };
            // An empty `Part()` is invalid; an empty text part is accepted (real traffic
            // replays `{"text": ""}` next to a signed call).
            let empty_part = b.kind() == BlockKind::Other
                && b.raw()
                    .trim_start_matches('{')
                    .trim_start()
                    .starts_with('}');
            if empty_part {
                s.find(
                    d,
                    RuleId::Gm13,
                    Severity::Error,
                    i,
                    Some(j),
                    "an empty part",
                    Some("remove it"),
                );
                if s.apply {
                    s.remove_block(d, RuleId::Gm13, i, j, "removed an empty part");
                    continue;
                }
            }
            j += 1;
        }
        if d.block_count(i) == 0 {
            s.find(
                d,
                RuleId::Gm13,
                Severity::Error,
                i,
                None,
                "a content with no parts",
                Some("remove it"),
            );
            if s.apply {
                s.remove_message(d, RuleId::Gm13, i, "removed a content with no parts");
                continue;
            }
        }
        i += 1;
    }
}

/// GM-01/GM-02/GM-05: on Gemini 3 models, in the current turn (after the last user content with
/// real content), the first `functionCall` part of each model step needs a `thoughtSignature`.
/// Where none was ever given, the documented dummy is set on that first call only; a real
/// signature is never overwritten.
pub fn gm01_signatures(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    if ctx.profile.gemini_signatures != GeminiSignatures::Required {
        return;
    }
    let start = (0..d.len())
        .rev()
        .find(|&k| {
            d.role(k) == Role::User && d.blocks(k).any(|b| b.kind() != BlockKind::ToolResult)
        })
        .map_or(0, |k| k + 1);
    for i in start..d.len() {
        if d.role(i) != Role::Assistant {
            continue;
        }
        let Some(j) = (0..d.block_count(i)).find(|&j| {
            d.block(i, j)
                .is_some_and(|b| b.kind() == BlockKind::ToolCall)
        }) else {
            continue;
        };
        let Some(b) = d.block(i, j) else { continue };
        if b.block.signature.is_some() {
            continue;
        }
        let name = b
            .str(b.block.name)
            .map(|n| n.into_owned())
            .unwrap_or_default();
        s.find(d, RuleId::Gm01, Severity::Error, i, Some(j),
            format!("Function call `{name}` in the `{i}.` content block is missing a `thought_signature`."),
            Some("set the documented dummy signature on this first call of the step"));
        if s.apply {
            let edited = object::set_key(
                b.raw(),
                "thoughtSignature",
                &format!("\"{DUMMY_SIGNATURE}\""),
            )
            .and_then(|json| NewBlock::new(Format::Gemini, json).ok());
            if let Some(nb) = edited {
                // The documented dummy is the one signature turnkeeper may write (GM-05).
                s.restored.push(nb.json.clone());
                s.edit_block(d, RuleId::Gm01, i, j, nb, "set `thoughtSignature` to the documented dummy: this call never had a signature");
            }
        }
    }
}
