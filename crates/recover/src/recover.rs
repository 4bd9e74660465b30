//! Applying the planned [`Action`] to the request that failed: [`recover`].
//!
//! # What each action does to the body
//! | action | body | headers |
//! |---|---|---|
//! | `retry` | the same bytes | none |
//! | `repair` | `prevent::repair` over the whole request (default policy unless given); the report marks which changes address the diagnosed rules or message | `anthropic-beta` values the repair asks for |
//! | `restore_from_store` | `prevent::repair` with the turn store and `on_missing_thinking = [restore]`; applies only when a turn was restored | as for `repair` |
//! | `disable_thinking` | `thinking` set to `{"type":"disabled"}`, nothing else touched; only where the model allows it | none |
//! | `use_adaptive` | `thinking.type` set to `"adaptive"` (its `budget_tokens` dropped, other keys kept); only where the model allows it | none |
//! | `strip_thinking` | every `thinking`/`redacted_thinking` block of message `from` on removed, whole, each removal reported | none |
//! | `request_drop_block` | `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` added to the `thinking` parameter | `anthropic-beta: thinking-binding-controls-2026-08-01` |
//! | `restore_reasoning`, `empty_reasoning` | Chat, Responses, Converse: prevent's wire repair with the turn store (restore), or without it and with the provider's empty value (lossy); applies only when that changed something | none |
//! | `drop_items` | Responses: the items the error names (ids, `input[N]`, the quoted `encrypted_content`) removed whole, reasoning with its fingerprint; for OR-04 naming nothing this body holds, every reasoning item and every encrypted compaction item; the items the removed reasoning produced lose their `id` (OR-02), keeping `call_id`. OR-04 is sent once: the same error again gives up | none |
//! | `strip_item_ids` | Responses: the `id` of the items the error names (OR-02, OR-08; with an elided id, the ids without their type's prefix), or under `store: false` (OR-03) every server id; an `item_reference`, or a reasoning item left with neither id nor `encrypted_content`, goes whole | none |
//! | `drop_unsigned_reasoning` | Converse (BR-05): every `reasoningContent` block without a signature, whole; Chat (DS-01, legacy `deepseek-reasoner`): every `reasoning_content` field, one change per message | none |
//! | `fix_config`, `compact`, `give_up` | unchanged: handed back to the caller | none |
//!
//! The five wire actions on a body of another format (an Anthropic body answered by an OpenAI
//! error) are handed back; on a wire body of the wrong family (`drop_items` on Chat) they are
//! skipped. After a wire action's own edit (checked by its own guard: every reasoning unit of
//! the output is one of the input's, byte for byte or a Responses item without its `id`, and
//! every one missing was reported), prevent's wire repair runs once over the result, without
//! the turn store and without empty stand-ins, which would write back what was just taken out.
//!
//! After an action that edits the body (all but `repair`, `restore_from_store`, which already
//! are a repair), the result goes through `prevent::repair` once more, without the turn store
//! (a restore would undo a strip), so that what the edit implies is also done and reported (stripping the open turn's thinking in manual mode makes
//! AN-16 disable thinking; an assistant message left empty is removed by AN-04). When the body
//! needs nothing more, that pass changes nothing, so the body is byte-identical to the request
//! outside the action's own edit.
//!
//! # Escalation inside one call
//! An action that cannot apply to this request (no turn store, no thinking left to strip, a
//! model that cannot run without thinking, a repair that finds nothing to change) is *skipped*:
//! recorded in [`Attempts`] with the reason ([`crate::Attempt::skipped`]) and the next rung is
//! planned at once. So the body returned always differs from the request, except for `retry`
//! and hand-backs. Skipped rungs are listed in [`RecoverReport::skipped`].
//!
//! Thinking blocks are never edited: they leave byte-identical, restored from the store, or
//! removed whole and reported. Every edit made here is checked against a
//! [`turnkeeper_guard::Ledger`] taken before it, like prevent's own repairs.

use std::time::Duration;

use serde::Serialize;
use turnkeeper_guard::{GuardViolation, Ledger, TurnStore};
use turnkeeper_model::edit::object;
use turnkeeper_model::{Draft, Format, FormatHint, ModelError, Transcript, read};
use turnkeeper_prevent::remove_thinking;
use turnkeeper_prevent::{
    Change, Finding, Fixer, MissingThinking, Mode, Options, PreventError, RequestChange, RuleId,
    Severity, ToolIdForm, context, repair,
};

use crate::diagnosis::{Diagnosis, ErrorKind, Location};
use crate::normalize::Normalized;
use crate::plan::{Action, Attempts, DROP_BLOCK_BETA, plan};
use crate::wire_edit;

