//! The Chat Completions pipeline: the context its rules share, and their order.
//!
//! Order: tool answers are brought to their calls, and calls nobody answers removed (OA-01);
//! then tool messages that still answer nothing go (OA-02); then assistant messages left with
//! nothing go (OA-03); then the providers' own reasoning rules (DS-03, KM-01, GM-18, OA-07) look
//! at the messages that remain.

use turnkeeper_guard::TurnStore;
use turnkeeper_model::wire::chat::{ChatBody, ChatContent, ChatMessage, ChatRole};
use turnkeeper_model::wire::{Edit, Piece};

use crate::Policy;
use crate::finding::Severity;
use crate::id::{ChangeAction, RuleId};
use crate::rules::{
    ds03_deepseek_reasoning, gm18_chat_signatures, km01_kimi_reasoning, oa01_tool_answers,
    oa02_orphan_tool, oa03_empty_assistant, oa07_openai_reasoning_fields,
};
use crate::wire::{Provider, Target, WireOut};

/// What the Chat rules share: the body, its target, the policy, and what has been planned.
#[derive(Debug)]
pub struct ChatCx<'b, 'a> {
    /// The body.
    pub body: &'b ChatBody<'a>,
    /// Where it goes.
    pub target: &'b Target,
    /// The repair policy.
    pub policy: &'b Policy,
    /// The turn store, for putting back what the provider sent.
    pub store: Option<&'b TurnStore>,
    /// True when repairs are planned, not only findings made.
    pub repair: bool,
    /// Findings, changes and the plan.
    pub out: WireOut,
    /// Messages a rule of this pass removes (or moved away: see `moved`).
    pub removed: Vec<bool>,
    /// Tool messages brought up to the call they answer.
    pub moved: Vec<bool>,
}

impl<'b, 'a> ChatCx<'b, 'a> {
    /// The input.
    pub fn src(&self) -> &'a str {
        self.body.src
    }

    /// The messages.
    pub fn messages(&self) -> &'b [ChatMessage] {
        &self.body.messages
    }

    /// True when message `i` is still there after this pass's plan (moved ones are).
    pub fn alive(&self, i: usize) -> bool {
        !self.removed.get(i).copied().unwrap_or(true)
    }

    /// Reports a finding about message `i`.
    pub fn find(
        &mut self,
        rule: RuleId,
        severity: Severity,
        i: usize,
        path: String,
        message: String,
        repair: Option<String>,
    ) {
        self.out
            .find(rule, severity, path, Some(i), message, repair);
    }

    /// Plans the removal of message `i`, reported under `rule` with `reason`.
    pub fn remove_message(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.alive(i) {
            return;
        }
        let n = self.body.messages_at.elems.len();
        self.out.plan.remove_item(n, i);
        if let Some(r) = self.removed.get_mut(i) {
            *r = true;
        }
        self.out.change(
            rule,
            ChangeAction::RemovedMessage,
            format!("messages[{i}]"),
            reason,
        );
    }

    /// Plans moving tool message `j` to right after message `after` (or after the tool messages
    /// already moved there), reported under `rule`.
    pub fn move_after(&mut self, rule: RuleId, j: usize, after: usize, reason: String) {
        let n = self.body.messages_at.elems.len();
        let order = self.out.plan.order(n);
        order.retain(|p| *p != Piece::Orig(j));
        let Some(mut at) = order.iter().position(|p| *p == Piece::Orig(after)) else {
            return;
        };
        // Past the tool messages that follow `after` already (original or moved).
        while let Some(Piece::Orig(k)) = order.get(at + 1) {
            let is_tool = self
                .body
                .messages
                .get(*k)
                .is_some_and(|m| m.role == ChatRole::Tool);
            if !is_tool {
                break;
            }
            at += 1;
        }
        order.insert(at + 1, Piece::Orig(j));
        if let Some(m) = self.moved.get_mut(j) {
            *m = true;
        }
        self.out.change(
            rule,
            ChangeAction::MovedMessage,
            format!("messages[{j}]"),
            reason,
        );
    }

    /// Plans an edit inside message `i`.
    pub fn edit(&mut self, i: usize, e: Edit) {
        self.out.plan.edit(i, e);
    }

    /// The provider's name for messages, with the router when there is one.
    pub fn provider_name(&self) -> String {
        match &self.target.routed {
            Some(_) => format!(
                "{} behind a router or gateway (model id {:?})",
                self.target.provider.name(),
                self.target.model.as_deref().unwrap_or_default()
            ),
            None => self.target.provider.name().to_owned(),
        }
    }

    /// True when the target is `p`.
    pub fn is(&self, p: Provider) -> bool {
        self.target.provider == p
    }
}

