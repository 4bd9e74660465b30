//! The classifier: error text in, [`Diagnosis`] out.
//!
//! # Method
//! 1. Normalise ([`crate::normalize`]): unescape every nesting level, drop whitespace, quotes,
//!    backticks and TUI glyphs, lowercase. One linear pass.
//! 2. Read what the error says about itself ([`crate::structure`]): `type`/`code`/`status`
//!    values, Bedrock exception names, Gemini statuses, provider codes (GLM 1210/1214, Mistral
//!    3280), and whether anything in it calls the request invalid or unsupported.
//! 3. Walk the phrase table ([`crate::phrases`]) **in order**; the first family whose phrases all
//!    occur wins. Matching is `memchr::memmem` on the normalised text, so there is no
//!    backtracking and the cost is linear in the text per row.
//! 4. Decide, most specific evidence first:
//!    - a phrase naming a transcript or configuration error (or an opaque malformed-request
//!      error) decides the kind, whatever the status or the wrapper says;
//!    - a quota that cannot succeed by waiting (billing, a zero limit) is `unknown`;
//!    - structural codes: context overflow, unverifiable encrypted content, id-format codes,
//!      GLM 1210 (configuration) and 1214 (malformed, unspecified: `unknown`);
//!    - retryable evidence (phrases, then `rate_limit_error`/`overloaded_error`/`api_error`-style
//!      codes, then the HTTP status: 429 rate limit, 529/503 overloaded, 500/502/504 server).
//!      **A status is evidence, not the verdict**: an overloaded or server verdict is dropped to
//!      `unknown` (never retried) when the error also calls the request invalid, unsupported or
//!      illegal, because the same bytes will fail again. A rate limit keeps its verdict: its
//!      Anthropic text asks for a shorter prompt (trap 2) and its OpenAI envelope says
//!      `invalid_request_error`.
//!
//! # Priority order of the phrase table, and why
//! 1. `thinking_block_modified`: "cannot be modified" wins over everything (the message also
//!    names thinking, signatures and the latest assistant message).
//! 2. `thinking_signature_invalid` (incl. Gemini `thought_signature` and the AN-25 prefix-binding
//!    variant, whose text mentions `anthropic-beta` config).
//! 3. `request_config_invalid`: before every thinking-structure rule, because config errors say
//!    "when thinking is enabled" too (trap 1).
//! 4. `thinking_block_trailing`, `thinking_disabled_violation`, `thinking_block_order`: before the
//!    tool rules, because the canonical order text names `tool_use` and `tool_result`.
//! 5. `tool_use_id_format` (before tool pairing: its path names `tool_use`; before context
//!    length: LiteLLM relabels OpenAI's 40-character id cap as a context-window error), then
//!    `reasoning_item_orphan`, `tool_use_id_mismatch`, `tool_result_missing`, `role_order`.
//!    The three near-identical Gemini turn messages are told apart by their subject ("function
//!    **response** turn", "number of function response parts", "function **call** turn").
//! 6. `empty_content`.
//! 7. `context_length_exceeded`, before rate limits: OpenAI's "Request too large … (TPM)" is a 429
//!    that no retry fixes (trap 3).
//! 8. `retryable_rate_limit`, `retryable_overloaded`, `retryable_server`: last among phrases,
//!    because wrappers say "Internal server error" or `api_error` around a deterministic 400
//!    (trap 4).
//!
//! No id prefix (`toolu_`, `call_`, `rs_`) and no token limit is hard-coded anywhere.

use std::sync::OnceLock;
use std::time::Duration;

use memchr::memmem;

use crate::diagnosis::{ConfigField, Diagnosis, ErrorKind, Location, Provider, TokenFigures};
use crate::normalize::Normalized;
use crate::phrases::RULES;
use crate::prefilter::{Bigrams, Probe};
use crate::structure::{Structure, quota_cannot_succeed};

/// Classify an error body, with the HTTP status if known.
///
/// Never panics, whatever the input. The status found inside the text wins over the one given
/// (a wrapper's status often contradicts the real cause), and the text's fields and phrases win
/// over both.
///
/// ```
/// use turnkeeper_recover::{classify, ErrorKind};
/// let d = classify(Some(400), r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.22: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01Gho1LhNQt7FjqEiiHkrVMK. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#);
/// assert_eq!(d.kind, ErrorKind::ToolResultMissing);
/// assert_eq!(d.location.message, Some(22));
/// assert_eq!(d.tool_use_ids, vec!["toolu_01Gho1LhNQt7FjqEiiHkrVMK".to_string()]);
///
/// // A gateway's 500 around a parameter it refuses is not worth retrying.
/// let d = classify(Some(500), r#"{"error":{"type":"internal_error","message":"Unexpected reasoning effort high. Supported types are xhigh (default), medium, and low."}}"#);
/// assert_eq!(d.kind, ErrorKind::RequestConfigInvalid);
/// assert!(!d.retryable);
/// ```
pub fn classify(status: Option<u16>, body: &str) -> Diagnosis {
    classify_with_hint(status, body, Provider::Unknown)
}