/// The rule id on changes `recover` makes itself (prevent's own rules report their ids).
pub const RECOVER_RULE: RuleId = RuleId::Recover;

/// The header name for beta values.
const BETA_HEADER: &str = "anthropic-beta";

/// Upper bound on planning rounds in one call (ladders are far shorter; this only guards
/// against a planner bug looping forever).
const MAX_ROUNDS: usize = 32;

/// Why [`recover`] could not produce a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecoverError {
    /// The request body could not be read.
    #[error("the request cannot be read: {0}")]
    Request(#[from] ModelError),
    /// prevent's repair failed closed (a thinking block would have changed: a turnkeeper bug).
    #[error(transparent)]
    Prevent(#[from] PreventError),
    /// An edit made by `recover` itself failed the thinking-block guard (a turnkeeper bug);
    /// nothing should be sent.
    #[error("guard violation (a turnkeeper bug; nothing was changed): {0}")]
    Guard(#[from] GuardViolation),
}

/// Whether the caller has a body to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// Send [`Recovered::body`] with [`Recovered::headers`] (for `retry`, after the wait the
    /// action names).
    Send,
    /// Nothing turnkeeper can do to the body helps: the caller must compact, fix a request
    /// parameter, or stop. [`Recovered::body`] is the request unchanged.
    HandBack,
}

/// A rung of the ladder that could not apply to this request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The action.
    pub action: Action,
    /// Why it could not apply.
    pub reason: String,
}

/// What `recover` did: the changes, what they address, and what is left.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoverReport {
    /// Rungs skipped before the action taken, in order.
    pub skipped: Vec<Skipped>,
    /// Every change, in order: the action's own edit first, then those of the repair pass that
    /// follows it. Paths of the repair pass are in terms of the body it ran on.
    pub changes: Vec<Change>,
    /// Changes to the request outside the messages (the `thinking` parameter, beta values).
    pub request_changes: Vec<RequestChange>,
    /// Indices into `changes` of those that address the diagnosis: made by the action itself,
    /// or (for `repair`) by one of the rules it names or at the message the error points to.
    pub addressing: Vec<usize>,
    /// What `prevent::check` still finds on the body to send.
    pub findings_left: Vec<Finding>,
    /// Remarks for the caller (the wait before a retry, a location outside the request, …).
    pub notes: Vec<String>,
}

impl RecoverReport {
    /// True when an error-level finding is left on the body.
    pub fn has_errors(&self) -> bool {
        self.findings_left
            .iter()
            .any(|f| f.severity == Severity::Error)
    }
}

/// The result of [`recover`]: the body to send, the headers to add, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Recovered {
    /// The body to send (the request unchanged for `retry` and hand-backs).
    pub body: String,
    /// Headers to add to the request, e.g. `("anthropic-beta", "thinking-binding-controls-…")`.
    pub headers: Vec<(String, String)>,
    /// The action taken (the last one planned; skipped rungs are in the report).
    pub action: Action,
    /// Send, or hand back.
    pub outcome: Outcome,
    /// What was done.
    pub report: RecoverReport,
}

impl Recovered {
    /// True when there is a body to retry with.
    pub fn sends(&self) -> bool {
        self.outcome == Outcome::Send
    }

    /// How long to wait before sending (for `retry`).
    pub fn wait(&self) -> Option<Duration> {
        match self.action {
            Action::Retry { after } => Some(after),
            _ => None,
        }
    }
}

/// Plans the next action for `diagnosis` and applies it to `request`, the body that failed.
///
/// The attempt is recorded in `attempts` (and so are rungs skipped on the way, see the module
/// docs), so calling again with the same `attempts` after the same error escalates. The default
/// policy is used; see [`recover_with`] for a model override, betas, a policy or profile
/// overrides.
///
/// # Errors
/// [`RecoverError::Request`] when an action needs to read the request and it is not a readable
/// transcript; [`RecoverError::Prevent`] or [`RecoverError::Guard`] when a repair failed closed.
/// `attempts` is left unchanged on error.
///
/// ```
/// use turnkeeper_recover::{classify, recover, Action, Attempts};
/// let body = r#"{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[
///   {"role":"user","content":"list files"},
///   {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}]},
///   {"role":"user","content":"never mind"}]}"#;
/// let err = "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.";
/// let d = classify(Some(400), err);
/// let mut attempts = Attempts::new();
/// let r = recover(body, &d, &mut attempts, None)?;
/// assert!(matches!(r.action, Action::Repair { .. }));
/// assert!(r.body.contains(r#""tool_use_id":"toolu_1""#));
/// assert_eq!(attempts.len(), 1);
/// # Ok::<(), turnkeeper_recover::RecoverError>(())
/// ```
pub fn recover(
    request: &str,
    diagnosis: &Diagnosis,
    attempts: &mut Attempts,
    store: Option<&TurnStore>,
) -> Result<Recovered, RecoverError> {
    let opts = Options {
        store,
        ..Options::default()
    };
    recover_with(request, diagnosis, attempts, &opts)
}

