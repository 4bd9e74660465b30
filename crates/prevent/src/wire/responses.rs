//! The OpenAI Responses pipeline (api-rules-reasoning-2026-11.md §3.2): the context its rules
//! share, their order, and the check that the output's reasoning items are the input's.
//!
//! Every OR- rule was seen as an error of OpenAI's Responses API (Basis V-Obs), so on an OpenAI
//! target each is an error, repaired. xAI's Grok takes the same items and rejects none of them
//! (XA-01: "the API returns 200, and results can get worse"): there each is a warning and nothing
//! is repaired. Other servers that speak the format (DeepSeek, local servers) read reasoning
//! items their own way (DeepSeek replays reasoning `content` and back-to-back reasoning items,
//! accepted in real traffic): only the call/output pairing (OR-05) is checked for them, an error
//! for DeepSeek (which rejects it, real traffic), a warning for a server turnkeeper does not
//! know. A body without a model is judged as bound for OpenAI, the API the format is named for.
//!
//! Order: whole reasoning items go first (OR-13 model without reasoning, OR-12 `content`, OR-04 a foreign `encrypted_content`, OR-03
//! `store: false`, OR-01 orphans); then call/output pairing (OR-05, which may take the reasoning
//! item that produced only an unanswered call); then the server ids of the items whose reasoning
//! went are stripped (OR-02); then OR-11's empty summary and OR-14's duplicate ids. A pass runs
//! over a mask of the input's items (kept, id stripped, summary added) and repeats until nothing
//! changes, so what one removal exposes is found by the rule concerned, and every path stays in
//! the input's terms.
//!
//! A repair never writes or alters reasoning: a reasoning item leaves byte for byte, or goes
//! whole, its fingerprint reported. The one exception the research allows is OR-11's
//! `"summary": []`, the provider's documented empty stand-in, added beside the item's own members
//! (which keep their bytes), reported as lossy and off with `Policy::empty_stand_ins = false`.
//! Ids are stripped, never made up; no call output is synthesised. [`verify`] checks the output
//! against the input before it is handed back (fail closed).

use std::borrow::Cow;

use turnkeeper_guard::{GuardViolation, TurnStore, fingerprint};
use turnkeeper_model::StrSpan;
use turnkeeper_model::wire::responses::{self as rv, Item, ItemKind, ResponsesBody, Role};
use turnkeeper_model::wire::{Edit, Piece, Plan, splice_into};

use crate::Policy;
use crate::finding::{Change, Finding, Severity};
use crate::id::{ChangeAction, RuleId};
use crate::rules::{
    or01_orphan_reasoning, or02_item_ids, or03_store_false, or04_foreign_encrypted,
    or05_call_pairing, or11_reasoning_summary, or12_reasoning_content, or13_no_reasoning_model,
    or14_duplicate_ids, or17_restore_reasoning,
};
use crate::wire::{Provider, Target, WireOut};

/// How the Responses rules treat a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// OpenAI's rules, as errors, repaired.
    OpenAi,
    /// OpenAI's rules, as warnings, nothing repaired (xAI, XA-01).
    Lenient,
    /// Call/output pairing only, as errors, repaired (DeepSeek).
    PairingOnly,
    /// Call/output pairing only, as warnings (a server turnkeeper does not know).
    PairingWarned,
}

impl Judged {
    /// How `target` is judged.
    pub fn of(target: &Target) -> Judged {
        match target.provider {
            Provider::OpenAi => Judged::OpenAi,
            Provider::Unknown if target.model.is_none() => Judged::OpenAi,
            Provider::Xai => Judged::Lenient,
            Provider::DeepSeek => Judged::PairingOnly,
            _ => Judged::PairingWarned,
        }
    }
}

/// True for an OpenAI model known to take no reasoning items (`gpt-4o`, `gpt-4.1`,
/// `gpt-5-chat-latest`, ...): OR-13 fires only for these, never for an unknown model.
pub fn without_reasoning(target: &Target) -> bool {
    if target.provider != Provider::OpenAi {
        return false;
    }
    let m = target.bare_model();
    let m = m.strip_prefix("openai.").unwrap_or(&m);
    ["gpt-4", "gpt-3.5", "chatgpt-4o", "gpt-5-chat"]
        .iter()
        .any(|p| m.starts_with(p))
}

/// The items' state under repair: which are kept, which lost their id, which gained a summary.
#[derive(Clone, Debug)]
pub struct ItemState {
    /// Item `i` is still in the body.
    pub keep: Vec<bool>,
    /// Item `i` was a reasoning item (or a reference to one) removed: the items it produced
    /// lose their server ids (OR-02).
    pub reasoning_gone: Vec<bool>,
    /// Item `i` lost its `id` member.
    pub id_gone: Vec<bool>,
    /// Item `i` gained `"summary": []`.
    pub summary_added: Vec<bool>,
    /// A reasoning item put back right before item `i`, as the provider sent it (OR-17).
    pub insert_before: Vec<Option<String>>,
    /// Item `i` replaced whole by the provider's original (OR-17).
    pub replaced: Vec<Option<String>>,
}

