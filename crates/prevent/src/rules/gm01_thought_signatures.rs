//! ## GM-01: Gemini, the first call of a step lacks a thoughtSignature
//!
//! **The API.** On Gemini 3 models, in the current turn (after the last user content with real
//! content), the first `functionCall` part of each model step must carry a `thoughtSignature`
//! (GM-01); parallel calls after the first carry none (GM-02). Error: ``Function call `<name>` in
//! the `N.` content block is missing a `thought_signature`.`` Source: api-rules.md GM-01, GM-02,
//! GM-05 (thought-signatures page, ai.google.dev and Vertex; re-checked in
//! api-rules-2026-11.md §6).
//!
//! **Repair.** First, the signature Gemini sent with this very call, put back from the turn
//! store when the store recorded the response (found by the call's `id`, else by its name and
//! canonical arguments; a key two recorded calls share with different signatures finds nothing:
//! `turnkeeper_guard::wire_turn::GeminiRecord`), reported as restored. Only where the store does
//! not have it (the call never had a signature: history from another provider, an injected
//! call; or its response was not recorded), the documented dummy
//! `skip_thought_signature_validator` is set on that first call only (GM-05).
//!
//! **Why it is safe.** A restored signature is the provider's own bytes for this call; the dummy
//! is the one signature turnkeeper may write, documented for exactly this case. A signature the
//! call carries is never overwritten, and no thought part is touched.

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
        // The part as Gemini sent it: this call with the signature the store recorded for it.
        let restored = ctx
            .store
            .and_then(|s| {
                let id = b.id();
                let args = b.block.content.map(|c| c.get(b.src));
                s.gemini_signature(id.as_deref(), &name, args)
            })
            .and_then(|sig| object::set_key(b.raw(), "thoughtSignature", sig))
            .and_then(|json| NewBlock::new(Format::Gemini, json).ok());
        if let Some(nb) = restored {
            f.find(RuleId::Gm01, Severity::Error, i, Some(j),
                format!("Function call `{name}` in the `{i}.` content block is missing a `thought_signature`."),
                Some("put back the signature Gemini sent with this call (turn store)"));
            f.restore_signature(
                RuleId::Gm01,
                i,
                j,
                nb,
                "put back the `thoughtSignature` Gemini sent with this call (turn store), which \
                 the client dropped",
            );
            continue;
        }
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
    use crate::rules::common::testing::{Expect, changes, check_with};

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

    /// A request whose model content holds `call` (a `functionCall` part), then its answer.
    fn turn(call: &str) -> String {
        format!(
            r#"{{"contents":[{{"role":"user","parts":[{{"text":"weather?"}}]}},{{"role":"model","parts":[{call},{{"functionCall":{{"name":"multiply","args":{{"a":2}},"id":"75p2opbh"}}}}]}},{{"role":"user","parts":[{{"functionResponse":{{"name":"add","id":"wxvlv0tv","response":{{"r":5}}}}}},{{"functionResponse":{{"name":"multiply","id":"75p2opbh","response":{{"r":6}}}}}}]}}]}}"#
        )
    }

    /// The store holding the response that made the calls: the first signed (shape of
    /// real-traffic/gemini/fantasy-*-multi_tool__0, signature shortened).
    fn store() -> turnkeeper_guard::TurnStore {
        let mut s = turnkeeper_guard::TurnStore::in_memory();
        s.add_any_response(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"add","args":{"b":3,"a":2},"id":"wxvlv0tv"},"thoughtSignature":"Es8KCswKAb4+"},{"functionCall":{"name":"multiply","args":{"a":2},"id":"75p2opbh"}}],"role":"model"},"finishReason":"STOP","index":0}],"responseId":"r1"}"#)
            .expect("recorded");
        s
    }

    #[test]
    fn a_signature_the_store_recorded_is_put_back_before_any_stand_in() {
        let store = store();
        let opts = Options {
            store: Some(&store),
            ..gemini()
        };
        // The client dropped the signature and re-serialised the arguments in another order.
        let input = turn(r#"{"functionCall":{"args":{"a":2,"b":3},"id":"wxvlv0tv","name":"add"}}"#);
        let after = turn(
            r#"{"functionCall":{"args":{"a":2,"b":3},"id":"wxvlv0tv","name":"add"},"thoughtSignature":"Es8KCswKAb4+"}"#,
        );
        check_with(
            &input,
            &opts,
            Expect {
                rules: &["GM-01"],
                after: Some(&after),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &opts),
            ["GM-01 restored_field contents[1].parts[0]"]
        );
        // Without the store: the documented dummy, as before.
        let dummy = turn(
            r#"{"functionCall":{"args":{"a":2,"b":3},"id":"wxvlv0tv","name":"add"},"thoughtSignature":"skip_thought_signature_validator"}"#,
        );
        check_with(
            &input,
            &gemini(),
            Expect {
                rules: &["GM-01"],
                after: Some(&dummy),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &gemini()),
            ["GM-01 edited_block contents[1].parts[0]"]
        );
        // A call the store does not have (another id) gets the dummy; a signed call is left
        // as it is, even when the store holds another signature for it.
        let other = input.replace("wxvlv0tv", "zzzzzzzz");
        assert_eq!(
            changes(&other, &opts),
            ["GM-01 edited_block contents[1].parts[0]"]
        );
        let signed = turn(
            r#"{"functionCall":{"args":{"a":2,"b":3},"id":"wxvlv0tv","name":"add"},"thoughtSignature":"b3duIHNpZw=="}"#,
        );
        check_with(
            &signed,
            &opts,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }
}