/// Like [`recover`], with prevent's [`Options`]: target model, thinking mode, betas the request
/// is sent with, the policy for repairs, the turn store and profile overrides.
///
/// # Errors
/// As [`recover`].
pub fn recover_with(
    request: &str,
    diagnosis: &Diagnosis,
    attempts: &mut Attempts,
    opts: &Options<'_>,
) -> Result<Recovered, RecoverError> {
    let mut tried = attempts.clone();
    let mut report = RecoverReport::default();
    for _ in 0..MAX_ROUNDS {
        let action = plan(diagnosis, &tried);
        match apply(request, diagnosis, &action, opts, &mut report)? {
            Applied::Skip(reason) => {
                tracing::debug!(action = action.name(), %reason, "recovery rung skipped");
                tried.record_skipped(diagnosis, action.clone(), reason.clone());
                report.skipped.push(Skipped { action, reason });
            }
            Applied::Done {
                body,
                headers,
                outcome,
            } => {
                tried.record(diagnosis, action.clone());
                *attempts = tried;
                return Ok(Recovered {
                    body,
                    headers,
                    action,
                    outcome,
                    report,
                });
            }
        }
    }
    let action = Action::GiveUp {
        reason: "no applicable recovery action was found".to_owned(),
    };
    tried.record(diagnosis, action.clone());
    *attempts = tried;
    Ok(Recovered {
        body: request.to_owned(),
        headers: Vec::new(),
        action,
        outcome: Outcome::HandBack,
        report,
    })
}

/// The result of applying one action.
enum Applied {
    /// The action could not apply; plan the next rung.
    Skip(String),
    /// The action applied.
    Done {
        body: String,
        headers: Vec<(String, String)>,
        outcome: Outcome,
    },
}

/// What the caller is asked to do, for the actions on body formats turnkeeper does not read.
fn hand_back_note(action: &Action) -> String {
    let ids = |ids: &[String]| {
        if ids.is_empty() {
            "every one".to_owned()
        } else {
            ids.join(", ")
        }
    };
    let from = |m: &Option<u32>| {
        m.map_or_else(|| "every message".to_owned(), |m| format!("message {m} on"))
    };
    match action {
        Action::RestoreReasoning { from: m } => {
            format!("put back the stored reasoning of {}", from(m))
        }
        Action::EmptyReasoning { from: m } => format!(
            "give {} its provider's empty reasoning value (`reasoning_content: \"\"`, `summary: []`; lossy)",
            from(m)
        ),
        Action::DropUnsignedReasoning => {
            "remove the reasoning the provider refuses to read back".to_owned()
        }
        Action::DropItems { ids: i } => format!(
            "remove these input items, whole: {} (and the ids of the items that followed a removed reasoning item)",
            ids(i)
        ),
        Action::StripItemIds { ids: i } => {
            format!(
                "remove the `id` of these input items, keeping them: {}",
                ids(i)
            )
        }
        other => other.name().to_owned(),
    }
}

fn hand_back(request: &str) -> Applied {
    Applied::Done {
        body: request.to_owned(),
        headers: Vec::new(),
        outcome: Outcome::HandBack,
    }
}

