//! What an error says about itself before its words: the machine-readable fields and codes that
//! providers and gateways put around the message (`type`, `code`, `status`, `reason`, Bedrock
//! exception names, Gemini statuses, GLM/MiniMax/Mistral numeric codes), read from the
//! normalised text in which `"type": "overloaded_error"` reads `type:overloaded_error`.
//!
//! Each signal is a fixed token, searched once (`memchr::memmem`): linear in the text, no
//! backtracking. The tokens are specific enough not to need the field name around them, except
//! where a bare word would be ambiguous (`status:internal`, `code:1214`).

use std::sync::OnceLock;

use memchr::memmem;

use crate::prefilter::{Bigrams, Probe};

/// The signals found in one error text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Structure {
    /// A deterministic rejection in specific terms: `ValidationException`, an invalid-parameter
    /// code, or words saying a value is invalid, unsupported, illegal or required. Sending the same bytes again cannot succeed, whatever the HTTP status says.
    pub hard: bool,
    /// A generic bad-request envelope (`invalid_request_error`, `BadRequestError`, Google's
    /// `INVALID_ARGUMENT`): weaker
    /// evidence, because gateways put it around whatever they relay, so it outweighs a bare
    /// HTTP status but not a specific overload or server code.
    pub envelope: bool,
    /// `rate_limit_error`, `rate_limit_exceeded`, `RESOURCE_EXHAUSTED`, `ThrottlingException`.
    pub rate: bool,
    /// `overloaded_error`, `UNAVAILABLE`, `ServiceUnavailable`.
    pub overload: bool,
    /// `api_error`, `server_error`, `internal_error`, Gemini `INTERNAL`.
    pub server: bool,
    /// `context_length_exceeded`, `exceed_context_size_error`.
    pub context: bool,
    /// OpenAI `invalid_encrypted_content`.
    pub encrypted: bool,
    /// A tool or item id the provider refuses for its form: OpenAI `string_above_max_length` on
    /// an id, `invalid_id_prefix`, Mistral code 3280.
    pub id_format: bool,
    /// A GLM invalid-parameter code (1210).
    pub config_code: bool,
    /// A provider code that says the request is malformed without saying how (GLM 1214).
    pub opaque_hard: bool,
}

/// Which flag a token sets.
#[derive(Clone, Copy)]
enum Signal {
    Hard,
    Envelope,
    Rate,
    Overload,
    Server,
    Context,
    Encrypted,
    IdFormat,
    ConfigCode,
    OpaqueHard,
}

/// The tokens, in normalised form (lowercase, no spaces or quotes).
const TOKENS: &[(&str, Signal)] = &[
    ("invalid_request_error", Signal::Envelope),
    ("invalid_request_body", Signal::Envelope),
    ("badrequesterror", Signal::Envelope),
    ("badrequestexception", Signal::Envelope),
    ("bad_request_error", Signal::Envelope),
    // Google's status: Vertex and relays put it around whatever they pass on.
    ("invalid_argument", Signal::Envelope),
    ("validationexception", Signal::Hard),
    ("invalid_parameter", Signal::Hard),
    ("invalidparameter", Signal::Hard),
    ("unknown_parameter", Signal::Hard),
    ("invalid_function_call", Signal::Hard),
    ("failed_precondition", Signal::Envelope),
    ("invalid_prompt", Signal::Hard),
    ("invalid_value", Signal::Hard),
    ("literal_error", Signal::Hard),
    // Words that say a value is refused, in any wrapper and any status ("invalid" on its own is
    // read by `invalid_word`, apart from the envelope names that contain it).
    ("notsupported", Signal::Hard),
    ("unsupported", Signal::Hard),
    ("doesnotsupport", Signal::Hard),
    ("illegal", Signal::Hard),
    ("notpermitted", Signal::Hard),
    ("isrequired", Signal::Hard),
    ("fieldrequired", Signal::Hard),
    ("cannotbe", Signal::Hard),
    ("非法", Signal::Hard),
    ("有误", Signal::Hard),
    ("rate_limit_error", Signal::Rate),
    ("rate_limit_exceeded", Signal::Rate),
    ("resource_exhausted", Signal::Rate),
    ("throttlingexception", Signal::Rate),
    ("too_many_requests", Signal::Rate),
    ("overloaded_error", Signal::Overload),
    ("status:unavailable", Signal::Overload),
    ("serviceunavailable", Signal::Overload),
    ("service_unavailable", Signal::Overload),
    ("api_error", Signal::Server),
    ("server_error", Signal::Server),
    ("internal_error", Signal::Server),
    ("internal_server_error", Signal::Server),
    ("status:internal", Signal::Server),
    ("context_length_exceeded", Signal::Context),
    ("exceed_context_size_error", Signal::Context),
    ("context_window_exceeded", Signal::Context),
    ("invalid_encrypted_content", Signal::Encrypted),
    ("string_above_max_length", Signal::IdFormat),
    ("invalid_id_prefix", Signal::IdFormat),
    ("code:3280", Signal::IdFormat),
    ("code:1210", Signal::ConfigCode),
    ("code:1214", Signal::OpaqueHard),
    ("[1214]", Signal::OpaqueHard),
];

