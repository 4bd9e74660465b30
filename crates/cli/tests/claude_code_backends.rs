//! `turnkeeper claude-code` on every real session of `../shared/real-stores/claude-code` (skipped,
//! with one printed line, without `../shared`; required when `CI=true`), whatever backend it ran
//! on: each undamaged copy is reported exactly as listed below, then damaged copies (a tool
//! result line removed, the last line torn, a line duplicated, an assistant line's parent line
//! dropped) must be found as errors, repaired, clean afterwards with every thinking block left
//! byte-identical, and undone to the damaged bytes exactly. The two `minimax-m2.7` sessions (a
//! non-Anthropic backend behind `ANTHROPIC_BASE_URL`) are held to the same.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{stderr, stdout};
use turnkeeper::claude_code::{Content, LineRole, Session};

#[path = "../../testkit/src/shared.rs"]
mod shared;

fn turnkeeper(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
        .args(args)
        .output()
        .expect("runs the binary")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// Every real session (relative path) with how an undamaged copy is reported: its backend and
/// each finding as `RULE severity line N`.
const SESSIONS: &[(&str, &str, &[&str])] = &[
    (
        "idaho-vault/91c096b1-bf02-45e4-8597-45611fbcb8cc.jsonl",
        "claude-sonnet-4-6",
        &[],
    ),
    (
        "idaho-vault/f530d903-0897-477d-84ba-09663c0c4118.jsonl",
        "claude-haiku-4-5-20251001",
        // Stopped mid-tool: two calls without results (real damage, repaired below too).
        &["AN-08 error line 32"],
    ),
    (
        "idaho-vault/4e1f519b-0c87-4b0b-9f45-bdf046f7c96f.jsonl",
        // The replayed path after the compact boundary holds no real response; the model is
        // the file's last real one.
        "claude-haiku-4-5-20251001",
        &[],
    ),
    (
        "idaho-vault/9f76d25d-1f33-4fbb-bff8-d3a7c5cfe15d.jsonl",
        "-",
        &[],
    ),
    (
        "idaho-vault/78c7ea95-41c1-474a-a16c-3328015e76b3.jsonl",
        "claude-haiku-4-5-20251001",
        &[],
    ),
    (
        "idaho-vault/675b2557-7e98-4a6c-9795-be2262cc9825/subagents/agent-a3517cb35e166be4d.jsonl",
        "-",
        &[],
    ),
    (
        "vps-config-root/2d434133-b63b-453f-81fb-4e9b6d0cb40a.jsonl",
        "minimax-m2.7",
        &["AN-22 warning line 5", "AN-23 warning line 5"],
    ),
    (
        "vps-config-root/e8624873-e90f-4785-ba1b-5bbe09eaab56.jsonl",
        "minimax-m2.7",
        &["AN-22 warning line 9", "AN-23 warning line 9"],
    ),
];

/// `check --json` of `file`: exit code, the backend's model, the findings as `RULE severity line N`.
fn check(file: &Path) -> (Option<i32>, String, Vec<String>) {
    let o = turnkeeper(&["claude-code", "check", "--json", "--file", s(file)]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("check --json: {e}: {}", stderr(&o)));
    let findings = v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            format!(
                "{} {} line {}",
                f["rule"].as_str().unwrap_or("?"),
                f["severity"].as_str().unwrap_or("?"),
                f["line"]
            )
        })
        .collect();
    let model = v["backend"]["model"].as_str().unwrap_or("-").to_owned();
    (o.status.code(), model, findings)
}

/// The whole lines of `text`, each with its line end.
fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The damaged copies of a session: (name, text).
fn mutations(text: &str) -> Vec<(String, String)> {
    let Ok(session) = Session::parse(text.to_owned(), "real") else {
        return Vec::new();
    };
    let lines = lines_of(text);
    let without = |k: usize| -> String {
        lines
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(_, l)| *l)
            .collect()
    };
    let main = |l: &&turnkeeper::claude_code::Line| !l.sidechain && !l.display_only;
    let mut out = Vec::new();
    // A tool result line removed (the first and the last of the file).
    let results: Vec<usize> = session
        .lines
        .iter()
        .filter(main)
        .filter(|l| {
            l.message.as_ref().is_some_and(|m| {
                m.role == LineRole::User && m.content.types().iter().any(|t| t == "tool_result")
            })
        })
        .map(|l| l.number - 1)
        .collect();
    let mut picks: Vec<usize> = results
        .first()
        .into_iter()
        .chain(results.last())
        .copied()
        .collect();
    picks.dedup();
    for k in picks {
        out.push((format!("tool result line {} removed", k + 1), without(k)));
    }
    // The last line torn in half (no newline after it).
    if let Some(last) = lines.last() {
        let body = last.trim_end_matches(['\r', '\n']);
        let mut cut = body.len() / 2;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        let head: String = lines[..lines.len() - 1].concat();
        out.push((
            "last line torn".to_owned(),
            format!("{head}{}", &body[..cut]),
        ));
    }
    // A message line duplicated right after itself (the first and the last message line).
    let messages: Vec<usize> = session
        .lines
        .iter()
        .filter(main)
        .filter(|l| l.message.is_some() && l.uuid.is_some())
        .map(|l| l.number - 1)
        .collect();
    let mut picks: Vec<usize> = messages
        .first()
        .into_iter()
        .chain(messages.last())
        .copied()
        .collect();
    picks.dedup();
    for k in picks {
        let mut v = lines.clone();
        let line = if lines[k].ends_with('\n') {
            lines[k].to_owned()
        } else {
            format!("{}\n", lines[k])
        };
        let fixed = if v[k].ends_with('\n') {
            v[k].to_owned()
        } else {
            format!("{}\n", v[k])
        };
        v[k] = &fixed;
        let mut t: String = v[..=k].concat();
        t.push_str(&line);
        t.push_str(&v[k + 1..].concat());
        out.push((format!("line {} duplicated", k + 1), t));
    }
    // The parent line of an assistant line dropped (the last assistant line whose parent is a
    // message line after the first one, so the conversation before it can be re-linked).
    let first_message = messages.first().copied().unwrap_or(0);
    let parent_of = session
        .lines
        .iter()
        .filter(main)
        .filter(|l| {
            l.message
                .as_ref()
                .is_some_and(|m| m.role == LineRole::Assistant)
        })
        .filter_map(|l| {
            let p = l.parent.as_deref()?;
            let at = session
                .lines
                .iter()
                .position(|q| q.uuid.as_deref() == Some(p))?;
            let q = &session.lines[at];
            (q.message.is_some() && q.number - 1 > first_message).then_some(q.number - 1)
        })
        .next_back();
    if let Some(k) = parent_of {
        out.push((
            format!("parent line {} of an assistant line dropped", k + 1),
            without(k),
        ));
    }
    out
}

