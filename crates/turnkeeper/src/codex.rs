//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`): read one,
//! check it the way a resume will send it, and plan its repair as a new rollout.
//!
//! [`Rollout::parse`] reads the file line by line; [`check_rollout`] checks the history a resume
//! replays as the Responses request Codex sends for the session's model (the last
//! `turn_context`, or [`Options::model`](crate::Options::model)), every finding traced to its
//! file line ([`LineFinding`]); [`plan`] is the repair as a new rollout of whole lines, reasoning
//! items kept byte for byte. With the `stores` feature [`crate::stores::codex`] finds rollouts
//! and writes the repaired one as a fork (the original stays).
//!
//! ```
//! use turnkeeper::Options;
//! use turnkeeper::codex::{Rollout, check_rollout};
//!
//! let jsonl = concat!(
//!     r#"{"timestamp":"2025-11-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a000-0000-7000-8000-000000000001","timestamp":"2025-11-01T10:00:00.000Z","cwd":"/tmp","originator":"codex_cli_rs","cli_version":"0.50.0"}}"#, "\n",
//!     r#"{"timestamp":"2025-11-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#, "\n",
//! );
//! let rollout = Rollout::parse(jsonl.to_owned(), "example.jsonl")?;
//! let checked = check_rollout(&rollout, &Options::default())?;
//! assert!(checked.findings.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use turnkeeper_model::codex::{
    CodexError, Line, LineKind, LineProblem, Meta, Request, Rollout,
};
pub use turnkeeper_prevent::claude_code::{Judged, LineFinding};
pub use turnkeeper_prevent::codex::{LineChange, RolloutCheck, RolloutPlan, check_rollout, plan};
/// Where a rollout's next request goes: the vendor its model names, the model, and the router in
/// front when the id says so.
pub use turnkeeper_prevent::wire::Target;
