//! Claude Code sessions through the same rules: the conversation a resumed session replays
//! (`turnkeeper_model::claude_code`), checked as the Anthropic request Claude Code would send,
//! under the rules of where it goes ([`Target`]: a session on a non-Anthropic backend behind
//! `ANTHROPIC_BASE_URL` gets warnings only), and every finding traced to its file line and
//! `uuid`.

use serde::Serialize;
use turnkeeper_model::claude_code::{Conversation, Request, Session};
use turnkeeper_model::edit::object;
use turnkeeper_model::opencode::ThinkingMode;
use turnkeeper_model::{Format, FormatHint, ModelError, read, read_reusing};

use crate::opencode::{SWITCH_MODEL, Target, next_turn, thinking_for};
use crate::{Finding, Options, Severity};

/// A finding on a Claude Code session, with the line it points at.
#[derive(Debug, Clone, Serialize)]
pub struct LineFinding {
    /// The finding, with paths into the rebuilt request.
    #[serde(flatten)]
    pub finding: Finding,
    /// The 1-based line number in the session file.
    pub line: Option<usize>,
    /// That line's `uuid`.
    pub uuid: Option<String>,
}

/// The result of checking a Claude Code session.
#[derive(Debug, Clone)]
pub struct SessionCheck {
    /// The conversation the resumed session replays.
    pub conversation: Conversation,
    /// The request it is sent as.
    pub request: Request,
    /// The findings.
    pub findings: Vec<LineFinding>,
    /// The model checked against (for a session not bound for Anthropic: [`SWITCH_MODEL`]).
    pub model: Option<String>,
    /// Where the session's next request goes.
    pub target: Target,
}

/// The `thinking` parameter's JSON for a mode.
fn thinking_json(mode: ThinkingMode) -> Option<String> {
    match mode {
        ThinkingMode::Manual { budget_tokens } => Some(format!(
            "{{\"type\":\"enabled\",\"budget_tokens\":{budget_tokens}}}"
        )),
        ThinkingMode::Adaptive => Some("{\"type\":\"adaptive\"}".to_owned()),
        ThinkingMode::Off => None,
    }
}

/// Rebuilds `session`'s conversation and checks it as its next request (the replayed messages
/// and a new prompt), for the model of its last real assistant line, or `opts.model`.
///
/// # Errors
/// When the rebuilt body cannot be read (a line whose blocks are not what the API takes as
/// blocks, e.g. a content array of non-objects).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, ModelError> {
    let conversation = session.rebuild();
    // Claude Code talks to Anthropic unless a line says otherwise (`message.model` of a backend
    // behind `ANTHROPIC_BASE_URL`); a session with no real response yet is Anthropic's.
    let target = match opts.model.as_deref().or(conversation.model.as_deref()) {
        Some(m) => Target::of(None, Some(m)),
        None => Target::of(Some("anthropic"), None),
    };
    let model = if target.is_anthropic() {
        target.model.clone()
    } else {
        Some(SWITCH_MODEL.to_owned())
    };
    let thinking = thinking_json(thinking_for(opts, model.as_deref()));
    let request = session.to_request(&conversation, model.as_deref(), thinking.as_deref());
    let converted = read(&request.body, FormatHint::Exactly(Format::Anthropic))?;
    let next = next_turn(&converted);
    let reread;
    let t = match &next {
        Some((body, kept)) => {
            reread = read_reusing(body, &converted, kept)?;
            &reread
        }
        None => &converted,
    };
    let check_opts = Options {
        model: model.clone(),
        ..opts.clone()
    };
    let findings = crate::check(t, &check_opts)
        .into_iter()
        .map(|mut f| {
            // A finding on the appended prompt (a result missing after the last response)
            // points at the last line before it.
            let origin = match (f.message_index, f.block_index) {
                (Some(m), b) => match request.blocks.get(m) {
                    Some(v) => v.get(b.unwrap_or(0)).copied(),
                    None => m
                        .checked_sub(1)
                        .and_then(|p| request.blocks.get(p))
                        .and_then(|v| v.last().copied()),
                },
                _ => None,
            };
            if !target.is_anthropic() {
                f.severity = f.severity.min(Severity::Warning);
                f.message = format!(
                    "if this session is sent to Claude ({SWITCH_MODEL}): {}",
                    f.message
                );
                f.repair = None;
            }
            LineFinding {
                line: origin.map(|i| session.lines[i].number),
                uuid: origin.and_then(|i| session.lines[i].uuid.clone()),
                finding: f,
            }
        })
        .collect();
    Ok(SessionCheck {
        conversation,
        request,
        findings,
        model,
        target,
    })
}

