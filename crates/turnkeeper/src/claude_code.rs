//! Claude Code sessions (`~/.claude/projects/<encoded-cwd>/<session>.jsonl`): read a session
//! file, check it the way a resume will send it, and plan its repair by whole lines.
//!
//! [`Session::parse`] reads the file line by line (a torn last line is recorded, not fatal);
//! [`check_session`] rebuilds the conversation a resume replays, checks it as the Anthropic
//! request Claude Code sends, and traces every finding to its file line and `uuid`
//! ([`LineFinding`]), the file's own damage first (under `RuleId::Store`). On a non-Anthropic
//! backend the rules that hold for any backend ([`ANY_BACKEND`]) are judged as for Claude and the
//! others are warnings ([`Judged`]). [`plan`] is the repair as a new file text; with the `stores`
//! feature [`crate::stores::claude_code`] finds sessions and writes the plan (backup first).
//!
//! ```
//! use turnkeeper::Options;
//! use turnkeeper::claude_code::{Session, check_session};
//!
//! let jsonl = concat!(
//!     r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}"#, "\n",
//!     r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hello"}]}}"#, "\n",
//! );
//! let session = Session::parse(jsonl.to_owned(), "example.jsonl")?;
//! let checked = check_session(&session, &Options::default())?;
//! assert!(checked.findings.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use turnkeeper_model::claude_code::{
    ClaudeCodeError, Content, Conversation, Line, LineMessage, LineProblem, LineRole, Request,
    Session,
};
pub use turnkeeper_prevent::claude_code::{
    ANY_BACKEND, INTERRUPTED, Judged, LineChange, LineFinding, Plan, REJECTED_TOOL, SessionCheck,
    any_backend, check_session, plan,
};
/// Where a session's next request goes (the same type as [`crate::opencode::Target`]).
pub use turnkeeper_prevent::opencode::{Family, Target};
