//! The OpenCode session doctor: finds the stored damage that makes a session unusable and
//! repairs it in place, part by part.
//!
//! [`plan`] looks at a loaded [`Session`] and proposes [`Repair`]s, each under the rule id of
//! the API rule it keeps (like every other change turnkeeper makes); the stores crate's write
//! layer applies them (backup first, every write atomic, `undo` possible), and
//! [`super::check_session`] checks a session the way its next request will be sent.
//!
//! The plan follows the session's [`Target`]: the Anthropic-only repairs (AN-04, AN-05, AN-18,
//! AN-19, AN-23) are planned only for a session bound for Anthropic. A Kimi session's
//! whitespace text parts, for instance, are valid for Kimi and are left alone. The
//! provider-neutral repairs (stuck tool parts, plugin-written parts naming nothing) are planned
//! for every session.
//!
//! What is repaired (seed 000's recovery list, seed 003's conversion rules, peers.md §1):
//!
//! | rule | damage | repair | why this way |
//! | --- | --- | --- | --- |
//! | AN-05 | a `text` part whose block the check finds blank (whitespace only; or emptied by the AI SDK's trim of a final message's text) | the part is removed | whitespace-only text is sent and rejected ("text content blocks must contain non-whitespace text"). OpenCode's Anthropic filter drops `""` parts itself, so the check finds none and they are left alone. Marking the part `ignored` would not work: OpenCode honours `ignored` on user text only (seed 003 rule 1). |
//! | AN-23 | a `reasoning` part whose block the check finds with a signature that can never verify (empty, Gemini's sentinel, not base64, another provider's) | the part is removed | thinking is never edited; a block that cannot verify can only go (api-rules AN-23) |
//! | AN-23 | plugin-written `thinking` part without a plausible signature (seed 000's synthetic thinking) | the part is removed | a made-up thinking block is rejected whenever a plugin replays it |
//! | AN-10 | plugin-written `tool_result` part naming a call that does not exist | the part is removed | an orphan result (peers.md §1.2) |
//! | AN-08 | `tool` part still `pending`/`running` (an interrupted turn, or one still running when OpenCode is not) | its state becomes `error` with [`INTERRUPTED_TOOL`] and a start/end time | what OpenCode itself writes at the end of a turn (opencode-storage.md §6.1), with the text the model was already shown for it (seed 003 rule 8) |
//! | AN-18 | a step whose reasoning part is stored after its text or tool parts (seed 002: parts are read in id order, and OpenCode sends them in that order) | the parts before the reasoning are given new ids that sort right after it, in OpenCode's id shape (each created again, byte for byte but for `id`, then the original removed: a run cut short leaves a part twice, never lost, and the next run finishes); the reasoning part is not touched | the check's finding ("the first block must be `thinking`") names the step; the only change that does not touch the thinking is to move what precedes it |
//! | AN-19 | a finished assistant turn whose request message the check finds ending with thinking (a thinking-only last step), also once the plan's removals are made | a synthetic text part [`PLACEHOLDER_TEXT`] (`"synthetic": true`) is added after the message's parts | "The final block in an assistant message cannot be `thinking`"; the thinking is kept as it is |
//! | AN-04 | a finished assistant turn the check finds sent with no content (its only reasoning unsigned, which the AI SDK drops) | the same synthetic text part | "all messages must have non-empty content"; the reasoning is kept as it is |
//!
//! The AN-04, AN-05, AN-18, AN-19 and AN-23 repairs are the doctor's translation of the check's
//! findings into part edits: the check ([`super::check_session`]) says which request block or
//! message breaks a rule, and the conversion's origins say which parts and messages make it;
//! what a rule knows stays in its rule file. The other rows are store-level: a part type
//! OpenCode does not send (a plugin's, which the check never sees), and a tool state OpenCode
//! would have closed. Malformed files and unsafe ids are reported by the store and never
//! touched. Messages OpenCode does not send (errored turns) are left alone, except for stuck
//! tool parts.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use turnkeeper_guard::{Provenance, provenance};
use turnkeeper_model::edit::object;
use turnkeeper_model::opencode::change::{
    self, PartChange, mint_part_id, part_id_after, pretty_json,
};
use turnkeeper_model::opencode::convert::{INTERRUPTED_TOOL, is_sent};
use turnkeeper_model::opencode::session::{Session, StoredMessage, StoredPart};
use turnkeeper_model::opencode::types::{MessageInfo, Part, ToolState, parse_part};
use turnkeeper_model::opencode::{Origin, compact_json};

