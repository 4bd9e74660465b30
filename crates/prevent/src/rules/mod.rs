//! The rule catalogue: one rule a file, named by its id, in the order the pipeline runs them.
//!
//! Each file's module documentation says what the API requires (with the exact error text and
//! its source), what the repair does and why it is safe; its tests sit beside it. `docs/rules.md`
//! is generated from those docs (`cargo xtask rules`). A rule gets one handle, the
//! [`Fixer`]: it reads the draft through it and makes every change through it, so no
//! change goes unreported and `check` changes nothing. No rule file imports another; what they
//! share is in [`common`], and effects a repair has on other rules are found by those rules, in
//! this pass or the next (`repair` runs the pipeline until a pass changes nothing).
//!
//! Rules look at the messages from [`Ctx::horizon`] on: behind a threshold `compaction` block the
//! API ignores everything before it (api-rules-2026-11.md AN-34), so nothing there is reported or
//! edited.
//!
//! Order is deliberate: restoring from the store comes first (it brings back what later rules
//! would otherwise "repair"); then signatures and schema (whole-block removals); then structure
//! (trailing thinking first, since removing it can leave a whitespace lead-in that is no longer
//! one; then empty blocks, empty messages, the first message, merges); then pairing (which may add
//! a user message); then tool ids and thinking order; then the trailing assistant message; then
//! the open tool loop (AN-16, which may change the thinking mode); then prefix binding (which
//! must see every edit made before it); and last the request settings, checked as they will be
//! sent.

pub(crate) mod common;

pub(crate) mod an01_first_user;
pub(crate) mod an02_same_role;
pub(crate) mod an03_prefill;
pub(crate) mod an04_empty_messages;
pub(crate) mod an05_empty_text;
pub(crate) mod an06_schema;
pub(crate) mod an07_cache_breakpoints;
pub(crate) mod an08_tool_pairing;
pub(crate) mod an12_tool_ids;
pub(crate) mod an15_server_tools;
pub(crate) mod an16_open_loop;
pub(crate) mod an18_thinking_first;
pub(crate) mod an19_trailing_thinking;
pub(crate) mod an20_disabled_final_thinking;
pub(crate) mod an22_restore;
pub(crate) mod an23_signatures;
pub(crate) mod an25_prefix_binding;
pub(crate) mod an30_system_placement;
pub(crate) mod an37_tool_references;
pub(crate) mod br01_reasoning_first;
pub(crate) mod br04_null_reasoning_text;
pub(crate) mod br05_deepseek_unsigned;
pub(crate) mod br06_reasoning_only;
pub(crate) mod br08_tool_config;
pub(crate) mod br10_forced_tool_choice;
pub(crate) mod br11_tool_answers;
pub(crate) mod br12_orphan_results;
pub(crate) mod br13_blank_text;
pub(crate) mod br14_empty_message;
pub(crate) mod br15_s3_documents;
pub(crate) mod cfg_request_settings;
pub(crate) mod cx02_system_messages;
pub(crate) mod ds03_deepseek_reasoning;
pub(crate) mod gm01_thought_signatures;
pub(crate) mod gm12_roles;
pub(crate) mod gm13_empty;
pub(crate) mod gm18_chat_signatures;
pub(crate) mod km01_kimi_reasoning;
pub(crate) mod oa01_tool_answers;
pub(crate) mod oa02_orphan_tool;
pub(crate) mod oa03_empty_assistant;
pub(crate) mod oa07_openai_reasoning_fields;
pub(crate) mod or01_orphan_reasoning;
pub(crate) mod or02_item_ids;
pub(crate) mod or03_store_false;
pub(crate) mod or04_foreign_encrypted;
pub(crate) mod or05_call_pairing;
pub(crate) mod or11_reasoning_summary;
pub(crate) mod or12_reasoning_content;
pub(crate) mod or13_no_reasoning_model;
pub(crate) mod or14_duplicate_ids;
pub(crate) mod or17_restore_reasoning;

use turnkeeper_model::Format;

use crate::ctx::Ctx;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::wire::Provider;

