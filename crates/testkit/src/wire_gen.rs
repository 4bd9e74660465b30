//! Generated bodies of the OpenAI-style wire families, valid for the provider they target, and
//! the damage clients do to them.
//!
//! [`wire_body`] writes an OpenAI Chat Completions, OpenAI Responses or Bedrock Converse request
//! the way a vendor's own client sends it:
//!
//! - Chat: DeepSeek and Kimi thinking (`reasoning_content` on every assistant message, `""`
//!   included), OpenRouter (`reasoning` and `reasoning_details` with `reasoning.text` /
//!   `reasoning.encrypted` entries), Gemini 3 through Google's OpenAI-compatible endpoint (the
//!   first call of each step signed in `extra_content.google.thought_signature`), Qwen, and
//!   OpenAI itself (no reasoning field);
//! - Responses: reasoning items with `rs_` ids, `summary` (empty or not) and `encrypted_content`,
//!   followed by the `function_call`s (`fc_` / `call_` ids) or the assistant `message` (`msg_`) they
//!   produced, `function_call_output`s in the next step, `store: false` with encrypted state, and
//!   Codex-style id-less reasoning;
//! - Converse: `reasoningContent` first in Claude's assistant turns (signed `reasoningText` or
//!   `redactedContent`), `toolUse` answered by `toolResult` in the next user message, `toolConfig`
//!   declared; DeepSeek R1 and Nova without reasoning in the history (as their rules require).
//!
//! Tool loops, parallel calls, key order, whitespace and escapes vary as in
//! [`crate::generate`]. A generated body draws no error from `check_wire` under
//! [`WireBody::options`] (`inv_wire_valid` holds that). [`wire_damage`] then applies the edits that
//! break real sessions ([`WireDamage`]), each recorded by name.

use std::fmt;

use arbitrary::{Result, Unstructured};
use turnkeeper_model::Format;
use turnkeeper_prevent::Options;

use crate::generate::{G, Knobs};
use crate::json::{J, Style};

/// The vendor a generated body is written for (it decides the model id and the reasoning
/// fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    /// DeepSeek's own API (`deepseek-v4-pro`, `deepseek-reasoner`): `reasoning_content`.
    DeepSeek,
    /// Moonshot Kimi (`kimi-k2-thinking`): `reasoning_content`, sometimes `thinking.keep: "all"`.
    Kimi,
    /// Qwen (`qwen3-max`): `reasoning_content`, `enable_thinking`.
    Qwen,
    /// OpenRouter (`vendor/model`): `reasoning` and `reasoning_details`.
    OpenRouter,
    /// Gemini 3 through Google's OpenAI-compatible endpoint: signed first calls.
    Gemini,
    /// OpenAI (Chat: no reasoning field; Responses: reasoning items).
    OpenAi,
    /// xAI on Responses (`grok-4`).
    Xai,
    /// Claude on Bedrock Converse, thinking on (manual or adaptive).
    BedrockClaude,
    /// DeepSeek R1 on Bedrock Converse.
    BedrockDeepSeekR1,
    /// Amazon Nova on Bedrock Converse.
    BedrockNova,
}

/// What [`wire_body`] may generate, and how big.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireKnobs {
    /// Chat Completions bodies.
    pub chat: bool,
    /// Responses bodies.
    pub responses: bool,
    /// Converse bodies.
    pub converse: bool,
    /// The sizes (turns, steps, parallel calls, long strings) of [`Knobs`].
    pub base: Knobs,
}

impl Default for WireKnobs {
    fn default() -> Self {
        WireKnobs {
            chat: true,
            responses: true,
            converse: true,
            base: Knobs::default(),
        }
    }
}

impl WireKnobs {
    /// Only the family `format` (Chat, Responses or Converse; anything else gives all three).
    pub fn only(format: Format) -> WireKnobs {
        let mut k = WireKnobs {
            chat: false,
            responses: false,
            converse: false,
            ..WireKnobs::default()
        };
        match format {
            Format::Chat => k.chat = true,
            Format::Responses => k.responses = true,
            Format::Converse => k.converse = true,
            _ => return WireKnobs::default(),
        }
        k
    }
}

/// A generated wire body: its family, vendor, JSON tree and text style, the model its options
/// name, and the damage done to it.
#[derive(Clone, PartialEq)]
pub struct WireBody {
    /// [`Format::Chat`], [`Format::Responses`] or [`Format::Converse`].
    pub format: Format,
    /// Who it is written for.
    pub vendor: Vendor,
    /// The body.
    pub root: J,
    /// Whitespace of the text form.
    pub style: Style,
    /// The model id (in the body for Chat and Responses; Converse names it in the URL, so the
    /// options carry it).
    pub model: String,
    /// Names of the damage applied, in order.
    pub damage: Vec<String>,
}

