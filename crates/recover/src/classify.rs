//! The classifier: error text in, [`Diagnosis`] out.
//!
//! # Method
//! 1. Normalise ([`crate::normalize`]): unescape every nesting level, drop whitespace, quotes,
//!    backticks and TUI glyphs, lowercase. One linear pass.
//! 2. Walk the rule table below **in order**; the first rule whose phrases all occur wins. Each
//!    phrase is a stable substring of a real error (source named beside it); matching is
//!    `memchr::memmem`, so there is no backtracking and the cost is linear in the text per rule.
//! 3. Only when no phrase matches, fall back on the HTTP status (innermost found, else given).
//!
//! # Priority order, and why
//! 1. `thinking_block_modified`: "cannot be modified" wins over everything (the message also
//!    names thinking, signatures and the latest assistant message).
//! 2. `thinking_signature_invalid` (incl. Gemini `thought_signature` and the AN-25 prefix-binding
//!    variant, whose text mentions `anthropic-beta` config).
//! 3. `request_config_invalid`: before every thinking-structure rule, because config errors say
//!    "when thinking is enabled" too (trap 1).
//! 4. `thinking_block_trailing`, `thinking_disabled_violation`, `thinking_block_order`: before the
//!    tool rules, because the canonical order text names `tool_use` and `tool_result`.
//! 5. `tool_use_id_format` (before tool pairing: its path names `tool_use`), then
//!    `reasoning_item_orphan`, `tool_use_id_mismatch`, `tool_result_missing`, `role_order`.
//!    The three near-identical Gemini turn messages are told apart by their subject ("function
//!    **response** turn", "number of function response parts", "function **call** turn").
//! 6. `empty_content`.
//! 7. `context_length_exceeded`, before rate limits: OpenAI's "Request too large … (TPM)" is a 429
//!    that no retry fixes (trap 3).
//! 8. Billing (`insufficient_quota`) is `unknown`; then `retryable_rate_limit` (whose Anthropic
//!    text asks for a shorter prompt, trap 2), `retryable_overloaded`, `retryable_server`: last
//!    among phrases, because wrappers say "Internal server error" or `api_error` around a
//!    deterministic 400 (trap 4).
//! 9. Status fallback: 529/503 overloaded, 429 rate limit, 500/502/504 server, else `unknown`.
//!
//! No id prefix (`toolu_`, `call_`, `rs_`) and no token limit is hard-coded anywhere.

use std::sync::OnceLock;
use std::time::Duration;

use memchr::memmem;

use crate::diagnosis::{ConfigField, Diagnosis, ErrorKind, Location, Provider, TokenFigures};
use crate::normalize::Normalized;

/// Classify an error body, with the HTTP status if known.
///
/// Never panics, whatever the input. The status found inside the text wins over the one given
/// (a wrapper's status often contradicts the real cause), and the text's phrases win over both.
///
/// ```
/// use turnkeeper_recover::{classify, ErrorKind};
/// let d = classify(Some(400), r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.22: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01Gho1LhNQt7FjqEiiHkrVMK. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#);
/// assert_eq!(d.kind, ErrorKind::ToolResultMissing);
/// assert_eq!(d.location.message, Some(22));
/// assert_eq!(d.tool_use_ids, vec!["toolu_01Gho1LhNQt7FjqEiiHkrVMK".to_string()]);
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
    let matched = rules().iter().find_map(|rule| {
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
    let inner_status = find_status(lower, matched.map(|(_, pos)| pos));
    let status = inner_status.or(status);
    let (kind, anchor, config) = match matched {
        Some((rule, pos)) => (rule.kind, Some(pos), rule.config),
        None => (status_fallback(status), None, None),
    };
    let mut provider = detect_provider(&norm.lower);
    if provider == Provider::Unknown {
        provider = hint;
    }
    let location = anchor
        .map(|pos| find_location(lower, pos))
        .unwrap_or_default();
    let spaced_lower = norm.spaced.to_ascii_lowercase();
    let (tool_use_ids, reasoning_ids) = find_ids(&norm.spaced, &spaced_lower, kind);
    let tokens = if kind == ErrorKind::ContextLengthExceeded {
        find_tokens(lower)
    } else {
        None
    };
    let message = innermost_message(&norm.spaced, &spaced_lower, matched.map(|(r, _)| r));
    Diagnosis {
        kind,
        retryable: kind.is_retryable(),
        provider,
        status,
        location,
        tool_use_ids,
        reasoning_ids,
        tokens,
        retry_after: find_retry_after(lower),
        prefix_binding: kind == ErrorKind::ThinkingSignatureInvalid
            && (contains(lower, b"boundtoadifferentconversation")
                || contains(lower, b"prefix_mismatch_behavior")),
        config,
        message,
    }
}

struct Rule {
    kind: ErrorKind,
    /// The phrases as written (for the message search), normalised.
    keys: Vec<String>,
    phrases: Vec<memmem::Finder<'static>>,
    config: Option<ConfigField>,
}

/// One table row: kind, phrases that must all occur (readable form; normalised at start-up),
/// and the config field for `request_config_invalid` rows.
type Row = (ErrorKind, &'static [&'static str], Option<ConfigField>);

