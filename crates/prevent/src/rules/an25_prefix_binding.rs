//! ## AN-25: a prefix-bound thinking block after an edited prefix
//!
//! **The API.** On prefix-bound models (Fable 5.1, Opus 5.5, Sonnet 5.5, …; accounts created on
//! or after 2026-08-31, or any account sending `block_binding`) a thinking block is valid only
//! while everything before it is byte-for-byte unchanged. Error: ``messages.N.content.M: Invalid
//! `signature` in `thinking` block. The block is bound to a different conversation. Remove the
//! block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".`` Source:
//! api-rules.md AN-25 (preserved-thinking page; anomalyco/opencode#48637);
//! api-rules-2026-11.md §1.3 for Opus 5.5 and Sonnet 5.5.
//!
//! **Repair.** Only when an earlier repair of this pass edited a message: by policy, every
//! thinking block from the first edited message on is removed whole (and the whitespace that led
//! into it); or the API is asked to drop them (`prefix_mismatch_behavior: "drop_block"` and its
//! beta); or the repair is refused (a finding, nothing removed).
//!
//! **Why it is safe.** It removes only whole thinking blocks the API would refuse anyway, after
//! turnkeeper's own edit; it never runs on an input it did not change.

use crate::ctx::{BINDING_BETA, Ctx};
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::policy::PrefixEdit;
use crate::profile::Mode;
use crate::rules::common::{drop_thinking, has_thinking};

/// The `thinking` parameter asking the API to drop blocks whose prefix changed.
fn drop_block_param(ctx: &Ctx<'_>) -> String {
    let mode = match ctx.mode {
        Mode::Off => "adaptive",
        m => m.wire(),
    };
    format!(
        "{{\"type\":\"{mode}\",\"block_binding\":{{\"prefix_mismatch_behavior\":\"drop_block\"}}}}"
    )
}

