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
//! exact error text is not recorded. Qwen's own Anthropic-compatible endpoint refuses it too
//! (api-rules-2026-11.md CX-01: `Only 'enabled' and 'disabled' are supported for thinking;
//! 'adaptive' is not supported.`, anthropics/claude-code#29531), so a Qwen model with no router
//! in front has no adaptive mode ([`crate::profile_for`]). Fix:
//! `{"type":"enabled","budget_tokens":N}`, the caller's to choose (no budget is made up).
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
//! ## CFG-12: tool_choice forces tool use where it is refused
//!
//! `Thinking may not be enabled when tool_choice forces tool use.` (manual thinking; adaptive on
//! Fable 5.1 and Mythos 5.1). Opus 5.5 and Sonnet 5.5 refuse forced tool use always:
//! `tool_choice: type "tool" and "any" are not supported for this model.` Source: api-rules.md
//! §1.2; api-rules-2026-11.md §1.2.
//!
//! ## CFG-13: between_tools on a model that does not take it
//!
//! Only Sonnet 5.5 accepts `thinking.type: "between_tools"`; Opus 5.5 refuses it with its
//! `enabled`/`disabled` (text assumed: `"thinking.type.between_tools" is not supported for this
//! model.`). Source: api-rules-2026-11.md §1.1.
//!
//! ## CFG-14: a thinking type that takes no other field given one
//!
//! `thinking.disabled.display: Extra inputs are not permitted` (anthropics/claude-code#68797);
//! `between_tools` also takes no other field (`display`, `budget_tokens`, `block_binding`).
//! Source: api-rules-2026-11.md §1.1-1.2.
//!
//! ## CFG-15: effort above high without thinking
//!
//! `output_config.effort 'xhigh' is not supported when thinking is disabled on this model. Use
//! effort 'high' or below, or enable thinking.` (logancyang/obsidian-copilot#2843): Opus 5 and
//! Haiku 5.5 with `disabled`, Sonnet 5.5 with `between_tools` (the profile's
//! `effort_capped_without_thinking`). Source: api-rules-2026-11.md §1.2.
//!
//! ## CFG-16: clear_thinking without thinking on
//!
//! `` `clear_thinking_20251015` strategy requires `thinking` to be enabled `` (adaptive is
//! enough; anthropics/claude-code#11971). Source: api-rules-2026-11.md AN-33.
//!
//! ## CFG-17: clear_thinking not listed first
//!
//! Combined with `clear_tool_uses`, `clear_thinking` must be listed first in
//! `context_management.edits` (context-editing page; the exact text is not recorded). Source:
//! api-rules-2026-11.md AN-33.
//!
//! ## CFG-18: a deferred tool with cache_control
//!
//! `Tool '<name>' cannot have both defer_loading=true and cache_control set. Tools with
//! defer_loading cannot use prompt caching.` (anthropics/claude-code#30920, #86743;
//! router-for-me/CLIProxyAPI#4561). Source: api-rules-2026-11.md AN-37.
//!
//! **Repair.** These are the caller's settings, rejected before the API reads the transcript.
//! Where the fix changes nothing the caller meant, `repair` makes it, reported as a request
//! change: CFG-14 removes the fields `disabled` or `between_tools` does not take (the type the
//! caller chose stays); CFG-17 moves `clear_thinking` to the front of `edits` (the others keep
//! their order); CFG-18 removes `cache_control` from a deferred tool (a cache hint the API
//! refuses there). The others choose between the caller's intents (which model, how much
//! thinking, which sampling): each finding carries the fix, `repair` leaves the request as it
//! is and the finding stays in `findings_left`.

use turnkeeper_model::Transcript;
use turnkeeper_model::edit::object;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::profile::Mode;
use crate::rules::common::{array_elements, replace_element, top_value};

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
                if p.between_tools_ok {
                    "\"thinking.type.disabled\" is not supported for this model. Use \"thinking.type.between_tools\" for the lowest thinking setting, or \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior."
                } else {
                    "\"thinking.type.disabled\" is not supported for this model."
                },
                Some("omit `thinking` or use adaptive")),
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
    if forced && p.forced_tool_choice_refused {
        f.find_param(
            RuleId::Cfg12,
            Severity::Error,
            "tool_choice",
            "tool_choice: type \"tool\" and \"any\" are not supported for this model.",
            Some("use `tool_choice: auto` (or none)"),
        );
    } else if forced
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
    newer_settings(ctx, f);
}

