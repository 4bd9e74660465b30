//! `turnkeeper claude-code` on the real sessions in `../shared/real-stores/claude-code` (skipped,
//! with one printed line, without `../shared`; required when `CI=true`), on damaged copies made by
//! mutators, and killed at every write step.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{stderr, stdout};

#[path = "../../testkit/src/shared.rs"]
mod shared;

const CLEAN: &str = "91c096b1-bf02-45e4-8597-45611fbcb8cc";

fn turnkeeper(args: &[&str], env: Option<(&str, String)>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_turnkeeper"));
    c.args(args);
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    c.output().expect("runs the binary")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// The real projects, copied into `<tmp>/projects/<project>/`.
fn real_projects() -> Option<(tempfile::TempDir, PathBuf)> {
    let src = shared::shared_dir("real-stores/claude-code")?;
    let tmp = tempfile::tempdir().expect("tempdir");
    let projects = tmp.path().join("projects");
    for project in ["idaho-vault", "vps-config-root"] {
        let to = projects.join(project);
        std::fs::create_dir_all(&to).expect("mkdir");
        for e in std::fs::read_dir(src.join(project))
            .expect("read_dir")
            .flatten()
        {
            if e.path().is_file() {
                std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
            }
        }
    }
    Some((tmp, projects))
}

fn all_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), std::fs::read(e.path()).expect("read")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn real_sessions_report_only_real_damage_and_reading_writes_nothing() {
    let Some((_tmp, projects)) = real_projects() else {
        return;
    };
    let before = all_bytes(&projects);
    let o = turnkeeper(
        &[
            "claude-code",
            "check",
            "--all",
            "--json",
            "--projects",
            s(&projects),
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let mut errors = Vec::new();
    let mut warnings = 0;
    for sess in v["sessions"].as_array().expect("sessions") {
        for f in sess["findings"].as_array().expect("findings") {
            match f["severity"].as_str() {
                Some("error") => errors.push(format!(
                    "{} {} line {}",
                    sess["session"].as_str().unwrap_or_default(),
                    f["rule"].as_str().unwrap_or_default(),
                    f["line"]
                )),
                _ => warnings += 1,
            }
        }
    }
    // The one real damage: f530d903 stopped mid-tool, two calls without results (its last line).
    // 78c7ea95's 760-style empty signed thinking blocks are legal and not reported; the two
    // minimax-m2.7 sessions (a non-Anthropic backend) get warnings only.
    assert_eq!(
        errors,
        ["f530d903-0897-477d-84ba-09663c0c4118 AN-08 line 32"],
        "{v}"
    );
    assert_eq!(warnings, 4, "{v}");
    assert_eq!(o.status.code(), Some(1));
    let o = turnkeeper(&["claude-code", "list", "--projects", s(&projects)], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 8, "{}", stdout(&o));
    let o = turnkeeper(
        &[
            "claude-code",
            "repair",
            "--all",
            "--dry-run",
            "--projects",
            s(&projects),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(all_bytes(&projects), before, "a read-only command wrote");
}

/// The damaged copies: (name, mutation of the clean session's lines, whether the torn line has
/// no newline).
fn mutations(lines: &[&str]) -> Vec<(&'static str, String)> {
    let join = |v: Vec<&str>| v.join("\n") + "\n";
    let sig_at = lines[5]
        .find("\"signature\":\"")
        .expect("line 6 is signed thinking")
        + 13;
    let sig_end = sig_at + lines[5][sig_at..].find('"').expect("signature ends");
    let hollow = format!("{}{}", &lines[5][..sig_at], &lines[5][sig_end..]);
    let last = lines[lines.len() - 1];
    let mut torn = lines[..lines.len() - 1].join("\n");
    torn.push('\n');
    torn.push_str(&last[..last.len() / 2]);
    let mut dup = lines.to_vec();
    dup.insert(7, lines[6]);
    let mut hollowed = lines.to_vec();
    hollowed[5] = &hollow;
    let hollowed = join(hollowed);
    vec![
        (
            "removed result line",
            join([&lines[..8], &lines[9..]].concat()),
        ),
        ("torn last line", torn),
        ("duplicated line", join(dup)),
        ("hollowed signature", hollowed),
        (
            "removed middle line",
            join([&lines[..6], &lines[7..]].concat()),
        ),
    ]
}

/// `(line uuid, exact block text)` of every thinking block of a session's text.
fn thinking_blocks(text: &str) -> Vec<(String, String)> {
    use turnkeeper::claude_code::{Content, Session};
    let Ok(session) = Session::parse(text.to_owned(), "test") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for l in &session.lines {
        let Some(Content::Blocks(blocks)) = l.message.as_ref().map(|m| &m.content) else {
            continue;
        };
        for b in blocks {
            if b.contains("\"type\":\"thinking\"") {
                out.push((l.uuid.clone().unwrap_or_default(), b.clone()));
            }
        }
    }
    out
}

#[test]
fn damaged_copies_are_found_repaired_and_undone_exactly() {
    let Some(src) = shared::shared_dir("real-stores/claude-code") else {
        return;
    };
    let clean =
        std::fs::read_to_string(src.join(format!("idaho-vault/{CLEAN}.jsonl"))).expect("read");
    let lines: Vec<&str> = clean.lines().collect();
    assert_eq!(thinking_blocks(&clean).len(), 2);
    for (name, damaged) in mutations(&lines) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp.path().join(format!("{CLEAN}.jsonl"));
        std::fs::write(&file, &damaged).expect("write");
        let check = |what: &str| {
            let o = turnkeeper(&["claude-code", "check", "--file", s(&file)], None);
            (o.status.code(), format!("{name} ({what}): {}", stdout(&o)))
        };
        let (code, out) = check("before");
        assert_eq!(code, Some(1), "{out}");
        // Freshly written: looks in use (Claude Code appends as it goes), refused without --force.
        let o = turnkeeper(&["claude-code", "repair", "--file", s(&file)], None);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("looks in use"),
            "{name}: {}",
            stderr(&o)
        );
        let o = turnkeeper(
            &["claude-code", "repair", "--force", "--file", s(&file)],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stdout(&o));
        let (code, out) = check("after");
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("  clean"), "{out}");
        // Every thinking block of the damaged file is in the repaired one byte for byte, or
        // the removal of its line was reported.
        let repaired = std::fs::read_to_string(&file).expect("read");
        let report = stdout(&o);
        let after = thinking_blocks(&repaired);
        for (uuid, block) in thinking_blocks(&damaged) {
            let kept = after.iter().any(|(_, b)| *b == block);
            let removed = report
                .lines()
                .any(|l| l.contains("removed_line") && l.contains(&uuid));
            assert!(
                kept || removed,
                "{name}: thinking block of {uuid} changed silently"
            );
        }
        let o = turnkeeper(&["claude-code", "undo", "--file", s(&file)], None);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            damaged,
            "{name}: undo"
        );
    }
}

