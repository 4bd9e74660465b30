//! The Bedrock Converse pipeline: its target, the context its rules share, their order, and
//! [`check_converse`] / [`repair_converse`].
//!
//! A Converse body names no model (the model is in the URL), so the target comes from
//! [`Options::model`], else from a `modelId` a gateway put in the body; without one, the rules
//! that depend on the model (BR-01 for Claude, BR-05 for DeepSeek R1, BR-06, BR-10, BR-15) stay
//! quiet, and the rules every model enforces (tool pairing, blank text, empty messages,
//! `toolConfig`) run as always.
//!
//! Order: whole reasoning blocks the target rejects go first (BR-05, BR-04); then blank text
//! (BR-13); then tool pairing (BR-11 unanswered `toolUse`, BR-12 `toolResult` answering nothing);
//! then messages left with nothing (BR-14); then reasoning order (BR-01, which sees only the
//! blocks that remain) and the reports without a repair (BR-06, BR-08, BR-10, BR-15).
//!
//! No rule writes reasoning. A `reasoningContent` block leaves byte for byte (possibly moved to
//! the front of its own message, BR-01) or goes whole, reported; the one exception is BR-04's
//! `text: ""` on a signed block, off unless [`Policy::bedrock_empty_reasoning_text`] is set and
//! reported as lossy. [`repair_converse`] checks that at the end, as the guard does for
//! Anthropic bodies, and fails closed.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use turnkeeper_guard::{GuardViolation, fingerprint};
use turnkeeper_model::ModelError;
use turnkeeper_model::wire::converse::{
    BlockKind, ConverseBlock, ConverseBody, ConverseMessage, ConverseRole, read,
};
use turnkeeper_model::wire::{Edit, Piece, Plan, render, splice_into, write_array};

use crate::finding::{Change, Finding, Report, Severity};
use crate::id::{ChangeAction, RuleId};
use crate::rules::{
    br01_reasoning_first, br04_null_reasoning_text, br05_deepseek_unsigned, br06_reasoning_only,
    br08_tool_config, br10_forced_tool_choice, br11_tool_answers, br12_orphan_results,
    br13_blank_text, br14_empty_message, br15_s3_documents,
};
use crate::{Mode, Options, Policy, PreventError, Repaired};

/// The model family a Converse request goes to, as its model id tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Family {
    /// Anthropic Claude (`anthropic.claude-*`, with or without a region prefix).
    Claude,
    /// DeepSeek R1 (`deepseek.r1*`).
    DeepSeekR1,
    /// Amazon Nova (`amazon.nova-*`).
    Nova,
    /// Another model.
    Other,
    /// No model given.
    Unknown,
}

/// Where a Converse request goes: the model and the thinking mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConverseTarget {
    /// The model id as given.
    pub model: Option<String>,
    /// Its family.
    pub family: Family,
    /// The thinking mode: the options', else `additionalModelRequestFields.thinking.type`.
    pub mode: Option<Mode>,
}

impl ConverseTarget {
    /// The model id without region prefix or ARN, lower-cased (`""` without a model).
    pub fn bare_model(&self) -> String {
        self.model.as_deref().map(bare_model).unwrap_or_default()
    }
}

/// A Bedrock model id without its ARN (`arn:...:foundation-model/`) and its cross-region
/// prefix (`us.`, `eu.`, `apac.`, `global.`, ...), lower-cased.
pub fn bare_model(model: &str) -> String {
    let lower = model.to_ascii_lowercase();
    let last = lower.rsplit('/').next().unwrap_or("");
    const REGIONS: &[&str] = &["us", "eu", "apac", "global", "jp", "au", "ca", "us-gov"];
    match last.split_once('.') {
        Some((p, rest)) if REGIONS.contains(&p) => rest.to_owned(),
        _ => last.to_owned(),
    }
}

/// The family of a Bedrock model id.
pub fn family_of(model: &str) -> Family {
    let bare = bare_model(model);
    if bare.starts_with("anthropic.claude") || bare.starts_with("claude") {
        Family::Claude
    } else if bare.starts_with("deepseek.r1") {
        Family::DeepSeekR1
    } else if bare.starts_with("amazon.nova") {
        Family::Nova
    } else {
        Family::Other
    }
}