/// The text Claude Code writes as the error result of a tool call the user interrupted (as seen
/// in real session files, `shared/real-stores/claude-code/vps-config-root/e8624873-….jsonl`).
pub const REJECTED_TOOL: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// The user line Claude Code writes after it (same source).
pub const INTERRUPTED: &str = "[Request interrupted by user for tool use]";

/// One change a repair makes to a session file, by whole lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineChange {
    /// The rule the change keeps.
    pub rule: crate::RuleId,
    /// `removed_line`, `added_line`, `cut_torn_line` or `reparented_line`.
    pub action: &'static str,
    /// The 1-based line number in the original file (for an added line: the line it follows).
    pub line: usize,
    /// The line's `uuid`, when it has one.
    pub uuid: Option<String>,
    /// Why.
    pub reason: String,
}

/// A repair of a session file: the new text, the changes, and what was left to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The repaired text (the original when nothing changes).
    pub text: String,
    /// The changes, in file order.
    pub changes: Vec<LineChange>,
    /// Damage seen and deliberately not repaired, in words.
    pub left_alone: Vec<String>,
}

impl Plan {
    /// True when nothing changes.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Plans the repair of `session` from its check (see [`check_session`]), by whole lines only:
/// a torn last line is cut back to the last whole line; a line repeated with the `uuid` of an
/// earlier one goes; an orphan result line (AN-10) goes; a thinking-only response (AN-19) or a
/// thinking line whose signature can never verify (AN-23) goes, except in the latest assistant
/// message, whose thinking is never dropped or edited (left to the user: disable thinking for
/// the next request, or `/rewind`); tool calls left without results at the end of the session
/// (AN-08) get the two lines Claude Code itself writes on an interrupt. The children of a
/// removed line are re-parented to its parent (their `parentUuid` member is the only byte that
/// changes in them). For a session not bound for Anthropic only the torn and duplicated lines
/// are repaired.
pub fn plan(session: &Session, check: &SessionCheck) -> Plan {
    use crate::RuleId;
    use std::collections::{BTreeMap, BTreeSet, HashSet};

    let mut changes = Vec::new();
    let mut left_alone = Vec::new();
    let mut remove: BTreeMap<usize, (RuleId, String)> = BTreeMap::new();
    let lines = &session.lines;
    // Duplicated lines: the same uuid again.
    let mut seen = HashSet::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(u) = &l.uuid
            && !seen.insert(u.as_str())
        {
            remove.insert(
                i,
                (
                    RuleId::Unchecked,
                    format!("a second line with uuid {u} (a duplicated write)"),
                ),
            );
        }
    }
    let conv = &check.conversation;
    let last_assistant = conv
        .messages
        .iter()
        .rposition(|(r, _)| *r == turnkeeper_model::claude_code::LineRole::Assistant);
    let mut append_interrupt: Option<usize> = None;
    if check.target.is_anthropic() {
        for f in &check.findings {
            let Some(m) = f.finding.message_index else {
                continue;
            };
            let line_of_block = f
                .finding
                .block_index
                .and_then(|b| check.request.blocks.get(m)?.get(b).copied());
            let latest = Some(m) == last_assistant;
            let one_block = |i: usize| {
                lines[i]
                    .message
                    .as_ref()
                    .is_some_and(|mm| mm.content.types().len() == 1)
            };
            match f.finding.rule {
                RuleId::An10 => match line_of_block {
                    Some(i) if one_block(i) => {
                        remove.insert(i, (RuleId::An10, f.finding.message.clone()));
                    }
                    _ => left_alone.push(format!("line {:?}: {}", f.line, f.finding.message)),
                },
                RuleId::An23 => match line_of_block {
                    Some(i) if !latest && one_block(i) => {
                        remove.insert(i, (RuleId::An23, f.finding.message.clone()));
                    }
                    _ => left_alone.push(format!(
                        "line {:?}: {} (thinking in the latest assistant message is never dropped or edited: disable thinking for the next request, or /rewind)",
                        f.line, f.finding.message
                    )),
                },
                RuleId::An19 => {
                    let Some((_, ls)) = conv.messages.get(m) else {
                        continue;
                    };
                    let thinking_only = ls.iter().all(|&i| {
                        lines[i].message.as_ref().is_some_and(|mm| {
                            mm.content
                                .types()
                                .iter()
                                .all(|t| t == "thinking" || t == "redacted_thinking")
                        })
                    });
                    if thinking_only && !latest {
                        for &i in ls {
                            remove.insert(
                                i,
                                (
                                    RuleId::An19,
                                    "a response holding only thinking (interrupted after thinking)"
                                        .to_owned(),
                                ),
                            );
                        }
                    } else {
                        left_alone.push(format!(
                            "line {:?}: {} (thinking in the latest assistant message is never dropped or edited: disable thinking for the next request, or /rewind)",
                            f.line, f.finding.message
                        ));
                    }
                }
                // AN-08 points at the message that should hold the results: the calls are in
                // the one before. Only calls left open by the session's last response are
                // answered (by appending what Claude Code writes on an interrupt); results
                // missing in the middle are left to the user.
                RuleId::An08 => {
                    let calls = m.checked_sub(1);
                    match calls {
                        Some(a) if a + 1 >= conv.messages.len() && Some(a) == last_assistant => {
                            append_interrupt = Some(a);
                        }
                        _ => left_alone.push(format!(
                            "line {:?}: {} (not at the end of the session)",
                            f.line, f.finding.message
                        )),
                    }
                }
                _ => {}
            }
        }
    } else {
        left_alone.push(format!(
            "the session goes to {} (not Anthropic): only torn and duplicated lines are repaired",
            check.target.model.as_deref().unwrap_or("another provider")
        ));
    }

