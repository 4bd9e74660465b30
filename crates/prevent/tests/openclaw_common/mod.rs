//! What the openclaw regression tests share: a session header and a first prompt, and the plan
//! of a session with its changes as `(action, line id)` and the check of its repaired text.

use turnkeeper_model::openclaw::Session;
use turnkeeper_prevent::openclaw::{Plan, check_session, plan};

/// A session header (pi-coding-agent v3).
pub const HEADER: &str = r#"{"type":"session","version":3,"id":"0a1b2c3d-0000-4000-8000-000000000002","timestamp":"2026-05-02T10:00:00.000Z","cwd":"/w"}"#;
/// The first prompt, a root.
pub const USER: &str = r#"{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"List the files."}]}}"#;

/// Plans the repair of `input`, and checks that the repaired text reads and has no finding
/// left: the plan, its changes as `(action, line id)`, and the repaired session.
pub fn repaired(input: &str) -> (Plan, Vec<(&'static str, String)>, Session) {
    let s = Session::parse(input.to_owned(), "test").expect("the session reads");
    let p = plan(&s, None).expect("a plan");
    let changes = p
        .changes
        .iter()
        .map(|c| (c.action, c.id.clone().unwrap_or_default()))
        .collect();
    let after = Session::parse(p.text.clone(), "repaired").expect("the repaired text reads");
    let left = check_session(&after, None).findings;
    assert!(left.is_empty(), "the repaired session still has {left:#?}");
    (p, changes, after)
}
