//! OpenCode: typed, lossless views of stored sessions, exported sessions, and the conversion to
//! model messages and to an Anthropic request body. Pure: reading the stores on disk is
//! `turnkeeper_stores`' business.
//!
//! - [`types`]: user/assistant messages, the 12 part types, errors and the session record
//!   (seed 003; opencode-storage.md §7).
//! - [`session`]: a [`Session`] whose messages and parts keep their exact stored bytes, the
//!   record builders the store readers share, and [`load_export`] for `opencode export` output
//!   (`{info, messages, todos}`) and the bare `[{info, parts}]` array plugins see.
//! - [`convert`]: [`to_model_messages`] and [`to_anthropic_request`].
//! - [`change`]: part-level changes to a session ([`Plan`], [`PartChange`]).
//!
//! ```
//! use turnkeeper_model::opencode::{AnthropicOptions, load_export, to_anthropic_request};
//! # fn main() -> Result<(), turnkeeper_model::opencode::OpencodeError> {
//! let export = r#"{"info":{"id":"ses_1"},"messages":[{"info":{"id":"msg_1","role":"user",
//!   "sessionID":"ses_1","time":{"created":1}},"parts":[{"id":"prt_1","type":"text","text":"hi",
//!   "messageID":"msg_1","sessionID":"ses_1"}]}],"todos":[]}"#;
//! let session = load_export(export, "example")?;
//! let request = to_anthropic_request(&session, None, &AnthropicOptions::default());
//! assert!(request.body.contains(r#""content":[{"type":"text","text":"hi"}]"#));
//! # Ok(())
//! # }
//! ```

pub mod change;
pub mod chat;
pub mod convert;
pub mod error;
pub mod session;
pub mod types;

pub use change::{PartChange, Plan};
pub use convert::{
    AnthropicOptions, AnthropicRequest, ConversionNote, ModelContent, ModelMessage, ModelOptions,
    ModelPart, ModelRole, NoteKind, PartRef, ThinkingMode, ToolOutput, compact_json,
    to_anthropic_request, to_model_messages, to_model_messages_with,
};
pub use error::{OpencodeError, Origin, Problem, ProblemKind, check_id};
pub use session::{Session, StoredMessage, StoredPart, load_export};
pub use types::{MessageInfo, Part, SessionInfo};
