//! `cargo xtask crash`: the OpenCode doctor's crash test at strength.
//!
//! Runs `crates/turnkeeper/tests/doctor_crash.rs` (which kills `opencode repair` runs at random
//! write steps and by SIGKILL, then checks every file is old or new and that `undo` restores
//! the original) with many runs per store. The ordinary `cargo test` runs the same test with
//! its own default of 10 runs; `cargo xtask verify` runs it once, in a step of its own with
//! [`VERIFY_RUNS`], and skips it in its `test` step.

use std::path::Path;

use crate::cmd::Cmd;
use crate::parse::is_test_line;
use crate::{Result, fail};

/// Default runs per store of `cargo xtask crash`.
pub const RUNS: u64 = 120;

/// Runs per store of verify's crash step.
pub const VERIFY_RUNS: u64 = 10;

/// The crash tests (one per store), which verify's `test` step leaves to the crash step.
pub const TESTS: [&str; 2] = ["crash_json_store", "crash_sqlite_store"];

/// The command: the crash test alone, with `runs` runs per store (and a seed to repeat one).
pub fn command(root: &Path, runs: u64, seed: Option<u64>) -> Cmd {
    let mut cmd = Cmd::cargo(root).env("TURNKEEPER_CRASH_RUNS", runs.to_string());
    if let Some(s) = seed {
        cmd = cmd.env("TURNKEEPER_CRASH_SEED", s.to_string());
    }
    // `--workspace`, not `-p turnkeeper-kit`: the features of the dependencies are then those of
    // verify's `test` step, whose build this reuses (with `-p` cargo resolves them for one crate
    // and builds a second copy of the test and what it links).
    cmd.args([
        "test",
        "--workspace",
        "--test",
        "doctor_crash",
        "--",
        "--nocapture",
    ])
}

/// True for the lines worth keeping: the test's summary per store and libtest's results.
fn keep(line: &str) -> bool {
    line.starts_with("crash ") || is_test_line(line)
}

/// Runs the crash test and prints its summary.
pub fn crash(root: &Path, runs: u64, seed: Option<u64>) -> Result<()> {
    let cmd = command(root, runs, seed);
    println!("==> crash: {}", cmd.display());
    let out = cmd.run(keep)?;
    println!("\ncrash test summary ({runs} runs per store):");
    for l in out.lines.iter().filter(|l| l.starts_with("crash ")) {
        println!("  {l}");
    }
    if out.status.success() {
        Ok(())
    } else {
        Err(fail(format!(
            "the crash test failed; reproduce with `{}` (the seed is printed above)",
            cmd.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_names_runs_and_seed() {
        let shown = command(Path::new("."), 7, Some(3)).display();
        assert!(shown.contains("TURNKEEPER_CRASH_RUNS=7"), "{shown}");
        assert!(shown.contains("TURNKEEPER_CRASH_SEED=3"), "{shown}");
        assert!(shown.contains("--test doctor_crash"), "{shown}");
        assert!(keep("crash Json: 10 runs") && !keep("compiling"));
    }
}
