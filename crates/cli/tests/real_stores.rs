//! The OpenCode doctor on the real stores in `../shared/real-stores/opencode` (skipped, with one
//! printed line, when `../shared` is absent; required when `CI=true`). Every store is copied to
//! a temporary directory first, and every read-only command must leave that copy byte-identical.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{run, stderr, stdout};

#[path = "../../testkit/src/shared.rs"]
mod shared;

/// A copy of `../shared/real-stores/opencode/<name>` in a fresh temporary directory.
fn copy_of(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let src = shared::shared_dir("real-stores/opencode")?.join(name);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dst = tmp.path().join(name);
    copy_dir(&src, &dst);
    Some((tmp, dst))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy");
        }
    }
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// `opencode check --all --json` of a store: (errors, warnings) over all sessions.
fn tally(store: &Path, model: Option<&str>) -> (usize, usize, serde_json::Value) {
    let mut args = vec![
        "opencode",
        "check",
        "--all",
        "--json",
        "--storage",
        s(store),
    ];
    if let Some(m) = model {
        args.extend(["--model", m]);
    }
    let o = run(&args);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("check --json: {e}: {}", stderr(&o)));
    let mut errors = 0;
    let mut warnings = 0;
    for sess in v["sessions"].as_array().into_iter().flatten() {
        for f in sess["findings"].as_array().into_iter().flatten() {
            match f["severity"].as_str() {
                Some("error") => errors += 1,
                Some("warning") => warnings += 1,
                _ => {}
            }
        }
    }
    (errors, warnings, v)
}

#[test]
fn read_only_commands_leave_every_real_store_byte_identical() {
    for name in [
        "aiand-v1.17-sqlite-kimi",
        "anshgrag-v1.1.36-json",
        "burdis-v1.4-wal-only",
        "kilo-7.0.46-sqlite",
        "stunning-memory-v1.16-sqlite",
    ] {
        let Some((_tmp, dir)) = copy_of(name) else {
            return;
        };
        let before = snapshot(&dir);
        for args in [
            vec!["opencode", "list", "--storage", s(&dir)],
            vec!["opencode", "list", "--json", "--storage", s(&dir)],
            vec!["opencode", "check", "--all", "--storage", s(&dir)],
            vec![
                "opencode",
                "repair",
                "--all",
                "--dry-run",
                "--storage",
                s(&dir),
            ],
        ] {
            let o = run(&args);
            assert!(
                o.status.code().is_some_and(|c| c <= 3),
                "{name}: {args:?}: {}",
                stderr(&o)
            );
            assert!(!stderr(&o).contains("panicked"), "{name}: {}", stderr(&o));
        }
        assert_eq!(
            snapshot(&dir),
            before,
            "{name}: a read-only command changed the store"
        );
    }
}

#[test]
fn a_kimi_session_gets_no_anthropic_error_only_warnings_about_a_switch_to_claude() {
    let Some((_tmp, dir)) = copy_of("aiand-v1.17-sqlite-kimi") else {
        return;
    };
    // As recorded (Kimi K2.6 through OpenCode Zen) and with another non-Anthropic model.
    for (model, own) in [(None, 2), (Some("gpt-5"), 0)] {
        let (errors, warnings, v) = tally(&dir, model);
        assert_eq!(errors, 0, "{model:?}: {v}");
        // 42 whitespace-only text parts, and 2 open tool loops without thinking, matter only if
        // the session moves to Claude; Kimi's `functions.bash:0` ids never do (OpenCode rewrites
        // them for Claude itself). As sent to Kimi through Zen (the Chat request OpenCode
        // writes), two tool steps the user ran themselves carry no reasoning_content: Moonshot's
        // own API would reject them (KM-01), Zen accepted them (the session went on), so they
        // are warnings.
        assert_eq!(warnings, 44 + own, "{model:?}: {v}");
        let km01 = v.to_string().matches("\"KM-01\"").count();
        assert_eq!(km01, own, "{model:?}");
        let text = v.to_string();
        assert!(!text.contains("\"AN-12\""), "{model:?}: AN-12 on Kimi ids");
        assert!(text.contains("if this session is switched to Claude"));
        assert_eq!(v["sessions"][0]["target"]["family"], "other");
    }
    // Switched to Claude for real, the same damage is an error.
    let (errors, _, v) = tally(&dir, Some("claude-sonnet-4-5"));
    assert_eq!(errors, 44, "{v}");
    assert!(!v.to_string().contains("\"AN-12\""));
    // The doctor plans no Anthropic-only repair for a Kimi session, and says why; a running tool
    // in a message OpenCode never finished is "interrupted, or still running".
    let o = run(&[
        "opencode",
        "repair",
        "--all",
        "--dry-run",
        "--storage",
        s(&dir),
    ]);
    let out = stdout(&o);
    assert!(!out.contains("[AN-05]"), "{out}");
    assert!(out.contains("the session goes to moonshotai/kimi-k2.6 (not Anthropic)"));
    assert!(out.contains("[AN-08]"));
    assert!(
        out.contains("in a message OpenCode never finished (interrupted, or still running)"),
        "{out}"
    );
    assert!(!out.contains("left running in a finished message"), "{out}");
}

#[test]
fn kilo_stores_are_found_and_a_dir_without_a_store_is_exit_2() {
    let Some((_tmp, dir)) = copy_of("kilo-7.0.46-sqlite") else {
        return;
    };
    let o = run(&["opencode", "list", "--json", "--storage", s(&dir)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["sessions"].as_array().map(Vec::len), Some(3));

    let Some((_tmp2, exports)) = copy_of("derived-exports") else {
        return;
    };
    let o = run(&["opencode", "list", "--storage", s(&exports)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("no store here (looked for an OpenCode or Kilo store"),
        "{err}"
    );
    assert!(err.contains("kilo.db"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let Some((_tmp3, go)) = copy_of("go-opencode-not-sst") else {
        return;
    };
    let o = run(&["opencode", "list", "--storage", s(&go)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Go `opencode`"), "{}", stderr(&o));
}

#[test]
fn real_opencode_exports_are_read_as_opencode_and_agree_with_the_store() {
    let Some((_tmp, dir)) = copy_of("derived-exports") else {
        return;
    };
    for (file, warnings) in [
        ("stunning-ses_04ca851f.export.json", 1),
        ("stunning-ses_04ca851f.parts-array.json", 1),
        // 5 about a switch to Claude, 2 KM-01 as the Chat request Zen is sent.
        ("aiand-ses_1279fce8.export.json", 7),
        ("aiand-ses_1279fce8.parts-array.json", 7),
    ] {
        let path = dir.join(file);
        let o = run(&["inspect", "--json", s(&path)]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("inspect json");
        assert_eq!(v["format"], "opencode", "{file}");
        for format in ["auto", "opencode"] {
            let o = run(&["check", "--json", "--format", format, s(&path)]);
            assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
            let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("check json");
            let findings = v["findings"].as_array().expect("findings");
            assert_eq!(findings.len(), warnings, "{file}: {v}");
            assert!(findings.iter().all(|f| f["severity"] == "warning"));
        }
    }
}
