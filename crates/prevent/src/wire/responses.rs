//! The OpenAI Responses rules (OR-, api-rules-reasoning-2026-11.md §3.2), over
//! [`turnkeeper_model::wire::responses`]'s view of a request body.
//!
//! Every rule below was seen as an error of OpenAI's Responses API (Basis V-Obs in the research
//! note), so on an OpenAI target each is an error. xAI's Grok takes the same items and rejects
//! none of them (XA-01: "the API returns 200, and results can get worse"): there each is a
//! warning and nothing is repaired. Other servers that speak the format (DeepSeek, local
//! servers) read reasoning items their own way: only the call/output pairing (OR-05) is checked
//! for them, an error for DeepSeek (which rejects it, real traffic), a warning otherwise.
//!
//! A repair never writes or alters reasoning: a reasoning item leaves byte for byte, or goes
//! whole (its fingerprint reported). The one exception the research allows is OR-11's
//! `"summary": []`, the provider's documented empty stand-in, added beside the item's own
//! members (which keep their bytes), reported as lossy and turned off by
//! [`Options::empty_summary`]. Ids are stripped, never made up; no call output is synthesised.
//!
//! The rules run in passes over a mask of the input's items (kept, id stripped, summary added)
//! until one pass changes nothing; so a removal that leaves a later item orphaned is found and
//! repaired by the rule concerned. The body is then written once by
//! [`render`](turnkeeper_model::wire::render), and the output's reasoning items are checked
//! against the input's before it is handed back (fail closed).

use std::borrow::Cow;
use std::collections::HashSet;

use turnkeeper_guard::{GuardViolation, fingerprint};
use turnkeeper_model::json::StrSpan;
use turnkeeper_model::wire::responses::{
    self as rv, ArrayField, Item, ItemKind, ResponsesBody, Role,
};
use turnkeeper_model::wire::{Edit, Plan, render, splice_into};

use crate::{Change, ChangeAction, Finding, PreventError, RuleId, Severity};

/// Who serves the request, as far as the rules care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// OpenAI (and Azure OpenAI, and OpenAI's models on other clouds): every OR- rule, as errors.
    OpenAi,
    /// xAI (`grok-*`): the same rules, as warnings, nothing repaired (XA-01).
    Xai,
    /// DeepSeek's Responses endpoint: call/output pairing only, as errors.
    DeepSeek,
    /// Any other server: call/output pairing only, as warnings.
    Other,
}

/// The target of a Responses request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Who serves it.
    pub server: Server,
    /// Whether the model reasons: `Some(false)` only for models known to have no reasoning
    /// (OR-13 fires only then), `None` when unknown.
    pub reasoning: Option<bool>,
}

impl Target {
    /// The target for a model id. A provider prefix (`openai/`, `azure/`, Bedrock's `openai.`)
    /// is ignored; a body without a model is taken as bound for OpenAI, the API the format is
    /// named for; an unknown model name as another server's.
    pub fn for_model(model: Option<&str>) -> Target {
        let Some(model) = model else {
            return Target {
                server: Server::OpenAi,
                reasoning: None,
            };
        };
        let lower = model.to_ascii_lowercase();
        let base = lower.rsplit('/').next().unwrap_or(&lower);
        let base = base.strip_prefix("openai.").unwrap_or(base);
        let is = |p: &str| base.starts_with(p);
        if is("grok") {
            return Target {
                server: Server::Xai,
                reasoning: None,
            };
        }
        if is("deepseek") {
            return Target {
                server: Server::DeepSeek,
                reasoning: None,
            };
        }
        let no_reasoning = is("gpt-4") || is("gpt-3.5") || is("chatgpt-4o") || is("gpt-5-chat");
        let reasoning = is("o1") || is("o3") || is("o4") || is("gpt-5") || is("codex");
        if no_reasoning {
            Target {
                server: Server::OpenAi,
                reasoning: Some(false),
            }
        } else if reasoning || is("computer-use") || is("gpt-") || is("chatgpt") {
            Target {
                server: Server::OpenAi,
                reasoning: reasoning.then_some(true),
            }
        } else {
            Target {
                server: Server::Other,
                reasoning: None,
            }
        }
    }
}