fn apply(
    request: &str,
    d: &Diagnosis,
    action: &Action,
    opts: &Options<'_>,
    report: &mut RecoverReport,
) -> Result<Applied, RecoverError> {
    match action {
        Action::Retry { after } => {
            report.notes.push(format!(
                "send the same bytes again after {} ms",
                after.as_millis()
            ));
            Ok(Applied::Done {
                body: request.to_owned(),
                headers: Vec::new(),
                outcome: Outcome::Send,
            })
        }
        Action::FixConfig { what } => {
            report.notes.push(format!(
                "the request parameter `{what}` must be fixed by the caller; no transcript change helps"
            ));
            Ok(hand_back(request))
        }
        Action::Compact => {
            report.notes.push(
                "the transcript must be compacted (summarised or truncated) by the caller"
                    .to_owned(),
            );
            Ok(hand_back(request))
        }
        Action::RestoreReasoning { .. } | Action::EmptyReasoning { .. }
            if wire_format(request).is_some() =>
        {
            apply_wire_reasoning(request, action, opts, report)
        }
        Action::DropUnsignedReasoning | Action::DropItems { .. } | Action::StripItemIds { .. }
            if wire_format(request).is_some() =>
        {
            apply_wire_edit(request, d, action, opts, report)
        }
        Action::RestoreReasoning { .. }
        | Action::EmptyReasoning { .. }
        | Action::DropUnsignedReasoning
        | Action::DropItems { .. }
        | Action::StripItemIds { .. } => {
            report.notes.push(format!(
                "{}: an edit of an OpenAI Chat or Responses (or Bedrock Converse) body, and this \
                 request is none of those; the caller applies it",
                hand_back_note(action)
            ));
            Ok(hand_back(request))
        }
        Action::GiveUp { reason } => {
            report.notes.push(format!("giving up: {reason}"));
            Ok(hand_back(request))
        }
        Action::Repair { rules, location } => {
            let t = match read(request, FormatHint::Auto) {
                Ok(t) => t,
                // A wire-family body (Chat, Responses, Converse) is not a block transcript: its
                // own rules judge it (the reading that said so is the only one made).
                Err(ModelError::NotTranscript { format }) => {
                    return repair_wire_body(request, format, rules, *location, opts, report);
                }
                Err(e) => return Err(e.into()),
            };
            note_location(&t, location, report);
            let mut o = opts.clone();
            if d.kind == ErrorKind::ToolUseIdFormat {
                o.policy.tool_ids = tool_id_form(d);
                report.notes.push(format!(
                    "tool ids are rewritten to the form the provider named: {:?}",
                    o.policy.tool_ids
                ));
            }
            if rules.contains(&turnkeeper_prevent::RuleId::Cx02) {
                // The provider refused a `system` message, whatever its model is called
                // (DeepSeek's endpoint also answers to `claude-*` names).
                o.policy.fold_system_messages = Some(true);
                report.notes.push(
                    "the provider takes no `system` message: each is folded into the user message beside it"
                        .to_owned(),
                );
            }
            let r = repair(&t, &o)?;
            if r.report.is_empty() {
                return Ok(Applied::Skip(format!(
                    "prevent's repair found nothing to change (rules {} diagnosed at {location})",
                    turnkeeper_prevent::RuleId::join(rules)
                )));
            }
            let addressing = addressing(&r.report.changes, rules, location.message);
            if addressing.is_empty() {
                report.notes.push(format!(
                    "no change addresses rules {} or {location}; the provider may report the same error again",
                    turnkeeper_prevent::RuleId::join(rules)
                ));
            }
            report.addressing = addressing;
            let body = r.body.into_owned();
            Ok(done_with(body, r.report, Vec::new(), report))
        }
        Action::RestoreFromStore => {
            let Some(_) = opts.store else {
                return Ok(Applied::Skip("no turn store was given".to_owned()));
            };
            let t = read(request, FormatHint::Auto)?;
            let mut o = opts.clone();
            o.policy.on_missing_thinking = vec![MissingThinking::Restore];
            let r = repair(&t, &o)?;
            let restored: Vec<usize> = r
                .report
                .changes
                .iter()
                .enumerate()
                .filter(|(_, c)| c.action == "restored_message")
                .map(|(n, _)| n)
                .collect();
            if restored.is_empty() {
                return Ok(Applied::Skip(
                    "the turn store holds no different original of any assistant turn of this request"
                        .to_owned(),
                ));
            }
            report.addressing = restored;
            let body = r.body.into_owned();
            Ok(done_with(body, r.report, Vec::new(), report))
        }
        Action::DisableThinking => {
            let t = read(request, FormatHint::Auto)?;
            if t.format != Format::Anthropic {
                return Ok(Applied::Skip(format!(
                    "disabling thinking is implemented for Anthropic bodies, not {}",
                    t.format.name()
                )));
            }
            let ctx = context(&t, opts);
            if !ctx.profile.disabled_ok {
                return Ok(Applied::Skip(format!(
                    "{} cannot run with thinking disabled",
                    model_name(&ctx.profile.model)
                )));
            }
            if t.thinking_type().as_deref() == Some("disabled") {
                return Ok(Applied::Skip("thinking is already disabled".to_owned()));
            }
            set_thinking(
                &t,
                "{\"type\":\"disabled\"}",
                "disabled thinking for this request",
                d,
                opts,
                Vec::new(),
                report,
            )
        }
        Action::UseAdaptive => {
            let t = read(request, FormatHint::Auto)?;
            if t.format != Format::Anthropic {
                return Ok(Applied::Skip(format!(
                    "adaptive thinking is an Anthropic setting, not for {}",
                    t.format.name()
                )));
            }
            let ctx = context(&t, opts);
            if !ctx.profile.adaptive_ok {
                return Ok(Applied::Skip(format!(
                    "{} does not accept adaptive thinking",
                    model_name(&ctx.profile.model)
                )));
            }
            if t.thinking_type().as_deref() == Some("adaptive") {
                return Ok(Applied::Skip("thinking is already adaptive".to_owned()));
            }
            let value = t
                .meta
                .thinking
                .span
                .map(|s| s.get(t.src))
                .and_then(|raw| object::set_key(raw, "type", "\"adaptive\""))
                .and_then(|raw| object::remove_key(&raw, "budget_tokens"))
                .unwrap_or_else(|| "{\"type\":\"adaptive\"}".to_owned());
            set_thinking(
                &t,
                &value,
                "switched thinking to adaptive (AN-17)",
                d,
                opts,
                Vec::new(),
                report,
            )
        }
        Action::RequestDropBlock => {
            let t = read(request, FormatHint::Auto)?;
            if t.format != Format::Anthropic {
                return Ok(Applied::Skip(format!(
                    "block binding is an Anthropic setting, not for {}",
                    t.format.name()
                )));
            }
            if t.meta.thinking.drop_block {
                return Ok(Applied::Skip(
                    "the request already asks for prefix_mismatch_behavior: drop_block".to_owned(),
                ));
            }
            let ctx = context(&t, opts);
            if ctx.mode == Mode::Off {
                return Ok(Applied::Skip(
                    "thinking is off, so there is no block binding to relax".to_owned(),
                ));
            }
            let Some(value) = drop_block_param(&t, ctx.mode) else {
                return Ok(Applied::Skip(
                    "the `thinking` parameter is not a JSON object".to_owned(),
                ));
            };
            set_thinking(
                &t,
                &value,
                "asked the API to drop thinking blocks bound to a different prefix (prefix_mismatch_behavior: drop_block, AN-25)",
                d,
                opts,
                vec![DROP_BLOCK_BETA.to_owned()],
                report,
            )
        }
        Action::StripThinking { from } => strip(request, d, from.unwrap_or(0), opts, report),
    }
}