use super::{SessionCheck, Target};
use crate::{Finding, RuleId, Severity};

/// The text of the synthetic part added to a finished assistant turn that has thinking but no
/// text or tool call.
pub const PLACEHOLDER_TEXT: &str = "[no text output]";

pub use super::NEXT_PROMPT;

/// What kind of damage a repair fixes (finer than its [`RepairKind::rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RepairKind {
    /// An empty or whitespace-only text part.
    EmptyText,
    /// A reasoning part whose Anthropic signature can never verify.
    InvalidSignature,
    /// A plugin-written thinking part without a plausible signature.
    SyntheticThinking,
    /// A plugin-written tool result naming a call that does not exist.
    OrphanToolResult,
    /// A tool part left pending/running in a finished message.
    InterruptedTool,
    /// A finished assistant turn whose request message ends with thinking (AN-19).
    ContentlessTurn,
    /// A finished assistant turn sent with no content at all, once the AI SDK drops its
    /// unsigned reasoning (AN-04).
    EmptyTurn,
    /// A part stored before the reasoning of its step, moved after it (a new id).
    ThinkingNotFirst,
}

impl RepairKind {
    /// The id of the API rule the repair keeps (api-rules.md): AN-05 for empty text, AN-23 for a
    /// signature that can never verify, AN-10 for an orphan result, AN-08 for a call left
    /// without its result, AN-18 for a step whose thinking is not first, AN-19 for a turn
    /// ending in thinking, AN-04 for a turn sent empty.
    pub fn rule(self) -> RuleId {
        match self {
            RepairKind::EmptyText => RuleId::An05,
            RepairKind::InvalidSignature | RepairKind::SyntheticThinking => RuleId::An23,
            RepairKind::OrphanToolResult => RuleId::An10,
            RepairKind::InterruptedTool => RuleId::An08,
            RepairKind::ContentlessTurn => RuleId::An19,
            RepairKind::EmptyTurn => RuleId::An04,
            RepairKind::ThinkingNotFirst => RuleId::An18,
        }
    }
}

/// One proposed repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// What it fixes.
    pub kind: RepairKind,
    /// The OpenCode message.
    pub message_id: String,
    /// The part removed, changed or added.
    pub part_id: String,
    /// Why, in words.
    pub reason: String,
    /// The storage change.
    pub change: PartChange,
}

impl Repair {
    /// The id of the API rule the repair keeps ([`RepairKind::rule`]).
    pub fn rule(&self) -> RuleId {
        self.kind.rule()
    }

    /// `removed_part`, `changed_part` or `added_part`.
    pub fn action(&self) -> &'static str {
        match self.change {
            PartChange::Remove { .. } => "removed_part",
            PartChange::Replace { .. } => "changed_part",
            _ => "added_part",
        }
    }
}

/// The repairs proposed for one session, and what was deliberately left alone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DoctorPlan {
    /// The session.
    pub session_id: String,
    /// The repairs, in message order.
    pub repairs: Vec<Repair>,
    /// Things seen and not repaired, in words (with their location).
    pub left_alone: Vec<String>,
}

impl DoctorPlan {
    /// True when there is nothing to repair.
    pub fn is_empty(&self) -> bool {
        self.repairs.is_empty()
    }

    /// The storage plan.
    pub fn to_write_plan(&self) -> change::Plan {
        change::Plan {
            session_id: self.session_id.clone(),
            changes: self.repairs.iter().map(|r| r.change.clone()).collect(),
        }
    }
}

/// Options of [`plan`].
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// OpenCode may still be writing the last message (the store is in use): an unfinished last
    /// message is then left alone.
    pub last_message_live: bool,
    /// Where the session's next request goes ([`super::session_target`]); `None`: Anthropic,
    /// the strictest.
    pub target: Option<Target>,
}

