//! `cargo xtask verify`: everything CI checks, step by step, stopping at the first failure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cmd::{Cmd, fmt_duration, fmt_status, target_dir};
use crate::fuzz::{self, Fuzzer};
use crate::parse::{TestCounts, failed_tests, is_test_line};
use crate::{Result, fail};

/// `PROPTEST_CASES` for the ordinary `cargo test` step.
pub const TEST_PROPTEST_CASES: u64 = 64;

/// Default `PROPTEST_CASES` for the CI-strength invariants step (`--proptest-cases`).
pub const INVARIANT_PROPTEST_CASES: u64 = 2048;

/// Default seconds per fuzz target (`--fuzz-seconds`).
pub const FUZZ_SECONDS: u64 = 60;

/// Under `CI=true`, the whole of `verify` should end within this (a 30-minute job, with margin).
const CI_BUDGET: Duration = Duration::from_secs(27 * 60);

/// Under `CI=true`, never fuzz a target for less than this when the budget is tight.
const CI_MIN_FUZZ_SECONDS: u64 = 15;

/// Options of `cargo xtask verify`.
#[derive(Debug)]
pub struct VerifyOptions {
    /// Skip the CI-strength invariants and fuzzing.
    pub quick: bool,
    /// Skip fuzzing.
    pub skip_fuzz: bool,
    /// Seconds per fuzz target.
    pub fuzz_seconds: u64,
    /// Whether `--fuzz-seconds` was given (then CI never shortens it).
    pub fuzz_seconds_explicit: bool,
    /// `PROPTEST_CASES` of the invariants step.
    pub proptest_cases: u64,
    /// Fuzz with AddressSanitizer.
    pub asan: bool,
    /// Remove the test build (`target/debug`) once no later step needs it, before the fuzz
    /// build: `.ci/run` asks for it, on a clone that is thrown away, so that the fuzz build does
    /// not add to the disk the test build holds.
    pub drop_test_build: bool,
}

/// How a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// The step succeeded.
    Ok,
    /// The step failed; verify stopped here.
    Failed,
    /// The step was left out on purpose (flag, or nothing to do).
    Skipped,
}

/// One line of the summary table.
#[derive(Debug)]
struct StepResult {
    /// Step name.
    name: String,
    /// How it ended.
    outcome: Outcome,
    /// Wall time.
    elapsed: Duration,
    /// Test counts, executions, or why it was skipped.
    note: String,
}

/// What a step's output must show besides a zero exit status.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// The exit status alone decides.
    Status,
    /// libtest output: sum the counts and refuse tests marked with the `ignore` attribute.
    Tests,
}

/// The running state of `verify`: results so far and summed test counts.
struct Verify {
    /// Workspace root.
    root: PathBuf,
    /// Finished or skipped steps, in order.
    results: Vec<StepResult>,
    /// Test counts summed over every libtest run.
    totals: TestCounts,
    /// When verify started.
    start: Instant,
}

impl Verify {
    /// Runs one step: prints its name and command, runs it, prints its result and time.
    /// Returns an error (after recording the failure) when the step fails.
    fn step(&mut self, name: &str, cmd: &Cmd, check: Check) -> Result<TestCounts> {
        let n = self.results.len() + 1;
        println!("\n==> verify [{n}] {name}: {}", cmd.display());
        let keep = match check {
            Check::Status => is_compile_error,
            Check::Tests => |l: &str| is_test_line(l) || is_compile_error(l),
        };
        let out = cmd.run(keep)?;
        let counts = TestCounts::from_lines(&out.lines);
        self.totals += counts;
        let mut problem = None;
        if !out.status.success() {
            let failed = failed_tests(&out.lines);
            let mut which = String::new();
            if !failed.is_empty() {
                which.push_str(&format!("; failed tests: {}", failed.join(", ")));
            }
            let broken: Vec<&str> = out
                .lines
                .iter()
                .filter_map(|l| l.strip_prefix("error: could not compile "))
                .map(|l| l.split(" due to").next().unwrap_or(l))
                .collect();
            if !broken.is_empty() {
                which.push_str(&format!("; could not compile {}", broken.join(", ")));
            }
            problem = Some(format!("{}{which}", fmt_status(out.status)));
        } else if matches!(check, Check::Tests) && counts.ignored > 0 {
            problem = Some(format!(
                "{} ignored test(s): the `ignore` attribute is forbidden in this house (invariants run at CI \
                 strength through PROPTEST_CASES and the `prop_` filter instead)",
                counts.ignored
            ));
        }
        let note = match check {
            Check::Tests => {
                let mut note = counts.short();
                if counts.ignored > 0 {
                    note.push_str(&format!(", {} ignored", counts.ignored));
                }
                note
            }
            Check::Status => String::new(),
        };
        self.finish(name, out.elapsed, note, problem, &cmd.display())?;
        Ok(counts)
    }

