//! Claude Code sessions through the same rules: the conversation a resumed session replays
//! (`turnkeeper_model::claude_code`), checked as the Anthropic request Claude Code would send,
//! under the rules of where it goes ([`Target`]), and every finding traced to its file line and
//! `uuid`.
//!
//! Claude Code talks to Anthropic unless `ANTHROPIC_BASE_URL` points it elsewhere (MiniMax, Kimi,
//! DeepSeek, GLM and Qwen serve Anthropic-compatible endpoints); the responses then carry that
//! backend's model id in `message.model`, which is how the backend is told. What is judged how
//! ([`Judged`]):
//!
//! - the file's own structure (a torn last line, a line written twice, a line whose parent is
//!   gone: [`RuleId::Store`]) and the provider-neutral rules ([`ANY_BACKEND`]: tool calls and
//!   results paired, no empty message or text block, role order) are errors on every backend,
//!   and [`plan`] repairs them on every backend. Other providers reject the same damage (MiniMax:
//!   `tool result's tool id(…) not found (2013)`; Kimi: `content or tool_calls must be set`;
//!   api-rules-2026-11.md MM-01, KM-04). A whitespace-only text block is the exception: Anthropic
//!   itself accepts one in places and other backends are not known to reject it, so on them it
//!   is a warning;
//! - Anthropic's other rules (signatures, thinking order and retention, request settings) are
//!   Anthropic's alone: on a backend whose own rules turnkeeper does not know they are warnings
//!   of what breaks if the session is sent to Claude, and nothing is repaired for them. MiniMax
//!   stores its thinking with `signature: ""` and accepts it back.

use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

use turnkeeper_model::ModelError;
use turnkeeper_model::claude_code::{Content, Conversation, LineRole, Request, Session};
use turnkeeper_model::edit::object;

use crate::opencode::{Target, check_stored_request, thinking_for};
use crate::{Finding, Options, RuleId, Severity};

/// The rules a Claude Code session is held to whatever backend answers it (besides
/// [`RuleId::Store`], the file's own structure): damage every provider rejects. AN-01 and AN-02
/// (role order), AN-04 and AN-05 (an empty message or text block), AN-08 to AN-11 (every tool
/// call answered right after it, every result naming a call before it).
pub const ANY_BACKEND: &[RuleId] = &[
    RuleId::An01,
    RuleId::An02,
    RuleId::An04,
    RuleId::An05,
    RuleId::An08,
    RuleId::An09,
    RuleId::An10,
    RuleId::An11,
];

/// True when `rule` is judged the same on every backend: [`RuleId::Store`] or one of
/// [`ANY_BACKEND`].
pub fn any_backend(rule: RuleId) -> bool {
    rule == RuleId::Store || ANY_BACKEND.contains(&rule)
}

/// How a finding was judged, for the backend the session runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Judged {
    /// By the backend's own rules: Anthropic's, for a session answered by Claude.
    Target,
    /// Damage every provider rejects ([`any_backend`]), judged as for Claude on a non-Anthropic
    /// backend: an error, repaired by [`plan`].
    AnyBackend,
    /// An Anthropic-only rule on a backend whose own rules are not known: at most a warning, of
    /// what breaks if the session is sent to Claude; never repaired.
    IfSentToClaude,
}

impl Judged {
    /// How `finding` is judged for `target`.
    pub fn of(finding: &Finding, target: &Target) -> Judged {
        if target.is_anthropic() {
            Judged::Target
        } else if judged_on_any_backend(finding) {
            Judged::AnyBackend
        } else {
            Judged::IfSentToClaude
        }
    }
}

/// True when `finding` is damage every provider rejects: a rule [`any_backend`] names, except a
/// whitespace-only text block (AN-05 on `"\n\n"`), which Anthropic itself accepts in places
/// (adaptive lead-ins) and other backends are not known to reject; an empty one is judged on
/// every backend.
fn judged_on_any_backend(finding: &Finding) -> bool {
    any_backend(finding.rule)
        && !(finding.rule == RuleId::An05 && finding.message.contains(WHITESPACE_TEXT))
}