/// What the Responses rules share: the body, its target, the policy, the items' state and what
/// was found and changed.
#[derive(Debug)]
pub struct ResponsesCx<'b, 'a> {
    /// The body.
    pub body: &'b ResponsesBody<'a>,
    /// Where it goes.
    pub target: &'b Target,
    /// How the target is judged.
    pub judged: Judged,
    /// The repair policy.
    pub policy: &'b Policy,
    /// The turn store, for putting back reasoning items the provider sent.
    pub store: Option<&'b TurnStore>,
    /// True when repairs are made, not only findings.
    pub repair: bool,
    /// The items' state.
    pub st: ItemState,
    /// Findings and changes (the plan is written from `st` at the end).
    pub out: WireOut,
    /// True when this pass changed something.
    pub acted: bool,
}

impl<'b, 'a> ResponsesCx<'b, 'a> {
    /// The input.
    pub fn src(&self) -> &'a str {
        self.body.src
    }

    /// The items.
    pub fn items(&self) -> &'b [Item] {
        &self.body.items
    }

    /// Item `i` (every index the rules use comes from `items`).
    pub fn item(&self, i: usize) -> &'b Item {
        &self.body.items[i]
    }

    /// The decoded text of a string.
    pub fn text(&self, s: StrSpan) -> Cow<'a, str> {
        s.decode(self.body.src)
    }

    /// The id item `i` still has.
    pub fn id(&self, i: usize) -> Option<StrSpan> {
        if self.st.id_gone[i] {
            None
        } else {
            self.item(i).id
        }
    }

    /// The decoded `id` of item `i` as it came (`""` without one).
    pub fn id_text(&self, i: usize) -> String {
        self.item(i)
            .id
            .map(|s| self.text(s).into_owned())
            .unwrap_or_default()
    }

    /// The decoded `call_id` of item `i`.
    pub fn call_id(&self, i: usize) -> Option<Cow<'a, str>> {
        self.item(i).call_id.map(|c| self.text(c))
    }

    /// The first kept item after `i`.
    pub fn next_kept(&self, i: usize) -> Option<usize> {
        (i + 1..self.body.items.len()).find(|&j| self.st.keep[j])
    }

    /// The last kept item before `i`.
    pub fn prev_kept(&self, i: usize) -> Option<usize> {
        (0..i).rev().find(|&j| self.st.keep[j])
    }

    /// The kept items of `kind`, in order.
    pub fn kept(&self, kind: ItemKind) -> Vec<usize> {
        (0..self.body.items.len())
            .filter(|&i| self.st.keep[i] && self.item(i).kind == kind)
            .collect()
    }

    /// The severity of a finding of `rule` on this target.
    pub fn severity(&self, rule: RuleId) -> Severity {
        match self.judged {
            Judged::OpenAi => Severity::Error,
            Judged::PairingOnly if rule == RuleId::Or05 => Severity::Error,
            _ => Severity::Warning,
        }
    }

    /// True when a finding of `rule` is repaired on this target, in this run.
    pub fn repairs(&self, rule: RuleId) -> bool {
        self.repair && self.severity(rule) == Severity::Error
    }

    /// Reports a finding of `rule` about item `i`; `repair` is said only where it is made.
    pub fn find(&mut self, rule: RuleId, i: usize, message: String, repair: Option<&str>) {
        let severity = self.severity(rule);
        let repair = repair
            .filter(|_| severity == Severity::Error)
            .map(str::to_owned);
        self.out
            .find(rule, severity, path(i), Some(i), message, repair);
    }

    /// Removes item `i` whole, under `rule`, when the rule repairs on this target. A reasoning
    /// item goes with its fingerprint reported; a removed reasoning item (or reference to one)
    /// is marked so OR-02 strips the ids of what it produced.
    pub fn remove(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.repairs(rule) || !self.st.keep[i] {
            return;
        }
        let it = self.item(i);
        self.st.keep[i] = false;
        self.acted = true;
        let reasoning = it.kind == ItemKind::Reasoning;
        let reference = it.kind == ItemKind::ItemReference
            && it.id.is_some_and(|s| self.text(s).starts_with("rs_"));
        self.st.reasoning_gone[i] = reasoning || reference;
        self.out.changes.push(Change {
            rule,
            action: ChangeAction::RemovedBlock,
            path: path(i),
            reason,
            fingerprint: reasoning.then(|| fingerprint(it.span.get(self.body.src))),
        });
    }

    /// Strips the `id` member of item `i`, under `rule`.
    pub fn strip_id(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.repairs(rule)
            || self.st.id_gone[i]
            || self.item(i).member(self.src(), "id").is_none()
        {
            return;
        }
        self.st.id_gone[i] = true;
        self.acted = true;
        self.out.changes.push(Change {
            rule,
            action: ChangeAction::RemovedField,
            path: format!("{}.id", path(i)),
            reason,
            fingerprint: None,
        });
    }

    /// Adds `"summary": []` to reasoning item `i`, under `rule`, reported as lossy; nothing when
    /// the policy turns stand-ins off.
    pub fn add_empty_summary(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.repairs(rule) || !self.policy.empty_stand_ins || self.st.summary_added[i] {
            return;
        }
        self.st.summary_added[i] = true;
        self.acted = true;
        self.out.changes.push(Change {
            rule,
            action: ChangeAction::LossyStandIn,
            path: format!("{}.summary", path(i)),
            reason,
            fingerprint: None,
        });
    }

    /// The plan of the state reached.
    fn plan(&self) -> Plan {
        let mut plan = Plan::default();
        let n = self.body.input_at.elems.len();
        let reordered = self
            .st
            .insert_before
            .iter()
            .chain(&self.st.replaced)
            .any(Option::is_some);
        if reordered {
            let mut order = Vec::with_capacity(n + 1);
            for i in 0..n {
                if let Some(raw) = &self.st.insert_before[i] {
                    order.push(Piece::New(raw.clone()));
                }
                if !self.st.keep[i] {
                    continue;
                }
                match &self.st.replaced[i] {
                    Some(raw) => order.push(Piece::New(raw.clone())),
                    None => order.push(Piece::Orig(i)),
                }
            }
            plan.items = Some(order);
        }
        for (i, it) in self.body.items.iter().enumerate() {
            if !self.st.keep[i] {
                plan.remove_item(n, i);
                continue;
            }
            if self.st.id_gone[i]
                && let Some(k) = it.member(self.body.src, "id")
                && let Some(e) = Edit::remove_member(&it.members, k)
            {
                plan.edit(i, e);
            }
            if self.st.summary_added[i] {
                plan.edit(i, summary_edit(it));
            }
        }
        plan
    }
}

