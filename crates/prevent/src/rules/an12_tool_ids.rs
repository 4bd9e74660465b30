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

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};
use turnkeeper_model::edit::object;
use turnkeeper_model::json::write_string;
use turnkeeper_model::{BlockKind, Format, Kinds, NewBlock};

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

/// Rewrites invalid tool ids on calls and results alike.
pub fn run(_ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_, '_>) {
    // The common case, every id valid, costs one pass and no allocation.
    let all_valid = (0..f.len()).all(|i| {
        !f.summary(i).kinds.intersects(Kinds::CLIENT_TOOLS)
            || f.blocks(i).all(|b| match b.kind() {
                BlockKind::ToolCall | BlockKind::ToolResult => b.block.tool_id_valid(b.src),
                _ => true,
            })
    });
    if all_valid {
        return;
    }
    let mut bad: Vec<(usize, usize, String, &'static str)> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for i in 0..f.len() {
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
}
