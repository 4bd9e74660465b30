//! ## AN-12: a tool id outside `^[a-zA-Z0-9_-]+$`
//!
//! **The API.** `tool_use.id` (and so `tool_result.tool_use_id`) must match
//! `^[a-zA-Z0-9_-]+$`; the empty string is rejected. Error:
//! `messages.N.content.M.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`. Source:
//! api-rules.md AN-12 (maximhq/bifrost#5097; langchain-ai/langchain#37756; QwenLM/qwen-code#8160
//! for the empty id). Invalid ids often come from other providers, such as Kimi's
//! `functions.Bash:0`.
//!
//! **Repair.** Invalid ids are rewritten deterministically (every other character becomes `_`,
//! with a hash suffix on collision), the same way on the call and on its results.
//!
//! **Why it is safe.** Ids from other providers carry no Anthropic signature, and Anthropic ids
//! already match, so a turn the API produced is never rewritten.
//!
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
//! The check looks at the calls of each run of consecutive assistant messages that make calls
//! (the API merges consecutive assistant messages), where duplicates come from: merged streams
//! and replayed parallel calls; ids are compared as written. It shares AN-12's one pass over the
//! tool ids, so a valid transcript pays for both once. Corpus:
//! `corpus/damaged/an46_duplicate_tool_use_ids.json`; the valid counterpart is
//! `corpus/anthropic/parallel_tool_calls.json` (parallel calls, distinct ids, accepted).

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};
use turnkeeper_model::edit::object;
use turnkeeper_model::json::write_string;
use turnkeeper_model::{BlockKind, Draft, Format, Kinds, NewBlock};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// True for a valid Anthropic client tool id (`^[a-zA-Z0-9_-]+$`, api-rules.md AN-12).
pub fn valid_tool_id(id: &str) -> bool {
    turnkeeper_model::json::is_tool_id(id)
}

fn sanitize(id: &str, taken: &HashSet<String>) -> String {
    let base: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = if base.is_empty() {
        "toolu_empty".to_owned()
    } else {
        base
    };
    if !taken.contains(&base) {
        return base;
    }
    let h = Sha256::digest(id.as_bytes());
    let suffix: String = h.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{base}_{suffix}")
}

/// One pass over the client tool blocks: whether every id is valid (AN-12), and the calls whose
/// id an earlier call of the same run of calling assistant messages has (AN-46), as (message,
/// block, id).
fn scan(d: &Draft<'_, '_>, from: usize) -> (bool, Vec<(usize, usize, String)>) {
    let mut all_valid = true;
    let mut dups = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut last_calling: Option<usize> = None;
    for i in from..d.len() {
        let kinds = d.summary(i).kinds;
        if !kinds.intersects(Kinds::CLIENT_TOOLS) {
            continue;
        }
        // A call in a user message is AN-06's; it counts here like any other.
        let calls = kinds.contains(BlockKind::ToolCall);
        if calls && last_calling.is_none_or(|k| k + 1 != i) {
            seen.clear();
        }
        for (j, b) in d.blocks(i).enumerate() {
            match b.kind() {
                BlockKind::ToolCall => {
                    all_valid &= b.block.tool_id_valid(b.src);
                    if let (true, Some(id)) = (calls, b.block.id.map(|s| s.raw(b.src))) {
                        if seen.contains(&id) {
                            dups.push((i, j, id.to_owned()));
                        } else {
                            seen.push(id);
                        }
                    }
                }
                BlockKind::ToolResult => all_valid &= b.block.tool_id_valid(b.src),
                _ => {}
            }
        }
        if calls {
            last_calling = Some(i);
        }
    }
    (all_valid, dups)
}

/// Rewrites invalid tool ids on calls and results alike (AN-12); reports repeated call ids
/// (AN-46).
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    // The common case, every id valid and none repeated, costs one pass and no allocation.
    let (all_valid, dups) = scan(f.draft(), ctx.horizon);
    for (k, j, id) in dups {
        f.find(
            RuleId::An46,
            Severity::Error,
            k,
            Some(j),
            format!("a second `tool_use` with the id `{id}`: \"`tool_use` ids must be unique\""),
            None,
        );
    }
    if all_valid {
        return;
    }
    let mut bad: Vec<(usize, usize, String, &'static str)> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for i in ctx.horizon..f.len() {
        for (j, b) in f.blocks(i).enumerate() {
            let (field, id) = match b.kind() {
                BlockKind::ToolCall => ("id", b.id()),
                BlockKind::ToolResult => ("tool_use_id", b.tool_use_id()),
                _ => continue,
            };
            let id = id.map(|x| x.into_owned()).unwrap_or_default();
            if valid_tool_id(&id) {
                taken.insert(id);
            } else {
                bad.push((i, j, id, field));
            }
        }
    }
    if bad.is_empty() {
        return;
    }
    let mut map: HashMap<String, String> = HashMap::new();
    for (i, j, id, field) in bad {
        let new = map
            .entry(id.clone())
            .or_insert_with(|| {
                let n = sanitize(&id, &taken);
                taken.insert(n.clone());
                n
            })
            .clone();
        f.find(
            RuleId::An12,
            Severity::Error,
            i,
            Some(j),
            format!("`{field}` {id:?} does not match '^[a-zA-Z0-9_-]+$'"),
            Some("rewrite the id on the call and its results"),
        );
        let mut v = String::new();
        write_string(&mut v, &new);
        let edited = f
            .block(i, j)
            .and_then(|b| object::set_key(b.raw(), field, &v))
            .and_then(|json| NewBlock::new(Format::Anthropic, json).ok());
        if let Some(nb) = edited {
            f.edit_block(
                RuleId::An12,
                i,
                j,
                nb,
                format!("rewrote tool id {id:?} as {new:?}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case};

    #[test]
    fn a_kimi_id_is_rewritten_on_both_sides() {
        let msgs = |id: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Bash","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"ok"}}]}}"#
            )
        };
        let input = body("claude-sonnet-4-5", "", &msgs("functions.Bash:0"));
        let after = body("claude-sonnet-4-5", "", &msgs("functions_Bash_0"));
        check_case(
            &input,
            Expect {
                rules: &["AN-12", "AN-12"],
                after: Some(&after),
                left: &[],
            },
        );
    }

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
