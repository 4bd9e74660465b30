//! OpenCode sessions through the same rules (see [`turnkeeper_prevent::opencode`]).

use turnkeeper_model::opencode::store::Session;
use turnkeeper_prevent::Options;

pub use turnkeeper_prevent::opencode::{SessionCheck, SessionFinding, check_export, session_model};

use crate::Error;

/// Converts `session` to the request OpenCode would send and checks it; findings carry the
/// OpenCode message and part ids. The model defaults to the one the session recorded.
///
/// # Errors
/// When the converted body cannot be read (a bug in the conversion).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, Error> {
    Ok(turnkeeper_prevent::opencode::check_session(session, opts)?)
}