    /// Runs a check of this process's own (no command) as a step named `name`, its error as the
    /// step's failure; `reproduce` says how to run it alone.
    fn in_process(
        &mut self,
        name: &str,
        reproduce: &str,
        check: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let started = Instant::now();
        let problem = check().err().map(|e| e.to_string());
        self.finish(name, started.elapsed(), String::new(), problem, reproduce)
    }

    /// Records a step's result, printing `<== name: ok (time)` or the failure and how to
    /// reproduce it.
    fn finish(
        &mut self,
        name: &str,
        elapsed: Duration,
        note: String,
        problem: Option<String>,
        reproduce: &str,
    ) -> Result<()> {
        let outcome = if problem.is_some() {
            Outcome::Failed
        } else {
            Outcome::Ok
        };
        let extra = if note.is_empty() {
            String::new()
        } else {
            format!(", {note}")
        };
        match &problem {
            None => println!("<== {name}: ok in {}{extra}", fmt_duration(elapsed)),
            Some(p) => println!(
                "<== {name}: FAILED in {}{extra} ({p})",
                fmt_duration(elapsed)
            ),
        }
        self.results.push(StepResult {
            name: name.to_owned(),
            outcome,
            elapsed,
            note,
        });
        match problem {
            None => Ok(()),
            Some(p) => Err(fail(format!(
                "step `{name}` failed: {p}\nreproduce it alone with:\n    {reproduce}"
            ))),
        }
    }

    /// Records a step that was left out, and says why.
    fn skip(&mut self, name: &str, why: &str) {
        println!(
            "\n==> verify [{}] {name}: skipped ({why})",
            self.results.len() + 1
        );
        self.results.push(StepResult {
            name: name.to_owned(),
            outcome: Outcome::Skipped,
            elapsed: Duration::ZERO,
            note: why.to_owned(),
        });
    }

    /// Prints the summary table, the total time, and the summed test counts as the last line.
    fn summary(&self, error: Option<&str>) {
        println!("\nverify summary");
        println!("  {:<28} {:<8} {:>8}  note", "step", "result", "time");
        for r in &self.results {
            let result = match r.outcome {
                Outcome::Ok => "ok",
                Outcome::Failed => "FAILED",
                Outcome::Skipped => "skipped",
            };
            let time = if r.outcome == Outcome::Skipped {
                "-".into()
            } else {
                fmt_duration(r.elapsed)
            };
            println!("  {:<28} {result:<8} {time:>8}  {}", r.name, r.note);
        }
        println!("total time: {}", fmt_duration(self.start.elapsed()));
        println!("{}", disk_line(&target_dir(&self.root)));
        match error {
            None => println!("verify: ok ({} steps)", self.results.len()),
            Some(e) => println!("verify: FAILED: {e}"),
        }
        println!(
            "verify: test counts summed over every cargo test run above ({} runs); \
             property tests count once per strength",
            self.totals.runs
        );
        println!("{}", self.totals.short());
    }
}

/// `disk: target/ holds 6.3 GB; 52.1 GB free on its filesystem`: what the run left on disk and
/// what is left beside it (a CI machine's disk is not ours to size; a run that fills it fails
/// with `No space left on device`). The free space is `df`'s; without `df` it is not given.
fn disk_line(target: &Path) -> String {
    disk_text(target, dir_size(target), free_bytes(target))
}

