//! openclaw sessions: the active branch (`turnkeeper_model::openclaw`) judged as the request
//! openclaw sends to the session's current model, every finding at its file line and entry
//! `id`; and [`plan`], the repair by whole lines (a line dropped, its children re-linked; a
//! block dropped from a message line, the others kept byte for byte; a result line added for a
//! call left open).
//!
//! What is found (session-stores.md §5.2, each seen in real files or threads):
//! - the file's own damage ([`RuleId::Store`]): a line that does not parse (torn by a crash), a
//!   second `session` header, an entry before the header, a `toolCall` whose leftover
//!   `partialJson` holds a raw control character ("Bad control character in string literal" on
//!   every load, openclaw#69846);
//! - the rules every provider enforces on a conversation's shape, judged by the checker's own
//!   rule files on the request the branch makes (one message per line, a run of results one
//!   message, a next prompt after a closing reply) and translated into edits of lines: AN-04 (a
//!   message with `content: []`, how openclaw stores an error reply: its line goes), AN-08 (a
//!   `toolCall` with no `toolResult` in the messages right after it: a result line is added),
//!   AN-10 (a `toolResult` answering no call of the message before it, its call on another
//!   branch after `/tree` navigation, or a second result: its line goes) and AN-11 (a result
//!   behind another message: reported and left);
//! - signatures, by the current model's provider, on the messages that provider wrote (openclaw
//!   converts another provider's thinking before sending it), judged by the rule files
//!   themselves: for Anthropic, AN-23's judgement of a signature (empty, a Gemini dummy, not
//!   base64 such as the JSON of an OpenAI reasoning item), and a signature cut short when it was
//!   stored (`len % 4`, openclaw PR #97019); for OpenAI Responses (OR-04) one that is empty, not
//!   the JSON of a reasoning item (store format, read here), or whose `encrypted_content`
//!   OR-04's test says OpenAI did not write.
//!
//! Other providers' rules are not known here: nothing about their signatures is reported (a
//! finding on a valid session is worse than a miss). A thinking block is never edited: it stays
//! byte-identical or is dropped whole, reported with its fingerprint.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use turnkeeper_guard::fingerprint;
use turnkeeper_model::edit::object;
use turnkeeper_model::openclaw::Session;

use crate::claude_code::{Judged, LineFinding};
use crate::rules::an23_signatures::stored_signature_problem;
use crate::rules::or04_foreign_encrypted::openai_form;
use crate::{Finding, RuleId, Severity};

/// The provider family whose rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Responses API (`openai`, `openai-codex`).
    OpenAi,
    /// Any other (Ollama, Google, ...): only provider-neutral rules.
    Other,
}

/// The model the next request goes to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Target {
    /// The provider (`anthropic`, `openai-codex`, `ollama`, ...).
    pub provider: Option<String>,
    /// The model id.
    pub model: Option<String>,
    /// The API (`anthropic-messages`, `openai-codex-responses`, ...), when a snapshot says.
    pub api: Option<String>,
    /// Whose rules apply.
    pub family: Family,
}

impl Target {
    fn of(m: Option<(Option<String>, Option<String>, Option<String>)>) -> Target {
        let (provider, model, api) = m.unwrap_or_default();
        let all = format!(
            "{} {} {}",
            provider.as_deref().unwrap_or(""),
            api.as_deref().unwrap_or(""),
            model.as_deref().unwrap_or("")
        )
        .to_ascii_lowercase();
        let family = if all.contains("anthropic") || all.contains("claude") {
            Family::Anthropic
        } else if provider.as_deref().is_some_and(|p| p.starts_with("openai"))
            || api
                .as_deref()
                .is_some_and(|a| a.contains("openai") && a.contains("responses"))
        {
            Family::OpenAi
        } else {
            Family::Other
        };
        Target {
            provider,
            model,
            api,
            family,
        }
    }

    /// True when a message written by `provider` / `api` is replayed as it is (same provider).
    fn wrote(&self, provider: Option<&str>, api: Option<&str>) -> bool {
        (provider.is_some() && provider == self.provider.as_deref())
            || (api.is_some() && api == self.api.as_deref())
    }
}