/// The location of item `i`.
pub fn path(i: usize) -> String {
    ResponsesBody::path(i)
}

fn summary_edit(it: &Item) -> Edit {
    Edit::add_member(it.span, &it.members, "summary", "[]")
}

/// True for an item a reasoning item produces and that may carry a server id the server ties
/// to it: a function or custom tool call, an assistant message.
pub fn produced_with_id(it: &Item) -> bool {
    matches!(it.kind, ItemKind::FunctionCall | ItemKind::CustomToolCall)
        || (it.kind == ItemKind::Message && it.role == Some(Role::Assistant))
}

/// Runs every Responses rule over `body` for `target`: one pass when checking; when repairing,
/// passes over the items' state until one changes nothing, then the plan.
pub fn run(
    body: &ResponsesBody<'_>,
    target: &Target,
    policy: &Policy,
    store: Option<&TurnStore>,
    repair: bool,
) -> WireOut {
    let n = body.items.len();
    let mut cx = ResponsesCx {
        body,
        target,
        judged: Judged::of(target),
        policy,
        store,
        repair,
        st: ItemState {
            keep: vec![true; n],
            reasoning_gone: vec![false; n],
            id_gone: vec![false; n],
            summary_added: vec![false; n],
            insert_before: vec![None; n],
            replaced: vec![None; n],
        },
        out: WireOut::default(),
        acted: false,
    };
    // Putting back what the provider sent comes first, once: the other rules then judge the
    // body as the provider would have it (in the next pass, which reads the result).
    or17_restore_reasoning::run(&mut cx);
    let restored: Vec<Finding> = std::mem::take(&mut cx.out.findings);
    for _ in 0..=n {
        cx.out.findings.clear();
        cx.acted = false;
        let openai_rules = matches!(cx.judged, Judged::OpenAi | Judged::Lenient);
        if openai_rules {
            or13_no_reasoning_model::run(&mut cx);
            or12_reasoning_content::run(&mut cx);
            or04_foreign_encrypted::run(&mut cx);
            or03_store_false::run(&mut cx);
            or01_orphan_reasoning::run(&mut cx);
        }
        or05_call_pairing::run(&mut cx);
        if openai_rules {
            or02_item_ids::run(&mut cx);
            or11_reasoning_summary::run(&mut cx);
            or14_duplicate_ids::run(&mut cx);
        }
        if !cx.acted {
            break;
        }
    }
    let mut findings = restored;
    findings.append(&mut cx.out.findings);
    cx.out.findings = findings;
    cx.out.plan = cx.plan();
    cx.out
}