/// [`disk_line`]'s text, from what `target` holds and what is free beside it.
fn disk_text(target: &Path, used: u64, free: Option<u64>) -> String {
    match free {
        Some(free) => format!(
            "disk: {} holds {}; {} free on its filesystem",
            target.display(),
            gb(used),
            gb(free)
        ),
        None => format!("disk: {} holds {}", target.display(), gb(used)),
    }
}

/// What a run from a fresh clone wrote here (target/ with the Python venv and the agents from
/// npm, fuzz/target, the package caches): 7.3 GB with `.ci/run`'s settings on 2026-11-28.
const FRESH_RUN_BYTES: u64 = 7_500_000_000;

/// Says before the first step how much room there is, and warns when it is less than a fresh
/// run needs (the run goes on: a warm target/ needs far less).
fn preflight_disk(target: &Path) {
    let Some(free) = free_bytes(target) else {
        return;
    };
    let used = dir_size(target);
    println!(
        "verify: {} free for {} (which holds {})",
        gb(free),
        target.display(),
        gb(used)
    );
    if short_of_room(free, used) {
        println!(
            "verify: warning: a run from a fresh clone writes about {} (target/, fuzz/target, \
             the package caches); this one may end in `No space left on device`",
            gb(FRESH_RUN_BYTES)
        );
    }
}

/// Whether `free` bytes beside a target directory holding `used` are less than a fresh run
/// writes (what the directory holds is rewritten in place, so it counts as room).
fn short_of_room(free: u64, used: u64) -> bool {
    free.saturating_add(used) < FRESH_RUN_BYTES
}

/// Bytes as `6.3 GB`.
fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// The bytes free on the filesystem holding `path` (`df`'s; of its nearest existing ancestor),
/// or `None` without `df`.
fn free_bytes(path: &Path) -> Option<u64> {
    let dir = path.ancestors().find(|p| p.is_dir())?;
    Cmd::new(dir, "df")
        .args(["-Pk", "."])
        .stdout_text()
        .and_then(|out| df_free(&out))
}

/// The available bytes in `df -Pk`'s output (its second line's fourth field, in KiB).
fn df_free(out: &str) -> Option<u64> {
    let kib: u64 = out
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// The bytes of the regular files under `dir`, a file with several hard links (cargo links
/// each binary into `deps/`) once; symbolic links not followed; what cannot be read counts
/// nothing.
fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut linked = std::collections::HashSet::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) if m.is_file() && once(&m, &mut linked) => total += m.len(),
                _ => {}
            }
        }
    }
    total
}

/// Whether a file is met for the first time: always, but for a second name of a hard-linked
/// file (Unix).
#[cfg(unix)]
fn once(m: &std::fs::Metadata, seen: &mut std::collections::HashSet<(u64, u64)>) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.nlink() < 2 || seen.insert((m.dev(), m.ino()))
}

/// Whether a file is met for the first time: always, where hard links are not told apart.
#[cfg(not(unix))]
fn once(_: &std::fs::Metadata, _: &mut std::collections::HashSet<(u64, u64)>) -> bool {
    true
}

/// Keeps cargo's `error: could not compile ...` lines, which name the broken crate and target.
fn is_compile_error(line: &str) -> bool {
    line.starts_with("error: could not compile ")
}

/// Runs `cargo xtask verify`.
pub fn verify(root: &Path, opts: &VerifyOptions) -> Result<()> {
    let mut v = Verify {
        root: root.to_owned(),
        results: Vec::new(),
        totals: TestCounts::default(),
        start: Instant::now(),
    };
    preflight_disk(&target_dir(root));
    let result = run_steps(&mut v, opts);
    let error = result.as_ref().err().map(|e| e.to_string());
    v.summary(error.as_deref());
    // The summary has said it all; its last line must stay the test counts.
    result.map_err(|_| Box::new(crate::Reported) as Box<dyn std::error::Error>)
}

