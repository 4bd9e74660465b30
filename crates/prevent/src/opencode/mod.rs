//! OpenCode sessions through the same rules, judged by where they will really be sent.
//!
//! OpenCode keeps a tool call and its result in one `tool` part, and its reasoning, step markers
//! and text as parts of one stored message; the rules are about the request OpenCode sends. So a
//! session is converted to that request ([`to_anthropic_request`], seed 003's conversion, with
//! OpenCode's own normalisation for Claude: tool ids rewritten, empty parts dropped), checked
//! with the ordinary rules, and every finding is traced back to the OpenCode message and part it
//! came from.
//!
//! The rules follow the target ([`Target`]): the model the session's next request goes to (the
//! caller's `--model`, else the last user message's `model`, else the last assistant message's).
//! A session bound for Anthropic (a `claude` model, or the `anthropic` provider) is checked
//! with Anthropic's rules. Any other session (Kimi, DeepSeek, GPT, Gemini behind an
//! OpenAI-compatible provider, ...) gets no Anthropic error: it is checked as if switched to a
//! Claude model ([`SWITCH_MODEL`]), and what would break then is reported as a warning.
//!
//! [`doctor`] plans the stored repairs under the same target.

pub mod doctor;

use std::collections::HashMap;

use serde::Serialize;
use turnkeeper_model::opencode::convert::{
    AnthropicOptions, AnthropicRequest, ThinkingMode, to_anthropic_request,
};
use turnkeeper_model::opencode::session::{Session, export_place, load_export};
use turnkeeper_model::opencode::types::MessageInfo;
use turnkeeper_model::view::export_path;
use turnkeeper_model::{
    Draft, DraftBlock, Format, FormatHint, ModelError, NewBlock, Role, Transcript, read,
    read_reusing,
};

use crate::Options;
use crate::finding::{Finding, Severity};
use crate::profile::{Mode, profile_for};

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
    /// The model checked against (for a session not bound for Anthropic: [`SWITCH_MODEL`]).
    pub model: Option<String>,
    /// Where the session's next request goes.
    pub target: Target,
}

/// The provider family whose rules apply to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Family {
    /// Anthropic's Messages API (directly, or Claude through Bedrock, Vertex or a gateway).
    Anthropic,
    /// Anything else: its own provider's rules, which turnkeeper does not check for OpenCode
    /// sessions (see the module docs).
    Other,
}

/// Where a session's next request goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// OpenCode's `providerID`, when known.
    pub provider: Option<String>,
    /// The model id.
    pub model: Option<String>,
    /// Whose rules apply.
    pub family: Family,
}

impl Target {
    /// The target for `model` (`providerID/modelID` or a bare model id) and `provider`.
    ///
    /// Anthropic when the model id names Claude (any spelling: `claude-…`, `anthropic/claude-…`,
    /// Bedrock's `anthropic.claude-…`), or the provider is `anthropic`; everything else is
    /// [`Family::Other`]. A gateway serving Claude under another provider id still sends to
    /// Anthropic's API, and OpenCode itself switches to its Claude handling on the model id.
    pub fn of(provider: Option<&str>, model: Option<&str>) -> Target {
        let (provider, model) = match model.and_then(|m| m.split_once('/')) {
            Some((p, m)) if provider.is_none() && !m.contains('/') => (Some(p), Some(m)),
            _ => (provider, model),
        };
        let claude = model.is_some_and(|m| m.to_ascii_lowercase().contains("claude"));
        let anthropic_provider = provider.is_some_and(|p| p.eq_ignore_ascii_case("anthropic"));
        Target {
            provider: provider.map(str::to_owned),
            model: model.map(str::to_owned),
            family: if claude || anthropic_provider {
                Family::Anthropic
            } else {
                Family::Other
            },
        }
    }

    /// True when Anthropic's rules apply.
    pub fn is_anthropic(&self) -> bool {
        self.family == Family::Anthropic
    }

    /// The model a stored session is checked against: its own when it is bound for Anthropic,
    /// else [`SWITCH_MODEL`] (what would break if it were moved to Claude).
    pub fn checked_model(&self) -> Option<String> {
        if self.is_anthropic() {
            self.model.clone()
        } else {
            Some(SWITCH_MODEL.to_owned())
        }
    }
}