/// How an issue is repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fix {
    DropLine,
    DropBlock(usize),
    RemovePartialJson(usize),
    AnswerCall(usize),
    Relink,
    /// Reported, not repaired.
    Leave,
}

#[derive(Debug, Clone)]
struct Issue {
    rule: RuleId,
    line: usize,
    message: String,
    fix: Fix,
}

/// The result of checking a session.
#[derive(Debug, Clone)]
pub struct SessionCheck {
    /// The findings, the file's own first.
    pub findings: Vec<LineFinding>,
    /// Where the next request goes.
    pub target: Target,
    /// The active branch's lines (indices).
    pub branch: Vec<usize>,
}

/// Why an OpenAI `thinkingSignature` cannot be replayed, if it cannot.
fn openai_signature_problem(sig: &str) -> Option<String> {
    if sig.is_empty() {
        return Some("an empty thinkingSignature: no reasoning item to send back".into());
    }
    let v: serde_json::Value = match serde_json::from_str(sig) {
        Ok(v) => v,
        Err(_) => {
            return Some(
                "a thinkingSignature that is not the JSON of an OpenAI reasoning item (another provider's signature)"
                    .into(),
            );
        }
    };
    if v["type"] != "reasoning" {
        return Some("a thinkingSignature whose JSON is not a reasoning item".into());
    }
    match v["encrypted_content"].as_str() {
        Some(e) if !openai_form(e) => Some(
            "a reasoning item whose encrypted_content OpenAI did not write (plain text): \"The encrypted content could not be verified.\""
                .into(),
        ),
        _ => None,
    }
}

/// Why an Anthropic `thinkingSignature` can never verify, if it cannot: AN-23's judgement of a
/// store's copy of a signature ([`stored_signature_problem`]: empty, a Gemini dummy, not base64,
/// cut short when it was stored), with what is known of how openclaw came to store it.
fn anthropic_signature_problem(sig: &str) -> Option<String> {
    let trimmed = sig.trim();
    let why = stored_signature_problem(sig)?;
    let how = if trimmed.is_empty() {
        " (as openclaw stored Bedrock's thinking, openclaw#45010)"
    } else if trimmed.starts_with('{') {
        " (an OpenAI reasoning item's JSON: another provider's)"
    } else {
        ""
    };
    Some(format!("{why}{how}"))
}

/// True when a leftover `partialJson` holds a raw control character inside a string literal.
fn control_in_partial(p: &str) -> bool {
    match serde_json::from_str::<serde::de::IgnoredAny>(p) {
        Ok(_) => false,
        Err(e) => e.to_string().contains("control character"),
    }
}

