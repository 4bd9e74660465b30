//! Typed rule ids and change actions.
//!
//! A rule id names one check of the catalogue (`AN-xx` for Anthropic's Messages API, `GM-xx` for
//! Gemini, `CFG-xx` for the request settings the API rejects before it reads the transcript).
//! The strings are the ones api-rules.md uses, and the ones the JSON output has always carried:
//! [`RuleId`] serialises to them and parses from them.

use serde::{Deserialize, Serialize};

/// Declares [`RuleId`]: variant, wire string, one-line summary.
macro_rules! rule_ids {
    ($($(#[$doc:meta])* $v:ident = $s:literal, $summary:literal;)*) => {
        /// The id of one rule of the catalogue.
        ///
        /// Serialised as its string (`"AN-08"`); compares equal to that string, so
        /// `finding.rule == "AN-08"` reads as before.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum RuleId {
            $(
                $(#[$doc])*
                #[serde(rename = $s)]
                $v,
            )*
        }

        impl RuleId {
            /// Every id, in catalogue order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$v),*];

            /// The id as api-rules.md and the JSON output spell it (`"AN-08"`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(RuleId::$v => $s,)*
                }
            }

            /// A one-line summary of what the rule checks.
            pub const fn summary(self) -> &'static str {
                match self {
                    $(RuleId::$v => $summary,)*
                }
            }

            /// The id spelled `s`, if there is one.
            pub fn parse(s: &str) -> Option<RuleId> {
                match s {
                    $($s => Some(RuleId::$v),)*
                    _ => None,
                }
            }
        }
    };
}

