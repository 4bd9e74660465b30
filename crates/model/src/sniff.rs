//! Telling the wire format of a body from its shape, never guessing into harm.
//!
//! Each family leaves signs no other family accepts: a `role: "tool"` message, `tool_calls` or a
//! `reasoning_content` field are Chat Completions'; a `tool_use` or `thinking` block or a
//! top-level `system` are Anthropic's; a content element keyed `toolUse` or `reasoningContent`
//! with no `type` is Bedrock Converse's; `input` is Responses'; `contents` is Gemini's. The
//! body's format is the one family whose signs it carries. A `{"messages": [...]}` body without
//! any sign (user and assistant text only) is read the way its `model` says (`claude-*` →
//! Anthropic, a known OpenAI-compatible vendor → Chat), and as Anthropic when it names no model;
//! a body with signs of two families, or a sign-free body naming a model of no known vendor, is
//! refused with [`ModelError::Ambiguous`], naming the candidates: one family's rules applied to
//! another's body make sessions worse (issue 21).

use std::borrow::Cow;

use crate::error::ModelError;
use crate::json::{Kind, Scanner, StrSpan, SyntaxError};
use crate::view::Format;
use crate::wire::key_is;

/// A format told from a body, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sniffed {
    /// The format.
    pub format: Format,
    /// The sign that decided it, in words (`"a message with role \"tool\""`).
    pub why: Cow<'static, str>,
}

/// Signs found so far, per family.
#[derive(Default)]
struct Signs {
    anthropic: Option<Cow<'static, str>>,
    chat: Option<Cow<'static, str>>,
    converse: Option<Cow<'static, str>>,
    opencode: Option<Cow<'static, str>>,
    responses: Option<Cow<'static, str>>,
    gemini: Option<Cow<'static, str>>,
    /// A `system` message after the first: Chat's, or Anthropic's mid-conversation system
    /// message (api-rules.md AN-30). Chat's sign only when nothing says Anthropic.
    later_system: Option<Cow<'static, str>>,
    model: Option<String>,
    messages: bool,
    /// An Anthropic response body's top-level `content` array.
    content: bool,
}

impl Signs {
    fn found(&self) -> Vec<(Format, Cow<'static, str>)> {
        let mut v = Vec::new();
        let chat = match (&self.chat, &self.anthropic) {
            (None, None) => &self.later_system,
            _ => &self.chat,
        };
        for (f, s) in [
            (Format::Anthropic, &self.anthropic),
            (Format::Chat, chat),
            (Format::Converse, &self.converse),
            (Format::Opencode, &self.opencode),
            (Format::Responses, &self.responses),
            (Format::Gemini, &self.gemini),
        ] {
            if let Some(s) = s {
                v.push((f, s.clone()));
            }
        }
        v
    }

    /// True once a message-level sign decides (the rest of the body need not be read).
    fn decided(&self) -> bool {
        self.anthropic.is_some() || self.chat.is_some() || self.converse.is_some()
    }
}

/// Stops the scan early: the sniffer has what it needs.
struct Stop;

enum E {
    Syntax(SyntaxError),
    Stop,
}

impl From<SyntaxError> for E {
    fn from(e: SyntaxError) -> Self {
        E::Syntax(e)
    }
}

impl From<Stop> for E {
    fn from(_: Stop) -> Self {
        E::Stop
    }
}

type R<T> = Result<T, E>;

/// Top-level keys only Anthropic's Messages API takes.
const ANTHROPIC_KEYS: &[&str] = &[
    "system",
    "anthropic_version",
    "stop_sequences",
    "top_k",
    "anthropic_beta",
    "container",
    "mcp_servers",
    "context_management",
];

/// Top-level keys only Chat Completions takes (among bodies with `messages`).
const CHAT_KEYS: &[&str] = &[
    "max_completion_tokens",
    "reasoning_effort",
    "response_format",
    "stream_options",
    "frequency_penalty",
    "presence_penalty",
    "logprobs",
    "top_logprobs",
    "logit_bias",
    "parallel_tool_calls",
    "functions",
    "function_call",
    "enable_thinking",
    "web_search_options",
    "modalities",
    "prediction",
];