/// The steps, in order; the first failure ends the run.
fn run_steps(v: &mut Verify, opts: &VerifyOptions) -> Result<()> {
    let root = v.root.clone();
    let cargo = || Cmd::cargo(&root);

    v.step(
        "fmt",
        &cargo().args(["fmt", "--all", "--", "--check"]),
        Check::Status,
    )?;
    if fuzz::load_manifest(&root)?.is_some_and(|m| !m.targets.is_empty()) {
        v.step(
            "fmt (fuzz crate)",
            &cargo().args(["fmt", "--manifest-path", "fuzz/Cargo.toml", "--", "--check"]),
            Check::Status,
        )?;
    }
    v.step(
        "clippy",
        &cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            // The command's opt-in allocator is linted (and built) here, so it cannot rot.
            "--features",
            "turnkeeper-cli/mimalloc",
            "--",
            "-D",
            "warnings",
        ]),
        Check::Status,
    )?;
    // The crash test runs in its own step below, with its summary; not twice.
    v.step(
        "test",
        &cargo()
            .env("PROPTEST_CASES", TEST_PROPTEST_CASES.to_string())
            .args(["test", "--workspace", "--no-fail-fast", "--"])
            .args(crate::crash::TESTS.iter().flat_map(|t| ["--skip", t])),
        Check::Tests,
    )?;
    // The error classifier's accuracy per kind, development and held-out parts apart
    // (corpus/errors/README.md): the corpus test prints the table and its misses. It already ran
    // and was counted in the `test` step, so this one is checked by status only.
    v.step(
        "classify accuracy (dev / held-out)",
        &cargo().args([
            "test",
            "--workspace",
            "--test",
            "corpus",
            "--",
            "corpus_accuracy",
            "--exact",
            "--nocapture",
        ]),
        Check::Status,
    )?;
    v.step(
        "doc",
        &cargo()
            .env("RUSTDOCFLAGS", "-D warnings")
            .args(["doc", "--workspace", "--no-deps"]),
        Check::Status,
    )?;
    v.step(
        "rules",
        &cargo().args(["run", "--quiet", "-p", "xtask", "--", "rules", "--check"]),
        Check::Status,
    )?;

    v.in_process("no SQLite below stores", "cargo xtask publish", || {
        crate::publish::no_sqlite_below_stores(&root)
    })?;
    v.step(
        "publish dry run",
        &crate::publish::command(&root, false),
        Check::Status,
    )?;

    v.step(
        "crash (opencode repair killed at random)",
        &crate::crash::command(&root, crate::crash::VERIFY_RUNS, None),
        Check::Tests,
    )?;

    if python_step(v)? {
        real_clients_step(v)?;
    }
    if node_step(v)? {
        opencode_e2e_step(v)?;
    }

    if opts.quick {
        v.skip("invariants (CI strength)", "--quick");
    } else {
        // The same test build as the `test` step (nothing is compiled again); only the case
        // count changes. A release build of the whole workspace would cost ~9 minutes of CI.
        let counts = v.step(
            "invariants (CI strength)",
            &cargo()
                .env("PROPTEST_CASES", opts.proptest_cases.to_string())
                .args(["test", "--workspace", "--no-fail-fast", "--", "prop_"]),
            Check::Tests,
        )?;
        if counts.passed == 0 {
            println!(
                "verify: warning: no test named `prop_*` exists yet; nothing ran at CI strength"
            );
        }
    }

    if has_bench_targets(&root) {
        // `cargo test --benches` builds the benches with the test profile (reusing the test
        // build) and criterion runs each benchmark once: a smoke run, no timing.
        v.step(
            "bench smoke (build, run once)",
            &cargo().args(["test", "--workspace", "--benches"]),
            Check::Status,
        )?;
    } else {
        v.skip("bench", "no bench targets in the workspace yet");
    }

    if opts.quick {
        v.skip("fuzz", "--quick");
        return Ok(());
    }
    if opts.skip_fuzz {
        v.skip("fuzz", "--skip-fuzz");
        return Ok(());
    }
    if opts.drop_test_build {
        drop_test_build(&target_dir(&root));
    }
    fuzz_steps(v, opts)
}