type Token = (memmem::Finder<'static>, Probe, Signal);

fn finders() -> &'static [Token] {
    static CELL: OnceLock<Vec<Token>> = OnceLock::new();
    CELL.get_or_init(|| {
        TOKENS
            .iter()
            .map(|(t, s)| {
                (
                    memmem::Finder::new(t.as_bytes()).into_owned(),
                    Probe::new(t.as_bytes()),
                    *s,
                )
            })
            .collect()
    })
}

impl Structure {
    /// Read the signals of a normalised text, whose bigrams are given.
    pub(crate) fn scan(lower: &[u8], bigrams: &Bigrams) -> Structure {
        let mut s = Structure::default();
        for (finder, probe, signal) in finders() {
            let flag = match signal {
                Signal::Hard => &mut s.hard,
                Signal::Envelope => &mut s.envelope,
                Signal::Rate => &mut s.rate,
                Signal::Overload => &mut s.overload,
                Signal::Server => &mut s.server,
                Signal::Context => &mut s.context,
                Signal::Encrypted => &mut s.encrypted,
                Signal::IdFormat => &mut s.id_format,
                Signal::ConfigCode => &mut s.config_code,
                Signal::OpaqueHard => &mut s.opaque_hard,
            };
            if !*flag && bigrams.may_contain(probe) && finder.find(lower).is_some() {
                *flag = true;
            }
        }
        if !s.hard {
            s.hard = invalid_word(lower);
        }
        s
    }
}

/// "invalid" other than in the envelope names `invalid_request_error`, `invalid_request_body`
/// and `INVALID_ARGUMENT`.
fn invalid_word(lower: &[u8]) -> bool {
    memmem::find_iter(lower, b"invalid").any(|p| {
        let rest = &lower[p + b"invalid".len()..];
        let rest = rest.strip_prefix(b"_").unwrap_or(rest);
        !(rest.starts_with(b"request") || rest.starts_with(b"argument"))
    })
}

/// Whether a quota error cannot succeed by waiting: billing (`insufficient_quota`, OpenAI's "check
/// your plan and billing details" without Google's per-minute quota metrics) or a quota whose
/// limit is zero (Gemini free tier on a model it does not cover: `limit: 0`).
pub(crate) fn quota_cannot_succeed(lower: &[u8]) -> bool {
    let has = |n: &[u8]| memmem::find(lower, n).is_some();
    if has(b"insufficient_quota") || has(b"billing_not_active") || has(b"billing_hard_limit") {
        return true;
    }
    // A zero limit counts inside a quota error only (Google's words, its status or its
    // `QuotaFailure` details): elsewhere `limit: 0` may be anything.
    let google_quota = has(b"resource_exhausted") || has(b"quotafailure") || has(b"quotametric");
    let quota_words = has(b"exceededyourcurrentquota") || has(b"quotaexceeded");
    if (quota_words || google_quota) && zero_limit(lower) {
        return true;
    }
    if !quota_words {
        return false;
    }
    let google = has(b"resource_exhausted")
        || has(b"generativelanguage")
        || has(b"quotametric")
        || has(b"ai.google.dev");
    !google && has(b"checkyourplanandbilling")
}

