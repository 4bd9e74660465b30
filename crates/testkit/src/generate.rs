//! The generator: realistic conversations from unstructured bytes.
//!
//! One function, [`conversation`], used by proptest ([`crate::strategy`]) and the fuzz targets
//! ([`crate::fuzz`]). It produces request bodies the way agents produce them: tool loops with
//! signed thinking, interleaved and redacted thinking, server tools, parallel calls, string and
//! block content, `cache_control`, rare fields and block types; Gemini `contents` with
//! `thoughtSignature`; OpenCode export arrays with every part type and tool state. The text form
//! varies (key order, whitespace, escapes). What [`crate::damage()`] does to it is separate.

use std::fmt;

use arbitrary::{Result, Unstructured};
use turnkeeper_model::Format;
use turnkeeper_prevent::{Mode, Options};

use crate::json::{Esc, J, JStr, Key, Style};
use crate::samples::samples;

/// How big and how varied generated conversations are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knobs {
    /// Generate Anthropic request bodies.
    pub anthropic: bool,
    /// Generate Gemini request bodies.
    pub gemini: bool,
    /// Generate OpenCode export arrays.
    pub opencode: bool,
    /// Most user turns (each followed by the assistant's tool loop).
    pub max_turns: u8,
    /// Most tool-loop steps in one turn.
    pub max_steps: u8,
    /// Most parallel tool calls in one assistant message.
    pub max_parallel: u8,
    /// Most thinking blocks at the start of one assistant message.
    pub max_thinking: u8,
    /// Sometimes write a long string (tool output, thinking) of about this many bytes; 0: never.
    pub long_len: usize,
    /// Rare fields and unknown block types.
    pub unknown: bool,
    /// Most damage operations [`crate::damage()`] applies.
    pub max_damage: u8,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            anthropic: true,
            gemini: true,
            opencode: true,
            max_turns: 4,
            max_steps: 3,
            max_parallel: 3,
            max_thinking: 3,
            long_len: 6000,
            unknown: true,
            max_damage: 3,
        }
    }
}

impl Knobs {
    /// Only Anthropic bodies.
    pub fn anthropic_only() -> Self {
        Knobs {
            gemini: false,
            opencode: false,
            ..Knobs::default()
        }
    }

    /// Only OpenCode exports.
    pub fn opencode_only() -> Self {
        Knobs {
            anthropic: false,
            gemini: false,
            ..Knobs::default()
        }
    }
}

/// A generated conversation: a JSON tree, the style it is written in, and what was done to it.
#[derive(Clone, PartialEq)]
pub struct Conversation {
    /// The wire format.
    pub format: Format,
    /// The body.
    pub root: J,
    /// Whitespace of the text form.
    pub style: Style,
    /// The target model, for formats whose body does not name it (Gemini, OpenCode).
    pub model: Option<String>,
    /// Names of the damage applied, in order.
    pub damage: Vec<String>,
}

impl Conversation {
    /// The body's text.
    pub fn json(&self) -> String {
        self.style.write(&self.root)
    }

    /// The prevent options this conversation targets (its model when the body has none).
    pub fn options(&self) -> Options<'static> {
        Options {
            model: match self.format {
                Format::Anthropic => None,
                _ => self.model.clone(),
            },
            ..Options::default()
        }
    }
}

/// Prints the JSON, so a failing case can be pasted into a file and replayed.
impl fmt::Debug for Conversation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Conversation {{ format: {}, model: {:?}, damage: {:?} }}",
            self.format, self.model, self.damage
        )?;
        f.write_str(&self.json())
    }
}

/// Generates a conversation with the default [`Knobs`].
///
/// # Errors
/// Only what [`Unstructured`] reports; running out of bytes gives a small conversation, not an
/// error.
pub fn conversation(u: &mut Unstructured<'_>) -> Result<Conversation> {
    conversation_with(u, &Knobs::default())
}

/// Generates a conversation under `knobs`.
///
/// # Errors
/// See [`conversation`].
pub fn conversation_with(u: &mut Unstructured<'_>, knobs: &Knobs) -> Result<Conversation> {
    let mut formats = Vec::new();
    if knobs.anthropic {
        // Anthropic is what the rules mostly guard: weight it.
        formats.extend([Format::Anthropic; 3]);
    }
    if knobs.gemini {
        formats.push(Format::Gemini);
    }
    if knobs.opencode {
        formats.push(Format::Opencode);
    }
    if formats.is_empty() {
        formats.push(Format::Anthropic);
    }
    let format = *u.choose(&formats)?;
    let mut g = G::new(u, knobs)?;
    let (root, model) = match format {
        Format::Anthropic => (anthropic(&mut g)?, None),
        Format::Gemini => {
            let (r, m) = gemini(&mut g)?;
            (r, Some(m))
        }
        // The wire families have their own generators; the block formats are the choices here.
        _ => {
            let (r, m) = opencode(&mut g)?;
            (r, Some(m))
        }
    };
    let style = g.style()?;
    Ok(Conversation {
        format,
        root,
        style,
        model,
        damage: Vec::new(),
    })
}

// ---------------------------------------------------------------------------------------------
// The generator state
// ---------------------------------------------------------------------------------------------

/// How strings are escaped across a conversation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EscMode {
    /// Every string minimal (JavaScript `JSON.stringify`).
    Minimal,
    /// Every string ASCII-escaped (Python `json.dumps`).
    Ascii,
    /// Each string chooses.
    Mixed,
}

/// Generator state: the byte source, the knobs, and conversation-wide choices.
pub(crate) struct G<'g, 'a> {
    pub(crate) u: &'g mut Unstructured<'a>,
    pub(crate) k: &'g Knobs,
    shuffle: bool,
    esc: EscMode,
    counter: u64,
}

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