/// A rule: its file, the ids it reports, the formats it applies to, and the function that finds
/// (and, through its [`Fixer`], repairs).
#[derive(Clone, Copy)]
pub struct Rule {
    /// The file under `crates/prevent/src/rules/`, without `.rs`.
    pub file: &'static str,
    /// The ids it reports.
    pub ids: &'static [RuleId],
    /// The formats it applies to; the pipeline skips it for others.
    pub formats: &'static [Format],
    /// The function.
    pub run: fn(&mut Ctx<'_>, &mut Fixer<'_, '_>),
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("file", &self.file)
            .field("ids", &self.ids)
            .finish()
    }
}

const ANTHROPIC: &[Format] = &[Format::Anthropic];
const GEMINI: &[Format] = &[Format::Gemini];
const BOTH: &[Format] = &[Format::Anthropic, Format::Gemini];

/// Every rule, in running order.
pub const RULES: &[Rule] = &[
    Rule {
        file: "an22_restore",
        ids: &[RuleId::An22],
        formats: ANTHROPIC,
        run: an22_restore::run,
    },
    Rule {
        file: "an23_signatures",
        ids: &[RuleId::An23],
        formats: ANTHROPIC,
        run: an23_signatures::run,
    },
    Rule {
        file: "an06_schema",
        ids: &[RuleId::An06],
        formats: ANTHROPIC,
        run: an06_schema::run,
    },
    Rule {
        file: "an19_trailing_thinking",
        ids: &[RuleId::An19],
        formats: ANTHROPIC,
        run: an19_trailing_thinking::run,
    },
    Rule {
        file: "an05_empty_text",
        ids: &[RuleId::An05],
        formats: ANTHROPIC,
        run: an05_empty_text::run,
    },
    Rule {
        file: "gm13_empty",
        ids: &[RuleId::Gm13],
        formats: GEMINI,
        run: gm13_empty::run,
    },
    Rule {
        file: "gm12_roles",
        ids: &[RuleId::Gm12],
        formats: GEMINI,
        run: gm12_roles::run,
    },
    Rule {
        file: "an04_empty_messages",
        ids: &[RuleId::An04],
        formats: ANTHROPIC,
        run: an04_empty_messages::run,
    },
    Rule {
        file: "cx02_system_messages",
        ids: &[RuleId::Cx02],
        formats: ANTHROPIC,
        run: cx02_system_messages::run,
    },
    Rule {
        file: "an30_system_placement",
        ids: &[RuleId::An30],
        formats: ANTHROPIC,
        run: an30_system_placement::run,
    },
    Rule {
        file: "an01_first_user",
        ids: &[RuleId::An01],
        formats: ANTHROPIC,
        run: an01_first_user::run,
    },
    Rule {
        file: "an02_same_role",
        ids: &[RuleId::An02],
        formats: BOTH,
        run: an02_same_role::run,
    },
    Rule {
        file: "an15_server_tools",
        ids: &[RuleId::An15],
        formats: ANTHROPIC,
        run: an15_server_tools::run,
    },
    Rule {
        file: "an37_tool_references",
        ids: &[RuleId::An37],
        formats: ANTHROPIC,
        run: an37_tool_references::run,
    },
    Rule {
        file: "an08_tool_pairing",
        ids: &[
            RuleId::An08,
            RuleId::An09,
            RuleId::An10,
            RuleId::An11,
            RuleId::Gm03,
            RuleId::Gm09,
            RuleId::Gm10,
        ],
        formats: BOTH,
        run: an08_tool_pairing::run,
    },
    Rule {
        file: "an12_tool_ids",
        ids: &[RuleId::An12, RuleId::An46],
        formats: ANTHROPIC,
        run: an12_tool_ids::run,
    },
    Rule {
        file: "an18_thinking_first",
        ids: &[RuleId::An18],
        formats: ANTHROPIC,
        run: an18_thinking_first::run,
    },
    Rule {
        file: "an03_prefill",
        ids: &[RuleId::An03],
        formats: ANTHROPIC,
        run: an03_prefill::run,
    },
    Rule {
        file: "an20_disabled_final_thinking",
        ids: &[RuleId::An20],
        formats: ANTHROPIC,
        run: an20_disabled_final_thinking::run,
    },
    Rule {
        file: "an16_open_loop",
        ids: &[RuleId::An16],
        formats: ANTHROPIC,
        run: an16_open_loop::run,
    },
    Rule {
        file: "gm01_thought_signatures",
        ids: &[RuleId::Gm01],
        formats: GEMINI,
        run: gm01_thought_signatures::run,
    },
    Rule {
        file: "an25_prefix_binding",
        ids: &[RuleId::An25],
        formats: ANTHROPIC,
        run: an25_prefix_binding::run,
    },
    Rule {
        file: "an07_cache_breakpoints",
        ids: &[RuleId::An07],
        formats: ANTHROPIC,
        run: an07_cache_breakpoints::run,
    },
    Rule {
        file: "cfg_request_settings",
        ids: &[
            RuleId::Cfg01,
            RuleId::Cfg02,
            RuleId::Cfg03,
            RuleId::Cfg04,
            RuleId::Cfg05,
            RuleId::Cfg06,
            RuleId::Cfg07,
            RuleId::Cfg08,
            RuleId::Cfg09,
            RuleId::Cfg10,
            RuleId::Cfg11,
            RuleId::Cfg12,
            RuleId::Cfg13,
            RuleId::Cfg14,
            RuleId::Cfg15,
            RuleId::Cfg16,
            RuleId::Cfg17,
            RuleId::Cfg18,
        ],
        formats: ANTHROPIC,
        run: cfg_request_settings::run,
    },
];