/// Checks `body`, the request a stored session converts to, as the session's next request (a new
/// prompt appended when it ends with the assistant's reply, [`next_turn_body`]) for `model`.
/// For a target not bound for Anthropic every finding `any_backend` does not accept is
/// capped at a warning, says it concerns a move to Claude (`moved`: "switched to", "sent to"),
/// and offers no repair; a finding it accepts (damage every provider rejects) is judged as for
/// Claude. Locations are in `body`'s terms: the appended prompt comes last, so every message
/// keeps its index.
pub(crate) fn check_stored_request(
    body: &str,
    target: &Target,
    model: Option<&str>,
    opts: &Options<'_>,
    moved: &str,
    any_backend: fn(&Finding) -> bool,
) -> Result<Vec<Finding>, ModelError> {
    let converted = read(body, FormatHint::Exactly(Format::Anthropic))?;
    // The next request differs by one message at the end: read it reusing the rest.
    let next = next_turn(&converted);
    let reread;
    let t = match &next {
        Some((body, kept)) => {
            reread = read_reusing(body, &converted, kept)?;
            &reread
        }
        None => &converted,
    };
    let check_opts = Options {
        model: model.map(str::to_owned),
        ..opts.clone()
    };
    let mut findings = crate::check(t, &check_opts);
    if !target.is_anthropic() {
        for f in findings.iter_mut().filter(|f| !any_backend(f)) {
            f.severity = f.severity.min(Severity::Warning);
            f.message = format!(
                "if this session is {moved} Claude ({SWITCH_MODEL}): {}",
                f.message
            );
            f.repair = None;
        }
    }
    Ok(findings)
}

/// The Claude model a session not bound for Anthropic is checked against, to say what would
/// break if the user switched it to Claude.
pub const SWITCH_MODEL: &str = "claude-sonnet-4-5";

