//! turnkeeper keeps LLM conversation transcripts valid for the provider APIs that check them.
//!
//! This crate (`turnkeeper-kit` on crates.io, `turnkeeper` in code) is the facade a Rust agent
//! depends on. It re-exports the pieces:
//! - [`model`]: lossless readers for Anthropic, Gemini and OpenCode transcripts;
//! - [`guard`]: the thinking-block ledger and the turn store;
//! - [`prevent`]: model profiles and the rule pipeline behind [`check`] and [`repair`];
//! - [`recover`]: the error classifier and the recovery planner;
//! - `stores` and `doctor` (the default feature `stores`): the session stores agents keep on
//!   disk, and the doctor that repairs them in place. Without the feature
//!   (`default-features = false`) nothing here links SQLite or touches the file system beyond
//!   the turn store.
//!
//! # Example
//!
//! Check a request before sending it, and repair it when the provider would reject it:
//!
//! ```
//! use turnkeeper::{Options, check_str, repair_str};
//!
//! let body = r#"{"model":"claude-sonnet-4-5","thinking":{"type":"enabled","budget_tokens":2048},
//!   "max_tokens":4096,"messages":[
//!   {"role":"user","content":"What is in /tmp?"},
//!   {"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"ls","input":{"path":"/tmp"}}]},
//!   {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"a.txt"}]}]}"#;
//!
//! let opts = Options::default();
//! let findings = check_str(body, &opts)?;
//! assert_eq!(findings[0].rule, "AN-16"); // manual thinking, open tool loop, no thinking to send back
//!
//! let fixed = repair_str(body, &opts)?;
//! assert!(fixed.report.findings_left.is_empty());
//! // The policy chose to disable thinking for this one request; the caller learns it here:
//! assert!(fixed.body.contains(r#""thinking":{"type":"disabled"}"#));
//! # Ok::<(), turnkeeper::Error>(())
//! ```

#[cfg(feature = "stores")]
pub mod doctor;
pub mod opencode;

pub use turnkeeper_guard as guard;
pub use turnkeeper_model as model;
pub use turnkeeper_prevent as prevent;
pub use turnkeeper_recover as recover;
#[cfg(feature = "stores")]
pub use turnkeeper_stores as stores;

pub use turnkeeper_guard::TurnStore;
pub use turnkeeper_model::{Format, FormatHint, ModelError, Transcript, read};
pub use turnkeeper_prevent::{
    BodyAt, Change, ChangeAction, Finding, Mode, Options, Policy, Profile, ProfileOverrides,
    Repaired, RepairedInto, Report, RequestChange, RuleId, Severity, check, profile_for, repair,
    repair_into,
};

