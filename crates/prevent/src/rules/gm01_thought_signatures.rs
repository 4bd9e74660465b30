//! ## GM-01: Gemini, the first call of a step lacks a thoughtSignature
//!
//! **The API.** On Gemini 3 models, in the current turn (after the last user content with real
//! content), the first `functionCall` part of each model step must carry a `thoughtSignature`
//! (GM-01); parallel calls after the first carry none (GM-02). Error: ``Function call `<name>` in
//! the `N.` content block is missing a `thought_signature`.`` Source: api-rules.md GM-01, GM-02,
//! GM-05 (thought-signatures page, ai.google.dev and Vertex; re-checked in
//! api-rules-2026-11.md §6).
//!
//! **Repair.** Where a step's first call never had a signature (history from another provider,
//! an injected call), the documented dummy `skip_thought_signature_validator` is set on that
//! first call only (GM-05).
//!
//! **Why it is safe.** It is the one signature turnkeeper may write, documented for exactly this
//! case; a real signature is never overwritten, and no thought part is touched.

use turnkeeper_model::edit::object;
use turnkeeper_model::{BlockKind, Format, NewBlock, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::profile::GeminiSignatures;

/// The documented dummy that works on both the Gemini API and Vertex AI (api-rules.md GM-05).
pub const DUMMY_SIGNATURE: &str = "skip_thought_signature_validator";

/// Sets the dummy signature on unsigned first calls of current-turn steps.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if ctx.profile.gemini_signatures != GeminiSignatures::Required {
        return;
    }
    let start = (0..f.len())
        .rev()
        .find(|&k| {
            f.role(k) == Role::User && f.blocks(k).any(|b| b.kind() != BlockKind::ToolResult)
        })
        .map_or(0, |k| k + 1);
    for i in start..f.len() {
        if f.role(i) != Role::Assistant {
            continue;
        }
        let Some(j) = (0..f.block_count(i)).find(|&j| {
            f.block(i, j)
                .is_some_and(|b| b.kind() == BlockKind::ToolCall)
        }) else {
            continue;
        };
        let Some(b) = f.block(i, j) else { continue };
        if b.block.signature.is_some() {
            continue;
        }
        let name = b
            .str(b.block.name)
            .map(|n| n.into_owned())
            .unwrap_or_default();
        let edited = object::set_key(
            b.raw(),
            "thoughtSignature",
            &format!("\"{DUMMY_SIGNATURE}\""),
        )
        .and_then(|json| NewBlock::new(Format::Gemini, json).ok());
        f.find(RuleId::Gm01, Severity::Error, i, Some(j),
            format!("Function call `{name}` in the `{i}.` content block is missing a `thought_signature`."),
            Some("set the documented dummy signature on this first call of the step"));
        if let Some(nb) = edited {
            f.set_dummy_signature(
                RuleId::Gm01,
                i,
                j,
                nb,
                "set `thoughtSignature` to the documented dummy: this call never had a signature",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{Expect, check_with};

    fn gemini() -> Options<'static> {
        Options {
            model: Some("gemini-3-pro-preview".to_owned()),
            ..Options::default()
        }
    }

    #[test]
    fn an_unsigned_first_call_of_the_current_turn_gets_the_documented_dummy() {
        let call = |sig: &str| {
            format!(
                r#"{{"contents":[{{"role":"user","parts":[{{"text":"q"}}]}},{{"role":"model","parts":[{{"functionCall":{{"name":"f","args":{{}}}}{sig}}}]}},{{"role":"user","parts":[{{"functionResponse":{{"name":"f","response":{{"output":"x"}}}}}}]}}]}}"#
            )
        };
        let input = call("");
        let after = call(r#","thoughtSignature":"skip_thought_signature_validator""#);
        check_with(
            &input,
            &gemini(),
            Expect {
                rules: &["GM-01"],
                after: Some(&after),
                left: &[],
            },
        );
    }
}
