//! ## AN-15: a server tool result without its server_tool_use
//!
//! **The API.** A `*_tool_result` block must follow its `server_tool_use` in the same assistant
//! message, with the same `tool_use_id`. An assistant message that ends in an unanswered
//! `server_tool_use` is a valid continuation (`pause_turn`). Error: ``messages.N.content.M:
//! unexpected `tool_use_id` found in `advisor_tool_result` blocks: <id>. Each
//! `advisor_tool_result` block must have a corresponding `server_tool_use` block before it.``
//! Source: api-rules.md AN-15 (stop-reasons page; anthropics/claude-code#65726); still seen in
//! 2026-09 (api-rules-2026-11.md AN-40, anthropics/claude-code#95406).
//!
//! **Repair.** The orphan server result is removed.
//!
//! **Why it is safe.** A server result without its call can never be accepted; no client
//! `tool_result` is ever made up for a server call (api-rules.md §5.2, AN-15 row).

use std::collections::HashSet;

use turnkeeper_model::{BlockKind, Kinds};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// Removes server tool results whose call is not before them in the message.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    for i in ctx.horizon..f.len() {
        if !f.summary(i).kinds.intersects(Kinds::SERVER_TOOLS) {
            continue;
        }
        let mut seen: HashSet<String> = HashSet::new();
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            match b.kind() {
                BlockKind::ServerToolCall => {
                    seen.insert(b.id().map(|x| x.into_owned()).unwrap_or_default());
                }
                BlockKind::ServerToolResult => {
                    let id = b.tool_use_id().map(|x| x.into_owned()).unwrap_or_default();
                    if !seen.contains(&id) {
                        let t = b.type_name().into_owned();
                        f.find(RuleId::An15, Severity::Error, i, Some(j),
                            format!("unexpected `tool_use_id` found in `{t}` blocks: {id}. Each `{t}` block must have a corresponding `server_tool_use` block before it."),
                            Some("remove the orphan server result"));
                        if f.remove_block(
                            RuleId::An15,
                            i,
                            j,
                            format!("removed a `{t}` whose `server_tool_use` is not before it"),
                        ) {
                            continue;
                        }
                    }
                }
                _ => {}
            }
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case};

    #[test]
    fn an_orphan_server_result_goes_and_a_paired_one_stays() {
        let msgs = |call: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{call}{{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let paired = body(
            "claude-sonnet-4-5",
            "",
            &msgs(
                r#"{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}},"#,
            ),
        );
        check_case(
            &paired,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
        let orphan = body("claude-sonnet-4-5", "", &msgs(""));
        let after = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"a"}]},{"role":"user","content":"more"}"#,
        );
        check_case(
            &orphan,
            Expect {
                rules: &["AN-15"],
                after: Some(&after),
                left: &[],
            },
        );
    }
}