/// The value of top-level key `key` of the request, as written.
fn top<'t>(t: &'t Transcript<'_>, key: &str) -> Option<&'t str> {
    t.meta
        .top_keys
        .iter()
        .find(|(k, _)| k.decode(t.src) == key)
        .map(|(_, v)| v.get(t.src))
}

/// `text` parsed, when it holds `needle` at all (so a request without the feature pays for a
/// substring search, not a parse).
fn parsed_if(text: Option<&str>, needle: &str) -> Option<serde_json::Value> {
    text.filter(|x| x.contains(needle))
        .and_then(|x| serde_json::from_str(x).ok())
}

/// The settings api-rules-2026-11.md adds: `between_tools`, fields the thinking types do not
/// take, effort without thinking, context editing and deferred tools (CFG-13 to CFG-18).
fn newer_settings(ctx: &Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let t = f.transcript();
    let p = &ctx.profile;
    let thinking_replaced = f.top_edits().iter().any(|e| e.key == "thinking");
    let raw_type = if thinking_replaced {
        None
    } else {
        t.thinking_type()
    };
    let ty = raw_type.as_deref();
    if ty == Some("between_tools") && !p.between_tools_ok {
        f.find_param(
            RuleId::Cfg13,
            Severity::Error,
            "thinking.type",
            "\"thinking.type.between_tools\" is not supported for this model.",
            Some("use `{\"type\":\"adaptive\"}` with a low `output_config.effort`"),
        );
    }
    if let Some(ty @ ("between_tools" | "disabled")) = ty
        && let Some(raw) = top(t, "thinking")
        && let Some(serde_json::Value::Object(obj)) = parsed_if(Some(raw), "\"")
    {
        let extra: Vec<&String> = obj.keys().filter(|k| *k != "type").collect();
        for key in &extra {
            f.find_param(
                RuleId::Cfg14,
                Severity::Error,
                &format!("thinking.{key}"),
                format!("thinking.{ty}.{key}: Extra inputs are not permitted"),
                Some(&format!("remove `thinking.{key}`")),
            );
        }
        // The fields mean nothing without thinking: the type the caller chose stays, the
        // other members' bytes too.
        let mut json = raw.to_owned();
        for key in &extra {
            json = object::remove_key(&json, key).unwrap_or(json);
        }
        if !extra.is_empty() && json != raw {
            let names: Vec<&str> = extra.iter().map(|k| k.as_str()).collect();
            f.set_param(
                RuleId::Cfg14,
                "thinking",
                &json,
                &format!(
                    "removed field(s) `thinking.type: \"{ty}\"` does not take: {}",
                    names.join(", ")
                ),
            );
        }
    }
    let accepted_without_thinking = match ty {
        Some("disabled") => p.disabled_ok,
        Some("between_tools") => p.between_tools_ok,
        _ => false,
    };
    if p.effort_capped_without_thinking && accepted_without_thinking {
        let effort = parsed_if(top(t, "output_config"), "effort")
            .and_then(|v| v.get("effort")?.as_str().map(str::to_owned));
        if let Some(e @ ("xhigh" | "max")) = effort.as_deref() {
            f.find_param(
                RuleId::Cfg15,
                Severity::Error,
                "output_config.effort",
                format!("output_config.effort '{e}' is not supported when thinking is disabled on this model. Use effort 'high' or below, or enable thinking."),
                Some("use effort `high` or below, or turn thinking on"),
            );
        }
    }
    if let Some(cm) = parsed_if(top(t, "context_management"), "clear_thinking") {
        let edits = cm
            .get("edits")
            .and_then(|e| e.as_array())
            .cloned()
            .unwrap_or_default();
        let at = edits.iter().position(|e| {
            e.get("type")
                .and_then(|x| x.as_str())
                .is_some_and(|x| x.starts_with("clear_thinking"))
        });
        if let Some(at) = at {
            let name = edits[at]
                .get("type")
                .and_then(|x| x.as_str())
                .unwrap_or("clear_thinking")
                .to_owned();
            if ctx.mode == Mode::Off {
                f.find_param(
                    RuleId::Cfg16,
                    Severity::Error,
                    &format!("context_management.edits[{at}]"),
                    format!("`{name}` strategy requires `thinking` to be enabled"),
                    Some("turn thinking on (adaptive is enough), or drop the edit"),
                );
            }
            if at > 0 {
                f.find_param(
                    RuleId::Cfg17,
                    Severity::Error,
                    &format!("context_management.edits[{at}]"),
                    format!("`{name}` must be listed first in `context_management.edits`"),
                    Some("move it to the front of `edits`"),
                );
                if let Some(cm) = top(t, "context_management")
                    && let Some(moved) = clear_thinking_first(cm, at)
                {
                    f.edit_param(
                        RuleId::Cfg17,
                        "context_management",
                        &moved,
                        "context_management.edits",
                        &format!("moved `{name}` to the front of `context_management.edits` (the other edits keep their order)"),
                    );
                }
            }
        }
    }
    // As they will be sent: AN-07 may have removed breakpoints from them in this pass.
    let tools = top_value(f, "tools");
    let mut cached_deferred: Vec<usize> = Vec::new();
    if let Some(serde_json::Value::Array(list)) = parsed_if(tools.as_deref(), "defer_loading") {
        for (n, tool) in list.iter().enumerate() {
            let deferred = tool.get("defer_loading") == Some(&serde_json::Value::Bool(true));
            if deferred && tool.get("cache_control").is_some_and(|c| !c.is_null()) {
                let name = tool.get("name").and_then(|x| x.as_str()).unwrap_or("");
                f.find_param(
                    RuleId::Cfg18,
                    Severity::Error,
                    &format!("tools[{n}]"),
                    format!("Tool '{name}' cannot have both defer_loading=true and cache_control set. Tools with defer_loading cannot use prompt caching."),
                    Some("remove `cache_control` from the deferred tool (or stop deferring it)"),
                );
                cached_deferred.push(n);
            }
        }
    }
    // A deferred tool is never cached: its breakpoint is a hint the API refuses, and removing
    // it keeps bound thinking valid (api-rules.md AN-25). Later tools first, so the earlier
    // ones' spans stay where they are.
    if let Some(mut json) = tools {
        for &n in cached_deferred.iter().rev() {
            let Some(elements) = array_elements(&json) else {
                break;
            };
            let edited = elements
                .get(n)
                .and_then(|sp| object::remove_key(sp.get(&json), "cache_control"))
                .and_then(|el| replace_element(&json, &elements, n, &el));
            let Some(edited) = edited else { break };
            json = edited;
            f.edit_param(
                RuleId::Cfg18,
                "tools",
                &json,
                &format!("tools[{n}].cache_control"),
                "removed `cache_control` from a tool with `defer_loading: true`, which cannot be cached",
            );
        }
    }
}

