//! OpenCode sessions judged by where they go, on synthetic exports modelled on real stores
//! (`corpus/opencode/make_targets.py`), and a closed output ending the command quietly.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

use common::{root, run, stderr, stdout};

/// `check --json` of a corpus file: (rule, severity) of every finding, and the exit code.
fn findings(file: &str, extra: &[&str]) -> (Vec<(String, String)>, Option<i32>) {
    let mut args = vec!["check", "--json", file];
    args.extend(extra);
    let o = run(&args);
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{file}: {e}: {}", stderr(&o)));
    let list = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_owned(),
                f["severity"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (list, o.status.code())
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn check_follows_the_sessions_target() {
    let kimi = "corpus/opencode/export/kimi_session.export.json";
    // Recorded with Kimi: valid for Kimi; a whitespace text part and an open tool loop without
    // thinking would break on Claude, so they are warnings. Kimi's `functions.bash:0` ids are
    // never an issue: OpenCode rewrites them for Claude itself.
    let (f, code) = findings(kimi, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(f, pairs(&[("AN-05", "warning"), ("AN-16", "warning")]));
    let (f, _) = findings(kimi, &["--model", "gpt-5"]);
    assert_eq!(f, pairs(&[("AN-05", "warning"), ("AN-16", "warning")]));
    // Sent to Claude, the same two are errors, and still no AN-12.
    let (f, code) = findings(kimi, &["--model", "anthropic/claude-sonnet-4-5"]);
    assert_eq!(code, Some(1));
    assert_eq!(f, pairs(&[("AN-05", "error"), ("AN-16", "error")]));

    // An aborted Claude turn with content and a long unsigned reasoning part: OpenCode sends the
    // text; the AI SDK drops the unsigned reasoning, so nothing of it reaches the API.
    let (f, code) = findings("corpus/opencode/export/aborted_reasoning.export.json", &[]);
    assert_eq!(code, Some(0));
    assert_eq!(f, pairs(&[]));
}

#[test]
fn opencode_export_documents_are_read_as_opencode() {
    for file in [
        "corpus/opencode/export/healthy.doc.json",
        "corpus/opencode/export/kimi_session.export.json",
    ] {
        let o = run(&["inspect", "--json", file]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        assert_eq!(v["format"], "opencode", "{file}");
        let o = run(&["check", "--format", "opencode", file]);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
    }
    let (f, code) = findings("corpus/opencode/export/healthy.doc.json", &[]);
    assert_eq!((f, code), (pairs(&[]), Some(0)));
}

#[test]
fn a_closed_output_ends_the_command_without_a_panic() {
    // Enough output to outlast the pipe's buffer once the reader has gone.
    let mut child = Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
        .args(["check", "corpus/opencode/export/kimi_session.export.json"])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    drop(child.stdout.take());
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut err).expect("stderr");
    }
    let status = child.wait().expect("waits");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("Broken pipe"), "{err}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        // Killed by SIGPIPE (13) as a Unix tool is, or done before it wrote anything.
        assert!(
            status.signal() == Some(13) || status.success(),
            "{status:?}: {err}"
        );
    }
}