rule_ids! {
    /// The first message must be a user message.
    An01 = "AN-01", "the first message must use the user role";
    /// Consecutive same-role messages (merged by the API; some targets reject them).
    An02 = "AN-02", "consecutive messages with the same role";
    /// A trailing assistant message (prefill) where none is allowed.
    An03 = "AN-03", "a trailing assistant message (prefill) where none is allowed";
    /// A message with empty content.
    An04 = "AN-04", "a message with empty content";
    /// An empty or whitespace-only text block.
    An05 = "AN-05", "an empty or whitespace-only text block";
    /// A field the block's type does not define, or a required field missing.
    An06 = "AN-06", "a field the block type does not define, or a required one missing";
    /// More than four `cache_control` breakpoints over `tools`, `system` and `messages`.
    An07 = "AN-07", "more than 4 cache_control breakpoints";
    /// A client tool call without a result in the next user message.
    An08 = "AN-08", "a tool_use without a tool_result right after it";
    /// Tool results not at the front of their user message.
    An09 = "AN-09", "tool results not first in their message";
    /// A tool result that answers no call, or a second result for one call.
    An10 = "AN-10", "a tool_result without its tool_use, or a duplicate";
    /// A result in a later message than the one right after its call.
    An11 = "AN-11", "a message between a tool_use and its tool_result";
    /// A tool id that does not match `^[a-zA-Z0-9_-]+$`.
    An12 = "AN-12", "a tool id outside ^[a-zA-Z0-9_-]+$";
    /// A server tool result without its `server_tool_use` before it.
    An15 = "AN-15", "a server tool result without its server_tool_use";
    /// Manual thinking: the open tool loop's first assistant message does not start with thinking.
    An16 = "AN-16", "manual thinking: the open tool loop does not start with thinking";
    /// Manual thinking: a message with thinking does not start with it.
    An18 = "AN-18", "manual thinking: thinking is not the first block of its message";
    /// An assistant message ends with a thinking block.
    An19 = "AN-19", "an assistant message ends with a thinking block";
    /// Thinking off: thinking in the final assistant message.
    An20 = "AN-20", "thinking off: thinking in the final assistant message";
    /// A thinking block differs from the provider's original (restored from the turn store).
    An22 = "AN-22", "thinking differs from the provider's original";
    /// A thinking block whose signature can never verify.
    An23 = "AN-23", "a thinking signature that can never verify";
    /// A prefix-bound thinking block after an edit of its prefix.
    An25 = "AN-25", "a prefix-bound thinking block after an edited prefix";
    /// A mid-conversation `system` message where the API does not take one: not after a user
    /// message (or an assistant message ending in a server tool use), or not followed by an
    /// assistant message or the end.
    An30 = "AN-30", "a mid-conversation system message out of place";
    /// A `tool_reference` naming no tool of the request (tool search).
    An37 = "AN-37", "a tool_reference naming no tool of the request";
    /// Two `tool_use` blocks of one turn with the same id (turnkeeper's number).
    An46 = "AN-46", "two tool_use blocks with the same id";
    /// A mid-conversation `system` message sent to an Anthropic-compatible endpoint that takes
    /// only `user` and `assistant` (turnkeeper's number, after CX-01 of the research: endpoints
    /// that lag behind the Messages API).
    Cx02 = "CX-02", "a system message on an endpoint that takes only user and assistant";
    /// Gemini 3: the first function call of a step lacks its `thoughtSignature` (GM-02 and
    /// GM-05 describe which call and the documented dummy).
    Gm01 = "GM-01", "Gemini: the first call of a step lacks a thoughtSignature";
    /// Gemini: function responses not at the front of the next user content.
    Gm03 = "GM-03", "Gemini: function responses not first";
    /// Gemini: a function response in the wrong turn, or answering no call.
    Gm09 = "GM-09", "Gemini: a function response in the wrong turn";
    /// Gemini: function calls and responses do not pair up.
    Gm10 = "GM-10", "Gemini: function calls and responses do not pair up";
    /// Gemini: a role other than `user` or `model`.
    Gm12 = "GM-12", "Gemini: a role other than user or model";
    /// Gemini: a content with no parts, or an empty part.
    Gm13 = "GM-13", "Gemini: a content without parts, or an empty part";
    /// OpenAI Responses: a reasoning item sent with its `id` is not immediately followed by the
    /// item it produced.
    Or01 = "OR-01", "Responses: a reasoning item without its following item";
    /// OpenAI Responses: an item sent with its server id (`fc_`, `msg_`) whose reasoning item is
    /// gone.
    Or02 = "OR-02", "Responses: an item with its id but without its reasoning item";
    /// OpenAI Responses: with `store: false`, an item only the server could resolve (a
    /// reasoning item with an `rs_` id and no `encrypted_content`, an `item_reference`).
    Or03 = "OR-03", "Responses: an item the server cannot resolve under store:false";
    /// OpenAI Responses: a reasoning item whose `encrypted_content` OpenAI did not write (plain
    /// text from a compatible server, not a Fernet token).
    Or04 = "OR-04", "Responses: reasoning encrypted_content OpenAI did not write";
    /// OpenAI Responses: a function call without its output, or an output without its call.
    Or05 = "OR-05", "Responses: function calls and outputs do not pair up";
    /// OpenAI Responses: a reasoning item without `summary`.
    Or11 = "OR-11", "Responses: a reasoning item without summary";
    /// OpenAI Responses: a reasoning item with non-empty `content`, sent to OpenAI.
    Or12 = "OR-12", "Responses: a reasoning item with content, sent to OpenAI";
    /// OpenAI Responses: reasoning items sent to a model without reasoning.
    Or13 = "OR-13", "Responses: reasoning items to a model without reasoning";
    /// OpenAI Responses: with `previous_response_id`, an item id sent twice.
    Or14 = "OR-14", "Responses: a duplicate item id with previous_response_id";
    /// OpenAI Responses: a reasoning item whose `encrypted_content` cannot verify: altered, or
    /// dropped by the client before the item it produced (restored from the turn store).
    Or17 = "OR-17", "Responses: reasoning altered or dropped (restored from the turn store)";
    /// Thinking requested on a model without thinking.
    Cfg01 = "CFG-01", "thinking requested on a model that has none";
    /// Manual thinking (`enabled`) on a model that accepts only adaptive thinking.
    Cfg02 = "CFG-02", "manual thinking on an adaptive-only model";
    /// Adaptive thinking on a model that does not support it.
    Cfg03 = "CFG-03", "adaptive thinking on a model without it";
    /// Thinking disabled on a model that cannot run without it.
    Cfg04 = "CFG-04", "thinking disabled on a model that requires it";
    /// Manual thinking with `budget_tokens` below 1024.
    Cfg05 = "CFG-05", "budget_tokens below 1024";
    /// Manual thinking without `budget_tokens`.
    Cfg06 = "CFG-06", "manual thinking without budget_tokens";
    /// `max_tokens` not above `budget_tokens` (without interleaved thinking).
    Cfg07 = "CFG-07", "max_tokens not above budget_tokens";
    /// A non-default sampling parameter on a model that rejects any.
    Cfg08 = "CFG-08", "a sampling parameter on a model that rejects any";
    /// Thinking on: `temperature` other than 1.
    Cfg09 = "CFG-09", "thinking on: temperature other than 1";
    /// Thinking on: `top_k` set.
    Cfg10 = "CFG-10", "thinking on: top_k set";
    /// Thinking on: `top_p` outside 0.95..=1.
    Cfg11 = "CFG-11", "thinking on: top_p outside 0.95..1";
    /// `tool_choice` forces tool use where the model refuses it (with thinking, or always).
    Cfg12 = "CFG-12", "tool_choice forces tool use where it is refused";
    /// `thinking.type: "between_tools"` on a model that does not take it.
    Cfg13 = "CFG-13", "between_tools on a model that does not take it";
    /// A field beside `type` in a `disabled` or `between_tools` thinking setting.
    Cfg14 = "CFG-14", "a field the thinking type does not take";
    /// Effort `xhigh`/`max` without up-front thinking on a model that caps it.
    Cfg15 = "CFG-15", "effort above high without thinking";
    /// The `clear_thinking` context edit with thinking off.
    Cfg16 = "CFG-16", "clear_thinking without thinking on";
    /// The `clear_thinking` context edit not listed first.
    Cfg17 = "CFG-17", "clear_thinking not listed first";
    /// A tool with both `defer_loading: true` and `cache_control`.
    Cfg18 = "CFG-18", "a deferred tool with cache_control";
    /// OpenAI Chat: an assistant message's `tool_calls` not all answered by the `tool` messages
    /// right after it (OC-01).
    Oa01 = "OA-01", "Chat: a tool call without its tool message right after it";
    /// OpenAI Chat: a `tool` message that answers no call of the assistant message before it
    /// (OC-02).
    Oa02 = "OA-02", "Chat: a tool message answering no call right before it";
    /// OpenAI Chat: an assistant message with neither content nor tool calls (OC-03, KM-04).
    Oa03 = "OA-03", "Chat: an assistant message with neither content nor tool calls";
    /// OpenAI Chat to OpenAI itself: a vendor's reasoning field on a message (OA-04, OA-07).
    Oa07 = "OA-07", "Chat to OpenAI: a vendor reasoning field OpenAI does not define";
    /// DeepSeek thinking mode: an assistant message of a tool-calling turn without
    /// `reasoning_content` (DS-03, DS-04; DS-07 with tools).
    Ds03 = "DS-03", "DeepSeek thinking: reasoning_content missing in a tool-calling turn";
    /// Kimi thinking: an assistant tool-call message without `reasoning_content` (KM-01; KM-06
    /// under `thinking.keep: "all"`).
    Km01 = "KM-01", "Kimi thinking: reasoning_content missing on a tool-call message";
    /// Gemini 3 through its OpenAI-compatible endpoint: the first tool call of a current-turn
    /// step without `extra_content.google.thought_signature` (GM-18).
    Gm18 = "GM-18", "Gemini 3 via Chat: the first tool call of a step lacks its signature";
    /// Bedrock Converse, Claude: `reasoningContent` not first in its assistant message.
    Br01 = "BR-01", "Converse, Claude: reasoningContent not first in its assistant message";
    /// Bedrock Converse: `reasoningText.text` is null.
    Br04 = "BR-04", "Converse: reasoningText.text is null";
    /// Bedrock Converse, DeepSeek R1: unsigned `reasoningContent` sent back.
    Br05 = "BR-05", "Converse, DeepSeek R1: unsigned reasoningContent in the history";
    /// Bedrock Converse, newer Claude: an assistant message of `reasoningContent` only.
    Br06 = "BR-06", "Converse, newer Claude: an assistant message of reasoning only";
    /// Bedrock Converse: tool blocks in the history without `toolConfig` (BC-01).
    Br08 = "BR-08", "Converse: toolUse/toolResult blocks without toolConfig";
    /// Bedrock Converse, Claude: a forced `toolChoice` with thinking on.
    Br10 = "BR-10", "Converse, Claude: a forced toolChoice with thinking on";
    /// Bedrock Converse: a `toolUse` without its `toolResult` in the next message
    /// (turnkeeper's number).
    Br11 = "BR-11", "Converse: a toolUse without its toolResult in the next message";
    /// Bedrock Converse: a `toolResult` answering no `toolUse` of the turn before, or a second
    /// one (turnkeeper's number).
    Br12 = "BR-12", "Converse: a toolResult answering no toolUse of the turn before";
    /// Bedrock Converse: a blank text block (turnkeeper's number).
    Br13 = "BR-13", "Converse: a blank text block";
    /// Bedrock Converse: a message with no content block (turnkeeper's number).
    Br14 = "BR-14", "Converse: a message with no content block";
    /// Bedrock Converse: an S3-sourced document the target model rejects (turnkeeper's number).
    Br15 = "BR-15", "Converse: an S3-sourced document the target model rejects";
    /// Not a rule of the catalogue: the id on changes `turnkeeper-recover` makes itself
    /// (disabling thinking, stripping it) after the provider rejected a request.
    Recover = "recover", "a change made by recovery, not by a rule";
    /// Not a rule of the catalogue: an input the rules could not be run on (an OpenCode export
    /// that reads as JSON but does not load as a session); reported, never "no findings".
    Unchecked = "unchecked", "an input the rules could not be run on";
    /// Not a rule of the catalogue: damage to a session store's own structure (a line torn by a
    /// crash, written twice, or whose parent line is gone), repaired so the rules can see the
    /// conversation at all.
    Store = "store", "a torn, duplicated or unlinked line in a session store";
}