#[test]
fn a_repair_killed_at_any_write_step_loses_nothing() {
    let Some(src) = shared::shared_dir("real-stores/claude-code") else {
        return;
    };
    let original =
        std::fs::read_to_string(src.join("idaho-vault/f530d903-0897-477d-84ba-09663c0c4118.jsonl"))
            .expect("read");
    // The repaired bytes, from an uninterrupted run.
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp
        .path()
        .join("f530d903-0897-477d-84ba-09663c0c4118.jsonl");
    std::fs::write(&file, &original).expect("write");
    let o = turnkeeper(
        &["claude-code", "repair", "--force", "--file", s(&file)],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let repaired = std::fs::read_to_string(&file).expect("read");
    assert_ne!(repaired, original);
    let mut crashed = 0;
    for n in 1..=12u64 {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp
            .path()
            .join("f530d903-0897-477d-84ba-09663c0c4118.jsonl");
        std::fs::write(&file, &original).expect("write");
        let o = turnkeeper(
            &["claude-code", "repair", "--force", "--file", s(&file)],
            Some(("TURNKEEPER_CRASH_AFTER", n.to_string())),
        );
        crashed += usize::from(o.status.code().is_none());
        let now = std::fs::read_to_string(&file).expect("read");
        assert!(
            now == original || now == repaired,
            "step {n}: a torn session file"
        );
        // Whatever state it was left in, a second run finishes the job and undo goes back.
        let o = turnkeeper(
            &["claude-code", "repair", "--force", "--file", s(&file)],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "step {n}: {}", stdout(&o));
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            repaired,
            "step {n}"
        );
        let o = turnkeeper(&["claude-code", "undo", "--file", s(&file)], None);
        assert_eq!(o.status.code(), Some(0), "step {n}: {}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            original,
            "step {n}: undo"
        );
    }
    assert!(
        crashed >= 5,
        "only {crashed} runs were killed: the hook is not reached"
    );
}

/// Without `../shared`: the synthetic session of `corpus/claude_code` (stopped mid-tool, parallel
/// results on sibling branches) is read as a resume replays it, repaired, and undone.
#[test]
fn a_session_stopped_mid_tool_gets_claude_codes_interrupt_lines() {
    let src = common::root().join("corpus/claude_code/5f0c2a1e-7b3d-4c8e-9a1f-2b3c4d5e6f70.jsonl");
    let original = std::fs::read_to_string(&src).expect("read");
    let tmp = tempfile::tempdir().expect("tempdir");
    let project = tmp.path().join("projects/-home-dev-app");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("5f0c2a1e-7b3d-4c8e-9a1f-2b3c4d5e6f70.jsonl");
    std::fs::write(&file, &original).expect("write");
    let projects = tmp.path().join("projects");
    let o = turnkeeper(
        &["claude-code", "check", "--json", "--projects", s(&projects)],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let f = &v["findings"];
    assert_eq!(f.as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(f[0]["rule"], "AN-08");
    assert_eq!(f[0]["line"], 10);
    assert_eq!(f[0]["uuid"], "00000000-0000-4000-8000-000000000010");
    // Both parallel results are found (a naive parent walk keeps one and reports the other).
    let o = turnkeeper(
        &[
            "claude-code",
            "repair",
            "--force",
            "--session",
            "5f0c2a1e-7b3d-4c8e-9a1f-2b3c4d5e6f70",
            "--projects",
            s(&projects),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let repaired = std::fs::read_to_string(&file).expect("read");
    assert!(
        repaired.starts_with(&original),
        "the repair only appends here"
    );
    let added: Vec<&str> = repaired[original.len()..].lines().collect();
    assert_eq!(added.len(), 2);
    assert!(
        added[0].contains("\"is_error\":true")
            && added[0].contains("toolu_01Synthetic0000000000004")
    );
    assert!(added[1].contains("[Request interrupted by user for tool use]"));
    let o = turnkeeper(&["claude-code", "check", "--file", s(&file)], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = turnkeeper(&["claude-code", "undo", "--file", s(&file)], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), original);
    // A hostile session id is refused before it becomes a path.
    let o = turnkeeper(
        &[
            "claude-code",
            "check",
            "--session",
            "../../etc/passwd",
            "--projects",
            s(&projects),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unsafe"), "{}", stderr(&o));
}
