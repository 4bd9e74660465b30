//! Checking and repairing the OpenAI-style families (Chat Completions, Responses, Converse).
//!
//! A body of one of these formats is read by its [`turnkeeper_model::wire`] reader and judged by
//! the rules of the provider it really goes to ([`Target`]): the model named by the options or
//! the body decides the provider (`deepseek-*` → DeepSeek, `kimi-*` → Kimi, `gpt-*` → OpenAI,
//! `vendor/model` → a router, ...). Rules every provider enforces (tool-call pairing, empty
//! messages) are errors whatever the provider; a provider's own rules run only on its target.
//!
//! Every rule is a file of `rules/` (listed in [`crate::WIRE_RULES`]) with a `run` function over
//! the family's context; it reports through the context and plans its repair there, as a
//! [`Plan`] of byte-range edits, so that what it does not change is copied byte for byte. [`repair_wire`] applies the plan, reads
//! the result again and repeats until a pass changes nothing (at most four passes), then checks
//! the result: what is still found is `findings_left`. No rule writes reasoning: a reasoning
//! field or item leaves byte-identical or goes whole with its message or item, and the only
//! fields added are the empty stand-ins the provider documents, on that provider's target,
//! reported as lossy ([`ChangeAction::LossyStandIn`]).

pub mod chat;
pub mod converse;
pub mod responses;

use std::borrow::Cow;

use turnkeeper_model::wire::Plan;
use turnkeeper_model::{Format, ModelError};

use crate::finding::{Change, Finding, Report, Severity};
use crate::id::{ChangeAction, RuleId};
use crate::{Mode, Options, PreventError, Repaired};

/// The provider a request goes to, as its model id tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI (`gpt-*`, `o1`/`o3`/`o4-*`, `codex-*`, `chatgpt-*`).
    OpenAi,
    /// DeepSeek (`deepseek-*`).
    DeepSeek,
    /// Moonshot Kimi (`kimi-*`, `moonshot-*`).
    Kimi,
    /// Alibaba Qwen (`qwen*`, `qwq*`).
    Qwen,
    /// Z.ai GLM (`glm-*`).
    Glm,
    /// xAI Grok (`grok-*`).
    Xai,
    /// MiniMax (`minimax-*`).
    MiniMax,
    /// Google Gemini (`gemini-*`).
    Gemini,
    /// Anthropic Claude (`claude-*`).
    Anthropic,
    /// Mistral (`mistral-*`, `codestral-*`, `devstral-*`).
    Mistral,
    /// A model of no vendor turnkeeper knows, or no model.
    Unknown,
}

impl Provider {
    /// The name used in messages and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "OpenAI",
            Provider::DeepSeek => "DeepSeek",
            Provider::Kimi => "Kimi",
            Provider::Qwen => "Qwen",
            Provider::Glm => "GLM",
            Provider::Xai => "xAI",
            Provider::MiniMax => "MiniMax",
            Provider::Gemini => "Gemini",
            Provider::Anthropic => "Anthropic",
            Provider::Mistral => "Mistral",
            Provider::Unknown => "an unknown provider",
        }
    }
}

/// Where a request goes: the provider, the model id, and the router in front when the id says
/// so (`openrouter/...`, `deepseek/deepseek-chat` on OpenRouter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The provider of the model.
    pub provider: Provider,
    /// The model id as given.
    pub model: Option<String>,
    /// The id's vendor prefix (`deepseek` in `deepseek/deepseek-v4`), when it has one: a router
    /// (OpenRouter, Vercel AI Gateway, ...) is in front and relays the provider's rules wrapped.
    pub routed: Option<String>,
    /// The thinking mode given by the options, if any (it overrides the body's).
    pub thinking: Option<Mode>,
}

impl Target {
    /// The target for `model` (options first, then the body's).
    pub fn new(model: Option<&str>, thinking: Option<Mode>) -> Target {
        let (provider, routed) = match model {
            Some(m) => provider_of(m),
            None => (Provider::Unknown, None),
        };
        Target {
            provider,
            model: model.map(str::to_owned),
            routed,
            thinking,
        }
    }