/// How AN-05 words a whitespace-only (not empty) text block.
const WHITESPACE_TEXT: &str = "a whitespace-only text block";

/// A finding on a Claude Code session, with the line it points at.
#[derive(Debug, Clone, Serialize)]
pub struct LineFinding {
    /// The finding, with paths into the rebuilt request (`the file` for [`RuleId::Store`]).
    #[serde(flatten)]
    pub finding: Finding,
    /// The 1-based line number in the session file.
    pub line: Option<usize>,
    /// That line's `uuid`.
    pub uuid: Option<String>,
    /// How it was judged for the session's backend.
    pub judged: Judged,
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
    /// The model checked against (for a session not bound for Anthropic: [`SWITCH_MODEL`](crate::opencode::SWITCH_MODEL)).
    pub model: Option<String>,
    /// Where the session's next request goes.
    pub target: Target,
}

/// Rebuilds `session`'s conversation and checks it as its next request (the replayed messages
/// and a new prompt), for the model of its last real assistant line, or `opts.model`. The
/// file's own damage ([`RuleId::Store`]: what the first stage of [`plan`] repairs) comes first,
/// as errors on every backend; then the rules' findings, judged as the module docs say.
///
/// # Errors
/// When the rebuilt body cannot be read (a line whose blocks are not what the API takes as
/// blocks, e.g. a content array of non-objects).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, ModelError> {
    let conversation = session.rebuild();
    // Claude Code talks to Anthropic unless a line says otherwise (`message.model` of a backend
    // behind `ANTHROPIC_BASE_URL`): the last response the resume replays, else the last one in
    // the file (a damaged file can cut the replayed path short of every response, and the
    // backend is the same); a session with no real response yet is Anthropic's.
    let target = match opts
        .model
        .as_deref()
        .or(conversation.model.as_deref())
        .or_else(|| last_model(session))
    {
        Some(m) => Target::of(None, Some(m)),
        None => Target::of(Some("anthropic"), None),
    };
    let model = target.checked_model();
    let request = session.to_request(
        &conversation,
        model.as_deref(),
        thinking_for(opts, model.as_deref()),
    );
    let mut findings = store_findings(
        session,
        if target.is_anthropic() {
            Judged::Target
        } else {
            Judged::AnyBackend
        },
    );
    let rules = check_stored_request(
        &request.body,
        &target,
        model.as_deref(),
        opts,
        "sent to",
        judged_on_any_backend,
    )?;
    findings.extend(rules.into_iter().map(|f| {
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
        LineFinding {
            line: origin.map(|i| session.lines[i].number),
            uuid: origin.and_then(|i| session.lines[i].uuid.clone()),
            judged: Judged::of(&f, &target),
            finding: f,
        }
    }));
    Ok(SessionCheck {
        conversation,
        request,
        findings,
        model,
        target,
    })
}