impl WireBody {
    /// The body's text.
    pub fn json(&self) -> String {
        self.style.write(&self.root)
    }

    /// The options it is checked under: the model (Converse needs it, the others name it in
    /// the body too), the default policy.
    pub fn options(&self) -> Options<'static> {
        Options {
            model: Some(self.model.clone()),
            ..Options::default()
        }
    }
}

impl fmt::Debug for WireBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "WireBody {{ format: {}, vendor: {:?}, model: {:?}, damage: {:?} }}",
            self.format, self.vendor, self.model, self.damage
        )?;
        f.write_str(&self.json())
    }
}

/// Generates a valid body of one of the families `knobs` allows.
///
/// # Errors
/// Only what [`Unstructured`] reports; running out of bytes gives a small body.
pub fn wire_body(u: &mut Unstructured<'_>, knobs: &WireKnobs) -> Result<WireBody> {
    let mut formats = Vec::new();
    if knobs.chat {
        formats.extend([Format::Chat; 2]);
    }
    if knobs.responses {
        formats.push(Format::Responses);
    }
    if knobs.converse {
        formats.push(Format::Converse);
    }
    if formats.is_empty() {
        formats.push(Format::Chat);
    }
    let format = *u.choose(&formats)?;
    let mut g = G::new(u, &knobs.base)?;
    let (vendor, model, root) = match format {
        Format::Responses => responses(&mut g)?,
        Format::Converse => converse(&mut g)?,
        _ => chat(&mut g)?,
    };
    let style = style(&mut g)?;
    Ok(WireBody {
        format,
        vendor,
        root,
        style,
        model,
        damage: Vec::new(),
    })
}

fn style(g: &mut G<'_, '_>) -> Result<Style> {
    Ok(Style {
        indent: g.pick(&[0u8, 0, 0, 1, 2, 4])?,
        colon_space: g.u.arbitrary()?,
        comma_space: g.u.arbitrary()?,
        crlf: g.chance(10)?,
        trailing_newline: g.chance(30)?,
    })
}

const TOOLS: &[&str] = &[
    "read_file",
    "run_tests",
    "get_weather",
    "grep",
    "apply_patch",
];

/// A tool's JSON arguments, as the string Chat and Responses carry.
fn arguments(g: &mut G<'_, '_>, tool: &str) -> Result<String> {
    Ok(match tool {
        "read_file" => format!(
            "{{\"path\":\"src/{}.rs\"}}",
            g.pick(&["lib", "parser", "main"])?
        ),
        "run_tests" => "{\"filter\":\"parser::\",\"release\":false}".to_owned(),
        "get_weather" => "{\"city\":\"Florence, Italy\",\"unit\":\"celsius\"}".to_owned(),
        "grep" => "{\"pattern\":\"fn main\\\\(\",\"glob\":\"**/*.rs\"}".to_owned(),
        _ => "{\"patch\":\"--- a/src/lib.rs\\n+++ b/src/lib.rs\\n@@ -1 +1 @@\\n-a\\n+b\\n\"}"
            .to_owned(),
    })
}

/// How many tool-loop steps and calls a turn has.
fn steps(g: &mut G<'_, '_>) -> Result<usize> {
    let max = usize::from(g.k.max_steps);
    g.range(0, max)
}

fn calls(g: &mut G<'_, '_>) -> Result<usize> {
    let max = usize::from(g.k.max_parallel.max(1));
    if g.chance(70)? {
        Ok(1)
    } else {
        g.range(1, max)
    }
}

fn turns(g: &mut G<'_, '_>) -> Result<usize> {
    let max = usize::from(g.k.max_turns.max(1));
    g.range(1, max)
}

/// A string of this body's escaping.
fn s(g: &mut G<'_, '_>, text: impl Into<String>) -> Result<J> {
    g.str(text)
}

// ---------------------------------------------------------------------------------------------
// Chat Completions
// ---------------------------------------------------------------------------------------------

