//! Codex rollouts through the Responses rules: the history a resume replays
//! (`turnkeeper_model::codex`), checked as the Responses request Codex sends for the session's
//! model (the last `turn_context`, or `--model`), every finding traced to its file line; and
//! [`plan`], the repair as a new rollout made of whole lines.
//!
//! What is found, and how it is judged:
//! - the file's own damage ([`RuleId::Store`], errors on every backend): a line that does not
//!   parse (torn by a crash, two writers' records interleaved, openai/codex#24425), and a
//!   function call whose `name` holds a control character (a NUL, openai/codex#24369) or, for
//!   OpenAI, does not match `^[a-zA-Z0-9_-]+$`;
//! - what the backend recorded refusing: an `event_msg` error naming the `developer` role ("…
//!   developer is not one of ['system', 'assistant', 'user', 'tool', 'function']", a real
//!   Ollama rollout) makes every `developer` message an error, which no line edit repairs (Codex
//!   sends that role on every turn);
//! - the Responses rules (OR-01 … OR-14, `crate::wire::responses`), judged for the target's
//!   provider: OpenAI's rules as errors on an OpenAI model, pairing only (a warning) on a server
//!   turnkeeper does not know (an Ollama model, say).
//!
//! [`plan`] is a translation of those findings into whole-line edits: a line that does not parse
//! is dropped; a call with a bad name goes with its outputs; what the Responses rules remove
//! (an item whole: a reasoning item, an unanswered call, an orphan output) is its line dropped;
//! what they edit inside an item (an id stripped, OR-02) is that line's `payload` rewritten, the
//! rest of the line kept. Every other line is kept byte for byte. A reasoning item is never
//! written: it is kept byte-identical or dropped whole, its fingerprint reported, and the result
//! is checked against the input by the Responses guard before it is handed back (fail closed).

use std::collections::{BTreeMap, BTreeSet};

use turnkeeper_model::codex::{LineKind, Request, Rollout};
use turnkeeper_model::wire::responses as rv;
use turnkeeper_model::wire::splice_into;
use turnkeeper_model::{Format, ModelError, Span};

use crate::claude_code::{Judged, LineFinding};
use crate::wire::{Provider, Target, responses};
use crate::{ChangeAction, Finding, Options, PreventError, RuleId, Severity};

/// The result of checking a rollout.
#[derive(Debug, Clone)]
pub struct RolloutCheck {
    /// The request a resume sends.
    pub request: Request,
    /// The findings, the file's own first.
    pub findings: Vec<LineFinding>,
    /// The model checked against.
    pub model: Option<String>,
    /// Where the next request goes.
    pub target: Target,
}

/// What the recorded refusal of the `developer` role looks like (an Ollama backend's error).
const DEVELOPER_REFUSED: &str = "developer is not one of";

/// True for a name OpenAI takes for a function: `^[a-zA-Z0-9_-]+$`.
fn name_ok(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn target_of(r: &Rollout, opts: &Options<'_>) -> Target {
    Target::new(opts.model.as_deref().or(r.model.as_deref()), opts.thinking)
}

fn store_finding(
    line: usize,
    severity: Severity,
    message: String,
    repair: Option<&str>,
) -> LineFinding {
    LineFinding {
        finding: Finding {
            rule: RuleId::Store,
            severity,
            path: "the file".to_owned(),
            message_index: None,
            block_index: None,
            message,
            repair: repair.map(str::to_owned),
        },
        line: Some(line),
        uuid: None,
        judged: Judged::AnyBackend,
    }
}

/// The calls whose name the target rejects: (line index, why).
fn bad_names(r: &Rollout, target: &Target) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, l) in r.lines.iter().enumerate() {
        if l.kind != LineKind::ResponseItem {
            continue;
        }
        let Some(name) = &l.name else { continue };
        if !matches!(
            l.item_type.as_deref(),
            Some("function_call" | "custom_tool_call")
        ) {
            continue;
        }
        if name.chars().any(char::is_control) {
            out.push((
                i,
                format!("the call's name {name:?} holds a control character (a NUL written into the rollout): every provider rejects it on resume"),
            ));
        } else if target.provider == Provider::OpenAi && !name_ok(name) {
            out.push((
                i,
                format!("the call's name {name:?} does not match ^[a-zA-Z0-9_-]+$, which OpenAI requires: \"Invalid 'input[N].name': string does not match pattern\""),
            ));
        }
    }
    out
}

