//! turnkeeper recover: classify a provider's error and plan the recovery.
//!
//! Coding agents replay long transcripts; when the API rejects one, the error arrives wrapped in
//! whatever layers the agent, gateway and terminal added. This crate:
//!
//! - [`classify`] turns the error text (however wrapped) into a [`Diagnosis`]: one [`ErrorKind`],
//!   the provider, the innermost HTTP status, the location (`messages.N.content.M`), the ids and
//!   token figures it names, and how long to wait;
//! - [`plan`] picks the next [`Action`] on an escalation ladder, given the [`Attempts`] made so far.
//!
//! Applying an action to a request body is the job of `recover` (built on the prevent crate).
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
mod plan;

pub use classify::{classify, classify_with_hint};
pub use diagnosis::{ConfigField, Diagnosis, ErrorKind, Location, Provider, TokenFigures};
pub use plan::{
    Action, Attempt, Attempts, AttemptsError, DROP_BLOCK_BETA, MAX_ATTEMPTS, MAX_RETRIES, plan,
};
