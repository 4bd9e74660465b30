//! OpenCode sessions through the same rules (see [`turnkeeper_prevent::opencode`]).

use turnkeeper_model::opencode::Session;
use turnkeeper_prevent::Options;

pub use turnkeeper_prevent::opencode::{
    ExportError, Family, SWITCH_MODEL, SessionCheck, SessionFinding, Target, check_export,
    session_model, session_target,
};

use crate::Error;

/// Converts `session` to the request OpenCode would send and checks it under the rules of
/// where it goes; findings carry the OpenCode message and part ids. The model defaults to the
/// one the session recorded.
///
/// # Errors
/// When the converted body cannot be read (a bug in the conversion).
pub fn check_session(session: &Session, opts: &Options<'_>) -> Result<SessionCheck, Error> {
    Ok(turnkeeper_prevent::opencode::check_session(session, opts)?)
}