/// Runs every Chat rule over `body` for `target`.
pub fn run(
    body: &ChatBody<'_>,
    target: &Target,
    policy: &Policy,
    store: Option<&TurnStore>,
    repair: bool,
) -> WireOut {
    let n = body.messages.len();
    let mut cx = ChatCx {
        body,
        target,
        policy,
        store,
        repair,
        out: WireOut::default(),
        removed: vec![false; n],
        moved: vec![false; n],
    };
    oa01_tool_answers::run(&mut cx);
    oa02_orphan_tool::run(&mut cx);
    oa03_empty_assistant::run(&mut cx);
    ds03_deepseek_reasoning::run(&mut cx);
    km01_kimi_reasoning::run(&mut cx);
    gm18_chat_signatures::run(&mut cx);
    oa07_openai_reasoning_fields::run(&mut cx);
    cx.out
}

/// The id of a tool call as its text (decoded).
pub fn text<'a>(src: &'a str, s: Option<turnkeeper_model::StrSpan>) -> std::borrow::Cow<'a, str> {
    s.map(|s| s.decode(src)).unwrap_or_default()
}

impl ChatCx<'_, '_> {
    /// The stored turn of assistant message `i`: by its tool call ids, else by its content text
    /// (when exactly one stored turn has it).
    pub fn stored(&self, i: usize) -> Option<&turnkeeper_guard::wire_turn::ChatRecord> {
        let store = self.store?;
        let m = self.body.messages.get(i)?;
        let src = self.src();
        let ids: Vec<std::borrow::Cow<'_, str>> = m
            .calls
            .iter()
            .filter_map(|c| c.id.map(|s| s.decode(src)))
            .collect();
        let ids: Vec<&str> = ids.iter().map(|s| s.as_ref()).collect();
        let content = match m.content {
            ChatContent::Text { text, .. } => Some(text.decode(src)),
            _ => None,
        };
        store.chat_turn(&ids, content.as_deref())
    }

    /// The `reasoning_content` the provider sent for message `i` (JSON text), when the store
    /// has it.
    pub fn stored_reasoning(&self, i: usize) -> Option<String> {
        self.stored(i).and_then(|r| r.reasoning_content.clone())
    }

    /// Plans putting back `reasoning_content` on message `i` exactly as the provider sent it
    /// (`json`, from [`ChatCx::stored_reasoning`]), reported as restored: nothing is lost or
    /// made up. Placed as the message writes its own members (see
    /// [`Edit::insert_member_like`]).
    pub fn restore_reasoning(&mut self, rule: RuleId, i: usize, json: &str) {
        if !self.repair {
            return;
        }
        let Some(m) = self.body.messages.get(i) else {
            return;
        };
        let e = Edit::insert_member_like(self.src(), m.span, &m.members, "reasoning_content", json);
        self.out.plan.edit(i, e);
        self.out.change(
            rule,
            ChangeAction::RestoredField,
            format!("messages[{i}].reasoning_content"),
            format!(
                "put back the reasoning_content {} sent for this turn ({} bytes, from the turn \
                 store), which the client dropped",
                self.provider_name(),
                json.len()
            ),
        );
    }

    /// Plans `"reasoning_content": ""` on message `i`: the empty stand-in DeepSeek (DS-04) and
    /// Kimi (KM-07) document as accepted, reported as lossy. Does nothing when the policy turns
    /// stand-ins off.
    pub fn stand_in_reasoning(&mut self, rule: RuleId, i: usize, why: &str) {
        if !self.repair || !self.policy.empty_stand_ins {
            return;
        }
        let Some(m) = self.body.messages.get(i) else {
            return;
        };
        self.out.plan.edit(
            i,
            Edit::add_member(m.span, &m.members, "reasoning_content", "\"\""),
        );
        self.out.change(
            rule,
            ChangeAction::LossyStandIn,
            format!("messages[{i}].reasoning_content"),
            format!(
                "added an empty reasoning_content, which {} accepts ({why}); lossy: the model \
                 sees no reasoning for this turn",
                self.provider_name()
            ),
        );
    }

    /// True when the body shows the client in a thinking mode: some assistant message carries
    /// `reasoning_content`.
    pub fn replays_reasoning(&self) -> bool {
        self.body
            .messages
            .iter()
            .any(|m| m.role == ChatRole::Assistant && m.reasoning_content.is_some())
    }

    /// The thinking setting the body or the options give: `Some(true)` on, `Some(false)` off.
    pub fn thinking_setting(&self) -> Option<bool> {
        if let Some(mode) = self.target.thinking {
            return Some(mode != crate::Mode::Off);
        }
        if let Some(t) = self.body.thinking_type {
            match t.raw(self.src()) {
                "disabled" => return Some(false),
                "enabled" => return Some(true),
                _ => {}
            }
        }
        self.body.enable_thinking
    }
}
