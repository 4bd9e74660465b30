//! Every fuzz body over every corpus file (so the bodies cannot rot), and the regressions.

use std::path::Path;

use turnkeeper_prevent::Options;
use turnkeeper_testkit::corpus::{CORPUS_DIRS, files_under, root};
use turnkeeper_testkit::fuzz::{self, Body, Depth, TARGETS};
use turnkeeper_testkit::inv;

/// Runs `body` on `bytes` at both depths: [`Depth::Full`] checks everything, and
/// [`Depth::Sampled`] is the code the libFuzzer entry point runs, so it cannot rot either.
fn run_caught(name: &str, body: Body, path: &Path, bytes: &[u8]) -> Option<String> {
    // The failure is collected and reported once, below; the default hook would print each
    // panic with its whole input.
    std::panic::set_hook(Box::new(|_| {}));
    let res = std::panic::catch_unwind(|| {
        body(bytes, Depth::Full);
        body(bytes, Depth::Sampled);
    });
    drop(std::panic::take_hook());
    res.err().map(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        let first: String = msg.lines().take(3).collect::<Vec<_>>().join(" / ");
        let first: String = first.chars().take(700).collect();
        let shown = path.strip_prefix(root()).unwrap_or(path);
        format!("{name} on {}: {first}", shown.display())
    })
}

#[test]
fn corpus_fuzz_bodies() {
    let mut files = Vec::new();
    for dir in CORPUS_DIRS {
        files.extend(files_under(&root().join(dir)));
    }
    assert!(files.len() >= 100, "only {} corpus files", files.len());
    let mut failures = Vec::new();
    let mut runs = 0;
    for path in &files {
        let bytes = std::fs::read(path).expect("corpus file is readable");
        for (name, body) in TARGETS {
            runs += 1;
            failures.extend(run_caught(name, *body, path, &bytes));
        }
    }
    assert!(runs >= 100 * TARGETS.len(), "{runs} runs");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `corpus/regressions/`: one file per regression. `<target>-<hash>` files (saved by
/// `cargo xtask fuzz`) replay through that target's body; `<name>.json` files are transcripts
/// that every repair invariant must hold on.
#[test]
fn regressions() {
    let dir = root().join("corpus/regressions");
    let mut failures = Vec::new();
    for path in files_under(&dir) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bytes = std::fs::read(&path).expect("regression file is readable");
        if let Some((target, body)) = TARGETS
            .iter()
            .find(|(t, _)| name.starts_with(&format!("{t}-")))
        {
            failures.extend(run_caught(target, *body, &path, &bytes));
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = inv::all_repair_invariants(&text, &Options::default()) {
            failures.push(format!("{name}: {e}"));
        }
        if let Err(e) = inv::inv_no_panic(&bytes) {
            failures.push(format!("{name}: no_panic: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} regression(s) fail:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Invariant 11 over every corpus file (each one as the fuzz bodies see it, [`fuzz::input_of`]:
/// the file itself when it reads as a transcript, else the conversation its bytes generate),
/// the damaged cases under the options their expect files name, and the accepted real traffic
/// when `../shared` is there. One buffer serves them all, in turn, as it would a
/// long-running agent, so each repair starts from the body the one before left in it; the first
/// starts from a buffer of junk longer than any body.
#[test]
fn corpus_repair_into_matches_repair() {
    let mut files = Vec::new();
    for dir in CORPUS_DIRS {
        files.extend(files_under(&root().join(dir)));
    }
    if let Some(real) = turnkeeper_testkit::shared::shared_dir("real-traffic") {
        files.extend(files_under(&real));
    }
    let mut buf = "{\"stale\":[".repeat(200_000);
    let mut failures = Vec::new();
    let (mut written, mut unchanged) = (0usize, 0usize);
    for path in &files {
        let bytes = std::fs::read(path).expect("corpus file is readable");
        let Some((text, mut opts, _)) =
            fuzz::input_of(&bytes, &turnkeeper_testkit::Knobs::default())
        else {
            continue;
        };
        // A damaged case is repaired under the model its expect file names.
        if let Some(expect) = std::fs::read_to_string(path.with_extension("expect.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        {
            opts.model = expect["model"].as_str().map(str::to_owned);
            opts.policy.merge_same_role = expect["policy"]["merge_same_role"].as_bool();
        }
        if let Err(e) = inv::inv_repair_into(&text, &opts, &mut buf) {
            failures.push(format!("{}: {e}", path.display()));
        }
        if buf.is_empty() {
            unchanged += 1;
        } else {
            written += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!("repair_into: {written} bodies written, {unchanged} left as they were");
    // Both outcomes were exercised, many times each (on this corpus: about 300 and 1,250).
    assert!(
        written >= 100 && unchanged >= 100,
        "{written} bodies written, {unchanged} left as they were"
    );
}
