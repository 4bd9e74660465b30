//! ## AN-16: manual thinking, the open tool loop does not start with thinking
//!
//! **The API.** In manual mode (`type:"enabled"`), with a tool loop open (the last message is a
//! user message made only of `tool_result` blocks), the loop's first assistant message must
//! start with a `thinking` or `redacted_thinking` block. Error: ``messages.N.content.0.type:
//! Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled,
//! a final `assistant` message must start with a thinking block (preceeding the lastmost set of
//! `tool_use` and `tool_result` blocks). …`` Source: api-rules.md AN-16 (extended-thinking page;
//! claude-cookbooks extended_thinking_with_tool_use.ipynb). Adaptive mode relaxes it (AN-17).
//!
//! **Repair.** The policy's strategies, in order: restore the turn from the store; send this
//! request with thinking disabled (allowed when the last message is a tool result, AN-20); switch
//! to adaptive thinking; close the loop with a user text block so a new turn starts.
//!
//! **Why it is safe.** None of them invents thinking: a synthetic or copied thinking block would
//! fail AN-06/AN-22/AN-23 and lie about provenance (api-rules.md §5.2, AN-16 row).

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::policy::MissingThinking;
use crate::profile::Mode;
use crate::rules::common::{open_loop_start, stored_original, text_block};

/// Whether `strategy` can apply: a restore needs the turn in the store (`stored`), disabling or
/// switching to adaptive needs a model that accepts the mode.
fn applies(ctx: &Ctx<'_>, stored: bool, strategy: MissingThinking) -> bool {
    match strategy {
        MissingThinking::Restore => stored,
        MissingThinking::DisableThinking => ctx.profile.disabled_ok,
        MissingThinking::Adaptive => ctx.profile.adaptive_ok,
        MissingThinking::CloseLoop => true,
    }
}

/// What the policy would do, for the finding: the strategies that can apply, in the policy's
/// order; `None` when none can (the policy is `fail`, or the model accepts none of its modes:
/// the finding then offers no repair, and `repair` leaves it for the caller).
fn describe(ladder: &[MissingThinking]) -> Option<String> {
    if ladder.is_empty() {
        return None;
    }
    let names: Vec<&str> = ladder
        .iter()
        .map(|m| match m {
            MissingThinking::Restore => "restore the turn from the store",
            MissingThinking::DisableThinking => "disable thinking for this request",
            MissingThinking::Adaptive => "switch to adaptive thinking",
            MissingThinking::CloseLoop => "close the tool loop",
        })
        .collect();
    Some(names.join(", else "))
}