/// Notes a diagnosed location that lies outside the request.
fn note_location(t: &Transcript<'_>, location: &Location, report: &mut RecoverReport) {
    if let Some(m) = location.message
        && m as usize >= t.messages.len()
    {
        report.notes.push(format!(
            "the error points at messages[{m}], but this request has {} messages: was the error reported for this body?",
            t.messages.len()
        ));
    }
}

/// The id form a tool-id format error asks for: Mistral's "a-z, A-Z, 0-9, with a length of 9"
/// (MS-01), OpenAI's "maximum length 40" (OC-06, any stated cap), else Anthropic's pattern
/// (AN-12).
pub(crate) fn tool_id_form(d: &Diagnosis) -> ToolIdForm {
    let msg = Normalized::new(&d.message).lower;
    if msg.contains("lengthof9") || msg.contains("mustbea-z,a-z,0-9") {
        return ToolIdForm::Alnum9;
    }
    if let Some(p) = msg.find("maximumlength") {
        let digits: String = msg[p + "maximumlength".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse::<usize>()
            && n > 0
        {
            return ToolIdForm::MaxLen(n);
        }
    }
    ToolIdForm::Anthropic
}

fn model_name(model: &str) -> String {
    if model.is_empty() {
        "this model".to_owned()
    } else {
        format!("'{model}'")
    }
}

/// [`Action::Repair`] on a wire-family body: prevent's rules for its `format`, and what they
/// change (or that they change nothing, which skips the rung) is the answer.
fn repair_wire_body(
    request: &str,
    format: Format,
    rules: &[RuleId],
    location: Location,
    opts: &Options<'_>,
    report: &mut RecoverReport,
) -> Result<Applied, RecoverError> {
    let r = turnkeeper_prevent::wire::repair_wire(request, format, opts)?;
    if r.report.is_empty() {
        return Ok(Applied::Skip(format!(
            "the {} rules found nothing to change (rules {} diagnosed at {location})",
            format.name(),
            RuleId::join(rules)
        )));
    }
    report.addressing = addressing(&r.report.changes, rules, location.message);
    let body = r.body.into_owned();
    Ok(done_with(body, r.report, Vec::new(), report))
}

/// The indices of the `changes` that address the diagnosis: made by one of `rules`, or at
/// message `m`.
fn addressing(changes: &[Change], rules: &[RuleId], m: Option<u32>) -> Vec<usize> {
    changes
        .iter()
        .enumerate()
        .filter(|(_, c)| rules.contains(&c.rule) || at_message(&c.path, m))
        .map(|(n, _)| n)
        .collect()
}

/// True when `path` (`messages[3].content[1]`, `messages[3]`) is at message `m`.
fn at_message(path: &str, m: Option<u32>) -> bool {
    let Some(m) = m else { return false };
    let prefix = format!("messages[{m}]");
    path.strip_prefix(&prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with(' '))
}

/// The `thinking` value with `block_binding.prefix_mismatch_behavior: "drop_block"` added,
/// keeping every other byte of it. `None` when the present value is not an object.
fn drop_block_param(t: &Transcript<'_>, mode: Mode) -> Option<String> {
    const DROP: &str = "\"drop_block\"";
    let Some(span) = t.meta.thinking.span else {
        return Some(format!(
            "{{\"type\":\"{}\",\"block_binding\":{{\"prefix_mismatch_behavior\":{DROP}}}}}",
            mode.wire()
        ));
    };
    let raw = span.get(t.src);
    let binding = match object::get(raw, "block_binding") {
        Some(b) => object::set_key(b, "prefix_mismatch_behavior", DROP)?,
        None => format!("{{\"prefix_mismatch_behavior\":{DROP}}}"),
    };
    object::set_key(raw, "block_binding", &binding)
}

/// Sets the `thinking` parameter (nothing else), then runs the follow-up repair pass.
fn set_thinking(
    t: &Transcript<'_>,
    value: &str,
    reason: &str,
    d: &Diagnosis,
    opts: &Options<'_>,
    betas: Vec<String>,
    report: &mut RecoverReport,
) -> Result<Applied, RecoverError> {
    let (draft, sink) = {
        let mut f = Fixer::new(Draft::new(t), true);
        f.set_param(
            RECOVER_RULE,
            "thinking",
            value,
            &format!("{reason} (recovering from {} at {})", d.kind, d.location),
        );
        for b in &betas {
            f.add_beta(RECOVER_RULE, b);
        }
        f.finish()
    };
    let body = draft.output().into_owned();
    follow_up(
        t.format,
        body,
        sink.changes,
        sink.request,
        betas,
        true,
        opts,
        report,
    )
}

/// Removes every thinking and redacted-thinking block of message `from` on, whole, reported.
fn strip(
    request: &str,
    d: &Diagnosis,
    from: u32,
    opts: &Options<'_>,
    report: &mut RecoverReport,
) -> Result<Applied, RecoverError> {
    let t = read(request, FormatHint::Auto)?;
    if t.format != Format::Anthropic {
        return Ok(Applied::Skip(format!(
            "stripping thinking is implemented for Anthropic bodies, not {}",
            t.format.name()
        )));
    }
    let from = from as usize;
    if from >= t.messages.len() {
        return Ok(Applied::Skip(format!(
            "messages[{from}] is outside this request ({} messages)",
            t.messages.len()
        )));
    }
    let ledger = Ledger::take(&t);
    let reason = format!(
        "removed a whole thinking block (never edited) to recover from {} at {}",
        d.kind, d.location
    );
    let (draft, sink) = {
        let mut f = Fixer::new(Draft::new(&t), true);
        for i in from..f.len() {
            remove_thinking(&mut f, RECOVER_RULE, i, &reason);
        }
        f.finish()
    };
    if sink.changes.is_empty() {
        return Ok(Applied::Skip(format!(
            "no thinking block from messages[{from}] on"
        )));
    }
    let body = draft.output().into_owned();
    let out = read(&body, FormatHint::Exactly(t.format))
        .map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    ledger.verify(&out, sink.removed_guarded)?;
    follow_up(
        t.format,
        body,
        sink.changes,
        Vec::new(),
        Vec::new(),
        false,
        opts,
        report,
    )
}

/// The wire family (Chat, Responses, Converse) `request` reads as, if it is one.
fn wire_format(request: &str) -> Option<Format> {
    turnkeeper_model::sniff_detail(request)
        .ok()
        .map(|s| s.format)
        .filter(|f| matches!(f, Format::Chat | Format::Responses | Format::Converse))
}

/// `restore_reasoning` and `empty_reasoning` on a Chat body (DS-03, KM-01): prevent's wire
/// repair, with the turn store and no stand-in for the first (it applies only when something
/// was restored), without the store and with the provider's empty value for the second (only
/// when a stand-in was added). Every other change the repair makes is reported with them.
fn apply_wire_reasoning(
    request: &str,
    action: &Action,
    opts: &Options<'_>,
    report: &mut RecoverReport,
) -> Result<Applied, RecoverError> {
    let Some(format) = wire_format(request) else {
        return Ok(Applied::Skip("not a wire-family body".to_owned()));
    };
    let mut o = opts.clone();
    let wanted = match action {
        Action::RestoreReasoning { .. } => {
            if o.store.is_none() {
                return Ok(Applied::Skip("no turn store was given".to_owned()));
            }
            o.policy.empty_stand_ins = false;
            turnkeeper_prevent::ChangeAction::RestoredField
        }
        _ => {
            o.store = None;
            o.policy.empty_stand_ins = true;
            turnkeeper_prevent::ChangeAction::LossyStandIn
        }
    };
    let r = turnkeeper_prevent::wire::repair_wire(request, format, &o)?;
    let addressing: Vec<usize> = r
        .report
        .changes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.action == wanted)
        .map(|(n, _)| report.changes.len() + n)
        .collect();
    if addressing.is_empty() {
        return Ok(Applied::Skip(match wanted {
            turnkeeper_prevent::ChangeAction::RestoredField => {
                "the turn store holds no reasoning this request lost".to_owned()
            }
            _ => "no message of this request takes the provider's empty reasoning value".to_owned(),
        }));
    }
    report.addressing = addressing;
    let body = r.body.into_owned();
    Ok(done_with(body, r.report, Vec::new(), report))
}