fn analyse(s: &Session, target: &Target) -> (Vec<Issue>, Vec<usize>) {
    let mut out = Vec::new();
    for p in &s.problems {
        let torn = s.torn_tail.map(|t| s.lines[t].number) == Some(p.line);
        out.push(Issue {
            rule: RuleId::Store,
            line: p.line - 1,
            message: if torn {
                format!("the last line is torn (cut by a crash): {}", p.reason)
            } else {
                format!("a line that does not parse: {}", p.reason)
            },
            fix: Fix::DropLine,
        });
    }
    let header = s
        .lines
        .iter()
        .position(|l| l.kind.as_deref() == Some("session"));
    for (i, l) in s.lines.iter().enumerate() {
        match (&l.kind, header) {
            (Some(k), Some(h)) if k == "session" && i > h => out.push(Issue {
                rule: RuleId::Store,
                line: i,
                message: "a second `session` header (the file was started twice)".into(),
                fix: Fix::DropLine,
            }),
            (Some(_), Some(h)) if i < h => out.push(Issue {
                rule: RuleId::Store,
                line: i,
                message: "an entry written before the `session` header".into(),
                fix: Fix::DropLine,
            }),
            _ => {}
        }
    }
    let ids: HashSet<&str> = s.lines.iter().filter_map(|l| l.id.as_deref()).collect();
    for (i, l) in s.lines.iter().enumerate() {
        if let Some(p) = &l.parent
            && l.kind.as_deref() != Some("session")
            && !ids.contains(p.as_str())
        {
            out.push(Issue {
                rule: RuleId::Store,
                line: i,
                message: format!(
                    "its parent {p:?} is gone (a line was removed): the active branch stops here"
                ),
                fix: Fix::Relink,
            });
        }
    }
    let bad: HashSet<usize> = out
        .iter()
        .filter(|x| x.fix == Fix::DropLine)
        .map(|x| x.line)
        .collect();
    // A line whose parent is gone is judged where the repair re-links it (to the entry written
    // before it), so that what it hid (a call whose result went with the lost line) is found now.
    let relinked: HashSet<usize> = out
        .iter()
        .filter(|x| x.fix == Fix::Relink)
        .map(|x| x.line)
        .collect();
    let branch = s.active_branch_through(&|i| bad.contains(&i), &|i| {
        if !relinked.contains(&i) {
            return None;
        }
        (0..i).rev().find(|&j| {
            !bad.contains(&j)
                && s.lines[j].id.is_some()
                && s.lines[j].kind.is_some()
                && s.lines[j].kind.as_deref() != Some("session")
        })
    });
    for &i in &branch {
        let l = &s.lines[i];
        if l.kind.as_deref() != Some("message") {
            continue;
        }
        let Some((blocks, _)) = &l.content else {
            continue;
        };
        let assistant = l.role.as_deref() == Some("assistant");
        for (k, b) in blocks.iter().enumerate() {
            if b.kind == "thinking"
                && assistant
                && target.wrote(l.provider.as_deref(), l.api.as_deref())
            {
                let sig = b.signature.as_deref().unwrap_or("");
                let problem = match target.family {
                    Family::Anthropic => {
                        anthropic_signature_problem(sig).map(|m| (RuleId::An23, m))
                    }
                    Family::OpenAi => openai_signature_problem(sig).map(|m| (RuleId::Or04, m)),
                    Family::Other => None,
                };
                if let Some((rule, message)) = problem {
                    out.push(Issue {
                        rule,
                        line: i,
                        message: format!("content[{k}]: {message}"),
                        fix: Fix::DropBlock(k),
                    });
                }
            }
            if b.kind == "toolCall" && b.partial_json.as_deref().is_some_and(control_in_partial) {
                out.push(Issue {
                    rule: RuleId::Store,
                    line: i,
                    message: format!("content[{k}]: a leftover `partialJson` with a raw control character (\"Bad control character in string literal\" on every load)"),
                    fix: Fix::RemovePartialJson(k),
                });
            }
        }
    }
    out.extend(pairing(s, &branch));
    out.sort_by_key(|x| x.line);
    (out, branch)
}

/// The shape of the request openclaw sends for the active branch: one wire message per message
/// line (`user`, `assistant`; a run of `toolResult` lines is one user message of `tool_result`
/// blocks, as pi-ai's Anthropic provider sends them), each block with its type and tool ids and
/// its text stood in, then the next prompt when the branch ends with a reply; and where each
/// message and block came from.
///
/// It is the session as stored: later pi-ai versions drop an error reply and add a result for a
/// call left open while they convert, earlier ones send both as they are (openclaw#69846,
/// session-stores.md §5.2), and the file does not say which version will read it. A branch whose
/// stored shape passes is sent whole by every version.
struct Shape {
    /// The body (Anthropic's Messages shape).
    body: String,
    /// Per message: its lines.
    lines: Vec<Vec<usize>>,
    /// Per message: per block, its line and its index in that line's `content` (`None` for a
    /// result, which is the whole line).
    blocks: Vec<Vec<(usize, Option<usize>)>>,
    /// Per message: true for an assistant message.
    assistant: Vec<bool>,
}

