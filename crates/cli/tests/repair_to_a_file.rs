//! `repair -o FILE` and `repair --in-place` write the body beside the file while the repair's
//! last pass still judges it, and rename it over the file only once it is final. Whatever the
//! number of passes, the file ends up holding the repaired body, nothing else is left in its
//! directory, and `--in-place` keeps the old bytes in `FILE.bak`.

mod common;

use common::{names, root, stderr};

/// How the body is written.
#[derive(Clone, Copy, Debug)]
enum To {
    /// `-o out.json`, a file that does not exist yet.
    NewFile,
    /// `-o out.json` over a file that holds something else.
    ExistingFile,
    /// `--in-place`.
    InPlace,
}

/// Repairs `input` (in `in.json`) to `to`, and checks the exit code, the body written, and
/// what the directory holds afterwards.
fn check(input: &str, to: To, expect: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("in.json");
    std::fs::write(&file, input).expect("writes the input");
    let out = dir.path().join("out.json");
    if let To::ExistingFile = to {
        std::fs::write(&out, "old bytes").expect("writes the old output");
    }
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_turnkeeper"));
    cmd.arg("repair").arg(&file);
    match to {
        To::NewFile | To::ExistingFile => cmd.arg("-o").arg(&out),
        To::InPlace => cmd.arg("--in-place"),
    };
    let o = cmd.output().expect("runs the binary");
    assert_eq!(o.status.code(), Some(0), "{to:?}: {}", stderr(&o));
    let (written, names_after) = match to {
        To::NewFile | To::ExistingFile => (&out, vec!["in.json", "out.json"]),
        To::InPlace if input == expect => (&file, vec!["in.json"]),
        To::InPlace => (&file, vec!["in.json", "in.json.bak"]),
    };
    let body = std::fs::read_to_string(written).expect("reads the body written");
    assert_eq!(body, expect, "{to:?}");
    assert_eq!(names(dir.path()), names_after, "{to:?}");
    if names_after.contains(&"in.json.bak") {
        let bak = std::fs::read_to_string(dir.path().join("in.json.bak")).expect("reads .bak");
        assert_eq!(bak, input, "{to:?}: the backup holds the old bytes");
    }
}

/// Every case, written every way.
fn check_all(input: &str, expect: &str) {
    for to in [To::NewFile, To::ExistingFile, To::InPlace] {
        check(input, to, expect);
    }
}

#[test]
fn a_body_repaired_in_one_pass() {
    check_all(
        r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":""}]}]}"#,
        r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#,
    );
}

/// The first pass's body is not the final one: AN-23 and AN-10 leave the assistant message
/// first, so AN-01 puts a user message in front in pass 2, and AN-03 then removes the prefill.
#[test]
fn a_body_repaired_in_two_passes() {
    check_all(
        r#"{"model":"claude-sonnet-4-5","max_tokens":8000,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":""},{"type":"thinking","thinking":"t","signature":"EqQBCkYIBxgCKkDv\u002bZ9Q=="},{"type":"text","text":"a"}]}]}"#,
        r#"{"model":"claude-sonnet-4-5","max_tokens":8000,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":[{"type":"text","text":"Continue."}]}]}"#,
    );
}

#[test]
fn a_valid_body_is_written_as_it_came() {
    let valid = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#;
    check_all(valid, valid);
}

/// A Chat Completions body, repaired by the wire rules (the path without passes of a
/// transcript), lands the same ways.
#[test]
fn a_wire_body_repaired() {
    let read = |rel: &str| std::fs::read_to_string(root().join(rel)).expect("reads the corpus");
    check_all(
        &read("corpus/damaged/ds03_deepseek_final_answer_without_reasoning.json"),
        &read("corpus/damaged/ds03_deepseek_final_answer_without_reasoning.after.json"),
    );
}

/// `-o -` is standard output for a body that needed repair too: no file named `-`, and no
/// temporary file, is left in the working directory.
#[test]
fn a_repaired_body_to_standard_output_leaves_no_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = root().join("corpus/damaged/an08_aborted_turn.json");
    let expect = std::fs::read(root().join("corpus/damaged/an08_aborted_turn.after.json"))
        .expect("reads the corpus");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
        .arg("repair")
        .arg(&input)
        .args(["-o", "-"])
        .current_dir(dir.path())
        .output()
        .expect("runs the binary");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, expect);
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

/// A body of `pairs` user and assistant turns of about 2 KB each, every user turn holding an
/// empty text block after its text when `damaged`, ending with a user turn.
fn long_body(pairs: usize, damaged: bool) -> String {
    let mut s = String::from(r#"{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":["#);
    for i in 0..pairs {
        let text = format!("turn {i} ").repeat(200);
        let blank = if damaged {
            r#",{"type":"text","text":""}"#
        } else {
            ""
        };
        s.push_str(&format!(
            r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}{blank}]}},{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}]}},"#
        ));
    }
    s.push_str(r#"{"role":"user","content":"go on"}]}"#);
    s
}

/// A body of several megabytes is mapped rather than read, and the repair lets its pages go as
/// it gets past them: the body written, to a new file or in place, is the one a plain read gives
/// (`TURNKEEPER_NO_MMAP`), byte for byte.
#[test]
fn a_large_body_mapped_is_repaired_as_one_read() {
    let input = long_body(1500, true);
    let expect = long_body(1500, false);
    assert!(input.len() > 5 << 20, "{} bytes", input.len());
    for mapped in [true, false] {
        for to in [To::NewFile, To::InPlace] {
            let dir = tempfile::tempdir().expect("tempdir");
            let file = dir.path().join("in.json");
            std::fs::write(&file, &input).expect("writes the input");
            let out = dir.path().join("out.json");
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_turnkeeper"));
            cmd.arg("repair").arg(&file);
            match to {
                To::InPlace => cmd.arg("--in-place"),
                _ => cmd.arg("-o").arg(&out),
            };
            if mapped {
                cmd.env_remove("TURNKEEPER_NO_MMAP");
            } else {
                cmd.env("TURNKEEPER_NO_MMAP", "1");
            }
            let o = cmd.output().expect("runs the binary");
            assert_eq!(o.status.code(), Some(0), "{to:?}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("AN-"),
                "the changes are reported: {}",
                stderr(&o)
            );
            let written = if let To::InPlace = to { &file } else { &out };
            let body = std::fs::read_to_string(written).expect("reads the body written");
            assert!(body == expect, "mapped {mapped}, {to:?}: the body differs");
        }
    }
}