/// Like [`classify`], with the provider the request was sent to.
///
/// The hint is used when the text itself does not name a provider.
pub fn classify_with_hint(status: Option<u16>, body: &str, hint: Provider) -> Diagnosis {
    let norm = Normalized::new(body);
    let lower = norm.lower.as_bytes();
    let bigrams = Bigrams::of(lower);
    let matched = rules().iter().find_map(|rule| {
        if !rule.probes.iter().all(|p| bigrams.may_contain(p)) {
            return None;
        }
        let mut first = None;
        for finder in &rule.phrases {
            match finder.find(lower) {
                Some(pos) => {
                    first.get_or_insert(pos);
                }
                None => return None,
            }
        }
        first.map(|pos| (rule, pos))
    });
    let structure = Structure::scan(lower, &bigrams);
    let inner_status = find_status(lower, matched.map(|(_, pos)| pos));
    let status = inner_status.or(status);
    let (kind, anchor, config) = decide(matched, &structure, lower, status);
    let mut provider = detect_provider(&norm.lower);
    if provider == Provider::Unknown {
        provider = hint;
    }
    let location = anchor
        .map(|pos| find_location(lower, pos))
        .unwrap_or_default();
    let spaced_lower = norm.spaced.to_ascii_lowercase();
    let ids = find_ids(&norm.spaced, &spaced_lower, kind);
    let tokens = if kind == ErrorKind::ContextLengthExceeded {
        find_tokens(lower)
    } else {
        None
    };
    let param = if kind == ErrorKind::RequestConfigInvalid {
        find_param(&spaced_lower)
    } else {
        None
    };
    let message = innermost_message(&norm.spaced, &spaced_lower, matched.map(|(r, _)| r));
    // A wait only means something for an error that waiting can fix: a 9router `(reset after
    // 30s)` or Gemini's `Please retry in 50s` around a hard error is the wrapper's, not a promise.
    let retry_after = if kind.is_retryable() {
        find_retry_after(lower)
    } else {
        None
    };
    Diagnosis {
        kind,
        retryable: kind.is_retryable(),
        provider,
        status,
        location,
        tool_use_ids: ids.tools,
        reasoning_ids: ids.reasoning,
        item_ids: ids.items,
        tokens,
        retry_after,
        quota_exhausted: kind == ErrorKind::Unknown && quota_cannot_succeed(lower),
        prefix_binding: kind == ErrorKind::ThinkingSignatureInvalid
            && (contains(lower, b"boundtoadifferentconversation")
                || contains(lower, b"prefix_mismatch_behavior")),
        config,
        param,
        message,
    }
}

/// The kind, the position the verdict rests on (for the location search) and the config field.
fn decide(
    matched: Option<(&Rule, usize)>,
    s: &Structure,
    lower: &[u8],
    status: Option<u16>,
) -> (ErrorKind, Option<usize>, Option<ConfigField>) {
    // A phrase naming the error itself decides, whatever the wrapper or the status says.
    if let Some((rule, pos)) = matched
        && !rule.kind.is_retryable()
    {
        return (rule.kind, Some(pos), rule.config);
    }
    if quota_cannot_succeed(lower) {
        return (ErrorKind::Unknown, None, None);
    }
    if s.context {
        return (ErrorKind::ContextLengthExceeded, None, None);
    }
    if s.encrypted {
        return (ErrorKind::ReasoningItemOrphan, None, None);
    }
    if s.id_format {
        return (ErrorKind::ToolUseIdFormat, None, None);
    }
    if s.config_code {
        return (ErrorKind::RequestConfigInvalid, None, None);
    }
    if s.opaque_hard {
        return (ErrorKind::Unknown, None, None);
    }
    let retryable = match matched {
        Some((rule, _)) => Some(rule.kind),
        None if s.rate => Some(ErrorKind::RetryableRateLimit),
        None if s.overload => Some(ErrorKind::RetryableOverloaded),
        None if s.server => Some(ErrorKind::RetryableServer),
        None => None,
    };
    let anchor = matched.map(|(_, pos)| pos);
    let (kind, from_status) = match retryable {
        Some(k) => (k, false),
        None => (status_fallback(status), true),
    };
    match kind {
        ErrorKind::RetryableRateLimit => (kind, anchor, None),
        k if k.is_retryable() && (s.hard || (from_status && s.envelope)) => {
            (ErrorKind::Unknown, None, None)
        }
        k => (k, anchor, None),
    }
}

struct Rule {
    kind: ErrorKind,
    /// The phrases as written (for the message search), normalised.
    keys: Vec<String>,
    phrases: Vec<memmem::Finder<'static>>,
    /// The bigram probes of the phrases, tested before any search.
    probes: Vec<Probe>,
    config: Option<ConfigField>,
}

fn rules() -> &'static [Rule] {
    static RULES_CELL: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES_CELL.get_or_init(|| {
        RULES
            .iter()
            .map(|(kind, phrases, config)| {
                let keys: Vec<String> = phrases.iter().map(|p| Normalized::new(p).lower).collect();
                let finders = keys
                    .iter()
                    .map(|k| memmem::Finder::new(k.as_bytes()).into_owned())
                    .collect();
                let probes = keys.iter().map(|k| Probe::new(k.as_bytes())).collect();
                Rule {
                    kind: *kind,
                    keys,
                    phrases: finders,
                    probes,
                    config: *config,
                }
            })
            .collect()
    })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memmem::find(hay, needle).is_some()
}

