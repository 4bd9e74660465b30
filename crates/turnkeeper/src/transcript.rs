//! The lossless view of a block transcript (Anthropic Messages, Gemini contents, OpenCode
//! exports) that [`read`](crate::read) returns and [`check`](crate::check),
//! [`repair`](crate::repair) and [`repair_into`](crate::repair_into) take.
//!
//! A [`Transcript`] borrows its input and holds byte spans: messages with a role and ordered
//! blocks, each classified into a [`BlockKind`], and the request's top-level settings
//! ([`RequestMeta`]). A [`Finding`](crate::Finding) names its place by message and block index;
//! this view turns that into a byte range of the input (to show a line and column, or the
//! offending text).
//!
//! ```
//! use turnkeeper::transcript::{BlockKind, Transcript};
//! use turnkeeper::{FormatHint, read};
//!
//! let body = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#;
//! let t: Transcript<'_> = read(body, FormatHint::Auto)?;
//! let b = &t.blocks_of(0)[0];
//! assert_eq!(b.kind, Some(BlockKind::Text));
//! assert_eq!(b.span.get(body), r#"{"type":"text","text":"hi"}"#);
//! # Ok::<(), turnkeeper::ModelError>(())
//! ```

pub use turnkeeper_model::{
    Block, BlockKind, BodyKind, Content, Message, RequestMeta, Role, Span, StrSpan, ThinkingParam,
    Transcript,
};
