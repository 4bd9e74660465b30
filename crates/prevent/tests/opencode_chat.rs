//! An OpenCode session bound for an OpenAI-compatible provider is checked as the Chat request
//! OpenCode sends it, under that provider's own rules: the verdict is the provider's, traced to
//! OpenCode message and part ids.
//!
//! The session is `corpus/opencode/export/kimi_session.export.json` (a Kimi K2.6 session through
//! OpenCode Zen), bound to each provider by editing its `providerID`/`modelID`, and damaged the
//! way OpenCode damages Kimi sessions (a tool step stored without its reasoning part: KM-07).

use turnkeeper_model::opencode::load_export;
use turnkeeper_prevent::opencode::check_session;
use turnkeeper_prevent::{Options, Severity};

fn export() -> serde_json::Value {
    let path = format!(
        "{}/../../corpus/opencode/export/kimi_session.export.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("corpus file")).expect("json")
}

/// The export bound to `provider`/`model`, optionally without the reasoning part of the first
/// assistant message (whose step calls a tool).
fn bound(provider: &str, model: &str, drop_reasoning: bool) -> String {
    let mut v = export();
    for m in v["messages"].as_array_mut().into_iter().flatten() {
        if m["info"]["role"] == "assistant" {
            m["info"]["providerID"] = provider.into();
            m["info"]["modelID"] = model.into();
        }
        if m["info"]["role"] == "user" && m["info"]["model"].is_object() {
            m["info"]["model"]["providerID"] = provider.into();
            m["info"]["model"]["modelID"] = model.into();
        }
    }
    if drop_reasoning
        && let Some(first) = v["messages"]
            .as_array_mut()
            .and_then(|a| a.iter_mut().find(|m| m["info"]["role"] == "assistant"))
        && let Some(parts) = first["parts"].as_array_mut()
    {
        parts.retain(|p| p["type"] != "reasoning");
    }
    v.to_string()
}

/// `rule:severity` of the findings on the Chat request (the provider's own verdict).
fn verdict(text: &str) -> Vec<String> {
    let session = load_export(text, "test").expect("loads");
    let c = check_session(&session, &Options::default()).expect("checks");
    c.findings
        .iter()
        .filter(|f| f.finding.path.starts_with("chat request "))
        .map(|f| {
            assert!(f.message_id.is_some(), "traced to its message: {f:?}");
            let sev = match f.finding.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            format!("{}:{sev}", f.finding.rule)
        })
        .collect()
}

#[test]
fn each_provider_gives_its_own_verdict() {
    for (provider, model, drop, want) in [
        // As stored: Kimi through OpenCode Zen, every tool step with its reasoning.
        ("opencode", "moonshotai/kimi-k2.6", false, vec![]),
        // Moonshot's own API: a tool step without reasoning_content is rejected (KM-01).
        ("moonshotai", "kimi-k2.6", true, vec!["KM-01:error"]),
        ("moonshotai", "kimi-k2.6", false, vec![]),
        // Through Zen or OpenRouter the gateway may translate: a warning.
        (
            "opencode",
            "moonshotai/kimi-k2.6",
            true,
            vec!["KM-01:warning"],
        ),
        (
            "openrouter",
            "moonshotai/kimi-k2.6",
            true,
            vec!["KM-01:warning"],
        ),
        // DeepSeek: OpenCode gives every assistant message reasoning_content, so nothing.
        ("deepseek", "deepseek-v4-flash", true, vec![]),
        // Kimi with thinking off by model (K2 instruct): nothing to replay.
        ("moonshotai", "kimi-k2-0905-preview", true, vec![]),
    ] {
        assert_eq!(
            verdict(&bound(provider, model, drop)),
            want,
            "{provider}/{model}, reasoning dropped: {drop}"
        );
    }
}