use ConfigField as C;
use ErrorKind as K;

/// The rule table, in priority order. Phrases are quoted from real errors; sources are
/// `shared/research/api-rules.md` (rule ids) and `corpus/errors` (ids of items).
const RULES: &[Row] = &[
    // 1. AN-22 (anthropics/claude-code#63221, vybestack/llxprt-code#1653).
    (
        K::ThinkingBlockModified,
        &["cannot be modified", "thinking"],
        None,
    ),
    // 2. AN-23/AN-25 (ding113/claude-code-hub#518, anomalyco/opencode#48637), AN-06
    //    (lbjlaq/Antigravity-Manager#1650), GM-01 (manthanabc/paws#103), GM-08.
    (
        K::ThinkingSignatureInvalid,
        &["invalid signature in thinking block"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["bound to a different conversation"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["signature: field required"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["invalid data in redacted_thinking"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["is missing a thought_signature"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["missing a thought_signature"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["corrupted thought signature"],
        None,
    ),
    // 3. Request configuration (api-rules.md §1.2; trap 1). anthropics/claude-code#11388,
    //    n8n-io/n8n#14288, MartialBE/one-hub#529, liuw1535/antigravity2api-nodejs#149.
    (
        K::RequestConfigInvalid,
        &["temperature may only be set to"],
        Some(C::Temperature),
    ),
    (K::RequestConfigInvalid, &["top_p must be"], Some(C::TopP)),
    (
        K::RequestConfigInvalid,
        &["top_k", "thinking"],
        Some(C::TopK),
    ),
    (
        K::RequestConfigInvalid,
        &["must be greater than thinking.budget_tokens"],
        Some(C::MaxTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["budget_tokens: input should be"],
        Some(C::BudgetTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking may not be enabled when tool_choice"],
        Some(C::ToolChoice),
    ),
    (
        K::RequestConfigInvalid,
        &["does not support thinking"],
        Some(C::ModelWithoutThinking),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking.type.enabled is not supported"],
        Some(C::ManualThinkingUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["adaptive thinking is not supported"],
        Some(C::AdaptiveThinkingUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["include_thoughts is only enabled"],
        Some(C::IncludeThoughts),
    ),
    (
        K::RequestConfigInvalid,
        &["custom.name: string should match pattern"],
        Some(C::ToolDefinition),
    ),
    (
        K::RequestConfigInvalid,
        &["input_schema"],
        Some(C::ToolDefinition),
    ),
    // 4. AN-19 (anthropics/claude-code#10199), AN-20 (tailcallhq/forgecode#1853),
    //    AN-16/AN-18 (anomalyco/opencode#3077, anthropics/claude-code#20734),
    //    DS-03 (decolua/9router#355), KM-01.
    (
        K::ThinkingBlockTrailing,
        &["final block in an assistant message cannot be thinking"],
        None,
    ),
    (
        K::ThinkingDisabledViolation,
        &["when thinking is disabled", "cannot contain"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["expected thinking or redacted_thinking"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["must start with a thinking block"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["first block must be thinking"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["in the thinking mode must be passed back"],
        None,
    ),
    (K::ThinkingBlockOrder, &["missing reasoning_content"], None),
    (
        K::ThinkingBlockOrder,
        &["reasoning_content is missing"],
        None,
    ),
    // 5. AN-12 (tailcallhq/forgecode#1142; ding113/claude-code-hub#470 for server_tool_use).
    (K::ToolUseIdFormat, &["tool_use.id: string should"], None),
    //    RS-01..RS-04 (continuedev/continue#8933, openai/codex#8145, can1357/oh-my-pi#41).
    (
        K::ReasoningItemOrphan,
        &["of type reasoning was provided without"],
        None,
    ),
    (
        K::ReasoningItemOrphan,
        &["was provided without its required reasoning"],
        None,
    ),
    (
        K::ReasoningItemOrphan,
        &["encrypted content", "could not be verified"],
        None,
    ),
    (K::ReasoningItemOrphan, &["invalid_encrypted_content"], None),
    (
        K::ReasoningItemOrphan,
        &["items are not persisted when"],
        None,
    ),
    //    AN-10/AN-15 (tghamm/Anthropic.SDK#184, anthropics/claude-code#64383), OC-02
    //    (miurla/morphic#136), Bedrock Converse, GM-09 response turn, RS-05.
    (K::ToolUseIdMismatch, &["unexpected tool_use_id"], None),
    (
        K::ToolUseIdMismatch,
        &["must be a response to a prece"],
        None,
    ),
    (
        K::ToolUseIdMismatch,
        &["exceeds the number of tooluse blocks"],
        None,
    ),
    (
        K::ToolUseIdMismatch,
        &["function response turn comes immediately after"],
        None,
    ),
    (
        K::ToolUseIdMismatch,
        &["no tool call found for function call output"],
        None,
    ),
    //    AN-08 (Kilo-Org/kilocode#5163), OC-01 (aliasrobotics/cai#111), GM-10
    //    (google-gemini/gemini-cli#18509), RS-05.
    (K::ToolResultMissing, &["ids were found without"], None),
    (
        K::ToolResultMissing,
        &["did not find", "tool_result block"],
        None,
    ),
    (
        K::ToolResultMissing,
        &["must be followed by tool messages"],
        None,
    ),
    (K::ToolResultMissing, &["insufficient tool messages"], None),
    (
        K::ToolResultMissing,
        &["number of function response parts"],
        None,
    ),
    (
        K::ToolResultMissing,
        &["no tool output found for function call"],
        None,
    ),
    //    AN-01..AN-03, Bedrock Converse, vLLM templates, GM-09 call turn, GM-12
    //    (CherryHQ/cherry-studio#39, vllm-project/vllm#6862, xincmm/sageread#8).
    (K::RoleOrder, &["roles must alternate"], None),
    (
        K::RoleOrder,
        &["must alternate between user and assistant"],
        None,
    ),
    (K::RoleOrder, &["roles should be alternating"], None),
    (K::RoleOrder, &["must start with a user message"], None),
    (K::RoleOrder, &["first message must use the"], None),
    (K::RoleOrder, &["must end with a user message"], None),
    (
        K::RoleOrder,
        &["does not support assistant message prefill"],
        None,
    ),
    (
        K::RoleOrder,
        &["function call turn comes immediately after"],
        None,
    ),
    (K::RoleOrder, &["multiturn requests ends with a user"], None),
    // 6. AN-04/AN-05 (anthropics/claude-code#6774, TheValkyrja/Anthropic2Vertex#5).
    (K::EmptyContent, &["must have non-empty content"], None),
    (K::EmptyContent, &["text content blocks must"], None),
    (
        K::EmptyContent,
        &["cache_control cannot be set for empty text"],
        None,
    ),
    (K::EmptyContent, &["is blank. add text"], None),
    // 7. Context window (stackblitz/bolt.new#1748, ChatGPTNextWeb/NextChat#625,
    //    google-gemini/gemini-cli#4231, TheR1D/shell_gpt#653 for the TPM trap).
    (K::ContextLengthExceeded, &["prompt is too long"], None),
    (K::ContextLengthExceeded, &["exceed context limit"], None),
    (K::ContextLengthExceeded, &["maximum context length"], None),
    (K::ContextLengthExceeded, &["context_length_exceeded"], None),
    (
        K::ContextLengthExceeded,
        &["exceeds the context window"],
        None,
    ),
    (K::ContextLengthExceeded, &["input token count"], None),
    (K::ContextLengthExceeded, &["request too large for"], None),
    (K::ContextLengthExceeded, &["input is too long"], None),
    // 8. Billing is not retryable (trap 3: OpenAI insufficient_quota).
    (K::Unknown, &["insufficient_quota"], None),
    //    Rate limits (bhouston/mycoder#62, BuilderIO/micro-agent#86,
    //    google/generative-ai-docs#438, kirodotdev/Kiro#8113).
    (K::RetryableRateLimit, &["rate_limit_error"], None),
    (K::RetryableRateLimit, &["rate limit reached"], None),
    (
        K::RetryableRateLimit,
        &["would exceed the rate limit"],
        None,
    ),
    (
        K::RetryableRateLimit,
        &["rate limit", "try again later"],
        None,
    ),
    (K::RetryableRateLimit, &["rate_limit_exceeded"], None),
    (K::RetryableRateLimit, &["resource_exhausted"], None),
    (
        K::RetryableRateLimit,
        &["resource has been exhausted"],
        None,
    ),
    (
        K::RetryableRateLimit,
        &["exceeded your current quota"],
        None,
    ),
    (K::RetryableRateLimit, &["throttlingexception"], None),
    (K::RetryableRateLimit, &["too many requests"], None),
    (K::RetryableRateLimit, &["too many tokens"], None),
    //    Overload (anthropics/anthropic-sdk-typescript#616, lobehub/lobehub#9728).
    (K::RetryableOverloaded, &["overloaded"], None),
    (K::RetryableOverloaded, &["experiencing high demand"], None),
    (
        K::RetryableOverloaded,
        &["service is currently unavailable"],
        None,
    ),
    (K::RetryableOverloaded, &["status code of 503"], None),
    //    Transient server errors (anthropics/claude-code#22766, Wei-Shaw/sub2api#6714).
    (K::RetryableServer, &["internal server error"], None),
    (K::RetryableServer, &["api_error"], None),
    (K::RetryableServer, &["server_error"], None),
    (K::RetryableServer, &["server had an error"], None),
    (
        K::RetryableServer,
        &["an error occurred while processing your request"],
        None,
    ),
];

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
                Rule {
                    kind: *kind,
                    keys,
                    phrases: finders,
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

/// `messages.N.content.M` nearest before the phrase, else the first after it.
fn find_location(lower: &[u8], anchor: usize) -> Location {
    let mut best_before: Option<(usize, Location)> = None;
    let mut first_after: Option<(usize, Location)> = None;
    for needle in [&b"messages."[..], b"message.", b"messageindex", b"atindex"] {
        for pos in memmem::find_iter(lower, needle) {
            let mut i = pos + needle.len();
            if lower.get(i) == Some(&b'[') {
                i += 1;
            }
            let Some((m, end)) = read_number(lower, i) else {
                continue;
            };
            let mut loc = Location {
                message: u32::try_from(m).ok(),
                block: None,
            };
            if lower[end..].starts_with(b".content.") {
                loc.block = read_number(lower, end + b".content.".len())
                    .and_then(|(b, _)| u32::try_from(b).ok());
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

/// Tool call ids and reasoning item ids named by the error.
fn find_ids(spaced: &str, spaced_lower: &str, kind: ErrorKind) -> (Vec<String>, Vec<String>) {
    let s = spaced.as_bytes();
    let l = spaced_lower.as_bytes();
    let mut tools = Vec::new();
    let mut reasoning = Vec::new();
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
            ] {
                for pos in memmem::find_iter(l, marker) {
                    read_id_list(s, pos + marker.len(), &mut tools);
                }
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
        }
        _ => {}
    }
    (tools, reasoning)
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
        let ms = |t: &str| classify(None, t).retry_after.map(|d| d.as_millis());
        assert_eq!(ms("Please try again in 644ms."), Some(644));
        assert_eq!(ms("Please try again in 3.89s."), Some(3890));
        assert_eq!(ms("retry-after: 3"), Some(3000));
        assert_eq!(ms("Please retry in 20.0s"), Some(20000));
        assert_eq!(ms("nothing here"), None);
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
