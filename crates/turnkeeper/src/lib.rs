//! turnkeeper keeps LLM conversation transcripts valid for the provider APIs that check them.
//!
//! This crate (`turnkeeper-kit` on crates.io, `turnkeeper` in code) is the library an agent, a
//! gateway or a binding depends on. Everything a user needs is named here or in one of the
//! modules below; the crates behind it (`turnkeeper-model`, `-guard`, `-prevent`, `-recover`,
//! `-stores`) are its implementation and are not re-exported whole.
//!
//! # Where to start
//!
//! - **Before sending a request:** [`check_str`] lists what the provider would reject
//!   ([`Finding`]s, each under a [`RuleId`]); [`repair_str`] returns a body it accepts and a
//!   [`Report`] of every [`Change`]. Both sniff the format (Anthropic Messages, Gemini, OpenAI
//!   Chat / Responses, Bedrock Converse, OpenCode exports); [`check_as`] / [`repair_as`] take a
//!   [`FormatHint`], and [`repair_str_into`] writes into a buffer kept from one request to the
//!   next. Thinking blocks leave byte-identical or not at all, and the body comes back borrowed
//!   when nothing needed a change.
//! - **What is this body?** [`inspect`] tells its [`Format`], why, and a summary of its
//!   messages.
//! - **After a 400:** [`classify`] reads the error text into a [`recovery::Diagnosis`];
//!   [`recover`] plans and applies the edit that makes the request acceptable
//!   ([`recovery`] holds the planner and its types).
//! - **Options:** [`Options`] names the target model, the thinking [`Mode`], the betas, the
//!   repair [`Policy`] and, optionally, a [`TurnStore`] of recorded turns ([`turns`]) from which
//!   damaged thinking is put back instead of dropped.
//! - **Stored agent sessions:** [`opencode`], [`claude_code`], [`codex`] and [`openclaw`] check a
//!   session the way its next request will be sent and plan its repair (pure, no I/O); with the
//!   default feature `stores`, [`stores`] finds, reads and rewrites them on disk (backup first,
//!   every write atomic, undo) and [`doctor`] applies an OpenCode plan. Without the feature
//!   (`default-features = false`) nothing here links SQLite or touches the file system beyond
//!   the turn store and [`write_atomically`].
//! - **Lower level:** [`read`] gives the lossless [`Transcript`] view ([`transcript`]) that
//!   [`check`], [`repair`] and [`repair_into`] take, for callers that read once and judge
//!   several times, or render findings at their place. A caller that writes a large repaired
//!   body to a file can [`stage`] it from [`repair_into_overlapping`] while the repair still
//!   judges it, and commit it once it is final.
//!
//! Errors are [`Error`] (reading, repairing, session exports and stores), with
//! [`recovery::RecoverError`], [`turns::TurnStoreError`] and, behind `stores`,
//! [`stores::StoreError`] / [`stores::WriteError`] where those are the only things that can fail.
//! Each of them says its [`ErrorClass`] ([`HasErrorClass`]: read, format, repair, store), for a
//! caller that sorts failures without matching every variant; the Node and Python packages name
//! their errors by it.
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
//!
//! And after the provider said no:
//!
//! ```
//! use turnkeeper::recovery::{Action, Attempts, ErrorKind, plan};
//!
//! let error = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;
//! let d = turnkeeper::classify(Some(429), error);
//! assert_eq!(d.kind, ErrorKind::RetryableRateLimit);
//! assert!(matches!(plan(&d, &Attempts::new()), Action::Retry { .. }));
//! ```

pub mod claude_code;
pub mod codex;
#[cfg(feature = "stores")]
pub mod doctor;
mod error_class;
mod inspect;
pub mod openclaw;
pub mod opencode;
pub mod recovery;
#[cfg(feature = "stores")]
pub mod stores;
pub mod transcript;
pub mod turns;

pub use error_class::{ErrorClass, HasErrorClass};
pub use inspect::{Inspection, MessageSummary, WireTarget, inspect};
pub use recovery::{classify, recover};
pub use turnkeeper_guard::TurnStore;
pub use turnkeeper_guard::fsio::{Staged, stage, write_atomically};
pub use turnkeeper_model::read::{read, utf8};
pub use turnkeeper_model::{BodyKind, Format, FormatHint, ModelError, Sniffed, Transcript};
/// Why a repair could not produce a body: the input could not be read, or (a turnkeeper bug) a
/// rule touched a thinking block unreported and the repair failed closed.
pub use turnkeeper_prevent::PreventError as RepairError;
pub use turnkeeper_prevent::wire::{Provider, provider_of};
pub use turnkeeper_prevent::{
    BINDING_BETA, BodyAt, Change, ChangeAction, Early, Finding, MissingThinking, Mode, Options,
    Policy, PrefixEdit, Profile, ProfileOverrides, ReadBehind, Repaired, RepairedInto, Report,
    RequestChange, RuleId, Severity, ToolIdForm, UnknownRuleId, check, profile_for, repair,
    repair_into, repair_into_overlapping,
};

/// Tells the format of `body` from its own signs, and why (see [`Sniffed`]).
///
/// ```
/// use turnkeeper::{Format, sniff};
/// let s = sniff(r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#)?;
/// assert_eq!(s.format, Format::Gemini);
/// # Ok::<(), turnkeeper::ModelError>(())
/// ```
///
/// # Errors
/// When the body is not JSON, carries no sign of any format, or the signs of two
/// ([`ModelError::Ambiguous`]).
pub fn sniff(body: &str) -> Result<Sniffed, ModelError> {
    turnkeeper_model::sniff_detail(body)
}

/// Everything that can go wrong through the facade.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transcript could not be read.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The repair failed closed, or its input could not be read (see [`RepairError`]).
    #[error(transparent)]
    Repair(#[from] RepairError),
    /// An OpenCode export could not be read.
    #[error(transparent)]
    Opencode(#[from] opencode::OpencodeError),
    /// [`inspect`] recognised the body's format but does not summarise that family yet (the
    /// OpenAI Responses and Bedrock Converse bodies).
    #[error(
        "a {format} body ({why}); inspect reads Chat bodies of the OpenAI-style families so far"
    )]
    NotInspected {
        /// The format recognised.
        format: Format,
        /// Why that format.
        why: String,
    },
    /// A session store could not be read ([`stores::StoreError`]).
    #[cfg(feature = "stores")]
    #[error(transparent)]
    Store(#[from] stores::StoreError),
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
/// Chat, Responses and Converse bodies through the rules of those wire families.
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
        return Ok(turnkeeper_prevent::wire::check_wire(body, format, opts)?);
    }
    // An export is checked as the session it holds, loaded once; one that does not load is
    // read as a transcript, which says what is wrong with it (as it always has).
    if format == Format::Opencode
        && let Ok(findings) = turnkeeper_prevent::opencode::check_export_text(body, opts)
    {
        return Ok(findings);
    }
    let t = read(body, FormatHint::Exactly(format))?;
    Ok(check(&t, opts))
}

/// The format `hint` names, or the one sniffed from `body`.
fn format_of(body: &str, hint: FormatHint) -> Result<Format, ModelError> {
    match hint {
        FormatHint::Exactly(f) => Ok(f),
        FormatHint::Auto => turnkeeper_model::sniff(body),
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
        return Ok(turnkeeper_prevent::wire::repair_wire(body, format, opts)?);
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
        let done = turnkeeper_prevent::wire::repair_wire(body, format, opts)?;
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
