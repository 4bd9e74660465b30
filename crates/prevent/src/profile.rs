//! Model profiles: from any spelling of a model id to what the target accepts.
//!
//! The normalisation follows api-rules.md §4.2 and the capabilities the matrix of §1.4. Cells
//! the research marks unknown get the strict answer, and everything can be overridden from a
//! file ([`ProfileOverrides`]) so a new model needs no release.

use std::collections::BTreeMap;

/// The provider family a model belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Anthropic Claude (first party, Bedrock, Vertex, OpenRouter, Antigravity spellings).
    Claude,
    /// Google Gemini.
    Gemini,
    /// Not recognised: the strictest profile applies.
    Unknown,
}

/// A thinking mode as the request uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `{"type":"enabled","budget_tokens":N}`: manual (extended) thinking.
    Manual,
    /// `{"type":"adaptive"}`, or thinking omitted on a model that thinks by default.
    Adaptive,
    /// `{"type":"disabled"}`, or omitted on a default-off model.
    Off,
}

impl Mode {
    /// Parses `enabled`, `manual`, `adaptive`, `disabled`, `off`.
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "enabled" | "manual" => Some(Mode::Manual),
            "adaptive" => Some(Mode::Adaptive),
            "disabled" | "off" => Some(Mode::Off),
            _ => None,
        }
    }
    /// The wire name (`enabled`, `adaptive`, `disabled`).
    pub fn wire(self) -> &'static str {
        match self {
            Mode::Manual => "enabled",
            Mode::Adaptive => "adaptive",
            Mode::Off => "disabled",
        }
    }
}

/// Which earlier turns' thinking the model keeps in context (api-rules.md AN-24).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Retention {
    /// Every prior turn's thinking is used (Opus 4.5+, Sonnet 4.6+, Fable, Mythos).
    All,
    /// Only the last assistant turn's thinking (older Opus/Sonnet, all Haiku through 4.5).
    LastTurn,
}

/// Gemini thought-signature rules (api-rules.md GM-01, GM-07).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GeminiSignatures {
    /// Gemini 3 and later: the first `functionCall` of each current-turn step needs one.
    Required,
    /// Gemini 2.5: returning them is optional.
    Optional,
    /// Not a Gemini model.
    NotApplicable,
}

/// What a target model accepts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Profile {
    /// The normalised model id (empty when none was given).
    pub model: String,
    /// The family.
    pub family: Family,
    /// True when the model was found in the table (or an override).
    pub known: bool,
    /// The model can think at all.
    pub thinking: bool,
    /// `thinking.type: "enabled"` is accepted.
    pub manual_ok: bool,
    /// `thinking.type: "adaptive"` is accepted.
    pub adaptive_ok: bool,
    /// `thinking.type: "disabled"` is accepted.
    pub disabled_ok: bool,
    /// The mode when the request omits `thinking`.
    pub default_mode: Mode,
    /// Prior-turn thinking retention.
    pub retention: Retention,
    /// A trailing assistant message (prefill) is accepted when thinking is off.
    pub prefill_ok: bool,
    /// A signed trailing thinking block (a progress update) is passed back as is.
    pub trailing_thinking_ok: bool,
    /// Signatures are bound to the conversation prefix (api-rules.md AN-25).
    pub prefix_bound: bool,
    /// A forced `tool_choice` (`any`/`tool`) is accepted with adaptive thinking.
    pub forced_tool_choice_adaptive_ok: bool,
    /// Any non-default `temperature`/`top_p`/`top_k` is rejected on every request.
    pub strict_sampling: bool,
    /// Gemini signature rules.
    pub gemini_signatures: GeminiSignatures,
    /// Consecutive same-role messages must be merged before sending (relays, Bedrock Converse).
    pub merge_same_role: bool,
    /// A forced `tool_choice` (`any`/`tool`) is refused whatever the thinking setting (Opus 5.5,
    /// Sonnet 5.5: api-rules-2026-11.md §1.2).
    pub forced_tool_choice_refused: bool,
    /// `thinking.type: "between_tools"` is accepted (Sonnet 5.5).
    pub between_tools_ok: bool,
    /// Without up-front thinking (`disabled`, `between_tools`) the effort may be at most `high`
    /// (Opus 5, Haiku 5.5, Sonnet 5.5's `between_tools`: api-rules-2026-11.md §1.2).
    pub effort_capped_without_thinking: bool,
    /// `thinking.display` when the request gives none (`"omitted"` on the 5.5 models), if known.
    pub display_default: Option<String>,
    /// `output_config.effort` when the request gives none, if known.
    pub default_effort: Option<String>,
    /// Thinking blocks work only in the account that produced them (or a linked one); another
    /// account's blocks are dropped silently, so no error tells of a key switch (Sonnet 5.5,
    /// Haiku 5.5: api-rules-2026-11.md §1.3).
    pub account_bound: bool,
    /// Model id prefixes whose thinking blocks this model does not read: it drops them silently
    /// (read sets, api-rules-2026-11.md §1.3).
    pub does_not_read: Vec<String>,
}