fn status_fallback(status: Option<u16>) -> ErrorKind {
    match status {
        Some(529 | 503) => ErrorKind::RetryableOverloaded,
        Some(429) => ErrorKind::RetryableRateLimit,
        Some(500 | 502 | 504) => ErrorKind::RetryableServer,
        _ => ErrorKind::Unknown,
    }
}

/// Words that, right before a three-digit number, make it an HTTP status.
const STATUS_BEFORE: &[&[u8]] = &[
    b"code",
    b"error",
    b"status",
    b"http",
    b"statuscodeof",
    b"invalidargument",
    b"failed",
    b"exception",
    b"reason",
    b"apierror",
];
/// Words that, right after a three-digit number, make it an HTTP status.
const STATUS_AFTER: &[&[u8]] = &[
    b"badrequest",
    b"toomanyrequests",
    b"internalservererror",
    b"serviceunavailable",
    b"overloaded",
    b"unavailable",
    b"ratelimit",
    b"resourcehasbeen",
    b"itemwithid",
    b"{",
];

/// The HTTP status nearest before the matched phrase (the innermost wrapper around it), else the
/// nearest after it, else the last one in the text.
fn find_status(lower: &[u8], anchor: Option<usize>) -> Option<u16> {
    let mut before: Option<u16> = None;
    let mut after: Option<u16> = None;
    let mut last: Option<u16> = None;
    let mut i = 0;
    while i < lower.len() {
        if !lower[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < lower.len() && lower[i].is_ascii_digit() {
            i += 1;
        }
        if i - start != 3 || (start > 0 && matches!(lower[start - 1], b'.' | b',' | b'_')) {
            continue;
        }
        let value = u16::from(lower[start] - b'0') * 100
            + u16::from(lower[start + 1] - b'0') * 10
            + u16::from(lower[start + 2] - b'0');
        if !(100..=599).contains(&value) {
            continue;
        }
        // Skip up to two separators before the number.
        let mut b = start;
        let mut skipped = 0;
        while b > 0 && skipped < 2 && matches!(lower[b - 1], b':' | b'(' | b'[' | b'=' | b'-') {
            b -= 1;
            skipped += 1;
        }
        let prefix = &lower[..b];
        let rest = &lower[i..];
        let is_status = b == 0
            || STATUS_BEFORE.iter().any(|w| prefix.ends_with(w))
            || STATUS_AFTER.iter().any(|w| rest.starts_with(w))
            || (rest.first() == Some(&b']') && prefix.ends_with(b"["));
        if !is_status {
            continue;
        }
        last = Some(value);
        match anchor {
            Some(a) if start <= a => before = Some(value),
            Some(_) if after.is_none() => after = Some(value),
            _ => {}
        }
    }
    before.or(after).or(last)
}

fn detect_provider(lower: &str) -> Provider {
    let has = |s: &str| lower.contains(s);
    if has("providerreturnederror") || has("openrouter") {
        Provider::OpenRouter
    } else if has("litellm") {
        Provider::LiteLlm
    } else if has("bedrock")
        || has("botocore")
        || has("validationexception")
        || has("throttlingexception")
        || has("converseoperation")
    {
        Provider::Bedrock
    } else if has("_vrtx_") || has("vertex") || has("aiplatform") {
        Provider::Vertex
    } else if has("deepseek") || has("reasoning_content") {
        Provider::DeepSeek
    } else if has("moonshot") || has("kimi") {
        Provider::Kimi
    } else if has("mistral") || has("code:3280") || has("withalengthof9") {
        Provider::Mistral
    } else if has("minimax") || has("(2013)") {
        Provider::MiniMax
    } else if has("bigmodel") || has("zhipu") || has("code:1214") || has("code:1210") {
        Provider::Zhipu
    } else if has("thought_signature")
        || has("gemini")
        || has("generativelanguage")
        || has("invalid_argument")
        || has("resource_exhausted")
        || has("functioncallturn")
        || has("functionresponse")
        || (has("unavailable") && has("503"))
    {
        Provider::Gemini
    } else if has("type:error,error:{type:")
        || has("overloaded_error")
        || has("rate_limit_error")
        || has("anthropic")
        || has("req_011")
        || has("redacted_thinking")
        || has("tool_result")
    {
        Provider::Anthropic
    } else if has("openai")
        || has("context_length_exceeded")
        || has("tool_call")
        || has("oftypereasoning")
        || has("encryptedcontent")
        || has("ratelimitreachedfor")
        || has("response.failed")
        || has("gpt-")
    {
        Provider::OpenAi
    } else {
        Provider::Unknown
    }
}

/// Read an unsigned number at `at`, allowing `,` thousands separators.
fn read_number(s: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut i = at;
    let mut value: u64 = 0;
    let mut digits = 0;
    while i < s.len() {
        match s[i] {
            d @ b'0'..=b'9' => {
                value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
                digits += 1;
            }
            b',' if digits > 0 && s.get(i + 1).is_some_and(u8::is_ascii_digit) => {}
            _ => break,
        }
        i += 1;
    }
    (digits > 0).then_some((value, i))
}

/// The markers of a message (turn) index, each with what must follow the number (if anything)
/// for it to be one: Anthropic `messages.N`, a serde path `messages[N].role` (DeepSeek's
/// Anthropic endpoint) or OpenAI's `'messages[N].content'`, DeepSeek's `message index N`,
/// Kimi's `at index N`, OpenAI Responses `input[N]`, Gemini `contents[N]`, Vertex's `in the N.
/// content block`.
const LOCATION_MARKERS: &[(&[u8], &[u8])] = &[
    (b"messages.", b""),
    (b"messages[", b"]"),
    (b"message.", b""),
    (b"messageindex", b""),
    (b"atindex", b""),
    (b"input[", b"]"),
    (b"contents[", b"]"),
    (b"contents.", b""),
    (b"inthe", b".contentblock"),
];

/// `messages.N.content.M` nearest before the phrase, else the first after it.
fn find_location(lower: &[u8], anchor: usize) -> Location {
    let mut best_before: Option<(usize, Location)> = None;
    let mut first_after: Option<(usize, Location)> = None;
    for (needle, follow) in LOCATION_MARKERS {
        for pos in memmem::find_iter(lower, needle) {
            let mut i = pos + needle.len();
            if lower.get(i) == Some(&b'[') {
                i += 1;
            }
            let Some((m, end)) = read_number(lower, i) else {
                continue;
            };
            if !lower[end..].starts_with(follow) {
                continue;
            }
            let mut loc = Location {
                message: u32::try_from(m).ok(),
                block: None,
            };
            // Anthropic `messages.N.content.M`; Bedrock's `messages.N.member.content.M.member`.
            for content in [&b".content."[..], b".member.content."] {
                if lower[end..].starts_with(content) {
                    loc.block = read_number(lower, end + content.len())
                        .and_then(|(b, _)| u32::try_from(b).ok());
                }
            }
            if pos <= anchor {
                if best_before.is_none_or(|(p, _)| pos > p) {
                    best_before = Some((pos, loc));
                }
            } else if first_after.is_none_or(|(p, _)| pos < p) {
                first_after = Some((pos, loc));
            }
        }
    }
    best_before
        .or(first_after)
        .map(|(_, loc)| loc)
        .unwrap_or_default()
}

fn is_param_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'[' | b']' | b'-')
}