impl RuleId {
    /// True for the ids of the rule catalogue (every id but [`RuleId::Recover`],
    /// [`RuleId::Unchecked`] and [`RuleId::Store`]).
    pub fn is_rule(self) -> bool {
        !matches!(self, RuleId::Recover | RuleId::Unchecked | RuleId::Store)
    }

    /// `ids` as a comma-separated list (`"AN-08, AN-09"`), for messages.
    pub fn join(ids: &[RuleId]) -> String {
        let strs: Vec<&str> = ids.iter().map(|r| r.as_str()).collect();
        strs.join(", ")
    }

    /// True for the request-setting checks (`CFG-xx`): the caller's settings, reported with
    /// the fix; `repair` changes them only where the fix overrides no choice of the caller's
    /// (CFG-14, CFG-17, CFG-18), as a request change.
    pub fn is_config(self) -> bool {
        self.as_str().starts_with("CFG-")
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is no rule id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule id {0:?}")]
pub struct UnknownRuleId(pub String);

impl std::str::FromStr for RuleId {
    type Err = UnknownRuleId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RuleId::parse(s).ok_or_else(|| UnknownRuleId(s.to_owned()))
    }
}

impl PartialEq<str> for RuleId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<RuleId> for &str {
    fn eq(&self, other: &RuleId) -> bool {
        *self == other.as_str()
    }
}

/// What a change did. Serialised in snake case (`"removed_block"`), the strings the report has
/// always used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeAction {
    /// A block was removed.
    RemovedBlock,
    /// A block was added.
    InsertedBlock,
    /// A block was replaced by an edited copy (never a thinking block).
    EditedBlock,
    /// A block was moved to another message.
    MovedBlock,
    /// A field was removed from the message (a `cache_control` with nowhere to go).
    RemovedField,
    /// A message was removed.
    RemovedMessage,
    /// A message was added.
    InsertedMessage,
    /// The next message's blocks were appended to this one, and the next message removed.
    MergedMessage,
    /// A message was put back as the provider returned it (turn store).
    RestoredMessage,
    /// A top-level request parameter was set.
    Request,
    /// A message was moved to another place in the conversation (a tool answer brought up to
    /// the call it answers).
    MovedMessage,
    /// A field (or a Responses item) was put back as the provider sent it (turn store): a
    /// `reasoning_content`, a thought signature, a reasoning item.
    RestoredField,
    /// A field was added: a provider-documented empty stand-in (`reasoning_content: ""`,
    /// `summary: []`, Google's dummy thought signature). Lossy: the provider accepts the request,
    /// but the model sees no reasoning there.
    LossyStandIn,
}