impl Profile {
    /// The strictest profile, for models turnkeeper does not know (api-rules.md §4.2: "Anything
    /// unrecognised should get the strictest profile: verbatim echo, no synthesis, no prefill").
    pub fn strict(model: &str) -> Profile {
        Profile {
            model: model.to_owned(),
            family: Family::Unknown,
            known: false,
            thinking: true,
            manual_ok: true,
            adaptive_ok: true,
            disabled_ok: true,
            default_mode: Mode::Off,
            retention: Retention::All,
            prefill_ok: false,
            trailing_thinking_ok: false,
            prefix_bound: true,
            forced_tool_choice_adaptive_ok: false,
            strict_sampling: false,
            gemini_signatures: GeminiSignatures::NotApplicable,
            merge_same_role: false,
            forced_tool_choice_refused: false,
            between_tools_ok: false,
            effort_capped_without_thinking: false,
            display_default: None,
            default_effort: None,
            account_bound: false,
            does_not_read: Vec::new(),
        }
    }

    fn claude(model: &str) -> Profile {
        Profile {
            family: Family::Claude,
            known: true,
            prefix_bound: false,
            forced_tool_choice_adaptive_ok: true,
            prefill_ok: true,
            ..Profile::strict(model)
        }
    }
}

/// Normalises a model id (api-rules.md §4.2): lower case; strip an ARN, a provider prefix, a
/// Bedrock region prefix, version/date/`-latest`/`:thinking`/`-thinking`/`[1m]` suffixes; dots in
/// versions become dashes; `claude-4-sonnet` becomes `claude-sonnet-4`.
///
/// ```
/// use turnkeeper_prevent::profile::normalize;
/// assert_eq!(normalize("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), "claude-sonnet-4-5");
/// assert_eq!(normalize("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-7"), "claude-opus-4-7");
/// assert_eq!(normalize("claude-3-7-sonnet@20250219"), "claude-3-7-sonnet");
/// assert_eq!(normalize("anthropic/claude-opus-4.6"), "claude-opus-4-6");
/// assert_eq!(normalize("anthropic/claude-4.6-opus"), "claude-opus-4-6");
/// assert_eq!(normalize("claude-opus-5[1m]"), "claude-opus-5");
/// assert_eq!(normalize("antigravity-claude-opus-4-6-thinking"), "claude-opus-4-6");
/// assert_eq!(normalize("models/gemini-3-pro-preview"), "gemini-3-pro-preview");
/// ```
pub fn normalize(id: &str) -> String {
    let mut s = id.trim().to_ascii_lowercase();
    if let Some(p) = s.rfind('/') {
        // ARNs (`arn:...:foundation-model/anthropic.x`), `anthropic/x`, `models/gemini-x`.
        s = s[p + 1..].to_owned();
    }
    for prefix in ["antigravity-"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.to_owned();
        }
    }
    for region in ["us-gov.", "us.", "eu.", "apac.", "jp.", "au.", "global."] {
        if let Some(rest) = s.strip_prefix(region) {
            s = rest.to_owned();
            break;
        }
    }
    if let Some(rest) = s.strip_prefix("anthropic.") {
        s = rest.to_owned();
    }
    loop {
        let before = s.len();
        for suffix in ["[1m]", ":thinking", "-thinking", "-latest"] {
            if let Some(rest) = s.strip_suffix(suffix) {
                s = rest.to_owned();
            }
        }
        // `-v1:0`, `-v1`, `@20250219`, `-20250219`.
        if let Some(p) = s.rfind("-v") {
            let tail = &s[p + 2..];
            if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit() || b == b':') {
                s.truncate(p);
            }
        }
        for sep in ['@', '-'] {
            if let Some(p) = s.rfind(sep) {
                let tail = &s[p + 1..];
                if tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()) {
                    s.truncate(p);
                }
            }
        }
        if s.len() == before {
            break;
        }
    }
    if s.starts_with("claude") {
        s = s.replace('.', "-");
        // Legacy order: claude-4-sonnet, claude-4-6-opus → claude-sonnet-4, claude-opus-4-6.
        let parts: Vec<&str> = s.split('-').collect();
        let family = parts
            .iter()
            .position(|p| ["sonnet", "opus", "haiku"].contains(p));
        if let Some(pos) = family.filter(|&pos| {
            pos >= 2
                && parts[1..pos]
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                && parts[1].parse::<u32>().is_ok_and(|v| v >= 4)
        }) {
            let mut v = vec!["claude", parts[pos]];
            v.extend_from_slice(&parts[1..pos]);
            v.extend_from_slice(&parts[pos + 1..]);
            s = v.join("-");
        }
    }
    s
}