/// The reasoning fields of one assistant message, for the vendor.
fn chat_reasoning(g: &mut G<'_, '_>, vendor: Vendor, m: &mut Vec<(&'static str, J)>) -> Result<()> {
    match vendor {
        Vendor::DeepSeek | Vendor::Kimi | Vendor::Qwen => {
            // `""` is a real state (a turn whose reasoning was empty, Moonshot's own replays).
            let t = if g.chance(10)? {
                String::new()
            } else {
                g.thinking_text()?
            };
            m.push(("reasoning_content", s(g, t)?));
        }
        Vendor::OpenRouter => {
            let t = g.thinking_text()?;
            if g.chance(70)? {
                m.push(("reasoning", s(g, t.clone())?));
            }
            let mut details = Vec::new();
            if g.chance(80)? {
                let sig = g.signature()?;
                let text = s(g, t)?;
                let sig = s(g, sig)?;
                details.push(g.obj(vec![
                    ("type", J::s("reasoning.text")),
                    ("text", text),
                    ("signature", sig),
                    ("format", J::s("anthropic-claude-v1")),
                    ("index", J::n(0)),
                ])?);
            }
            if g.chance(30)? {
                let data = g.redacted()?;
                let data = s(g, data)?;
                details.push(g.obj(vec![
                    ("type", J::s("reasoning.encrypted")),
                    ("data", data),
                    ("format", J::s("anthropic-claude-v1")),
                    ("index", J::n(details.len())),
                ])?);
            }
            if !details.is_empty() {
                m.push(("reasoning_details", J::Arr(details)));
            }
        }
        _ => {}
    }
    Ok(())
}

fn chat(g: &mut G<'_, '_>) -> Result<(Vendor, String, J)> {
    let vendor = g.pick(&[
        Vendor::DeepSeek,
        Vendor::DeepSeek,
        Vendor::Kimi,
        Vendor::Kimi,
        Vendor::OpenRouter,
        Vendor::Gemini,
        Vendor::OpenAi,
        Vendor::Qwen,
    ])?;
    let model = match vendor {
        Vendor::DeepSeek => {
            g.pick(&["deepseek-v4-pro", "deepseek-reasoner", "deepseek-v4-flash"])?
        }
        Vendor::Kimi => g.pick(&["kimi-k2-thinking", "kimi-k2.6"])?,
        Vendor::Qwen => g.pick(&["qwen3-max", "qwen3-235b-a22b-thinking"])?,
        Vendor::OpenRouter => g.pick(&[
            "anthropic/claude-sonnet-4.5",
            "moonshotai/kimi-k2.6",
            "google/gemini-3-pro-preview",
        ])?,
        Vendor::Gemini => g.pick(&["gemini-3-pro-preview", "gemini-3-flash-preview"])?,
        _ => g.pick(&["gpt-5-mini", "gpt-4.1"])?,
    }
    .to_owned();
    let mut messages = Vec::new();
    if g.chance(60)? {
        let role = if vendor == Vendor::OpenAi && g.chance(50)? {
            "developer"
        } else {
            "system"
        };
        let t = s(g, "You are a careful coding agent. Use the tools.")?;
        messages.push(g.obj(vec![("role", J::s(role)), ("content", t)])?);
    }
    let n_turns = turns(g)?;
    for turn in 0..n_turns {
        let text = g.text()?;
        let content = if g.chance(20)? {
            let t = s(g, text)?;
            J::Arr(vec![g.obj(vec![("type", J::s("text")), ("text", t)])?])
        } else {
            s(g, text)?
        };
        messages.push(g.obj(vec![("role", J::s("user")), ("content", content)])?);
        let last_turn = turn + 1 == n_turns;
        for _ in 0..steps(g)? {
            let mut m: Vec<(&'static str, J)> = vec![("role", J::s("assistant"))];
            m.push((
                "content",
                match g.range(0, 3)? {
                    0 => J::Null,
                    1 => {
                        let t = g.text()?;
                        s(g, t)?
                    }
                    _ => J::s(""),
                },
            ));
            chat_reasoning(g, vendor, &mut m)?;
            let mut tool_calls = Vec::new();
            let mut ids = Vec::new();
            for c in 0..calls(g)? {
                let tool = g.pick(TOOLS)?;
                let id = match vendor {
                    Vendor::Kimi => format!("functions.{tool}:{}", ids.len()),
                    _ => g.tool_id("call_")?,
                };
                let args = arguments(g, tool)?;
                let args = s(g, args)?;
                let id_j = s(g, id.clone())?;
                let function = g.obj(vec![("name", J::s(tool)), ("arguments", args)])?;
                let mut call = vec![
                    ("id", id_j),
                    ("type", J::s("function")),
                    ("function", function),
                ];
                if vendor == Vendor::Gemini && c == 0 {
                    let sig = g.gemini_signature()?;
                    let sig = s(g, sig)?;
                    call.push((
                        "extra_content",
                        J::obj([("google", J::obj([("thought_signature", sig)]))]),
                    ));
                }
                tool_calls.push(g.obj(call)?);
                ids.push(id);
            }
            m.push(("tool_calls", J::Arr(tool_calls)));
            messages.push(g.obj(m)?);
            for id in ids {
                let out = g.text()?;
                let out = s(g, out)?;
                let id = s(g, id)?;
                messages.push(g.obj(vec![
                    ("role", J::s("tool")),
                    ("tool_call_id", id),
                    ("content", out),
                ])?);
            }
        }
        if !last_turn || g.chance(50)? {
            let t = g.text()?;
            let mut m: Vec<(&'static str, J)> =
                vec![("role", J::s("assistant")), ("content", s(g, t)?)];
            chat_reasoning(g, vendor, &mut m)?;
            messages.push(g.obj(m)?);
        }
    }
    let mut top: Vec<(&'static str, J)> = vec![
        ("model", J::s(model.clone())),
        ("messages", J::Arr(messages)),
    ];
    let tools: Vec<J> = TOOLS
        .iter()
        .map(|t| {
            J::obj([
                ("type", J::s("function")),
                (
                    "function",
                    J::obj([
                        ("name", J::s(*t)),
                        ("parameters", J::obj([("type", J::s("object"))])),
                    ]),
                ),
            ])
        })
        .collect();
    top.push(("tools", J::Arr(tools)));
    match vendor {
        Vendor::DeepSeek if g.chance(50)? => {
            top.push(("thinking", J::obj([("type", J::s("enabled"))])));
        }
        Vendor::Kimi if g.chance(40)? => {
            top.push((
                "thinking",
                J::obj([("type", J::s("enabled")), ("keep", J::s("all"))]),
            ));
        }
        Vendor::Qwen => top.push(("enable_thinking", J::Bool(true))),
        Vendor::OpenAi if g.chance(50)? => top.push(("reasoning_effort", J::s("low"))),
        _ => {}
    }
    if g.chance(50)? {
        top.push(("stream", J::Bool(true)));
    }
    Ok((vendor, model, g.obj(top)?))
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

fn rs_id(g: &mut G<'_, '_>, prefix: &str) -> Result<String> {
    g.tool_id(prefix)
}

/// A reasoning item: `rs_` id (or none, Codex-style, when `idless`), `summary`, and
/// `encrypted_content` (always when `store_false`).
fn reasoning_item(g: &mut G<'_, '_>, store_false: bool, idless: bool) -> Result<J> {
    let mut m: Vec<(&'static str, J)> = vec![("type", J::s("reasoning"))];
    if !idless {
        let id = rs_id(g, "rs_")?;
        m.push(("id", s(g, id)?));
    }
    let summary = if g.chance(40)? {
        J::Arr(Vec::new())
    } else {
        let t = g.thinking_text()?;
        let t = s(g, t)?;
        J::Arr(vec![
            g.obj(vec![("type", J::s("summary_text")), ("text", t)])?,
        ])
    };
    m.push(("summary", summary));
    if store_false || idless || g.chance(60)? {
        let blob = format!("gAAAAA{}", g.redacted()?);
        m.push(("encrypted_content", s(g, blob)?));
    }
    g.obj(m)
}

fn responses(g: &mut G<'_, '_>) -> Result<(Vendor, String, J)> {
    let vendor = g.pick(&[Vendor::OpenAi, Vendor::OpenAi, Vendor::OpenAi, Vendor::Xai])?;
    let model = match vendor {
        Vendor::Xai => g.pick(&["grok-4", "grok-code-fast-1"])?,
        _ => g.pick(&["gpt-5", "gpt-5-mini", "o4-mini", "gpt-5.1-codex"])?,
    }
    .to_owned();
    let store_false = g.chance(30)?;
    // Codex sends id-less reasoning with encrypted state and no server ids anywhere.
    let idless = store_false && g.chance(50)?;
    let mut input = Vec::new();
    if g.chance(50)? {
        let t = s(g, "You are a careful coding agent.")?;
        input.push(g.obj(vec![("role", J::s("developer")), ("content", t)])?);
    }
    let n_turns = turns(g)?;
    for turn in 0..n_turns {
        let text = g.text()?;
        let t = s(g, text)?;
        let user = if g.chance(50)? {
            let part = g.obj(vec![("type", J::s("input_text")), ("text", t)])?;
            g.obj(vec![
                ("type", J::s("message")),
                ("role", J::s("user")),
                ("content", J::Arr(vec![part])),
            ])?
        } else {
            g.obj(vec![("role", J::s("user")), ("content", t)])?
        };
        input.push(user);
        let last_turn = turn + 1 == n_turns;
        for _ in 0..steps(g)? {
            if g.chance(85)? {
                input.push(reasoning_item(g, store_false, idless)?);
            }
            let mut ids = Vec::new();
            for _ in 0..calls(g)? {
                let tool = g.pick(TOOLS)?;
                let call_id = g.tool_id("call_")?;
                let args = arguments(g, tool)?;
                let mut m: Vec<(&'static str, J)> = vec![("type", J::s("function_call"))];
                if !idless {
                    let fc = rs_id(g, "fc_")?;
                    m.push(("id", s(g, fc)?));
                }
                m.push(("call_id", s(g, call_id.clone())?));
                m.push(("name", J::s(tool)));
                m.push(("arguments", s(g, args)?));
                if g.chance(30)? {
                    m.push(("status", J::s("completed")));
                }
                input.push(g.obj(m)?);
                ids.push(call_id);
            }
            for id in ids {
                let out = g.text()?;
                let out = s(g, out)?;
                let id = s(g, id)?;
                input.push(g.obj(vec![
                    ("type", J::s("function_call_output")),
                    ("call_id", id),
                    ("output", out),
                ])?);
            }
        }
        if !last_turn || g.chance(50)? {
            let reasoned = g.chance(70)?;
            if reasoned {
                input.push(reasoning_item(g, store_false, idless)?);
            }
            let t = g.text()?;
            let t = s(g, t)?;
            let part = g.obj(vec![
                ("type", J::s("output_text")),
                ("text", t),
                ("annotations", J::Arr(Vec::new())),
            ])?;
            let mut m: Vec<(&'static str, J)> = vec![("type", J::s("message"))];
            // After a stored reasoning item the message must carry its own `msg_` id (OR-01).
            if !idless && (reasoned || g.chance(50)?) {
                let id = rs_id(g, "msg_")?;
                m.push(("id", s(g, id)?));
            }
            m.push(("role", J::s("assistant")));
            m.push(("content", J::Arr(vec![part])));
            if g.chance(30)? {
                m.push(("status", J::s("completed")));
            }
            input.push(g.obj(m)?);
        }
    }
    let mut top: Vec<(&'static str, J)> =
        vec![("model", J::s(model.clone())), ("input", J::Arr(input))];
    if store_false {
        top.push(("store", J::Bool(false)));
        top.push(("include", J::Arr(vec![J::s("reasoning.encrypted_content")])));
    }
    if g.chance(60)? {
        top.push((
            "reasoning",
            J::obj([
                ("effort", J::s(g.pick(&["low", "medium", "high"])?)),
                ("summary", J::s("auto")),
            ]),
        ));
    }
    let tools: Vec<J> = TOOLS
        .iter()
        .map(|t| {
            J::obj([
                ("type", J::s("function")),
                ("name", J::s(*t)),
                ("parameters", J::obj([("type", J::s("object"))])),
            ])
        })
        .collect();
    top.push(("tools", J::Arr(tools)));
    Ok((vendor, model, g.obj(top)?))
}

// ---------------------------------------------------------------------------------------------
// Converse
// ---------------------------------------------------------------------------------------------

fn converse_text(g: &mut G<'_, '_>) -> Result<J> {
    let t = g.text()?;
    let t = s(g, t)?;
    Ok(J::obj([("text", t)]))
}

fn converse_reasoning(g: &mut G<'_, '_>) -> Result<J> {
    if g.chance(15)? {
        let data = g.redacted()?;
        let data = s(g, data)?;
        return Ok(J::obj([(
            "reasoningContent",
            J::obj([("redactedContent", data)]),
        )]));
    }
    let t = g.thinking_text()?;
    let t = if t.is_empty() {
        "Let me think.".into()
    } else {
        t
    };
    let t = s(g, t)?;
    let sig = g.signature()?;
    let sig = s(g, sig)?;
    let rt = g.obj(vec![("text", t), ("signature", sig)])?;
    Ok(J::obj([(
        "reasoningContent",
        J::obj([("reasoningText", rt)]),
    )]))
}

fn converse(g: &mut G<'_, '_>) -> Result<(Vendor, String, J)> {
    let vendor = g.pick(&[
        Vendor::BedrockClaude,
        Vendor::BedrockClaude,
        Vendor::BedrockClaude,
        Vendor::BedrockDeepSeekR1,
        Vendor::BedrockNova,
    ])?;
    let model = match vendor {
        Vendor::BedrockClaude => g.pick(&[
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-opus-4-1-20250805-v1:0",
            "global.anthropic.claude-sonnet-4-6",
        ])?,
        Vendor::BedrockDeepSeekR1 => "us.deepseek.r1-v1:0",
        _ => "us.amazon.nova-2-lite-v1:0",
    }
    .to_owned();
    let thinking = vendor == Vendor::BedrockClaude;
    let mut messages = Vec::new();
    let n_turns = turns(g)?;
    for turn in 0..n_turns {
        // The turn opens with the user's text.
        let text = converse_text(g)?;
        messages.push(g.obj(vec![
            ("role", J::s("user")),
            ("content", J::Arr(vec![text])),
        ])?);
        let last_turn = turn + 1 == n_turns;
        let n_steps = steps(g)?;
        for _ in 0..n_steps {
            let mut content = Vec::new();
            if thinking {
                content.push(converse_reasoning(g)?);
            }
            if g.chance(40)? {
                content.push(converse_text(g)?);
            }
            let mut ids = Vec::new();
            for _ in 0..calls(g)? {
                let tool = g.pick(TOOLS)?;
                let id = g.tool_id("tooluse_")?;
                let args = arguments(g, tool)?;
                let input = serde_json::from_str::<serde_json::Value>(&args)
                    .map(|v| J::from_value(&v))
                    .unwrap_or(J::Obj(Vec::new()));
                let idj = s(g, id.clone())?;
                let tu = g.obj(vec![
                    ("toolUseId", idj),
                    ("name", J::s(tool)),
                    ("input", input),
                ])?;
                content.push(J::obj([("toolUse", tu)]));
                ids.push(id);
            }
            messages.push(g.obj(vec![
                ("role", J::s("assistant")),
                ("content", J::Arr(content)),
            ])?);
            let mut results = Vec::new();
            for id in ids {
                let out = g.text()?;
                let out = s(g, out)?;
                let inner = if g.chance(20)? {
                    J::obj([("json", J::obj([("result", out)]))])
                } else {
                    J::obj([("text", out)])
                };
                let idj = s(g, id)?;
                let mut r = vec![("toolUseId", idj), ("content", J::Arr(vec![inner]))];
                if g.chance(30)? {
                    r.push(("status", J::s("success")));
                }
                results.push(J::obj([("toolResult", g.obj(r)?)]));
            }
            messages.push(g.obj(vec![("role", J::s("user")), ("content", J::Arr(results))])?);
        }
        if n_steps > 0 && last_turn && g.chance(50)? {
            // Open tool loop: the request ends with the results.
            continue;
        }
        if !last_turn || n_steps > 0 {
            let mut content = Vec::new();
            if thinking {
                content.push(converse_reasoning(g)?);
            }
            content.push(converse_text(g)?);
            messages.push(g.obj(vec![
                ("role", J::s("assistant")),
                ("content", J::Arr(content)),
            ])?);
            if last_turn {
                // A request ends on the user's turn.
                let t = converse_text(g)?;
                messages.push(g.obj(vec![("role", J::s("user")), ("content", J::Arr(vec![t]))])?);
            }
        }
    }
    let tools: Vec<J> = TOOLS
        .iter()
        .map(|t| {
            J::obj([(
                "toolSpec",
                J::obj([
                    ("name", J::s(*t)),
                    (
                        "inputSchema",
                        J::obj([("json", J::obj([("type", J::s("object"))]))]),
                    ),
                ]),
            )])
        })
        .collect();
    let mut top: Vec<(&'static str, J)> = vec![("messages", J::Arr(messages))];
    if g.chance(50)? {
        let sys = s(g, "You are a careful coding agent.")?;
        top.push(("system", J::Arr(vec![J::obj([("text", sys)])])));
    }
    top.push(("toolConfig", J::obj([("tools", J::Arr(tools))])));
    top.push(("inferenceConfig", J::obj([("maxTokens", J::n(4096))])));
    if thinking {
        let t = if g.chance(70)? {
            J::obj([("type", J::s("enabled")), ("budget_tokens", J::n(2048))])
        } else {
            J::obj([("type", J::s("adaptive"))])
        };
        top.push(("additionalModelRequestFields", J::obj([("thinking", t)])));
    }
    Ok((vendor, model, g.obj(top)?))
}

// ---------------------------------------------------------------------------------------------
// Damage
// ---------------------------------------------------------------------------------------------

/// What clients and converters do to these bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireDamage {
    /// Chat: a tool message is lost (OA-01).
    RemoveToolAnswer,
    /// Chat: `reasoning_content` dropped from a tool-call turn (DS-03, KM-01).
    DropReasoningContent,
    /// Chat: a tool message sent twice (OA-02).
    DuplicateToolMessage,
    /// Chat: a tool message moved past the next message (OA-01 brings it back).
    MoveToolMessageLater,
    /// Chat: Gemini's `extra_content` signature stripped (GM-18).
    StripSignature,
    /// Chat: an assistant message with content and calls gone (OA-03).
    EmptyAssistant,
    /// Responses: the item after a reasoning item removed (OR-01).
    OrphanReasoning,
    /// Responses: a reasoning item's `summary` removed (OR-11).
    StripSummary,
    /// Responses: a `function_call_output` removed (OR-05).
    RemoveCallOutput,
    /// Responses: a `function_call` removed, its output left (OR-05).
    RemoveCall,
    /// Responses: `store: false` with a reasoning item lacking `encrypted_content` (OR-03).
    StoreFalseWithoutState,
    /// Responses: `content` (reasoning text) added to a reasoning item (OR-12).
    ReasoningContentAdded,
    /// Converse: `reasoningContent` moved after the text and calls (BR-01).
    ReasoningAfterText,
    /// Converse: a `toolResult` removed (BR-11).
    RemoveToolResult,
    /// Converse: a `toolResult` duplicated (BR-12).
    DuplicateToolResult,
    /// Converse: a reasoning block's signature stripped.
    StripReasoningSignature,
    /// Converse: a blank text block added (BR-13).
    BlankText,
    /// Converse: a reasoning text nulled (BR-04).
    NullReasoningText,
    /// Any family: an item of the message array removed outright.
    DropItem,
}

const CHAT_DAMAGE: &[WireDamage] = &[
    WireDamage::RemoveToolAnswer,
    WireDamage::DropReasoningContent,
    WireDamage::DropReasoningContent,
    WireDamage::DuplicateToolMessage,
    WireDamage::MoveToolMessageLater,
    WireDamage::StripSignature,
    WireDamage::EmptyAssistant,
    WireDamage::DropItem,
];

const RESPONSES_DAMAGE: &[WireDamage] = &[
    WireDamage::OrphanReasoning,
    WireDamage::OrphanReasoning,
    WireDamage::StripSummary,
    WireDamage::RemoveCallOutput,
    WireDamage::RemoveCall,
    WireDamage::StoreFalseWithoutState,
    WireDamage::ReasoningContentAdded,
    WireDamage::DropItem,
];

const CONVERSE_DAMAGE: &[WireDamage] = &[
    WireDamage::ReasoningAfterText,
    WireDamage::ReasoningAfterText,
    WireDamage::RemoveToolResult,
    WireDamage::DuplicateToolResult,
    WireDamage::StripReasoningSignature,
    WireDamage::BlankText,
    WireDamage::NullReasoningText,
    WireDamage::DropItem,
];

/// Applies one to three damage operations of `b`'s family (retrying a few times when the body
/// offers no place for the chosen one).
///
/// # Errors
/// Only what [`Unstructured`] reports.
pub fn wire_damage(u: &mut Unstructured<'_>, b: &mut WireBody) -> Result<()> {
    let ops = match b.format {
        Format::Responses => RESPONSES_DAMAGE,
        Format::Converse => CONVERSE_DAMAGE,
        _ => CHAT_DAMAGE,
    };
    let n = u.int_in_range(1..=3u8)?;
    let mut done = 0;
    for _ in 0..n * 4 {
        if done == n {
            break;
        }
        let d = *u.choose(ops)?;
        if wire_apply(u, b, d)? {
            b.damage.push(format!("{d:?}"));
            done += 1;
        }
    }
    Ok(())
}

/// The item array: `messages` (Chat, Converse) or `input` (Responses).
fn items(b: &mut WireBody) -> Option<&mut Vec<J>> {
    let key = if b.format == Format::Responses {
        "input"
    } else {
        "messages"
    };
    b.root.get_mut(key).and_then(J::as_arr_mut)
}

fn str_of<'j>(j: &'j J, key: &str) -> Option<&'j str> {
    j.get(key).and_then(J::as_str)
}

/// Indices of the items matching `f`.
fn where_(items: &[J], f: impl Fn(&J) -> bool) -> Vec<usize> {
    items
        .iter()
        .enumerate()
        .filter(|(_, j)| f(j))
        .map(|(i, _)| i)
        .collect()
}

/// Converse content blocks of `m` keyed `key`, as indices.
fn blocks_keyed(m: &J, key: &str) -> Vec<usize> {
    m.get("content")
        .and_then(J::as_arr)
        .map(|c| where_(c, |b| b.get(key).is_some()))
        .unwrap_or_default()
}

/// Applies `d` to `b`; false when `b` has no place for it.
///
/// # Errors
/// Only what [`Unstructured`] reports.
pub fn wire_apply(u: &mut Unstructured<'_>, b: &mut WireBody, d: WireDamage) -> Result<bool> {
    let Some(items) = items(b) else {
        return Ok(false);
    };
    let pick = |u: &mut Unstructured<'_>, v: &[usize]| -> Result<Option<usize>> {
        if v.is_empty() {
            Ok(None)
        } else {
            Ok(Some(*u.choose(v)?))
        }
    };
    let is_role = |j: &J, r: &str| str_of(j, "role") == Some(r);
    let is_type = |j: &J, t: &str| str_of(j, "type") == Some(t);
    match d {
        WireDamage::RemoveToolAnswer => {
            let Some(i) = pick(u, &where_(items, |j| is_role(j, "tool")))? else {
                return Ok(false);
            };
            items.remove(i);
        }
        WireDamage::DropReasoningContent => {
            let v = where_(items, |j| {
                is_role(j, "assistant") && j.get("reasoning_content").is_some()
            });
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items[i].remove("reasoning_content");
        }
        WireDamage::DuplicateToolMessage => {
            let Some(i) = pick(u, &where_(items, |j| is_role(j, "tool")))? else {
                return Ok(false);
            };
            let copy = items[i].clone();
            let at = u.int_in_range(i + 1..=items.len())?;
            items.insert(at, copy);
        }
        WireDamage::MoveToolMessageLater => {
            let v = where_(items, |j| is_role(j, "tool"));
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            if i + 2 > items.len() {
                return Ok(false);
            }
            let m = items.remove(i);
            let at = u.int_in_range(i + 1..=items.len())?;
            items.insert(at, m);
        }
        WireDamage::StripSignature => {
            let mut found = false;
            let v = where_(items, |j| {
                is_role(j, "assistant") && j.get("tool_calls").is_some()
            });
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            if let Some(calls) = items[i].get_mut("tool_calls").and_then(J::as_arr_mut) {
                for c in calls {
                    found |= c.remove("extra_content").is_some();
                }
            }
            return Ok(found);
        }
        WireDamage::EmptyAssistant => {
            let v = where_(items, |j| is_role(j, "assistant"));
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items[i].remove("tool_calls");
            items[i].set("content", J::Null);
        }
        WireDamage::OrphanReasoning => {
            let v: Vec<usize> = where_(items, |j| is_type(j, "reasoning"))
                .into_iter()
                .filter(|&i| i + 1 < items.len())
                .collect();
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items.remove(i + 1);
        }
        WireDamage::StripSummary => {
            let v = where_(items, |j| {
                is_type(j, "reasoning") && j.get("summary").is_some()
            });
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items[i].remove("summary");
        }
        WireDamage::RemoveCallOutput => {
            let v = where_(items, |j| is_type(j, "function_call_output"));
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items.remove(i);
        }
        WireDamage::RemoveCall => {
            let v = where_(items, |j| is_type(j, "function_call"));
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items.remove(i);
        }
        WireDamage::StoreFalseWithoutState => {
            let v = where_(items, |j| is_type(j, "reasoning") && j.get("id").is_some());
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items[i].remove("encrypted_content");
            b.root.set("store", J::Bool(false));
        }
        WireDamage::ReasoningContentAdded => {
            let v = where_(items, |j| is_type(j, "reasoning"));
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            items[i].set(
                "content",
                J::Arr(vec![J::obj([
                    ("type", J::s("reasoning_text")),
                    ("text", J::s("Claude's thinking, translated by a proxy.")),
                ])]),
            );
        }
        WireDamage::ReasoningAfterText => {
            let v = where_(items, |j| {
                is_role(j, "assistant") && !blocks_keyed(j, "reasoningContent").is_empty()
            });
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            let Some(content) = items[i].get_mut("content").and_then(J::as_arr_mut) else {
                return Ok(false);
            };
            if content.len() < 2 {
                return Ok(false);
            }
            let r = content.remove(0);
            let at = u.int_in_range(1..=content.len())?;
            content.insert(at, r);
        }
        WireDamage::RemoveToolResult | WireDamage::DuplicateToolResult => {
            let v = where_(items, |j| {
                is_role(j, "user") && !blocks_keyed(j, "toolResult").is_empty()
            });
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            let k = *u.choose(&blocks_keyed(&items[i], "toolResult"))?;
            let Some(content) = items[i].get_mut("content").and_then(J::as_arr_mut) else {
                return Ok(false);
            };
            if d == WireDamage::RemoveToolResult {
                content.remove(k);
            } else {
                let copy = content[k].clone();
                content.push(copy);
            }
        }
        WireDamage::StripReasoningSignature | WireDamage::NullReasoningText => {
            let v = where_(items, |j| !blocks_keyed(j, "reasoningContent").is_empty());
            let Some(i) = pick(u, &v)? else {
                return Ok(false);
            };
            let k = *u.choose(&blocks_keyed(&items[i], "reasoningContent"))?;
            let rt = items[i]
                .get_mut("content")
                .and_then(J::as_arr_mut)
                .and_then(|c| c.get_mut(k))
                .and_then(|b| b.get_mut("reasoningContent"))
                .and_then(|r| r.get_mut("reasoningText"));
            let Some(rt) = rt else {
                return Ok(false);
            };
            if d == WireDamage::StripReasoningSignature {
                return Ok(rt.remove("signature").is_some());
            }
            rt.set("text", J::Null);
        }
        WireDamage::BlankText => {
            if items.is_empty() {
                return Ok(false);
            }
            let i = u.choose_index(items.len())?;
            let blank = J::obj([("text", J::s(*u.choose(&["", " ", "\n\n"])?))]);
            let Some(content) = items[i].get_mut("content").and_then(J::as_arr_mut) else {
                return Ok(false);
            };
            let at = u.int_in_range(0..=content.len())?;
            content.insert(at, blank);
        }
        WireDamage::DropItem => {
            if items.len() < 2 {
                return Ok(false);
            }
            let i = u.choose_index(items.len())?;
            items.remove(i);
        }
    }
    Ok(true)
}
