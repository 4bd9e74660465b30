//! ## AN-46: two tool_use blocks with the same id
//!
//! **The API.** `tool_use` ids must be unique: the API answers a request with two calls of the
//! same id with `` `tool_use` ids must be unique `` (the text peers' test suites check for;
//! LiteLLM's `anthropic_messages_pt` filters duplicate ids for this reason, peers.md). The
//! number is turnkeeper's: api-rules.md and api-rules-2026-11.md (which ends at AN-45) give the
//! rule no id.
//!
//! **Repair.** None: which result answers which call cannot be known, and removing or renaming a
//! call in an assistant turn edits what the model produced (api-rules.md §5.2, AN-08 row).
//! Reported, so the caller can fix the source of the duplicate.
//!
//! The check looks at each assistant turn (a run of consecutive assistant messages, which the API
//! merges), where duplicates come from: merged streams and replayed parallel calls. Corpus:
//! `corpus/damaged/an46_duplicate_tool_use_ids.json`; the valid counterpart is
//! `corpus/anthropic/parallel_tool_calls.json` (parallel calls, distinct ids, accepted).

use turnkeeper_model::{BlockKind, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// Reports a `tool_use` whose id an earlier call of the same turn already has.
pub fn run(_ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_, '_>) {
    let mut seen: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < f.len() {
        if f.role(i) != Role::Assistant {
            i += 1;
            continue;
        }
        let a_end = (i..f.len())
            .find(|&k| f.role(k) != Role::Assistant)
            .unwrap_or(f.len());
        seen.clear();
        let mut dups: Vec<(usize, usize, String)> = Vec::new();
        for k in i..a_end {
            if !f.summary(k).kinds.contains(BlockKind::ToolCall) {
                continue;
            }
            for (j, b) in f.blocks(k).enumerate() {
                if b.kind() != BlockKind::ToolCall {
                    continue;
                }
                let Some(id) = b.id() else { continue };
                let twin = seen.iter().any(|&(k2, j2)| {
                    f.block(k2, j2)
                        .and_then(|c| c.id())
                        .is_some_and(|other| other == id)
                });
                if twin {
                    dups.push((k, j, id.into_owned()));
                } else {
                    seen.push((k, j));
                }
            }
        }
        for (k, j, id) in dups {
            f.find(
                RuleId::An46,
                Severity::Error,
                k,
                Some(j),
                format!(
                    "a second `tool_use` with the id `{id}`: \"`tool_use` ids must be unique\""
                ),
                None,
            );
        }
        i = a_end;
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case};

    fn calls(second: &str) -> String {
        body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"a","input":{{}}}},{{"type":"tool_use","id":"{second}","name":"b","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}},{{"type":"tool_result","tool_use_id":"{second}","content":"y"}}]}}"#
            ),
        )
    }

    #[test]
    fn a_repeated_id_is_reported_and_left() {
        check_case(
            &calls("toolu_1"),
            Expect {
                rules: &["AN-46"],
                after: None,
                left: &["AN-46"],
            },
        );
    }

    #[test]
    fn distinct_ids_pass() {
        check_case(
            &calls("toolu_2"),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }
}