/// The `(major, minor)` version of a normalised Claude id (`claude-opus-5-5` → `(5, 5)`).
fn claude_version(n: &str) -> Option<(u32, u32)> {
    let mut parts = n.strip_prefix("claude-")?.split('-');
    let _name = parts.next()?;
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

/// The built-in profile of a normalised id, if the table knows it (api-rules.md §1.4).
fn builtin(n: &str) -> Option<Profile> {
    let c = || Profile::claude(n);
    let starts = |p: &str| {
        n.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    };
    let p = if starts("claude-3-5-haiku")
        || starts("claude-3-5-sonnet")
        || starts("claude-3-haiku")
        || starts("claude-3-opus")
        || starts("claude-3-sonnet")
    {
        Profile {
            thinking: false,
            manual_ok: false,
            adaptive_ok: false,
            ..c()
        }
    } else if starts("claude-3-7-sonnet")
        || n == "claude-sonnet-4"
        || n == "claude-opus-4"
        || starts("claude-opus-4-1")
        || starts("claude-sonnet-4-5")
        || starts("claude-haiku-4-5")
        || n == "claude-sonnet-4-0"
        || n == "claude-opus-4-0"
    {
        Profile {
            adaptive_ok: false,
            retention: Retention::LastTurn,
            ..c()
        }
    } else if starts("claude-opus-4-5") {
        Profile {
            adaptive_ok: false,
            ..c()
        }
    } else if starts("claude-opus-4-6") || starts("claude-sonnet-4-6") {
        Profile {
            prefill_ok: false,
            ..c()
        }
    } else if starts("claude-opus-4-7") || starts("claude-opus-4-8") {
        Profile {
            manual_ok: false,
            prefill_ok: false,
            strict_sampling: true,
            ..c()
        }
    } else if n == "claude-sonnet-5" || n == "claude-opus-5" {
        Profile {
            manual_ok: false,
            prefill_ok: false,
            strict_sampling: true,
            default_mode: Mode::Adaptive,
            // Opus 5: `disabled` only at effort high or below (whats-new-opus-5).
            effort_capped_without_thinking: n == "claude-opus-5",
            ..c()
        }
    } else if starts("claude-mythos-preview") {
        Profile {
            disabled_ok: false,
            prefill_ok: false,
            default_mode: Mode::Adaptive,
            ..c()
        }
    } else if n == "claude-fable-5" || n == "claude-mythos-5" {
        Profile {
            manual_ok: false,
            disabled_ok: false,
            prefill_ok: false,
            strict_sampling: true,
            default_mode: Mode::Adaptive,
            ..c()
        }
    } else if n == "claude-fable-5-1" || n == "claude-mythos-5-1" {
        Profile {
            manual_ok: false,
            disabled_ok: false,
            prefill_ok: false,
            strict_sampling: true,
            default_mode: Mode::Adaptive,
            trailing_thinking_ok: true,
            prefix_bound: n == "claude-fable-5-1",
            forced_tool_choice_adaptive_ok: false,
            ..c()
        }
    } else if starts("claude-opus-5-5") {
        // api-rules-2026-11.md §1.1 (whats-new-opus-5-5, migration guide).
        Profile {
            manual_ok: false,
            disabled_ok: false,
            prefill_ok: false,
            strict_sampling: true,
            default_mode: Mode::Adaptive,
            trailing_thinking_ok: true,
            prefix_bound: true,
            forced_tool_choice_adaptive_ok: false,
            forced_tool_choice_refused: true,
            display_default: Some("omitted".to_owned()),
            default_effort: Some("medium".to_owned()),
            does_not_read: vec!["claude-fable".to_owned(), "claude-mythos".to_owned()],
            ..c()
        }
    } else if starts("claude-sonnet-5-5") {
        // api-rules-2026-11.md §1.1 (whats-new-sonnet-5-5, migration guide).
        Profile {
            manual_ok: false,
            disabled_ok: false,
            between_tools_ok: true,
            effort_capped_without_thinking: true,
            prefill_ok: false,
            strict_sampling: true,
            default_mode: Mode::Adaptive,
            trailing_thinking_ok: true,
            prefix_bound: true,
            forced_tool_choice_adaptive_ok: false,
            forced_tool_choice_refused: true,
            account_bound: true,
            display_default: Some("omitted".to_owned()),
            default_effort: Some("high".to_owned()),
            does_not_read: vec![
                "claude-opus-5".to_owned(),
                "claude-fable".to_owned(),
                "claude-mythos".to_owned(),
            ],
            ..c()
        }
    } else if starts("claude-haiku-5-5") {
        // api-rules-2026-11.md §1.1 (whats-new-haiku-5-5). The cells marked Comm there (display
        // default, prefix binding, forced tool use accepted) are this profile's settings, open
        // to overrides, not hard rules; prefix binding takes the strict side.
        Profile {
            manual_ok: false,
            effort_capped_without_thinking: true,
            prefill_ok: false,
            strict_sampling: true,
            default_mode: Mode::Adaptive,
            prefix_bound: true,
            forced_tool_choice_adaptive_ok: true,
            account_bound: true,
            display_default: Some("omitted".to_owned()),
            default_effort: Some("medium".to_owned()),
            ..c()
        }
    } else if claude_version(n).is_some_and(|v| v >= (5, 2)) {
        // Opus 5.5 and later: the snapshot leaves most cells unknown (api-rules.md §1.4); take
        // the strict side of each and the documented prefix check.
        Profile {
            manual_ok: false,
            disabled_ok: false,
            prefill_ok: false,
            strict_sampling: true,
            default_mode: Mode::Adaptive,
            trailing_thinking_ok: true,
            prefix_bound: true,
            forced_tool_choice_adaptive_ok: false,
            ..c()
        }
    } else if n.starts_with("gemini-") {
        let sigs = if n.starts_with("gemini-2") || n.starts_with("gemini-1") || n.contains("-image")
        {
            GeminiSignatures::Optional
        } else {
            GeminiSignatures::Required
        };
        Profile {
            family: Family::Gemini,
            known: true,
            gemini_signatures: sigs,
            prefix_bound: false,
            prefill_ok: true,
            ..Profile::strict(n)
        }
    } else if !matches!(
        crate::wire::provider_of(n).0,
        crate::wire::Provider::Unknown
            | crate::wire::Provider::Anthropic
            | crate::wire::Provider::Gemini
    ) {
        // Another vendor's model on an Anthropic-compatible endpoint (DeepSeek, Kimi, Qwen, GLM,
        // MiniMax, ...): unknown, so strict, except that its thinking is not bound to the
        // conversation's prefix (AN-25 is Anthropic's signature scheme). Dropping it there would
        // lose reasoning those endpoints want back (DS-06).
        Profile {
            prefix_bound: false,
            ..Profile::strict(n)
        }
    } else {
        return None;
    };
    Some(p)
}

/// Partial profile fields, for overrides from a file or the command line.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfilePatch {
    /// See [`Profile::family`].
    pub family: Option<Family>,
    /// See [`Profile::thinking`].
    pub thinking: Option<bool>,
    /// See [`Profile::manual_ok`].
    pub manual_ok: Option<bool>,
    /// See [`Profile::adaptive_ok`].
    pub adaptive_ok: Option<bool>,
    /// See [`Profile::disabled_ok`].
    pub disabled_ok: Option<bool>,
    /// See [`Profile::default_mode`].
    pub default_mode: Option<Mode>,
    /// See [`Profile::retention`].
    pub retention: Option<Retention>,
    /// See [`Profile::prefill_ok`].
    pub prefill_ok: Option<bool>,
    /// See [`Profile::trailing_thinking_ok`].
    pub trailing_thinking_ok: Option<bool>,
    /// See [`Profile::prefix_bound`].
    pub prefix_bound: Option<bool>,
    /// See [`Profile::forced_tool_choice_adaptive_ok`].
    pub forced_tool_choice_adaptive_ok: Option<bool>,
    /// See [`Profile::strict_sampling`].
    pub strict_sampling: Option<bool>,
    /// See [`Profile::gemini_signatures`].
    pub gemini_signatures: Option<GeminiSignatures>,
    /// See [`Profile::merge_same_role`].
    pub merge_same_role: Option<bool>,
    /// See [`Profile::forced_tool_choice_refused`].
    pub forced_tool_choice_refused: Option<bool>,
    /// See [`Profile::between_tools_ok`].
    pub between_tools_ok: Option<bool>,
    /// See [`Profile::effort_capped_without_thinking`].
    pub effort_capped_without_thinking: Option<bool>,
    /// See [`Profile::account_bound`].
    pub account_bound: Option<bool>,
}

