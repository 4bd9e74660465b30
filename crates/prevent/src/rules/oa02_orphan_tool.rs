//! ## OA-02: Chat, a tool message answering no call right before it
//!
//! OA-02 (OpenAI Chat Completions, and every OpenAI-compatible provider): a `tool` message must
//! answer a `tool_calls` id of the assistant message right before its run, once.
//!
//! The providers' errors (api-rules-reasoning-2026-11.md §2, OA-02 = OC-02; V-Obs):
//! OpenAI `Invalid parameter: messages with role 'tool' must be a response to a preceeding
//! message with 'tool_calls'.`; DeepSeek `Messages with role 'tool' must be a response to a
//! preceding message with 'tool_calls'`; DashScope (Qwen) `messages with role "tool" must be a
//! response to a preceeding message with "tool_calls".`
//!
//! Repair (safe): the orphan `tool` message goes (Codex's `remove_orphan_outputs`); a tool
//! message that answers an earlier call further up was already moved there by OA-01.
//!
//! Scope: format `chat`; every provider; fix: safe.

use std::collections::HashSet;

use turnkeeper_model::wire::chat::ChatRole;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::Provider;
use crate::wire::chat::{ChatCx, text};

/// Runs OA-02.
pub fn run(cx: &mut ChatCx<'_, '_>) {
    let src = cx.src();
    let msgs = cx.messages();
    let mut run_calls: Option<HashSet<String>> = None;
    let mut seen: HashSet<String> = HashSet::new();
    for (k, m) in msgs.iter().enumerate() {
        match m.role {
            ChatRole::Assistant => {
                run_calls = Some(
                    m.calls
                        .iter()
                        .map(|c| text(src, c.id).into_owned())
                        .collect(),
                );
                seen.clear();
                continue;
            }
            ChatRole::Tool => {}
            _ => {
                run_calls = None;
                continue;
            }
        }
        if cx.moved[k] || !cx.alive(k) {
            continue;
        }
        let id = text(src, m.tool_call_id).into_owned();
        let answers = run_calls.as_ref().is_some_and(|c| c.contains(&id));
        let duplicate = answers && !seen.insert(id.clone());
        if answers && !duplicate {
            continue;
        }
        let wording = match cx.target.provider {
            Provider::DeepSeek => {
                "Messages with role 'tool' must be a response to a preceding message with \
                 'tool_calls'"
            }
            Provider::Qwen => {
                "messages with role \"tool\" must be a response to a preceeding message with \
                 \"tool_calls\"."
            }
            _ => {
                "Invalid parameter: messages with role 'tool' must be a response to a \
                 preceeding message with 'tool_calls'."
            }
        };
        let what = if duplicate {
            format!("a second answer to the tool call {id:?}")
        } else {
            format!("the tool call {id:?} is not among the calls right before it")
        };
        cx.find(
            RuleId::Oa02,
            Severity::Error,
            k,
            format!("messages[{k}]"),
            format!("{what}; {} rejects this: {wording}", cx.provider_name()),
            Some("remove the tool message".to_owned()),
        );
        if cx.repair {
            cx.remove_message(RuleId::Oa02, k, format!("{what}: it answers nothing"));
        }
    }
}