/// Removes `target/debug` (every step that builds or runs the test build is done; the fuzz
/// build is elsewhere), saying what it freed. A failure to remove is said and the run goes on.
fn drop_test_build(target: &Path) {
    let debug = target.join("debug");
    if !debug.is_dir() {
        return;
    }
    let size = dir_size(&debug);
    match std::fs::remove_dir_all(&debug) {
        Ok(()) => println!(
            "verify: --drop-test-build: removed {} ({}) before the fuzz build",
            debug.display(),
            gb(size)
        ),
        Err(e) => println!(
            "verify: --drop-test-build: {} not removed: {e}",
            debug.display()
        ),
    }
}

/// The Python package (`bindings/python`): built with maturin and tested with pytest by
/// `bindings/python/test.sh` (a venv under the target directory, the pinned test packages from
/// PyPI, the real `anthropic`, `openai` and `litellm` against a mock upstream). Without a
/// `python3` that has `venv` and `pip` the step is skipped with a line saying so, and fails
/// under `CI=true`, where the package must be tested.
fn python_step(v: &mut Verify) -> Result<bool> {
    const NAME: &str = "python (bindings/python)";
    let root = v.root.clone();
    let probe = Cmd::new(&root, "python3").args(["-c", "import venv, ensurepip, pip"]);
    if !probe.succeeds() {
        let why = "python3 with venv and pip is not available";
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            v.finish(
                NAME,
                Duration::ZERO,
                String::new(),
                Some(format!(
                    "{why}; under CI=true the Python package must be tested"
                )),
                &probe.display(),
            )?;
            return Ok(false);
        }
        v.skip(NAME, why);
        return Ok(false);
    }
    let cmd = with_tested_cli(
        Cmd::new(&root, "bash").arg("bindings/python/test.sh"),
        &root,
    );
    println!(
        "\n==> verify [{}] {NAME}: {}",
        v.results.len() + 1,
        cmd.display()
    );
    // pytest's closing line (`N passed ...`) becomes the step's note; the summed cargo counts
    // of the last line stay cargo's.
    let out =
        cmd.run(|l| l.contains(" passed") || l.contains(" failed") || l.contains(" error"))?;
    let note = out
        .lines
        .iter()
        .rev()
        .find(|l| l.contains(" passed") || l.contains(" failed"))
        .map(|l| l.trim().to_owned())
        .unwrap_or_default();
    let problem = (!out.status.success()).then(|| fmt_status(out.status));
    v.finish(NAME, out.elapsed, note, problem, &cmd.display())?;
    Ok(true)
}

/// `cmd` with `TURNKEEPER_CLI` naming the command the `test` step built (its integration tests
/// run it from `target/debug/`), when it is there: the bindings' tests compare with it instead
/// of building it again with `-p turnkeeper-cli`, whose features differ from the workspace's
/// (a second copy of the command and of the crates it links, in time and in disk).
fn with_tested_cli(cmd: Cmd, root: &Path) -> Cmd {
    let cli = target_dir(root).join("debug").join("turnkeeper");
    if cli.is_file() {
        cmd.env("TURNKEEPER_CLI", cli.display().to_string())
    } else {
        cmd
    }
}

/// The real Python SDKs through the proxy (`crates/proxy/tests/real_clients.rs`: the `openai`
/// SDK on the Chat and Responses routes, `google-genai` on the Gemini route), with the venv the
/// python step built (its pinned `bindings/python/requirements-test.txt`). The test build of the
/// `test` step ran them before that venv existed, so they skipped there; here they are required
/// (`TURNKEEPER_REQUIRE_REAL_CLIENTS=1`: a missing SDK fails instead of skipping).
fn real_clients_step(v: &mut Verify) -> Result<()> {
    let target = target_dir(&v.root);
    let python = target.join("python-venv/bin/python").display().to_string();
    v.step(
        "real clients (openai, google-genai through the proxy)",
        &Cmd::cargo(&v.root.clone())
            .env("TURNKEEPER_OPENAI_PYTHON", python.clone())
            .env("TURNKEEPER_GENAI_PYTHON", python)
            .env("TURNKEEPER_REQUIRE_REAL_CLIENTS", "1")
            // `--workspace` (not `-p`): the `test` step's features, so its build is reused.
            .args(["test", "--workspace", "--test", "real_clients"]),
        Check::Tests,
    )?;
    Ok(())
}