/// What to check against, and how to repair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options<'a> {
    /// The target model; overrides the body's `model`.
    pub model: Option<&'a str>,
    /// OR-11: add `"summary": []` to a reasoning item without `summary` (lossy, documented
    /// empty stand-in). Off: the finding is reported and the item left alone.
    pub empty_summary: bool,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            model: None,
            empty_summary: true,
        }
    }
}

/// What a repair produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired {
    /// The new body; `None` when nothing changed (the input is the body, byte for byte).
    pub body: Option<String>,
    /// Every change, in the order made.
    pub changes: Vec<Change>,
    /// What the repair could not fix (the findings `check` gives on the output).
    pub findings_left: Vec<Finding>,
}

/// Checks a Responses body already read.
pub fn check(b: &ResponsesBody<'_>, opts: &Options<'_>) -> Vec<Finding> {
    let mut run = Run::new(b, opts, false);
    run.pass();
    run.findings
}

/// Reads and checks a Responses body.
///
/// # Errors
/// [`PreventError::Model`] when the body is no Responses request.
pub fn check_str(src: &str, opts: &Options<'_>) -> Result<Vec<Finding>, PreventError> {
    let b = rv::read(src)?;
    Ok(check(&b, opts))
}

/// Repairs a Responses body already read.
///
/// # Errors
/// [`PreventError::Guard`] when the output's reasoning items are not the input's (a bug; the
/// repair fails closed).
pub fn repair(b: &ResponsesBody<'_>, opts: &Options<'_>) -> Result<Repaired, PreventError> {
    let mut run = Run::new(b, opts, true);
    for _ in 0..=b.items.len() {
        run.findings.clear();
        run.acted = false;
        run.pass();
        if !run.acted {
            break;
        }
    }
    let plan = run.plan();
    let body = render(b.src, &b.input_at, plan);
    if let Some(out) = &body {
        verify(b, &run.st, out)?;
    }
    Ok(Repaired {
        body,
        changes: run.changes,
        findings_left: run.findings,
    })
}

/// Reads and repairs a Responses body.
///
/// # Errors
/// As [`repair`], and [`PreventError::Model`] when the body is no Responses request.
pub fn repair_str(src: &str, opts: &Options<'_>) -> Result<Repaired, PreventError> {
    let b = rv::read(src)?;
    repair(&b, opts)
}

/// The state of the items under repair.
#[derive(Clone, Debug)]
struct State {
    keep: Vec<bool>,
    id_gone: Vec<bool>,
    summary_added: Vec<bool>,
}

struct Run<'r, 'a> {
    b: &'r ResponsesBody<'a>,
    opts: &'r Options<'r>,
    target: Target,
    model: String,
    repairing: bool,
    st: State,
    findings: Vec<Finding>,
    changes: Vec<Change>,
    acted: bool,
}

fn path(i: usize) -> String {
    ResponsesBody::path(i)
}

impl<'r, 'a> Run<'r, 'a> {
    fn new(b: &'r ResponsesBody<'a>, opts: &'r Options<'r>, repairing: bool) -> Self {
        let model: Option<Cow<'_, str>> = opts.model.map(Cow::Borrowed).or_else(|| b.model());
        let n = b.items.len();
        Run {
            b,
            opts,
            target: Target::for_model(model.as_deref()),
            model: model.map(|m| m.into_owned()).unwrap_or_default(),
            repairing,
            st: State {
                keep: vec![true; n],
                id_gone: vec![false; n],
                summary_added: vec![false; n],
            },
            findings: Vec::new(),
            changes: Vec::new(),
            acted: false,
        }
    }