/// The target of `body` under `opts`.
pub fn target_of(body: &ConverseBody<'_>, opts: &Options<'_>) -> ConverseTarget {
    let model = opts
        .model
        .clone()
        .or_else(|| body.model().map(Cow::into_owned));
    let family = model.as_deref().map_or(Family::Unknown, family_of);
    let mode = opts.thinking.or_else(|| {
        body.thinking_type()
            .and_then(|t| Mode::parse(&t.to_ascii_lowercase()))
    });
    ConverseTarget {
        model,
        family,
        mode,
    }
}

/// What the Converse rules share: the body, its target, the policy, and what has been found and
/// planned in this pass.
#[derive(Debug)]
pub struct ConverseCx<'b, 'a> {
    /// The body.
    pub body: &'b ConverseBody<'a>,
    /// Where it goes.
    pub target: &'b ConverseTarget,
    /// The repair policy.
    pub policy: &'b Policy,
    /// True when repairs are planned, not only findings made.
    pub repair: bool,
    /// The findings, in rule order.
    pub findings: Vec<Finding>,
    /// The changes planned.
    pub changes: Vec<Change>,
    removed: Vec<bool>,
    gone: Vec<Vec<bool>>,
    order: Vec<Option<Vec<usize>>>,
    block_edits: Vec<BTreeMap<usize, Vec<Edit>>>,
    appended: Vec<Vec<usize>>,
}

impl<'b, 'a> ConverseCx<'b, 'a> {
    /// A context for one pass.
    pub fn new(
        body: &'b ConverseBody<'a>,
        target: &'b ConverseTarget,
        policy: &'b Policy,
        repair: bool,
    ) -> Self {
        let n = body.messages.len();
        ConverseCx {
            body,
            target,
            policy,
            repair,
            findings: Vec::new(),
            changes: Vec::new(),
            removed: vec![false; n],
            gone: body
                .messages
                .iter()
                .map(|m| vec![false; m.blocks.len()])
                .collect(),
            order: vec![None; n],
            block_edits: vec![BTreeMap::new(); n],
            appended: vec![Vec::new(); n],
        }
    }