fn shape(s: &Session, branch: &[usize], model: &str) -> Shape {
    use serde_json::{Value, json};
    const STAND_IN: &str = "\u{b7}";
    let mut messages: Vec<Value> = Vec::new();
    let mut sh = Shape {
        body: String::new(),
        lines: Vec::new(),
        blocks: Vec::new(),
        assistant: Vec::new(),
    };
    let mut results_open = false;
    for &i in branch {
        let l = &s.lines[i];
        if l.kind.as_deref() != Some("message") {
            continue;
        }
        let role = l.role.as_deref().unwrap_or("");
        if role == "toolResult" {
            let block = json!({
                "type": "tool_result",
                "tool_use_id": l.tool_call_id.as_deref().unwrap_or(""),
                "content": STAND_IN,
            });
            if !results_open {
                messages.push(json!({"role": "user", "content": []}));
                sh.lines.push(Vec::new());
                sh.blocks.push(Vec::new());
                sh.assistant.push(false);
                results_open = true;
            }
            let m = messages.len() - 1;
            if let Some(c) = messages[m]["content"].as_array_mut() {
                c.push(block);
            }
            sh.lines[m].push(i);
            sh.blocks[m].push((i, None));
            continue;
        }
        if role != "user" && role != "assistant" {
            continue;
        }
        // A string content is text (not judged here); a line with no content is not judged.
        let (content, origins): (Vec<Value>, Vec<(usize, Option<usize>)>) = match &l.content {
            Some((blocks, _)) => blocks
                .iter()
                .enumerate()
                .map(|(k, b)| {
                    let wire = if b.kind == "toolCall" {
                        json!({
                            "type": "tool_use",
                            "id": b.id.as_deref().unwrap_or(""),
                            "name": b.name.as_deref().unwrap_or("tool"),
                            "input": {},
                        })
                    } else {
                        json!({"type": "text", "text": STAND_IN})
                    };
                    (wire, (i, Some(k)))
                })
                .unzip(),
            None if l.content_is_text => (
                vec![json!({"type": "text", "text": STAND_IN})],
                vec![(i, None)],
            ),
            None => continue,
        };
        results_open = false;
        messages.push(json!({"role": role, "content": content}));
        sh.lines.push(vec![i]);
        sh.blocks.push(origins);
        sh.assistant.push(role == "assistant");
    }
    // The next request carries a new prompt after the branch (an empty final reply is only
    // allowed as the last message, and a call left open at the end is open in it).
    if sh.assistant.last() == Some(&true) {
        messages.push(json!({"role": "user", "content": [{"type": "text", "text": STAND_IN}]}));
        sh.lines.push(Vec::new());
        sh.blocks.push(Vec::new());
        sh.assistant.push(false);
    }
    sh.body = json!({"model": model, "max_tokens": 1024, "messages": messages}).to_string();
    sh
}