/// Top-level keys of Bedrock's Converse.
const CONVERSE_KEYS: &[&str] = &[
    "inferenceConfig",
    "additionalModelRequestFields",
    "additionalModelResponseFieldPaths",
    "guardrailConfig",
    "promptVariables",
    "performanceConfig",
];

/// Anthropic block types no other family writes in `content`.
const ANTHROPIC_BLOCKS: &[&str] = &[
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "search_result",
    "container_upload",
    "document",
    "compaction",
    "tool_search_tool_result",
    "tool_reference",
];

/// Chat Completions part types.
const CHAT_PARTS: &[&str] = &["image_url", "input_audio", "file", "refusal"];

/// Converse content keys (a content element has one of them and no `type`).
const CONVERSE_BLOCKS: &[&str] = &[
    "text",
    "image",
    "document",
    "video",
    "toolUse",
    "toolResult",
    "reasoningContent",
    "cachePoint",
    "guardContent",
    "citationsContent",
];

/// Tells the format of `src` and why; see the module docs.
///
/// # Errors
/// [`ModelError::UnknownFormat`] when nothing fits, [`ModelError::Ambiguous`] when two families'
/// signs meet or nothing tells, a syntax error in the part looked at.
pub fn sniff_detail(src: &str) -> Result<Sniffed, ModelError> {
    let mut signs = Signs::default();
    let res = (|| -> R<()> {
        let mut s = Scanner::new(src)?;
        match s.peek_kind()? {
            Kind::Array => {
                signs.opencode = Some("a top-level array (an OpenCode export)".into());
                Ok(())
            }
            Kind::Object => {
                s.object(|s, key| -> R<()> { top_key(s, key, &mut signs) })?;
                Ok(())
            }
            _ => Ok(()),
        }
    })();
    if let Err(E::Syntax(e)) = res {
        // What was seen before the error decides which reader names it, with its place.
        if let Ok(s) = decide(std::mem::take(&mut signs)) {
            return Ok(s);
        }
        let (line, column) = crate::read::line_col(src, e.offset);
        return Err(ModelError::Syntax {
            path: String::new(),
            offset: e.offset,
            line,
            column,
            message: e.message,
        });
    }
    decide(signs)
}