/// The model of the last real response in the file (a `<synthetic>` or API-error line is none).
fn last_model(session: &Session) -> Option<&str> {
    session.lines.iter().rev().find_map(|l| {
        let m = l.message.as_ref()?;
        (m.role == LineRole::Assistant && !l.display_only && !l.sidechain)
            .then_some(m.model.as_deref())
            .flatten()
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
    /// The rule the change keeps ([`RuleId::Store`] for the file's own structure).
    pub rule: RuleId,
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
    /// The changes, in the order they were decided.
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

/// Whole-line edits of one text, applied by [`Edits::apply`].
#[derive(Default)]
struct Edits {
    /// Lines (indices into `Session::lines`) to drop.
    remove: BTreeMap<usize, (RuleId, String)>,
    /// Lines whose `parentUuid` becomes the given one (`None`: null).
    reparent: BTreeMap<usize, (RuleId, Option<String>, String)>,
    /// New lines (their text, uuid, rule and reason) after a line.
    insert_after: BTreeMap<usize, Vec<(String, String, RuleId, String)>>,
}

impl Edits {
    fn is_empty(&self) -> bool {
        self.remove.is_empty() && self.reparent.is_empty() && self.insert_after.is_empty()
    }

    /// The text with the edits made, and the changes (line numbers through `number`). The
    /// children of a removed line hang off its nearest kept ancestor. A torn tail is cut.
    fn apply(
        &self,
        session: &Session,
        number: &dyn Fn(usize) -> usize,
        changes: &mut Vec<LineChange>,
    ) -> String {
        let lines = &session.lines;
        let mut first: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, l) in lines.iter().enumerate() {
            if let Some(u) = l.uuid.as_deref() {
                first.entry(u).or_insert(i);
            }
        }
        // A uuid is gone when its first line is removed (a duplicate's removal keeps it).
        let gone = |u: &str| first.get(u).is_some_and(|i| self.remove.contains_key(i));
        // The nearest kept ancestor of line `at`, starting from its parent `start`. Removed
        // lines whose parents form a cycle (a corrupt file) have none: line `at` then hangs off
        // the kept message line before it, as a line with a missing parent does in stage 1,
        // never off a removed line.
        let kept_ancestor = |start: Option<&str>, at: usize| -> Option<String> {
            let mut p = start.map(str::to_owned);
            let mut hops = 0;
            while let Some(u) = p.as_deref() {
                if !gone(u) {
                    break;
                }
                if hops > lines.len() {
                    return (0..at)
                        .rev()
                        .find(|&k| {
                            let b = &lines[k];
                            !self.remove.contains_key(&k)
                                && b.message.is_some()
                                && !b.sidechain
                                && b.uuid.is_some()
                        })
                        .and_then(|k| lines[k].uuid.clone());
                }
                hops += 1;
                p = first.get(u).and_then(|&i| lines[i].parent.clone());
            }
            p
        };
        let end = session.torn_tail.unwrap_or(session.text.len());
        let mut text = String::with_capacity(session.text.len() + 1024);
        let mut pos = 0;
        for (i, l) in lines.iter().enumerate() {
            if l.start >= end {
                break;
            }
            let rest = &session.text[l.end..];
            let nl_end = l.end
                + if rest.starts_with("\r\n") {
                    2
                } else {
                    usize::from(rest.starts_with('\n'))
                };
            // Whatever lies between parsed lines (blank or unparsed lines) is kept as it is.
            text.push_str(&session.text[pos..l.start]);
            pos = nl_end;
            if let Some((rule, why)) = self.remove.get(&i) {
                changes.push(LineChange {
                    rule: *rule,
                    action: "removed_line",
                    line: number(i),
                    uuid: l.uuid.clone(),
                    reason: why.clone(),
                });
            } else {
                let moved = match self.reparent.get(&i) {
                    Some((rule, p, why)) => Some((*rule, p.clone(), why.clone())),
                    None => l.parent.as_deref().filter(|p| gone(p)).map(|p| {
                        let rule = first
                            .get(p)
                            .and_then(|j| self.remove.get(j))
                            .map_or(RuleId::Store, |(r, _)| *r);
                        (
                            rule,
                            kept_ancestor(Some(p), i),
                            "its parent line was removed".to_owned(),
                        )
                    }),
                };
                let raw = &session.text[l.start..l.end];
                let edited = moved.as_ref().and_then(|(_, p, _)| {
                    let value = p.as_deref().map_or_else(|| "null".to_owned(), quote);
                    object::set_key(raw, "parentUuid", &value)
                });
                match (moved, edited) {
                    (Some((rule, p, why)), Some(edited)) => {
                        changes.push(LineChange {
                            rule,
                            action: "reparented_line",
                            line: number(i),
                            uuid: l.uuid.clone(),
                            reason: format!(
                                "{why}; parentUuid is now {}",
                                p.as_deref().unwrap_or("null")
                            ),
                        });
                        text.push_str(&edited);
                    }
                    _ => text.push_str(raw),
                }
                text.push_str(&session.text[l.end..nl_end]);
            }
            if let Some(new) = self.insert_after.get(&i) {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                for (line, uuid, rule, why) in new {
                    text.push_str(line);
                    text.push('\n');
                    changes.push(LineChange {
                        rule: *rule,
                        action: "added_line",
                        line: number(i),
                        uuid: Some(uuid.clone()),
                        reason: why.clone(),
                    });
                }
            }
        }
        match session.torn_tail {
            Some(t) => changes.push(LineChange {
                rule: RuleId::Store,
                action: "cut_torn_line",
                line: session.text[..t].matches('\n').count() + 1,
                uuid: None,
                reason: format!(
                    "the last line is cut short ({} bytes, not JSON): a crash mid-write",
                    session.text.len() - t
                ),
            }),
            None => text.push_str(&session.text[pos.min(session.text.len())..]),
        }
        text
    }
}

fn quote(s: &str) -> String {
    let mut o = String::new();
    turnkeeper_model::json::write_string(&mut o, s);
    o
}

/// Plans the repair of `session` by whole lines, in two stages.
///
/// 1. The file's own structure ([`RuleId::Store`]): a torn last line is cut back to the last
///    whole line; a line written twice (the `uuid` of an earlier line) goes; a message line
///    whose parent line is gone is re-linked to the message line before it, so that a resume
///    sees the whole conversation again.
/// 2. The API's rules, on the conversation the first stage leaves ([`check_session`]): an orphan
///    result line (AN-10) goes; a thinking-only response (AN-19) or a thinking line whose
///    signature can never verify (AN-23) goes, except in the latest assistant message, whose
///    thinking is never dropped or edited (left to the user: disable thinking for the next
///    request, or `/rewind`); calls left without results (AN-08) get the two lines Claude Code
///    itself writes on an interrupt, right after the calls, and the line that followed the
///    calls then follows them. For a session on another backend only the rules every provider
///    holds to ([`ANY_BACKEND`]: here AN-08 and AN-10) are acted on; its thinking is its
///    backend's business and is left alone.
///
/// The children of a removed line hang off its nearest kept ancestor; a re-parented line's
/// `parentUuid` member is the only thing that changes in it (a thinking block's bytes never
/// do).
///
/// # Errors
/// When a stage's text cannot be read back or checked (a bug).
pub fn plan(session: &Session, opts: &Options<'_>) -> Result<Plan, ModelError> {
    let mut changes = Vec::new();
    let mut left_alone = Vec::new();
    // Stage 1.
    let lines = &session.lines;
    let e1 = structure(session);
    let original_number = |i: usize| lines[i].number;
    let stage1;
    let (s1, map1): (&Session, Vec<usize>) = if e1.is_empty() && session.torn_tail.is_none() {
        (session, lines.iter().map(|l| l.number).collect())
    } else {
        let text = e1.apply(session, &original_number, &mut changes);
        stage1 = Session::parse(text, "stage 1").map_err(|e| ModelError::Shape {
            path: String::new(),
            offset: 0,
            message: e.to_string().into(),
        })?;
        // Stage-1 lines are the original lines less the removed ones, in order.
        let kept: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(i, l)| {
                !e1.remove.contains_key(i) && session.torn_tail.is_none_or(|t| l.start < t)
            })
            .map(|(_, l)| l.number)
            .collect();
        (&stage1, kept)
    };
    let number = |i: usize| map1.get(i).copied().unwrap_or(0);

    // Stage 2.
    let check = check_session(s1, opts)?;
    let mut e2 = Edits::default();
    if !check.target.is_anthropic() {
        left_alone.push(format!(
            "the session runs on {} (not Anthropic): damage every provider rejects is repaired ({}); its thinking and signatures are judged valid for it and left as they are",
            check.target.model.as_deref().unwrap_or("another provider"),
            RuleId::join(ANY_BACKEND)
        ));
    }
    rule_edits(s1, &check, &mut e2, &mut left_alone, &number);
    let text = if e2.is_empty() {
        s1.text.clone()
    } else {
        e2.apply(s1, &number, &mut changes)
    };
    Ok(Plan {
        text,
        changes,
        left_alone,
    })
}

/// The first stage of [`plan`]: the edits of the file's own structure ([`RuleId::Store`]), a
/// line written twice removed, a response the crash that tore the last line left holding only
/// thinking removed, a message line whose parent is gone re-linked (the torn tail itself is cut
/// by [`Edits::apply`]).
fn structure(session: &Session) -> Edits {
    let lines = &session.lines;
    let mut e1 = Edits::default();
    let mut seen = HashSet::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(u) = &l.uuid
            && !seen.insert(u.as_str())
        {
            e1.remove.insert(
                i,
                (
                    RuleId::Store,
                    format!("a second line with uuid {u} (written twice)"),
                ),
            );
        }
    }
    // A response cut short by the crash that tore the last line: when what is left of it is
    // only thinking, it was never a whole turn (its text or calls were in the torn line), and
    // a response ending in thinking is rejected; it goes with the torn line.
    if let Some(t) = session.torn_tail
        && let Some(id) = torn_message_id(&session.text[t..])
    {
        let same: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                l.message
                    .as_ref()
                    .is_some_and(|m| m.role == LineRole::Assistant && m.id.as_deref() == Some(id))
            })
            .map(|(i, _)| i)
            .collect();
        let thinking_only = !same.is_empty()
            && same.iter().all(|&i| {
                lines[i].message.as_ref().is_some_and(|m| {
                    m.content
                        .types()
                        .iter()
                        .all(|t| t == "thinking" || t == "redacted_thinking")
                })
            });
        if thinking_only {
            for i in same {
                e1.remove.insert(
                    i,
                    (
                        RuleId::Store,
                        format!(
                            "response {id} was cut short by the crash that tore the last line; what is left of it is only thinking, which the API rejects at the end of a response"
                        ),
                    ),
                );
            }
        }
    }
    let known: HashSet<&str> = lines.iter().filter_map(|l| l.uuid.as_deref()).collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(p) = l.parent.as_deref() else {
            continue;
        };
        if l.message.is_none() || l.sidechain || known.contains(p) || e1.remove.contains_key(&i) {
            continue;
        }
        let before = lines[..i]
            .iter()
            .rposition(|b| b.message.is_some() && !b.sidechain && b.uuid.is_some());
        if let Some(b) = before {
            e1.reparent.insert(
                i,
                (
                    RuleId::Store,
                    lines[b].uuid.clone(),
                    format!("its parent line {p} is missing from the file (a removed line)"),
                ),
            );
        }
    }
    e1
}