/// What a rule's repair is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fix {
    /// Loses nothing the provider would read (a removal of what answers nothing, a move).
    Safe,
    /// A provider-documented empty stand-in: accepted, but the model sees no reasoning there.
    /// Only on that provider's target, and off with `Policy::empty_stand_ins = false`.
    Lossy,
    /// Reported only.
    None,
}

/// A rule of the OpenAI-style families ([`crate::wire`]): its file, the ids it reports, the
/// formats and providers it applies to (no provider: every one), and what its repair is. The
/// pipeline order is this table's order; each family's driver calls its rules' `run`.
#[derive(Clone, Copy, Debug)]
pub struct WireRule {
    /// The file under `crates/prevent/src/rules/`, without `.rs`.
    pub file: &'static str,
    /// The ids it reports.
    pub ids: &'static [RuleId],
    /// The formats it applies to.
    pub formats: &'static [Format],
    /// The providers it applies to; empty: every provider (tool pairing, empty messages).
    pub providers: &'static [Provider],
    /// What its repair is.
    pub fix: Fix,
}

const CHAT: &[Format] = &[Format::Chat];
const CONVERSE: &[Format] = &[Format::Converse];
const RESPONSES: &[Format] = &[Format::Responses];
/// OpenAI's Responses rules: errors for OpenAI (and a body naming no model), warnings for xAI.
const OPENAI_RESPONSES: &[Provider] = &[Provider::OpenAi, Provider::Xai];

