//! `turnkeeper openclaw` on the real sessions in `../shared/real-stores/openclaw` (skipped, with
//! one printed line, without `../shared`; required when `CI=true`), on synthetic sessions of the
//! same shape (`corpus/fuzz/openclaw_session/`), on damaged copies made by mutators, while a
//! process holds the session, and killed at every write step.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{root, stderr, stdout};
use serde_json::value::RawValue;

#[path = "../../testkit/src/shared.rs"]
mod shared;

fn turnkeeper(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_turnkeeper"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("runs the binary")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// A finding as the test compares it: rule, severity, line.
type Found = (String, String, u64);

/// `(rule, severity, line)` of every finding of `check --file F --json`, and the exit code.
fn findings(file: &Path) -> (Vec<Found>, i32) {
    let o = turnkeeper(&["openclaw", "check", "--json", "--file", s(file)], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    let list = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_owned(),
                f["severity"].as_str().unwrap_or("").to_owned(),
                f["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    (list, o.status.code().unwrap_or(-1))
}

fn e(rule: &str, line: u64) -> Found {
    (rule.to_owned(), "error".to_owned(), line)
}

/// A copy of `src` in a fresh sessions folder, under its own name, older than the in-use window.
fn copy_old(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let name = src.file_name().expect("a file name").to_owned();
    with_text(
        &std::fs::read_to_string(src).expect("read"),
        &name.to_string_lossy(),
    )
}

/// A sessions folder holding `text` as `name`, its mtime an hour ago (openclaw is not writing it).
fn with_text(text: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join(name);
    std::fs::write(&f, text).expect("write");
    age(&f);
    (tmp, f)
}

fn age(f: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(f)
        .and_then(|h| h.set_modified(old))
        .expect("mtime");
}

const SESSION_5E: &str = "nucbox-backup/5e9096eb-a13b-48ae-990d-ca9d6f231b05.jsonl";

#[test]
fn every_real_session_reports_only_its_real_damage() {
    let Some(dir) = shared::shared_dir("real-stores/openclaw") else {
        return;
    };
    let cases: [(&str, Vec<Found>, i32); 5] = [
        // ollama/gemma4: a user prompt and a plain answer.
        (
            "nucbox-backup/1067aa4e-eb0b-48e8-8a3d-13bbd484623c.jsonl",
            vec![],
            0,
        ),
        // openai-codex/gpt-5.5: three thinking blocks signed with OpenAI reasoning items (their
        // encrypted_content OpenAI's), a compaction, runtime-context lines, calls all answered.
        (SESSION_5E, vec![], 0),
        // openclaw's own backup of it before a rewrite (one more assistant reply): also clean.
        (
            "nucbox-backup/5e9096eb-a13b-48ae-990d-ca9d6f231b05.jsonl.bak-164503-1777882106821",
            vec![],
            0,
        ),
        // An aborted ollama prompt: the error reply stored as `content: []` (line 7).
        (
            "vps-config/00cf3368-0947-47f3-8126-82335a943532.jsonl",
            vec![e("AN-04", 7)],
            1,
        ),
        // The same abort (line 10), after a second `session` header (line 4). The two
        // gateway-injected replies of lines 2-3 hang off no parent of the active branch, so
        // they are not sent and not reported.
        (
            "vps-config/58d6dd28-b055-4727-b9a3-ad1a5109e756.jsonl",
            vec![e("store", 4), e("AN-04", 10)],
            1,
        ),
    ];
    for (file, want, code) in cases {
        // Read from a copy: `check` writes nothing, but the test never opens ../shared for
        // anything but reading.
        let (_tmp, copy) = copy_old(&dir.join(file));
        let got = findings(&copy);
        assert_eq!(got, (want, code), "{file}");
    }
}

/// The thinking blocks of a session text, each as its bytes in the file.
fn thinking_blocks(t: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        message: Option<Msg<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Msg<'a> {
        #[serde(borrow)]
        content: Option<Vec<&'a RawValue>>,
    }
    let mut out = Vec::new();
    for l in t.lines() {
        let Ok(line) = serde_json::from_str::<Line<'_>>(l) else {
            continue;
        };
        for b in line.message.and_then(|m| m.content).unwrap_or_default() {
            let v: serde_json::Value = serde_json::from_str(b.get()).expect("a block");
            if v["type"] == "thinking" {
                out.push(b.get().to_owned());
            }
        }
    }
    out
}

fn lines_of(t: &str) -> Vec<String> {
    t.lines().map(str::to_owned).collect()
}

fn join(l: &[String]) -> String {
    l.iter().map(|x| format!("{x}\n")).collect()
}

fn index_of(t: &str, needle: &str, nth: usize) -> usize {
    t.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(nth)
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("the session has a line with {needle}"))
}