/// The Node package (`bindings/node`): `npm install` builds the addon with napi-rs' CLI and
/// `npm test` runs node's test runner (agreement with the CLI on the corpus), both through
/// `bindings/node/test.sh`. Without `node` and `npm` the step is skipped with a line saying so,
/// and fails under `CI=true`, where the package must be tested.
fn node_step(v: &mut Verify) -> Result<bool> {
    const NAME: &str = "node (bindings/node)";
    let root = v.root.clone();
    let probe_node = Cmd::new(&root, "node").arg("--version");
    let probe_npm = Cmd::new(&root, "npm").arg("--version");
    if !probe_node.succeeds() || !probe_npm.succeeds() {
        let why = "node and npm are not available";
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            return v
                .finish(
                    NAME,
                    Duration::ZERO,
                    String::new(),
                    Some(format!(
                        "{why}; under CI=true the Node package must be tested"
                    )),
                    &format!("{} && {}", probe_node.display(), probe_npm.display()),
                )
                .map(|()| false);
        }
        v.skip(NAME, why);
        return Ok(false);
    }
    let cmd = with_tested_cli(Cmd::new(&root, "bash").arg("bindings/node/test.sh"), &root);
    println!(
        "\n==> verify [{}] {NAME}: {}",
        v.results.len() + 1,
        cmd.display()
    );
    // test.sh closes with `node: N passed, M failed (...)`: it becomes the step's note.
    let out = cmd.run(|l| l.starts_with("node: ") && l.contains(" passed"))?;
    let note = out
        .lines
        .last()
        .map(|l| {
            l.split(" (")
                .next()
                .unwrap_or_default()
                .trim_start_matches("node: ")
                .to_owned()
        })
        .unwrap_or_default();
    let ok = out.status.success();
    let problem = (!ok).then(|| fmt_status(out.status));
    v.finish(NAME, out.elapsed, note, problem, &cmd.display())?;
    Ok(ok)
}

/// Real agents (`integrations/opencode/e2e/run.sh`): installs `opencode-ai` and `@openai/codex`
/// (pinned) from npm into the target directory and runs them offline against local mocks: a
/// stored OpenCode session damaged in its latest turn fails without the plugin and continues
/// with it, the thinking block byte-identical, and OpenCode reads back the command-line doctor's
/// repair; OpenCode with DeepSeek- and Kimi-style providers and Codex through the proxy. Runs
/// after the node step built the binding and installed the plugin's dependency.
fn opencode_e2e_step(v: &mut Verify) -> Result<()> {
    const NAME: &str = "agents e2e (real OpenCode and Codex)";
    let root = v.root.clone();
    let cmd = Cmd::new(&root, "bash").arg("integrations/opencode/e2e/run.sh");
    println!(
        "\n==> verify [{}] {NAME}: {}",
        v.results.len() + 1,
        cmd.display()
    );
    // node's TAP report closes with `# pass N` and `# fail M`.
    let out = cmd.run(|l| l.starts_with("# pass ") || l.starts_with("# fail "))?;
    let note = out.lines.join(", ").replace("# ", "");
    let passed = out
        .lines
        .iter()
        .any(|l| l.strip_prefix("# pass ").is_some_and(|n| n.trim() != "0"));
    let problem = if !out.status.success() {
        Some(fmt_status(out.status))
    } else if !passed {
        Some("the test did not run (no OpenCode binary?)".to_owned())
    } else {
        None
    };
    v.finish(NAME, out.elapsed, note, problem, &cmd.display())
}