/// The file's own damage as findings ([`RuleId::Store`], errors on every backend): exactly what
/// [`structure`] edits, and a torn last line.
fn store_findings(session: &Session, judged: Judged) -> Vec<LineFinding> {
    let e = structure(session);
    let finding = |line: usize, uuid: Option<String>, message: String, repair: &str| LineFinding {
        finding: Finding {
            rule: RuleId::Store,
            severity: Severity::Error,
            path: "the file".to_owned(),
            message_index: None,
            block_index: None,
            message,
            repair: Some(repair.to_owned()),
        },
        line: Some(line),
        uuid,
        judged,
    };
    let mut out: Vec<(usize, LineFinding)> = Vec::new();
    for (&i, (_, why)) in &e.remove {
        let l = &session.lines[i];
        out.push((
            l.number,
            finding(l.number, l.uuid.clone(), why.clone(), "remove the line"),
        ));
    }
    for (&i, (_, _, why)) in &e.reparent {
        let l = &session.lines[i];
        out.push((
            l.number,
            finding(
                l.number,
                l.uuid.clone(),
                format!("{why}: a resume replays nothing before this line"),
                "re-link it to the message line before it",
            ),
        ));
    }
    if let Some(t) = session.torn_tail {
        let n = session.text[..t].matches('\n').count() + 1;
        out.push((
            n,
            finding(
                n,
                None,
                format!(
                    "the last line is cut short ({} bytes, not JSON): a crash mid-write",
                    session.text.len() - t
                ),
                "cut it back to the last whole line",
            ),
        ));
    }
    out.sort_by_key(|(n, _)| *n);
    out.into_iter().map(|(_, f)| f).collect()
}