/// Finds an open loop without thinking up front, and applies the policy's first strategy that
/// can apply.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if ctx.mode != Mode::Manual {
        return;
    }
    let Some(i) = open_loop_start(f) else { return };
    // A string content is one text block to the API: it opens the loop without thinking as
    // surely as a text block does (it used to be passed over, found by fuzzing:
    // corpus/regressions/prevent_an16_string_content_opens_the_loop.json). A message with no blocks at
    // all is AN-04's.
    let (found, at) = match f.block(i, 0) {
        Some(first) if first.kind().is_thinking() => return,
        Some(first) => (first.type_name().into_owned(), Some(0)),
        None if f.is_string_content(i).is_some() => ("text".to_owned(), None),
        None => return,
    };
    // The store is asked once, and only when the policy would restore.
    let wants_restore = ctx
        .policy
        .on_missing_thinking
        .contains(&MissingThinking::Restore);
    let mut original = if wants_restore {
        stored_original(ctx, f, i)
    } else {
        None
    };
    let ladder: Vec<MissingThinking> = ctx
        .policy
        .on_missing_thinking
        .iter()
        .copied()
        .filter(|&m| applies(ctx, original.is_some(), m))
        .collect();
    f.find(RuleId::An16, Severity::Error, i, at,
        format!("Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block."),
        describe(&ladder).as_deref());
    for strategy in ladder {
        match strategy {
            MissingThinking::Restore => {
                if let Some((blocks, guarded)) = original.take()
                    && f.restore_message(RuleId::An16, i, blocks, guarded)
                {
                    return;
                }
            }
            MissingThinking::DisableThinking => {
                if f.set_param(RuleId::An16, "thinking", "{\"type\":\"disabled\"}",
                    "disabled thinking for this request: the open tool loop's first assistant message has no thinking to send back (it resumes on the next turn)") {
                    ctx.mode = Mode::Off;
                }
                return;
            }
            MissingThinking::Adaptive => {
                if f.set_param(RuleId::An16, "thinking", "{\"type\":\"adaptive\"}",
                    "switched to adaptive thinking, which does not require the turn to start with thinking (AN-17)") {
                    ctx.mode = Mode::Adaptive;
                }
                return;
            }
            MissingThinking::CloseLoop => {
                let last = f.len() - 1;
                if f.role(last) == Role::User
                    && let Some(b) = text_block(f, "Continue.")
                {
                    let at = f.block_count(last);
                    f.insert_block(
                        RuleId::An16,
                        last,
                        at,
                        b,
                        "closed the tool loop with a user text block, so a new turn starts",
                    );
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, MANUAL, body, check_case};

    #[test]
    fn an_open_loop_without_thinking_turns_thinking_off_for_the_request() {
        let msgs = r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}"#;
        let input = body("claude-sonnet-4-5", MANUAL, msgs);
        let after = body("claude-sonnet-4-5", r#"{"type":"disabled"}"#, msgs);
        check_case(
            &input,
            Expect {
                rules: &["AN-16"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// An assistant message whose content is a string opens the loop with text, as a text block
    /// would (the next assistant message, with the thinking and the call, is the same turn).
    /// AN-16 passed it over, so a request the API refuses came out "valid" (found by fuzzing
    /// `repair_invariants`: corpus/regressions/prevent_an16_string_content_opens_the_loop.json).
    #[test]
    fn an_open_loop_opened_by_a_string_content_turns_thinking_off() {
        let th = crate::rules::common::testing::thinking("t");
        let msgs = format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":"Let me look."}},{{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}}"#
        );
        let input = body("claude-sonnet-4-5", MANUAL, &msgs);
        let after = body("claude-sonnet-4-5", r#"{"type":"disabled"}"#, &msgs);
        check_case(
            &input,
            Expect {
                rules: &["AN-16"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn an_open_loop_can_be_closed_with_a_prompt_instead() {
        let msgs = |tail: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}{tail}]}}"#
            )
        };
        let input = body("claude-sonnet-4-5", MANUAL, &msgs(""));
        let after = body(
            "claude-sonnet-4-5",
            MANUAL,
            &msgs(r#",{"type":"text","text":"Continue."}"#),
        );
        let mut opts = crate::Options::default();
        opts.policy.on_missing_thinking = vec![crate::MissingThinking::CloseLoop];
        crate::rules::common::testing::check_with(
            &input,
            &opts,
            Expect {
                rules: &["AN-16"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// A model that accepts neither `disabled` nor (without a store) a restore: the finding offers
    /// no repair and is left, with the body unchanged. It used to offer the policy's whole
    /// ladder, so a repaired output still held a "repairable" AN-16 (the convergence invariant,
    /// found by fuzzing: corpus/regressions/repair_invariants-6ac8dd43c63bc58a).
    #[test]
    fn an_open_loop_on_a_model_that_refuses_disabled_thinking_is_left_with_no_repair() {
        let msgs = r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}"#;
        let input = body("claude-mythos-preview", MANUAL, msgs);
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let an16: Vec<Option<String>> = crate::check(&t, &crate::Options::default())
            .into_iter()
            .filter(|f| f.rule.as_str() == "AN-16")
            .map(|f| f.repair)
            .collect();
        assert_eq!(an16, vec![None]);
        check_case(
            &input,
            Expect {
                rules: &["AN-16"],
                after: None,
                left: &["AN-16"],
            },
        );
    }

    /// The turn store holds the turn as the provider sent it, thinking first: it is put back.
    #[test]
    fn an_open_loop_whose_turn_is_stored_gets_its_thinking_back() {
        let th = crate::rules::common::testing::thinking("t");
        let call = r#"{"type":"tool_use","id":"toolu_1","name":"f","input":{}}"#;
        let mut store = turnkeeper_guard::TurnStore::in_memory();
        store
            .add_response(&format!(
                r#"{{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{th},{call}],"stop_reason":"tool_use"}}"#
            ))
            .expect("stores");
        // The loop's first assistant message lost its thinking whole. AN-22 leaves a turn so
        // dropped alone (the API accepts it outside an open loop); AN-16, which needs the
        // thinking for the open loop, restores it from the store, and is the one rule reported.
        let msgs = |turn: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{turn}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_2","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_2","content":"y"}}]}}"#
            )
        };
        let opts = crate::Options {
            store: Some(&store),
            ..crate::Options::default()
        };
        crate::rules::common::testing::check_with(
            &body("claude-sonnet-4-5", MANUAL, &msgs(call)),
            &opts,
            Expect {
                rules: &["AN-16"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    MANUAL,
                    &msgs(&format!("{th},{call}")),
                )),
                left: &[],
            },
        );
    }
}
