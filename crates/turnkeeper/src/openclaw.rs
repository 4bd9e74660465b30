//! openclaw sessions (`~/.openclaw/agents/<agent>/sessions/<uuid>.jsonl`): read one, judge its
//! active branch the way openclaw will send it, and plan its repair by whole lines.
//!
//! [`Session::parse`] reads the file line by line; [`check_session`] judges the active branch as
//! the request openclaw sends to the session's current model (or the one given), every finding
//! at its file line and entry `id` ([`LineFinding`]); [`plan`] is the repair by whole lines (a
//! line dropped and its children re-linked, a block dropped from a message line with the others
//! kept byte for byte). With the `stores` feature [`crate::stores::openclaw`] finds sessions and
//! writes the plan (backup first).
//!
//! ```
//! use turnkeeper::openclaw::{Session, check_session};
//!
//! let jsonl = concat!(
//!     r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-11-01T10:00:00.000Z","cwd":"/tmp"}"#, "\n",
//!     r#"{"type":"message","id":"e1","parentId":null,"timestamp":"2025-11-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#, "\n",
//! );
//! let session = Session::parse(jsonl.to_owned(), "example.jsonl")?;
//! assert!(check_session(&session, None).findings.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use turnkeeper_model::openclaw::{Block, Line, LineProblem, OpenclawError, Session};
pub use turnkeeper_prevent::claude_code::{Judged, LineFinding};
pub use turnkeeper_prevent::openclaw::{
    Family, LineChange, Plan, PlanError, SessionCheck, Target, check_session, plan,
};