    /// The model id, lower-cased, without a router prefix (`""` without a model).
    pub fn bare_model(&self) -> String {
        let m = self.model.as_deref().unwrap_or("").to_ascii_lowercase();
        m.rsplit('/').next().unwrap_or("").to_owned()
    }
}

/// The provider of a model id, and its router prefix when it has one.
pub fn provider_of(model: &str) -> (Provider, Option<String>) {
    let lower = model.to_ascii_lowercase();
    let (prefix, bare) = match lower.rsplit_once('/') {
        Some((p, b)) => (Some(p.to_owned()), b.to_owned()),
        None => (None, lower.clone()),
    };
    // Bedrock-style ids (`us.deepseek.r1-v1:0`, `moonshot.kimi-k2`) name the vendor first.
    let bare = bare
        .trim_start_matches("us.")
        .trim_start_matches("eu.")
        .trim_start_matches("apac.")
        .trim_start_matches("global.")
        // Bedrock's OpenAI-compatible endpoint names OpenAI's models `openai.gpt-5.6-luna`.
        .trim_start_matches("openai.");
    let p = if bare.contains("claude") {
        Provider::Anthropic
    } else if bare.starts_with("deepseek") {
        Provider::DeepSeek
    } else if bare.starts_with("kimi") || bare.starts_with("moonshot") {
        Provider::Kimi
    } else if bare.starts_with("qwen") || bare.starts_with("qwq") {
        Provider::Qwen
    } else if bare.starts_with("glm") {
        Provider::Glm
    } else if bare.starts_with("grok") {
        Provider::Xai
    } else if bare.starts_with("minimax") {
        Provider::MiniMax
    } else if bare.starts_with("gemini") {
        Provider::Gemini
    } else if bare.starts_with("mistral")
        || bare.starts_with("codestral")
        || bare.starts_with("devstral")
        || bare.starts_with("magistral")
    {
        Provider::Mistral
    } else if bare.starts_with("gpt")
        || bare.starts_with("chatgpt")
        || bare.starts_with("codex")
        || bare.starts_with("o1")
        || bare.starts_with("o3")
        || bare.starts_with("o4")
    {
        Provider::OpenAi
    } else {
        Provider::Unknown
    };
    (p, prefix)
}

/// What one pass found and planned.
#[derive(Debug, Default)]
pub struct WireOut {
    /// The findings, in rule order.
    pub findings: Vec<Finding>,
    /// The changes planned (reported once the plan is applied).
    pub changes: Vec<Change>,
    /// The edits.
    pub plan: Plan,
    /// The provider's originals a rule put back whole from the turn store (Responses reasoning
    /// items): the guard allows them in the output.
    pub restored: Vec<String>,
}

impl WireOut {
    /// Reports a finding.
    #[allow(clippy::too_many_arguments)]
    pub fn find(
        &mut self,
        rule: RuleId,
        severity: Severity,
        path: String,
        message_index: Option<usize>,
        message: String,
        repair: Option<String>,
    ) {
        self.findings.push(Finding {
            rule,
            severity,
            path,
            message_index,
            block_index: None,
            message,
            repair,
        });
    }

    /// Records a change.
    pub fn change(&mut self, rule: RuleId, action: ChangeAction, path: String, reason: String) {
        self.changes.push(Change {
            rule,
            action,
            path,
            reason,
            fingerprint: None,
        });
    }
}

/// The target of a body of `format` under `opts`: the options' model, else the body's.
fn target_of(body_model: Option<Cow<'_, str>>, opts: &Options<'_>) -> Target {
    let model = opts.model.clone().or(body_model.map(Cow::into_owned));
    Target::new(model.as_deref(), opts.thinking)
}