/// Every thinking block of a session's text, exactly as stored, with its line's `uuid`.
fn thinking_blocks(text: &str) -> Vec<(String, String)> {
    let Ok(session) = Session::parse(text.to_owned(), "test") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for l in &session.lines {
        let Some(Content::Blocks(blocks)) = l.message.as_ref().map(|m| &m.content) else {
            continue;
        };
        for b in blocks {
            if b.contains("\"type\":\"thinking\"") || b.contains("\"type\":\"redacted_thinking\"") {
                out.push((l.uuid.clone().unwrap_or_default(), b.clone()));
            }
        }
    }
    out
}

#[test]
fn real_sessions_on_any_backend_are_found_repaired_and_undone() {
    let Some(src) = shared::shared_dir("real-stores/claude-code") else {
        return;
    };
    let (mut made, mut found, mut repaired) = (0, 0, 0);
    let mut minimax = 0;
    for (rel, backend, expected) in SESSIONS {
        let original = std::fs::read_to_string(src.join(rel)).expect("read");
        let name = Path::new(rel).file_name().expect("a file name");
        // Undamaged: reported exactly as listed.
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp.path().join(name);
        std::fs::write(&file, &original).expect("write");
        let (code, model, findings) = check(&file);
        assert_eq!(findings, *expected, "{rel}");
        assert_eq!(model, *backend, "{rel}");
        let errors = findings.iter().any(|f| f.contains(" error "));
        assert_eq!(code, Some(i32::from(errors)), "{rel}");
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            original,
            "{rel}: check wrote"
        );
        let warnings: Vec<&str> = expected
            .iter()
            .filter(|f| f.contains(" warning "))
            .map(|f| f.split(' ').next().unwrap_or_default())
            .collect();
        for (what, damaged) in mutations(&original) {
            made += 1;
            minimax += usize::from(*backend == "minimax-m2.7");
            let case = format!("{rel}: {what}");
            let tmp = tempfile::tempdir().expect("tempdir");
            let file = tmp.path().join(name);
            std::fs::write(&file, &damaged).expect("write");
            let (code, _, before) = check(&file);
            let is_found = code == Some(1) && before.iter().any(|f| f.contains(" error "));
            assert!(is_found, "{case}: not found as an error: {before:?}");
            found += 1;
            let o = turnkeeper(&["claude-code", "repair", "--force", "--file", s(&file)]);
            let report = stdout(&o);
            assert_eq!(o.status.code(), Some(0), "{case}: {report}{}", stderr(&o));
            let (code, _, after) = check(&file);
            assert_eq!(code, Some(0), "{case}: {after:?}\n{report}");
            // Clean: the warnings the undamaged session had, by rule, and no error.
            let left: Vec<&str> = after
                .iter()
                .map(|f| f.split(' ').next().unwrap_or_default())
                .collect();
            assert!(
                left.iter().all(|r| warnings.contains(r)),
                "{case}: {after:?}\n{report}"
            );
            let text = std::fs::read_to_string(&file).expect("read");
            // Every thinking block left is one of the damaged file's, byte for byte; one that
            // is gone went with a line whose removal was reported.
            let had = thinking_blocks(&damaged);
            let kept = thinking_blocks(&text);
            for (uuid, block) in &kept {
                assert!(
                    had.iter().any(|(_, b)| b == block),
                    "{case}: thinking of {uuid} altered"
                );
            }
            for (uuid, block) in &had {
                let still = kept.iter().any(|(_, b)| b == block);
                let reported = report
                    .lines()
                    .any(|l| l.contains("removed_line") && l.contains(uuid.as_str()));
                assert!(
                    still || reported,
                    "{case}: thinking of {uuid} went silently"
                );
            }
            repaired += 1;
            let o = turnkeeper(&["claude-code", "undo", "--file", s(&file)]);
            assert_eq!(o.status.code(), Some(0), "{case}: {}", stderr(&o));
            assert_eq!(
                std::fs::read(&file).expect("read"),
                damaged.as_bytes(),
                "{case}: undo"
            );
        }
    }
    println!("variants made {made} (minimax-m2.7: {minimax}), found {found}, repaired {repaired}");
    assert_eq!((found, repaired), (made, made));
    assert!(
        minimax >= 8,
        "the minimax sessions gave only {minimax} variants"
    );
}