impl ChangeAction {
    /// The action as the report spells it (`"removed_block"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ChangeAction::RemovedBlock => "removed_block",
            ChangeAction::InsertedBlock => "inserted_block",
            ChangeAction::EditedBlock => "edited_block",
            ChangeAction::MovedBlock => "moved_block",
            ChangeAction::RemovedField => "removed_field",
            ChangeAction::RemovedMessage => "removed_message",
            ChangeAction::InsertedMessage => "inserted_message",
            ChangeAction::MergedMessage => "merged_message",
            ChangeAction::RestoredMessage => "restored_message",
            ChangeAction::RestoredField => "restored_field",
            ChangeAction::Request => "request",
            ChangeAction::MovedMessage => "moved_message",
            ChangeAction::LossyStandIn => "lossy_stand_in",
        }
    }
}

impl std::fmt::Display for ChangeAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ChangeAction {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_their_strings() {
        for &id in RuleId::ALL {
            assert_eq!(RuleId::parse(id.as_str()), Some(id));
            let json = serde_json::to_string(&id).expect("serialises");
            assert_eq!(json, format!("\"{id}\""));
            assert_eq!(serde_json::from_str::<RuleId>(&json).expect("parses"), id);
        }
        assert_eq!(RuleId::parse("config"), None);
        assert!("AN-99".parse::<RuleId>().is_err());
    }