/// The rules every provider enforces on a conversation's shape, judged by the checker's own
/// rule files on [`shape`]'s request, and each finding translated into an edit of lines:
/// AN-04 (an empty message: its line goes), AN-10 (a result no call of the message before
/// made, or a second one: its line goes), AN-08 (calls with no result in the user messages after
/// them: a result line is added after each), AN-11 (a result behind another message: reported,
/// left as it is, since no edit of lines puts it back in order without moving a line).
///
/// These rules are the same for every model (a finding of them is an error whatever the target),
/// so the shape is checked as for one Claude model whatever the session's own.
fn pairing(s: &Session, branch: &[usize]) -> Vec<Issue> {
    let sh = shape(s, branch, crate::opencode::SWITCH_MODEL);
    if sh.lines.is_empty() {
        return Vec::new();
    }
    let Ok(t) = turnkeeper_model::read(
        &sh.body,
        turnkeeper_model::FormatHint::Exactly(turnkeeper_model::Format::Anthropic),
    ) else {
        return Vec::new();
    };
    let opts = crate::Options::default();
    // Every call id made on any line, to say where an orphan result's call went.
    let all_calls: HashSet<&str> = s
        .lines
        .iter()
        .filter_map(|l| l.content.as_ref())
        .flat_map(|(b, _)| b.iter().filter(|x| x.kind == "toolCall"))
        .filter_map(|b| b.id.as_deref())
        .collect();
    let block = |i: usize, k: usize| s.lines[i].content.as_ref().and_then(|(b, _)| b.get(k));
    // The first message of the run of assistant messages that ends at `end`.
    let run_start = |end: usize| {
        (0..=end)
            .rev()
            .take_while(|&n| sh.assistant[n])
            .last()
            .unwrap_or(end)
    };
    let mut out = Vec::new();
    let mut answered: HashSet<(usize, usize)> = HashSet::new();
    for f in crate::check(&t, &opts) {
        let Some(m) = f.message_index else { continue };
        match f.rule {
            RuleId::An04 => {
                for &i in sh.lines.get(m).into_iter().flatten() {
                    let l = &s.lines[i];
                    let error = l.stop_reason.as_deref() == Some("error");
                    out.push(Issue {
                        rule: RuleId::An04,
                        line: i,
                        message: if error {
                            format!("an error reply stored as `content: []`: {}", f.message)
                        } else {
                            format!("`content: []`: {}", f.message)
                        },
                        fix: Fix::DropLine,
                    });
                }
            }
            RuleId::An10 => {
                let Some(&(i, None)) = f.block_index.and_then(|b| sh.blocks.get(m)?.get(b)) else {
                    continue;
                };
                let id = s.lines[i].tool_call_id.as_deref().unwrap_or("");
                // A second result answers a call of the messages right before; an orphan's call,
                // if the file has it, is somewhere else.
                let before = m.checked_sub(1).filter(|&p| sh.assistant[p]);
                let second = before.is_some_and(|p| {
                    (run_start(p)..=p)
                        .flat_map(|n| &sh.blocks[n])
                        .filter_map(|&(j, k)| block(j, k?))
                        .any(|b| b.kind == "toolCall" && b.id.as_deref() == Some(id))
                });
                let elsewhere = if !second && all_calls.contains(id) {
                    " (its call is on another branch or further back)"
                } else {
                    ""
                };
                out.push(Issue {
                    rule: RuleId::An10,
                    line: i,
                    message: format!("a toolResult for {id:?}{elsewhere}: {}", f.message),
                    fix: Fix::DropLine,
                });
            }
            RuleId::An08 => {
                // The calls are in the run of assistant messages ending at `m` (when the branch
                // ends with them) or just before it; their results, in the user messages after.
                let Some(end) = (if sh.assistant.get(m) == Some(&true) {
                    Some(m)
                } else {
                    m.checked_sub(1)
                }) else {
                    continue;
                };
                let start = run_start(end);
                let results: HashSet<&str> = (end + 1..sh.lines.len())
                    .take_while(|&n| !sh.assistant[n])
                    .flat_map(|n| &sh.blocks[n])
                    .filter_map(|&(i, k)| match k {
                        None => s.lines[i].tool_call_id.as_deref(),
                        Some(_) => None,
                    })
                    .collect();
                for &(i, k) in (start..=end).flat_map(|n| &sh.blocks[n]) {
                    let Some(k) = k else { continue };
                    let Some(b) = block(i, k).filter(|b| b.kind == "toolCall") else {
                        continue;
                    };
                    let id = b.id.as_deref().unwrap_or("");
                    if results.contains(id) || !answered.insert((i, k)) {
                        continue;
                    }
                    out.push(Issue {
                        rule: RuleId::An08,
                        line: i,
                        message: format!(
                            "content[{k}]: a toolCall {id:?} with no toolResult after it on the branch: {}",
                            f.message
                        ),
                        fix: Fix::AnswerCall(k),
                    });
                }
            }
            RuleId::An11 => {
                let Some(&i) = sh.lines.get(m).and_then(|l| l.first()) else {
                    continue;
                };
                out.push(Issue {
                    rule: RuleId::An11,
                    line: i,
                    message: format!(
                        "{} (left as it is: no edit of whole lines puts the results back in order)",
                        f.message
                    ),
                    fix: Fix::Leave,
                });
            }
            _ => {}
        }
    }
    out
}

