//! OpenCode (and Kilo) sessions: read an export, and check a session the way OpenCode will send
//! its next request.
//!
//! OpenCode keeps a tool call and its result in one `tool` part, and its reasoning, step
//! markers and text as parts of one stored message; the provider judges the request OpenCode
//! builds from them. So [`check_session`] converts a [`Session`] to that request, checks it
//! with the ordinary rules, and traces every finding back to the OpenCode message and part it
//! came from ([`SessionFinding`]). The rules follow the session's real [`Target`]: Anthropic's
//! for a session bound for Claude; for any other, warnings of what would break if it were
//! switched to Claude ([`SWITCH_MODEL`]).
//!
//! A [`Session`] comes from [`load_export`] (`opencode export` output, or the bare
//! `[{info, parts}]` array plugins see) or, with the `stores` feature, from a store on disk
//! ([`crate::stores::opencode`]). [`plan`] proposes the repairs of a session as part changes,
//! each under its rule id ([`DoctorPlan`]), and [`simulate`] shows the session they would leave;
//! both are pure, and [`crate::doctor`] (feature `stores`) writes a plan to the store.
//!
//! ```
//! use turnkeeper::Options;
//! use turnkeeper::opencode::{Family, check_session, load_export, session_target};
//!
//! let export = r#"{"info":{"id":"ses_1"},"messages":[{"info":{"id":"msg_1","role":"user",
//!   "sessionID":"ses_1","time":{"created":1},"model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}},
//!   "parts":[{"id":"prt_1","type":"text","text":"hi","messageID":"msg_1","sessionID":"ses_1"}]}],"todos":[]}"#;
//! let session = load_export(export, "example")?;
//! assert_eq!(session_target(&session, None).family, Family::Anthropic);
//! let checked = check_session(&session, &Options::default())?;
//! assert!(checked.findings.is_empty());
//! # Ok::<(), turnkeeper::Error>(())
//! ```

use turnkeeper_prevent::Options;

pub use turnkeeper_model::opencode::{
    AnthropicRequest, ConversionNote, MessageInfo, NoteKind, OpencodeError, Origin, Part,
    PartChange, PartRef, Plan, Problem, ProblemKind, Session, SessionInfo, StoredMessage,
    StoredPart, load_export,
};
pub use turnkeeper_prevent::opencode::doctor::{
    DoctorPlan, PLACEHOLDER_TEXT, PlanOptions, Repair, RepairKind, has_errors, plan, plan_checked,
    simulate,
};
pub use turnkeeper_prevent::opencode::{
    ExportError, Family, NEXT_PROMPT, SWITCH_MODEL, SessionCheck, SessionFinding, Target,
    check_export, check_export_text, next_turn_body, session_model, session_target,
};

use crate::Error;

/// Converts `session` to the request OpenCode would send and checks it under the rules of
/// where it goes; findings carry the OpenCode message and part ids. The model defaults to the
/// one the session recorded.
///
/// # Errors
/// When the converted body cannot be read (a bug in the conversion).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, Error> {
    Ok(turnkeeper_prevent::opencode::check_session(session, opts)?)
}