/// Strips (or has the API drop) thinking after the first edit of this pass.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if !ctx.profile.prefix_bound || ctx.drop_block {
        return;
    }
    let Some(edit) = f.first_edit() else { return };
    let from = (0..f.len())
        .find(|&i| f.origin(i).is_none_or(|o| o >= edit))
        .unwrap_or(f.len());
    let later: Vec<usize> = (from..f.len()).filter(|&i| has_thinking(f, i)).collect();
    if later.is_empty() {
        return;
    }
    match ctx.policy.on_prefix_edit {
        PrefixEdit::Fail => {
            f.find(RuleId::An25, Severity::Error, later[0], None,
                "a repair edited the prefix of prefix-bound thinking blocks: \"The block is bound to a different conversation\"", None);
        }
        PrefixEdit::DropBlock => {
            let param = drop_block_param(ctx);
            if f.set_param(RuleId::An25, "thinking", &param,
                "asked the API to drop thinking blocks whose prefix a repair changed (prefix_mismatch_behavior: drop_block)") {
                f.add_beta(RuleId::An25, BINDING_BETA);
                ctx.drop_block = true;
            }
        }
        PrefixEdit::StripAfterEdit => {
            // From the end, so a message that ends up empty and goes leaves earlier indices valid.
            for i in later.into_iter().rev() {
                drop_thinking(
                    f,
                    RuleId::An25,
                    i,
                    "removed a prefix-bound thinking block after an earlier repair (its prefix changed, so it can no longer verify)",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::policy::PrefixEdit;
    use crate::rules::common::testing::{Expect, body, changes, check_case, check_with, thinking};

    #[test]
    fn a_repair_of_an_earlier_message_strips_later_bound_thinking() {
        let th = thinking("t");
        let msgs = |blank: &str, later: &str| {
            format!(
                r#"{{"role":"user","content":[{blank}{{"type":"text","text":"q"}}]}},{{"role":"assistant","content":[{later}{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let adaptive = r#"{"type":"adaptive"}"#;
        let input = body(
            "claude-fable-5-1",
            adaptive,
            &msgs(r#"{"type":"text","text":" "},"#, &format!("{th},")),
        );
        let after = body("claude-fable-5-1", adaptive, &msgs("", ""));
        check_case(
            &input,
            Expect {
                rules: &["AN-05"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// With drop-block asked for in the body, the API drops what no longer verifies, so the
    /// thinking stays, but only when the beta header that enables it is sent as well.
    #[test]
    fn drop_block_in_the_body_counts_only_with_its_beta() {
        let th = thinking("t");
        let msgs = |blank: &str| {
            format!(
                r#"{{"role":"user","content":[{blank}{{"type":"text","text":"q"}}]}},{{"role":"assistant","content":[{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let param =
            r#"{"type":"adaptive","block_binding":{"prefix_mismatch_behavior":"drop_block"}}"#;
        let input = body(
            "claude-fable-5-1",
            param,
            &msgs(r#"{"type":"text","text":" "},"#),
        );
        let kept = body("claude-fable-5-1", param, &msgs(""));
        let opts = crate::Options {
            betas: vec![crate::BINDING_BETA.to_owned()],
            ..crate::Options::default()
        };
        crate::rules::common::testing::check_with(
            &input,
            &opts,
            Expect {
                rules: &["AN-05"],
                after: Some(&kept),
                left: &[],
            },
        );
        let stripped = body(
            "claude-fable-5-1",
            param,
            r#"{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"text","text":"a"}]},{"role":"user","content":"more"}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-05"],
                after: Some(&stripped),
                left: &[],
            },
        );
    }

    /// Under the drop-block policy the thinking stays and the request asks the API to drop what
    /// no longer verifies: the `thinking` parameter keeps its mode and gains the block binding
    /// (and the beta is sent). Kills `drop_block_param` replaced with `"xyzzy".into()`.
    #[test]
    fn the_drop_block_policy_asks_for_drop_block_in_the_thinking_parameter() {
        let th = thinking("t");
        let msgs = |blank: &str| {
            format!(
                r#"{{"role":"user","content":[{blank}{{"type":"text","text":"q"}}]}},{{"role":"assistant","content":[{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let mut opts = Options::default();
        opts.policy.on_prefix_edit = PrefixEdit::DropBlock;
        let input = body(
            "claude-fable-5-1",
            r#"{"type":"adaptive"}"#,
            &msgs(r#"{"type":"text","text":" "},"#),
        );
        let after = body(
            "claude-fable-5-1",
            r#"{"type":"adaptive","block_binding":{"prefix_mismatch_behavior":"drop_block"}}"#,
            &msgs(""),
        );
        check_with(
            &input,
            &opts,
            Expect {
                rules: &["AN-05"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// A message of thinking alone (Fable 5.1 may end a message with thinking) left empty by the
    /// strip goes with it, under this rule and in the same pass. Kills `i + 1 < f.len()` turned
    /// into `>` in `common::drop_thinking`, under which the empty message was left for AN-04 to
    /// remove in a second pass.
    #[test]
    fn a_message_emptied_by_the_strip_goes_in_the_same_pass() {
        let th = thinking("t");
        let msgs = |blank: &str, middle: &str| {
            format!(
                r#"{{"role":"user","content":[{blank}{{"type":"text","text":"q"}}]}},{middle}{{"role":"user","content":"more"}}"#
            )
        };
        let adaptive = r#"{"type":"adaptive"}"#;
        let input = body(
            "claude-fable-5-1",
            adaptive,
            &msgs(
                r#"{"type":"text","text":" "},"#,
                &format!(r#"{{"role":"assistant","content":[{th}]}},"#),
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-05"],
                after: Some(&body("claude-fable-5-1", adaptive, &msgs("", ""))),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-05 removed_block messages[0].content[0]",
                "AN-25 removed_block messages[1].content[0]",
                "AN-25 removed_message messages[1]",
            ]
        );
    }
}