/// The model `s`'s next request goes to: `model`, else its latest `model_change` /
/// `model-snapshot` line's.
fn session_target(s: &Session, model: Option<&str>) -> Target {
    let mut target = Target::of(s.current_model(&|_| false));
    if let Some(m) = model {
        let (p, _) = crate::wire::provider_of(m);
        target = Target::of(Some((
            Some(match p {
                crate::wire::Provider::Anthropic => "anthropic".to_owned(),
                crate::wire::Provider::OpenAi => "openai".to_owned(),
                _ => target.provider.clone().unwrap_or_default(),
            }),
            Some(m.to_owned()),
            None,
        )));
    }
    target
}

/// Checks `s` for the model of its latest `model_change` / `model-snapshot` line (or `model`).
pub fn check_session(s: &Session, model: Option<&str>) -> SessionCheck {
    let target = session_target(s, model);
    let (issues, branch) = analyse(s, &target);
    let findings = issues
        .into_iter()
        .map(|x| LineFinding {
            finding: Finding {
                rule: x.rule,
                severity: Severity::Error,
                path: "the file".into(),
                message_index: None,
                block_index: match x.fix {
                    Fix::DropBlock(k) | Fix::RemovePartialJson(k) | Fix::AnswerCall(k) => Some(k),
                    Fix::DropLine | Fix::Relink | Fix::Leave => None,
                },
                message: x.message,
                repair: match x.fix {
                    Fix::DropLine => Some("drop the line (its children re-linked to its parent)"),
                    Fix::DropBlock(_) => Some("drop the thinking block whole (never edited)"),
                    Fix::RemovePartialJson(_) => Some("remove the leftover partialJson"),
                    Fix::AnswerCall(_) => {
                        Some("add an error toolResult line for the call, as an interrupt leaves")
                    }
                    Fix::Relink => Some("re-link the line to the entry written before it"),
                    Fix::Leave => None,
                }
                .map(str::to_owned),
            },
            line: Some(s.lines[x.line].number),
            uuid: s.lines[x.line].id.clone(),
            judged: Judged::Target,
        })
        .collect();
    SessionCheck {
        findings,
        target,
        branch,
    }
}

/// One change of [`plan`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LineChange {
    /// The rule.
    pub rule: RuleId,
    /// What is done.
    pub action: &'static str,
    /// The 1-based line (of the text of the pass that made it: the original's, first).
    pub line: usize,
    /// The entry id.
    pub id: Option<String>,
    /// Why.
    pub reason: String,
    /// A dropped thinking block's fingerprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// A repair: the new text and what was done.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The new text (the input's when nothing changed).
    pub text: String,
    /// The changes.
    pub changes: Vec<LineChange>,
}

/// Why a plan was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A thinking block would leave altered or unreported: a bug; nothing is written.
    #[error(
        "guard: a thinking block would be altered or dropped unreported ({0}); nothing was changed"
    )]
    Guard(String),
}

fn new_id(seed: &str) -> String {
    use sha2::{Digest, Sha256};
    turnkeeper_guard::hex(&Sha256::digest(seed.as_bytes())[..4])
}

