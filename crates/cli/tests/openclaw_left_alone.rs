//! Regression: `turnkeeper openclaw repair` on a session whose only error no edit of whole lines
//! repairs (a tool result behind a new prompt, AN-11) said "nothing to repair" and exited 0, as
//! if the session were clean. It now says how many errors are left and exits 3, as it does when
//! a repair leaves some, and the file is not touched.

mod common;

use std::process::Command;

use common::stdout;

const SESSION: &str = concat!(
    r#"{"type":"session","version":3,"id":"0a1b2c3d-0000-4000-8000-000000000003","timestamp":"2026-05-02T10:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"List the files."}]}}"#,
    "\n",
    r#"{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"exec","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse"}}"#,
    "\n",
    r#"{"type":"message","id":"p1","parentId":"a1","message":{"role":"user","content":[{"type":"text","text":"and?"}]}}"#,
    "\n",
    r#"{"type":"message","id":"r1","parentId":"p1","message":{"role":"toolResult","toolCallId":"call_1","toolName":"exec","content":[{"type":"text","text":"ok"}],"isError":false}}"#,
    "\n",
);

#[test]
fn an_error_no_line_edit_repairs_is_left_and_said_so() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp
        .path()
        .join("0a1b2c3d-0000-4000-8000-000000000003.jsonl");
    std::fs::write(&f, SESSION).expect("write");
    let o = Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
        .args(["openclaw", "repair", "--force", "--file"])
        .arg(&f)
        .output()
        .expect("runs");
    assert_eq!(
        stdout(&o),
        "session 0a1b2c3d-0000-4000-8000-000000000003: nothing to repair\n  1 error(s) left that cannot be repaired safely\n"
    );
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(std::fs::read_to_string(&f).expect("read"), SESSION);
}