/// The file's own findings: lines that do not parse, call names, a recorded role refusal.
fn store_findings(r: &Rollout, target: &Target) -> Vec<LineFinding> {
    let mut out = Vec::new();
    for p in &r.problems {
        let torn = r.torn_tail.map(|t| r.lines[t].number) == Some(p.line);
        let what = if torn {
            "the last line is torn (cut by a crash, no newline): Codex skips it, and the next line it appends is glued to it"
        } else if p.interleaved {
            "two records are written into each other on one line (two writers at once): Codex skips the line, and both records are lost"
        } else {
            "a line that is not a rollout record: Codex skips it"
        };
        out.push(store_finding(
            p.line,
            Severity::Error,
            format!("{what} ({})", p.reason),
            Some("drop the line"),
        ));
    }
    for (i, why) in bad_names(r, target) {
        out.push(store_finding(
            r.lines[i].number,
            Severity::Error,
            why,
            Some("drop the call and its output"),
        ));
    }
    if let Some(refusal) = r.lines.iter().find_map(|l| {
        (l.kind == LineKind::EventMsg)
            .then_some(l.event_message.as_deref())
            .flatten()
            .filter(|m| m.contains(DEVELOPER_REFUSED))
    }) {
        for l in &r.lines {
            if l.kind == LineKind::ResponseItem && l.role.as_deref() == Some("developer") {
                out.push(LineFinding {
                    judged: Judged::Target,
                    ..store_finding(
                        l.number,
                        Severity::Error,
                        format!(
                            "a `developer` message, a role this backend refused (recorded in the rollout: \"{}\"); Codex sends that role on every turn, so no edit of the file helps: use a model or provider that takes it",
                            first_line(refusal)
                        ),
                        None,
                    )
                });
            }
        }
    }
    out
}