fn one_pass(s: &Session, target: &Target, changes: &mut Vec<LineChange>) -> Option<String> {
    let (issues, _) = analyse(s, target);
    if issues.is_empty() {
        return None;
    }
    let mut drop: BTreeSet<usize> = BTreeSet::new();
    let mut drop_blocks: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut partial: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut answer: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut relink: BTreeSet<usize> = BTreeSet::new();
    // A call id repeated within one line is answered once: one result answers every call of
    // that id (a second result for it would be an AN-10 finding of its own).
    let mut answered: BTreeSet<(usize, &str)> = BTreeSet::new();
    for x in &issues {
        let l = &s.lines[x.line];
        if let Fix::AnswerCall(k) = x.fix {
            let call = l
                .content
                .as_ref()
                .and_then(|(b, _)| b.get(k))
                .and_then(|b| b.id.as_deref())
                .unwrap_or_default();
            if !answered.insert((x.line, call)) {
                continue;
            }
        }
        let (action, fp) = match x.fix {
            Fix::DropLine => {
                drop.insert(x.line);
                ("drop line", None)
            }
            Fix::DropBlock(k) => {
                drop_blocks.entry(x.line).or_default().insert(k);
                let fp = l
                    .content
                    .as_ref()
                    .and_then(|(b, _)| b.get(k))
                    .map(|b| fingerprint(&s.text[b.span.0..b.span.1]));
                ("drop block", fp)
            }
            Fix::RemovePartialJson(k) => {
                partial.entry(x.line).or_default().insert(k);
                ("edit block", None)
            }
            Fix::AnswerCall(k) => {
                answer.entry(x.line).or_default().push(k);
                ("add result", None)
            }
            Fix::Relink => {
                relink.insert(x.line);
                ("relink", None)
            }
            Fix::Leave => continue,
        };
        changes.push(LineChange {
            rule: x.rule,
            action,
            line: l.number,
            id: l.id.clone(),
            reason: x.message.clone(),
            fingerprint: fp,
        });
    }
    // Where each dropped entry's children now hang, and the results added after a line.
    let mut tail_of: HashMap<String, String> = HashMap::new();
    let mut added: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    // Every added line gets an id no other line has (the seed is the line and call ids; a
    // collision, say two lines sharing an id, takes the next seed).
    let mut taken: HashSet<String> = s.lines.iter().filter_map(|l| l.id.clone()).collect();
    for (&i, ks) in &answer {
        let l = &s.lines[i];
        let Some(aid) = l.id.clone() else { continue };
        let mut parent = aid.clone();
        for &k in ks {
            let Some(b) = l.content.as_ref().and_then(|(b, _)| b.get(k)) else {
                continue;
            };
            let call = b.id.clone().unwrap_or_default();
            let mut rid = new_id(&format!("{aid}:{call}"));
            for n in 1.. {
                if taken.insert(rid.clone()) {
                    break;
                }
                rid = new_id(&format!("{aid}:{call}:{n}"));
            }
            let result = serde_json::json!({
                "type": "message", "id": rid, "parentId": parent,
                "message": {"role": "toolResult", "toolCallId": call,
                            "toolName": b.name.clone().unwrap_or_default(),
                            "content": [{"type": "text", "text": "Tool execution was interrupted: no result was recorded (added by turnkeeper)."}],
                            "isError": true}
            });
            added.entry(i).or_default().push(result.to_string());
            parent = rid;
        }
        tail_of.insert(aid, parent);
    }
    // A parent id is gone when no kept line has it (a file may repeat an id, on a dropped line
    // and a kept one). A gone parent is replaced by the dropped line's own parent, and so on up;
    // a chain of dropped lines that comes back to an id already seen (a line its own parent, or
    // a loop) has no kept ancestor: `None`, and the line is re-linked to the entry written
    // before it, as a line whose parent never was in the file is.
    let kept_ids: HashSet<&str> = s
        .lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .filter_map(|(_, l)| l.id.as_deref())
        .collect();
    let dropped_by_id: HashMap<&str, usize> = drop
        .iter()
        .filter_map(|&j| s.lines[j].id.as_deref().map(|d| (d, j)))
        .collect();
    let effective_parent = |mut p: Option<String>| -> Option<Option<String>> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(x) = p.as_deref() {
            if kept_ids.contains(x) {
                break;
            }
            let Some(&j) = dropped_by_id.get(x) else {
                break;
            };
            if !seen.insert(x.to_owned()) {
                return None;
            }
            p = s.lines[j].parent.clone();
        }
        Some(p.map(|x| tail_of.get(&x).cloned().unwrap_or(x)))
    };
    let mut text = String::with_capacity(s.text.len());
    for (i, l) in s.lines.iter().enumerate() {
        if drop.contains(&i) {
            continue;
        }
        if l.kind.is_none() && s.line_text(i).trim().is_empty() && i + 1 == s.lines.len() {
            continue;
        }
        let mut edits: Vec<((usize, usize), String)> = Vec::new();
        if let Some((blocks, arr)) = &l.content
            && (drop_blocks.contains_key(&i) || partial.contains_key(&i))
        {
            let gone = drop_blocks.get(&i).cloned().unwrap_or_default();
            let fix = partial.get(&i).cloned().unwrap_or_default();
            let kept: Vec<String> = blocks
                .iter()
                .enumerate()
                .filter(|(k, _)| !gone.contains(k))
                .map(|(k, b)| {
                    let raw = &s.text[b.span.0..b.span.1];
                    if fix.contains(&k) {
                        object::remove_key(raw, "partialJson").unwrap_or_else(|| raw.to_owned())
                    } else {
                        raw.to_owned()
                    }
                })
                .collect();
            edits.push((*arr, format!("[{}]", kept.join(","))));
        }
        let before = || {
            let prev = (0..i).rev().find(|&j| {
                !drop.contains(&j)
                    && s.lines[j].id.is_some()
                    && s.lines[j].kind.as_deref() != Some("session")
            });
            effective_parent(prev.and_then(|j| s.lines[j].id.clone())).flatten()
        };
        let newp = if relink.contains(&i) {
            before()
        } else {
            effective_parent(l.parent.clone()).unwrap_or_else(before)
        };
        if newp != l.parent
            && let Some(ps) = l.parent_span
        {
            let v = match &newp {
                Some(p) => serde_json::Value::from(p.clone()).to_string(),
                None => "null".to_owned(),
            };
            edits.push((ps, v));
        }
        edits.sort_by_key(|e| e.0.0);
        let mut at = l.start;
        for ((a, b), t) in edits {
            text.push_str(&s.text[at..a]);
            text.push_str(&t);
            at = b;
        }
        text.push_str(&s.text[at..l.end]);
        text.push('\n');
        for r in added.get(&i).into_iter().flatten() {
            text.push_str(r);
            text.push('\n');
        }
    }
    Some(text)
}