/// The stage-2 edits of [`plan`].
fn rule_edits(
    s: &Session,
    check: &SessionCheck,
    e: &mut Edits,
    left_alone: &mut Vec<String>,
    number: &dyn Fn(usize) -> usize,
) {
    let lines = &s.lines;
    let conv = &check.conversation;
    let last_assistant = conv
        .messages
        .iter()
        .rposition(|(r, _)| *r == LineRole::Assistant);
    let decide = "thinking in the latest assistant message is never dropped or edited: disable thinking for the next request, or /rewind";
    let at = |f: &LineFinding| {
        f.line
            .map_or_else(|| "the request".to_owned(), |n| format!("line {n}"))
    };
    for f in &check.findings {
        // On a backend whose own rules are not known, only damage every provider rejects.
        if f.judged == Judged::IfSentToClaude {
            continue;
        }
        let Some(m) = f.finding.message_index else {
            continue;
        };
        let block_line = f
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
            RuleId::An10 => match block_line {
                Some(i) if one_block(i) => {
                    e.remove
                        .insert(i, (RuleId::An10, f.finding.message.clone()));
                }
                _ => left_alone.push(format!("{}: {}", at(f), f.finding.message)),
            },
            RuleId::An23 => match block_line {
                Some(i) if !latest && one_block(i) => {
                    e.remove
                        .insert(i, (RuleId::An23, f.finding.message.clone()));
                }
                _ => left_alone.push(format!("{}: {} ({decide})", at(f), f.finding.message)),
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
                        e.remove.insert(
                            i,
                            (
                                RuleId::An19,
                                "a response holding only thinking (interrupted after thinking)"
                                    .to_owned(),
                            ),
                        );
                    }
                } else {
                    left_alone.push(format!("{}: {} ({decide})", at(f), f.finding.message));
                }
            }
            // AN-08 points at the message that should hold the results: the calls are in the
            // run of assistant messages before it (the API may read consecutive assistant
            // messages as one), each answered right after itself.
            RuleId::An08 => {
                let mut a = m;
                let mut any = false;
                while let Some(prev) = a.checked_sub(1)
                    && conv
                        .messages
                        .get(prev)
                        .is_some_and(|(r, _)| *r == LineRole::Assistant)
                {
                    any |= interrupt(s, check, prev, e, number);
                    a = prev;
                }
                if !any {
                    left_alone.push(format!("{}: {}", at(f), f.finding.message));
                }
            }
            _ => {}
        }
    }
}