fn first_line(s: &str) -> &str {
    let s = s.lines().next().unwrap_or("");
    match s.char_indices().nth(200) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// Checks `r` as the request a resume sends (for `opts.model`, else the rollout's model).
///
/// # Errors
/// When the rebuilt body does not read (it always does: every item is a JSON object).
pub fn check_rollout(r: &Rollout, opts: &Options<'_>) -> Result<RolloutCheck, ModelError> {
    let target = target_of(r, opts);
    let request = r.to_request(target.model.as_deref());
    let mut findings = store_findings(r, &target);
    let rules = crate::wire::check_wire(&request.body, Format::Responses, opts)?;
    for f in rules {
        let line = f
            .message_index
            .and_then(|i| request.lines.get(i))
            .map(|&i| r.lines[i].number);
        findings.push(LineFinding {
            line,
            uuid: None,
            judged: Judged::Target,
            finding: f,
        });
    }
    Ok(RolloutCheck {
        request,
        findings,
        model: target.model.clone(),
        target,
    })
}

/// One whole-line change of [`plan`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LineChange {
    /// The rule it carries out.
    pub rule: RuleId,
    /// What is done to the line: `drop line` or `rewrite payload`.
    pub action: &'static str,
    /// The 1-based line number in the original rollout.
    pub line: usize,
    /// Why.
    pub reason: String,
    /// The fingerprint of a reasoning item dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// A repair of a rollout: the lines of the new rollout (after the `session_meta` line the store
/// writes first), and what was done.
#[derive(Debug, Clone, Default)]
pub struct RolloutPlan {
    /// The kept lines, each with its newline: the original's bytes, or its `payload` rewritten.
    pub text: String,
    /// The changes, by line.
    pub changes: Vec<LineChange>,
    /// What was found and left alone, and why.
    pub left_alone: Vec<String>,
}

impl RolloutPlan {
    /// True when nothing is to change.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// The body of the history lines not in `drop`, with `rewrite`s applied; and per item its line.
fn body_of(
    r: &Rollout,
    model: Option<&str>,
    drop: &BTreeSet<usize>,
    rewrite: &BTreeMap<usize, String>,
) -> (String, Vec<usize>) {
    let mut body = String::from("{");
    if let Some(m) = model {
        body.push_str("\"model\":");
        turnkeeper_model::json::write_string(&mut body, m);
        body.push(',');
    }
    body.push_str("\"store\":false,\"input\":[");
    let mut lines = Vec::new();
    for (line, (a, b)) in r.history() {
        if drop.contains(&line) {
            continue;
        }
        if !lines.is_empty() {
            body.push(',');
        }
        match rewrite.get(&line) {
            Some(t) if r.lines[line].kind == LineKind::ResponseItem => body.push_str(t),
            _ => body.push_str(&r.text[a..b]),
        }
        lines.push(line);
    }
    body.push_str("]}");
    (body, lines)
}

/// `input[N]` and what follows it in a change's path.
fn item_of(path: &str) -> Option<(usize, &str)> {
    let rest = path.strip_prefix("input[")?;
    let close = rest.find(']')?;
    Some((rest[..close].parse().ok()?, &rest[close + 1..]))
}

/// Plans the repair of `r` as whole lines (see the module docs).
///
/// # Errors
/// [`PreventError::Guard`] when a reasoning item would leave altered or unreported (a bug: the
/// plan is refused); [`PreventError::Model`] when a body does not read.
pub fn plan(r: &Rollout, opts: &Options<'_>) -> Result<RolloutPlan, PreventError> {
    let target = target_of(r, opts);
    let mut out = RolloutPlan::default();
    let mut drop: BTreeSet<usize> = BTreeSet::new();
    let mut rewrite: BTreeMap<usize, String> = BTreeMap::new();
    // The file's own damage.
    for p in &r.problems {
        if let Some(i) = r.lines.iter().position(|l| l.number == p.line) {
            drop.insert(i);
            out.changes.push(LineChange {
                rule: RuleId::Store,
                action: "drop line",
                line: p.line,
                reason: if p.interleaved {
                    "two records interleaved on one line; neither reads".to_owned()
                } else if r.torn_tail == Some(i) {
                    "the last line, torn by a crash".to_owned()
                } else {
                    format!("not a rollout record ({})", p.reason)
                },
                fingerprint: None,
            });
        }
    }
    for (i, why) in bad_names(r, &target) {
        let call = r.lines[i].call_id.clone();
        for (j, l) in r.lines.iter().enumerate() {
            let same = j == i
                || (call.is_some()
                    && l.call_id == call
                    && l.kind == LineKind::ResponseItem
                    && l.item_type
                        .as_deref()
                        .is_some_and(|t| t.ends_with("_output")));
            if same && drop.insert(j) {
                out.changes.push(LineChange {
                    rule: RuleId::Store,
                    action: "drop line",
                    line: l.number,
                    reason: if j == i {
                        why.clone()
                    } else {
                        "the output of a call dropped for its name".to_owned()
                    },
                    fingerprint: None,
                });
            }
        }
    }
    if let Some(f) = store_findings(r, &target)
        .into_iter()
        .find(|f| f.finding.repair.is_none())
    {
        out.left_alone.push(format!(
            "line {}: {}",
            f.line.unwrap_or(0),
            f.finding.message
        ));
    }
    // The Responses rules, pass after pass over what is left.
    let model = target.model.clone();
    let mut removed_reasoning = 0usize;
    for _ in 0..4 {
        let (body, lines) = body_of(r, model.as_deref(), &drop, &rewrite);
        let read = rv::read(&body)?;
        let wire = responses::run(&read, &target, &opts.policy, None, true);
        if wire.changes.is_empty() {
            break;
        }
        for ch in &wire.changes {
            let Some((n, rest)) = item_of(&ch.path) else {
                out.left_alone
                    .push(format!("{} at {}: {}", ch.rule, ch.path, ch.reason));
                continue;
            };
            let Some(&li) = lines.get(n) else { continue };
            let line = &r.lines[li];
            if line.kind != LineKind::ResponseItem {
                out.left_alone.push(format!(
                    "line {} ({} of a compaction's history): {} {}",
                    line.number, ch.path, ch.rule, ch.reason
                ));
                continue;
            }
            if ch.action == ChangeAction::RemovedBlock && rest.is_empty() {
                if drop.insert(li) {
                    removed_reasoning += usize::from(ch.fingerprint.is_some());
                    out.changes.push(LineChange {
                        rule: ch.rule,
                        action: "drop line",
                        line: line.number,
                        reason: ch.reason.clone(),
                        fingerprint: ch.fingerprint.clone(),
                    });
                }
                continue;
            }
            // An edit inside a reasoning item (OR-11's empty summary, an id stripped): the item
            // is never written, so it goes whole instead, reported with its fingerprint.
            // Told by the item as the Responses reader sees it: the line's own reading can miss
            // the type of a payload whose other members are malformed.
            let reasoning = read
                .items
                .get(n)
                .is_some_and(|it| it.kind == rv::ItemKind::Reasoning)
                || line.item_type.as_deref() == Some("reasoning");
            if reasoning {
                if drop.insert(li) {
                    removed_reasoning += 1;
                    out.changes.push(LineChange {
                        rule: ch.rule,
                        action: "drop line",
                        line: line.number,
                        reason: format!(
                            "a reasoning item the API refuses as it is ({}, which {} would edit); a reasoning item is never written, so it goes whole",
                            ch.path, ch.rule
                        ),
                        fingerprint: line
                            .payload
                            .map(|(a, b)| turnkeeper_guard::fingerprint(&r.text[a..b])),
                    });
                }
                continue;
            }
            // An edit inside the item: its payload rewritten, the rest of the line kept.
            let it = &read.items[n];
            let mut edits = wire.plan.inner.get(&n).cloned().unwrap_or_default();
            let mut text = String::new();
            splice_into(&body, it.span, &mut edits, &mut text);
            rewrite.insert(li, text);
            out.changes.push(LineChange {
                rule: ch.rule,
                action: "rewrite payload",
                line: line.number,
                reason: format!("{} ({})", ch.reason, ch.path),
                fingerprint: None,
            });
        }
    }
    // The guard: every reasoning item kept is the input's, byte for byte.
    let (before, _) = body_of(r, model.as_deref(), &BTreeSet::new(), &BTreeMap::new());
    let (after, _) = body_of(r, model.as_deref(), &drop, &rewrite);
    if before != after {
        responses::verify(&before, &after, removed_reasoning, &[])?;
    }
    for (i, l) in r.lines.iter().enumerate() {
        if drop.contains(&i) {
            continue;
        }
        if l.kind == LineKind::Bad && r.line_text(i).trim().is_empty() {
            continue;
        }
        match (rewrite.get(&i), l.payload) {
            (Some(new), Some((a, b))) => {
                let span = Span::new(l.start, l.end);
                let mut edits = vec![turnkeeper_model::wire::Edit {
                    span: Span::new(a, b),
                    text: new.clone(),
                }];
                splice_into(&r.text, span, &mut edits, &mut out.text);
            }
            _ => out.text.push_str(r.line_text(i)),
        }
        out.text.push('\n');
    }
    // Blank lines are not kept (they carry nothing); say so when there were any.
    let blank = r
        .lines
        .iter()
        .enumerate()
        .filter(|(i, l)| l.kind == LineKind::Bad && r.line_text(*i).trim().is_empty())
        .count();
    if blank > 0 && !out.changes.is_empty() {
        out.left_alone.push(format!(
            "{blank} blank line(s) not copied (they hold nothing)"
        ));
    }
    Ok(out)
}