/// The thinking blocks of a text, by their bytes.
fn thinking_blocks(s: &Session) -> Vec<String> {
    s.lines
        .iter()
        .filter_map(|l| l.content.as_ref())
        .flat_map(|(b, _)| b.iter().filter(|x| x.kind == "thinking"))
        .map(|b| s.text[b.span.0..b.span.1].to_owned())
        .collect()
}

/// Plans the repair of `s` by whole lines (passes until nothing changes, at most four), and
/// checks that every thinking block left is one of the input's, byte for byte, and that no more
/// went than were reported.
///
/// # Errors
/// [`PlanError::Guard`] as above.
pub fn plan(s: &Session, model: Option<&str>) -> Result<Plan, PlanError> {
    // Only the target: each pass below analyses the session it sees.
    let target = session_target(s, model);
    let mut changes = Vec::new();
    let mut current: Option<Session> = None;
    // A pass judges the active branch it sees; dropping that branch's leaf (a result for a call
    // nobody made, an error reply) shows the branch behind it, judged by the next pass. Real
    // files take one or two; a file of dead leaves takes one per leaf, and every pass that
    // changes nothing ends the loop.
    for _ in 0..s.lines.len().max(4) {
        let cur = current.as_ref().unwrap_or(s);
        let before = changes.len();
        match one_pass(cur, &target, &mut changes) {
            // What a pass could not change is not reported as changed (the check after the
            // repair reports it as left).
            Some(t) if t == cur.text => {
                changes.truncate(before);
                break;
            }
            Some(t) => match Session::parse(t, "repaired") {
                Ok(n) => current = Some(n),
                Err(e) => return Err(PlanError::Guard(e.to_string())),
            },
            None => break,
        }
    }
    let out = current.as_ref().unwrap_or(s);
    let mut pool = thinking_blocks(s);
    for b in thinking_blocks(out) {
        match pool.iter().position(|x| *x == b) {
            Some(k) => {
                pool.remove(k);
            }
            None => return Err(PlanError::Guard(format!("altered: {}", fingerprint(&b)))),
        }
    }
    let reported = changes.iter().filter(|c| c.action == "drop block").count();
    let in_dropped_lines = pool.len().saturating_sub(reported);
    let dropped_line_thinking = changes.iter().filter(|c| c.action == "drop line").count();
    if in_dropped_lines > 0 && dropped_line_thinking == 0 {
        return Err(PlanError::Guard(format!("{in_dropped_lines} unreported")));
    }
    Ok(Plan {
        text: current.map_or_else(|| s.text.clone(), |c| c.text),
        changes,
    })
}
