//! ## AN-23: a thinking signature that can never verify
//!
//! **The API.** A signature must verify: a truncated, altered, empty or foreign signature is
//! rejected, including Gemini `thoughtSignature` values and the `skip_thought_signature_validator`
//! sentinel; `redacted_thinking.data` likewise. Errors: ``messages.N.content.M: Invalid
//! `signature` in `thinking` block`` and ``messages.N.content.M: Invalid `data` in
//! `redacted_thinking` block`` (a `redacted_thinking` without `data`:
//! `redacted_thinking.data: Field required`, api-rules-2026-11.md AN-44). Source: api-rules.md
//! AN-23 (troubleshooting and preserved-thinking pages; anthropics/claude-code#56708).
//!
//! **Repair.** A thinking block whose signature is empty, a Gemini sentinel, not base64, or a
//! word or field name (`signature`, `thoughtSignature`, `placeholder`, `NO_SIGNATURE`: base64
//! letters written as a name, [`turnkeeper_guard::provenance::is_word`]; real signatures are
//! hundreds of bytes of mixed-case base64), and a redacted block without valid `data`, is
//! removed whole (reported with its fingerprint). A
//! thinking block with no `signature` field at all is AN-06's ("Field required"). AN-16 then
//! decides what an open turn needs. A `redacted_thinking` without `data` (or with an empty one)
//! in the latest assistant message is reported only: removing thinking there is refused as well
//! (AN-22), and `data` is never made up (api-rules-2026-11.md AN-44).
//!
//! **Why it is safe.** Such a block can never be accepted, and a thinking block is never edited,
//! so removing it whole is the only repair; a real signature moved from another provider cannot
//! be told from a good one (only the provider can), and is left alone.

use turnkeeper_guard::Provenance;
use turnkeeper_model::{BlockKind, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::{has_thinking, signature_provenance};

/// Why a thinking block's signature with this provenance can never verify; `None` when it may
/// (whether a plausible one does, only the provider can say).
fn thinking_problem(provenance: Provenance) -> Option<&'static str> {
    match provenance {
        Provenance::Plausible => None,
        Provenance::Empty => Some(
            "a thinking block with an empty signature: \"Invalid `signature` in `thinking` block\"",
        ),
        Provenance::Sentinel => Some(
            "a thinking block carrying a Gemini dummy signature, which the Anthropic API rejects",
        ),
        Provenance::Malformed => {
            Some("a thinking block whose signature is not a provider signature")
        }
    }
}

/// What this rule says of a thinking block's signature given as text (a session store's copy,
/// such as openclaw's `thinkingSignature`): why it can never verify, or `None`.
pub(crate) fn thinking_signature_problem(sig: &str) -> Option<&'static str> {
    thinking_problem(turnkeeper_guard::provenance(Some(sig)))
}

/// What this rule says of a store's copy of a signature: [`thinking_signature_problem`], and a
/// signature cut short when it was stored, whose length is not a multiple of 4. Anthropic's
/// signatures are padded base64: every one of the 390 signed blocks in `../shared/real-traffic`
/// has such a length, and openclaw PR #97019 found 20 cut in 2,979 persisted ones.
///
/// The wire rule does not apply the length test yet: the repository's own synthetic signatures
/// (tests, corpus) are unpadded and would have to be replaced first. No real signature seen is.
pub(crate) fn stored_signature_problem(sig: &str) -> Option<String> {
    if let Some(why) = thinking_signature_problem(sig) {
        return Some(why.to_owned());
    }
    let trimmed = sig.trim();
    (!trimmed.len().is_multiple_of(4)).then(|| {
        format!(
            "a malformed signature, cut short when it was stored (base64 of length {} % 4 = {}, openclaw PR #97019): \"Invalid `signature` in `thinking` block\"",
            trimmed.len(),
            trimmed.len() % 4
        )
    })
}

