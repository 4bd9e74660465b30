//! The model crate's error type.

use std::borrow::Cow;

/// Why a transcript could not be read. Every variant names the place.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The input is not UTF-8.
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// The input is not valid JSON.
    #[error(
        "{}invalid JSON at line {line}, column {column} (byte {offset}): {message}",
        path_prefix(path)
    )]
    Syntax {
        /// The JSON path of the innermost value being read (`messages[3].content[2]`).
        path: String,
        /// Byte offset.
        offset: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column (in bytes).
        column: usize,
        /// What was wrong.
        message: Cow<'static, str>,
    },
    /// Valid JSON of the wrong shape.
    #[error("{}{message} (byte {offset})", path_prefix(path))]
    Shape {
        /// The JSON path (`messages[3]`).
        path: String,
        /// Byte offset.
        offset: usize,
        /// What was expected.
        message: Cow<'static, str>,
    },
    /// The format could not be told from the input; pass one explicitly.
    #[error(
        "cannot tell the format: expected an object with `messages` (Anthropic, OpenAI Chat or \
         Bedrock Converse), `input` (OpenAI Responses) or `contents` (Gemini), or an array of \
         {{info, parts}} (OpenCode export)"
    )]
    UnknownFormat,
    /// The body shows signs of more than one format, or none and a model of no known vendor;
    /// reading it as either could make it worse. Pass the format explicitly.
    #[error(
        "cannot tell the format: {} ({why}); pass one explicitly",
        names(candidates)
    )]
    Ambiguous {
        /// The formats it could be.
        candidates: Vec<crate::view::Format>,
        /// The signs seen, in words.
        why: String,
    },
    /// The format is not read into a [`Transcript`](crate::Transcript): read it with its
    /// [`wire`](crate::wire) reader.
    #[error("a {format} body is not read as a block transcript")]
    NotTranscript {
        /// The format.
        format: crate::view::Format,
    },
    /// Reading a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

fn names(candidates: &[crate::view::Format]) -> String {
    candidates
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(" or ")
}

fn path_prefix(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    }
}
