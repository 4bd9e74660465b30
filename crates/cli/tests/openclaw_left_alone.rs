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

/// `openclaw repair --force --file F` of `text`: its output and exit code, and the file after.
fn repair(text: &str) -> (String, Option<i32>, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp
        .path()
        .join("0a1b2c3d-0000-4000-8000-000000000003.jsonl");
    std::fs::write(&f, text).expect("write");
    let o = Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
        .args(["openclaw", "repair", "--force", "--file"])
        .arg(&f)
        .output()
        .expect("runs");
    (
        stdout(&o),
        o.status.code(),
        std::fs::read_to_string(&f).expect("read"),
    )
}

#[test]
fn a_clean_session_has_nothing_to_repair_and_nothing_left() {
    // The session without its last line (the result behind the prompt): a call answered by
    // nothing yet is AN-08 and is repaired, so the clean one ends at the call's result.
    let clean = SESSION.replace(r#""parentId":"p1""#, r#""parentId":"a1""#);
    let lines: Vec<&str> = clean.lines().collect();
    let clean = format!("{}\n{}\n{}\n{}\n", lines[0], lines[1], lines[2], lines[4]);
    let (out, code, after) = repair(&clean);
    assert_eq!(
        out,
        "session 0a1b2c3d-0000-4000-8000-000000000003: nothing to repair\n"
    );
    assert_eq!(code, Some(0));
    assert_eq!(after, clean);
}

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
