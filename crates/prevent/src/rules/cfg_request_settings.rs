//! ## CFG-01: thinking requested on a model that has none
//!
//! `'claude-3-5-haiku-20241022' does not support thinking.` Source: api-rules.md §1.2, "Related
//! request-configuration errors". Fix: remove the `thinking` parameter.
//!
//! ## CFG-02: manual thinking on an adaptive-only model
//!
//! `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and
//! "output_config.effort" to control thinking behavior.` Source: api-rules.md §1.2 (capability
//! matrix, 4.7 and later); api-rules-2026-11.md §1.1 for Opus 5.5, Sonnet 5.5 and Haiku 5.5.
//! Fix: `{"type":"adaptive"}`.
//!
//! ## CFG-03: adaptive thinking on a model without it
//!
//! Source: api-rules.md §1.4 capability matrix (models before 4.6 take only `enabled`). The
//! exact error text is not recorded. Fix: `{"type":"enabled","budget_tokens":N}`.
//!
//! ## CFG-04: thinking disabled on a model that requires it
//!
//! Opus 5.5: `"thinking.type.disabled" is not supported for this model.` Source: api-rules.md
//! §1.4; api-rules-2026-11.md §1.1. Fix: omit `thinking`, or use adaptive.
//!
//! ## CFG-05: budget_tokens below 1024
//!
//! `thinking.budget_tokens: Input should be greater than or equal to 1024` (errors-traps.md
//! quotes the path as `thinking.enabled.budget_tokens`). Source: api-rules.md §1.2 A.
//!
//! ## CFG-06: manual thinking without budget_tokens
//!
//! `thinking.budget_tokens: Field required`. Source: api-rules.md §1.2 A (the schema's required
//! field).
//!
//! ## CFG-07: max_tokens not above budget_tokens
//!
//! `` `max_tokens` must be greater than `thinking.budget_tokens` `` (without interleaved
//! thinking, whose beta lets the budget exceed `max_tokens`). Source: api-rules.md §1.2 A; the
//! recorded 400 of `anthropic/pydantic-ai--test_anthropic-test_pause_turn_web_search_vcr--1879690e95__3`.
//!
//! ## CFG-08: a sampling parameter on a model that rejects any
//!
//! On Fable, Mythos, Opus 4.7 and later and Sonnet 5, any non-default `temperature`, `top_p` or
//! `top_k` is rejected on every request. Source: api-rules.md §1.2, "Sampling (newer models)";
//! Sonnet 5.5 and Haiku 5.5 in api-rules-2026-11.md §1.1.
//!
//! ## CFG-09: thinking on, temperature other than 1
//!
//! `` `temperature` may only be set to 1 when thinking is enabled ``. Source: api-rules.md §1.2,
//! "Sampling (older models)".
//!
//! ## CFG-10: thinking on, top_k set
//!
//! With thinking on, `top_k` is not allowed. Source: api-rules.md §1.2, "Sampling (older
//! models)"; the exact error text is not recorded.
//!
//! ## CFG-11: thinking on, top_p outside 0.95..1
//!
//! With thinking on, `top_p` must be in 0.95–1. Source: api-rules.md §1.2, "Sampling (older
//! models)"; the exact error text is not recorded.
//!
//! ## CFG-12: thinking on, tool_choice forces tool use
//!
//! `Thinking may not be enabled when tool_choice forces tool use.` (manual thinking; adaptive on
//! Fable 5.1 and Mythos 5.1). Opus 5.5 and Sonnet 5.5 refuse forced tool use always:
//! `tool_choice: type "tool" and "any" are not supported for this model.` Source: api-rules.md
//! §1.2; api-rules-2026-11.md §1.2.
//!
//! **Repair (all CFG ids).** None: these are the caller's settings, rejected before the API reads
//! the transcript. Each finding carries the fix; `repair` leaves the request as it is and the
//! finding stays in `findings_left`.

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::profile::Mode;