/// A parameter name starting at `at` (after spaces and quotes), unless it is a placeholder.
fn read_param(s: &[u8], mut at: usize) -> Option<String> {
    while at < s.len() && matches!(s[at], b' ' | b'\'' | b'"') {
        at += 1;
    }
    let start = at;
    while at < s.len() && is_param_byte(s[at]) {
        at += 1;
    }
    let mut v = &s[start..at];
    while let [rest @ .., b'.'] = v {
        v = rest;
    }
    let placeholder = v.is_empty()
        || v.iter().all(u8::is_ascii_digit)
        || matches!(v, b"null" | b"none" | b"nil" | b"undefined");
    if placeholder {
        return None;
    }
    std::str::from_utf8(v).ok().map(str::to_owned)
}

/// The request parameter a configuration error names: an OpenAI `param` field, `Unknown
/// parameter: 'x'`, `Unsupported value: 'x' ...`, or the path before a pydantic-style
/// `x: Extra inputs are not permitted`.
fn find_param(spaced_lower: &str) -> Option<String> {
    let s = spaced_lower.as_bytes();
    for pos in memmem::find_iter(s, b"param") {
        if pos > 0 && s[pos - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut i = pos + b"param".len();
        while i < s.len() && matches!(s[i], b' ' | b'\'' | b'"') {
            i += 1;
        }
        if s.get(i) == Some(&b':')
            && let Some(v) = read_param(s, i + 1)
        {
            return Some(v);
        }
    }
    for marker in [
        &b"unknown parameter:"[..],
        b"unsupported parameter:",
        b"unsupported value:",
        // OpenAI's `Invalid 'input[3].content': array too long.`
        b"invalid '",
    ] {
        if let Some(p) = memmem::find(s, marker)
            && let Some(v) = read_param(s, p + marker.len())
        {
            return Some(v);
        }
    }
    // Bedrock: `Malformed input request: #: extraneous key [stream] is not permitted`.
    if let Some(p) = memmem::find(s, b"extraneous key [")
        && let Some(v) = read_param(s, p + b"extraneous key [".len())
    {
        let v = v.split(']').next().unwrap_or_default();
        if !v.is_empty() {
            return Some(v.to_owned());
        }
    }
    // GLM: `max_tokens参数非法` ("max_tokens is illegal"), `X 参数有误`.
    for marker in ["参数非法".as_bytes(), "参数有误".as_bytes()] {
        if let Some(p) = memmem::find(s, marker) {
            let mut start = p;
            while start > 0 && is_param_byte(s[start - 1]) {
                start -= 1;
            }
            if let Some(v) = read_param(s, start).filter(|v| v.len() <= p - start) {
                return Some(v);
            }
        }
    }
    // `Request is missing x-opencode-session and cannot be routed`.
    if let Some(p) = memmem::find(s, b"request is missing ")
        && let Some(v) = read_param(s, p + b"request is missing ".len())
    {
        return Some(v);
    }
    // `anthropic-version: header is required`.
    if let Some(p) = memmem::find(s, b": header is required") {
        let mut start = p;
        while start > 0 && is_param_byte(s[start - 1]) {
            start -= 1;
        }
        if let Some(v) = read_param(s, start).filter(|v| v.len() <= p - start) {
            return Some(v);
        }
    }
    if let Some(p) = memmem::find(s, b": extra inputs are not permitted") {
        let end = p;
        let mut start = end;
        while start > 0 && is_param_byte(s[start - 1]) {
            start -= 1;
        }
        return read_param(s, start).filter(|v| v.len() <= end - start);
    }
    None
}

fn is_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Read a list of ids (`a, b, c`) starting at `at` in `spaced`.
fn read_id_list(spaced: &[u8], mut at: usize, out: &mut Vec<String>) {
    loop {
        while at < spaced.len() && matches!(spaced[at], b' ' | b'\'' | b'"' | b':') {
            at += 1;
        }
        let start = at;
        while at < spaced.len() && is_id_byte(spaced[at]) {
            at += 1;
        }
        let id = &spaced[start..at];
        // An id has at least one digit or underscore, so plain words ("Each") are not taken.
        if id.len() < 4 || !id.iter().any(|b| b.is_ascii_digit() || *b == b'_') {
            return;
        }
        if let Ok(s) = std::str::from_utf8(id)
            && !out.iter().any(|o| o == s)
        {
            out.push(s.to_owned());
        }
        while at < spaced.len() && matches!(spaced[at], b' ' | b'\'' | b'"') {
            at += 1;
        }
        if spaced.get(at) == Some(&b',') {
            at += 1;
        } else {
            return;
        }
    }
}

/// The ids an error names, by what they are.
#[derive(Default)]
struct Ids {
    tools: Vec<String>,
    reasoning: Vec<String>,
    items: Vec<String>,
}

/// The type an error gives the item `id`: `'<id>' of type '<type>'`, when it says.
fn item_type<'a>(spaced_lower: &'a str, id: &str) -> Option<&'a str> {
    let lower_id = id.to_ascii_lowercase();
    let at = spaced_lower.find(&lower_id)? + lower_id.len();
    let rest = spaced_lower[at..].trim_start_matches(['\'', '"', ' ']);
    let rest = rest.strip_prefix("of type")?;
    let rest = rest.trim_start_matches(['\'', '"', ' ']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Tool call ids, reasoning item ids and other Responses item ids named by the error.
fn find_ids(spaced: &str, spaced_lower: &str, kind: ErrorKind) -> Ids {
    let s = spaced.as_bytes();
    let l = spaced_lower.as_bytes();
    let mut tools = Vec::new();
    let mut reasoning = Vec::new();
    let mut items = Vec::new();
    match kind {
        ErrorKind::ToolResultMissing
        | ErrorKind::ToolUseIdMismatch
        | ErrorKind::ToolUseIdFormat => {
            for marker in [
                &b"immediately after:"[..],
                b"_result blocks:",
                b"did not have response messages:",
                b"for function call output with call_id",
                b"no tool output found for function call",
                // OpenAI Responses RS-08: `Invalid 'input[3].id': 'call_abc'.`
                b"].id",
            ] {
                for pos in memmem::find_iter(l, marker) {
                    read_id_list(s, pos + marker.len(), &mut tools);
                }
            }
            // OR-14: `Duplicate item found with id rs_…`.
            for pos in memmem::find_iter(l, b"duplicate item found with id") {
                read_id_list(s, pos + b"duplicate item found with id".len(), &mut items);
            }
        }
        ErrorKind::ReasoningItemOrphan => {
            for marker in [&b"item with id "[..], b"item ", b"for item "] {
                for pos in memmem::find_iter(l, marker) {
                    if pos > 0 && l[pos - 1].is_ascii_alphanumeric() {
                        continue;
                    }
                    read_id_list(s, pos + marker.len(), &mut reasoning);
                }
            }
            // `rs_… of type 'reasoning'` with the leading `Item '` trimmed (openai/openai-node#1567).
            for pos in memmem::find_iter(l, b" of type ") {
                let mut start = pos;
                while start > 0 && matches!(s[start - 1], b'\'' | b'"') {
                    start -= 1;
                }
                let end = start;
                while start > 0 && is_id_byte(s[start - 1]) {
                    start -= 1;
                }
                if end > start {
                    read_id_list(s, start, &mut reasoning);
                }
            }
            // `Item 'fc_…' of type 'function_call' was provided without its required
            // 'reasoning' item: 'rs_…'` (OR-02): the item of another type is not a reasoning item.
            let (other, kept): (Vec<String>, Vec<String>) = reasoning.into_iter().partition(|id| {
                item_type(spaced_lower, id)
                    .is_some_and(|t| !(t.starts_with("reasoning") || t.starts_with("compaction")))
            });
            reasoning = kept;
            items = other;
        }
        _ => {}
    }
    Ids {
        tools,
        reasoning,
        items,
    }
}

/// Token figures: `N tokens > M maximum`, `A + B > C`, OpenAI and Gemini wordings.
fn find_tokens(lower: &[u8]) -> Option<TokenFigures> {
    // "prompt is too long: 219898 tokens > 200000 maximum"
    if let Some(pos) = memmem::find(lower, b"tokens>") {
        let mut start = pos;
        while start > 0 && (lower[start - 1].is_ascii_digit() || lower[start - 1] == b',') {
            start -= 1;
        }
        let actual = read_number(lower, start).map(|(v, _)| v);
        let limit = read_number(lower, pos + b"tokens>".len()).map(|(v, _)| v);
        if actual.is_some() || limit.is_some() {
            return Some(TokenFigures { actual, limit });
        }
    }
    // "input length and max_tokens exceed context limit: 190000 + 21333 > 200000"
    if let Some(pos) = memmem::find(lower, b"exceedcontextlimit:") {
        let at = pos + b"exceedcontextlimit:".len();
        if let Some((a, end)) = read_number(lower, at)
            && lower.get(end) == Some(&b'+')
            && let Some((b, end2)) = read_number(lower, end + 1)
        {
            let limit = if lower.get(end2) == Some(&b'>') {
                read_number(lower, end2 + 1).map(|(v, _)| v)
            } else {
                None
            };
            return Some(TokenFigures {
                actual: a.checked_add(b),
                limit,
            });
        }
    }
    // Gemini: "The input token count (3475108) exceeds the maximum number of tokens allowed (1048576)"
    if let Some(pos) = memmem::find(lower, b"inputtokencount(") {
        let actual = read_number(lower, pos + b"inputtokencount(".len()).map(|(v, _)| v);
        let limit = memmem::find(lower, b"tokensallowed(")
            .and_then(|p| read_number(lower, p + b"tokensallowed(".len()))
            .map(|(v, _)| v);
        return Some(TokenFigures { actual, limit });
    }
    // OpenAI / vLLM: "maximum context length is 4097 tokens. However, your messages resulted in
    // 4619 tokens" / "you requested 4130 tokens" / "for a total of at least 262145 tokens"
    if let Some(pos) = memmem::find(lower, b"maximumcontextlengthis") {
        let limit = read_number(lower, pos + b"maximumcontextlengthis".len()).map(|(v, _)| v);
        let mut actual = None;
        for marker in [&b"foratotalofatleast"[..], b"resultedin", b"yourequested"] {
            if let Some(p) = memmem::find(lower, marker)
                && let Some((v, end)) = read_number(lower, p + marker.len())
            {
                if lower[end..].starts_with(b"tokens") && !lower[end..].starts_with(b"tokens(") {
                    actual = Some(v);
                    break;
                }
                if actual.is_none() {
                    actual = Some(v);
                }
            }
        }
        return Some(TokenFigures { actual, limit });
    }
    // vLLM: "Input prompt (5000 tokens) is too long and exceeds limit of 4096", "The decoder
    // prompt (length 5000) is longer than the maximum model length of 4096".
    for (actual_at, limit_at) in [
        (&b"inputprompt("[..], &b"limitof"[..]),
        (b"prompt(length", b"maximummodellengthof"),
    ] {
        if let Some(p) = memmem::find(lower, actual_at) {
            let actual = read_number(lower, p + actual_at.len()).map(|(v, _)| v);
            let limit = memmem::find(&lower[p..], limit_at)
                .and_then(|q| read_number(lower, p + q + limit_at.len()))
                .map(|(v, _)| v);
            return Some(TokenFigures { actual, limit });
        }
    }
    // OpenAI TPM: "Limit 30000, Requested 31538"
    if let (Some(l), Some(r)) = (
        memmem::find(lower, b"limit"),
        memmem::find(lower, b"requested"),
    ) {
        let limit = read_number(lower, l + b"limit".len()).map(|(v, _)| v);
        let actual = read_number(lower, r + b"requested".len()).map(|(v, _)| v);
        if limit.is_some() && actual.is_some() {
            return Some(TokenFigures { actual, limit });
        }
    }
    None
}

/// How long the provider asks to wait: `try again in 644ms`, `retry after 20s`,
/// `retry-after: 3` (a pasted header: seconds), `"retryDelay": "20s"`, `Please retry in 20.0s`.
fn find_retry_after(lower: &[u8]) -> Option<Duration> {
    const MARKERS: &[&[u8]] = &[
        b"tryagainin",
        b"retry-after:",
        b"retryafter:",
        b"retry_after:",
        b"retryafter",
        b"retryin",
        b"retrydelay:",
        b"resetafter",
    ];
    for marker in MARKERS {
        for pos in memmem::find_iter(lower, marker) {
            let at = pos + marker.len();
            let Some((whole, mut end)) = read_number(lower, at) else {
                continue;
            };
            let mut millis = whole.saturating_mul(1000);
            if lower.get(end) == Some(&b'.') {
                let mut scale = 100u64;
                end += 1;
                while let Some(d) = lower.get(end).filter(|d| d.is_ascii_digit()) {
                    millis = millis.saturating_add(u64::from(d - b'0') * scale);
                    scale /= 10;
                    end += 1;
                }
            }
            let rest = &lower[end..];
            let ms = if rest.starts_with(b"ms") || rest.starts_with(b"millisecond") {
                whole
            } else if rest.starts_with(b"min")
                || (rest.starts_with(b"m") && !rest.starts_with(b"ms"))
            {
                millis.saturating_mul(60)
            } else if rest.starts_with(b"h") {
                millis.saturating_mul(3600)
            } else {
                millis
            };
            return Some(Duration::from_millis(ms));
        }
    }
    None
}

/// The innermost readable message: the shortest `message` value that holds the matched phrase,
/// else the last non-wrapper `message` value, else the whole text (trimmed).
fn innermost_message(spaced: &str, spaced_lower: &str, rule: Option<&Rule>) -> String {
    const LIMIT: usize = 600;
    let s = spaced.as_bytes();
    let l = spaced_lower.as_bytes();
    let mut best: Option<(usize, usize)> = None;
    let mut fallback: Option<(usize, usize)> = None;
    for pos in memmem::find_iter(l, b"message") {
        let mut i = pos + b"message".len();
        while i < s.len() && matches!(s[i], b'"' | b'\'' | b' ') {
            i += 1;
        }
        if s.get(i) != Some(&b':') {
            continue;
        }
        i += 1;
        while i < s.len() && s[i] == b' ' {
            i += 1;
        }
        let quote = match s.get(i) {
            Some(q @ (b'"' | b'\'')) => {
                i += 1;
                Some(*q)
            }
            _ => None,
        };
        let start = i;
        if matches!(s.get(start), Some(b'{' | b'[')) {
            continue;
        }
        let mut end = s.len();
        let mut j = start;
        while j < s.len() {
            let c = s[j];
            let closes = match quote {
                Some(q) => {
                    c == q && {
                        let mut k = j + 1;
                        while k < s.len() && s[k] == b' ' {
                            k += 1;
                        }
                        k >= s.len() || matches!(s[k], b',' | b'}' | b']' | b')')
                    }
                }
                None => matches!(c, b',' | b'}' | b'\n'),
            };
            if closes {
                end = j;
                break;
            }
            j += 1;
        }
        if end <= start {
            continue;
        }
        let value = &spaced[start..end];
        let compact = Normalized::new(value).lower;
        let generic = compact.starts_with("providerreturnederror") || compact.len() < 3;
        if let Some(rule) = rule
            && rule.keys.iter().all(|k| compact.contains(k.as_str()))
        {
            if best.is_none_or(|(bs, be)| end - start < be - bs) {
                best = Some((start, end));
            }
            continue;
        }
        if !generic {
            fallback = Some((start, end));
        }
    }
    let text = match best.or(fallback) {
        Some((a, b)) => &spaced[a..b],
        None => spaced,
    };
    let text = text.trim();
    if text.len() <= LIMIT {
        return text.to_owned();
    }
    let mut cut = LIMIT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConfigField as C;

    #[test]
    fn a_status_is_evidence_not_the_verdict() {
        // Mistral's id rule served by a local mistral-common server as HTTP 500 (jundot/omlx#1997).
        let d = classify(
            Some(500),
            "HTTP 500: Tool call id was call_49c89af0 but must be a-z, A-Z, 0-9,\nwith a length of 9",
        );
        assert_eq!(d.kind, ErrorKind::ToolUseIdFormat);
        assert!(!d.retryable);
        // A 500 whose only words call the request invalid: not recognised, and not retried.
        let d = classify(
            Some(500),
            r#"{"error":{"type":"server_error","message":"Invalid value for 'foo'"}}"#,
        );
        assert_eq!(d.kind, ErrorKind::Unknown);
        // A 503 with nothing else is still an overload.
        assert_eq!(
            classify(Some(503), "upstream connect error").kind,
            ErrorKind::RetryableOverloaded
        );
        // A rate limit keeps its verdict inside an `invalid_request_error` envelope.
        let d = classify(
            Some(429),
            "{'error': {'code': 'rate_limit_error', 'message': 'This request would exceed the rate limit for your organization of 20,000 input tokens per minute.', 'type': 'invalid_request_error'}}",
        );
        assert_eq!(d.kind, ErrorKind::RetryableRateLimit);
    }

    #[test]
    fn quotas_that_cannot_succeed_are_not_waited_out() {
        let zero = "429 Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-3-pro. Please retry in 50.4s. RESOURCE_EXHAUSTED";
        let d = classify(Some(429), zero);
        assert_eq!(d.kind, ErrorKind::Unknown);
        assert!(!d.retryable);
        let per_minute = "429 You exceeded your current quota, please check your plan and billing details. quotaMetric generativelanguage.googleapis.com/generate_content_free_tier_requests, quotaValue 250000. RESOURCE_EXHAUSTED";
        assert_eq!(
            classify(Some(429), per_minute).kind,
            ErrorKind::RetryableRateLimit
        );
    }

    #[test]
    fn locations_are_read_inside_bytes_reprs() {
        // A Python bytes repr (LiteLLM's Vertex path, anomalyco/opencode#3077), escapes and all.
        let body = r#"litellm.BadRequestError: Vertex_aiException BadRequestError - b'{"type":"error","error":{"type":"invalid_request_error","message":"messages.7.content.2.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block."}}
'"#;
        let d = classify(None, body);
        assert_eq!(d.kind, ErrorKind::ThinkingBlockOrder);
        assert_eq!(
            d.location,
            Location {
                message: Some(7),
                block: Some(2)
            }
        );
        let body = r#"b'{"type":"error","error":{"type":"invalid_request_error","message":"messages.12: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A\xe2\x80\xa6"}}'"#;
        let d = classify(None, body);
        assert_eq!(d.kind, ErrorKind::ToolResultMissing);
        assert_eq!(d.location.message, Some(12));
    }

    #[test]
    fn configuration_errors_name_their_parameter() {
        let p = |t: &str| classify(Some(400), t).param;
        assert_eq!(
            p(
                r#"API Error: 400 {"error":{"message":"Unknown parameter:      'tools.defer_loading'.","type":"invalid_request_error","param":"tools.defer_loading","code":"unknown_parameter"}}"#
            ),
            Some("tools.defer_loading".to_owned())
        );
        assert_eq!(
            p("Unsupported value: 'reasoning_effort' does not support 'minimal' with this model."),
            Some("reasoning_effort".to_owned())
        );
        assert_eq!(
            p(
                "API Error: 400 Error from provider (Anthropic): context_management: Extra inputs are not permitted."
            ),
            Some("context_management".to_owned())
        );
        assert_eq!(
            p(
                r#"{"error":{"message":"x","type":"invalid_request_error","param":null}} Unknown parameter: 'foo'"#
            ),
            Some("foo".to_owned())
        );
        let d = classify(
            Some(400),
            "Function tools with reasoning_effort are not supported for gpt-5.5 in /v1/chat/completions.",
        );
        assert_eq!(d.config, Some(C::ReasoningEffort));
    }

    #[test]
    fn status_prefers_the_wrapper_nearest_the_cause() {
        let d = classify(
            Some(429),
            "429 All accounts exhausted. Last error: HTTP 400 Corrupted thought signature.",
        );
        assert_eq!(d.kind, ErrorKind::ThinkingSignatureInvalid);
        assert_eq!(d.status, Some(400));
    }

    #[test]
    fn retry_after_units() {
        let ms =
            |t: &str| find_retry_after(Normalized::new(t).lower.as_bytes()).map(|d| d.as_millis());
        assert_eq!(ms("Please try again in 644ms."), Some(644));
        assert_eq!(ms("Please try again in 3.89s."), Some(3890));
        assert_eq!(ms("retry-after: 3"), Some(3000));
        assert_eq!(ms("Please retry in 20.0s"), Some(20000));
        assert_eq!(ms("nothing here"), None);
        // Only an error that waiting can fix carries a wait: a gateway's `(reset after 30s)`
        // around DeepSeek's hard error is the wrapper's.
        let d = classify(
            Some(400),
            "[deepseek/deepseek-reasoner] [400]: Missing `reasoning_content` field in the assistant message at message index 2. (reset after 30s)",
        );
        assert_eq!(
            (d.kind, d.retry_after),
            (ErrorKind::ThinkingBlockOrder, None)
        );
        let d = classify(Some(429), "Rate limit reached. (reset after 30s)");
        assert_eq!(d.retry_after, Some(Duration::from_secs(30)));
    }

    #[test]
    fn tokens_are_parsed_without_hard_coded_limits() {
        let d = classify(None, "prompt is too long: 209062 tokens > 199999 maximum");
        assert_eq!(
            d.tokens,
            Some(TokenFigures {
                actual: Some(209062),
                limit: Some(199999)
            })
        );
        let d = classify(
            None,
            "input length and `max_tokens` exceed context limit: 190000 + 21333 > 204648, decrease input length",
        );
        assert_eq!(d.tokens.and_then(|t| t.limit), Some(204648));
    }

    #[test]
    fn config_traps_are_not_block_errors() {
        for (t, f) in [
            (
                "`temperature` may only be set to 1 when thinking is enabled",
                C::Temperature,
            ),
            ("top_p must be unset when thinking is enabled.", C::TopP),
            (
                "Thinking may not be enabled when tool_choice forces tool use.",
                C::ToolChoice,
            ),
            (
                "`max_tokens` must be greater than `thinking.budget_tokens`",
                C::MaxTokens,
            ),
        ] {
            let d = classify(Some(400), t);
            assert_eq!(d.kind, ErrorKind::RequestConfigInvalid, "{t}");
            assert_eq!(d.config, Some(f));
        }
    }

    #[test]
    fn gemini_turn_messages_differ() {
        let k = |t: &str| classify(Some(400), t).kind;
        assert_eq!(
            k(
                "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
            ),
            ErrorKind::RoleOrder
        );
        assert_eq!(
            k(
                "Please ensure that function response turn comes immediately after a function call turn."
            ),
            ErrorKind::ToolUseIdMismatch
        );
        assert_eq!(
            k(
                "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
            ),
            ErrorKind::ToolResultMissing
        );
    }

    #[test]
    fn prefix_binding_is_flagged() {
        let d = classify(
            Some(400),
            "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation.",
        );
        assert!(d.prefix_binding);
        assert_eq!(
            d.location,
            Location {
                message: Some(1),
                block: Some(0)
            }
        );
    }

    #[test]
    fn reasoning_ids_are_found() {
        let d = classify(
            None,
            "Item 'rs_06a20bd006d58dde' of type 'reasoning' was provided without its required following item.",
        );
        assert_eq!(d.kind, ErrorKind::ReasoningItemOrphan);
        assert_eq!(d.reasoning_ids, vec!["rs_06a20bd006d58dde".to_string()]);
    }
}