impl ProfilePatch {
    /// Applies the set fields to `p`.
    pub fn apply(&self, p: &mut Profile) {
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { p.$f = v; } )* };
        }
        set!(
            family,
            thinking,
            manual_ok,
            adaptive_ok,
            disabled_ok,
            default_mode,
            retention,
            prefill_ok,
            trailing_thinking_ok,
            prefix_bound,
            forced_tool_choice_adaptive_ok,
            strict_sampling,
            gemini_signatures,
            merge_same_role,
            forced_tool_choice_refused,
            between_tools_ok,
            effort_capped_without_thinking,
            account_bound
        );
        p.known = true;
    }
}

/// Overrides keyed by normalised model id (or a prefix ending in `*`), e.g. in TOML:
///
/// ```toml
/// [models."claude-nova-1"]
/// family = "claude"
/// manual_ok = false
/// prefix_bound = true
///
/// [models."claude-nova-*"]
/// prefill_ok = false
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileOverrides {
    /// Patches by model id or `prefix*`.
    #[serde(default)]
    pub models: BTreeMap<String, ProfilePatch>,
}

/// Why an override file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML or JSON of the expected shape.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
}

impl ProfileOverrides {
    /// Reads overrides from a `.toml` or `.json` file.
    ///
    /// # Errors
    /// When the file cannot be read or parsed.
    pub fn from_file(path: &std::path::Path) -> Result<Self, ProfileError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io {
            path: p.clone(),
            source,
        })?;
        Self::parse(&text, path.extension().is_some_and(|e| e == "json"))
            .map_err(|message| ProfileError::Parse { path: p, message })
    }

    /// Parses overrides from TOML (or JSON when `json`).
    ///
    /// # Errors
    /// The parser's message.
    pub fn parse(text: &str, json: bool) -> Result<Self, String> {
        if json {
            serde_json::from_str(text).map_err(|e| e.to_string())
        } else {
            toml::from_str(text).map_err(|e| e.to_string())
        }
    }

    fn patches_for(&self, n: &str) -> Vec<&ProfilePatch> {
        let mut v: Vec<(usize, &ProfilePatch)> = self
            .models
            .iter()
            .filter_map(|(k, p)| {
                let k = k.to_ascii_lowercase();
                match k.strip_suffix('*') {
                    Some(prefix) if n.starts_with(prefix) => Some((prefix.len(), p)),
                    None if normalize(&k) == n => Some((usize::MAX, p)),
                    _ => None,
                }
            })
            .collect();
        v.sort_by_key(|(specificity, _)| *specificity);
        v.into_iter().map(|(_, p)| p).collect()
    }
}