/// Every rule of the OpenAI-style families, in running order.
pub const WIRE_RULES: &[WireRule] = &[
    WireRule {
        file: "oa01_tool_answers",
        ids: &[RuleId::Oa01],
        formats: CHAT,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "oa02_orphan_tool",
        ids: &[RuleId::Oa02],
        formats: CHAT,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "oa03_empty_assistant",
        ids: &[RuleId::Oa03],
        formats: CHAT,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "ds03_deepseek_reasoning",
        ids: &[RuleId::Ds03],
        formats: CHAT,
        providers: &[Provider::DeepSeek],
        fix: Fix::Lossy,
    },
    WireRule {
        file: "km01_kimi_reasoning",
        ids: &[RuleId::Km01],
        formats: CHAT,
        providers: &[Provider::Kimi],
        fix: Fix::Lossy,
    },
    WireRule {
        file: "gm18_chat_signatures",
        ids: &[RuleId::Gm18],
        formats: CHAT,
        providers: &[Provider::Gemini],
        fix: Fix::Lossy,
    },
    WireRule {
        file: "oa07_openai_reasoning_fields",
        ids: &[RuleId::Oa07],
        formats: CHAT,
        providers: &[Provider::OpenAi],
        fix: Fix::None,
    },
    WireRule {
        file: "or13_no_reasoning_model",
        ids: &[RuleId::Or13],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::Safe,
    },
    WireRule {
        file: "or12_reasoning_content",
        ids: &[RuleId::Or12],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::Safe,
    },
    WireRule {
        file: "or04_foreign_encrypted",
        ids: &[RuleId::Or04],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::Safe,
    },
    WireRule {
        file: "or03_store_false",
        ids: &[RuleId::Or03],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::Safe,
    },
    WireRule {
        file: "or17_restore_reasoning",
        ids: &[RuleId::Or17],
        formats: RESPONSES,
        providers: &[Provider::OpenAi],
        fix: Fix::Safe,
    },
    WireRule {
        file: "or01_orphan_reasoning",
        ids: &[RuleId::Or01],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::Safe,
    },
    WireRule {
        file: "or05_call_pairing",
        ids: &[RuleId::Or05],
        formats: RESPONSES,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "or02_item_ids",
        ids: &[RuleId::Or02],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::Safe,
    },
    WireRule {
        file: "or11_reasoning_summary",
        ids: &[RuleId::Or11],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::Lossy,
    },
    WireRule {
        file: "or14_duplicate_ids",
        ids: &[RuleId::Or14],
        formats: RESPONSES,
        providers: OPENAI_RESPONSES,
        fix: Fix::None,
    },
    WireRule {
        file: "br01_reasoning_first",
        ids: &[RuleId::Br01],
        formats: CONVERSE,
        providers: &[Provider::Anthropic],
        fix: Fix::Safe,
    },
    WireRule {
        file: "br04_null_reasoning_text",
        ids: &[RuleId::Br04],
        formats: CONVERSE,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "br05_deepseek_unsigned",
        ids: &[RuleId::Br05],
        formats: CONVERSE,
        providers: &[Provider::DeepSeek],
        fix: Fix::Safe,
    },
    WireRule {
        file: "br06_reasoning_only",
        ids: &[RuleId::Br06],
        formats: CONVERSE,
        providers: &[Provider::Anthropic],
        fix: Fix::None,
    },
    WireRule {
        file: "br08_tool_config",
        ids: &[RuleId::Br08],
        formats: CONVERSE,
        providers: &[],
        fix: Fix::None,
    },
    WireRule {
        file: "br10_forced_tool_choice",
        ids: &[RuleId::Br10],
        formats: CONVERSE,
        providers: &[Provider::Anthropic],
        fix: Fix::None,
    },
    WireRule {
        file: "br11_tool_answers",
        ids: &[RuleId::Br11],
        formats: CONVERSE,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "br12_orphan_results",
        ids: &[RuleId::Br12],
        formats: CONVERSE,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "br13_blank_text",
        ids: &[RuleId::Br13],
        formats: CONVERSE,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "br14_empty_message",
        ids: &[RuleId::Br14],
        formats: CONVERSE,
        providers: &[],
        fix: Fix::Safe,
    },
    WireRule {
        file: "br15_s3_documents",
        ids: &[RuleId::Br15],
        formats: CONVERSE,
        providers: &[],
        fix: Fix::None,
    },
];

/// The rule that reports `id`, if any.
pub fn rule_for(id: RuleId) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.ids.contains(&id))
}

/// The wire-family rule that reports `id`, if any.
pub fn wire_rule_for(id: RuleId) -> Option<&'static WireRule> {
    WIRE_RULES.iter().find(|r| r.ids.contains(&id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_id_has_exactly_one_rule() {
        for &id in RuleId::ALL.iter().filter(|id| id.is_rule()) {
            let n = RULES.iter().filter(|r| r.ids.contains(&id)).count()
                + WIRE_RULES.iter().filter(|r| r.ids.contains(&id)).count();
            assert_eq!(n, 1, "{id} is reported by {n} rules");
        }
        assert!(rule_for(RuleId::Recover).is_none());
    }

    /// `rule_for` names the rule that reports an id, also one of the several ids a rule
    /// reports. Kills `rule_for` replaced with `None`.
    #[test]
    fn rule_for_names_the_file_that_reports_an_id() {
        let file = |id| rule_for(id).map(|r| r.file);
        assert_eq!(file(RuleId::An22), Some("an22_restore"));
        assert_eq!(file(RuleId::An10), Some("an08_tool_pairing"));
        assert_eq!(file(RuleId::An46), Some("an12_tool_ids"));
        assert_eq!(file(RuleId::Cfg18), Some("cfg_request_settings"));
    }
}