/// `limit: 0` (`limit: 0, model: gemini-2.5-pro`, `"limit": 0`), Google's `quotaValue: "0"` or
/// its `quota_limit_value` of `"0"`, the zero not followed by another digit or a decimal point.
fn zero_limit(lower: &[u8]) -> bool {
    [
        &b"limit:0"[..],
        b"quotavalue:0",
        // Google's `ErrorInfo` metadata: `key: "quota_limit_value" value: "0"` as protobuf
        // text, or `"quota_limit_value": "0"` as JSON.
        b"quota_limit_valuevalue:0",
        b"quota_limit_value:0",
    ]
    .iter()
    .any(|needle| {
        memmem::find_iter(lower, needle).any(|p| {
            !lower
                .get(p + needle.len())
                .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::Normalized;

    fn scan(t: &str) -> Structure {
        let lower = Normalized::new(t).lower;
        Structure::scan(lower.as_bytes(), &Bigrams::of(lower.as_bytes()))
    }

    #[test]
    fn fields_are_read_through_any_quoting() {
        let s = scan(r#"{'error': {'code': 429, 'status': 'RESOURCE_EXHAUSTED'}}"#);
        assert!(s.rate && !s.hard);
        let s = scan(r#"{"type":"error","error":{"type":"invalid_request_error","message":"x"}}"#);
        assert!(s.envelope && !s.hard);
        let s = scan(r#"{"error":{"message":"Invalid value for 'foo'"}}"#);
        assert!(s.hard);
        let s = scan(r#"{"error":{"code":400,"message":"x","status":"INVALID_ARGUMENT"}}"#);
        assert!(s.envelope && !s.hard);
        let s = scan(r#"{"error":{"code":"1214","message":"x"}}"#);
        assert!(s.opaque_hard);
        let s = scan(r#"{"error":{"code":500,"status":"INTERNAL"}}"#);
        assert!(s.server && !s.hard);
    }

    #[test]
    fn quotas_that_cannot_succeed() {
        let q = |t: &str| quota_cannot_succeed(Normalized::new(t).lower.as_bytes());
        assert!(q(
            "You exceeded your current quota, please check your plan and billing details."
        ));
        assert!(q(
            "Quota exceeded for metric: generativelanguage.googleapis.com/x, limit: 0, model: m"
        ));
        assert!(!q(
            "You exceeded your current quota, please check your plan and billing details. \"status\": \"RESOURCE_EXHAUSTED\", limit: 250000"
        ));
        assert!(!q("429 Too Many Requests"));
    }

    /// Whether waiting cannot help, case by case.
    fn check(cases: &[(&str, bool)]) {
        for (text, expect) in cases {
            let got = quota_cannot_succeed(Normalized::new(text).lower.as_bytes());
            assert_eq!(got, *expect, "{text}");
        }
    }

    #[test]
    fn billing_and_zero_limits_cannot_be_waited_out() {
        let billing =
            "You exceeded your current quota, please check your plan and billing details.";
        check(&[
            ("insufficient_quota", true),
            ("billing_not_active", true),
            ("billing_hard_limit_reached", true),
            (billing, true),
            ("Quota exceeded; check your plan and billing details", true),
            ("check your plan and billing details", false),
            (&format!("{billing} RESOURCE_EXHAUSTED"), false),
            (
                &format!("{billing} generativelanguage.googleapis.com"),
                false,
            ),
            (&format!("{billing} quotaMetric x"), false),
            (
                &format!("{billing} see ai.google.dev/gemini-api/docs/rate-limits"),
                false,
            ),
            ("Quota exceeded for metric m, limit: 0", true),
            ("Quota exceeded for metric m, limit: 0, model: g", true),
            ("Quota exceeded for metric m, limit: 05", false),
            ("Quota exceeded for metric m, limit: 10", false),
            ("Quota exceeded for metric m", false),
            (
                r#"{"status":"RESOURCE_EXHAUSTED","details":[{"quotaValue":"0"}]}"#,
                true,
            ),
            (
                r#"{"status":"RESOURCE_EXHAUSTED","details":[{"quotaValue":"60"}]}"#,
                false,
            ),
            (r#"RESOURCE_EXHAUSTED "limit": 0"#, true),
            (r#"RESOURCE_EXHAUSTED "limit": 0.5"#, false),
            ("rate limit: 0 requests left", false),
        ]);
    }
}
