//! OpenCode sessions through the same rules.
//!
//! OpenCode keeps a tool call and its result in one `tool` part, and its reasoning, step markers
//! and text as parts of one stored message; the rules are about the request OpenCode sends. So a
//! session is converted to that request ([`to_anthropic_request`], seed 003's conversion), checked
//! with the ordinary rules, and every finding is traced back to the OpenCode message and part it
//! came from.

use std::collections::HashMap;

use serde::Serialize;
use turnkeeper_model::opencode::convert::{
    AnthropicOptions, AnthropicRequest, ThinkingMode, to_anthropic_request,
};
use turnkeeper_model::opencode::store::{Session, load_export};
use turnkeeper_model::{
    Draft, DraftBlock, Format, FormatHint, ModelError, NewBlock, Role, Transcript, read,
    read_reusing,
};

use crate::Options;
use crate::finding::Finding;
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
fn next_turn(t: &Transcript<'_>) -> Option<(String, Vec<Option<u32>>)> {
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

/// Converts `session` and checks it as its next request will be sent ([`next_turn_body`]).
/// The model defaults to the one the session recorded.
///
/// # Errors
/// When the converted body cannot be read (a bug in the conversion).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, ModelError> {
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
    let converted = read(&request.body, FormatHint::Exactly(Format::Anthropic))?;
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
    let opts = Options {
        model: model.clone(),
        ..opts.clone()
    };
    // The appended prompt comes last, so every converted message keeps its index.
    let findings = crate::check(t, &opts)
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

/// Checks an OpenCode export read as a [`Transcript`]: paths in the findings point into the
/// export (`[3].parts[2]`), found again by message and part id.
pub fn check_export(t: &Transcript<'_>, opts: &Options<'_>) -> Vec<Finding> {
    let Ok(session) = load_export(t.src, "export") else {
        return Vec::new();
    };
    let Ok(checked) = check_session(&session, opts) else {
        return Vec::new();
    };
    if checked.findings.is_empty() {
        return Vec::new();
    }
    let mut where_part: HashMap<(String, String), (usize, usize)> = HashMap::new();
    let mut where_msg: HashMap<String, usize> = HashMap::new();
    for (i, m) in t.messages.iter().enumerate() {
        let Some(id) = m.id.map(|x| x.decode(t.src).into_owned()) else {
            continue;
        };
        for (j, b) in t.blocks_of(i).iter().enumerate() {
            if let Some(p) = b.part_id {
                where_part.insert((id.clone(), p.decode(t.src).into_owned()), (i, j));
            }
        }
        where_msg.insert(id, i);
    }
    checked
        .findings
        .into_iter()
        .map(|sf| {
            let mut f = sf.finding;
            let part = sf
                .message_id
                .clone()
                .zip(sf.part_id.clone())
                .and_then(|k| where_part.get(&k).copied());
            let msg = sf
                .message_id
                .as_ref()
                .and_then(|m| where_msg.get(m).copied());
            let converted = f.path.clone();
            match (part, msg) {
                (Some((i, j)), _) => {
                    f.path = t.block_path(i, j);
                    f.message_index = Some(i);
                    f.block_index = Some(j);
                }
                (None, Some(i)) => {
                    f.path = t.message_path(i);
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
        .collect()
}