impl<'g, 'a> G<'g, 'a> {
    pub(crate) fn new(u: &'g mut Unstructured<'a>, k: &'g Knobs) -> Result<Self> {
        let shuffle = u.ratio(1u8, 4u8)?;
        let esc = *u.choose(&[
            EscMode::Minimal,
            EscMode::Ascii,
            EscMode::Mixed,
            EscMode::Mixed,
        ])?;
        Ok(G {
            u,
            k,
            shuffle,
            esc,
            counter: 0,
        })
    }

    pub(crate) fn chance(&mut self, pct: u8) -> Result<bool> {
        Ok(self.u.int_in_range(0..=99u8)? < pct)
    }

    pub(crate) fn range(&mut self, lo: usize, hi: usize) -> Result<usize> {
        if hi <= lo {
            return Ok(lo);
        }
        self.u.int_in_range(lo..=hi)
    }

    pub(crate) fn pick<T: Copy>(&mut self, xs: &[T]) -> Result<T> {
        Ok(*self.u.choose(xs)?)
    }

    fn style(&mut self) -> Result<Style> {
        Ok(Style {
            indent: self.pick(&[0u8, 0, 0, 1, 2, 4])?,
            colon_space: self.u.arbitrary()?,
            comma_space: self.u.arbitrary()?,
            crlf: self.chance(10)?,
            trailing_newline: self.chance(30)?,
        })
    }

    fn esc(&mut self) -> Result<Esc> {
        Ok(match self.esc {
            EscMode::Minimal => Esc::Minimal,
            EscMode::Ascii => Esc::Ascii,
            EscMode::Mixed => self.pick(&[Esc::Minimal, Esc::Minimal, Esc::Ascii, Esc::Slashes])?,
        })
    }

    /// A string value with this conversation's escaping.
    pub(crate) fn str(&mut self, text: impl Into<String>) -> Result<J> {
        Ok(J::Str(JStr {
            text: text.into(),
            esc: self.esc()?,
        }))
    }

    /// An object; members keep their order unless this conversation shuffles keys.
    pub(crate) fn obj<K: Into<Key>>(&mut self, members: Vec<(K, J)>) -> Result<J> {
        let mut m: Vec<(Key, J)> = members.into_iter().map(|(k, v)| (k.into(), v)).collect();
        if self.shuffle {
            for i in (1..m.len()).rev() {
                let j = self.range(0, i)?;
                m.swap(i, j);
            }
        }
        Ok(J::Obj(m))
    }

    fn next(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    fn base62(&mut self, n: usize) -> Result<String> {
        let mut s = String::with_capacity(n);
        for _ in 0..n {
            s.push(BASE62[self.range(0, BASE62.len() - 1)?] as char);
        }
        Ok(s)
    }

    /// A unique Anthropic-shaped id: `toolu_01` plus 22 base62 characters.
    pub(crate) fn tool_id(&mut self, prefix: &str) -> Result<String> {
        let n = self.next();
        let tail = self.base62(18)?;
        Ok(format!("{prefix}{n:04}{tail}"))
    }

    /// Visible text: realistic fragments, escapes, non-ASCII, sometimes a long log.
    pub(crate) fn text(&mut self) -> Result<String> {
        let n = self.range(1, 3)?;
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push_str(self.pick(&[" ", "\n", "\n\n", "  "])?);
            }
            s.push_str(self.pick(TEXTS)?);
        }
        if self.k.long_len > 0 && self.chance(4)? {
            s.push('\n');
            s.push_str(&long_text(self.k.long_len));
        }
        Ok(s)
    }

    /// Thinking text: prose with newlines, quotes, `é`, emoji (astral, so `\ud83d\ude00` when
    /// ASCII-escaped), sometimes long, sometimes empty (display omitted).
    pub(crate) fn thinking_text(&mut self) -> Result<String> {
        if self.chance(12)? {
            return Ok(String::new());
        }
        let n = self.range(1, 4)?;
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push_str(self.pick(&["\n", "\n\n", " "])?);
            }
            s.push_str(self.pick(THOUGHTS)?);
        }
        if self.chance(50)? {
            s.push_str(self.pick(SPICE)?);
        }
        if self.k.long_len > 0 && self.chance(4)? {
            s.push_str("\n\n");
            s.push_str(&long_text(self.k.long_len));
        }
        Ok(s)
    }

    /// A real signature from the corpus.
    pub(crate) fn signature(&mut self) -> Result<String> {
        Ok(self.u.choose(&samples().signatures)?.clone())
    }

    /// A real redacted-thinking payload.
    pub(crate) fn redacted(&mut self) -> Result<String> {
        Ok(self.u.choose(&samples().redacted)?.clone())
    }

    /// A real Gemini thought signature.
    pub(crate) fn gemini_signature(&mut self) -> Result<String> {
        Ok(self.u.choose(&samples().gemini)?.clone())
    }

    /// A signed thinking block.
    pub(crate) fn thinking_block(&mut self) -> Result<J> {
        let t = self.thinking_text()?;
        let sig = self.signature()?;
        let thinking = J::Str(JStr {
            text: t,
            esc: self.pick(&[Esc::Minimal, Esc::Ascii, Esc::Ascii])?,
        });
        let signature = J::Str(JStr {
            text: sig,
            esc: self.pick(&[Esc::Minimal, Esc::Minimal, Esc::Slashes])?,
        });
        self.obj(vec![
            ("type", J::s("thinking")),
            ("thinking", thinking),
            ("signature", signature),
        ])
    }

    /// A redacted thinking block.
    pub(crate) fn redacted_block(&mut self) -> Result<J> {
        let data = self.redacted()?;
        let data = self.str(data)?;
        self.obj(vec![("type", J::s("redacted_thinking")), ("data", data)])
    }

    fn cache_control(&mut self) -> Result<J> {
        Ok(match self.range(0, 2)? {
            0 => J::obj([("type", J::s("ephemeral"))]),
            1 => J::obj([("type", J::s("ephemeral")), ("ttl", J::s("5m"))]),
            _ => J::obj([("type", J::s("ephemeral")), ("ttl", J::s("1h"))]),
        })
    }

    pub(crate) fn text_block(&mut self) -> Result<J> {
        let t = self.text()?;
        let t = self.str(t)?;
        let mut m = vec![("type", J::s("text")), ("text", t)];
        if self.chance(10)? {
            m.push(("cache_control", self.cache_control()?));
        }
        if self.k.unknown && self.chance(5)? {
            m.push(("citations", J::Null));
        }
        self.obj(m)
    }
}