/// `drop_items`, `strip_item_ids` (Responses) and `drop_unsigned_reasoning` (Converse, Chat)
/// on a wire-family body: the action's own edit ([`crate::wire_edit`], checked by its guard),
/// then prevent's wire repair once over the result, without the turn store and without empty
/// stand-ins (a stand-in would write back what the action took out), so that what the edit
/// implies is done and reported too. An action that does not fit the body's family, or finds
/// nothing to change, is skipped.
fn apply_wire_edit(
    request: &str,
    d: &Diagnosis,
    action: &Action,
    opts: &Options<'_>,
    report: &mut RecoverReport,
) -> Result<Applied, RecoverError> {
    let Some(format) = wire_format(request) else {
        return Ok(Applied::Skip("not a wire-family body".to_owned()));
    };
    let edited = match (action, format) {
        (Action::DropItems { ids }, Format::Responses) => wire_edit::drop_items(request, d, ids),
        (Action::StripItemIds { ids }, Format::Responses) => {
            wire_edit::strip_item_ids(request, d, ids)
        }
        (Action::DropUnsignedReasoning, Format::Converse) => {
            wire_edit::drop_unsigned_converse(request)
        }
        (Action::DropUnsignedReasoning, Format::Chat) => {
            wire_edit::drop_reasoning_content_chat(request)
        }
        (a, f) => {
            return Ok(Applied::Skip(format!(
                "{} does not apply to an {} body",
                a.name(),
                f.name()
            )));
        }
    };
    let edited = match edited {
        Ok(Ok(e)) => e,
        Ok(Err(reason)) => return Ok(Applied::Skip(reason)),
        Err(wire_edit::EditError::Model(e)) => return Err(RecoverError::Request(e)),
        Err(wire_edit::EditError::Guard(g)) => return Err(RecoverError::Guard(g)),
    };
    report.addressing =
        (report.changes.len()..report.changes.len() + edited.changes.len()).collect();
    report.changes.extend(edited.changes);
    report.notes.extend(edited.notes);
    let mut o = opts.clone();
    o.store = None;
    o.policy.empty_stand_ins = false;
    let r = turnkeeper_prevent::wire::repair_wire(&edited.body, format, &o)?;
    let mut prevent = r.report;
    let body = r.body.into_owned();
    if matches!(action, Action::DropUnsignedReasoning) && format == Format::Chat {
        // DS-03 asks current DeepSeek models for the field DS-01's legacy R1 refuses; the
        // provider's error says which one this target is.
        let before = prevent.findings_left.len();
        prevent.findings_left.retain(|f| f.rule != RuleId::Ds03);
        if prevent.findings_left.len() != before {
            report.notes.push(
                "DS-03 findings (reasoning_content missing) are not reported: the provider's \
                 error says this target is the legacy deepseek-reasoner, which refuses the field \
                 (DS-01)"
                    .to_owned(),
            );
        }
    }
    Ok(done_with(body, prevent, Vec::new(), report))
}