/// Whether `cargo metadata` lists any `bench` target in the workspace.
fn has_bench_targets(root: &Path) -> bool {
    Cmd::cargo(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .stdout_text()
        .is_some_and(|json| json.contains(r#""kind":["bench"]"#))
}

/// The fuzz smoke: install cargo-fuzz if needed, seed, build all targets, run each briefly.
fn fuzz_steps(v: &mut Verify, opts: &VerifyOptions) -> Result<()> {
    let root = v.root.clone();
    let manifest = match fuzz::load_manifest(&root)? {
        Some(m) if !m.targets.is_empty() => m,
        Some(_) => {
            v.skip("fuzz", "fuzz/Cargo.toml lists no [[bin]] targets yet");
            return Ok(());
        }
        None => {
            v.skip("fuzz", "fuzz/Cargo.toml does not exist");
            return Ok(());
        }
    };
    println!("\n==> verify [{}] fuzz: cargo-fuzz", v.results.len() + 1);
    let started = Instant::now();
    let installed = fuzz::ensure_cargo_fuzz(&root);
    v.finish(
        "fuzz: cargo-fuzz",
        started.elapsed(),
        String::new(),
        installed.err().map(|e| e.to_string()),
        "cargo install cargo-fuzz --locked",
    )?;
    let fuzzer = Fuzzer::new(&root, opts.asan)?.with_limits(&manifest);
    println!("{}", fuzzer.describe());
    for target in &manifest.targets {
        let report = fuzz::seed(&root, &manifest, target)?;
        fuzz::print_seed_report(target, &report);
    }
    for (label, build) in fuzzer.build_cmds() {
        v.step(&label, &build, Check::Status)?;
    }

    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let seconds = fuzz_seconds(ci, v.start.elapsed(), manifest.targets.len(), opts);
    for target in &manifest.targets {
        let name = format!("fuzz: {target}");
        println!(
            "\n==> verify [{}] {name}: {} s",
            v.results.len() + 1,
            seconds
        );
        let run = fuzzer.run(target, seconds, 1)?;
        let mut note = run.stats.summary();
        if !run.regressions.is_empty() {
            let saved: Vec<String> = run
                .regressions
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            note.push_str(&format!("; saved {}", saved.join(", ")));
        }
        let problem = (!run.ok).then(|| format!("libFuzzer {}", run.status));
        v.finish(&name, run.elapsed, note, problem, &run.reproduce)?;
    }
    Ok(())
}

/// Seconds per fuzz target: the requested time, shortened under `CI=true` (unless
/// `--fuzz-seconds` was given) so that verify ends within the CI budget.
fn fuzz_seconds(ci: bool, elapsed: Duration, targets: usize, opts: &VerifyOptions) -> u64 {
    if !ci || opts.fuzz_seconds_explicit || targets == 0 {
        return opts.fuzz_seconds;
    }
    // Each run also pays a few seconds of start-up, corpus loading and final stats.
    let overhead = 10 * targets as u64;
    let left = CI_BUDGET
        .saturating_sub(elapsed)
        .as_secs()
        .saturating_sub(overhead);
    let fair = (left / targets as u64).max(CI_MIN_FUZZ_SECONDS);
    if fair < opts.fuzz_seconds {
        println!(
            "verify: CI=true and {} of the {} budget used: fuzzing {fair} s per target instead of {} \
             so the job ends in time",
            fmt_duration(elapsed),
            fmt_duration(CI_BUDGET),
            opts.fuzz_seconds
        );
        fair
    } else {
        opts.fuzz_seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options with the given fuzz seconds, explicit or not.
    fn opts(fuzz_seconds: u64, explicit: bool) -> VerifyOptions {
        VerifyOptions {
            quick: false,
            skip_fuzz: false,
            fuzz_seconds,
            fuzz_seconds_explicit: explicit,
            proptest_cases: INVARIANT_PROPTEST_CASES,
            asan: false,
            drop_test_build: false,
        }
    }

    #[test]
    fn df_free_space_is_the_fourth_field_of_the_second_line() {
        let out = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n\
                   /dev/vda         263174212 12441808  83891240      13% /";
        assert_eq!(df_free(out), Some(83_891_240 * 1024));
        assert_eq!(df_free("Filesystem 1024-blocks Used Available"), None);
        assert_eq!(df_free(""), None);
    }

    #[cfg(unix)]
    #[test]
    fn the_free_space_of_a_real_directory_is_read_from_df() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let free = free_bytes(dir.path()).expect("df answers on Unix");
        assert!(free > 1 << 20, "{free} bytes free");
        assert_eq!(free % 1024, 0);
        // A directory not made yet: its nearest existing ancestor's filesystem.
        assert!(free_bytes(&dir.path().join("not/yet")).is_some());
    }

    #[test]
    fn the_disk_line_and_the_warning() {
        let t = Path::new("/r/target");
        assert_eq!(
            disk_text(t, 6_300_000_000, Some(52_140_000_000)),
            "disk: /r/target holds 6.3 GB; 52.1 GB free on its filesystem"
        );
        assert_eq!(disk_text(t, 0, None), "disk: /r/target holds 0.0 GB");
        assert_eq!(gb(7_349_999_999), "7.3 GB");
        // Below what a fresh run writes, counting what target/ holds as room; at it, not.
        assert!(short_of_room(FRESH_RUN_BYTES - 2, 1));
        assert!(!short_of_room(FRESH_RUN_BYTES - 1, 1));
        assert!(!short_of_room(1, FRESH_RUN_BYTES - 1));
        assert!(short_of_room(0, 0));
        assert!(!short_of_room(u64::MAX, 1));
    }

    #[test]
    fn the_test_build_goes_whole_and_the_rest_stays() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(dir.path().join("debug/deps")).expect("mkdir");
        std::fs::write(dir.path().join("debug/deps/t"), b"test").expect("write");
        std::fs::create_dir(dir.path().join("python-venv")).expect("mkdir");
        std::fs::write(dir.path().join("python-venv/py"), b"venv").expect("write");
        drop_test_build(dir.path());
        assert!(!dir.path().join("debug").exists());
        assert_eq!(dir_size(dir.path()), 4);
        // Nothing to remove: nothing happens.
        drop_test_build(dir.path());
        assert_eq!(dir_size(dir.path()), 4);
    }

    #[test]
    fn a_hard_linked_file_counts_once() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("a"), [0u8; 1000]).expect("write a");
        std::fs::create_dir(dir.path().join("deps")).expect("mkdir");
        std::fs::write(dir.path().join("deps/b"), [0u8; 24]).expect("write b");
        assert_eq!(dir_size(dir.path()), 1024);
        std::fs::hard_link(dir.path().join("a"), dir.path().join("deps/a-link")).expect("link");
        let expect = if cfg!(unix) { 1024 } else { 2024 };
        assert_eq!(dir_size(dir.path()), expect);
        // A third name: still once.
        std::fs::hard_link(dir.path().join("a"), dir.path().join("a-again")).expect("link");
        let expect = if cfg!(unix) { 1024 } else { 3024 };
        assert_eq!(dir_size(dir.path()), expect);
        assert_eq!(dir_size(&dir.path().join("absent")), 0);
    }

    #[test]
    fn ci_shortens_fuzzing_only_when_the_budget_needs_it() {
        let minutes = |m: u64| Duration::from_secs(m * 60);
        // Plenty of time left: the default stands.
        assert_eq!(fuzz_seconds(true, minutes(10), 3, &opts(60, false)), 60);
        // 27 min budget, 20 used, 4 targets: (420 - 40) / 4 = 95 > 60, so 60 stands.
        assert_eq!(fuzz_seconds(true, minutes(20), 4, &opts(60, false)), 60);
        // 25 used, 4 targets: (120 - 40) / 4 = 20.
        assert_eq!(fuzz_seconds(true, minutes(25), 4, &opts(60, false)), 20);
        // Over budget: never below the floor.
        assert_eq!(
            fuzz_seconds(true, minutes(30), 4, &opts(60, false)),
            CI_MIN_FUZZ_SECONDS
        );
        // Outside CI, or with an explicit --fuzz-seconds, the request stands.
        assert_eq!(fuzz_seconds(false, minutes(30), 4, &opts(60, false)), 60);
        assert_eq!(fuzz_seconds(true, minutes(30), 4, &opts(60, true)), 60);
    }
}
