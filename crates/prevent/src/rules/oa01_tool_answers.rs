//! ## OA-01: Chat, a tool call without its tool message right after it
//!
//! OA-01 (OpenAI Chat Completions, and every OpenAI-compatible provider): an assistant message
//! with `tool_calls` must be followed **immediately** by one `tool` message per `tool_call_id`,
//! before any other message.
//!
//! OpenAI's error: `An assistant message with 'tool_calls' must be followed by tool messages
//! responding to each 'tool_call_id'. The following tool_call_ids did not have response
//! messages: <ids>` (api-rules-reasoning-2026-11.md §2, OA-01 = OC-01; V-Obs, itmisx/deepx-code#94).
//! Every provider enforces tool pairing, so this is an error whatever the target.
//!
//! Repair (safe, the research's (a) and (b)): a `tool` message further on that answers the call
//! is moved up into the run after the call; a call nobody answers is removed from `tool_calls`
//! (its message keeps its content and its reasoning field byte for byte, DS-03/KM-01); a message
//! left with neither calls nor content goes whole, with its reasoning, reported. No tool output
//! is made up (the research's (c), a synthetic "aborted" answer, is not done).
//!
//! Scope: format `chat`; every provider; fix: safe.

use std::collections::HashSet;

use turnkeeper_model::wire::chat::ChatRole;
use turnkeeper_model::wire::{Edit, Piece, write_array};

use crate::finding::Severity;
use crate::id::{ChangeAction, RuleId};
use crate::wire::chat::{ChatCx, text};

/// Runs OA-01.
pub fn run(cx: &mut ChatCx<'_, '_>) {
    let src = cx.src();
    let msgs = cx.messages();
    for (i, m) in msgs.iter().enumerate() {
        if m.role != ChatRole::Assistant || m.calls.is_empty() {
            continue;
        }
        // The run of tool messages right after it.
        let mut end = i + 1;
        let mut answered: HashSet<String> = HashSet::new();
        while let Some(t) = msgs.get(end) {
            if t.role != ChatRole::Tool {
                break;
            }
            answered.insert(text(src, t.tool_call_id).into_owned());
            end += 1;
        }
        let mut missing: Vec<usize> = Vec::new();
        for (j, c) in m.calls.iter().enumerate() {
            let id = text(src, c.id);
            if id.is_empty() || !answered.contains(id.as_ref()) {
                missing.push(j);
            }
        }
        if missing.is_empty() {
            continue;
        }
        let ids: Vec<String> = missing
            .iter()
            .map(|&j| text(src, m.calls[j].id).into_owned())
            .collect();
        let mut unanswered = Vec::new();
        for (&j, id) in missing.iter().zip(&ids) {
            // A tool message further on that answers this call, and not a call of the
            // assistant message its own run follows.
            let later = (end..msgs.len()).find(|&k| {
                let t = &msgs[k];
                t.role == ChatRole::Tool
                    && !cx.moved[k]
                    && !id.is_empty()
                    && text(src, t.tool_call_id) == id.as_str()
                    && !answers_own_call(cx, k)
            });
            match later {
                Some(k) => {
                    // Claimed by this call, in check as in repair (OA-02 leaves it alone).
                    cx.moved[k] = true;
                    cx.find(
                        RuleId::Oa01,
                        Severity::Error,
                        i,
                        format!("messages[{i}].tool_calls[{j}]"),
                        format!(
                            "the tool call {id:?} is answered at messages[{k}], not right after \
                             its call; {} rejects this: An assistant message with 'tool_calls' \
                             must be followed by tool messages responding to each \
                             'tool_call_id'",
                            cx.provider_name()
                        ),
                        Some(format!("move messages[{k}] up to right after its call")),
                    );
                    if cx.repair {
                        cx.move_after(
                            RuleId::Oa01,
                            k,
                            i,
                            format!(
                                "the answer to the tool call {id:?} of messages[{i}] moved up to \
                                 right after its call"
                            ),
                        );
                    }
                }
                None => unanswered.push((j, id.clone())),
            }
        }
        if unanswered.is_empty() {
            continue;
        }
        let list: Vec<&str> = unanswered.iter().map(|(_, id)| id.as_str()).collect();
        let keep_calls = m.calls.len() - unanswered.len();
        let left_empty = keep_calls == 0 && !m.content.has_content() && !m.function_call;
        cx.find(
            RuleId::Oa01,
            Severity::Error,
            i,
            format!("messages[{i}].tool_calls"),
            format!(
                "{} rejects this: An assistant message with 'tool_calls' must be followed by \
                 tool messages responding to each 'tool_call_id'. The following tool_call_ids \
                 did not have response messages: {}",
                cx.provider_name(),
                list.join(", ")
            ),
            Some(if left_empty {
                "remove the message: nothing but the unanswered calls (and its reasoning) is in it"
                    .to_owned()
            } else {
                "remove the unanswered calls; the message keeps its content and reasoning"
                    .to_owned()
            }),
        );
        if !cx.repair {
            continue;
        }
        if left_empty {
            let reasoning = if m.has_reasoning_field() {
                "; its reasoning goes with it, whole"
            } else {
                ""
            };
            cx.remove_message(
                RuleId::Oa01,
                i,
                format!(
                    "its tool calls {} were never answered and it holds nothing else{reasoning}",
                    list.join(", ")
                ),
            );
            continue;
        }
        let Some(arr) = m.tool_calls.as_ref() else {
            continue;
        };
        let gone: HashSet<usize> = unanswered.iter().map(|(j, _)| *j).collect();
        if keep_calls == 0 {
            if let Some(k) = m.member(src, "tool_calls")
                && let Some(e) = Edit::remove_member(&m.members, k)
            {
                cx.edit(i, e);
            }
        } else {
            let order: Vec<Piece> = (0..arr.elems.len())
                .filter(|j| !gone.contains(j))
                .map(Piece::Orig)
                .collect();
            let text = write_array(src, arr, &order, &mut Default::default());
            cx.edit(
                i,
                Edit {
                    span: arr.span,
                    text,
                },
            );
        }
        for (j, id) in &unanswered {
            cx.out.change(
                RuleId::Oa01,
                ChangeAction::RemovedBlock,
                format!("messages[{i}].tool_calls[{j}]"),
                format!("the tool call {id:?} was never answered"),
            );
        }
    }
}

/// True when tool message `k` answers a call of the assistant message its run follows.
fn answers_own_call(cx: &ChatCx<'_, '_>, k: usize) -> bool {
    let src = cx.src();
    let msgs = cx.messages();
    let mut a = k;
    while a > 0 {
        a -= 1;
        match msgs[a].role {
            ChatRole::Tool => continue,
            ChatRole::Assistant => {
                let id = text(src, msgs[k].tool_call_id);
                return msgs[a].calls.iter().any(|c| text(src, c.id) == id);
            }
            _ => return false,
        }
    }
    false
}