    /// The input.
    pub fn src(&self) -> &'a str {
        self.body.src
    }

    /// The messages.
    pub fn messages(&self) -> &'b [ConverseMessage] {
        &self.body.messages
    }

    /// True when message `i` is still there after this pass's plan.
    pub fn alive(&self, i: usize) -> bool {
        !self.removed.get(i).copied().unwrap_or(true)
    }

    /// True when block `k` of message `i` is still there after this pass's plan.
    pub fn block_alive(&self, i: usize, k: usize) -> bool {
        self.alive(i)
            && !self
                .gone
                .get(i)
                .and_then(|g| g.get(k))
                .copied()
                .unwrap_or(true)
    }

    /// The indices of the blocks of message `i` that remain, in their planned order.
    pub fn alive_blocks(&self, i: usize) -> Vec<usize> {
        let n = self.messages().get(i).map_or(0, |m| m.blocks.len());
        let order: Vec<usize> = match self.order.get(i).and_then(Option::as_ref) {
            Some(o) => o.clone(),
            None => (0..n).collect(),
        };
        order
            .into_iter()
            .filter(|&k| self.block_alive(i, k))
            .collect()
    }

    /// Block `k` of message `i`.
    pub fn block(&self, i: usize, k: usize) -> Option<&'b ConverseBlock> {
        self.body.messages.get(i).and_then(|m| m.blocks.get(k))
    }

    /// The message before `i` that remains, if any.
    pub fn prev_alive(&self, i: usize) -> Option<usize> {
        (0..i).rev().find(|&j| self.alive(j))
    }

    /// The message after `i` that remains, if any.
    pub fn next_alive(&self, i: usize) -> Option<usize> {
        (i + 1..self.messages().len()).find(|&j| self.alive(j))
    }

    /// True when the target is a model of `family`.
    pub fn is(&self, family: Family) -> bool {
        self.target.family == family
    }

    /// Reports a finding about message `i` (block `k` when given).
    pub fn find(
        &mut self,
        rule: RuleId,
        severity: Severity,
        i: Option<usize>,
        k: Option<usize>,
        message: String,
        repair: Option<&str>,
    ) {
        self.findings.push(Finding {
            rule,
            severity,
            path: path(i, k),
            message_index: i,
            block_index: k,
            message,
            repair: repair.map(str::to_owned),
        });
    }

    /// Reports a finding about a top-level field (`toolConfig`).
    pub fn find_top(&mut self, rule: RuleId, severity: Severity, at: &str, message: String) {
        self.findings.push(Finding {
            rule,
            severity,
            path: at.to_owned(),
            message_index: None,
            block_index: None,
            message,
            repair: None,
        });
    }

    /// Plans the removal of block `k` of message `i`, reported under `rule`.
    pub fn remove_block(&mut self, rule: RuleId, i: usize, k: usize, reason: String) {
        if !self.repair || !self.block_alive(i, k) {
            return;
        }
        if let Some(g) = self.gone.get_mut(i).and_then(|g| g.get_mut(k)) {
            *g = true;
        }
        self.changes.push(Change {
            rule,
            action: ChangeAction::RemovedBlock,
            path: path(Some(i), Some(k)),
            reason,
            fingerprint: self
                .block(i, k)
                .filter(|b| b.is_reasoning())
                .map(|b| fingerprint(b.span.get(self.body.src))),
        });
    }

    /// Plans moving blocks `first` of message `i` to its front, in that order, the other blocks
    /// following in theirs; reported under `rule`, one change per moved block.
    pub fn move_to_front(&mut self, rule: RuleId, i: usize, first: &[usize], reason: &str) {
        if !self.repair || !self.alive(i) {
            return;
        }
        let current = self.alive_blocks(i);
        let mut new: Vec<usize> = first.to_vec();
        new.extend(current.iter().filter(|k| !first.contains(k)));
        for (to, &k) in new.iter().enumerate() {
            if current.get(to) != Some(&k) && first.contains(&k) {
                self.changes.push(Change {
                    rule,
                    action: ChangeAction::MovedBlock,
                    path: path(Some(i), Some(k)),
                    reason: format!("{reason} (now content[{to}])"),
                    fingerprint: None,
                });
            }
        }
        if let Some(o) = self.order.get_mut(i) {
            *o = Some(new);
        }
    }

    /// Plans an edit inside block `k` of message `i` (the caller reports it).
    pub fn edit_block(&mut self, i: usize, k: usize, e: Edit) {
        if !self.repair {
            return;
        }
        if let Some(m) = self.block_edits.get_mut(i) {
            m.entry(k).or_default().push(e);
        }
    }

    /// Records a change the caller planned with [`ConverseCx::edit_block`].
    pub fn record(&mut self, rule: RuleId, action: ChangeAction, i: usize, k: usize, why: String) {
        if self.repair {
            self.changes.push(Change {
                rule,
                action,
                path: path(Some(i), Some(k)),
                reason: why,
                fingerprint: None,
            });
        }
    }

    /// Plans the removal of message `i`, reported under `rule`.
    pub fn remove_message(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.repair || !self.alive(i) {
            return;
        }
        if let Some(r) = self.removed.get_mut(i) {
            *r = true;
        }
        self.changes.push(Change {
            rule,
            action: ChangeAction::RemovedMessage,
            path: path(Some(i), None),
            reason,
            fingerprint: None,
        });
    }

    /// Plans appending the remaining blocks of message `j` to message `i` and removing `j`,
    /// reported under `rule`.
    pub fn merge_into(&mut self, rule: RuleId, i: usize, j: usize, reason: String) {
        if !self.repair || !self.alive(i) || !self.alive(j) {
            return;
        }
        if let Some(r) = self.removed.get_mut(j) {
            *r = true;
        }
        if let Some(a) = self.appended.get_mut(i) {
            a.push(j);
        }
        self.changes.push(Change {
            rule,
            action: ChangeAction::MergedMessage,
            path: path(Some(i), None),
            reason,
            fingerprint: None,
        });
    }

    /// The plan of this pass.
    fn plan(&mut self) -> Plan {
        let src = self.body.src;
        let n = self.body.messages.len();
        let mut plan = Plan::default();
        if self.removed.iter().any(|r| *r) {
            let order = plan.order(n);
            order.retain(|p| match p {
                Piece::Orig(i) => !self.removed[*i],
                Piece::New(_) => true,
            });
        }
        for i in 0..n {
            if self.removed[i] {
                continue;
            }
            let Some(m) = self.body.messages.get(i) else {
                continue;
            };
            let Some(arr) = m.content_array() else {
                continue;
            };
            let rewritten = self.order[i].is_some()
                || self.gone[i].iter().any(|g| *g)
                || !self.appended[i].is_empty();
            let mut edits = std::mem::take(&mut self.block_edits[i]);
            if !rewritten {
                for (_, mut e) in edits {
                    for x in e.drain(..) {
                        plan.edit(i, x);
                    }
                }
                continue;
            }
            let mut pieces: Vec<Piece> =
                self.alive_blocks(i).into_iter().map(Piece::Orig).collect();
            for j in self.appended[i].clone() {
                let mut other = std::mem::take(&mut self.block_edits[j]);
                for k in (0..self.body.messages[j].blocks.len()).filter(|&k| !self.gone[j][k]) {
                    let mut text = String::new();
                    let mut e = other.remove(&k).unwrap_or_default();
                    if let Some(b) = self.block(j, k) {
                        splice_into(src, b.span, &mut e, &mut text);
                    }
                    pieces.push(Piece::New(text));
                }
            }
            let text = write_array(src, arr, &pieces, &mut edits);
            plan.edit(
                i,
                Edit {
                    span: arr.span,
                    text,
                },
            );
        }
        plan
    }
}

