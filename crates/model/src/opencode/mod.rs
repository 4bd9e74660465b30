//! OpenCode: typed, lossless views of stored sessions, the three storage readers, and the
//! conversion to model messages and to an Anthropic request body.
//!
//! - [`types`]: user/assistant messages, the 12 part types, errors and the session record
//!   (seed 003; opencode-storage.md §7).
//! - [`store`]: the JSON-file tree ([`JsonStore`]), the SQLite database ([`SqliteStore`]) and
//!   exported JSON ([`load_export`]), all yielding a [`Session`] whose messages and parts keep
//!   their exact stored bytes.
//! - [`convert`]: [`to_model_messages`] and [`to_anthropic_request`].
//!
//! ```no_run
//! use turnkeeper_model::opencode::{AnthropicOptions, JsonStore, to_anthropic_request};
//! # fn main() -> Result<(), turnkeeper_model::opencode::OpencodeError> {
//! let store = JsonStore::open("/home/me/.local/share/opencode")?;
//! for s in store.list_sessions()?.sessions {
//!     let session = store.load_session(&s.id)?;
//!     let request = to_anthropic_request(&session, None, &AnthropicOptions::default());
//!     println!("{}: {} bytes, {} notes", s.id, request.body.len(), request.notes.len());
//! }
//! # Ok(())
//! # }
//! ```

pub mod convert;
pub mod error;
pub mod store;
pub mod types;
pub mod write;

pub use convert::{
    AnthropicOptions, AnthropicRequest, ConversionNote, ModelContent, ModelMessage, ModelOptions,
    ModelPart, ModelRole, NoteKind, PartRef, ThinkingMode, ToolOutput, compact_json,
    to_anthropic_request, to_model_messages, to_model_messages_with,
};
pub use error::{OpencodeError, Origin, Problem, ProblemKind, check_id};
pub use store::{
    JsonStore, Listing, Session, SessionSummary, SqliteStore, StoredMessage, StoredPart,
    load_export,
};
pub use types::{MessageInfo, Part, SessionInfo};