/// `line` with the value of its first `thinkingSignature` replaced by `value` (a JSON string,
/// quotes included).
fn with_signature(line: &str, value: &str) -> String {
    let (open, close) = signature_quotes(line);
    format!("{}{value}{}", &line[..open], &line[close + 1..])
}

/// Where the value of the first `thinkingSignature` of `line` opens and closes: its quotes.
fn signature_quotes(line: &str) -> (usize, usize) {
    let key = "\"thinkingSignature\":\"";
    let open = line.find(key).expect("a signed thinking block") + key.len() - 1;
    let b = line.as_bytes();
    let mut close = open + 1;
    while b[close] != b'"' {
        close += if b[close] == b'\\' { 2 } else { 1 };
    }
    (open, close)
}

/// Cuts the last byte off the signature of the first signed assistant line, as a store that
/// persisted it short leaves it (openclaw PR #97019): padded base64 whose length is no longer a
/// multiple of 4, or a reasoning item's JSON without its closing brace.
fn cut_signature(t: &str) -> String {
    let mut l = lines_of(t);
    let i = index_of(t, "\"thinkingSignature\"", 0);
    let (open, close) = signature_quotes(&l[i]);
    assert!(
        close > open + 1 && l[i].as_bytes()[close - 1] != b'\\',
        "a signature that ends in a plain byte"
    );
    l[i].remove(close - 1);
    join(&l)
}

/// Replaces the signature of the first signed assistant line.
fn resign(t: &str, value: &str) -> String {
    let mut l = lines_of(t);
    let i = index_of(t, "\"thinkingSignature\"", 0);
    l[i] = with_signature(&l[i], value);
    join(&l)
}

/// An Anthropic signature (base64, its length a multiple of 4).
const ANTHROPIC_SIG: &str =
    r#""c3ludGhldGljLWFudGhyb3BpYy1zaWduYXR1cmUtZm9yLXR1cm5rZWVwZXItdGVzdHMtMDAwMQ==""#;
/// An OpenAI reasoning item as openclaw stores it, its `encrypted_content` OpenAI's.
const OPENAI_SIG: &str = r#""{\"id\":\"rs_0f00000000000000000000000000000009\",\"type\":\"reasoning\",\"encrypted_content\":\"gAAAAABp2R6nQ0FBQUFBQnAyUjZuUTBGQlFVRkJRbkF5VWpadVVUQkdRbEZWUmtK\",\"summary\":[]}""#;
/// A reasoning item another provider wrote (plain text where OpenAI's ciphertext goes).
const FOREIGN_ITEM: &str = r#""{\"id\":\"rs_1\",\"type\":\"reasoning\",\"encrypted_content\":\"I should list the files first.\",\"summary\":[]}""#;

/// The provider whose rules apply to a session, and so what its signatures look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Anthropic,
    OpenAi,
}

/// One damage: its name, the mutation, and the rules `check` must then report as errors.
type Mutator = (
    &'static str,
    fn(&str, Family) -> String,
    fn(Family) -> Vec<&'static str>,
);

fn sig_rule(f: Family) -> Vec<&'static str> {
    vec![match f {
        Family::Anthropic => "AN-23",
        Family::OpenAi => "OR-04",
    }]
}

const MUTATORS: &[Mutator] = &[
    (
        "a removed toolResult line",
        |t, _| {
            let mut l = lines_of(t);
            l.remove(index_of(t, "\"role\":\"toolResult\"", 0));
            join(&l)
        },
        // The call is left unanswered, and the next line's parent is gone.
        |_| vec!["AN-08", "store"],
    ),
    (
        "a torn last line",
        |t, _| {
            let cut = t.trim_end().len() - 25;
            t[..cut].to_owned()
        },
        |_| vec!["store"],
    ),
    (
        "a duplicated session header",
        |t, _| {
            let mut l = lines_of(t);
            let header = l[0].clone();
            l.insert(4, header);
            join(&l)
        },
        |_| vec!["store"],
    ),
    ("a hollowed signature", |t, _| resign(t, "\"\""), sig_rule),
    ("a signature cut short", |t, _| cut_signature(t), sig_rule),
    (
        "a signature of the other provider",
        |t, f| {
            resign(
                t,
                match f {
                    Family::Anthropic => OPENAI_SIG,
                    Family::OpenAi => ANTHROPIC_SIG,
                },
            )
        },
        sig_rule,
    ),
    (
        "a foreign reasoning item",
        |t, _| resign(t, FOREIGN_ITEM),
        sig_rule,
    ),
];

/// Every file of a sessions folder (our backups left out) with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("read"),
            )
        })
        .collect();
    out.sort();
    out
}