fn decide(signs: Signs) -> Result<Sniffed, ModelError> {
    let found = signs.found();
    match found.as_slice() {
        [(format, why)] => {
            return Ok(Sniffed {
                format: *format,
                why: why.clone(),
            });
        }
        [] => {}
        many => {
            return Err(ModelError::Ambiguous {
                candidates: many.iter().map(|(f, _)| *f).collect(),
                why: many
                    .iter()
                    .map(|(f, w)| format!("{f}: {w}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
    }
    if signs.messages {
        let by_model = signs.model.as_deref().map(model_family);
        return match (by_model, signs.model) {
            (Some(Some(format)), Some(m)) => Ok(Sniffed {
                format,
                why: format!("messages of text only, and the model {m:?}").into(),
            }),
            (None, _) => Ok(Sniffed {
                format: Format::Anthropic,
                why: "messages of text only and no model (read as Anthropic's)".into(),
            }),
            (_, m) => Err(ModelError::Ambiguous {
                candidates: vec![Format::Anthropic, Format::Chat],
                why: format!(
                    "messages of text only, and the model {:?} is of no vendor turnkeeper knows",
                    m.unwrap_or_default()
                ),
            }),
        };
    }
    if signs.content {
        return Ok(Sniffed {
            format: Format::Anthropic,
            why: "a top-level content array (an Anthropic response)".into(),
        });
    }
    Err(ModelError::UnknownFormat)
}

/// The family a model id's vendor speaks when a body shows nothing else: Anthropic for Claude,
/// Chat for the OpenAI-compatible vendors, `None` for a vendor turnkeeper does not know.
pub fn model_family(model: &str) -> Option<Format> {
    let m = model.to_ascii_lowercase();
    let last = m.rsplit('/').next().unwrap_or(&m);
    if last.contains("claude") {
        return Some(Format::Anthropic);
    }
    const CHAT_VENDORS: &[&str] = &[
        "gpt-", "gpt5", "chatgpt", "o1", "o3", "o4", "codex", "deepseek", "kimi", "moonshot",
        "qwen", "qwq", "glm", "grok", "minimax", "mistral", "llama", "gemini", "gemma", "phi-",
        "command", "ernie", "doubao", "hunyuan", "yi-", "step-",
    ];
    CHAT_VENDORS
        .iter()
        .any(|v| last.starts_with(v))
        .then_some(Format::Chat)
}

fn top_key(s: &mut Scanner<'_>, key: StrSpan, signs: &mut Signs) -> R<()> {
    let src = s.src();
    let k = key.decode(src);
    let k = k.as_ref();
    match k {
        "messages" if s.peek_kind()? == Kind::Array => {
            signs.messages = true;
            let stop = s.array(|s, i| -> R<()> {
                if s.peek_kind()? == Kind::Object {
                    message(s, i, signs)?;
                    if signs.decided() {
                        return Err(E::Stop);
                    }
                } else {
                    s.skip_value()?;
                }
                Ok(())
            });
            match stop {
                Err(E::Stop) => return Err(E::Stop),
                other => other.map(|_| ())?,
            }
        }
        "messages" => {
            signs.messages = true;
            s.skip_value()?;
        }
        "input" => {
            signs.responses = Some("a top-level `input` (an OpenAI Responses request)".into());
            s.skip_value()?;
        }
        "contents" => {
            signs.gemini = Some("a top-level `contents` (a Gemini request)".into());
            s.skip_value()?;
        }
        "info" => {
            signs.opencode = Some("a top-level `info` (an OpenCode export)".into());
            s.skip_value()?;
        }
        "model" | "modelId" => {
            if let Some(m) = s.opt_string()? {
                signs.model = Some(m.decode(src).into_owned());
            }
        }
        "content" if s.peek_kind()? == Kind::Array => {
            signs.content = true;
            s.skip_value()?;
        }
        "thinking" if s.peek_kind()? == Kind::Object => {
            s.object(|s, k2| -> R<()> {
                if key_is(src, k2, "budget_tokens") {
                    signs
                        .anthropic
                        .get_or_insert("`thinking.budget_tokens`".into());
                } else if key_is(src, k2, "type") {
                    if let Some(t) = s.opt_string()?
                        && matches!(t.raw(src), "adaptive" | "between_tools")
                    {
                        {
                            signs
                                .anthropic
                                .get_or_insert(format!("`thinking.type` {:?}", t.raw(src)).into());
                        }
                    }
                    return Ok(());
                }
                s.skip_value()?;
                Ok(())
            })?;
        }
        "tools" if s.peek_kind()? == Kind::Array => {
            s.array(|s, _| -> R<()> {
                if s.peek_kind()? != Kind::Object {
                    s.skip_value()?;
                    return Ok(());
                }
                s.object(|s, k2| -> R<()> {
                    if key_is(src, k2, "function") {
                        signs
                            .chat
                            .get_or_insert("a tool declared as `{\"function\": ...}`".into());
                    } else if key_is(src, k2, "input_schema") {
                        signs
                            .anthropic
                            .get_or_insert("a tool with `input_schema`".into());
                    } else if key_is(src, k2, "toolSpec") {
                        signs.converse.get_or_insert("a `toolSpec` tool".into());
                    }
                    s.skip_value()?;
                    Ok(())
                })?;
                Ok(())
            })?;
        }
        _ => {
            if ANTHROPIC_KEYS.contains(&k) {
                // Converse has a top-level `system` too, as an array of `{text}`.
                if k == "system" && s.peek_kind()? == Kind::Array {
                    let mut converse = false;
                    let mut any = false;
                    s.array(|s, _| -> R<()> {
                        any = true;
                        if s.peek_kind()? == Kind::Object {
                            let (mut typed, mut keyed) = (false, false);
                            s.object(|s, k2| -> R<()> {
                                if key_is(src, k2, "type") {
                                    typed = true;
                                } else if key_is(src, k2, "text")
                                    || key_is(src, k2, "cachePoint")
                                    || key_is(src, k2, "guardContent")
                                {
                                    keyed = true;
                                }
                                s.skip_value()?;
                                Ok(())
                            })?;
                            converse |= keyed && !typed;
                        } else {
                            s.skip_value()?;
                        }
                        Ok(())
                    })?;
                    if !any {
                        // `"system": []` says nothing (Converse clients send it empty).
                    } else if converse {
                        signs
                            .converse
                            .get_or_insert("a `system` of `{text}` blocks with no `type`".into());
                    } else {
                        signs.anthropic.get_or_insert("a top-level `system`".into());
                    }
                    return Ok(());
                }
                signs
                    .anthropic
                    .get_or_insert(format!("a top-level `{k}`").into());
            } else if CHAT_KEYS.contains(&k) {
                signs
                    .chat
                    .get_or_insert(format!("a top-level `{k}`").into());
            } else if CONVERSE_KEYS.contains(&k) {
                signs
                    .converse
                    .get_or_insert(format!("a top-level `{k}`").into());
            } else if k == "systemInstruction" || k == "generationConfig" {
                signs
                    .gemini
                    .get_or_insert(format!("a top-level `{k}`").into());
            }
            s.skip_value()?;
        }
    }
    Ok(())
}

/// Reads message `i` of `messages` for signs.
fn message(s: &mut Scanner<'_>, i: usize, signs: &mut Signs) -> R<()> {
    let src = s.src();
    s.object(|s, key| -> R<()> {
        let k = key.decode(src);
        match k.as_ref() {
            "role" => {
                if let Some(r) = s.opt_string()? {
                    let role = r.raw(src);
                    let sign = || format!("a message with role {role:?}").into();
                    if role == "system" && i > 0 {
                        // Anthropic's mid-conversation system message looks the same.
                        signs.later_system.get_or_insert_with(sign);
                    } else if matches!(role, "tool" | "system" | "developer" | "function") {
                        signs.chat.get_or_insert_with(sign);
                    }
                }
            }
            "tool_calls" | "tool_call_id" | "reasoning_content" | "reasoning_details"
            | "refusal" => {
                signs
                    .chat
                    .get_or_insert(format!("a message with `{k}`").into());
                s.skip_value()?;
            }
            "info" | "parts" => {
                signs
                    .opencode
                    .get_or_insert("messages of `{info, parts}` (an OpenCode export)".into());
                s.skip_value()?;
            }
            "content" => match s.peek_kind()? {
                Kind::Null => {
                    signs
                        .chat
                        .get_or_insert("a message with `content: null`".into());
                    s.null()?;
                }
                Kind::Array => {
                    s.array(|s, _| -> R<()> {
                        if s.peek_kind()? == Kind::Object {
                            part(s, signs)?;
                        } else {
                            s.skip_value()?;
                        }
                        Ok(())
                    })?;
                }
                _ => {
                    s.skip_value()?;
                }
            },
            _ => {
                s.skip_value()?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

fn part(s: &mut Scanner<'_>, signs: &mut Signs) -> R<()> {
    let src = s.src();
    let mut typed = false;
    let mut converse_key: Option<String> = None;
    s.object(|s, key| -> R<()> {
        if key_is(src, key, "type") {
            typed = true;
            if let Some(t) = s.opt_string()? {
                let t = t.raw(src);
                if ANTHROPIC_BLOCKS.contains(&t) || t.ends_with("_tool_result") {
                    signs
                        .anthropic
                        .get_or_insert(format!("a {t:?} block").into());
                } else if CHAT_PARTS.contains(&t) {
                    signs.chat.get_or_insert(format!("a {t:?} part").into());
                }
            }
            return Ok(());
        }
        let k = key.decode(src);
        if CONVERSE_BLOCKS.contains(&k.as_ref()) {
            converse_key = Some(k.into_owned());
        }
        s.skip_value()?;
        Ok(())
    })?;
    if !typed && let Some(k) = converse_key {
        {
            signs
                .converse
                .get_or_insert(format!("a `{k}` content block with no `type`").into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str, expect: Result<Format, &str>) {
        match (sniff_detail(src), expect) {
            (Ok(s), Ok(f)) => assert_eq!(s.format, f, "{src}: {}", s.why),
            (Err(e), Err(text)) => assert!(e.to_string().contains(text), "{src}: {e}"),
            (got, want) => panic!("{src}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn each_family_is_told_by_its_own_signs() {
        for (src, expect) in [
            // Kimi's tool turn: empty content, reasoning_content, tool_calls, a tool answer.
            (
                r#"{"model":"kimi-k2-thinking","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","reasoning_content":"r","tool_calls":[]},{"role":"tool","tool_call_id":"a","content":"x"}]}"#,
                Ok(Format::Chat),
            ),
            (
                r#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}"#,
                Ok(Format::Chat),
            ),
            (
                r#"{"max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]}"#,
                Ok(Format::Anthropic),
            ),
            (
                r#"{"system":"s","messages":[{"role":"user","content":"hi"}]}"#,
                Ok(Format::Anthropic),
            ),
            // A system message after the first is Anthropic's mid-conversation system message
            // when anything else says Anthropic (AN-30), Chat's when nothing does, and no sign
            // against Chat's own signs.
            (
                r#"{"system":"s","messages":[{"role":"user","content":"hi"},{"role":"system","content":"be brief"}]}"#,
                Ok(Format::Anthropic),
            ),
            (
                r#"{"messages":[{"role":"user","content":"hi"},{"role":"system","content":"be brief"}]}"#,
                Ok(Format::Chat),
            ),
            (
                r#"{"messages":[{"role":"user","content":"hi"},{"role":"system","content":"s"},{"role":"assistant","content":null,"tool_calls":[]}]}"#,
                Ok(Format::Chat),
            ),
            (
                r#"{"system":"s","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}"#,
                Err("cannot tell the format"),
            ),
            (
                r#"{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t","name":"n","input":{}}}]}]}"#,
                Ok(Format::Converse),
            ),
            (
                r#"{"system":[{"text":"s"}],"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#,
                Ok(Format::Converse),
            ),
            (r#"{"model":"o3","input":[]}"#, Ok(Format::Responses)),
            (r#"{"contents":[]}"#, Ok(Format::Gemini)),
            (r#"[{"info":{},"parts":[]}]"#, Ok(Format::Opencode)),
            (r#"{"type":"message","content":[]}"#, Ok(Format::Anthropic)),
            // Text only: the model decides, and no model means Anthropic.
            (
                r#"{"model":"deepseek-chat","messages":[{"role":"user","content":"hi"}]}"#,
                Ok(Format::Chat),
            ),
            (
                r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#,
                Ok(Format::Anthropic),
            ),
            (
                r#"{"messages":[{"role":"user","content":"hi"}]}"#,
                Ok(Format::Anthropic),
            ),
            (
                r#"{"model":"my-finetune","messages":[{"role":"user","content":"hi"}]}"#,
                Err("cannot tell the format: anthropic or chat"),
            ),
            // Two families' signs: refused, naming both.
            (
                r#"{"system":"s","messages":[{"role":"tool","content":"x"}]}"#,
                Err("anthropic or chat"),
            ),
            (r#"{"model":"x"}"#, Err("cannot tell the format")),
        ] {
            check(src, expect);
        }
    }
}