/// A string member of a part's JSON text.
fn str_member(raw: &str, key: &str) -> Option<String> {
    object::get(raw, key).and_then(|v| serde_json::from_str::<String>(v).ok())
}

/// Proposes the repairs for `session` (see the module docs for what and why).
///
/// For a session bound for Anthropic the request-level repairs come from the check's findings
/// ([`super::check_session`]); a caller that has checked the session already gives that check
/// to [`plan_checked`] instead.
pub fn plan(session: &Session, opts: &PlanOptions) -> DoctorPlan {
    let checked = bound_for_anthropic(opts).then(|| {
        // With no target given, the check is Anthropic's too: the session's own Claude model,
        // or (a session bound elsewhere) the model it would be switched to.
        let model = match &opts.target {
            Some(t) => t.model.clone(),
            None => super::session_target(session, None).checked_model(),
        };
        let check_opts = crate::Options {
            model,
            ..crate::Options::default()
        };
        super::check_session(session, &check_opts).ok()
    });
    plan_with(session, opts, checked.flatten().as_ref())
}

/// [`plan`], with the check of `session` for the same target made already (the Node binding
/// checks a session before it plans, and the plan then costs no second check). A check made for
/// another target than `opts`' is not used: the session is checked again.
pub fn plan_checked(session: &Session, opts: &PlanOptions, checked: &SessionCheck) -> DoctorPlan {
    match &opts.target {
        Some(t) if *t != checked.target => plan(session, opts),
        None if !checked.target.is_anthropic() => plan(session, opts),
        _ => plan_with(session, opts, Some(checked)),
    }
}

/// Whether the Anthropic-only repairs are planned: for a session bound for Anthropic, or with
/// no target given (the strictest).
fn bound_for_anthropic(opts: &PlanOptions) -> bool {
    opts.target.as_ref().is_none_or(Target::is_anthropic)
}