/// The originals kept in turnkeeper's backups of a sessions folder.
fn our_backups(dir: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join("turnkeeper-backup")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "original.jsonl") {
                out.push(std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

/// Damages `text` (a session named `name`, whose current model is of `family`) with every
/// mutator, and checks: found as errors of the expected rules; a fresh file refused as in use
/// without `--force`; `repair --force` leaves `check` clean; every thinking block left is one of
/// the damaged file's byte for byte, and every one gone was reported as dropped; openclaw's
/// backup and ours hold the damaged bytes; undo restores them exactly.
fn mutate_and_repair(text: &str, name: &str, family: Family) {
    let (_t, clean) = with_text(text, name);
    assert_eq!(
        findings(&clean),
        (vec![], 0),
        "the undamaged session is clean"
    );
    for (what, mutate, rules) in MUTATORS {
        let damaged = mutate(text, family);
        let (tmp, file) = with_text(&damaged, name);
        let dir = tmp.path();
        let (found, code) = findings(&file);
        let mut got: Vec<&str> = found
            .iter()
            .filter(|f| f.1 == "error")
            .map(|f| f.0.as_str())
            .collect();
        got.sort_unstable();
        got.dedup();
        let mut want = rules(family);
        want.sort_unstable();
        assert_eq!((got, code), (want, 1), "{what} ({family:?}): {found:?}");

        // Just written: openclaw may be appending to it, so nothing is written without --force.
        std::fs::write(&file, &damaged).expect("touch");
        let before = files(dir);
        let o = turnkeeper(&["openclaw", "repair", "--file", s(&file)], &[]);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("looks in use"),
            "{what}: {}",
            stderr(&o)
        );
        assert_eq!(files(dir), before, "{what}: nothing written while in use");

        let o = turnkeeper(&["openclaw", "repair", "--force", "--file", s(&file)], &[]);
        let report = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{what}: {report}{}", stderr(&o));
        assert_eq!(
            findings(&file),
            (vec![], 0),
            "{what} ({family:?}): clean after"
        );

        let repaired = std::fs::read_to_string(&file).expect("read");
        let mut pool = thinking_blocks(&damaged);
        for b in thinking_blocks(&repaired) {
            let k = pool
                .iter()
                .position(|x| *x == b)
                .unwrap_or_else(|| panic!("{what}: a thinking block changed: {b}"));
            pool.remove(k);
        }
        let dropped = report
            .lines()
            .filter(|l| l.contains("drop block") || l.contains("drop line"))
            .count();
        assert!(
            pool.len() <= dropped,
            "{what}: {} thinking block(s) gone unreported: {report}",
            pool.len()
        );

        let baks: Vec<_> = files(dir)
            .into_iter()
            .filter(|(n, _)| n.starts_with(&format!("{name}.bak-")))
            .collect();
        assert_eq!(baks.len(), 1, "{what}: openclaw's backup");
        assert_eq!(baks[0].1, damaged.as_bytes(), "{what}: openclaw's backup");
        let bak_name = &baks[0].0;
        let tail = bak_name.rsplit("bak-").next().unwrap_or("");
        let (pid, ms) = tail.split_once('-').expect("<pid>-<ms>");
        assert!(
            pid.parse::<u32>().is_ok() && ms.parse::<u64>().is_ok(),
            "{what}: {bak_name}"
        );
        assert_eq!(
            our_backups(dir),
            vec![damaged.as_bytes().to_vec()],
            "{what}: turnkeeper's backup"
        );

        let o = turnkeeper(&["openclaw", "undo", "--file", s(&file)], &[]);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(&file).expect("read"),
            damaged.as_bytes(),
            "{what}: undo is exact"
        );
        let o = turnkeeper(&["openclaw", "undo", "--file", s(&file)], &[]);
        assert_eq!(o.status.code(), Some(2), "{what}: nothing left to undo");
    }
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(root().join("corpus/fuzz/openclaw_session").join(name))
        .expect("the synthetic fixture")
}

const ANTHROPIC_ID: &str = "0a1b2c3d-0000-4000-8000-000000000001";

#[test]
fn synthetic_anthropic_damage_is_found_repaired_and_undone() {
    mutate_and_repair(
        &fixture("anthropic-tool-turn.jsonl"),
        &format!("{ANTHROPIC_ID}.jsonl"),
        Family::Anthropic,
    );
}

#[test]
fn synthetic_openai_damage_is_found_repaired_and_undone() {
    mutate_and_repair(
        &fixture("openai-reasoning.jsonl"),
        "0a1b2c3d-0000-4000-8000-000000000002.jsonl",
        Family::OpenAi,
    );
}

#[test]
fn real_damage_is_found_repaired_and_undone() {
    let Some(dir) = shared::shared_dir("real-stores/openclaw") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join(SESSION_5E)).expect("read");
    let name = Path::new(SESSION_5E)
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    mutate_and_repair(&text, &name, Family::OpenAi);
}

