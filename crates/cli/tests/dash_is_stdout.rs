//! Regression: `-o -` and `--report -` wrote a file named `-` in the working directory. `-` now
//! names standard output, as it names standard input for the input; a report cannot share
//! standard output with the body.

mod common;

use std::path::Path;
use std::process::Output;

use common::{names, root, stderr};

/// Runs `turnkeeper ARGS` in `dir`, where a file named `-` would land if `-` were taken for
/// a file name.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("runs the binary")
}

fn corpus(rel: &str) -> String {
    root().join(rel).display().to_string()
}

#[test]
fn repair_in_place_with_report_dash_prints_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("conv.json");
    std::fs::copy(root().join("corpus/damaged/an08_aborted_turn.json"), &file).expect("copies");
    let o = run_in(
        dir.path(),
        &["repair", "conv.json", "--in-place", "--report", "-"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the report on stdout");
    assert_eq!(v["changes"][0]["rule"], "AN-08", "{v}");
    assert_eq!(v["findings_left"], serde_json::json!([]));
    assert_eq!(names(dir.path()), ["conv.json", "conv.json.bak"]);
}

#[test]
fn repair_output_dash_is_standard_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus("corpus/anthropic/interleaved_thinking_server_tools.json");
    let o = run_in(dir.path(), &["repair", &path, "-o", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(&path).expect("reads"));
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn report_dash_beside_a_body_on_stdout_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus("corpus/damaged/an08_aborted_turn.json");
    for args in [
        vec!["repair", path.as_str(), "--report", "-"],
        vec!["repair", path.as_str(), "-o", "-", "--report", "-"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(
            stderr(&o),
            "turnkeeper: --report -: standard output already carries the body; write the body with -o FILE (or --in-place), or the report to a file\n"
        );
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn recover_report_dash_with_the_body_in_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("err.txt"),
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#,
    )
    .expect("writes");
    let request = corpus("corpus/damaged/an08_aborted_turn.json");
    let o = run_in(
        dir.path(),
        &[
            "recover",
            "--request",
            &request,
            "--error",
            "err.txt",
            "-o",
            "out.json",
            "--report",
            "-",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the report on stdout");
    assert_eq!(v["diagnosis"]["kind"], "tool_result_missing", "{v}");
    assert_eq!(v["outcome"], "send", "{v}");
    assert_eq!(names(dir.path()), ["err.txt", "out.json"]);
    let refused = run_in(
        dir.path(),
        &[
            "recover",
            "--request",
            &request,
            "--error",
            "err.txt",
            "--report",
            "-",
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(refused.stdout.is_empty());
}