    // Re-parenting: a removed line's children hang off its parent (through removed chains).
    // Each uuid's first line (a duplicate's removal leaves the uuid in place).
    let mut uuid_index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(u) = l.uuid.as_deref() {
            uuid_index.entry(u).or_insert(i);
        }
    }
    let removed_uuids: BTreeSet<&str> = remove
        .keys()
        .filter_map(|&i| lines[i].uuid.as_deref())
        .filter(|u| {
            uuid_index
                .get(u)
                .is_some_and(|&first| remove.contains_key(&first))
        })
        .collect();
    let new_parent = |start: Option<&str>| -> Option<String> {
        let mut p: Option<String> = start.map(str::to_owned);
        let mut hops = 0;
        while let Some(u) = p.as_deref() {
            if !removed_uuids.contains(u) || hops > lines.len() {
                break;
            }
            hops += 1;
            p = uuid_index.get(u).and_then(|&i| lines[i].parent.clone());
        }
        p
    };

    let mut text = String::with_capacity(session.text.len());
    let end = session.torn_tail.unwrap_or(session.text.len());
    let mut pos = 0;
    for (i, l) in lines.iter().enumerate() {
        if l.start >= end {
            break;
        }
        let line_end = (l.end + 1).min(end).max(l.end);
        let nl_end = if session.text[l.end..].starts_with("\r\n") {
            l.end + 2
        } else if session.text[l.end..].starts_with('\n') {
            l.end + 1
        } else {
            line_end
        };
        // Bytes between lines (blank lines, unparsed lines) are kept as they are.
        text.push_str(&session.text[pos..l.start]);
        pos = nl_end;
        if let Some((rule, why)) = remove.get(&i) {
            changes.push(LineChange {
                rule: *rule,
                action: "removed_line",
                line: l.number,
                uuid: l.uuid.clone(),
                reason: why.clone(),
            });
            continue;
        }
        let raw = &session.text[l.start..nl_end];
        let parent = l.parent.as_deref();
        let moved = if parent.is_some_and(|p| removed_uuids.contains(p)) {
            let np = new_parent(parent);
            let value = np.as_ref().map_or_else(
                || "null".to_owned(),
                |u| {
                    let mut s = String::new();
                    turnkeeper_model::json::write_string(&mut s, u);
                    s
                },
            );
            object::set_key(&session.text[l.start..l.end], "parentUuid", &value)
                .map(|edited| (edited, np))
        } else {
            None
        };
        match moved {
            Some((edited, np)) => {
                changes.push(LineChange {
                    rule: remove
                        .values()
                        .next()
                        .map_or(crate::RuleId::Unchecked, |(r, _)| *r),
                    action: "reparented_line",
                    line: l.number,
                    uuid: l.uuid.clone(),
                    reason: format!(
                        "its parent line was removed; parentUuid is now {}",
                        np.as_deref().unwrap_or("null")
                    ),
                });
                text.push_str(&edited);
                text.push_str(&session.text[l.end..nl_end]);
            }
            None => text.push_str(raw),
        }
    }
    if let Some(t) = session.torn_tail {
        let number = session.text[..t].matches('\n').count() + 1;
        changes.push(LineChange {
            rule: crate::RuleId::Unchecked,
            action: "cut_torn_line",
            line: number,
            uuid: None,
            reason: format!(
                "the last line is cut short ({} bytes, not JSON): a crash mid-write",
                session.text.len() - t
            ),
        });
    } else {
        text.push_str(&session.text[pos.min(session.text.len())..]);
    }
    if let Some(m) = append_interrupt {
        append_interrupt_lines(session, check, m, &mut text, &mut changes);
    }
    Plan {
        text,
        changes,
        left_alone,
    }
}

