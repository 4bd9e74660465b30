//! OpenCode sessions through the same rules.
//!
//! A stored session is converted to the Anthropic request OpenCode would send
//! ([`turnkeeper_model::opencode::to_anthropic_request`], seed 003's conversion), checked with
//! the ordinary rules, and every finding is traced back to the OpenCode message and part it came
//! from.

use serde::Serialize;
use turnkeeper_model::opencode::convert::{
    AnthropicOptions, AnthropicRequest, ThinkingMode, to_anthropic_request,
};
use turnkeeper_model::opencode::store::Session;
use turnkeeper_model::{Format, FormatHint, read};
use turnkeeper_prevent::{Finding, Mode, Options, check, profile_for};

use crate::Error;

/// A finding on an OpenCode session: the finding on the converted request, and where it came
/// from in storage.
#[derive(Debug, Clone, Serialize)]
pub struct SessionFinding {
    /// The finding, with paths into the converted request.
    #[serde(flatten)]
    pub finding: Finding,
    /// The OpenCode message id behind it.
    pub message_id: Option<String>,
    /// The OpenCode part id behind it.
    pub part_id: Option<String>,
}

/// The result of checking a session.
#[derive(Debug, Clone)]
pub struct SessionCheck {
    /// The converted request (body, block origins, conversion notes).
    pub request: AnthropicRequest,
    /// The findings.
    pub findings: Vec<SessionFinding>,
    /// The model checked against.
    pub model: Option<String>,
}

/// The model a session last used: the last user message's `model.modelID`.
pub fn session_model(session: &Session) -> Option<String> {
    session.messages.iter().rev().find_map(|m| {
        let v: serde_json::Value = serde_json::from_str(&m.raw).ok()?;
        v.pointer("/model/modelID")
            .or_else(|| v.get("modelID"))
            .and_then(|s| s.as_str())
            .map(str::to_owned)
    })
}

/// The thinking mode OpenCode would send for `model`: the caller's choice, else adaptive where
/// the model has it and manual (with OpenCode's default budget) where it does not.
fn thinking_for(opts: &Options<'_>, model: Option<&str>) -> ThinkingMode {
    let p = profile_for(model, opts.overrides);
    match opts.thinking {
        Some(Mode::Manual) => ThinkingMode::Manual {
            budget_tokens: 16_000,
        },
        Some(Mode::Adaptive) => ThinkingMode::Adaptive,
        Some(Mode::Off) => ThinkingMode::Off,
        None if p.adaptive_ok => ThinkingMode::Adaptive,
        None if p.thinking => ThinkingMode::Manual {
            budget_tokens: 16_000,
        },
        None => ThinkingMode::Off,
    }
}

/// Converts `session` and checks it. The model defaults to the one the session recorded.
///
/// # Errors
/// When the converted body cannot be read (a bug in the conversion).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, Error> {
    let model = opts.model.clone().or_else(|| session_model(session));
    let thinking = thinking_for(opts, model.as_deref());
    let request = to_anthropic_request(
        session,
        model.as_deref(),
        &AnthropicOptions {
            thinking,
            max_tokens: 32_000,
            opencode_filter: true,
        },
    );
    let t = read(&request.body, FormatHint::Exactly(Format::Anthropic))?;
    let opts = Options {
        model: model.clone(),
        ..opts.clone()
    };
    let findings = check(&t, &opts)
        .into_iter()
        .map(|f| {
            let origin = match (f.message_index, f.block_index) {
                (Some(m), Some(b)) => request.origin(m, b),
                (Some(m), None) => request.origin(m, 0),
                _ => None,
            };
            SessionFinding {
                message_id: origin.map(|o| o.message_id.clone()),
                part_id: f.block_index.and(origin.map(|o| o.part_id.clone())),
                finding: f,
            }
        })
        .collect();
    Ok(SessionCheck {
        request,
        findings,
        model,
    })
}
