//! ## OR-05: Responses, function calls and outputs do not pair up
//!
//! OR-05 (OpenAI Responses): every `function_call_output.call_id` needs a `function_call` in the
//! input, and every `function_call` needs its output after it.
//!
//! The errors (api-rules-reasoning-2026-11.md §3.2, OR-05; V-Obs,
//! openai/openai-agents-python#722, continuedev/continue#10092): `No tool call found for function
//! call output with call_id <id>.`; `No tool output found for function call <id>.` DeepSeek's
//! Responses endpoint also refuses a message between a call and its output (a real 400 in
//! ../shared/real-traffic): `No tool output found for tool call <id>.`
//!
//! Repair (safe, nothing made up): an output that answers no call goes (Codex's
//! `remove_orphan_outputs`), except with `previous_response_id` or a `conversation`, where it
//! answers a call the server holds. An unanswered call goes, with the reasoning item right before
//! it (whole, fingerprint reported) when the call was all that item produced, since it would be
//! orphaned (OR-01). No synthetic output is written. DeepSeek's interleaving is reported only.
//!
//! Scope: format `responses`; every provider (an error for OpenAI and DeepSeek, a warning for
//! xAI and servers turnkeeper does not know); fix: safe.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use turnkeeper_model::wire::responses::ItemKind;

use crate::id::RuleId;
use crate::wire::Provider;
use crate::wire::responses::{ResponsesCx, path};

/// Runs OR-05.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    let calls = cx.kept(ItemKind::FunctionCall);
    let outputs = cx.kept(ItemKind::FunctionCallOutput);
    if !cx.body.has_server_history() {
        // The call ids of the input, once (a search per output would make the rule quadratic).
        let call_ids: HashSet<Cow<'_, str>> = calls.iter().filter_map(|&c| cx.call_id(c)).collect();
        for &o in &outputs {
            let Some(cid) = cx.call_id(o) else { continue };
            if call_ids.contains(&cid) {
                continue;
            }
            cx.find(
                RuleId::Or05,
                o,
                format!("\"No tool call found for function call output with call_id {cid}.\""),
                Some("remove the output that answers no call"),
            );
            cx.remove(
                RuleId::Or05,
                o,
                format!("no function_call with call_id `{cid}` in the input"),
            );
        }
    }
    // The outputs still kept, by call id, in input order. The loop below removes only calls
    // and reasoning items, so this stays true while it runs.
    let mut answers: HashMap<Cow<'_, str>, Vec<usize>> = HashMap::new();
    for &o in &outputs {
        if cx.st.keep[o]
            && let Some(cid) = cx.call_id(o)
        {
            answers.entry(cid).or_default().push(o);
        }
    }
    for &c in &calls {
        if !cx.st.keep[c] {
            continue;
        }
        let Some(cid) = cx.call_id(c) else { continue };
        // The first output with this call id after the call.
        let answer = answers.get(&cid).and_then(|os| {
            let k = os.partition_point(|&o| o <= c);
            os.get(k).copied()
        });
        let Some(o) = answer else {
            cx.find(
                RuleId::Or05,
                c,
                format!("\"No tool output found for function call {cid}.\""),
                Some(
                    "remove the unanswered call, and the reasoning item right before it when the \
                     call was all it produced",
                ),
            );
            if !cx.repairs(RuleId::Or05) {
                continue;
            }
            let before = cx
                .prev_kept(c)
                .filter(|&p| cx.item(p).kind == ItemKind::Reasoning);
            cx.remove(
                RuleId::Or05,
                c,
                format!("no function_call_output answers `{cid}`; no output is made up"),
            );
            if let Some(p) = before {
                let produced_more = cx
                    .next_kept(p)
                    .is_some_and(|n| cx.item(n).is_model_output());
                if !produced_more {
                    cx.remove(
                        RuleId::Or05,
                        p,
                        format!(
                            "the reasoning item produced only the unanswered call `{cid}`, \
                             removed with it"
                        ),
                    );
                }
            }
            continue;
        };
        if cx.target.provider != Provider::DeepSeek {
            continue;
        }
        let between = (c + 1..o).find(|&m| cx.st.keep[m] && cx.item(m).kind == ItemKind::Message);
        if let Some(m) = between {
            cx.find(
                RuleId::Or05,
                c,
                format!(
                    "DeepSeek: \"No tool output found for tool call {cid}.\" (the message {} \
                     comes between the call and its output {})",
                    path(m),
                    path(o)
                ),
                None,
            );
        }
    }
}
