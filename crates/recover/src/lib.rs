//! turnkeeper recover: classify a provider's error and plan the recovery.
//!
//! Coding agents replay long transcripts; when the API rejects one, the error arrives wrapped in
//! whatever layers the agent, gateway and terminal added. This crate:
//!
//! - [`classify`] turns the error text (however wrapped) into a [`Diagnosis`]: one [`ErrorKind`],
//!   the provider, the innermost HTTP status, the location (`messages.N.content.M`), the ids and
//!   token figures it names, and how long to wait;
//! - [`plan`] picks the next [`Action`] on an escalation ladder, given the [`Attempts`] made so far;
//! - [`recover`] plans and applies the action to the request that failed, with prevent's rules
//!   and the turn store, and records the attempt: a body to retry with (and headers to add), or
//!   a hand-back when only the caller can act (compact, fix a parameter, stop).
//!
//! ```
//! use turnkeeper_recover::{classify, plan, Action, Attempts, ErrorKind};
//! let body = r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
//! let d = classify(None, body);
//! assert_eq!(d.kind, ErrorKind::RetryableOverloaded);
//! assert!(matches!(plan(&d, &Attempts::new()), Action::Retry { .. }));
//! ```

mod classify;
mod diagnosis;
mod duration_ms;
mod normalize;
mod phrases;
mod plan;
mod prefilter;
mod recover;
mod structure;
mod wire_edit;

pub use classify::{classify, classify_with_hint};
pub use diagnosis::{ConfigField, Diagnosis, ErrorKind, Location, Provider, TokenFigures};
pub use plan::{
    Action, Attempt, Attempts, AttemptsError, DROP_BLOCK_BETA, MAX_ATTEMPTS, MAX_RETRIES, plan,
};
pub use recover::{
    Outcome, RECOVER_RULE, RecoverError, RecoverReport, Recovered, Skipped, recover, recover_with,
};