/// Claude Code's two interrupt lines for the calls of assistant message `a` that have no result:
/// one user line of error results, then the "[Request interrupted …]" text line, inserted right
/// after the calls. A line that hung off the calls' last line (the next prompt or response)
/// hangs off the text line instead. False when every call of `a` has its result.
fn interrupt(
    s: &Session,
    check: &SessionCheck,
    a: usize,
    e: &mut Edits,
    number: &dyn Fn(usize) -> usize,
) -> bool {
    let conv = &check.conversation;
    let Some((_, ls)) = conv.messages.get(a) else {
        return false;
    };
    let answered: HashSet<String> = conv
        .messages
        .get(a + 1)
        .map(|(_, next)| {
            next.iter()
                .filter_map(|&i| s.lines[i].message.as_ref())
                .flat_map(|mm| match &mm.content {
                    Content::Blocks(b) => b.clone(),
                    Content::Text(_) => Vec::new(),
                })
                .filter_map(|raw| str_member(&raw, "tool_use_id"))
                .collect()
        })
        .unwrap_or_default();
    let mut ids = Vec::new();
    for &i in ls {
        if let Some(mm) = &s.lines[i].message
            && let Content::Blocks(b) = &mm.content
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
        return false;
    };
    if ids.is_empty() || e.insert_after.contains_key(&last) {
        return false;
    }
    let from = s.raw(last);
    let carried: String = [
        "userType",
        "entrypoint",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
    ]
    .into_iter()
    .filter_map(|k| object::get(from, k).map(|v| format!(",\"{k}\":{v}")))
    .collect();
    let timestamp = object::get(from, "timestamp").unwrap_or("null");
    let parent = s.lines[last].uuid.clone().unwrap_or_default();
    let salt = number(last).to_string();
    let results_uuid = line_uuid(&s.text, &salt, 1);
    let text_uuid = line_uuid(&s.text, &salt, 2);
    let blocks: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                "{{\"type\":\"tool_result\",\"content\":{},\"is_error\":true,\"tool_use_id\":{}}}",
                quote(REJECTED_TOOL),
                quote(id)
            )
        })
        .collect();
    let results = format!(
        "{{\"parentUuid\":{},\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{}]}},\"uuid\":{},\"timestamp\":{timestamp},\"toolUseResult\":\"User rejected tool use\"{carried}}}",
        quote(&parent),
        blocks.join(","),
        quote(&results_uuid)
    );
    let interrupted = format!(
        "{{\"parentUuid\":{},\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":{}}}]}},\"uuid\":{},\"timestamp\":{timestamp}{carried}}}",
        quote(&results_uuid),
        quote(INTERRUPTED),
        quote(&text_uuid)
    );
    // What hung off the calls (not a result of them) now follows the interrupt.
    for (j, l) in s.lines.iter().enumerate() {
        let is_result = l
            .message
            .as_ref()
            .is_some_and(|mm| mm.content.types().iter().any(|t| t == "tool_result"));
        if l.parent.as_deref() == Some(parent.as_str()) && !is_result && j > last {
            e.reparent.insert(
                j,
                (
                    RuleId::An08,
                    Some(text_uuid.clone()),
                    "it followed calls that had no results; it now follows the interrupt"
                        .to_owned(),
                ),
            );
        }
    }
    e.insert_after.insert(
        last,
        vec![
            (
                results,
                results_uuid,
                RuleId::An08,
                format!(
                    "tool call(s) {} left without a result: the error result Claude Code writes on an interrupt",
                    ids.join(", ")
                ),
            ),
            (
                interrupted,
                text_uuid,
                RuleId::An08,
                format!("then the user line {INTERRUPTED:?}, as Claude Code writes it"),
            ),
        ],
    );
    true
}

/// The `message.id` a torn line had begun to write, when it got that far.
fn torn_message_id(partial: &str) -> Option<&str> {
    let at = partial.find("\"message\":{")?;
    let rest = &partial[at..];
    let key = rest.find("\"id\":\"")? + 6;
    let id = &rest[key..];
    let end = id.find('"')?;
    Some(&id[..end]).filter(|i| i.starts_with("msg_"))
}

/// A string member of a block's JSON text.
fn str_member(raw: &str, key: &str) -> Option<String> {
    object::get(raw, key).and_then(|v| serde_json::from_str::<String>(v).ok())
}

/// A UUID (version 4 layout) derived from the file's text, `salt` and `n`, so that the same
/// repair of the same file writes the same lines.
fn line_uuid(text: &str, salt: &str, n: u8) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"turnkeeper:claude-code:");
    h.update(salt.as_bytes());
    h.update([n]);
    h.update(text.as_bytes());
    let d = h.finalize();
    let hex = turnkeeper_guard::hex(d.get(..16).unwrap_or_default());
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}