/// Everything that can go wrong through the facade.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transcript could not be read.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The repair failed closed (see [`prevent::PreventError`]).
    #[error(transparent)]
    Prevent(#[from] turnkeeper_prevent::PreventError),
    /// An OpenCode export could not be read.
    #[error(transparent)]
    Opencode(#[from] turnkeeper_model::opencode::error::OpencodeError),
    /// A session store could not be read.
    #[cfg(feature = "stores")]
    #[error(transparent)]
    Store(#[from] turnkeeper_stores::StoreError),
}

/// Reads `body` (format sniffed) and checks it.
///
/// # Errors
/// When the body cannot be read.
pub fn check_str(body: &str, opts: &Options<'_>) -> Result<Vec<Finding>, Error> {
    check_as(body, FormatHint::Auto, opts)
}

/// Reads `body` as `hint` says (sniffed with [`FormatHint::Auto`]) and checks it under the rules
/// of its own family: Anthropic, Gemini and OpenCode bodies through the block pipeline, OpenAI
/// Chat, Responses and Converse bodies through [`prevent::wire`].
///
/// ```
/// use turnkeeper::{FormatHint, Options, check_as};
/// // A valid Kimi K2 thinking tool turn: nothing to find.
/// let body = r#"{"model":"kimi-k2-thinking","messages":[{"role":"user","content":"weather?"},
///   {"role":"assistant","content":"","reasoning_content":"look it up","tool_calls":[{"id":"functions.w:0","type":"function","function":{"name":"w","arguments":"{}"}}]},
///   {"role":"tool","tool_call_id":"functions.w:0","content":"sunny"}]}"#;
/// assert!(check_as(body, FormatHint::Auto, &Options::default())?.is_empty());
/// # Ok::<(), turnkeeper::Error>(())
/// ```
///
/// # Errors
/// When the body cannot be read as that format, or its format cannot be told.
pub fn check_as(body: &str, hint: FormatHint, opts: &Options<'_>) -> Result<Vec<Finding>, Error> {
    let format = format_of(body, hint)?;
    if !format.is_transcript() {
        return Ok(prevent::wire::check_wire(body, format, opts)?);
    }
    let t = read(body, FormatHint::Exactly(format))?;
    Ok(check(&t, opts))
}

/// The format `hint` names, or the one sniffed from `body`.
fn format_of(body: &str, hint: FormatHint) -> Result<Format, ModelError> {
    match hint {
        FormatHint::Exactly(f) => Ok(f),
        FormatHint::Auto => model::sniff(body),
    }
}

/// Reads `body` as `hint` says and repairs it under the rules of its own family (see
/// [`check_as`]). The result borrows `body` when nothing changed.
///
/// # Errors
/// When the body cannot be read, or the repair failed closed.
pub fn repair_as<'a>(
    body: &'a str,
    hint: FormatHint,
    opts: &Options<'_>,
) -> Result<Repaired<'a>, Error> {
    let format = format_of(body, hint)?;
    if !format.is_transcript() {
        return Ok(prevent::wire::repair_wire(body, format, opts)?);
    }
    let t = read(body, FormatHint::Exactly(format))?;
    Ok(repair(&t, opts)?)
}

/// Reads `body` (format sniffed) and repairs it. The result borrows `body` when nothing changed.
///
/// # Errors
/// When the body cannot be read, or the repair failed closed.
pub fn repair_str<'a>(body: &'a str, opts: &Options<'_>) -> Result<Repaired<'a>, Error> {
    repair_as(body, FormatHint::Auto, opts)
}

/// Reads `body` (format sniffed) and repairs it into `out`, a buffer kept from one request to
/// the next ([`repair_into`]): `out` holds the new body, or is left empty when `body` needed no
/// change ([`BodyAt::Input`]).
///
/// ```
/// use turnkeeper::{Options, repair_str_into};
///
/// let mut buf = String::new();
/// for body in [
///     r#"{"messages":[{"role":"user","content":"hi"}]}"#,
///     r#"{"messages":[{"role":"user","content":[{"type":"text","text":" "},{"type":"text","text":"hi"}]}]}"#,
/// ] {
///     let done = repair_str_into(body, &Options::default(), &mut buf)?;
///     let send = done.body(body, &buf);
///     assert!(!send.contains(r#""text":" ""#));
/// }
/// # Ok::<(), turnkeeper::Error>(())
/// ```
///
/// # Errors
/// When the body cannot be read, or the repair failed closed; `out` is then left empty, so
/// nothing stale can be sent by mistake.
pub fn repair_str_into(
    body: &str,
    opts: &Options<'_>,
    out: &mut String,
) -> Result<RepairedInto, Error> {
    let format = format_of(body, FormatHint::Auto).inspect_err(|_| out.clear())?;
    if !format.is_transcript() {
        out.clear();
        let done = prevent::wire::repair_wire(body, format, opts)?;
        return Ok(RepairedInto {
            body: match done.body {
                std::borrow::Cow::Borrowed(_) => BodyAt::Input,
                std::borrow::Cow::Owned(b) => {
                    out.push_str(&b);
                    BodyAt::Buffer
                }
            },
            report: done.report,
        });
    }
    let t = read(body, FormatHint::Exactly(format)).inspect_err(|_| out.clear())?;
    Ok(repair_into(&t, opts, out)?)
}