/// `messages[i].content[k]`, `messages[i]`, or the empty path.
fn path(i: Option<usize>, k: Option<usize>) -> String {
    match (i, k) {
        (Some(i), Some(k)) => format!("messages[{i}].content[{k}]"),
        (Some(i), None) => format!("messages[{i}]"),
        _ => String::new(),
    }
}

/// Bedrock's own way of naming a place in its errors (`messages.3.content.1`).
pub fn dotted(i: usize, k: Option<usize>) -> String {
    match k {
        Some(k) => format!("messages.{i}.content.{k}"),
        None => format!("messages.{i}"),
    }
}

/// True for a user message, as the rules read roles.
pub fn is_user(m: &ConverseMessage) -> bool {
    m.role == ConverseRole::User
}

/// True for an assistant message.
pub fn is_assistant(m: &ConverseMessage) -> bool {
    m.role == ConverseRole::Assistant
}

/// The decoded `toolUseId` of a block (`""` without one).
pub fn tool_id<'s>(src: &'s str, b: &ConverseBlock) -> Cow<'s, str> {
    b.tool_use_id.map_or(Cow::Borrowed(""), |t| t.decode(src))
}

/// Runs every Converse rule over `body` for `target`: findings, changes and the plan.
pub fn run(
    body: &ConverseBody<'_>,
    target: &ConverseTarget,
    policy: &Policy,
    repair: bool,
) -> (Vec<Finding>, Vec<Change>, Plan) {
    let mut cx = ConverseCx::new(body, target, policy, repair);
    br05_deepseek_unsigned::run(&mut cx);
    br04_null_reasoning_text::run(&mut cx);
    br13_blank_text::run(&mut cx);
    br11_tool_answers::run(&mut cx);
    br12_orphan_results::run(&mut cx);
    br14_empty_message::run(&mut cx);
    br01_reasoning_first::run(&mut cx);
    br06_reasoning_only::run(&mut cx);
    br08_tool_config::run(&mut cx);
    br10_forced_tool_choice::run(&mut cx);
    br15_s3_documents::run(&mut cx);
    let plan = cx.plan();
    (cx.findings, cx.changes, plan)
}