    #[test]
    fn only_cfg_ids_are_config_and_three_ids_are_no_rules() {
        let config: Vec<&str> = RuleId::ALL
            .iter()
            .filter(|r| r.is_config())
            .map(|r| r.as_str())
            .collect();
        assert!(config.iter().all(|id| id.starts_with("CFG-")), "{config:?}");
        assert_eq!(
            config.len(),
            RuleId::ALL
                .iter()
                .filter(|r| r.as_str().starts_with("CFG-"))
                .count()
        );
        assert!(!RuleId::An08.is_config() && RuleId::Cfg01.is_config());
        let not_rules: Vec<&str> = RuleId::ALL
            .iter()
            .filter(|r| !r.is_rule())
            .map(|r| r.as_str())
            .collect();
        assert_eq!(
            not_rules,
            [
                RuleId::Recover.as_str(),
                RuleId::Unchecked.as_str(),
                RuleId::Store.as_str()
            ]
        );
        assert_eq!(RuleId::join(&[RuleId::An08, RuleId::An09]), "AN-08, AN-09");
        assert_eq!(RuleId::join(&[]), "");
        assert_eq!(RuleId::An05, "AN-05");
        assert_eq!("AN-05", RuleId::An05);
        assert!(RuleId::An05 == *"AN-05" && RuleId::An05 != *"AN-06");
        assert_ne!(RuleId::An05, "AN-04");
    }

    #[test]
    fn actions_compare_with_their_strings() {
        let all = [
            (ChangeAction::RemovedBlock, "removed_block"),
            (ChangeAction::InsertedBlock, "inserted_block"),
            (ChangeAction::EditedBlock, "edited_block"),
            (ChangeAction::MovedBlock, "moved_block"),
            (ChangeAction::RemovedField, "removed_field"),
            (ChangeAction::RemovedMessage, "removed_message"),
            (ChangeAction::InsertedMessage, "inserted_message"),
            (ChangeAction::MergedMessage, "merged_message"),
            (ChangeAction::RestoredMessage, "restored_message"),
            (ChangeAction::RestoredField, "restored_field"),
            (ChangeAction::Request, "request"),
            (ChangeAction::LossyStandIn, "lossy_stand_in"),
        ];
        for (a, s) in all {
            assert_eq!(a, s);
            assert_ne!(a, "removed");
            assert_eq!(a.to_string(), s);
            assert_eq!(serde_json::to_string(&a).ok(), Some(format!("\"{s}\"")));
        }
    }

    #[test]
    fn actions_serialise_as_before() {
        assert_eq!(
            serde_json::to_string(&ChangeAction::RemovedBlock).expect("serialises"),
            "\"removed_block\""
        );
        assert_eq!(ChangeAction::MergedMessage.as_str(), "merged_message");
    }

    /// A rule id compares equal to its own string only, from either side. Kills
    /// `<impl PartialEq<RuleId> for &str>::eq` replaced with `true`, under which every string
    /// equalled every id.
    #[test]
    fn a_string_equals_only_its_own_rule_id() {
        assert!("AN-02" == RuleId::An02);
        assert!("AN-01" != RuleId::An02);
        assert!("an-02" != RuleId::An02);
        assert!(RuleId::An02 == "AN-02" && RuleId::An02 != "AN-01");
    }
}