/// Checks a repaired Responses body against its input: every reasoning item of `out` is one of
/// `src`'s byte for byte (or one that had no `summary` with `"summary":[]` added, OR-11), each
/// used once, and the input's reasoning items missing from `out` are no more than `removed`
/// (the removals reported with a fingerprint).
///
/// # Errors
/// [`GuardViolation::Altered`] for a reasoning item of `out` that is none of the input's,
/// [`GuardViolation::Unreported`] when more went than were reported, and
/// [`GuardViolation::Unreadable`] when `out` does not read.
pub fn verify(
    src: &str,
    out: &str,
    removed: usize,
    restored: &[String],
) -> Result<(), GuardViolation> {
    let input = rv::read(src).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    let output = rv::read(out).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    // Each input reasoning item as it came, and as OR-11 may have left it.
    let mut pool: Vec<(usize, String, Option<String>)> = Vec::new();
    for (i, it) in input.items.iter().enumerate() {
        if it.kind != ItemKind::Reasoning {
            continue;
        }
        let with_summary = (!it.summary.is_present()).then(|| {
            let mut s = String::new();
            splice_into(src, it.span, &mut [summary_edit(it)], &mut s);
            s
        });
        pool.push((i, it.span.get(src).to_owned(), with_summary));
    }
    // The provider's originals put back from the turn store (OR-17): allowed in the output, and
    // not counted missing when they are not there.
    let mut extra: Vec<&str> = restored.iter().map(String::as_str).collect();
    for (j, it) in output.items.iter().enumerate() {
        if it.kind != ItemKind::Reasoning {
            continue;
        }
        let raw = it.span.get(out);
        let hit = pool
            .iter()
            .position(|(_, a, b)| a == raw || b.as_deref() == Some(raw));
        match hit {
            Some(k) => {
                pool.remove(k);
            }
            None if extra.contains(&raw) => {
                extra.retain(|x| *x != raw);
            }
            None => {
                return Err(GuardViolation::Altered {
                    path: path(j),
                    fingerprint: fingerprint(raw),
                });
            }
        }
    }
    if pool.len() > removed
        && let Some((i, raw, _)) = pool.first()
    {
        return Err(GuardViolation::Unreported {
            missing: pool.len() - removed,
            first_path: path(*i),
            fingerprint: fingerprint(raw),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_judged_by_their_provider() {
        for (model, judged, no_reasoning) in [
            (Some("gpt-5"), Judged::OpenAi, false),
            (Some("gpt-4.1-mini"), Judged::OpenAi, true),
            (Some("openai/gpt-4o"), Judged::OpenAi, true),
            (Some("gpt-5-chat-latest"), Judged::OpenAi, true),
            (Some("o4-mini"), Judged::OpenAi, false),
            (None, Judged::OpenAi, false),
            (Some("grok-4"), Judged::Lenient, false),
            (Some("deepseek-v4-flash"), Judged::PairingOnly, false),
            (Some("my-finetune"), Judged::PairingWarned, false),
        ] {
            let t = Target::new(model, None);
            assert_eq!(Judged::of(&t), judged, "{model:?}");
            assert_eq!(without_reasoning(&t), no_reasoning, "{model:?}");
        }
    }

    #[test]
    fn the_guard_refuses_altered_and_unreported_reasoning() {
        let src = r#"{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":"gA"},{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gB"}]}"#;
        let same = verify(src, src, 0, &[]);
        assert!(same.is_ok(), "{same:?}");
        let summary = src.replacen(r#""gA"}"#, r#""gA","summary":[]}"#, 1);
        assert!(verify(src, &summary, 0, &[]).is_ok());
        let altered = src.replacen("gB", "gC", 1);
        assert!(matches!(
            verify(src, &altered, 0, &[]),
            Err(GuardViolation::Altered { .. })
        ));
        let one =
            r#"{"input":[{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gB"}]}"#;
        assert!(matches!(
            verify(src, one, 0, &[]),
            Err(GuardViolation::Unreported { missing: 1, .. })
        ));
        assert!(verify(src, one, 1, &[]).is_ok());
        let restored = r#"{"type":"reasoning","id":"rs_0","summary":[],"encrypted_content":"g0"}"#;
        let with = src.replacen("[", &format!("[{restored},"), 1);
        assert!(verify(src, &with, 0, &[restored.to_owned()]).is_ok());
        assert!(matches!(
            verify(src, &with, 0, &[]),
            Err(GuardViolation::Altered { .. })
        ));
        let twice = r#"{"input":[{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gB"},{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gB"}]}"#;
        assert!(matches!(
            verify(src, twice, 0, &[]),
            Err(GuardViolation::Altered { .. })
        ));
    }
}