/// Everything the Converse rules find in `src`.
///
/// # Errors
/// When `src` does not read as a Converse request.
pub fn check_converse(src: &str, opts: &Options<'_>) -> Result<Vec<Finding>, ModelError> {
    let body = read(src)?;
    let target = target_of(&body, opts);
    Ok(run(&body, &target, &opts.policy, false).0)
}

/// Repairs a Converse request: every repair the policy allows, pass after pass until one
/// changes nothing (at most four), then checks the result. The body is the input itself when
/// nothing needed repair.
///
/// # Errors
/// When `src` does not read as a Converse request; [`PreventError::Guard`] when a
/// `reasoningContent` block of the output is not byte-identical to one of the input, or one
/// vanished without a reported removal (a turnkeeper bug: nothing should be sent).
pub fn repair_converse<'a>(src: &'a str, opts: &Options<'_>) -> Result<Repaired<'a>, PreventError> {
    let mut report = Report::default();
    let mut current: Option<String> = None;
    let mut settled = false;
    for _ in 0..4 {
        let text = current.as_deref().unwrap_or(src);
        let body = read(text)?;
        let target = target_of(&body, opts);
        let (findings, changes, plan) = run(&body, &target, &opts.policy, true);
        match render(text, &body.messages_at, plan) {
            Some(new) if new != text => {
                report.changes.extend(changes);
                current = Some(new);
            }
            _ => {
                report.findings_left = findings;
                settled = true;
                break;
            }
        }
    }
    if !settled {
        report.findings_left = check_converse(current.as_deref().unwrap_or(src), opts)?;
    }
    if let Some(out) = current.as_deref() {
        guard(src, out, &report.changes)?;
    }
    Ok(Repaired {
        body: match current {
            Some(b) => Cow::Owned(b),
            None => Cow::Borrowed(src),
        },
        report,
    })
}

/// Every `reasoningContent` block of `body`, by its exact bytes, with its path.
fn reasoning_blocks<'s>(body: &ConverseBody<'s>) -> Vec<(&'s str, String)> {
    let mut v = Vec::new();
    for (i, m) in body.messages.iter().enumerate() {
        for (k, b) in m.blocks.iter().enumerate() {
            if b.kind == BlockKind::Reasoning {
                v.push((b.span.get(body.src), path(Some(i), Some(k))));
            }
        }
    }
    v
}