/// One pass over `src`: its findings and, when `repair`, the planned changes and the new body
/// (`None` when nothing changed).
/// A Chat Completions or Responses body, read once: for a caller that needs the reading before
/// the repair (the proxy asks its turn store for the turn ids the body names) and hands it to
/// [`repair_wire_read`] instead of having the body read twice.
#[derive(Debug)]
pub enum WireBody<'a> {
    /// A Chat Completions request.
    Chat(turnkeeper_model::wire::chat::ChatBody<'a>),
    /// A Responses request.
    Responses(turnkeeper_model::wire::responses::ResponsesBody<'a>),
}

impl<'a> WireBody<'a> {
    /// Reads `src` as `format` (Chat or Responses).
    ///
    /// # Errors
    /// When the body does not read as `format`, or `format` is neither.
    pub fn read(src: &'a str, format: Format) -> Result<WireBody<'a>, ModelError> {
        match format {
            Format::Chat => turnkeeper_model::wire::chat::read(src).map(WireBody::Chat),
            Format::Responses => {
                turnkeeper_model::wire::responses::read(src).map(WireBody::Responses)
            }
            other => Err(ModelError::NotTranscript { format: other }),
        }
    }

    /// Reads `src` as `prev`'s format, against `prev` (the reading of an earlier body, over its
    /// own text): each message (Chat) or item (Responses) that is, byte for byte, `prev`'s at
    /// the same place has its reading moved over instead of being scanned. The reading equals
    /// [`WireBody::read`]'s; the count says how many were moved over.
    ///
    /// # Errors
    /// When the body does not read as `prev`'s format.
    pub fn read_reusing(
        src: &'a str,
        prev: &WireBody<'_>,
    ) -> Result<(WireBody<'a>, usize), ModelError> {
        match prev {
            WireBody::Chat(p) => turnkeeper_model::wire::chat::read_reusing(src, p)
                .map(|(b, n)| (WireBody::Chat(b), n)),
            WireBody::Responses(p) => turnkeeper_model::wire::responses::read_reusing(src, p)
                .map(|(b, n)| (WireBody::Responses(b), n)),
        }
    }

    /// The body's format.
    pub fn format(&self) -> Format {
        match self {
            WireBody::Chat(_) => Format::Chat,
            WireBody::Responses(_) => Format::Responses,
        }
    }
}

fn pass(
    src: &str,
    format: Format,
    opts: &Options<'_>,
    repair: bool,
) -> Result<(WireOut, Option<String>), ModelError> {
    Ok(pass_on(src, &WireBody::read(src, format)?, opts, repair))
}

/// One pass of the rules over `body`, the reading of `src`.
fn pass_on(
    src: &str,
    body: &WireBody<'_>,
    opts: &Options<'_>,
    repair: bool,
) -> (WireOut, Option<String>) {
    match body {
        WireBody::Chat(body) => {
            let target = target_of(body.model(), opts);
            let mut out = chat::run(body, &target, &opts.policy, opts.store, repair);
            let new = if repair {
                turnkeeper_model::wire::render(
                    src,
                    &body.messages_at,
                    std::mem::take(&mut out.plan),
                )
            } else {
                None
            };
            (out, new)
        }
        WireBody::Responses(body) => {
            let target = target_of(body.model(), opts);
            let mut out = responses::run(body, &target, &opts.policy, opts.store, repair);
            let new = if repair {
                turnkeeper_model::wire::render(src, &body.input_at, std::mem::take(&mut out.plan))
            } else {
                None
            };
            (out, new)
        }
    }
}

/// Everything the rules find in a body of one of the wire families.
///
/// # Errors
/// When the body does not read as `format`.
pub fn check_wire(
    src: &str,
    format: Format,
    opts: &Options<'_>,
) -> Result<Vec<Finding>, ModelError> {
    if format == Format::Converse {
        return converse::check_converse(src, opts);
    }
    pass(src, format, opts, false).map(|(out, _)| out.findings)
}

/// Repairs a body of one of the wire families: applies every repair the policy allows, pass
/// after pass until one changes nothing, then checks the result. The body is the input itself
/// when nothing needed repair.
///
/// # Errors
/// When the body does not read as `format`, or a repaired body does not read again (a bug,
/// reported as [`PreventError::Model`]; nothing should be sent then).
pub fn repair_wire<'a>(
    src: &'a str,
    format: Format,
    opts: &Options<'_>,
) -> Result<Repaired<'a>, PreventError> {
    if format == Format::Converse {
        return converse::repair_converse(src, opts);
    }
    let body = WireBody::read(src, format)?;
    repair_wire_read(src, &body, opts)
}