/// The repair pass after an action's own edit: records the action's changes as addressing the
/// diagnosis, then repairs what the edit implies.
#[allow(clippy::too_many_arguments)]
fn follow_up(
    format: Format,
    body: String,
    own: Vec<Change>,
    request: Vec<RequestChange>,
    betas: Vec<String>,
    thinking_set: bool,
    opts: &Options<'_>,
    report: &mut RecoverReport,
) -> Result<Applied, RecoverError> {
    report.addressing = (report.changes.len()..report.changes.len() + own.len()).collect();
    report.changes.extend(own);
    report.request_changes.extend(request);
    let mut o = opts.clone();
    // No restoring in this pass: the action replaces restoring (a rung above it, or a fix that
    // does not need it), and a restore would undo a strip.
    o.store = None;
    o.policy
        .on_missing_thinking
        .retain(|m| *m != MissingThinking::Restore);
    if thinking_set {
        // The body now says what thinking is; an override would contradict the edit.
        o.thinking = None;
    }
    for b in &betas {
        if !o.betas.contains(b) {
            o.betas.push(b.clone());
        }
    }
    let t = read(&body, FormatHint::Exactly(format))?;
    let r = repair(&t, &o)?;
    let fixed = r.body.into_owned();
    Ok(done_with(fixed, r.report, betas, report))
}

