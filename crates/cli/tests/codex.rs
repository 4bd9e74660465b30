//! `turnkeeper codex` on the real rollouts in `../shared/real-stores/codex` (skipped, with one
//! printed line, without `../shared`; required when `CI=true`), on a synthetic rollout of the
//! same shape, on damaged copies made by mutators, and killed at every write step.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{stderr, stdout};

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

const REAL: [&str; 3] = [
    "rollout-2026-04-10T09-55-11-019d781a-be34-7041-abb1-577f9360b907.jsonl",
    "rollout-2026-04-19T21-56-39-019da908-7d99-77e2-8d7b-8797ad28f198.jsonl",
    "rollout-2026-04-19T22-10-31-019da915-31a8-74d0-ad7f-640110fae046.jsonl",
];

/// `(rule, severity, line)` of every finding of `check --file F --json`, and the exit code.
fn findings(file: &Path, model: Option<&str>) -> (Vec<(String, String, u64)>, i32) {
    let mut args = vec!["codex", "check", "--json", "--file", s(file)];
    if let Some(m) = model {
        args.extend(["--model", m]);
    }
    let o = turnkeeper(&args, &[]);
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

/// A finding as the test compares it: rule, severity, line.
type Found = (String, String, u64);

/// A real rollout's case: its file, the model it is checked for, its findings, the exit code.
type Case<'a> = (&'a str, Option<&'a str>, Vec<Found>, i32);

#[test]
fn every_real_rollout_reports_only_its_real_damage() {
    let Some(dir) = shared::shared_dir("real-stores/codex/idaho-vault") else {
        return;
    };
    let e = |rule: &str, line| (rule.to_owned(), "error".to_owned(), line);
    // (file, model, findings, exit)
    let cases: [Case<'_>; 5] = [
        // gpt-5.4 on OpenAI: 11 encrypted reasoning items, 22 calls paired: clean.
        (REAL[0], None, vec![], 0),
        // qwen3.5 behind Ollama refused Codex's `developer` role (recorded as an event_msg
        // error): the developer message is the one real finding, and no edit repairs it.
        (REAL[1], None, vec![e("store", 3)], 1),
        // kimi-k2.5 behind Ollama, which wrote its own plain-text reasoning: clean there...
        (REAL[2], None, vec![], 0),
        // ...and five foreign reasoning items if the session is resumed on an OpenAI model.
        (
            REAL[2],
            Some("gpt-5.4"),
            vec![
                e("OR-04", 15),
                e("OR-04", 25),
                e("OR-04", 35),
                e("OR-04", 42),
                e("OR-04", 52),
            ],
            1,
        ),
        // The OpenAI session checked for the Kimi model: only pairing is judged there.
        (REAL[0], Some("kimi-k2.5:cloud"), vec![], 0),
    ];
    for (file, model, want, code) in cases {
        let got = findings(&dir.join(file), model);
        assert_eq!(got, (want, code), "{file} {model:?}");
    }
}

/// A small synthetic rollout of the real ones' shape: meta, context, developer and user
/// messages, an OpenAI reasoning item, a call and its output, the answer.
fn synthetic() -> String {
    let lines = [
        r#"{"timestamp":"2026-04-10T15:55:19.835Z","type":"session_meta","payload":{"id":"019d0000-0000-7000-8000-000000000001","timestamp":"2026-04-10T15:55:11.807Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.121.0","model_provider":"openai"}}"#,
        r#"{"timestamp":"2026-04-10T15:55:19.836Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.4","effort":"medium"}}"#,
        r#"{"timestamp":"2026-04-10T15:55:19.837Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}"#,
        r#"{"timestamp":"2026-04-10T15:55:19.838Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}}"#,
        r#"{"timestamp":"2026-04-10T15:55:20.000Z","type":"event_msg","payload":{"type":"task_started"}}"#,
        r#"{"timestamp":"2026-04-10T15:55:21.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Listing**"}],"content":null,"encrypted_content":"gAAAAABp2R6nQ0FBQUFBQnAyUjZuUTBGQlFVRkJRbkF5VWpadVVUQkdRbEZWUmtK"}}"#,
        r#"{"timestamp":"2026-04-10T15:55:21.100Z","type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"ls\"}","call_id":"call_A1"}}"#,
        r#"{"timestamp":"2026-04-10T15:55:21.200Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_A1","output":"a\nb\n"}}"#,
        r#"{"timestamp":"2026-04-10T15:55:22.000Z","type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAAAABp2R6oUkZKUVVGQlFVSkhVMnhUVkRGRFVrRkJRVUZDY0RKU05tNVJNRVpD"}}"#,
        r#"{"timestamp":"2026-04-10T15:55:22.100Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a and b"}]}}"#,
        r#"{"timestamp":"2026-04-10T15:55:22.200Z","type":"event_msg","payload":{"type":"task_complete"}}"#,
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A reasoning item as the Ollama shim writes it (plain text in `encrypted_content`).
const FOREIGN: &str = r#"{"timestamp":"2026-04-10T15:55:20.500Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"I should list them."}],"content":null,"encrypted_content":"I should list them."}}"#;

/// One damage: its name, the mutation, and the rules `check` must then report as errors.
type Mutator = (&'static str, fn(&str) -> String, &'static [&'static str]);

fn lines_of(t: &str) -> Vec<&str> {
    t.lines().collect()
}

fn join(l: &[&str]) -> String {
    l.iter().map(|x| format!("{x}\n")).collect()
}

fn index_of(t: &str, needle: &str, nth: usize) -> usize {
    lines_of(t)
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(nth)
        .map(|(i, _)| i)
        .expect("the rollout has such a line")
}

const MUTATORS: &[Mutator] = &[
    (
        "a removed result",
        |t| {
            let mut l = lines_of(t);
            l.remove(index_of(t, "\"function_call_output\"", 0));
            join(&l)
        },
        &["OR-05"],
    ),
    (
        "a removed call",
        |t| {
            let mut l = lines_of(t);
            l.remove(index_of(t, "\"type\":\"function_call\"", 0));
            join(&l)
        },
        &["OR-05"],
    ),
    (
        "a torn last line",
        |t| {
            let cut = t.trim_end().len() - 25;
            t[..cut].to_owned()
        },
        &["store"],
    ),
    (
        "two records interleaved",
        |t| {
            let mut l: Vec<String> = lines_of(t).iter().map(|x| (*x).to_owned()).collect();
            let i = index_of(t, "\"function_call_output\"", 0);
            let half = l[i].len() / 2;
            let glued = format!("{}{}", &l[i][..half], l[i - 1]);
            l[i] = glued;
            l.iter().map(|x| format!("{x}\n")).collect()
        },
        &["store", "OR-05"],
    ),
    (
        "a foreign reasoning item",
        |t| {
            let mut l = lines_of(t);
            let i = index_of(t, "\"type\":\"reasoning\"", 0);
            l.insert(i, FOREIGN);
            join(&l)
        },
        &["OR-04"],
    ),
    (
        "a NUL in a call's name",
        |t| {
            let i = index_of(t, "\"type\":\"function_call\"", 0);
            let mut l: Vec<String> = lines_of(t).iter().map(|x| (*x).to_owned()).collect();
            l[i] = l[i].replacen("\"name\":\"", "\"name\":\"\\u0000", 1);
            l.iter().map(|x| format!("{x}\n")).collect()
        },
        &["store"],
    ),
];

/// The reasoning lines of a text.
fn reasoning_lines(t: &str) -> Vec<String> {
    t.lines()
        .filter(|l| l.contains("\"type\":\"reasoning\""))
        .map(str::to_owned)
        .collect()
}

/// Every file under `dir` with its bytes, the backups left out.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.ends_with("turnkeeper-backup") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// A Codex home holding `text` as a rollout of session `id`, older than the in-use window.
fn home_with(text: &str, id: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let day = tmp.path().join("sessions/2026/04/10");
    std::fs::create_dir_all(&day).expect("mkdir");
    let f = day.join(format!("rollout-2026-04-10T09-55-11-{id}.jsonl"));
    std::fs::write(&f, text).expect("write");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&f)
        .and_then(|h| h.set_modified(old))
        .expect("mtime");
    (tmp, f)
}

/// Damages `text` with every mutator, and checks: found as errors of the expected rules,
/// repaired into a new rollout that `check --file` finds clean, every reasoning line kept is
/// one of the original's byte for byte, the original untouched, and undo exact.
fn mutate_and_repair(text: &str, id: &str) {
    let clean = findings(&home_with(text, id).1, None);
    assert_eq!(clean, (vec![], 0), "the undamaged rollout is clean");
    for (name, mutate, rules) in MUTATORS {
        let damaged = mutate(text);
        let (tmp, file) = home_with(&damaged, id);
        let home = tmp.path().to_owned();
        let (found, code) = findings(&file, None);
        let mut got: Vec<&str> = found
            .iter()
            .filter(|f| f.1 == "error")
            .map(|f| f.0.as_str())
            .collect();
        got.dedup();
        assert_eq!((got.as_slice(), code), (*rules, 1), "{name}: {found:?}");
        let before = tree(&home);
        let o = turnkeeper(
            &["codex", "repair", "--home", s(&home), "--session", id],
            &[],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            damaged,
            "{name}: original untouched"
        );
        let after = tree(&home);
        let new: Vec<_> = after
            .iter()
            .filter(|(p, _)| !before.iter().any(|(q, _)| q == p))
            .collect();
        assert_eq!(new.len(), 1, "{name}: one new rollout");
        let (new_path, new_bytes) = new[0];
        let new_text = String::from_utf8(new_bytes.clone()).expect("UTF-8");
        let first: serde_json::Value =
            serde_json::from_str(new_text.lines().next().expect("a first line")).expect("JSON");
        assert_eq!(first["type"], "session_meta", "{name}");
        assert_eq!(first["payload"]["forked_from_id"], id, "{name}");
        assert_eq!(
            findings(new_path, None),
            (vec![], 0),
            "{name}: the copy is clean"
        );
        let original_reasoning = reasoning_lines(&damaged);
        for r in reasoning_lines(&new_text) {
            assert!(
                original_reasoning.contains(&r),
                "{name}: a reasoning line changed"
            );
        }
        // Every line after the new first one is a line of the damaged original, in order.
        let mut orig = damaged.lines();
        for l in new_text.lines().skip(1) {
            assert!(
                orig.any(|o| o == l),
                "{name}: a line not copied byte for byte: {l}"
            );
        }
        let o = turnkeeper(&["codex", "undo", "--home", s(&home), "--session", id], &[]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let undone = tree(&home);
        let kept: Vec<_> = undone.iter().map(|(p, b)| (p.clone(), b.clone())).collect();
        assert_eq!(kept, before, "{name}: undo is exact");
        let o = turnkeeper(&["codex", "undo", "--home", s(&home), "--session", id], &[]);
        assert_eq!(o.status.code(), Some(2), "{name}: nothing left to undo");
    }
}

#[test]
fn synthetic_damage_is_found_repaired_into_a_fork_and_undone() {
    mutate_and_repair(&synthetic(), "019d0000-0000-7000-8000-000000000001");
}

#[test]
fn real_damage_is_found_repaired_into_a_fork_and_undone() {
    let Some(dir) = shared::shared_dir("real-stores/codex/idaho-vault") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join(REAL[0])).expect("read");
    mutate_and_repair(&text, "019d781a-be34-7041-abb1-577f9360b907");
}

#[test]
fn a_repair_killed_at_every_write_step_leaves_no_partial_rollout() {
    let id = "019d0000-0000-7000-8000-000000000001";
    let damaged = (MUTATORS[0].1)(&synthetic());
    for n in 1.. {
        let (tmp, file) = home_with(&damaged, id);
        let home = tmp.path().to_owned();
        let before = tree(&home);
        let o = turnkeeper(
            &["codex", "repair", "--home", s(&home), "--session", id],
            &[("TURNKEEPER_CRASH_AFTER", n.to_string())],
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            damaged,
            "step {n}"
        );
        let after = tree(&home);
        let new: Vec<_> = after
            .iter()
            .filter(|(p, _)| !before.iter().any(|(q, _)| q == p))
            .collect();
        if o.status.success() {
            assert_eq!(new.len(), 1, "step {n}");
            break;
        }
        // Killed: no rollout, or a whole one (the temporary file is hidden and not a rollout).
        for (p, b) in &new {
            let name = p.file_name().and_then(|x| x.to_str()).unwrap_or("");
            if name.starts_with("rollout-") {
                assert!(b.ends_with(b"\n"), "step {n}: a partial rollout");
                assert_eq!(findings(p, None), (vec![], 0), "step {n}");
            }
        }
        // Undo after a kill leaves the tree as it was (or says there is nothing to undo).
        let u = turnkeeper(&["codex", "undo", "--home", s(&home), "--session", id], &[]);
        assert!(
            matches!(u.status.code(), Some(0 | 2)),
            "step {n}: {}",
            stderr(&u)
        );
        let rollouts = |t: &[(PathBuf, Vec<u8>)]| {
            t.iter()
                .filter(|(p, _)| {
                    p.file_name()
                        .and_then(|x| x.to_str())
                        .is_some_and(|x| x.starts_with("rollout-"))
                })
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(rollouts(&tree(&home)), rollouts(&before), "step {n}: undo");
        assert!(n < 50, "the repair never finished");
    }
}