/// The target of `session`'s next request: `model` when given (`providerID/modelID` or a model
/// id), else the last user message's `model` (what OpenCode sends the next prompt with), else
/// the last assistant message's `providerID`/`modelID`.
pub fn session_target(session: &Session, model: Option<&str>) -> Target {
    if let Some(m) = model {
        return Target::of(None, Some(m));
    }
    for m in session.messages.iter().rev() {
        match &m.typed {
            MessageInfo::User(u) if u.model.is_some() => {
                if let Some(r) = &u.model {
                    return Target::of(Some(&r.provider_id), Some(&r.model_id));
                }
            }
            MessageInfo::Assistant(a) if a.model_id.is_some() => {
                return Target::of(a.provider_id.as_deref(), a.model_id.as_deref());
            }
            _ => {}
        }
    }
    Target::of(None, session_model(session).as_deref())
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
pub(crate) fn thinking_for(opts: &Options<'_>, model: Option<&str>) -> ThinkingMode {
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

/// The text of the user message [`next_turn_body`] appends.
pub const NEXT_PROMPT: &str = "(next prompt)";

/// The request body with a user message appended when it ends with an assistant message: the
/// request the session's next prompt produces. `None` when it already ends with a user message.
///
/// A stored session normally ends with the assistant's reply, and OpenCode appends the user's
/// next prompt before it sends anything; a trailing assistant message is therefore not a
/// problem of the session (it would be a prefill, api-rules.md AN-03, only if sent as is).
pub fn next_turn_body(body: &str) -> Option<String> {
    let t = read(body, FormatHint::Exactly(Format::Anthropic)).ok()?;
    next_turn(&t).map(|(body, _)| body)
}

/// [`next_turn_body`] of an already-read body, with the messages it kept as they were (for
/// reading it again with `read_reusing`).
pub(crate) fn next_turn(t: &Transcript<'_>) -> Option<(String, Vec<Option<u32>>)> {
    if t.messages.last()?.role != Role::Assistant {
        return None;
    }
    let mut d = Draft::new(t);
    let mut json = String::from("{\"type\":\"text\",\"text\":");
    turnkeeper_model::json::write_string(&mut json, NEXT_PROMPT);
    json.push('}');
    let block = NewBlock::new(Format::Anthropic, json).ok()?;
    d.insert_message(d.len(), Role::User, vec![DraftBlock::New(Box::new(block))]);
    Some((d.output().into_owned(), d.kept()))
}

/// Converts `session` and checks it as its next request will be sent ([`next_turn_body`]),
/// under the rules of its [`Target`] (see the module docs): a session not bound for Anthropic
/// gets warnings only, each saying it concerns a switch to Claude.
///
/// # Errors
/// When the converted body cannot be read (a bug in the conversion).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, ModelError> {
    let target = session_target(session, opts.model.as_deref());
    let model = target.checked_model();
    let thinking = thinking_for(opts, model.as_deref());
    let request = to_anthropic_request(
        session,
        model.as_deref(),
        &AnthropicOptions {
            thinking,
            max_tokens: 32_000,
            opencode_filter: true,
            // OpenCode rewrites tool ids when the model id names Claude; a session switched to
            // Claude gets the rewrite too.
            scrub_tool_ids: model
                .as_deref()
                .is_some_and(|m| m.to_ascii_lowercase().contains("claude")),
        },
    );
    let findings = check_stored_request(
        &request.body,
        &target,
        model.as_deref(),
        opts,
        "switched to",
        |_| false,
    )?
    .into_iter()
    .map(|f| {
        // A block's finding names the part it came from; a message-level one the request
        // message's first OpenCode message, which locates a message that kept no block too.
        let origin = f
            .message_index
            .zip(f.block_index)
            .and_then(|(m, b)| request.origin(m, b));
        let message_id = match origin {
            Some(o) => Some(o.message_id.clone()),
            None => f
                .message_index
                .and_then(|m| request.message_origin(m))
                .map(str::to_owned),
        };
        SessionFinding {
            message_id,
            part_id: origin.map(|o| o.part_id.clone()),
            finding: f,
        }
    })
    .collect();
    let mut findings = findings;
    if let Some(own) = provider_findings(session, &target, opts)? {
        // The real target's verdict first; the switch-to-Claude warnings after it.
        let mut all = own;
        all.append(&mut findings);
        findings = all;
    }
    Ok(SessionCheck {
        request,
        findings,
        model,
        target,
    })
}

/// The providers whose OpenCode sessions go out as Chat Completions requests: everything but
/// Anthropic, OpenAI and Azure (Responses), Google (Gemini), Bedrock (Converse) and GitHub
/// Copilot, whose wires OpenCode writes otherwise.
fn speaks_chat(provider: Option<&str>) -> bool {
    let p = provider.unwrap_or("").to_ascii_lowercase();
    !p.is_empty()
        && ![
            "anthropic",
            "openai",
            "azure",
            "google",
            "google-vertex",
            "google-vertex-anthropic",
            "amazon-bedrock",
            "github-copilot",
        ]
        .contains(&p.as_str())
}

/// True when the session's reasoning was written by the AI SDK's Anthropic provider (a
/// `metadata.anthropic` on a reasoning part): the provider, whatever its id, is an
/// Anthropic-compatible endpoint, and OpenCode sends it Messages requests, not Chat (the real
/// `stunning-memory` store: DeepSeek behind such a gateway, `monkeycode-ai`).
fn anthropic_wire(session: &Session) -> bool {
    use turnkeeper_model::opencode::types::Part;
    session.messages.iter().any(|m| {
        m.parts.iter().any(|p| match &p.typed {
            Part::Reasoning(r) => r
                .metadata
                .as_ref()
                .is_some_and(|v| v.get("anthropic").is_some()),
            _ => false,
        })
    })
}

/// Providers that route to other vendors' APIs under `vendor/model` ids and may translate
/// reasoning themselves (OpenRouter's `reasoning_details`). OpenCode Zen (`opencode`) is one: the
/// real Kimi K2.6 session in `../shared/real-stores/opencode/aiand-*` went on after Zen was sent
/// tool-call turns without `reasoning_content`, which Moonshot's own API rejects.
const ROUTERS: &[&str] = &[
    "openrouter",
    "opencode",
    "vercel",
    "requesty",
    "helicone",
    "litellm",
];

/// The session checked as the Chat request OpenCode really sends its OpenAI-compatible target,
/// under that provider's own rules, with each finding traced to the OpenCode message and part;
/// `None` when the target is not an OpenAI-compatible provider (see [`speaks_chat`]).
fn provider_findings(
    session: &Session,
    target: &Target,
    opts: &Options<'_>,
) -> Result<Option<Vec<SessionFinding>>, ModelError> {
    use turnkeeper_model::opencode::chat::{Interleaved, to_chat_request};
    if target.is_anthropic() || !speaks_chat(target.provider.as_deref()) || anthropic_wire(session)
    {
        return Ok(None);
    }
    let Some(model) = target.model.as_deref() else {
        return Ok(None);
    };
    let provider = target
        .provider
        .as_deref()
        .unwrap_or("")
        .to_ascii_lowercase();
    // A gateway that relays to the vendor (OpenCode Zen, the vendor's own endpoint) is judged
    // by the vendor's rules: its model id is read without the vendor prefix. A router keeps it.
    let checked = if ROUTERS.contains(&provider.as_str()) {
        model.to_owned()
    } else {
        model.rsplit('/').next().unwrap_or(model).to_owned()
    };
    let request = to_chat_request(session, model, Interleaved::for_model(model));
    let wire_opts = Options {
        model: Some(checked),
        ..opts.clone()
    };
    let found = crate::wire::check_wire(&request.body, Format::Chat, &wire_opts)?;
    Ok(Some(
        found
            .into_iter()
            .map(|mut f| {
                let i = f.message_index;
                let message_id = i.and_then(|i| request.message_ids.get(i).cloned().flatten());
                let call = f
                    .path
                    .split("tool_calls[")
                    .nth(1)
                    .and_then(|r| r.split(']').next())
                    .and_then(|n| n.parse::<usize>().ok());
                let part_id = i.and_then(|i| {
                    let parts = request.parts.get(i)?;
                    parts.get(call.unwrap_or(0)).map(|p| p.part_id.clone())
                });
                f.path = format!("chat request {}", f.path);
                // Paths and indexes are the Chat request's, not the Anthropic one's.
                f.message_index = None;
                f.block_index = None;
                SessionFinding {
                    finding: f,
                    message_id,
                    part_id,
                }
            })
            .collect(),
    ))
}

/// Why an OpenCode export could not be checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The export could not be loaded as a session.
    #[error(transparent)]
    Load(#[from] turnkeeper_model::opencode::OpencodeError),
    /// The converted request could not be read (a bug in the conversion).
    #[error("the request converted from the export cannot be read: {0}")]
    Convert(#[from] ModelError),
}

/// Checks an OpenCode export read as a [`Transcript`]: [`check_export_text`] of its text (the
/// reading is not needed; it is taken for the callers that have one).
///
/// # Errors
/// As [`check_export_text`].
pub fn check_export(t: &Transcript<'_>, opts: &Options<'_>) -> Result<Vec<Finding>, ExportError> {
    check_export_text(t.src, opts)
}

/// Checks an OpenCode export (an `opencode export` document or a bare `[{info, parts}]`
/// array) as the request OpenCode would send: the export is loaded once, and paths in the
/// findings point into it (`[3].parts[2]`, or `messages[3].parts[2]`), found from where the
/// loader read each message and part.
///
/// # Errors
/// When the export cannot be loaded or converted: never "no findings" for what was not checked.
pub fn check_export_text(src: &str, opts: &Options<'_>) -> Result<Vec<Finding>, ExportError> {
    let session = load_export(src, "export")?;
    let checked = check_session(&session, opts)?;
    if checked.findings.is_empty() {
        return Ok(Vec::new());
    }
    let document = session.raw_info.is_some();
    let mut where_part: HashMap<(&str, &str), (usize, usize)> = HashMap::new();
    let mut where_msg: HashMap<&str, usize> = HashMap::new();
    for m in &session.messages {
        let Some((i, _)) = export_place(&m.origin) else {
            continue;
        };
        for p in &m.parts {
            if let Some((_, Some(j))) = export_place(&p.origin) {
                where_part.insert((m.id.as_str(), p.id.as_str()), (i, j));
            }
        }
        where_msg.insert(m.id.as_str(), i);
    }
    Ok(checked
        .findings
        .into_iter()
        .map(|sf| {
            let mut f = sf.finding;
            let part = sf
                .message_id
                .as_deref()
                .zip(sf.part_id.as_deref())
                .and_then(|k| where_part.get(&k).copied());
            let msg = sf
                .message_id
                .as_deref()
                .and_then(|m| where_msg.get(m).copied());
            let converted = f.path.clone();
            match (part, msg) {
                (Some((i, j)), _) => {
                    f.path = export_path(document, i, Some(j));
                    f.message_index = Some(i);
                    f.block_index = Some(j);
                }
                (None, Some(i)) => {
                    f.path = export_path(document, i, None);
                    f.message_index = Some(i);
                    f.block_index = None;
                }
                (None, None) => {
                    f.message_index = None;
                    f.block_index = None;
                }
            }
            if f.path != converted {
                f.message = format!(
                    "{} (at {converted} of the request OpenCode sends)",
                    f.message
                );
            }
            // `repair` works on wire bodies; a stored session is repaired part by part with
            // `turnkeeper opencode repair`, which says what it can fix.
            if f.repair.take().is_some() {
                f.message
                    .push_str("; repair the stored session with `turnkeeper opencode repair`");
            }
            f
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenCode's thinking for a model: the caller's mode when given, else adaptive where the
    /// model has it, manual with OpenCode's budget where it has only that, and none otherwise.
    #[test]
    fn thinking_follows_the_caller_then_the_model() {
        let opts = Options::default();
        let manual = ThinkingMode::Manual {
            budget_tokens: 16_000,
        };
        assert_eq!(
            thinking_for(&opts, Some("claude-opus-4-6")),
            ThinkingMode::Adaptive
        );
        assert_eq!(thinking_for(&opts, Some("claude-sonnet-4-5")), manual);
        assert_eq!(
            thinking_for(&opts, Some("claude-3-5-haiku")),
            ThinkingMode::Off
        );
        let told = Options {
            thinking: Some(Mode::Manual),
            ..Options::default()
        };
        assert_eq!(thinking_for(&told, Some("claude-opus-4-6")), manual);
        let off = Options {
            thinking: Some(Mode::Off),
            ..Options::default()
        };
        assert_eq!(
            thinking_for(&off, Some("claude-opus-4-6")),
            ThinkingMode::Off
        );
    }
}
