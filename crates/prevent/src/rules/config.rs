//! Request settings the API rejects before it reads the transcript (api-rules.md §1.2,
//! "Related request-configuration errors"). These are findings with the fix in the report; they
//! are the caller's settings, so `repair` does not change them.

use turnkeeper_model::Draft;

use crate::ctx::{Ctx, Sink};
use crate::finding::Severity;
use crate::id::RuleId;
use crate::profile::Mode;

/// The thinking mode, budget, `max_tokens`, sampling and `tool_choice` checks.
pub fn config(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let t = d.transcript();
    let m = &t.meta;
    let p = &ctx.profile;
    let model = if p.model.is_empty() {
        "this model".to_owned()
    } else {
        format!("'{}'", p.model)
    };
    // Settings a rule already replaced (AN-16 disabling thinking) are checked as they will be sent.
    let thinking_replaced = d.top_edits().iter().any(|e| e.key == "thinking");
    if !thinking_replaced {
        match ctx.requested_mode {
            Some(Mode::Manual) if !p.thinking => {
                s.find_param(RuleId::Cfg01, Severity::Error, "thinking", format!("{model} does not support thinking."), Some("remove the `thinking` parameter"));
            }
            Some(Mode::Manual) if !p.manual_ok => s.find_param(RuleId::Cfg02, Severity::Error, "thinking.type",
                "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.",
                Some("use `{\"type\":\"adaptive\"}`")),
            Some(Mode::Adaptive) if !p.adaptive_ok => s.find_param(RuleId::Cfg03, Severity::Error, "thinking.type",
                "adaptive thinking is not supported on this model", Some("use `{\"type\":\"enabled\",\"budget_tokens\":N}`")),
            Some(Mode::Off) if !p.disabled_ok => s.find_param(RuleId::Cfg04, Severity::Error, "thinking.type",
                format!("{model} cannot run with thinking disabled"), Some("omit `thinking` or use adaptive")),
            _ => {}
        }
        if ctx.requested_mode == Some(Mode::Manual) {
            let budget = m.thinking.budget_tokens;
            match budget {
                Some(b) if b < 1024 => s.find_param(
                    RuleId::Cfg05,
                    Severity::Error,
                    "thinking.budget_tokens",
                    "thinking.budget_tokens: Input should be greater than or equal to 1024",
                    Some("set `budget_tokens` to at least 1024"),
                ),
                None => s.find_param(
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
                    s.find_param(
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
                s.find_param(
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
            s.find_param(
                RuleId::Cfg09,
                Severity::Error,
                "temperature",
                "`temperature` may only be set to 1 when thinking is enabled",
                Some("remove `temperature` or set it to 1"),
            );
        }
        if top_k.as_deref().is_some_and(|v| v != "null") {
            s.find_param(
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
            s.find_param(
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
        s.find_param(
            RuleId::Cfg12,
            Severity::Error,
            "tool_choice",
            "Thinking may not be enabled when tool_choice forces tool use.",
            Some("use `tool_choice: auto` (or none) with thinking"),
        );
    }
}