/// The plan, with the session's check when the Anthropic-only repairs need it (`None`: it could
/// not be made, and the repairs taken from its findings are left out, said in `left_alone`).
fn plan_with(session: &Session, opts: &PlanOptions, checked: Option<&SessionCheck>) -> DoctorPlan {
    let mut out = DoctorPlan {
        session_id: session.info.id.clone(),
        ..DoctorPlan::default()
    };
    let calls: std::collections::BTreeSet<&str> = session
        .messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.typed {
            Part::Tool(t) => Some(t.call_id.as_str()),
            _ => None,
        })
        .collect();
    let last = session.messages.len().saturating_sub(1);
    // The Anthropic-only repairs wait for a session bound for Anthropic.
    let anthropic = bound_for_anthropic(opts);
    if !anthropic {
        out.left_alone.push(format!(
            "the session goes to {} (not Anthropic): its text, reasoning and ids are judged valid for it, and only provider-neutral damage is repaired",
            opts.target
                .as_ref()
                .and_then(|t| t.model.clone())
                .unwrap_or_else(|| "another provider".to_owned())
        ));
    }
    let found = part_findings(checked.filter(|_| anthropic));
    // The turns a synthetic text part may be added to, with the time it gets.
    let mut placeable: HashMap<&str, (&StoredMessage, i64)> = HashMap::new();
    for (i, m) in session.messages.iter().enumerate() {
        let sent = is_sent(m);
        let (finished, assistant) = match &m.typed {
            MessageInfo::Assistant(a) => (
                a.time.completed.is_some()
                    || a.error.is_some()
                    || i != last
                    || !opts.last_message_live,
                Some(a),
            ),
            _ => (true, None),
        };
        if assistant.is_some() && !finished {
            out.left_alone.push(format!(
                "message {}: the last message is unfinished and OpenCode may still be writing it",
                m.id
            ));
            continue;
        }
        for p in &m.parts {
            let remove = |kind, reason: String| removal(kind, p, reason);
            match &p.typed {
                // AN-05 and AN-23, translated: the check found the block this part makes.
                Part::Text(_) | Part::Reasoning(_) => {
                    let repair = found.get(p.id.as_str()).and_then(|f| match (&p.typed, f.rule) {
                        (Part::Text(_), RuleId::An05) => Some((
                            RepairKind::EmptyText,
                            format!("{}; the part is removed", f.message),
                        )),
                        (Part::Reasoning(_), RuleId::An23) => Some((
                            RepairKind::InvalidSignature,
                            format!(
                                "reasoning part: {}; thinking is never edited, so the part is removed",
                                f.message
                            ),
                        )),
                        _ => None,
                    });
                    if let Some((kind, reason)) = repair {
                        out.repairs.push(remove(kind, reason));
                    }
                }
                Part::Unknown { kind } if kind == "thinking" => {
                    let sig = str_member(&p.raw, "signature");
                    if provenance(sig.as_deref()) != Provenance::Plausible {
                        out.repairs.push(remove(
                            RepairKind::SyntheticThinking,
                            "plugin-written thinking part without a valid signature (a synthetic thinking block is rejected whenever it is replayed)".to_owned(),
                        ));
                    }
                }
                Part::Unknown { kind } if kind == "tool_result" => {
                    let id = str_member(&p.raw, "tool_use_id").unwrap_or_default();
                    if !calls.contains(id.as_str()) {
                        out.repairs.push(remove(
                            RepairKind::OrphanToolResult,
                            format!(
                                "plugin-written tool_result for call {id:?}, which no tool part of this session made"
                            ),
                        ));
                    }
                }
                Part::Tool(t)
                    if matches!(t.state, ToolState::Pending(_) | ToolState::Running(_)) =>
                {
                    if let Some(a) = assistant
                        && let Some(new_raw) =
                            interrupted_state(p, a.time.created, a.time.completed)
                    {
                        out.repairs.push(Repair {
                            kind: RepairKind::InterruptedTool,
                            message_id: m.id.clone(),
                            part_id: p.id.clone(),
                            reason: if a.time.completed.is_some() {
                                format!(
                                    "tool call {} ({}) was left {} in a finished message; marked as an interrupted error, as OpenCode does at the end of a turn",
                                    t.call_id,
                                    t.tool,
                                    t.state.status()
                                )
                            } else {
                                format!(
                                    "tool call {} ({}) is {} in a message OpenCode never finished (interrupted, or still running); marked as an interrupted error, as OpenCode does when a turn ends",
                                    t.call_id,
                                    t.tool,
                                    t.state.status()
                                )
                            },
                            change: PartChange::Replace {
                                message_id: m.id.clone(),
                                part_id: p.id.clone(),
                                old_raw: p.raw.clone(),
                                new_raw,
                            },
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(a) = assistant
            && anthropic
            && sent
            && a.error.is_none()
        {
            // A sent, finished turn: a synthetic text part may be added to it (AN-19, AN-04).
            placeable.insert(
                m.id.as_str(),
                (m, a.time.completed.unwrap_or(a.time.created)),
            );
        }
    }
    if anthropic {
        match checked {
            Some(c) => {
                thinking_first(session, c, &mut out);
                contentless_turns(session, c, &placeable, &mut out);
            }
            None => out.left_alone.push(
                "the session could not be checked, so no text or reasoning part the check would find was removed, no step's thinking was moved first, and no turn left with thinking alone was given a text part"
                    .to_owned(),
            ),
        }
    }
    out
}

/// AN-05 and AN-23, translated from the check: the errors it finds on a block, by the part
/// the block came from (the plan removes a text part found blank and a reasoning part whose
/// signature can never verify).
fn part_findings(checked: Option<&SessionCheck>) -> HashMap<&str, &Finding> {
    let mut out = HashMap::new();
    for sf in checked.into_iter().flat_map(|c| &c.findings) {
        let f = &sf.finding;
        if f.severity != Severity::Error
            || f.block_index.is_none()
            || !matches!(f.rule, RuleId::An05 | RuleId::An23)
        {
            continue;
        }
        if let Some(part) = &sf.part_id {
            out.entry(part.as_str()).or_insert(f);
        }
    }
    out
}

/// The repair that removes part `p` (of its message), as stored.
fn removal(kind: RepairKind, p: &StoredPart, reason: String) -> Repair {
    Repair {
        kind,
        message_id: p.message_id.clone(),
        part_id: p.id.clone(),
        reason,
        change: PartChange::Remove {
            message_id: p.message_id.clone(),
            part_id: p.id.clone(),
            old_raw: p.raw.clone(),
        },
    }
}

/// AN-18, translated from the check: for every request message the check finds not starting
/// with thinking (its first block a text or tool part, a reasoning part after it), the parts
/// before the message's first reasoning part are given new ids that sort right after the
/// message's last reasoning part, in their order (OpenCode's id shape, [`part_id_after`]):
/// OpenCode then reads (and sends) the reasoning first. Each moved part is created again with
/// the new id, its JSON otherwise the same (or as another repair rewrites it), then the original
/// removed; the reasoning parts are not touched. Parts another repair removes are not moved.
fn thinking_first(session: &Session, checked: &SessionCheck, out: &mut DoctorPlan) {
    let gone: HashSet<String> = out
        .repairs
        .iter()
        .filter(|r| matches!(r.change, PartChange::Remove { .. }))
        .map(|r| r.part_id.clone())
        .collect();
    let mut done: HashSet<usize> = HashSet::new();
    for f in &checked.findings {
        let f = &f.finding;
        if f.rule != RuleId::An18 || f.severity != Severity::Error {
            continue;
        }
        let Some(i) = f.message_index else { continue };
        if !done.insert(i) {
            continue;
        }
        let Some(origins) = checked.request.blocks.get(i) else {
            continue;
        };
        let Some(m) = origins
            .first()
            .and_then(|o| session.messages.iter().find(|m| m.id == o.message_id))
        else {
            continue;
        };
        let reasoning = |id: &str| {
            m.parts
                .iter()
                .any(|p| p.id == id && matches!(p.typed, Part::Reasoning(_)))
        };
        let Some(first) = origins.iter().position(|o| reasoning(&o.part_id)) else {
            continue;
        };
        let Some(last) = origins.iter().rposition(|o| reasoning(&o.part_id)) else {
            continue;
        };
        // The parts before the first reasoning (a part may make two blocks: once each).
        let mut moved: Vec<&StoredPart> = Vec::new();
        for o in &origins[..first] {
            if o.message_id != m.id || gone.contains(&o.part_id) {
                continue;
            }
            if let Some(p) = m.parts.iter().find(|p| p.id == o.part_id)
                && !moved.iter().any(|q| q.id == p.id)
            {
                moved.push(p);
            }
        }
        let anchor = &origins[last].part_id;
        let time = match &m.typed {
            MessageInfo::Assistant(a) => a.time.completed.unwrap_or(a.time.created),
            _ => 0,
        };
        // The part's JSON with its id blanked: how a copy left by an interrupted earlier run
        // (created, its original not yet removed) is recognised.
        let without_id = |raw: &str| object::set_key(&compact_json(raw), "id", "\"\"");
        // Each new id sorts after the previous one (the reasoning's, first) and before the next
        // part of the message.
        let mut lo = anchor.clone();
        for p in &moved {
            // A part another repair rewrites (a stuck tool part) moves as rewritten.
            let raw = out
                .repairs
                .iter()
                .find_map(|r| match &r.change {
                    PartChange::Replace {
                        part_id, new_raw, ..
                    } if *part_id == p.id => Some(new_raw.as_str()),
                    _ => None,
                })
                .unwrap_or(&p.raw);
            let reason = |new_id: &str| {
                format!(
                    "part {} was stored before the reasoning part {anchor} of its step, so OpenCode sends it first: \"{}\"; it is moved after the reasoning (new id {new_id}), the reasoning untouched",
                    p.id, f.message
                )
            };
            let remove = |reason: String| removal(RepairKind::ThinkingNotFirst, p, reason);
            // The parts an interrupted run already created: the ones at the ids this loop mints
            // in turn after `lo` (a moved part whose original is gone, or this part's copy).
            let mut made: Vec<&StoredPart> = Vec::new();
            let mut at = lo.clone();
            while let Some(id) = part_id_after(&at)
                && let Some(q) = m.parts.iter().find(|q| q.id == id)
            {
                made.push(q);
                at = id;
            }
            let want = without_id(raw);
            if let Some(copy) = made
                .iter()
                .find(|q| want.is_some() && without_id(&q.raw) == want)
            {
                // This part's copy is there: what is left is to remove the original.
                out.repairs.push(remove(reason(&copy.id)));
                lo = copy.id.clone();
                continue;
            }
            lo = at;
            let next = m
                .parts
                .iter()
                .map(|q| q.id.as_str())
                .filter(|id| *id > lo.as_str())
                .min();
            let Some(new_id) = part_id_after(&lo).filter(|id| next.is_none_or(|x| id.as_str() < x))
            else {
                out.left_alone.push(format!(
                    "message {}: part {} could not be given an id between {lo} and the next part, so the step's thinking was not moved first",
                    m.id, p.id
                ));
                break;
            };
            let id = serde_json::Value::from(new_id.clone()).to_string();
            let Some(json) = object::set_key(&compact_json(raw), "id", &id) else {
                continue;
            };
            // The copy first, then the original's removal: a run killed between the two leaves
            // the part twice (the next run removes the original), never not at all.
            out.repairs.push(Repair {
                kind: RepairKind::ThinkingNotFirst,
                message_id: m.id.clone(),
                part_id: new_id.clone(),
                reason: reason(&new_id),
                change: PartChange::Create {
                    message_id: m.id.clone(),
                    part_id: new_id.clone(),
                    json,
                    time,
                },
            });
            out.repairs.push(remove(reason(&new_id)));
            lo = new_id;
        }
    }
}

/// AN-19 and AN-04, translated from the check of the session as the rest of the plan leaves
/// it: a turn whose request message ends with thinking ("The final block in an assistant
/// message cannot be `thinking`"), or is left with no content once the AI SDK drops its
/// unsigned reasoning ("all messages must have non-empty content"), gets a synthetic text part
/// [`PLACEHOLDER_TEXT`] after its parts; its thinking is kept as it is. The removals of the
/// plan can leave a turn so (a whitespace text part was its only text), so the check is made
/// again on the simulated session when the plan changes anything; else `checked` answers.
fn contentless_turns(
    session: &Session,
    checked: &SessionCheck,
    placeable: &HashMap<&str, (&StoredMessage, i64)>,
    out: &mut DoctorPlan,
) {
    if placeable.is_empty() {
        return;
    }
    let again;
    let checked = if out.repairs.is_empty() {
        checked
    } else {
        let opts = crate::Options {
            model: checked.model.clone(),
            ..crate::Options::default()
        };
        match super::check_session(&simulate(session, out), &opts) {
            Ok(c) => {
                again = c;
                &again
            }
            Err(_) => {
                out.left_alone.push(
                    "the planned session could not be checked again, so no turn left with thinking alone was given a text part".to_owned(),
                );
                return;
            }
        }
    };
    let mut done: HashSet<&str> = HashSet::new();
    for sf in &checked.findings {
        let f = &sf.finding;
        if f.severity != Severity::Error || !matches!(f.rule, RuleId::An19 | RuleId::An04) {
            continue;
        }
        let Some(&(m, time)) = sf.message_id.as_deref().and_then(|id| placeable.get(id)) else {
            continue;
        };
        if !done.insert(m.id.as_str()) {
            continue;
        }
        // After every part of the message, the ones this plan creates too.
        let mut ids: Vec<&str> = m.parts.iter().map(|p| p.id.as_str()).collect();
        for r in &out.repairs {
            if let PartChange::Create {
                message_id,
                part_id,
                ..
            } = &r.change
                && *message_id == m.id
            {
                ids.push(part_id);
            }
        }
        let part_id = mint_part_id(&ids, &format!("turnkeeper:{}:placeholder", m.id));
        let json = placeholder_json(&part_id, &session.info.id, &m.id, time);
        out.repairs.push(Repair {
            kind: if f.rule == RuleId::An04 {
                RepairKind::EmptyTurn
            } else {
                RepairKind::ContentlessTurn
            },
            message_id: m.id.clone(),
            part_id: part_id.clone(),
            reason: format!(
                "{}; a synthetic text part is added after the turn's parts, its thinking kept as it is",
                f.message
            ),
            change: PartChange::Create {
                message_id: m.id.clone(),
                part_id,
                json,
                time,
            },
        });
    }
}

/// The synthetic text part, as compact JSON with its ids (OpenCode's key order).
fn placeholder_json(part_id: &str, session_id: &str, message_id: &str, time: i64) -> String {
    let s = |v: &str| serde_json::Value::from(v).to_string();
    format!(
        "{{\"id\":{},\"sessionID\":{},\"messageID\":{},\"type\":\"text\",\"text\":{},\"synthetic\":true,\"time\":{{\"start\":{time},\"end\":{time}}}}}",
        s(part_id),
        s(session_id),
        s(message_id),
        s(PLACEHOLDER_TEXT)
    )
}

/// The part's text with its `state` rewritten to an interrupted error, in the part's own layout
/// (2-space pretty for a pretty file, compact otherwise). `None` when the text has no `state`.
fn interrupted_state(p: &StoredPart, created: i64, completed: Option<i64>) -> Option<String> {
    let state = object::get(&p.raw, "state")?;
    let input = object::get(state, "input").map_or_else(|| "{}".to_owned(), compact_json);
    let start = match &p.typed {
        Part::Tool(t) => match &t.state {
            ToolState::Running(r) => r.time.as_ref().map(|t| t.start).filter(|s| *s > 0),
            _ => None,
        },
        _ => None,
    }
    .unwrap_or(created);
    let end = completed.unwrap_or(start).max(start);
    let mut new_state = format!(
        "{{\"status\":\"error\",\"input\":{input},\"error\":{}",
        serde_json::Value::from(INTERRUPTED_TOOL)
    );
    if let Some(meta) = object::get(state, "metadata") {
        new_state.push_str(",\"metadata\":");
        new_state.push_str(&compact_json(meta));
    }
    new_state.push_str(&format!(",\"time\":{{\"start\":{start},\"end\":{end}}}}}"));
    let value = if p.raw.contains('\n') {
        pretty_json(&new_state, member_level(&p.raw, "state"))
    } else {
        new_state
    };
    object::set_key(&p.raw, "state", &value)
}

/// The nesting level of a pretty-printed top-level member, from its indentation.
fn member_level(raw: &str, key: &str) -> usize {
    let needle = format!("\"{key}\":");
    raw.lines()
        .find(|l| l.trim_start().starts_with(&needle))
        .map_or(1, |l| (l.len() - l.trim_start().len()) / 2)
}

/// `session` as it will be once `plan` is applied (for checking a plan before writing it).
pub fn simulate(session: &Session, plan: &DoctorPlan) -> Session {
    let mut s = session.clone();
    for r in &plan.repairs {
        let Some(m) = s.messages.iter_mut().find(|m| m.id == r.message_id) else {
            continue;
        };
        match &r.change {
            PartChange::Remove { part_id, .. } => m.parts.retain(|p| &p.id != part_id),
            PartChange::Replace {
                part_id, new_raw, ..
            } => {
                if let Some(p) = m.parts.iter_mut().find(|p| &p.id == part_id)
                    && let Ok((ids, typed)) = parse_part(new_raw)
                {
                    p.raw = new_raw.clone();
                    p.body_ids = ids;
                    p.typed = typed;
                }
            }
            PartChange::Create { part_id, json, .. } => {
                if let Ok((ids, typed)) = parse_part(json) {
                    m.parts.push(StoredPart {
                        id: part_id.clone(),
                        message_id: m.id.clone(),
                        raw: json.clone(),
                        body_ids: ids,
                        typed,
                        origin: Origin::Export(format!("(new part {part_id})")),
                    });
                    m.parts.sort_by(|a, b| a.id.cmp(&b.id));
                }
            }
        }
    }
    s
}

pub use super::next_turn_body;

/// True when an error-level finding is left.
pub fn has_errors(c: &SessionCheck) -> bool {
    c.findings
        .iter()
        .any(|f| f.finding.severity == Severity::Error)
}