fn long_text(len: usize) -> String {
    let mut s = String::with_capacity(len + 64);
    let mut i = 0u32;
    while s.len() < len {
        i += 1;
        s.push_str(&format!(
            "[{i:05}] DEBUG parser::tokenize: consumed token \"ident\" at 12:{i} — ok ✓\n"
        ));
    }
    s
}

const TEXTS: &[&str] = &[
    "What's the weather in Florence, Italy?",
    "Fix the failing test in src/parser.rs.",
    "Run the benchmarks and summarise the results.",
    "Here is the output: \"3 passed; 1 failed\"",
    "Path: C:\\Users\\dev\\work\\parser\\src\\lib.rs",
    "Ça marche très bien, merci ! Déjà vu.",
    "日本語のテキストと中文文本。",
    "Привет, мир! Γειά σου Κόσμε. שלום עולם",
    "Emoji: 😀🎉👍🏽 and a family 👨‍👩‍👧",
    "Tabs\tand\ttabs, a bell \u{7} and a NUL-free control \u{1}.",
    "Line separator\u{2028}inside, and </script> tags",
    "The current temperature in Florence is 40°C (104°F).",
    "Done. I changed `tokenize` to stop at end of input.",
    "{\"json\": \"inside text\", \"n\": [1, 2, 3]}",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters and combining e\u{301}",
    "Let me check the file first.",
];

const THOUGHTS: &[&str] = &[
    "The user is asking about the weather in Florence, Italy. I have a weather function available.",
    "I should run the tests first to see which one fails.",
    "The error says \"index out of bounds\"; tokenize reads one byte past the end.",
    "Let me think step by step:\n1. read the file\n2. find the loop\n3. fix the bound",
    "Café, naïve, résumé: the input has accents (é) that must survive.",
    "Two tools can run in parallel here: grep and read.",
    "The search results mention a 2024 report; cite it.",
    "Hmm — the previous attempt failed with exit code 101.",
];

const SPICE: &[&str] = &[
    " 😀",
    " \"quoted\" ",
    " back\\slash ",
    "\t(tab)",
    " ✓ done",
    " 中文",
    "\u{2028}",
];
// ---------------------------------------------------------------------------------------------
// Anthropic
// ---------------------------------------------------------------------------------------------

/// The `thinking` parameter a generated request carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Param {
    Manual,
    Adaptive,
    Disabled,
    Omitted,
}

/// Model ids (spelled as agents spell them) and the thinking parameters they accept.
const ANTHROPIC_MODELS: &[(&str, &[Param], Mode)] = &[
    (
        "claude-sonnet-4-5",
        &[
            Param::Manual,
            Param::Manual,
            Param::Disabled,
            Param::Omitted,
        ],
        Mode::Off,
    ),
    (
        "claude-sonnet-4-5-20250929",
        &[Param::Manual, Param::Omitted],
        Mode::Off,
    ),
    (
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        &[Param::Manual],
        Mode::Off,
    ),
    (
        "claude-sonnet-4-20250514",
        &[Param::Manual, Param::Disabled],
        Mode::Off,
    ),
    ("claude-opus-4-1", &[Param::Manual], Mode::Off),
    (
        "claude-haiku-4-5",
        &[Param::Manual, Param::Omitted],
        Mode::Off,
    ),
    ("claude-3-7-sonnet-20250219", &[Param::Manual], Mode::Off),
    (
        "claude-opus-4-5",
        &[Param::Manual, Param::Disabled],
        Mode::Off,
    ),
    (
        "claude-sonnet-4-6",
        &[
            Param::Manual,
            Param::Adaptive,
            Param::Disabled,
            Param::Omitted,
        ],
        Mode::Off,
    ),
    (
        "claude-opus-4-6",
        &[Param::Manual, Param::Adaptive, Param::Adaptive],
        Mode::Off,
    ),
    ("anthropic/claude-opus-4.6", &[Param::Adaptive], Mode::Off),
    (
        "claude-opus-4-7",
        &[Param::Adaptive, Param::Disabled],
        Mode::Off,
    ),
    (
        "claude-sonnet-5",
        &[Param::Adaptive, Param::Omitted, Param::Disabled],
        Mode::Adaptive,
    ),
    (
        "claude-opus-5",
        &[Param::Adaptive, Param::Omitted],
        Mode::Adaptive,
    ),
    (
        "claude-fable-5-1",
        &[Param::Adaptive, Param::Omitted],
        Mode::Adaptive,
    ),
];

const TOOLS: &[(&str, &str)] = &[
    ("weather", "{\"location\":\"Florence, Italy\"}"),
    (
        "bash",
        "{\"command\":\"cargo test -p parser\",\"description\":\"Run parser tests\"}",
    ),
    ("read", "{\"filePath\":\"src/parser.rs\"}"),
    ("grep", "{\"pattern\":\"fn tokenize\",\"path\":\"src\"}"),
    (
        "edit",
        "{\"filePath\":\"src/parser.rs\",\"oldString\":\"i <= len\",\"newString\":\"i < len\"}",
    ),
];