/// The thinking mode, budget, `max_tokens`, sampling and `tool_choice` checks.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let t = f.transcript();
    let m = &t.meta;
    let p = &ctx.profile;
    let model = if p.model.is_empty() {
        "this model".to_owned()
    } else {
        format!("'{}'", p.model)
    };
    // Settings a rule already replaced (AN-16 disabling thinking) are checked as they will be sent.
    let thinking_replaced = f.top_edits().iter().any(|e| e.key == "thinking");
    if !thinking_replaced {
        match ctx.requested_mode {
            Some(Mode::Manual) if !p.thinking => {
                f.find_param(RuleId::Cfg01, Severity::Error, "thinking", format!("{model} does not support thinking."), Some("remove the `thinking` parameter"));
            }
            Some(Mode::Manual) if !p.manual_ok => f.find_param(RuleId::Cfg02, Severity::Error, "thinking.type",
                "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.",
                Some("use `{\"type\":\"adaptive\"}`")),
            Some(Mode::Adaptive) if !p.adaptive_ok => f.find_param(RuleId::Cfg03, Severity::Error, "thinking.type",
                "adaptive thinking is not supported on this model", Some("use `{\"type\":\"enabled\",\"budget_tokens\":N}`")),
            Some(Mode::Off) if !p.disabled_ok => f.find_param(RuleId::Cfg04, Severity::Error, "thinking.type",
                format!("{model} cannot run with thinking disabled"), Some("omit `thinking` or use adaptive")),
            _ => {}
        }
        if ctx.requested_mode == Some(Mode::Manual) {
            let budget = m.thinking.budget_tokens;
            match budget {
                Some(b) if b < 1024 => f.find_param(
                    RuleId::Cfg05,
                    Severity::Error,
                    "thinking.budget_tokens",
                    "thinking.budget_tokens: Input should be greater than or equal to 1024",
                    Some("set `budget_tokens` to at least 1024"),
                ),
                None => f.find_param(
                    RuleId::Cfg06,
                    Severity::Error,
                    "thinking.budget_tokens",
                    "thinking.budget_tokens: Field required",
                    Some("set `budget_tokens` (at least 1024, below `max_tokens`)"),
                ),
                _ => {}
            }
            let interleaved = ctx
                .betas
                .iter()
                .any(|b| b.starts_with("interleaved-thinking"));
            if let (Some(b), Some(mt)) = (budget, m.max_tokens)
                && mt <= b
                && !interleaved
            {
                {
                    f.find_param(
                        RuleId::Cfg07,
                        Severity::Error,
                        "max_tokens",
                        "`max_tokens` must be greater than `thinking.budget_tokens`",
                        Some(&format!(
                            "raise `max_tokens` above {b}, or lower the budget"
                        )),
                    );
                }
            }
        }
    }
    let on = ctx.mode != Mode::Off;
    let value = |sp: Option<turnkeeper_model::Span>| sp.map(|x| x.get(t.src).trim().to_owned());
    let temp = value(m.temperature);
    let top_p = value(m.top_p);
    let top_k = value(m.top_k);
    if p.strict_sampling {
        for (name, v) in [("temperature", &temp), ("top_p", &top_p), ("top_k", &top_k)] {
            if v.as_deref().is_some_and(|v| v != "null") {
                f.find_param(
                    RuleId::Cfg08,
                    Severity::Error,
                    name,
                    format!("{model} rejects any non-default `{name}`"),
                    Some(&format!("remove `{name}`")),
                );
            }
        }
    } else if on {
        if temp
            .as_deref()
            .is_some_and(|v| v != "null" && v.parse::<f64>().is_ok_and(|x| x != 1.0))
        {
            f.find_param(
                RuleId::Cfg09,
                Severity::Error,
                "temperature",
                "`temperature` may only be set to 1 when thinking is enabled",
                Some("remove `temperature` or set it to 1"),
            );
        }
        if top_k.as_deref().is_some_and(|v| v != "null") {
            f.find_param(
                RuleId::Cfg10,
                Severity::Error,
                "top_k",
                "`top_k` is not allowed when thinking is enabled",
                Some("remove `top_k`"),
            );
        }
        if top_p
            .as_deref()
            .and_then(|v| v.parse::<f64>().ok())
            .is_some_and(|x| !(0.95..=1.0).contains(&x))
        {
            f.find_param(
                RuleId::Cfg11,
                Severity::Error,
                "top_p",
                "`top_p` must be between 0.95 and 1 when thinking is enabled",
                Some("set `top_p` to 0.95–1 or remove it"),
            );
        }
    }
    let forced = m
        .tool_choice
        .map(|c| c.decode(t.src))
        .is_some_and(|c| c == "any" || c == "tool");
    if forced
        && (ctx.mode == Mode::Manual
            || (ctx.mode == Mode::Adaptive && !p.forced_tool_choice_adaptive_ok))
    {
        f.find_param(
            RuleId::Cfg12,
            Severity::Error,
            "tool_choice",
            "Thinking may not be enabled when tool_choice forces tool use.",
            Some("use `tool_choice: auto` (or none) with thinking"),
        );
    }
}