/// Folds a prevent report into `report` and builds the result.
fn done_with(
    body: String,
    prevent: turnkeeper_prevent::Report,
    betas: Vec<String>,
    report: &mut RecoverReport,
) -> Applied {
    report.changes.extend(prevent.changes);
    report.request_changes.extend(prevent.request_changes);
    report.findings_left = prevent.findings_left;
    let mut headers: Vec<(String, String)> = Vec::new();
    let wanted = betas.into_iter().chain(
        report
            .request_changes
            .iter()
            .filter_map(|r| match r {
                RequestChange::AddBeta { value, .. } => Some(value.clone()),
                _ => None,
            })
            .collect::<Vec<_>>(),
    );
    for value in wanted {
        if !headers.iter().any(|(_, v)| *v == value) {
            headers.push((BETA_HEADER.to_owned(), value));
        }
    }
    Applied::Done {
        body,
        headers,
        outcome: Outcome::Send,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id form a tool-id format error asks for.
    fn check(error: &str, expect: ToolIdForm) {
        let d = crate::classify(Some(400), error);
        assert_eq!(tool_id_form(&d), expect, "{error}");
    }

    #[test]
    fn the_id_form_is_the_one_the_error_names() {
        check(
            "Tool call id was call_49c89af0 but must be a-z, A-Z, 0-9, with a length of 9.",
            ToolIdForm::Alnum9,
        );
        check(
            "Tool call id must be a-z, A-Z, 0-9 only.",
            ToolIdForm::Alnum9,
        );
        check("the id has a length of 9 at most", ToolIdForm::Alnum9);
        check(
            "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 64 instead.",
            ToolIdForm::MaxLen(40),
        );
        check(
            "Invalid 'id': string too long. Expected a string with maximum length 0.",
            ToolIdForm::Anthropic,
        );
        check(
            "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
            ToolIdForm::Anthropic,
        );
    }

    #[test]
    fn at_message_matches_whole_indices_only() {
        assert!(at_message("messages[3].content[1]", Some(3)));
        assert!(at_message("messages[3]", Some(3)));
        assert!(!at_message("messages[31].content[0]", Some(3)));
        assert!(!at_message("messages[3]", None));
    }

    #[test]
    fn drop_block_keeps_the_thinking_bytes() {
        let body = r#"{"model":"claude-sonnet-4-6","thinking": {"type": "adaptive", "display":"summarized"},"messages":[{"role":"user","content":"hi"}]}"#;
        let t = read(body, FormatHint::Auto).expect("reads");
        assert_eq!(
            drop_block_param(&t, Mode::Adaptive).as_deref(),
            Some(
                r#"{"type": "adaptive", "display":"summarized","block_binding":{"prefix_mismatch_behavior":"drop_block"}}"#
            )
        );
        let body = r#"{"thinking":{"type":"adaptive","block_binding":{"x":1,"prefix_mismatch_behavior":"fail"}},"messages":[]}"#;
        let t = read(body, FormatHint::Auto).expect("reads");
        assert_eq!(
            drop_block_param(&t, Mode::Adaptive).as_deref(),
            Some(
                r#"{"type":"adaptive","block_binding":{"x":1,"prefix_mismatch_behavior":"drop_block"}}"#
            )
        );
    }
}