const OUTPUTS: &[&str] = &[
    "40 C",
    "test parse_empty ... FAILED\n\nthread 'main' panicked at 'index out of bounds'",
    "fn tokenize(src: &str) -> Vec<Token> {\n    let mut i = 0;\n}",
    "src/parser.rs:12: fn tokenize(src: &str)",
    "Edit applied successfully.",
    "",
    "Error: command not found: carg",
    "Résultat : 3 tests réussis ✓",
];

fn tool_input(g: &mut G<'_, '_>, name: &str) -> Result<J> {
    // Each tool's input, parsed once per process.
    static PARSED: std::sync::OnceLock<Vec<J>> = std::sync::OnceLock::new();
    let parsed = PARSED.get_or_init(|| {
        TOOLS
            .iter()
            .map(|(_, raw)| {
                J::from_value(&serde_json::from_str(raw).unwrap_or(serde_json::Value::Null))
            })
            .collect()
    });
    let j = TOOLS
        .iter()
        .position(|(n, _)| *n == name)
        .and_then(|i| parsed.get(i))
        .cloned()
        .unwrap_or_else(|| J::Obj(Vec::new()));
    // Re-order keys and escapes like the rest of the conversation.
    Ok(match j {
        J::Obj(m) => {
            let mut members = Vec::new();
            for (k, v) in m {
                let v = match v {
                    J::Str(s) => g.str(s.text)?,
                    v => v,
                };
                members.push((k, v));
            }
            g.obj(members)?
        }
        j => j,
    })
}

struct Call {
    id: String,
    name: &'static str,
}

fn tool_use(g: &mut G<'_, '_>, call: &Call) -> Result<J> {
    let id = g.str(call.id.clone())?;
    let input = tool_input(g, call.name)?;
    let mut m = vec![
        ("type", J::s("tool_use")),
        ("id", id),
        ("name", J::s(call.name)),
        ("input", input),
    ];
    if g.chance(5)? {
        m.push(("cache_control", g.cache_control()?));
    }
    if g.k.unknown && g.chance(5)? {
        m.push(("caller", J::obj([("type", J::s("direct"))])));
    }
    g.obj(m)
}

pub(crate) fn tool_result_content(g: &mut G<'_, '_>) -> Result<J> {
    let mut out = g.pick(OUTPUTS)?.to_owned();
    if g.k.long_len > 0 && g.chance(5)? {
        out.push('\n');
        out.push_str(&long_text(g.k.long_len));
    }
    Ok(if g.chance(50)? {
        g.str(out)?
    } else {
        let t = g.str(out)?;
        let mut blocks = vec![g.obj(vec![("type", J::s("text")), ("text", t)])?];
        if g.chance(10)? {
            blocks.push(image_block(g)?);
        }
        J::Arr(blocks)
    })
}

fn tool_result(g: &mut G<'_, '_>, id: &str) -> Result<J> {
    let content = tool_result_content(g)?;
    let id = g.str(id)?;
    let mut m = vec![
        ("type", J::s("tool_result")),
        ("tool_use_id", id),
        ("content", content),
    ];
    if g.chance(10)? {
        m.push(("is_error", J::Bool(true)));
    }
    if g.chance(10)? {
        m.push(("cache_control", g.cache_control()?));
    }
    g.obj(m)
}