#[test]
fn a_session_held_open_by_another_process_is_not_written_without_force() {
    let text = (MUTATORS[0].1)(&fixture("anthropic-tool-turn.jsonl"), Family::Anthropic);
    let (tmp, file) = with_text(&text, &format!("{ANTHROPIC_ID}.jsonl"));
    // The file is old, so only the open descriptor can tell: a child holding it as its stdin.
    let mut holder = Command::new("sleep")
        .arg("60")
        .stdin(std::fs::File::open(&file).expect("open"))
        .spawn()
        .expect("spawn sleep");
    let before = files(tmp.path());
    let o = turnkeeper(&["openclaw", "repair", "--file", s(&file)], &[]);
    let held = (o.status.code(), stderr(&o), files(tmp.path()));
    let forced = turnkeeper(&["openclaw", "repair", "--force", "--file", s(&file)], &[]);
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(held.0, Some(2), "{}", stdout(&o));
    assert!(
        held.1.contains("looks in use") && held.1.contains(&holder.id().to_string()),
        "{}",
        held.1
    );
    assert_eq!(held.2, before, "nothing written while held");
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert_eq!(findings(&file), (vec![], 0));
}

#[test]
fn a_repair_killed_at_every_write_step_leaves_old_bytes_or_new() {
    let name = format!("{ANTHROPIC_ID}.jsonl");
    let damaged = (MUTATORS[0].1)(&fixture("anthropic-tool-turn.jsonl"), Family::Anthropic);
    // What an uninterrupted repair writes (the plan is deterministic).
    let (_r, reference) = with_text(&damaged, &name);
    let o = turnkeeper(&["openclaw", "repair", "--file", s(&reference)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let repaired = std::fs::read(&reference).expect("read");
    assert_ne!(repaired, damaged.as_bytes());
    let mut killed = 0;
    for n in 1.. {
        let (tmp, file) = with_text(&damaged, &name);
        let dir = tmp.path();
        let o = turnkeeper(
            &["openclaw", "repair", "--file", s(&file)],
            &[("TURNKEEPER_CRASH_AFTER", n.to_string())],
        );
        let now = std::fs::read(&file).expect("the session file is still there");
        assert!(
            now == damaged.as_bytes() || now == repaired,
            "step {n}: a mix of old and new bytes"
        );
        // openclaw's backup, when it is there, is whole; nothing else looks like a session.
        for (n2, b) in files(dir) {
            if n2 == name {
                continue;
            }
            if n2.starts_with(&format!("{name}.bak-")) {
                assert_eq!(b, damaged.as_bytes(), "step {n}: a partial {n2}");
            } else {
                assert!(
                    n2.starts_with('.') && n2.ends_with(".turnkeeper-tmp"),
                    "step {n}: a stray {n2}"
                );
            }
        }
        if o.status.success() {
            assert_eq!(now, repaired, "step {n}");
            break;
        }
        killed += 1;
        // Undo after a kill: the original back (a backup whose file was never replaced is
        // closed), or nothing to undo when the kill came before the manifest.
        let u = turnkeeper(&["openclaw", "undo", "--file", s(&file)], &[]);
        assert!(
            u.status.code() == Some(0)
                || (u.status.code() == Some(2) && stderr(&u).contains("no backup")),
            "step {n}: {}",
            stderr(&u)
        );
        assert_eq!(
            std::fs::read(&file).expect("read"),
            damaged.as_bytes(),
            "step {n}: undo"
        );
        // Whatever was left, a second run finishes the job, and undo goes back exactly; then
        // nothing is left to undo. (`--force`: an undo just rewrote the file, which looks like
        // openclaw writing it.)
        let o = turnkeeper(&["openclaw", "repair", "--force", "--file", s(&file)], &[]);
        assert_eq!(o.status.code(), Some(0), "step {n}: {}", stderr(&o));
        assert_eq!(std::fs::read(&file).expect("read"), repaired, "step {n}");
        let u = turnkeeper(&["openclaw", "undo", "--file", s(&file)], &[]);
        assert_eq!(u.status.code(), Some(0), "step {n}: {}", stderr(&u));
        assert_eq!(
            std::fs::read(&file).expect("read"),
            damaged.as_bytes(),
            "step {n}: undo after the second run"
        );
        let u = turnkeeper(&["openclaw", "undo", "--file", s(&file)], &[]);
        assert_eq!(u.status.code(), Some(2), "step {n}: {}", stdout(&u));
        let left: Vec<_> = files(dir)
            .into_iter()
            .filter(|(f, _)| f.ends_with(".turnkeeper-tmp"))
            .collect();
        assert!(left.is_empty(), "step {n}: temporary files left: {left:?}");
        assert!(n < 60, "the repair never finished");
    }
    assert!(killed >= 5, "only {killed} write steps");
}