/// Fails when the output holds a reasoning block that is in no input position (beyond the
/// lossy stand-ins reported), or lost more input blocks than were reported removed.
fn guard(input: &str, output: &str, changes: &[Change]) -> Result<(), GuardViolation> {
    let inb = read(input).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    let outb = read(output).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    let mut pool: HashMap<&str, usize> = HashMap::new();
    for (raw, _) in reasoning_blocks(&inb) {
        *pool.entry(raw).or_default() += 1;
    }
    let stand_ins = changes
        .iter()
        .filter(|c| c.action == ChangeAction::LossyStandIn)
        .count();
    let removed = changes
        .iter()
        .filter(|c| c.action == ChangeAction::RemovedBlock && c.fingerprint.is_some())
        .count();
    let mut foreign = 0;
    for (raw, at) in reasoning_blocks(&outb) {
        match pool.get_mut(raw) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                foreign += 1;
                if foreign > stand_ins {
                    return Err(GuardViolation::Altered {
                        path: at,
                        fingerprint: fingerprint(raw),
                    });
                }
            }
        }
    }
    let missing: usize = pool.values().sum();
    if missing > removed + stand_ins {
        let first = reasoning_blocks(&inb)
            .into_iter()
            .find(|(raw, _)| pool.get(raw).is_some_and(|n| *n > 0));
        let (raw, at) = first.unwrap_or(("", String::new()));
        return Err(GuardViolation::Unreported {
            missing: missing - removed - stand_ins,
            first_path: at,
            fingerprint: fingerprint(raw),
        });
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod testing {
    //! The one helper every Converse rule test goes through.

    use super::*;

    /// What a case expects: the rule ids and paths found by `check`, and the repaired body
    /// (`None`: repair returns the input itself) with the changes made.
    pub struct Expect<'e> {
        /// `(rule, path)` of every finding, in order.
        pub found: &'e [(&'e str, &'e str)],
        /// The repaired body, exactly; `None` when repair leaves the input as it is.
        pub repaired: Option<&'e str>,
        /// `(rule, action, path)` of every change, in order.
        pub changes: &'e [(&'e str, &'e str, &'e str)],
        /// `(rule, path)` of what is still found after the repair.
        pub left: &'e [(&'e str, &'e str)],
    }

    /// Options targeting `model` (none: no model).
    pub fn opts(model: Option<&str>) -> Options<'static> {
        Options {
            model: model.map(str::to_owned),
            ..Options::default()
        }
    }

    /// Checks and repairs `input` under `o`, and compares everything with `expect`; the
    /// repaired body is checked once more and must leave exactly `expect.left`.
    pub fn check_with(input: &str, o: &Options<'_>, expect: Expect<'_>) {
        let found = check_converse(input, o).expect("reads");
        let got: Vec<(String, String)> = found
            .iter()
            .map(|f| (f.rule.as_str().to_owned(), f.path.clone()))
            .collect();
        let want: Vec<(String, String)> = expect
            .found
            .iter()
            .map(|(r, p)| ((*r).to_owned(), (*p).to_owned()))
            .collect();
        assert_eq!(got, want, "findings of {input}: {found:#?}");
        let r = repair_converse(input, o).expect("repairs");
        match expect.repaired {
            None => assert!(
                matches!(r.body, Cow::Borrowed(b) if std::ptr::eq(b, input)),
                "expected the input back, got {}",
                r.body
            ),
            Some(want) => assert_eq!(r.body, want),
        }
        let changes: Vec<(String, String, String)> = r
            .report
            .changes
            .iter()
            .map(|c| {
                (
                    c.rule.as_str().to_owned(),
                    c.action.as_str().to_owned(),
                    c.path.clone(),
                )
            })
            .collect();
        let want: Vec<(String, String, String)> = expect
            .changes
            .iter()
            .map(|(r, a, p)| ((*r).to_owned(), (*a).to_owned(), (*p).to_owned()))
            .collect();
        assert_eq!(changes, want, "changes: {:#?}", r.report.changes);
        let left: Vec<(String, String)> = r
            .report
            .findings_left
            .iter()
            .map(|f| (f.rule.as_str().to_owned(), f.path.clone()))
            .collect();
        let want: Vec<(String, String)> = expect
            .left
            .iter()
            .map(|(r, p)| ((*r).to_owned(), (*p).to_owned()))
            .collect();
        assert_eq!(left, want, "left: {:#?}", r.report.findings_left);
        let again = check_converse(&r.body, o).expect("reads back");
        assert_eq!(again, r.report.findings_left);
    }

    /// [`check_with`] for `model` under the default policy.
    pub fn check(input: &str, model: Option<&str>, expect: Expect<'_>) {
        check_with(input, &opts(model), expect);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bedrock_ids_name_their_family() {
        for (id, f) in [
            (
                "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
                Family::Claude,
            ),
            ("anthropic.claude-sonnet-4-6", Family::Claude),
            (
                "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-7",
                Family::Claude,
            ),
            (
                "global.anthropic.claude-opus-4-5-20251101-v1:0",
                Family::Claude,
            ),
            ("us.deepseek.r1-v1:0", Family::DeepSeekR1),
            ("deepseek.r1-v1:0", Family::DeepSeekR1),
            ("deepseek.v3-v1:0", Family::Other),
            ("us.amazon.nova-2-lite-v1:0", Family::Nova),
            ("meta.llama4-maverick-17b-instruct-v1:0", Family::Other),
        ] {
            assert_eq!(family_of(id), f, "{id}");
        }
        assert_eq!(
            bare_model("us.anthropic.claude-sonnet-4-6"),
            "anthropic.claude-sonnet-4-6"
        );
    }
}
