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
//! Under programmatic tool calling a `server_tool_use` (code execution) makes client tool calls
//! and completes in a **later** assistant message, after their results: a result whose call is
//! in an earlier assistant message of the same turn is valid. The other way round, a server
//! call whose result never comes before a new user turn starts is rejected: ``messages.N:
//! `web_fetch` tool use with id `srvtoolu_…` was found without a corresponding
//! `web_fetch_tool_result` block`` (api-rules-2026-11.md AN-40, BerriAI/litellm#18137); the
//! same holds for every server tool, `web_search` and `web_fetch` alike. A call still open in
//! the final turn is a continuation the API completes, and is valid.
//!
//! **Repair.** The orphan server result is removed. A server call whose result never came is
//! removed where no thinking is bound to it (not in a message holding signed or redacted
//! thinking); there it is reported only.
//!
//! **Why it is safe.** A server result without its call, and a completed turn's server call
//! without its result, can never be accepted; no result, client or server, is ever made up for
//! a server call (api-rules.md §5.2, AN-15 row), and a signed turn is never edited.

use std::collections::HashMap;

use turnkeeper_model::{BlockKind, Kinds, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// Whether message `i` holds signed thinking (a thinking block with a signature, or redacted
/// thinking): the blocks beside it are bound to the turn and never removed.
fn signed(f: &Fixer<'_, '_>, i: usize) -> bool {
    f.summary(i).kinds.intersects(Kinds::THINKING)
        && f.blocks(i).any(|b| match b.kind() {
            BlockKind::RedactedThinking => true,
            BlockKind::Thinking => b.signature().is_some_and(|s| !s.is_empty()),
            _ => false,
        })
}

/// Removes server tool results whose call is not before them, and server calls whose result
/// never comes.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    // Server calls not answered yet: id -> (message, block).
    let mut open: HashMap<String, (usize, usize)> = HashMap::new();
    // Calls a new user turn left behind: (message, block, id, name).
    let mut never: Vec<(usize, usize, String, String)> = Vec::new();
    let mut i = ctx.horizon;
    while i < f.len() {
        let kinds = f.summary(i).kinds;
        if f.role(i) == Role::User && !kinds.contains(BlockKind::ToolResult) {
            // A new user turn: a server call still open was never completed.
            if !open.is_empty() {
                let mut left: Vec<(usize, usize, String)> =
                    open.drain().map(|(id, (k, j))| (k, j, id)).collect();
                left.sort();
                for (k, j, id) in left {
                    let name = f
                        .block(k, j)
                        .and_then(|b| b.str(b.block.name).map(|n| n.into_owned()))
                        .unwrap_or_default();
                    never.push((k, j, id, name));
                }
            }
            i += 1;
            continue;
        }
        if f.role(i) != Role::Assistant
            || !(kinds.intersects(Kinds::SERVER_TOOLS) || kinds.contains(BlockKind::Other))
        {
            i += 1;
            continue;
        }
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            match b.kind() {
                BlockKind::ServerToolCall => {
                    open.insert(b.id().map(|x| x.into_owned()).unwrap_or_default(), (i, j));
                }
                BlockKind::ServerToolResult => {
                    let id = b.tool_use_id().map(|x| x.into_owned()).unwrap_or_default();
                    // The call may be in this message or, under programmatic tool calling, in
                    // an earlier assistant message of the turn, across a client tool call.
                    if open.remove(&id).is_none() {
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
                // A result type turnkeeper does not classify (`advisor_redacted_result`) still
                // answers its call.
                BlockKind::Other => {
                    if let Some(id) = b.tool_use_id() {
                        open.remove(id.as_ref());
                    }
                }
                _ => {}
            }
            j += 1;
        }
        i += 1;
    }
    // From the end, so the positions of those still to go stay valid. Calls still open at the
    // end are the final turn's, which the API completes (`pause_turn`, programmatic calls).
    for (k, j, id, name) in never.into_iter().rev() {
        let why = format!(
            "`{name}` tool use with id `{id}` was found without a corresponding `{name}_tool_result` block"
        );
        if signed(f, k) {
            f.find(
                RuleId::An15,
                Severity::Error,
                k,
                Some(j),
                format!("{why}; its message holds signed thinking, so it is left as it came"),
                None,
            );
            continue;
        }
        f.find(
            RuleId::An15,
            Severity::Error,
            k,
            Some(j),
            why.clone(),
            Some("remove the server call whose result is gone (no result is ever made up)"),
        );
        f.remove_block(RuleId::An15, k, j, format!("removed: {why}"));
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

    const SRV: &str = r#"{"type":"server_tool_use","id":"srvtoolu_1","name":"code_execution","input":{"code":"run()"}}"#;
    const CLIENT: &str = r#"{"type":"tool_use","id":"toolu_1","name":"lookup","input":{},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_1"}}"#;
    const CLIENT_RESULT: &str = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"42"}]}"#;
    const SRV_RESULT: &str = r#"{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"code_execution_result","stdout":"42","stderr":"","return_code":0,"content":[]}}"#;

    /// Programmatic tool calling: the server call completes in a later assistant message, across
    /// a client call and its result. Valid, and left byte for byte (the result used to be
    /// removed as an orphan); so is the same turn still open at the end.
    #[test]
    fn a_server_call_completed_in_a_later_message_is_valid() {
        let done = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{SRV},{CLIENT}]}},{CLIENT_RESULT},{{"role":"assistant","content":[{SRV_RESULT},{{"type":"text","text":"42"}}]}},{{"role":"user","content":"thanks"}}"#
            ),
        );
        let open = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{SRV},{CLIENT}]}},{CLIENT_RESULT}"#
            ),
        );
        for input in [done, open] {
            check_case(
                &input,
                Expect {
                    rules: &[],
                    after: None,
                    left: &[],
                },
            );
        }
    }

    /// A `web_fetch` (or `web_search`) call whose result is gone when a new user turn starts is
    /// rejected; it goes, the text after it stays. In a message holding signed thinking it is
    /// reported only.
    #[test]
    fn a_server_call_without_its_result_in_a_finished_turn() {
        let msgs = |lead: &str, name: &str, call: bool| {
            let c = if call {
                format!(
                    r#"{{"type":"server_tool_use","id":"srvtoolu_2","name":"{name}","input":{{"url":"https://example.com"}}}},"#
                )
            } else {
                String::new()
            };
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{lead}{c}{{"type":"text","text":"done"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        for name in ["web_fetch", "web_search"] {
            check_case(
                &body("claude-sonnet-4-5", "", &msgs("", name, true)),
                Expect {
                    rules: &["AN-15"],
                    after: Some(&body("claude-sonnet-4-5", "", &msgs("", name, false))),
                    left: &[],
                },
            );
        }
        let th = crate::rules::common::testing::thinking("t") + ",";
        check_case(
            &body(
                "claude-sonnet-4-5",
                crate::rules::common::testing::MANUAL,
                &msgs(&th, "web_fetch", true),
            ),
            Expect {
                rules: &["AN-15"],
                after: None,
                left: &["AN-15"],
            },
        );
    }

    /// An advisor call is answered by `advisor_redacted_result`, a result type turnkeeper does
    /// not classify: still its answer, nothing reported.
    #[test]
    fn an_advisor_call_answered_by_a_redacted_result_is_valid() {
        check_case(
            &body(
                "claude-sonnet-5-5",
                "",
                r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_3","name":"advisor","input":{}},{"type":"advisor_redacted_result","tool_use_id":"srvtoolu_3","encrypted_content":"EqQB"},{"type":"text","text":"a"}]},{"role":"user","content":"more"}"#,
            ),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }
}
