//! Errors and per-file problems of the OpenCode layer.

use std::fmt;
use std::path::PathBuf;

/// A failure that stops an OpenCode operation as a whole.
///
/// Damage confined to one file or row is not an error: it becomes a [`Problem`] and the rest of
/// the session still loads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpencodeError {
    /// An exported session file is not JSON or not an array of `{info, parts}`.
    #[error("invalid export {origin}: {reason}")]
    InvalidExport {
        /// Where the export came from (a path or a caller-given name).
        origin: String,
        /// What is wrong.
        reason: String,
    },
}

/// Where a stored message, part or session record came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A file of the JSON store.
    File(PathBuf),
    /// A row of the SQLite store.
    Row {
        /// The table (`session`, `message` or `part`).
        table: &'static str,
        /// The row's `id` column.
        id: String,
    },
    /// A place inside an exported JSON document, as a JSON path (`[0].parts[3]`).
    Export(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Row { table, id } => write!(f, "{table} row {id}"),
            Origin::Export(path) => write!(f, "export{path}"),
        }
    }
}

/// What is wrong with one file or row that was skipped (or loaded with a caveat).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// The bytes are not valid JSON (or not UTF-8, or empty / NUL-filled).
    InvalidJson {
        /// The parser's message.
        detail: String,
    },
    /// Valid JSON whose shape does not match what OpenCode writes (missing required field, ...).
    WrongShape {
        /// What did not match.
        detail: String,
    },
    /// An id (from a path, a body or a row) that could escape the storage root or is malformed.
    UnsafeId {
        /// The rejected id.
        id: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// An id inside a body disagrees with the id given by its path or row; the path/row wins.
    IdMismatch {
        /// Which field (`id`, `sessionID`, `messageID`).
        field: &'static str,
        /// The id found in the body.
        found: String,
        /// The authoritative id.
        expected: String,
    },
    /// Parts stored for a message that does not exist.
    OrphanParts {
        /// The missing message's id.
        message_id: String,
        /// How many parts were skipped.
        count: usize,
    },
    /// A path resolved (through a symlink) to a place outside the storage root.
    OutsideRoot,
    /// A file or directory could not be read.
    Unreadable {
        /// The I/O error's message.
        detail: String,
    },
}

/// A typed problem found while reading a store: what, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where the problem is.
    pub origin: Origin,
    /// What is wrong.
    pub kind: ProblemKind,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.origin)?;
        match &self.kind {
            ProblemKind::InvalidJson { detail } => write!(f, "invalid JSON: {detail}"),
            ProblemKind::WrongShape { detail } => write!(f, "unexpected shape: {detail}"),
            ProblemKind::UnsafeId { id, reason } => write!(f, "unsafe id {id:?}: {reason}"),
            ProblemKind::IdMismatch {
                field,
                found,
                expected,
            } => write!(f, "{field} {found:?} in the body, {expected:?} by location"),
            ProblemKind::OrphanParts { message_id, count } => {
                write!(f, "{count} part(s) of missing message {message_id}")
            }
            ProblemKind::OutsideRoot => write!(f, "resolves outside the storage root"),
            ProblemKind::Unreadable { detail } => write!(f, "unreadable: {detail}"),
        }
    }
}

/// Checks that an OpenCode id can be used as one path component under a storage root.
///
/// OpenCode ids look like `ses_…`, `msg_…`, `prt_…`, but OpenCode itself only checks the prefix
/// (opencode-storage.md §4.2), so any other shape is accepted here as long as it cannot name
/// another directory: it must be non-empty, not `.`/`..`, contain no `/`, `\`, `:` or NUL, and
/// not start with `~`.
///
/// # Errors
/// Returns the reason the id was rejected.
pub fn check_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() {
        return Err("empty");
    }
    // The ids OpenCode makes (`prt_01J…`, `msg_…`, `ses_…`) are ASCII letters, digits, `_` and
    // `-`, none of which any rule below refuses: decided in one cheap pass over the bytes.
    // Without an early exit, so that the test runs many bytes at a time.
    if id.bytes().fold(true, |ok, b| {
        ok & (b.is_ascii_alphanumeric() | (b == b'_') | (b == b'-'))
    }) {
        return Ok(());
    }
    if id == "." || id == ".." {
        return Err("names a directory");
    }
    // One pass over the characters (every part of a session is checked), then the reasons in
    // their order of precedence.
    let (mut dots, mut separator, mut colon, mut nul, mut control) =
        (false, false, false, false, false);
    let mut after_dot = false;
    for c in id.chars() {
        dots |= after_dot && c == '.';
        after_dot = c == '.';
        separator |= c == '/' || c == '\\';
        colon |= c == ':';
        nul |= c == '\0';
        control |= c.is_control();
    }
    if dots {
        return Err("contains `..`");
    }
    if separator {
        return Err("contains a path separator");
    }
    if colon {
        return Err("contains `:` (drive or stream name)");
    }
    if nul {
        return Err("contains NUL");
    }
    if id.starts_with('~') {
        return Err("starts with `~`");
    }
    if control {
        return Err("contains a control character");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_id;

    /// Each unsafe id is refused for the reason that comes first in the documented order.
    #[test]
    fn unsafe_ids_are_refused_with_the_first_reason() {
        for (id, expect) in [
            ("prt_01abc", Ok(())),
            ("msg_a.b", Ok(())),
            ("", Err("empty")),
            ("..", Err("names a directory")),
            ("a..b", Err("contains `..`")),
            ("../etc/passwd", Err("contains `..`")),
            ("a/b", Err("contains a path separator")),
            ("a\\b", Err("contains a path separator")),
            ("c:x", Err("contains `:` (drive or stream name)")),
            ("a\0b", Err("contains NUL")),
            ("~root", Err("starts with `~`")),
            ("a\u{85}b", Err("contains a control character")),
            ("a\nb", Err("contains a control character")),
        ] {
            assert_eq!(check_id(id), expect, "{id:?}");
        }
    }
}