fn image_block(g: &mut G<'_, '_>) -> Result<J> {
    let source = g.obj(vec![
        ("type", J::s("base64")),
        ("media_type", J::s("image/png")),
        (
            "data",
            J::s("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
        ),
    ])?;
    g.obj(vec![("type", J::s("image")), ("source", source)])
}

fn server_tool_pair(g: &mut G<'_, '_>) -> Result<Vec<J>> {
    let id = g.tool_id("srvtoolu_01")?;
    let query = g.pick(&[
        "weather Florence today",
        "rust tokenizer off by one",
        "café près de moi",
    ])?;
    let input = J::obj([("query", g.str(query)?)]);
    let call = g.obj(vec![
        ("type", J::s("server_tool_use")),
        ("id", J::s(id.clone())),
        ("name", J::s("web_search")),
        ("input", input),
    ])?;
    let n = g.range(1, 2)?;
    let mut results = Vec::new();
    for i in 0..n {
        let enc = g.signature()?;
        let title = g.str(g_title(i))?;
        results.push(g.obj(vec![
            ("type", J::s("web_search_result")),
            ("url", J::s(format!("https://example.com/r/{i}"))),
            ("title", title),
            ("encrypted_content", J::s(enc)),
            ("page_age", J::s("2 days ago")),
        ])?);
    }
    let result = g.obj(vec![
        ("type", J::s("web_search_tool_result")),
        ("tool_use_id", J::s(id)),
        ("content", J::Arr(results)),
    ])?;
    Ok(vec![call, result])
}

fn g_title(i: usize) -> String {
    [
        "Florence weather — 40°C",
        "Off-by-one in tokenizers",
        "Résumé of results",
    ][i % 3]
        .to_owned()
}

fn user_message(g: &mut G<'_, '_>, blocks: Vec<J>) -> Result<J> {
    g.obj(vec![("role", J::s("user")), ("content", J::Arr(blocks))])
}

fn assistant_message(g: &mut G<'_, '_>, blocks: Vec<J>) -> Result<J> {
    g.obj(vec![
        ("role", J::s("assistant")),
        ("content", J::Arr(blocks)),
    ])
}

/// A user turn's opening message: string or blocks, sometimes with media, a rare block type or
/// `cache_control`.
fn user_question(g: &mut G<'_, '_>) -> Result<J> {
    if g.chance(35)? {
        let t = g.text()?;
        let content = g.str(t)?;
        return g.obj(vec![("role", J::s("user")), ("content", content)]);
    }
    let mut blocks = vec![g.text_block()?];
    if g.chance(10)? {
        blocks.insert(0, image_block(g)?);
    }
    if g.chance(15)? {
        blocks.push(g.text_block()?);
    }
    if g.k.unknown && g.chance(8)? {
        let data = g.str("Notes: résumé ✓")?;
        let src = g.obj(vec![
            ("type", J::s("text")),
            ("media_type", J::s("text/plain")),
            ("data", data),
        ])?;
        blocks.push(g.obj(vec![
            ("type", J::s("document")),
            ("source", src),
            ("title", J::s("notes.txt")),
        ])?);
    }
    if g.k.unknown && g.chance(4)? {
        blocks.push(g.obj(vec![
            ("type", J::s("x_future_block")),
            (
                "payload",
                J::obj([("v", J::n(2)), ("note", J::s("ünknown"))]),
            ),
        ])?);
    }
    user_message(g, blocks)
}

/// The blocks that open an assistant message: thinking as the model produced it in `mode`.
fn thinking_prefix(g: &mut G<'_, '_>, mode: Mode, history: bool) -> Result<Vec<J>> {
    let mut out = Vec::new();
    match mode {
        Mode::Manual => {
            let n = g.range(1, g.k.max_thinking.max(1) as usize)?;
            for i in 0..n {
                // Redacted blocks come first or between thinking blocks, never alone at the end
                // of the prefix in these generated shapes.
                if i + 1 < n && g.chance(20)? || n == 1 && g.chance(8)? {
                    out.push(g.redacted_block()?);
                } else {
                    out.push(g.thinking_block()?);
                }
            }
        }
        Mode::Adaptive => {
            if g.chance(20)? {
                // Real adaptive responses start with whitespace text before thinking.
                out.push(g.obj(vec![("type", J::s("text")), ("text", J::s("\n\n"))])?);
            } else if g.chance(12)? {
                out.extend(server_tool_pair(g)?);
            }
            if !g.chance(15)? {
                out.push(g.thinking_block()?);
                if g.chance(15)? {
                    out.push(g.thinking_block()?);
                }
            }
        }
        Mode::Off => {
            if history && g.chance(30)? {
                out.push(g.thinking_block()?);
            }
        }
    }
    Ok(out)
}

fn anthropic(g: &mut G<'_, '_>) -> Result<J> {
    let (model, params, default) = g.pick(ANTHROPIC_MODELS)?;
    let param = g.pick(params)?;
    let mode = match param {
        Param::Manual => Mode::Manual,
        Param::Adaptive => Mode::Adaptive,
        Param::Disabled => Mode::Off,
        Param::Omitted => default,
    };
    let max_tokens = g.pick(&[4096u32, 8192, 16000, 32000, 64000])?;
    let interleaved = g.chance(40)?;
    let turns = g.range(1, g.k.max_turns.max(1) as usize)?;
    let end = g.range(0, 9)?; // 0..=5 new question, 6..=8 open loop, 9 prefill/pause
    let mut messages = Vec::new();
    for turn in 0..turns {
        let last = turn + 1 == turns;
        messages.push(user_question(g)?);
        let steps = g.range(0, g.k.max_steps as usize)?;
        let open = last && (6..=8).contains(&end) && steps > 0;
        for step in 0..steps {
            // Interleaved thinking: every step thinks; otherwise only the first.
            let think_mode = if step == 0 || interleaved {
                mode
            } else {
                Mode::Off
            };
            let mut blocks = thinking_prefix(g, think_mode, !last)?;
            if interleaved && mode != Mode::Off && g.chance(12)? {
                blocks.extend(server_tool_pair(g)?);
                if g.chance(50)? {
                    blocks.push(g.thinking_block()?);
                }
            }
            if g.chance(40)? {
                blocks.push(g.text_block()?);
            }
            let n = g.range(1, g.k.max_parallel.max(1) as usize)?;
            let mut calls = Vec::new();
            for _ in 0..n {
                let name = g.pick(&["weather", "bash", "read", "grep", "edit"])?;
                calls.push(Call {
                    id: g.tool_id("toolu_01")?,
                    name,
                });
            }
            for c in &calls {
                blocks.push(tool_use(g, c)?);
            }
            messages.push(assistant_message(g, blocks)?);
            let mut results = Vec::new();
            for c in &calls {
                results.push(tool_result(g, &c.id)?);
            }
            if g.chance(15)? {
                results.reverse();
            }
            if g.chance(12)? {
                results.push(g.text_block()?);
            }
            messages.push(user_message(g, results)?);
        }
        if open {
            break;
        }
        let mut blocks = thinking_prefix(
            g,
            if steps == 0 || interleaved {
                mode
            } else {
                Mode::Off
            },
            !last,
        )?;
        if interleaved && mode != Mode::Off && g.chance(10)? {
            blocks.extend(server_tool_pair(g)?);
        }
        blocks.push(g.text_block()?);
        if g.chance(25)? && !blocks.iter().any(is_thinking) {
            // Assistant history as a plain string (agents that flatten text-only turns).
            let t = g.text()?;
            let content = g.str(t)?;
            messages.push(g.obj(vec![("role", J::s("assistant")), ("content", content)])?);
        } else {
            messages.push(assistant_message(g, blocks)?);
        }
        if last && end <= 5 {
            messages.push(user_question(g)?);
        }
    }
    let mut top: Vec<(&str, J)> = vec![("model", J::s(model)), ("max_tokens", J::n(max_tokens))];
    match param {
        Param::Manual => {
            let budget = g.range(1024, (max_tokens as usize - 1).min(31999))?;
            top.push((
                "thinking",
                g.obj(vec![
                    ("type", J::s("enabled")),
                    ("budget_tokens", J::n(budget)),
                ])?,
            ));
        }
        Param::Adaptive => top.push(("thinking", J::obj([("type", J::s("adaptive"))]))),
        Param::Disabled => top.push(("thinking", J::obj([("type", J::s("disabled"))]))),
        Param::Omitted => {}
    }
    if g.chance(60)? {
        let system = if g.chance(50)? {
            g.str("You are a coding agent. Be concise.")?
        } else {
            let cc = g.cache_control()?;
            let t = g.str("You are a coding agent.\nWorking directory: /home/dev/work")?;
            J::Arr(vec![g.obj(vec![
                ("type", J::s("text")),
                ("text", t),
                ("cache_control", cc),
            ])?])
        };
        top.push(("system", system));
    }
    if g.chance(70)? {
        let mut tools = Vec::new();
        for (name, _) in TOOLS {
            let description = g.str(format!("The {name} tool — use it wisely."))?;
            tools.push(g.obj(vec![
                ("name", J::s(*name)),
                ("description", description),
                (
                    "input_schema",
                    J::obj([("type", J::s("object")), ("properties", J::obj::<&str>([]))]),
                ),
            ])?);
        }
        top.push(("tools", J::Arr(tools)));
    }
    if g.chance(20)? {
        top.push(("stream", J::Bool(true)));
    }
    if g.k.unknown && g.chance(10)? {
        top.push(("metadata", J::obj([("user_id", J::s("u-42"))])));
    }
    top.push(("messages", J::Arr(messages)));
    g.obj(top)
}

/// True for a thinking or redacted thinking block.
pub fn is_thinking(b: &J) -> bool {
    matches!(
        b.get("type").and_then(J::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

// ---------------------------------------------------------------------------------------------
// Gemini
// ---------------------------------------------------------------------------------------------

const GEMINI_MODELS: &[&str] = &[
    "gemini-3-pro-preview",
    "gemini-3-flash-preview",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
];

fn gemini(g: &mut G<'_, '_>) -> Result<(J, String)> {
    let model = g.pick(GEMINI_MODELS)?;
    let v3 = model.starts_with("gemini-3");
    let snake = g.chance(15)?;
    let key =
        |camel: &'static str, snake_name: &'static str| if snake { snake_name } else { camel };
    let include_thoughts = g.chance(50)?;
    let turns = g.range(1, g.k.max_turns.max(1) as usize)?;
    let open_end = g.chance(35)?;
    let mut contents = Vec::new();
    for turn in 0..turns {
        let last = turn + 1 == turns;
        let t = g.text()?;
        let t = g.str(t)?;
        let part = g.obj(vec![("text", t)])?;
        contents.push(g.obj(vec![("role", J::s("user")), ("parts", J::Arr(vec![part]))])?);
        let steps = g.range(0, g.k.max_steps as usize)?;
        let open = last && open_end && steps > 0;
        for _ in 0..steps {
            let mut parts = Vec::new();
            if include_thoughts && g.chance(60)? {
                let t = g.thinking_text()?;
                let t = g.str(t)?;
                parts.push(g.obj(vec![("text", t), ("thought", J::Bool(true))])?);
            }
            if g.chance(30)? {
                let t = g.text()?;
                let t = g.str(t)?;
                parts.push(g.obj(vec![("text", t)])?);
            }
            let n = g.range(1, g.k.max_parallel.max(1) as usize)?;
            let mut calls = Vec::new();
            for i in 0..n {
                let name = g.pick(&["get_weather", "search_tools", "run_command"])?;
                let id = if g.chance(50)? {
                    Some(g.base62(8)?.to_lowercase())
                } else {
                    None
                };
                let q = g.pick(TEXTS)?;
                let args = J::obj([("query", g.str(q)?)]);
                let mut call = vec![("name", J::s(name)), ("args", args)];
                if let Some(id) = &id {
                    call.push(("id", J::s(id.clone())));
                }
                let call = g.obj(call)?;
                let mut part = vec![(key("functionCall", "function_call"), call)];
                if i == 0 && (v3 || g.chance(50)?) {
                    let sig = g.gemini_signature()?;
                    part.push((key("thoughtSignature", "thought_signature"), J::s(sig)));
                }
                parts.push(g.obj(part)?);
                calls.push((name, id));
            }
            contents.push(g.obj(vec![("role", J::s("model")), ("parts", J::Arr(parts))])?);
            let mut responses = Vec::new();
            for (name, id) in calls {
                let out = g.pick(OUTPUTS)?;
                let response = J::obj([("result", g.str(out)?)]);
                let mut r = vec![("name", J::s(name)), ("response", response)];
                if let Some(id) = id {
                    r.push(("id", J::s(id)));
                }
                let r = g.obj(r)?;
                responses.push(g.obj(vec![(key("functionResponse", "function_response"), r)])?);
            }
            contents.push(g.obj(vec![("role", J::s("user")), ("parts", J::Arr(responses))])?);
        }
        if open {
            break;
        }
        let t = g.text()?;
        let t = g.str(t)?;
        let mut part = vec![("text", t)];
        if g.chance(40)? {
            let sig = g.gemini_signature()?;
            part.push((key("thoughtSignature", "thought_signature"), J::s(sig)));
        }
        let part = g.obj(part)?;
        contents.push(g.obj(vec![("role", J::s("model")), ("parts", J::Arr(vec![part]))])?);
        if last {
            let t = g.text()?;
            let t = g.str(t)?;
            let part = g.obj(vec![("text", t)])?;
            contents.push(g.obj(vec![("role", J::s("user")), ("parts", J::Arr(vec![part]))])?);
        }
    }
    let mut top = vec![(key("contents", "contents"), J::Arr(contents))];
    if g.chance(70)? {
        let budget = g.pick(&[-1i32, 0, 1024, 8192])?;
        let tc = g.obj(vec![
            (
                key("includeThoughts", "include_thoughts"),
                J::Bool(include_thoughts),
            ),
            (key("thinkingBudget", "thinking_budget"), J::n(budget)),
        ])?;
        top.push((
            key("generationConfig", "generation_config"),
            g.obj(vec![
                (key("thinkingConfig", "thinking_config"), tc),
                (key("maxOutputTokens", "max_output_tokens"), J::n(8192)),
            ])?,
        ));
    }
    if g.chance(50)? {
        let t = g.str("You are a helpful agent. Réponds brièvement.")?;
        top.push((
            key("systemInstruction", "system_instruction"),
            J::obj([("parts", J::Arr(vec![J::obj([("text", t)])]))]),
        ));
    }
    Ok((g.obj(top)?, model.to_owned()))
}

// ---------------------------------------------------------------------------------------------
// OpenCode
// ---------------------------------------------------------------------------------------------

/// Ids with OpenCode's shape: `<prefix>_<12 hex of a clock><14 base62>`, increasing, so
/// OpenCode's sort-by-id keeps generation order.
struct Ids {
    clock: u64,
}

impl Ids {
    fn next(&mut self, g: &mut G<'_, '_>, prefix: &str) -> Result<String> {
        self.clock += g.range(1, 4096)? as u64;
        let tail = g.base62(14)?;
        Ok(format!("{prefix}_{:012x}{tail}", self.clock))
    }
}

const TOOL_STATES: &[&str] = &[
    "completed",
    "completed",
    "completed",
    "error",
    "running",
    "pending",
];

fn opencode(g: &mut G<'_, '_>) -> Result<(J, String)> {
    let model = g.pick(&["claude-sonnet-4-5", "claude-opus-4-6", "claude-sonnet-4-6"])?;
    let mut ids = Ids {
        clock: 0xabf9_8653_8000,
    };
    let session = format!("ses_{:012x}{}", 0x5406_79ea_fffe_u64, g.base62(14)?);
    let mut created: i64 = 1_764_151_027_000;
    let turns = g.range(1, g.k.max_turns.max(1) as usize)?;
    let mut out = Vec::new();
    let mut parent = String::new();
    for turn in 0..turns {
        let last = turn + 1 == turns;
        // User message.
        let mid = ids.next(g, "msg")?;
        created += g.range(1, 60_000)? as i64;
        let model_ref = J::obj([("providerID", J::s("anthropic")), ("modelID", J::s(model))]);
        let info = g.obj(vec![
            ("id", J::s(mid.clone())),
            ("sessionID", J::s(session.clone())),
            ("role", J::s("user")),
            ("time", J::obj([("created", J::n(created))])),
            ("agent", J::s("build")),
            ("model", model_ref.clone()),
        ])?;
        let mut parts = Vec::new();
        let n = g.range(1, 3)?;
        for i in 0..n {
            let pid = ids.next(g, "prt")?;
            let base = vec![
                ("id", J::s(pid)),
                ("sessionID", J::s(session.clone())),
                ("messageID", J::s(mid.clone())),
            ];
            let kind = if i == 0 {
                "text"
            } else {
                g.pick(&["text", "file", "file", "agent", "subtask", "compaction"])?
            };
            let mut m = base;
            m.push(("type", J::s(kind)));
            match kind {
                "text" => {
                    let t = g.text()?;
                    m.push(("text", g.str(t)?));
                    if i > 0 && g.chance(30)? {
                        m.push((g.pick(&["synthetic", "ignored"])?, J::Bool(true)));
                    }
                }
                "file" => {
                    if g.chance(50)? {
                        m.push(("mime", J::s("image/png")));
                        m.push(("filename", J::s("failure.png")));
                        m.push(("url", J::s("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")));
                    } else {
                        m.push(("mime", J::s("text/plain")));
                        m.push(("filename", J::s("parser.rs")));
                        m.push(("url", J::s("file:///home/dev/work/parser/src/parser.rs")));
                    }
                }
                "agent" => {
                    m.push(("name", J::s("build")));
                    m.push((
                        "source",
                        J::obj([
                            ("value", J::s("@build")),
                            ("start", J::n(0)),
                            ("end", J::n(6)),
                        ]),
                    ));
                }
                "subtask" => {
                    m.push(("prompt", g.str("Write a changelog entry — briefly")?));
                    m.push(("description", J::s("changelog entry")));
                    m.push(("agent", J::s("general")));
                    m.push(("model", model_ref.clone()));
                }
                _ => m.push(("auto", J::Bool(g.u.arbitrary()?))),
            }
            parts.push(g.obj(m)?);
        }
        out.push(J::obj([("info", info), ("parts", J::Arr(parts))]));
        parent = mid;
        // Assistant message: steps of [step-start, reasoning?, text?, tool*, step-finish].
        let aid = ids.next(g, "msg")?;
        created += g.range(1, 5_000)? as i64;
        let steps = g.range(1, g.k.max_steps.max(1) as usize)?;
        let aborted = last && g.chance(10)?;
        let mut parts = Vec::new();
        for step in 0..steps {
            let last_step = step + 1 == steps;
            let part = |g: &mut G<'_, '_>,
                        ids: &mut Ids,
                        kind: &str,
                        extra: Vec<(&'static str, J)>|
             -> Result<J> {
                let pid = ids.next(g, "prt")?;
                let mut m = vec![
                    ("id", J::s(pid)),
                    ("sessionID", J::s(session.clone())),
                    ("messageID", J::s(aid.clone())),
                    ("type", J::s(kind)),
                ];
                m.extend(extra);
                g.obj(m)
            };
            let snap = g.base62(40)?.to_lowercase();
            parts.push(part(
                g,
                &mut ids,
                "step-start",
                vec![("snapshot", J::s(snap))],
            )?);
            if g.chance(80)? {
                let time = J::obj([("start", J::n(created)), ("end", J::n(created + 900))]);
                if g.chance(12)? {
                    let data = g.redacted()?;
                    let meta = J::obj([("anthropic", J::obj([("redactedData", J::s(data))]))]);
                    parts.push(part(
                        g,
                        &mut ids,
                        "reasoning",
                        vec![("text", J::s("")), ("time", time), ("metadata", meta)],
                    )?);
                } else {
                    let t = g.thinking_text()?;
                    let t = g.str(t)?;
                    let sig = g.signature()?;
                    let meta = J::obj([("anthropic", J::obj([("signature", J::s(sig))]))]);
                    parts.push(part(
                        g,
                        &mut ids,
                        "reasoning",
                        vec![("text", t), ("time", time), ("metadata", meta)],
                    )?);
                }
            }
            if g.chance(50)? || last_step {
                let t = g.text()?;
                let t = g.str(t)?;
                parts.push(part(g, &mut ids, "text", vec![("text", t)])?);
            }
            if !last_step || aborted {
                let n = g.range(1, g.k.max_parallel.max(1) as usize)?;
                for _ in 0..n {
                    let name = g.pick(&["bash", "read", "grep", "edit"])?;
                    let call = g.tool_id("toolu_01")?;
                    let input = tool_input(g, name)?;
                    let status = if aborted {
                        g.pick(TOOL_STATES)?
                    } else {
                        g.pick(&TOOL_STATES[..4])?
                    };
                    let time = J::obj([("start", J::n(created)), ("end", J::n(created + 4000))]);
                    let state = match status {
                        "completed" => {
                            let out = g.pick(OUTPUTS)?;
                            let out = g.str(out)?;
                            g.obj(vec![
                                ("status", J::s("completed")),
                                ("input", input),
                                ("output", out),
                                ("title", J::s(name)),
                                ("metadata", J::obj([("exit", J::n(0))])),
                                ("time", time),
                            ])?
                        }
                        "error" => {
                            let err = g.str("Tool execution aborted")?;
                            g.obj(vec![
                                ("status", J::s("error")),
                                ("input", input),
                                ("error", err),
                                ("time", time),
                            ])?
                        }
                        "running" => g.obj(vec![
                            ("status", J::s("running")),
                            ("input", input),
                            ("title", J::s(name)),
                            ("time", J::obj([("start", J::n(created))])),
                        ])?,
                        _ => g.obj(vec![
                            ("status", J::s("pending")),
                            ("input", J::obj::<&str>([])),
                            ("raw", J::s("{\"pattern\":\"regr")),
                        ])?,
                    };
                    parts.push(part(
                        g,
                        &mut ids,
                        "tool",
                        vec![
                            ("callID", J::s(call)),
                            ("tool", J::s(name)),
                            ("state", state),
                        ],
                    )?);
                }
            }
            let tokens = J::obj([
                ("input", J::n(10461)),
                ("output", J::n(77)),
                ("reasoning", J::n(46)),
                ("cache", J::obj([("read", J::n(233)), ("write", J::n(0))])),
            ]);
            let reason = if last_step { "stop" } else { "tool-calls" };
            parts.push(part(
                g,
                &mut ids,
                "step-finish",
                vec![
                    ("reason", J::s(reason)),
                    ("cost", J::n("0.0061")),
                    ("tokens", tokens),
                ],
            )?);
            if g.chance(15)? {
                let extra = g.pick(&["snapshot", "patch", "retry"])?;
                let fields = match extra {
                    "snapshot" => {
                        vec![("snapshot", J::s("0f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4"))]
                    }
                    "patch" => vec![
                        ("hash", J::s("9a8b7c6d5e4f30211203f4e5d6c7b8a9")),
                        ("files", J::Arr(vec![J::s("src/parser.rs")])),
                    ],
                    _ => vec![
                        ("attempt", J::n(1)),
                        (
                            "error",
                            J::obj([
                                ("name", J::s("APIError")),
                                (
                                    "data",
                                    J::obj([
                                        ("message", J::s("Overloaded")),
                                        ("statusCode", J::n(529)),
                                        ("isRetryable", J::Bool(true)),
                                    ]),
                                ),
                            ]),
                        ),
                        ("time", J::obj([("created", J::n(created))])),
                    ],
                };
                parts.push(part(g, &mut ids, extra, fields)?);
            }
        }
        let mut info = vec![
            ("id", J::s(aid.clone())),
            ("sessionID", J::s(session.clone())),
            ("role", J::s("assistant")),
            (
                "time",
                J::obj([
                    ("created", J::n(created)),
                    ("completed", J::n(created + 900)),
                ]),
            ),
            ("parentID", J::s(parent.clone())),
            ("modelID", J::s(model)),
            ("providerID", J::s("anthropic")),
            ("mode", J::s("build")),
            ("agent", J::s("build")),
            (
                "path",
                J::obj([
                    ("cwd", J::s("/home/dev/work/parser")),
                    ("root", J::s("/home/dev/work/parser")),
                ]),
            ),
            ("cost", J::n("0.0123")),
        ];
        if aborted {
            info.push((
                "error",
                J::obj([
                    ("name", J::s("MessageAbortedError")),
                    (
                        "data",
                        J::obj([("message", J::s("The operation was aborted."))]),
                    ),
                ]),
            ));
        } else {
            info.push(("finish", J::s("stop")));
        }
        let info = g.obj(info)?;
        out.push(J::obj([("info", info), ("parts", J::Arr(parts))]));
        parent = aid;
    }
    let _ = parent;
    Ok((J::Arr(out), model.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_generated_and_parses() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0u32..200 {
            let bytes: Vec<u8> = (0..4096u32)
                .map(|i| {
                    (i.wrapping_mul(2654435761)
                        .wrapping_add(seed.wrapping_mul(40503))
                        >> 13) as u8
                })
                .collect();
            let mut u = Unstructured::new(&bytes);
            let c = conversation(&mut u).expect("generates");
            let text = c.json();
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{e}: {c:?}"));
            let t = turnkeeper_model::read(&text, turnkeeper_model::FormatHint::Exactly(c.format))
                .unwrap_or_else(|e| panic!("{e}: {c:?}"));
            assert!(!t.messages.is_empty());
            seen.insert(c.format.name());
        }
        assert_eq!(seen.len(), 3, "{seen:?}");
    }
}