/// The profile for a model id as given (any spelling), with overrides applied.
pub fn profile_for(model: Option<&str>, overrides: Option<&ProfileOverrides>) -> Profile {
    let n = model.map(normalize).unwrap_or_default();
    let mut p = builtin(&n).unwrap_or_else(|| Profile::strict(&n));
    // CX-01 (api-rules-2026-11.md): Qwen's own Anthropic-compatible endpoint (DashScope) takes
    // `enabled` and `disabled` only: "Only 'enabled' and 'disabled' are supported for thinking;
    // 'adaptive' is not supported." (anthropics/claude-code#29531). A router in front
    // (`openrouter/qwen/...`) speaks for itself.
    if let Some((crate::wire::Provider::Qwen, None)) = model.map(crate::wire::provider_of) {
        p.adaptive_ok = false;
    }
    p.model = n.clone();
    if let Some(o) = overrides {
        for patch in o.patches_for(&n) {
            patch.apply(&mut p);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(id: &str, expect: (&str, Family, bool, bool, bool)) {
        let p = profile_for(Some(id), None);
        assert_eq!(
            (
                p.model.as_str(),
                p.family,
                p.manual_ok,
                p.prefill_ok,
                p.prefix_bound
            ),
            expect,
            "{id}"
        );
    }

    /// A whole profile on one line: the normalised id, the family, then every capability that
    /// differs from the strict profile's (`+name` set, `-name` unset, `name=value`).
    fn render(p: &Profile) -> String {
        let strict = Profile::strict(&p.model);
        let mut out = vec![p.model.clone(), format!("{:?}", p.family).to_lowercase()];
        let flags = [
            ("known", p.known, strict.known),
            ("thinking", p.thinking, strict.thinking),
            ("manual", p.manual_ok, strict.manual_ok),
            ("adaptive", p.adaptive_ok, strict.adaptive_ok),
            ("disabled", p.disabled_ok, strict.disabled_ok),
            ("prefill", p.prefill_ok, strict.prefill_ok),
            (
                "trailing",
                p.trailing_thinking_ok,
                strict.trailing_thinking_ok,
            ),
            ("prefix_bound", p.prefix_bound, strict.prefix_bound),
            (
                "forced_adaptive",
                p.forced_tool_choice_adaptive_ok,
                strict.forced_tool_choice_adaptive_ok,
            ),
            ("strict_sampling", p.strict_sampling, strict.strict_sampling),
            ("merge", p.merge_same_role, strict.merge_same_role),
            (
                "forced_refused",
                p.forced_tool_choice_refused,
                strict.forced_tool_choice_refused,
            ),
            ("between_tools", p.between_tools_ok, strict.between_tools_ok),
            (
                "effort_capped",
                p.effort_capped_without_thinking,
                strict.effort_capped_without_thinking,
            ),
            ("account_bound", p.account_bound, strict.account_bound),
        ];
        for (name, v, base) in flags {
            if v != base {
                out.push(format!("{}{name}", if v { '+' } else { '-' }));
            }
        }
        if p.default_mode != strict.default_mode {
            out.push(format!("default={}", p.default_mode.wire()));
        }
        if p.retention != strict.retention {
            out.push(format!("retention={:?}", p.retention));
        }
        if p.gemini_signatures != strict.gemini_signatures {
            out.push(format!("signatures={:?}", p.gemini_signatures));
        }
        if let Some(d) = &p.display_default {
            out.push(format!("display={d}"));
        }
        if let Some(e) = &p.default_effort {
            out.push(format!("effort={e}"));
        }
        if !p.does_not_read.is_empty() {
            out.push(format!("does_not_read={}", p.does_not_read.join(",")));
        }
        out.join(" ")
    }

    /// Looks up every id and compares each profile's rendering; all mismatches are reported.
    fn check_all(cases: &[(&str, &str)]) {
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(id, expect)| {
                let got = render(&profile_for(Some(id), None));
                (got != *expect).then(|| format!("{id}\n  expected {expect}\n  got      {got}"))
            })
            .collect();
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }

    #[test]
    fn every_profile_of_the_table() {
        check_all(&[
            (
                "claude-3-5-haiku-20241022",
                "claude-3-5-haiku claude +known -thinking -manual -adaptive +prefill -prefix_bound +forced_adaptive",
            ),
            (
                "claude-3-5-sonnet-latest",
                "claude-3-5-sonnet claude +known -thinking -manual -adaptive +prefill -prefix_bound +forced_adaptive",
            ),
            (
                "claude-3-haiku-20240307",
                "claude-3-haiku claude +known -thinking -manual -adaptive +prefill -prefix_bound +forced_adaptive",
            ),
            (
                "claude-3-opus",
                "claude-3-opus claude +known -thinking -manual -adaptive +prefill -prefix_bound +forced_adaptive",
            ),
            (
                "claude-3-sonnet",
                "claude-3-sonnet claude +known -thinking -manual -adaptive +prefill -prefix_bound +forced_adaptive",
            ),
            ("claude-3-5-haikuX", "claude-3-5-haikux unknown"),
            (
                "claude-3-7-sonnet-20250219",
                "claude-3-7-sonnet claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-sonnet-4-20250514",
                "claude-sonnet-4 claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-opus-4",
                "claude-opus-4 claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-opus-4-1",
                "claude-opus-4-1 claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-sonnet-4-5",
                "claude-sonnet-4-5 claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-haiku-4-5",
                "claude-haiku-4-5 claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-sonnet-4-0",
                "claude-sonnet-4-0 claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-opus-4-0",
                "claude-opus-4-0 claude +known -adaptive +prefill -prefix_bound +forced_adaptive retention=LastTurn",
            ),
            (
                "claude-opus-4-5",
                "claude-opus-4-5 claude +known -adaptive +prefill -prefix_bound +forced_adaptive",
            ),
            (
                "claude-opus-4-6",
                "claude-opus-4-6 claude +known -prefix_bound +forced_adaptive",
            ),
            (
                "claude-sonnet-4-6",
                "claude-sonnet-4-6 claude +known -prefix_bound +forced_adaptive",
            ),
            (
                "claude-opus-4-7",
                "claude-opus-4-7 claude +known -manual -prefix_bound +forced_adaptive +strict_sampling",
            ),
            (
                "claude-opus-4-8",
                "claude-opus-4-8 claude +known -manual -prefix_bound +forced_adaptive +strict_sampling",
            ),
            (
                "claude-sonnet-5",
                "claude-sonnet-5 claude +known -manual -prefix_bound +forced_adaptive +strict_sampling default=adaptive",
            ),
            (
                "claude-opus-5",
                "claude-opus-5 claude +known -manual -prefix_bound +forced_adaptive +strict_sampling +effort_capped default=adaptive",
            ),
            (
                "claude-mythos-preview",
                "claude-mythos-preview claude +known -disabled -prefix_bound +forced_adaptive default=adaptive",
            ),
            (
                "claude-fable-5",
                "claude-fable-5 claude +known -manual -disabled -prefix_bound +forced_adaptive +strict_sampling default=adaptive",
            ),
            (
                "claude-mythos-5",
                "claude-mythos-5 claude +known -manual -disabled -prefix_bound +forced_adaptive +strict_sampling default=adaptive",
            ),
            (
                "claude-fable-5-1",
                "claude-fable-5-1 claude +known -manual -disabled +trailing +strict_sampling default=adaptive",
            ),
            (
                "claude-mythos-5-1",
                "claude-mythos-5-1 claude +known -manual -disabled +trailing -prefix_bound +strict_sampling default=adaptive",
            ),
            (
                "claude-opus-5-5",
                "claude-opus-5-5 claude +known -manual -disabled +trailing +strict_sampling +forced_refused default=adaptive display=omitted effort=medium does_not_read=claude-fable,claude-mythos",
            ),
            (
                "claude-sonnet-5-5",
                "claude-sonnet-5-5 claude +known -manual -disabled +trailing +strict_sampling +forced_refused +between_tools +effort_capped +account_bound default=adaptive display=omitted effort=high does_not_read=claude-opus-5,claude-fable,claude-mythos",
            ),
            (
                "claude-haiku-5-5",
                "claude-haiku-5-5 claude +known -manual +forced_adaptive +strict_sampling +effort_capped +account_bound default=adaptive display=omitted effort=medium",
            ),
            (
                "claude-opus-5-2",
                "claude-opus-5-2 claude +known -manual -disabled +trailing +strict_sampling default=adaptive",
            ),
            (
                "claude-nova-6",
                "claude-nova-6 claude +known -manual -disabled +trailing +strict_sampling default=adaptive",
            ),
            ("claude-opus-5-1", "claude-opus-5-1 unknown"),
            ("claude-opus-4-9", "claude-opus-4-9 unknown"),
            (
                "gemini-2.5-flash",
                "gemini-2.5-flash gemini +known +prefill -prefix_bound signatures=Optional",
            ),
            (
                "gemini-1.5-pro",
                "gemini-1.5-pro gemini +known +prefill -prefix_bound signatures=Optional",
            ),
            (
                "gemini-3-pro-image-preview",
                "gemini-3-pro-image-preview gemini +known +prefill -prefix_bound signatures=Optional",
            ),
            (
                "gemini-3-pro",
                "gemini-3-pro gemini +known +prefill -prefix_bound signatures=Required",
            ),
            // Another vendor's model: strict, but not bound to the prefix (AN-25 is Anthropic's).
            ("gpt-5", "gpt-5 unknown -prefix_bound"),
            ("deepseek-v4-pro", "deepseek-v4-pro unknown -prefix_bound"),
            // Qwen's endpoint refuses adaptive thinking (CX-01); a router in front may not.
            ("qwen3-max", "qwen3-max unknown -adaptive -prefix_bound"),
            (
                "openrouter/qwen/qwen3-max",
                "qwen3-max unknown -prefix_bound",
            ),
            ("kimi-k2.6", "kimi-k2.6 unknown -prefix_bound"),
            // An id of no vendor turnkeeper knows gets the strictest profile.
            ("some-model", "some-model unknown"),
            ("", " unknown"),
        ]);
    }

    /// Normalises an id and compares.
    fn check_id(id: &str, expect: &str) {
        assert_eq!(normalize(id), expect, "{id}");
    }

    #[test]
    fn ids_are_normalised() {
        check_id("  Claude-Sonnet-4-5  ", "claude-sonnet-4-5");
        check_id(
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-1-20250805-v1:0",
            "claude-opus-4-1",
        );
        check_id("us-gov.anthropic.claude-sonnet-4-5-v1", "claude-sonnet-4-5");
        check_id("eu.anthropic.claude-haiku-4-5", "claude-haiku-4-5");
        check_id("apac.claude-haiku-4-5", "claude-haiku-4-5");
        check_id("jp.claude-haiku-4-5", "claude-haiku-4-5");
        check_id("au.claude-haiku-4-5", "claude-haiku-4-5");
        check_id("us.eu.claude-haiku-4-5", "eu.claude-haiku-4-5");
        check_id("antigravity-claude-opus-4-6-thinking", "claude-opus-4-6");
        check_id("claude-sonnet-4-5[1m]", "claude-sonnet-4-5");
        check_id("claude-3-7-sonnet:thinking", "claude-3-7-sonnet");
        check_id("claude-3-7-sonnet-latest", "claude-3-7-sonnet");
        check_id("claude-opus-4-5@20251101", "claude-opus-4-5");
        check_id("claude-opus-4-5-2025110", "claude-opus-4-5-2025110");
        check_id("claude-opus-4-5-v", "claude-opus-4-5-v");
        check_id("claude-opus-4-5-vx1", "claude-opus-4-5-vx1");
        check_id("models/gemini-2.5-pro", "gemini-2.5-pro");
        check_id("gemini-2.5-pro-20250101", "gemini-2.5-pro");
        check_id("claude-4.6-opus", "claude-opus-4-6");
        check_id("claude-4-sonnet-thinking", "claude-sonnet-4");
        check_id("claude-3-sonnet", "claude-3-sonnet");
        check_id("claude-x-4-sonnet", "claude-x-4-sonnet");
        check_id("claude-sonnet", "claude-sonnet");
        check_id("claude--opus", "claude--opus");
    }

    #[test]
    fn modes_read_and_write_their_wire_names() {
        for (text, mode, wire) in [
            ("enabled", Some(Mode::Manual), "enabled"),
            ("manual", Some(Mode::Manual), "enabled"),
            ("adaptive", Some(Mode::Adaptive), "adaptive"),
            ("disabled", Some(Mode::Off), "disabled"),
            ("off", Some(Mode::Off), "disabled"),
            ("on", None, ""),
        ] {
            assert_eq!(Mode::parse(text), mode, "{text}");
            assert_eq!(mode.map(Mode::wire).unwrap_or(""), wire, "{text}");
        }
    }

    #[test]
    fn overrides_are_read_from_toml_and_json_files() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("tk-profiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let toml = dir.join("models.toml");
        let json = dir.join("models.json");
        let bad = dir.join("bad.toml");
        std::fs::write(&toml, "[models.\"claude-nova-1\"]\nprefill_ok = true\n")?;
        std::fs::write(&json, r#"{"models":{"claude-nova-1":{"manual_ok":false}}}"#)?;
        std::fs::write(&bad, "[models.x]\nbogus = 1\n")?;
        let from_toml = ProfileOverrides::from_file(&toml);
        let from_json = ProfileOverrides::from_file(&json);
        let from_bad = ProfileOverrides::from_file(&bad).map(|_| ());
        let missing = ProfileOverrides::from_file(&dir.join("none.toml")).map(|_| ());
        std::fs::remove_dir_all(&dir)?;
        let p = profile_for(Some("claude-nova-1"), Some(&from_toml?));
        assert!(p.known && p.prefill_ok && p.manual_ok);
        let p = profile_for(Some("claude-nova-1"), Some(&from_json?));
        assert!(p.known && !p.prefill_ok && !p.manual_ok);
        assert!(
            matches!(&from_bad, Err(ProfileError::Parse { path, message }) if path.ends_with("bad.toml") && message.contains("bogus")),
            "{from_bad:?}"
        );
        assert!(
            matches!(&missing, Err(ProfileError::Io { path, .. }) if path.ends_with("none.toml")),
            "{missing:?}"
        );
        Ok(())
    }

    #[test]
    fn spellings_map_to_profiles() {
        check(
            "claude-sonnet-4-5-20250929",
            ("claude-sonnet-4-5", Family::Claude, true, true, false),
        );
        check(
            "global.anthropic.claude-opus-4-5-20251101-v1:0",
            ("claude-opus-4-5", Family::Claude, true, true, false),
        );
        check(
            "claude-opus-4-6",
            ("claude-opus-4-6", Family::Claude, true, false, false),
        );
        check(
            "anthropic.claude-opus-4-7",
            ("claude-opus-4-7", Family::Claude, false, false, false),
        );
        check(
            "claude-sonnet-4@20250514",
            ("claude-sonnet-4", Family::Claude, true, true, false),
        );
        check(
            "claude-4-opus-20250514",
            ("claude-opus-4", Family::Claude, true, true, false),
        );
        check(
            "claude-fable-5-1",
            ("claude-fable-5-1", Family::Claude, false, false, true),
        );
        check(
            "claude-opus-5-5",
            ("claude-opus-5-5", Family::Claude, false, false, true),
        );
        check(
            "some-new-model",
            ("some-new-model", Family::Unknown, true, false, true),
        );
        check(
            "gemini-3-pro-preview",
            ("gemini-3-pro-preview", Family::Gemini, true, true, false),
        );
    }

    #[test]
    fn retention_and_defaults() {
        assert_eq!(
            profile_for(Some("claude-haiku-4-5"), None).retention,
            Retention::LastTurn
        );
        assert_eq!(
            profile_for(Some("claude-sonnet-4-6"), None).retention,
            Retention::All
        );
        assert_eq!(
            profile_for(Some("claude-sonnet-5"), None).default_mode,
            Mode::Adaptive
        );
        assert!(!profile_for(Some("claude-3-5-haiku-20241022"), None).thinking);
        assert_eq!(
            profile_for(Some("gemini-2.5-flash"), None).gemini_signatures,
            GeminiSignatures::Optional
        );
        assert_eq!(
            profile_for(Some("gemini-3.1-pro"), None).gemini_signatures,
            GeminiSignatures::Required
        );
    }

    #[test]
    fn overrides_from_toml_apply_most_specific_last() {
        let o = ProfileOverrides::parse(
            "[models.\"claude-nova-*\"]\nprefill_ok = true\nmanual_ok = true\n[models.\"claude-nova-1\"]\nfamily = \"claude\"\nmanual_ok = false\n",
            false,
        )
        .expect("parses");
        let p = profile_for(Some("claude-nova-1"), Some(&o));
        assert!(p.known && p.prefill_ok && !p.manual_ok && p.family == Family::Claude);
        assert!(ProfileOverrides::parse("[models.x]\nbogus = 1\n", false).is_err());
    }

    /// A pattern ending in `*` patches the models whose id starts with it, and no other.
    #[test]
    fn a_prefix_override_leaves_other_models_alone() {
        let o = ProfileOverrides::parse("[models.\"claude-nova-*\"]\nprefill_ok = true\n", false)
            .expect("parses");
        assert!(profile_for(Some("claude-nova-2"), Some(&o)).prefill_ok);
        assert!(!profile_for(Some("claude-opus-4-7"), Some(&o)).prefill_ok);
    }

    /// A key without `*` patches the one model it names, in any spelling, and no other: the
    /// neighbour of the same family keeps the profile it has without overrides. Kills the match
    /// guard `normalize(&k) == n` replaced with `true` in `ProfileOverrides::patches_for`,
    /// under which every exact key patched every model.
    #[test]
    fn an_exact_override_leaves_other_models_alone() {
        let o = ProfileOverrides::parse(
            "[models.\"Anthropic/Claude-Nova-1\"]\nfamily = \"claude\"\nprefill_ok = true\n",
            false,
        )
        .expect("parses");
        let nova = profile_for(Some("claude-nova-1"), Some(&o));
        assert!(nova.known && nova.prefill_ok && nova.family == Family::Claude);
        assert_eq!(
            profile_for(Some("claude-nova-2"), Some(&o)),
            profile_for(Some("claude-nova-2"), None)
        );
        assert_eq!(
            profile_for(Some("claude-opus-4-7"), Some(&o)),
            profile_for(Some("claude-opus-4-7"), None)
        );
    }

    #[test]
    fn the_5_5_generation_has_its_documented_profiles() {
        let opus = profile_for(Some("claude-opus-5-5"), None);
        assert!(!opus.manual_ok && !opus.disabled_ok && !opus.between_tools_ok);
        assert!(opus.forced_tool_choice_refused && opus.prefix_bound && opus.trailing_thinking_ok);
        assert_eq!(opus.default_effort.as_deref(), Some("medium"));
        assert_eq!(opus.display_default.as_deref(), Some("omitted"));
        let sonnet = profile_for(Some("anthropic/claude-sonnet-5.5"), None);
        assert!(
            sonnet.between_tools_ok
                && sonnet.account_bound
                && sonnet.effort_capped_without_thinking
        );
        assert!(sonnet.does_not_read.iter().any(|m| m == "claude-opus-5"));
        let haiku = profile_for(Some("claude-haiku-5-5"), None);
        assert!(haiku.disabled_ok && haiku.effort_capped_without_thinking && haiku.account_bound);
        assert!(!haiku.forced_tool_choice_refused && haiku.forced_tool_choice_adaptive_ok);
        assert!(!haiku.prefill_ok && haiku.strict_sampling);
    }

    /// The legacy order is undone only when every part between `claude` and the family is a
    /// number: `claude-4-x-sonnet` (a word among the version parts) is left as it came.
    /// Kills `!p.is_empty() && …` turned into `||` in `normalize`, under which any non-empty
    /// part passed and the id became `claude-sonnet-4-x`.
    #[test]
    fn a_legacy_order_with_a_word_among_the_version_parts_is_left_as_it_came() {
        assert_eq!(normalize("claude-4-x-sonnet"), "claude-4-x-sonnet");
        assert_eq!(normalize("claude-4-6-sonnet"), "claude-sonnet-4-6");
    }
}