/// Appends Claude Code's two interrupt lines for the calls of assistant message `m` that have no
/// result: one user line of error results, then the "[Request interrupted …]" text line.
fn append_interrupt_lines(
    session: &Session,
    check: &SessionCheck,
    m: usize,
    text: &mut String,
    changes: &mut Vec<LineChange>,
) {
    let Some((_, ls)) = check.conversation.messages.get(m) else {
        return;
    };
    let answered: std::collections::HashSet<String> = check
        .conversation
        .messages
        .get(m + 1)
        .map(|(_, next)| {
            next.iter()
                .filter_map(|&i| session.lines[i].message.as_ref())
                .flat_map(|mm| match &mm.content {
                    turnkeeper_model::claude_code::Content::Blocks(b) => b.clone(),
                    turnkeeper_model::claude_code::Content::Text(_) => Vec::new(),
                })
                .filter_map(|raw| str_member(&raw, "tool_use_id"))
                .collect()
        })
        .unwrap_or_default();
    let mut ids = Vec::new();
    for &i in ls {
        if let Some(mm) = &session.lines[i].message
            && let turnkeeper_model::claude_code::Content::Blocks(b) = &mm.content
        {
            for raw in b {
                if str_member(raw, "type").as_deref() == Some("tool_use")
                    && let Some(id) = str_member(raw, "id")
                    && !answered.contains(&id)
                {
                    ids.push(id);
                }
            }
        }
    }
    let Some(&last) = ls.last() else {
        return;
    };
    if ids.is_empty() {
        return;
    }
    let from = session.raw(last);
    let carried: Vec<(&str, &str)> = [
        "userType",
        "entrypoint",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
    ]
    .into_iter()
    .filter_map(|k| object::get(from, k).map(|v| (k, v)))
    .collect();
    let timestamp = object::get(from, "timestamp").unwrap_or("null");
    let parent = session.lines[last].uuid.clone().unwrap_or_default();
    let results_uuid = line_uuid(&session.text, 1);
    let text_uuid = line_uuid(&session.text, 2);
    let q = |s: &str| {
        let mut o = String::new();
        turnkeeper_model::json::write_string(&mut o, s);
        o
    };
    let tail = |out: &mut String| {
        for (k, v) in &carried {
            out.push_str(&format!(",\"{k}\":{v}"));
        }
        out.push('}');
    };
    let blocks: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                "{{\"type\":\"tool_result\",\"content\":{},\"is_error\":true,\"tool_use_id\":{}}}",
                q(REJECTED_TOOL),
                q(id)
            )
        })
        .collect();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let mut results = format!(
        "{{\"parentUuid\":{},\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{}]}},\"uuid\":{},\"timestamp\":{timestamp},\"toolUseResult\":\"User rejected tool use\"",
        q(&parent),
        blocks.join(","),
        q(&results_uuid)
    );
    tail(&mut results);
    let mut interrupted = format!(
        "{{\"parentUuid\":{},\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":{}}}]}},\"uuid\":{},\"timestamp\":{timestamp}",
        q(&results_uuid),
        q(INTERRUPTED),
        q(&text_uuid)
    );
    tail(&mut interrupted);
    text.push_str(&results);
    text.push('\n');
    text.push_str(&interrupted);
    text.push('\n');
    let line = session.lines[last].number;
    changes.push(LineChange {
        rule: crate::RuleId::An08,
        action: "added_line",
        line,
        uuid: Some(results_uuid),
        reason: format!(
            "tool call(s) {} left without a result when the session stopped: the error result Claude Code writes on an interrupt",
            ids.join(", ")
        ),
    });
    changes.push(LineChange {
        rule: crate::RuleId::An08,
        action: "added_line",
        line,
        uuid: Some(text_uuid),
        reason: format!("then the user line {INTERRUPTED:?}, as Claude Code writes it"),
    });
}

/// A string member of a block's JSON text.
fn str_member(raw: &str, key: &str) -> Option<String> {
    object::get(raw, key).and_then(|v| serde_json::from_str::<String>(v).ok())
}

/// A UUID (version 4 layout) derived from the file's text and `n`, so that the same repair of
/// the same file writes the same lines.
fn line_uuid(text: &str, n: u8) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"turnkeeper:claude-code:");
    h.update([n]);
    h.update(text.as_bytes());
    let d = h.finalize();
    let hex: String = d.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}
