//! turnkeeper's wire formats and the neutral transcript view.
//!
//! - [`json`]: the single-pass span scanner everything is read with.
//! - [`read()`]: Anthropic, Gemini and OpenCode-export bodies into a [`Transcript`].
//! - [`edit`]: the [`Draft`] that repairs edit, and the splice writer that keeps every unchanged
//!   byte.
//!
//! Reading is lossless by construction: a [`Transcript`] stores spans into the input, never
//! decoded copies, and [`Draft::output`] returns the input itself when nothing changed.
//!
//! ```
//! use turnkeeper_model::{read, Draft, FormatHint};
//! let body = r#"{"messages": [ {"role":"user","content":[{"type":"text","text":"hi"},
//!                 {"type":"text","text":"  "}]} ]}"#;
//! let t = read(body, FormatHint::Auto)?;
//! let mut d = Draft::new(&t);
//! assert_eq!(d.output(), body); // unchanged: the very same bytes
//! d.remove_block(0, 1);
//! assert_eq!(d.output(), r#"{"messages": [ {"role":"user","content":[{"type":"text","text":"hi"}]} ]}"#);
//! # Ok::<(), turnkeeper_model::ModelError>(())
//! ```

pub mod behind;
pub mod claude_code;
pub mod codex;
pub mod edit;
pub mod error;
pub mod json;
pub mod openclaw;
pub mod opencode;
pub mod read;
pub mod sniff;
pub mod view;
pub mod wire;

pub use behind::ReadBehind;
pub use edit::{BlockRef, Draft, DraftBlock, DraftMessage, NewBlock, TopEdit};
pub use error::ModelError;
pub use json::{Span, StrSpan};
pub use read::{
    Earlier, FormatHint, read, read_against, read_block, read_bytes, read_reusing,
    read_reusing_copies, sniff, utf8,
};
pub use sniff::{Sniffed, model_family, sniff_detail};
pub use view::{
    Block, BlockKind, BodyKind, Content, Facts, Format, Kinds, Message, RequestMeta, Role, Summary,
    ThinkingParam, Transcript,
};