/// `context_management` (`cm`, as written) with edit `at` of its `edits` moved to the front,
/// the others in their order and every edit's bytes kept.
fn clear_thinking_first(cm: &str, at: usize) -> Option<String> {
    let edits = object::get(cm, "edits")?;
    let elements = array_elements(edits)?;
    let first = elements.first()?;
    let last = elements.last()?;
    let moved = elements.get(at)?;
    let sep = elements
        .get(1)
        .and_then(|second| edits.get(first.end as usize..second.start as usize))
        .unwrap_or(",");
    let mut order: Vec<&str> = vec![moved.get(edits)];
    order.extend(
        elements
            .iter()
            .enumerate()
            .filter(|(n, _)| *n != at)
            .map(|(_, sp)| sp.get(edits)),
    );
    let mut list = String::with_capacity(edits.len());
    list.push_str(edits.get(..first.start as usize)?);
    list.push_str(&order.join(sep));
    list.push_str(edits.get(last.end as usize..)?);
    object::set_key(cm, "edits", &list)
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, changes, check_case, findings};

    fn settings(model: &str, thinking: &str, extra: &str) -> String {
        body(model, thinking, r#"{"role":"user","content":"q"}"#).replacen(
            "\"max_tokens\":8000,",
            &format!("\"max_tokens\":8000,{extra}"),
            1,
        )
    }

    #[test]
    fn the_5_5_models_refuse_forced_tool_use_whatever_the_thinking() {
        let input = settings("claude-opus-5-5", "", r#""tool_choice":{"type":"any"},"#);
        check_case(
            &input,
            Expect {
                rules: &["CFG-12"],
                after: None,
                left: &["CFG-12"],
            },
        );
        // Haiku 5.5 accepts it (a profile setting: the note's source is community reports).
        let input = settings("claude-haiku-5-5", "", r#""tool_choice":{"type":"any"},"#);
        check_case(
            &input,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    #[test]
    fn between_tools_is_sonnet_5_5_only_and_takes_no_other_field() {
        let bt = r#"{"type":"between_tools"}"#;
        check_case(
            &settings("claude-sonnet-5-5", bt, ""),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
        check_case(
            &settings("claude-opus-5-5", bt, ""),
            Expect {
                rules: &["CFG-13"],
                after: None,
                left: &["CFG-13"],
            },
        );
        // CFG-14 is repaired (the field goes, the type stays); CFG-15, a choice of effort, is
        // the caller's.
        check_case(
            &settings(
                "claude-sonnet-5-5",
                r#"{"type":"between_tools","display":"summarized"}"#,
                r#""output_config":{"effort":"max"},"#,
            ),
            Expect {
                rules: &["CFG-14", "CFG-15"],
                after: Some(&settings(
                    "claude-sonnet-5-5",
                    r#"{"type":"between_tools"}"#,
                    r#""output_config":{"effort":"max"},"#,
                )),
                left: &["CFG-15"],
            },
        );
    }

    /// `display` with thinking disabled (anthropics/claude-code#68797): "thinking.disabled.display:
    /// Extra inputs are not permitted". The field goes, reported as a request change; the
    /// thinking type the caller chose stays.
    #[test]
    fn a_display_on_disabled_thinking_is_removed() {
        let input = settings(
            "claude-sonnet-4-5",
            r#"{"type":"disabled", "display":"omitted"}"#,
            "",
        );
        check_case(
            &input,
            Expect {
                rules: &["CFG-14"],
                after: Some(&settings("claude-sonnet-4-5", r#"{"type":"disabled"}"#, "")),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &crate::Options::default()),
            ["CFG-14 request thinking"]
        );
    }

    /// `clear_thinking` after `clear_tool_uses` (api-rules-2026-11.md AN-33: it "must be listed
    /// first") moves to the front, the other edits in their order and bytes; listed first, the
    /// request passes untouched.
    #[test]
    fn clear_thinking_is_moved_first() {
        let cm = |edits: &str| format!(r#""context_management":{{"edits":[{edits}]}},"#);
        let tools = r#"{"type":"clear_tool_uses_20250919","keep":{"type":"tool_uses","value":3}}"#;
        let other = r#"{"type":"clear_tool_inputs_x"}"#;
        let clear = r#"{"type":"clear_thinking_20251015","keep":"all"}"#;
        let m = crate::rules::common::testing::MANUAL;
        let input = settings(
            "claude-sonnet-4-5",
            m,
            &cm(&format!("{tools}, {other}, {clear}")),
        );
        check_case(
            &input,
            Expect {
                rules: &["CFG-17"],
                after: Some(&settings(
                    "claude-sonnet-4-5",
                    m,
                    &cm(&format!("{clear}, {tools}, {other}")),
                )),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &crate::Options::default()),
            ["CFG-17 request context_management.edits"]
        );
        check_case(
            &settings("claude-sonnet-4-5", m, &cm(&format!("{clear},{tools}"))),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// Adaptive thinking for a Qwen model goes to Qwen's own endpoint, which refuses it
    /// (CX-01): an error, left for the caller (which budget to think with is theirs to say).
    /// Manual thinking passes, and so does adaptive through a router, which speaks for itself.
    #[test]
    fn adaptive_thinking_on_qwen_is_refused() {
        let adaptive = r#"{"type":"adaptive"}"#;
        let input = settings("qwen3-coder-plus", adaptive, "");
        check_case(
            &input,
            Expect {
                rules: &["CFG-03"],
                after: None,
                left: &["CFG-03"],
            },
        );
        assert_eq!(
            findings(&input, &crate::Options::default()),
            ["CFG-03 thinking.type: adaptive thinking is not supported on this model"]
        );
        for ok in [
            settings(
                "qwen3-coder-plus",
                crate::rules::common::testing::MANUAL,
                "",
            ),
            settings("openrouter/qwen/qwen3-coder-plus", adaptive, ""),
            settings("deepseek-v4-pro", adaptive, ""),
        ] {
            check_case(
                &ok,
                Expect {
                    rules: &[],
                    after: None,
                    left: &[],
                },
            );
        }
    }

    /// A forced `tool_choice` with adaptive thinking is refused by a model whose profile says
    /// so (Fable 5.1), and accepted by one whose profile takes it (Haiku 5.5). Kills
    /// `ctx.mode == Mode::Adaptive` turned into `!=` in `run`, under which adaptive thinking
    /// passed with a forced tool choice everywhere.
    #[test]
    fn a_forced_tool_choice_with_adaptive_thinking_is_refused_where_the_profile_says() {
        let forced = r#""tool_choice":{"type":"tool","name":"f"},"#;
        let adaptive = r#"{"type":"adaptive"}"#;
        let input = settings("claude-fable-5-1", adaptive, forced);
        check_case(
            &input,
            Expect {
                rules: &["CFG-12"],
                after: None,
                left: &["CFG-12"],
            },
        );
        assert_eq!(
            findings(&input, &crate::Options::default()),
            ["CFG-12 tool_choice: Thinking may not be enabled when tool_choice forces tool use."]
        );
        check_case(
            &settings("claude-haiku-5-5", adaptive, forced),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// Only a tool that is both deferred and cached is refused: a deferred tool without
    /// `cache_control` and a cached tool that is not deferred are fine beside it. Kills `&&`
    /// turned into `||` in `newer_settings`' CFG-18 test, under which every deferred tool and
    /// every cached tool was reported.
    #[test]
    fn only_a_tool_both_deferred_and_cached_is_refused() {
        let tools = r#""tools":[{"name":"a","input_schema":{"type":"object"},"defer_loading":true},{"name":"b","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}},{"name":"c","input_schema":{"type":"object"},"defer_loading":true,"cache_control":{"type":"ephemeral"}}],"#;
        let input = settings("claude-sonnet-4-5", "", tools);
        assert_eq!(
            findings(&input, &crate::Options::default()),
            [
                "CFG-18 tools[2]: Tool 'c' cannot have both defer_loading=true and cache_control set. Tools with defer_loading cannot use prompt caching."
            ]
        );
        let after = settings(
            "claude-sonnet-4-5",
            "",
            &tools.replacen(
                r#""defer_loading":true,"cache_control":{"type":"ephemeral"}"#,
                r#""defer_loading":true"#,
                1,
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["CFG-18"],
                after: Some(&after),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &crate::Options::default()),
            ["CFG-18 request tools[2].cache_control"]
        );
    }

    /// Settings a rule has already replaced are checked as they will be sent: in the pass where
    /// AN-16 disables thinking for an open tool loop, the budget of the manual thinking it
    /// replaced (below 1024, CFG-05 to `check`) is no longer reported. Kills
    /// `e.key == "thinking"` turned into `!=` in `run`, under which the replaced thinking was
    /// checked as if it were still sent, and the repairing pass reported its budget.
    #[test]
    fn a_replaced_thinking_parameter_is_not_checked_in_the_pass_that_replaced_it() {
        let input = body(
            "claude-sonnet-4-5",
            r#"{"type":"enabled","budget_tokens":512}"#,
            r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}"#,
        );
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let opts = crate::Options::default();
        let rules = |repair: bool| -> Vec<String> {
            crate::pipeline(&t, &opts, repair)
                .1
                .findings
                .iter()
                .map(|f| format!("{} {}", f.rule, f.path))
                .collect()
        };
        assert_eq!(
            rules(false),
            [
                "AN-16 messages[1].content[0]",
                "CFG-05 thinking.budget_tokens"
            ]
        );
        assert_eq!(rules(true), ["AN-16 messages[1].content[0]"]);
        assert_eq!(changes(&input, &opts), ["AN-16 request thinking"]);
    }

    /// The newer settings (CFG-13 to CFG-18) are checked as they will be sent too: when AN-25
    /// replaces a `disabled` thinking parameter that carries a budget (CFG-14 to `check`) with
    /// the drop-block binding, the repairing pass no longer reports the replaced parameter's
    /// extra field. Kills `e.key == "thinking"` turned into `!=` in `newer_settings`, under
    /// which the replaced parameter was read as if it were still sent.
    #[test]
    fn a_thinking_parameter_replaced_by_an25_is_not_checked_by_the_newer_settings() {
        let th = crate::rules::common::testing::thinking("t");
        let input = body(
            "claude-fable-5-1",
            r#"{"type":"disabled","budget_tokens":1024}"#,
            &format!(
                r#"{{"role":"user","content":[{{"type":"text","text":" "}},{{"type":"text","text":"q"}}]}},{{"role":"assistant","content":[{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            ),
        );
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let mut opts = crate::Options::default();
        opts.policy.on_prefix_edit = crate::PrefixEdit::DropBlock;
        let rules = |repair: bool| -> Vec<String> {
            crate::pipeline(&t, &opts, repair)
                .1
                .findings
                .iter()
                .map(|f| format!("{} {}", f.rule, f.path))
                .collect()
        };
        assert_eq!(
            rules(false),
            [
                "AN-05 messages[0].content[0]",
                "CFG-04 thinking.type",
                "CFG-14 thinking.budget_tokens"
            ]
        );
        assert_eq!(rules(true), ["AN-05 messages[0].content[0]"]);
        assert_eq!(
            changes(&input, &opts),
            [
                "AN-05 removed_block messages[0].content[0]",
                "AN-25 request thinking"
            ]
        );
    }
}