/// Removes thinking blocks whose signature can never verify.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let latest = (0..f.len()).rev().find(|&k| f.role(k) == Role::Assistant);
    for i in ctx.horizon..f.len() {
        if f.role(i) != Role::Assistant || !has_thinking(f, i) {
            continue;
        }
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            let problem = match b.kind() {
                // A missing `signature` field is a schema error (AN-06).
                BlockKind::Thinking if !b.block.has_signature_key => None,
                BlockKind::Thinking => thinking_problem(signature_provenance(&b)),
                BlockKind::RedactedThinking => match signature_provenance(&b) {
                    Provenance::Plausible => None,
                    _ => Some(
                        "a redacted_thinking block without valid `data`: \"Invalid `data` in `redacted_thinking` block\"",
                    ),
                },
                _ => None,
            };
            // A redacted block without `data` in the latest turn (AN-44, a block a translator
            // rebuilt): removing thinking from that turn is refused too (AN-22), so the request
            // is refused as it is; `data` is never made up.
            let no_data = b.kind() == BlockKind::RedactedThinking
                && b.block.data.is_none_or(|d| d.span.is_empty());
            if let Some(why) = problem.filter(|_| no_data && latest == Some(i)) {
                f.find(
                    RuleId::An23,
                    Severity::Error,
                    i,
                    Some(j),
                    format!("{why}; it is in the latest assistant message, where removing a thinking block is refused too (AN-22)"),
                    None,
                );
                j += 1;
                continue;
            }
            if let Some(why) = problem {
                f.find(
                    RuleId::An23,
                    Severity::Error,
                    i,
                    Some(j),
                    why,
                    Some("remove the whole block (thinking is never edited)"),
                );
                if f.remove_block(RuleId::An23, i, j, format!("removed {why}")) {
                    continue;
                }
            }
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, MANUAL, body, check_case, thinking};

    #[test]
    fn an_empty_signature_goes_whole_and_a_good_one_stays() {
        let bad = r#"{"type":"thinking","thinking":"x","signature":""}"#;
        let good = thinking("kept");
        let msgs = |first: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{first}{good},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let input = body("claude-sonnet-4-5", MANUAL, &msgs(&format!("{bad},")));
        let after = body("claude-sonnet-4-5", MANUAL, &msgs(""));
        check_case(
            &input,
            Expect {
                rules: &["AN-23"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// A redacted thinking block whose `data` is Gemini's dummy signature can never verify: it
    /// goes whole, the text after it stays. Kills the deletion of the
    /// `BlockKind::RedactedThinking` arm in `run`, under which redacted blocks were never looked
    /// at.
    #[test]
    fn a_redacted_block_with_a_dummy_for_data_goes_whole() {
        let bad = r#"{"type":"redacted_thinking","data":"skip_thought_signature_validator"},"#;
        let msgs = |first: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{first}{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        check_case(
            &body("claude-sonnet-4-5", MANUAL, &msgs(bad)),
            Expect {
                rules: &["AN-23"],
                after: Some(&body("claude-sonnet-4-5", MANUAL, &msgs(""))),
                left: &[],
            },
        );
    }

    /// The rule is about assistant messages: a thinking block with an empty signature in a user
    /// message is not its to report or remove; AN-06 removes it (only assistant messages hold
    /// thinking). Kills `||` turned into `&&` in `run`'s skip of other messages, under which a
    /// user message holding thinking was looked at and its block reported under AN-23.
    #[test]
    fn a_user_messages_thinking_is_not_this_rules() {
        let unsigned = r#",{"type":"thinking","thinking":"x","signature":""}"#;
        let msgs = |extra: &str| {
            format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"q"}}{extra}]}},{{"role":"assistant","content":[{},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#,
                thinking("t")
            )
        };
        check_case(
            &body("claude-sonnet-4-5", MANUAL, &msgs(unsigned)),
            Expect {
                rules: &["AN-06"],
                after: Some(&body("claude-sonnet-4-5", MANUAL, &msgs(""))),
                left: &[],
            },
        );
    }

    /// A signature that cannot be one (a field name, a plain word, text that is not base64)
    /// is foreign: the block goes whole, in every spelling; a real-looking one stays.
    #[test]
    fn a_word_or_field_name_for_a_signature_goes_whole() {
        let msgs = |first: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{first}{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        for sig in [
            "signature",
            "thoughtSignature",
            "placeholder_signature",
            "NO_SIGNATURE",
            "not a signature",
            "[redacted]",
        ] {
            let bad = format!(r#"{{"type":"thinking","thinking":"x","signature":"{sig}"}},"#);
            check_case(
                &body("claude-sonnet-4-5", MANUAL, &msgs(&bad)),
                Expect {
                    rules: &["AN-23"],
                    after: Some(&body("claude-sonnet-4-5", MANUAL, &msgs(""))),
                    left: &[],
                },
            );
        }
        let red = r#"{"type":"redacted_thinking","data":"redacted_thinking_data"},"#;
        check_case(
            &body("claude-sonnet-4-5", MANUAL, &msgs(red)),
            Expect {
                rules: &["AN-23"],
                after: Some(&body("claude-sonnet-4-5", MANUAL, &msgs(""))),
                left: &[],
            },
        );
        let good = format!("{},", thinking("kept"));
        check_case(
            &body("claude-sonnet-4-5", MANUAL, &msgs(&good)),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// AN-44: a `redacted_thinking` without `data` (a translator rebuilt it) goes whole from an
    /// earlier turn, but in the latest assistant message the request is refused as it is: the
    /// finding stays, nothing is dropped and no `data` is made up.
    #[test]
    fn a_redacted_block_without_data_in_the_latest_turn_is_refused() {
        let red = r#"{"type":"redacted_thinking"},"#;
        let turn = |first: &str| {
            format!(
                r#"{{"role":"assistant","content":[{first}{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let latest = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(r#"{{"role":"user","content":"q"}},{}"#, turn(red)),
        );
        check_case(
            &latest,
            Expect {
                rules: &["AN-23"],
                after: None,
                left: &["AN-23"],
            },
        );
        let earlier = |first: &str| {
            body(
                "claude-sonnet-4-5",
                MANUAL,
                &format!(
                    r#"{{"role":"user","content":"q"}},{},{}"#,
                    turn(first),
                    turn(&format!("{},", thinking("t")))
                ),
            )
        };
        check_case(
            &earlier(red),
            Expect {
                rules: &["AN-23"],
                after: Some(&earlier("")),
                left: &[],
            },
        );
    }
}
