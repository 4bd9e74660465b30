//! After the provider rejected a request: what the error means, and what to do next.
//!
//! [`classify`] reads an error text however it was wrapped (an agent's log line, a gateway's
//! envelope, an SSE error event) into a [`Diagnosis`]: one [`ErrorKind`], the provider or
//! gateway it came from ([`ErrorProvider`]), the innermost HTTP status, the place in the
//! request it names, and how long to wait. [`plan`] picks the next [`Action`] on an escalation
//! ladder, given the [`Attempts`] made so far; [`recover`] (or [`recover_with`], with the full
//! [`Options`](crate::Options)) plans and applies it to the request that failed: a body to send
//! again with the headers to add ([`Recovered`]), or a hand-back when only the caller can act
//! (compact the conversation, fix a parameter, stop).
//!
//! ```
//! use turnkeeper::recovery::{Action, Attempts, ErrorKind, classify, plan};
//!
//! let body = r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
//! let d = classify(None, body);
//! assert_eq!(d.kind, ErrorKind::RetryableOverloaded);
//! assert!(matches!(plan(&d, &Attempts::new()), Action::Retry { .. }));
//! ```

/// The provider or gateway an error text points at (Anthropic, Bedrock, Vertex, OpenRouter,
/// LiteLLM, ...). Not [`crate::Provider`], which is the vendor a model id names.
pub use turnkeeper_recover::Provider as ErrorProvider;
pub use turnkeeper_recover::{
    Action, Attempt, Attempts, AttemptsError, ConfigField, DROP_BLOCK_BETA, Diagnosis, ErrorKind,
    Location, MAX_ATTEMPTS, MAX_RETRIES, Outcome, RECOVER_RULE, RecoverError, RecoverReport,
    Recovered, Skipped, TokenFigures, classify, classify_with_hint, plan, recover, recover_with,
};