    fn pass(&mut self) {
        if matches!(self.target.server, Server::OpenAi | Server::Xai) {
            self.or13_no_reasoning_model();
            self.or12_content();
            self.or03_store_false();
            self.or01_orphan_reasoning();
        }
        self.or05_pairing();
        if matches!(self.target.server, Server::OpenAi | Server::Xai) {
            self.or11_summary();
        }
        self.or14_duplicates();
    }

    /// How bad a finding of `rule` is on this target.
    fn severity(&self, rule: RuleId) -> Severity {
        match self.target.server {
            Server::OpenAi => Severity::Error,
            Server::Xai => Severity::Warning,
            Server::DeepSeek if rule == RuleId::Or05 => Severity::Error,
            Server::DeepSeek | Server::Other => Severity::Warning,
        }
    }

    /// True when a finding of `rule` is repaired on this target.
    fn repairs(&self, rule: RuleId) -> bool {
        self.severity(rule) == Severity::Error
    }

    fn item(&self, i: usize) -> &'r Item {
        &self.b.items[i]
    }

    fn text(&self, s: StrSpan) -> Cow<'a, str> {
        s.decode(self.b.src)
    }

    /// The id item `i` still has.
    fn id(&self, i: usize) -> Option<StrSpan> {
        if self.st.id_gone[i] {
            None
        } else {
            self.item(i).id
        }
    }

    fn id_text(&self, i: usize) -> String {
        self.item(i)
            .id
            .map(|s| self.text(s).into_owned())
            .unwrap_or_default()
    }

    fn next_kept(&self, i: usize) -> Option<usize> {
        (i + 1..self.b.items.len()).find(|&j| self.st.keep[j])
    }

    fn prev_kept(&self, i: usize) -> Option<usize> {
        (0..i).rev().find(|&j| self.st.keep[j])
    }

    fn kept(&self, kind: ItemKind) -> Vec<usize> {
        (0..self.b.items.len())
            .filter(|&i| self.st.keep[i] && self.item(i).kind == kind)
            .collect()
    }

    fn find(&mut self, rule: RuleId, i: usize, message: String, repair: Option<&str>) {
        let repair = repair.filter(|_| self.repairs(rule)).map(str::to_owned);
        self.findings.push(Finding {
            rule,
            severity: self.severity(rule),
            path: path(i),
            message_index: Some(i),
            block_index: None,
            message,
            repair,
        });
    }

    /// Removes item `i` whole (when repairing and the rule repairs on this target). A removed
    /// reasoning item (or a reference to one) leaves the items it produced without it, so
    /// their server ids go too (OR-02).
    fn drop_item(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.repairing || !self.repairs(rule) || !self.st.keep[i] {
            return;
        }
        let it = self.item(i);
        self.st.keep[i] = false;
        self.acted = true;
        let reasoning = it.kind == ItemKind::Reasoning;
        self.changes.push(Change {
            rule,
            action: ChangeAction::RemovedBlock,
            path: path(i),
            reason,
            fingerprint: reasoning.then(|| fingerprint(it.span.get(self.b.src))),
        });
        let reference_to_reasoning = it.kind == ItemKind::ItemReference
            && it.id.is_some_and(|s| self.text(s).starts_with("rs_"));
        if reasoning || reference_to_reasoning {
            self.strip_successors(i);
        }
    }

    /// OR-02: strips the server id of each item reasoning item `i` produced (the function and
    /// custom tool calls and assistant messages right after it), keeping `call_id`.
    fn strip_successors(&mut self, i: usize) {
        let mut j = i;
        while let Some(k) = self.next_kept(j) {
            let it = self.item(k);
            let produced = matches!(it.kind, ItemKind::FunctionCall | ItemKind::CustomToolCall)
                || (it.kind == ItemKind::Message && it.role == Some(Role::Assistant));
            if !produced {
                break;
            }
            if self.id(k).is_some() && it.member(self.b.src, "id").is_some() {
                self.st.id_gone[k] = true;
                self.acted = true;
                let id = self.id_text(k);
                self.changes.push(Change {
                    rule: RuleId::Or02,
                    action: ChangeAction::RemovedField,
                    path: format!("{}.id", path(k)),
                    reason: format!(
                        "the reasoning item {} before `{id}` was removed; sent with its id, the item would be \"provided without its required 'reasoning' item\"; `call_id` and the rest stay",
                        path(i)
                    ),
                    fingerprint: None,
                });
            }
            j = k;
        }
    }

    /// OR-13: reasoning items to a model without reasoning.
    fn or13_no_reasoning_model(&mut self) {
        if self.target.reasoning != Some(false) {
            return;
        }
        for i in self.kept(ItemKind::Reasoning) {
            let model = self.model.clone();
            self.find(
                RuleId::Or13,
                i,
                format!(
                    "a reasoning item sent to {model}, a model without reasoning: \"Reasoning input items can only be provided to a reasoning or computer use model.\""
                ),
                Some("remove the reasoning item whole, and the ids of the items it produced"),
            );
            self.drop_item(
                RuleId::Or13,
                i,
                format!("{model} takes no reasoning items (OR-13)"),
            );
        }
    }

    /// OR-12: non-empty `content` on a reasoning item sent to OpenAI.
    fn or12_content(&mut self) {
        for i in self.kept(ItemKind::Reasoning) {
            let it = self.item(i);
            if !it.content.is_non_empty() {
                continue;
            }
            let len = match it.content {
                ArrayField::Array { len, .. } => len,
                _ => 1,
            };
            self.find(
                RuleId::Or12,
                i,
                format!(
                    "a reasoning item with `content` (another provider's reasoning text): \"Invalid '{}.content': array too long. Expected an array with maximum length 0, but got an array with length {len} instead.\"",
                    path(i)
                ),
                Some("remove the reasoning item whole (its content is never edited)"),
            );
            self.drop_item(
                RuleId::Or12,
                i,
                "OpenAI takes no reasoning `content`; the item is never edited, so it goes whole (OR-12)"
                    .into(),
            );
        }
    }

    /// OR-03: with `store: false`, items only the server could resolve.
    fn or03_store_false(&mut self) {
        if self.b.store != Some(false) {
            return;
        }
        for i in 0..self.b.items.len() {
            if !self.st.keep[i] {
                continue;
            }
            let it = self.item(i);
            let Some(id) = it.id else { continue };
            let id = self.text(id).into_owned();
            let msg = format!(
                "\"Item with id '{id}' not found. Items are not persisted when `store` is set to false.\""
            );
            match it.kind {
                ItemKind::Reasoning if !it.encrypted.is_set() => {
                    self.find(
                        RuleId::Or03,
                        i,
                        format!("a reasoning item with an id and no `encrypted_content`: {msg}"),
                        Some(
                            "remove the reasoning item whole, and the ids of the items it produced",
                        ),
                    );
                    self.drop_item(
                        RuleId::Or03,
                        i,
                        format!("store is false and `{id}` has no encrypted_content: the server cannot resolve it (OR-03)"),
                    );
                }
                ItemKind::ItemReference => {
                    let reasoning = id.starts_with("rs_");
                    self.find(
                        RuleId::Or03,
                        i,
                        format!("an item_reference: {msg}"),
                        reasoning.then_some(
                            "remove the reference to the reasoning item, and the ids of the items it produced",
                        ),
                    );
                    if reasoning {
                        self.drop_item(
                            RuleId::Or03,
                            i,
                            format!("store is false: the reasoning item `{id}` cannot be referenced (OR-03)"),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    /// OR-01: a reasoning item with an id not immediately followed by the item it produced.
    fn or01_orphan_reasoning(&mut self) {
        for i in self.kept(ItemKind::Reasoning) {
            if self.item(i).id.is_none() {
                continue;
            }
            let next = self.next_kept(i);
            let why = match next {
                None => Some("it is the last item".to_owned()),
                Some(j) => {
                    let n = self.item(j);
                    if n.kind == ItemKind::Reasoning {
                        Some(format!("{} is another reasoning item", path(j)))
                    } else if n.is_client_input() {
                        Some(format!("{} is not model output", path(j)))
                    } else if self.b.store != Some(false)
                        && n.kind == ItemKind::Message
                        && n.role == Some(Role::Assistant)
                        && self.id(j).is_none()
                    {
                        Some(format!(
                            "{} is an assistant message without its `msg_` id, which the server cannot tie to it",
                            path(j)
                        ))
                    } else {
                        None
                    }
                }
            };
            let Some(why) = why else { continue };
            let id = self.id_text(i);
            self.find(
                RuleId::Or01,
                i,
                format!(
                    "\"Item '{id}' of type 'reasoning' was provided without its required following item.\" ({why})"
                ),
                Some("remove the orphan reasoning item whole"),
            );
            self.drop_item(
                RuleId::Or01,
                i,
                format!("`{id}` is not followed by the item it produced ({why}) (OR-01)"),
            );
        }
    }

    /// OR-05: function calls and their outputs, paired by `call_id`.
    fn or05_pairing(&mut self) {
        let calls = self.kept(ItemKind::FunctionCall);
        let outputs = self.kept(ItemKind::FunctionCallOutput);
        let call_id = |r: &Self, i: usize| r.item(i).call_id.map(|c| r.text(c));
        if !self.b.has_server_history() {
            for &o in &outputs {
                let Some(cid) = call_id(self, o) else {
                    continue;
                };
                if calls.iter().any(|&c| call_id(self, c) == Some(cid.clone())) {
                    continue;
                }
                self.find(
                    RuleId::Or05,
                    o,
                    format!("\"No tool call found for function call output with call_id {cid}.\""),
                    Some("remove the output that answers no call"),
                );
                self.drop_item(
                    RuleId::Or05,
                    o,
                    format!("no function_call with call_id `{cid}` in the input (OR-05)"),
                );
            }
        }
        for &c in &calls {
            if !self.st.keep[c] {
                continue;
            }
            let Some(cid) = call_id(self, c) else {
                continue;
            };
            let answer = outputs
                .iter()
                .copied()
                .find(|&o| o > c && self.st.keep[o] && call_id(self, o) == Some(cid.clone()));
            match answer {
                None => {
                    self.find(
                        RuleId::Or05,
                        c,
                        format!("\"No tool output found for function call {cid}.\""),
                        Some("remove the unanswered call, and the reasoning item right before it when the call was all it produced"),
                    );
                    if !(self.repairing && self.repairs(RuleId::Or05)) {
                        continue;
                    }
                    let before = self
                        .prev_kept(c)
                        .filter(|&p| self.item(p).kind == ItemKind::Reasoning);
                    self.drop_item(
                        RuleId::Or05,
                        c,
                        format!(
                            "no function_call_output answers `{cid}` (OR-05); no output is made up"
                        ),
                    );
                    if let Some(p) = before {
                        let produced_more = self
                            .next_kept(p)
                            .is_some_and(|n| self.item(n).is_model_output());
                        if !produced_more {
                            self.drop_item(
                                RuleId::Or05,
                                p,
                                format!("the reasoning item produced only the unanswered call `{cid}`, removed with it (OR-05)"),
                            );
                        }
                    }
                }
                Some(o) if self.target.server == Server::DeepSeek => {
                    let between = (c + 1..o)
                        .find(|&m| self.st.keep[m] && self.item(m).kind == ItemKind::Message);
                    if let Some(m) = between {
                        self.find(
                            RuleId::Or05,
                            c,
                            format!(
                                "DeepSeek: \"No tool output found for tool call {cid}.\" (the message {} comes between the call and its output {})",
                                path(m),
                                path(o)
                            ),
                            None,
                        );
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// OR-11: a reasoning item without `summary`.
    fn or11_summary(&mut self) {
        for i in self.kept(ItemKind::Reasoning) {
            if self.item(i).summary.is_present() || self.st.summary_added[i] {
                continue;
            }
            let fix = self.opts.empty_summary;
            self.find(
                RuleId::Or11,
                i,
                format!("\"Missing required parameter: '{}.summary'.\"", path(i)),
                fix.then_some(
                    "add `\"summary\": []`, the provider's empty stand-in (lossy: the model sees no summary for this item)",
                ),
            );
            if fix && self.repairing && self.repairs(RuleId::Or11) {
                self.st.summary_added[i] = true;
                self.acted = true;
                self.changes.push(Change {
                    rule: RuleId::Or11,
                    action: ChangeAction::AddedField,
                    path: format!("{}.summary", path(i)),
                    reason: "lossy: the reasoning item had no `summary`, which the API requires; `[]` is the documented empty stand-in, the item's own members are unchanged (OR-11)".into(),
                    fingerprint: None,
                });
            }
        }
    }

    /// OR-14: with `previous_response_id`, an item id sent twice.
    fn or14_duplicates(&mut self) {
        if self.b.previous_response_id.is_none() || self.target.server != Server::OpenAi {
            return;
        }
        let mut seen: HashSet<Cow<'a, str>> = HashSet::new();
        for i in 0..self.b.items.len() {
            if !self.st.keep[i] {
                continue;
            }
            let Some(id) = self.id(i) else { continue };
            let id = self.text(id);
            if !seen.insert(id.clone()) {
                self.find(
                    RuleId::Or14,
                    i,
                    format!("\"Duplicate item found with id {id}. Remove duplicate items from your input and try again.\""),
                    None,
                );
            }
        }
    }

    /// The plan of the state reached.
    fn plan(&self) -> Plan {
        let mut plan = Plan::default();
        let n = self.b.items.len();
        for i in 0..n {
            let it = self.item(i);
            if !self.st.keep[i] {
                plan.remove_item(n, i);
                continue;
            }
            if self.st.id_gone[i]
                && let Some(k) = it.member(self.b.src, "id")
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

fn summary_edit(it: &Item) -> Edit {
    Edit::add_member(it.span, &it.members, "summary", "[]")
}

/// Checks that the output's reasoning items are the input's kept ones, byte for byte (with
/// OR-11's `summary` added where it was).
fn verify(b: &ResponsesBody<'_>, st: &State, out: &str) -> Result<(), GuardViolation> {
    let o = rv::read(out).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    let mut expect: Vec<String> = Vec::new();
    let mut removed: Option<usize> = None;
    for (i, it) in b.items.iter().enumerate() {
        if it.kind != ItemKind::Reasoning {
            continue;
        }
        if !st.keep[i] {
            removed.get_or_insert(i);
            continue;
        }
        let mut s = String::new();
        if st.summary_added[i] {
            splice_into(b.src, it.span, &mut [summary_edit(it)], &mut s);
        } else {
            s.push_str(it.span.get(b.src));
        }
        expect.push(s);
    }
    let got: Vec<(usize, &str)> = o
        .items
        .iter()
        .enumerate()
        .filter(|(_, it)| it.kind == ItemKind::Reasoning)
        .map(|(j, it)| (j, it.span.get(out)))
        .collect();
    for (j, raw) in &got {
        if let Some(k) = expect.iter().position(|e| e == raw) {
            expect.swap_remove(k);
        } else {
            return Err(GuardViolation::Altered {
                path: path(*j),
                fingerprint: fingerprint(raw),
            });
        }
    }
    if let Some(first) = expect.first() {
        return Err(GuardViolation::Unreported {
            missing: expect.len(),
            first_path: removed.map(path).unwrap_or_default(),
            fingerprint: fingerprint(first),
        });
    }
    Ok(())
}