/// [`repair_wire`] on a body the caller has read already ([`WireBody::read`] of `src`): the
/// first pass uses that reading instead of reading `src` again.
///
/// # Errors
/// As [`repair_wire`].
pub fn repair_wire_read<'a>(
    src: &'a str,
    body: &WireBody<'_>,
    opts: &Options<'_>,
) -> Result<Repaired<'a>, PreventError> {
    let format = body.format();
    let mut first = Some(body);
    let mut report = Report::default();
    let mut current: Option<String> = None;
    let mut restored: Vec<String> = Vec::new();
    for _ in 0..4 {
        let text = current.as_deref().unwrap_or(src);
        let (out, new) = match first.take() {
            Some(body) => pass_on(text, body, opts, true),
            None => pass(text, format, opts, true)?,
        };
        match new {
            Some(body) if body != text => {
                report.changes.extend(out.changes);
                restored.extend(out.restored);
                current = Some(body);
            }
            _ => {
                report.findings_left = out.findings;
                guard(src, current.as_deref(), format, &report, &restored)?;
                return Ok(Repaired {
                    body: match current {
                        Some(b) => Cow::Owned(b),
                        None => Cow::Borrowed(src),
                    },
                    report,
                });
            }
        }
    }
    let text = current.as_deref().unwrap_or(src);
    report.findings_left = check_wire(text, format, opts)?;
    guard(src, current.as_deref(), format, &report, &restored)?;
    Ok(Repaired {
        body: match current {
            Some(b) => Cow::Owned(b),
            None => Cow::Borrowed(src),
        },
        report,
    })
}

/// Checks a repaired body's reasoning against the input's, for the formats whose reasoning is
/// items of their own (Responses: [`responses::verify`]); fails closed.
fn guard(
    src: &str,
    out: Option<&str>,
    format: Format,
    report: &Report,
    restored: &[String],
) -> Result<(), PreventError> {
    let Some(out) = out else {
        return Ok(());
    };
    if format == Format::Responses {
        let removed = report
            .changes
            .iter()
            .filter(|c| c.fingerprint.is_some())
            .count();
        responses::verify(src, out, removed, restored)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_name_their_provider_and_router() {
        for (id, p, routed) in [
            ("deepseek-v4-pro", Provider::DeepSeek, None),
            (
                "deepseek/deepseek-chat",
                Provider::DeepSeek,
                Some("deepseek"),
            ),
            ("kimi-k2-thinking", Provider::Kimi, None),
            ("moonshotai/kimi-k2.6", Provider::Kimi, Some("moonshotai")),
            ("gpt-5-mini", Provider::OpenAi, None),
            ("openai.gpt-5.6-luna", Provider::OpenAi, None),
            ("o3", Provider::OpenAi, None),
            (
                "google/gemini-3-pro-preview",
                Provider::Gemini,
                Some("google"),
            ),
            ("us.deepseek.r1-v1:0", Provider::DeepSeek, None),
            (
                "anthropic/claude-sonnet-4.5",
                Provider::Anthropic,
                Some("anthropic"),
            ),
            ("glm-4.6", Provider::Glm, None),
            ("grok-code-fast-1", Provider::Xai, None),
            ("my-finetune", Provider::Unknown, None),
        ] {
            let (got, r) = provider_of(id);
            assert_eq!((got, r.as_deref()), (p, routed), "{id}");
        }
    }
}
