//! The rules, in the order the pipeline runs them.
//!
//! Order is deliberate: restoring from the store comes first (it brings back what later rules
//! would otherwise "repair"); then signatures and schema (whole-block removals); then structure
//! (trailing thinking first, since removing it can leave a whitespace lead-in that is no longer
//! one; then empty blocks, empty messages, the first message, merges); then pairing (which may add a user
//! message); then trailing and ordering rules for thinking; then the trailing assistant message;
//! then the open tool loop (AN-16, which may change the thinking mode); then prefix binding (which
//! must see every edit made before it); and last the request settings, checked as they will be
//! sent.

pub mod config;
pub mod gemini;
pub mod pairing;
pub mod structure;
pub mod thinking;

use turnkeeper_model::{Draft, Format};

use crate::ctx::{Ctx, Sink};
use crate::id::RuleId;

/// A rule: an id-bearing name and the function that finds (and, with `Sink::apply`, repairs).
#[derive(Clone, Copy)]
pub struct Rule {
    /// A short name.
    pub name: &'static str,
    /// The rule ids from api-rules.md it covers.
    pub ids: &'static [RuleId],
    /// The formats it applies to; the pipeline skips it for others.
    pub formats: &'static [Format],
    /// The function.
    pub run: fn(&mut Ctx<'_>, &mut Draft<'_, '_>, &mut Sink),
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("name", &self.name)
            .field("ids", &self.ids)
            .finish()
    }
}

/// Every rule, in running order.
pub const RULES: &[Rule] = &[
    Rule {
        name: "restore",
        ids: &[RuleId::An22],
        formats: &[Format::Anthropic],
        run: thinking::an22_restore,
    },
    Rule {
        name: "signatures",
        ids: &[RuleId::An23, RuleId::An06],
        formats: &[Format::Anthropic],
        run: thinking::an23_signatures,
    },
    Rule {
        name: "schema",
        ids: &[RuleId::An06],
        formats: &[Format::Anthropic],
        run: structure::an06_schema,
    },
    Rule {
        name: "trailing-thinking",
        ids: &[RuleId::An19],
        formats: &[Format::Anthropic],
        run: thinking::an19_trailing,
    },
    Rule {
        name: "empty-text",
        ids: &[RuleId::An05],
        formats: &[Format::Anthropic],
        run: structure::an05_empty_text,
    },
    Rule {
        name: "gemini-empty",
        ids: &[RuleId::Gm13],
        formats: &[Format::Gemini],
        run: gemini::gm13_empty,
    },
    Rule {
        name: "gemini-roles",
        ids: &[RuleId::Gm12],
        formats: &[Format::Gemini],
        run: gemini::gm12_roles,
    },
    Rule {
        name: "empty-messages",
        ids: &[RuleId::An04],
        formats: &[Format::Anthropic],
        run: structure::an04_empty_messages,
    },
    Rule {
        name: "first-user",
        ids: &[RuleId::An01],
        formats: &[Format::Anthropic],
        run: structure::an01_first_user,
    },
    Rule {
        name: "same-role",
        ids: &[RuleId::An02],
        formats: &[Format::Anthropic, Format::Gemini],
        run: structure::an02_same_role,
    },
    Rule {
        name: "server-tools",
        ids: &[RuleId::An15],
        formats: &[Format::Anthropic],
        run: pairing::an15_server_tools,
    },
    Rule {
        name: "pairing",
        ids: &[
            RuleId::An08,
            RuleId::An09,
            RuleId::An10,
            RuleId::An11,
            RuleId::Gm03,
            RuleId::Gm09,
            RuleId::Gm10,
        ],
        formats: &[Format::Anthropic, Format::Gemini],
        run: pairing::an08_pairing,
    },
    Rule {
        name: "first-user-after-pairing",
        ids: &[RuleId::An01],
        formats: &[Format::Anthropic],
        run: structure::an01_after_pairing,
    },
    Rule {
        name: "tool-ids",
        ids: &[RuleId::An12],
        formats: &[Format::Anthropic],
        run: pairing::an12_tool_ids,
    },
    Rule {
        name: "thinking-first",
        ids: &[RuleId::An18],
        formats: &[Format::Anthropic],
        run: thinking::an18_thinking_first,
    },
    Rule {
        name: "prefill",
        ids: &[RuleId::An03, RuleId::An20],
        formats: &[Format::Anthropic],
        run: structure::an03_prefill,
    },
    Rule {
        name: "open-loop",
        ids: &[RuleId::An16],
        formats: &[Format::Anthropic],
        run: thinking::an16_open_loop,
    },
    Rule {
        name: "gemini-signatures",
        ids: &[RuleId::Gm01],
        formats: &[Format::Gemini],
        run: gemini::gm01_signatures,
    },
    Rule {
        name: "prefix-binding",
        ids: &[RuleId::An25],
        formats: &[Format::Anthropic],
        run: thinking::an25_prefix,
    },
    Rule {
        name: "config",
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
        ],
        formats: &[Format::Anthropic],
        run: config::config,
    },
];
