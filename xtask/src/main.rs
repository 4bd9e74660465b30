//! turnkeeper's build automation, run as `cargo xtask <command>` (see `cargo xtask --help`).
//!
//! No dependencies beyond std: commands are spawned with `std::process`, arguments are parsed by
//! hand, and the few tool outputs we read (libtest, libFuzzer, `fuzz/Cargo.toml`) are parsed in
//! [`parse`].

mod cmd;
mod crash;
mod fuzz;
mod mutants;
mod parse;
mod publish;
mod rules;
// A check of the sources, run as a test (in `cargo test` and verify's `test` step).
#[cfg(test)]
mod unsafe_code;
mod verify;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Errors are messages for the user; every fallible step says what failed and how to reproduce it.
type Result<T, E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

/// An error whose message was already printed (verify's summary); `main` only sets the exit code.
#[derive(Debug)]
struct Reported;

impl std::fmt::Display for Reported {
    /// Says that the failure was reported above.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("failed (reported above)")
    }
}

impl std::error::Error for Reported {}

/// Makes an error from a message.
fn fail(message: impl Into<String>) -> Box<dyn std::error::Error> {
    message.into().into()
}

/// The help text of `cargo xtask --help`.
const HELP: &str = "\
cargo xtask: turnkeeper's build automation

USAGE:
    cargo xtask <COMMAND> [OPTIONS]

COMMANDS:
    verify    Everything CI checks, step by step; stops at the first failure, names the step and
              prints the exact command that reproduces it alone. Steps:
                fmt          cargo fmt --all -- --check
                clippy       cargo clippy --workspace --all-targets --features turnkeeper-cli/mimalloc -- -D warnings
                test         PROPTEST_CASES=64 cargo test --workspace --no-fail-fast
                             (unit, integration and doc tests; corpus_* replays included;
                             any test marked `ignore` fails the step: the house forbids them)
                doc          RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps
                rules        cargo xtask rules --check (see `rules` below)
                crash        TURNKEEPER_CRASH_RUNS=10 cargo test --workspace --test doctor_crash
                             (see `crash` below, with 10 runs per store; --workspace, not -p,
                             so the test step's build serves: the same features)
                python       bindings/python/test.sh: a venv in target/python-venv with the
                             pinned test packages, pip install ./bindings/python (maturin,
                             dev profile), pytest (agreement on the corpus with the command
                             the test step built, passed as TURNKEEPER_CLI; the
                             real anthropic, openai and litellm against a mock upstream);
                             skipped without python3 + venv + pip, a failure so under CI=true
                real clients cargo test --workspace --test real_clients with that venv's
                             python (the openai and google-genai SDKs through the proxy),
                             TURNKEEPER_REQUIRE_REAL_CLIENTS=1: a missing SDK fails
                node         bindings/node/test.sh: npm install in bindings/node (@napi-rs/cli,
                             napi build --platform, dev profile), npm test (node --test:
                             agreement with the CLI on the corpus), then the same in
                             integrations/opencode (the OpenCode plugin's hooks on exported
                             sessions); skipped without node + npm, a failure so under CI=true
                agents e2e   integrations/opencode/e2e/run.sh: opencode-ai and @openai/codex
                             (pinned) from npm, run offline against local mocks: OpenCode with
                             the plugin continues a damaged stored session (thinking
                             byte-identical) and reads back the doctor's repair; OpenCode
                             (DeepSeek, Kimi) and Codex through the proxy
                invariants   PROPTEST_CASES=2048 cargo test --workspace --no-fail-fast -- prop_
                             (the same property tests on the same build, at CI strength)
                publish      the layering check and cargo publish --dry-run --workspace
                             --no-verify (see `publish` below)
                bench        cargo test --workspace --benches (builds every bench; criterion
                             runs each once, no timing assertions); skipped without benches
                fuzz         for each [[bin]] of fuzz/Cargo.toml: seed fuzz/corpus/<target>/,
                             cargo fuzz build, then cargo fuzz run -s none --debug-assertions
                             --features fast-alloc <target> fuzz/corpus/<target> --
                             -max_total_time=N -rss_limit_mb=2048 (and the target's -max_len
                             from fuzz/Cargo.toml, when set; a target set to false under
                             [package.metadata.xtask.trace_compares] is built and run with
                             --no-trace-compares in fuzz/target/no-trace-compares);
                             prints executions, exec/s and coverage; skipped when there are no targets;
                             installs cargo-fuzz (cargo install cargo-fuzz --locked) when missing
              Ends with a table of steps and times and, as its last line, the test counts summed
              over every cargo test run: `N passed, M failed`.
        --quick               fmt, clippy, test, doc, bench only (no CI-strength invariants, no fuzz)
        --skip-fuzz           everything but fuzzing
        --fuzz-seconds N      seconds per fuzz target [default: 60]; with CI=true and no
                              --fuzz-seconds, shortened (not below 15) to end within 27 minutes
        --proptest-cases N    PROPTEST_CASES of the invariants step [default: 2048]
        --asan                fuzz with AddressSanitizer (see FUZZ MODES)
        --drop-test-build     remove target/debug before the fuzz build, once no later step
                              needs it (.ci/run passes it: a CI clone is thrown away)

    publish [--no-build]
              The crates a user can add, checked as crates.io would take them: no SQLite in
              turnkeeper-model nor in turnkeeper-kit without default features, then
              cargo publish --dry-run --workspace (every library crate and the CLI, in
              dependency order, each built from its package; --no-build packages only).

    rules     Writes docs/rules.md, the rule catalogue, from the documentation of
              crates/prevent/src/rules/*.rs (ids and summaries from crates/prevent/src/id.rs).
        --check               write nothing; fail when docs/rules.md is stale, when an id has no
                              documented rule or no corpus/damaged case, or when recover's
                              planner names an id no rule reports

    fuzz [TARGET]
              A fuzzing campaign on one target or all of them, one after another: seeds the
              working corpus, runs libFuzzer (with the target's -max_len from
              [package.metadata.xtask.max_len] in fuzz/Cargo.toml, when set, and without
              comparison tracing for a target set so under [package.metadata.xtask.trace_compares]),
              and prints executions, executions per second, corpus size and coverage.
              A crash is minimised (cargo fuzz tmin), copied to corpus/regressions/<target>-<hash>
              (replayed by the regression tests) and the test to write is printed.
        --time SECONDS        per target [default: 600]
        --jobs N              parallel libFuzzer processes (-fork=N) [default: 1]
        --asan                fuzz with AddressSanitizer

    corpus [TARGET]
              Seeds and minimises each working corpus (cargo fuzz cmin), then replaces the
              checked-in seeds in corpus/fuzz/<target>/ with its smallest files.
        --max-bytes N         largest file kept [default: 8192]
        --max-files N         most files kept per target [default: 64]
        --asan                build with AddressSanitizer

    seeds DIR Writes what a fuzzing service needs beside each target's binary: DIR/<target>/
              (the seeds its working corpus gets, see FUZZ SEEDS), DIR/<target>.dict and
              DIR/<target>.options (its -max_len) when it has them. Used by
              .clusterfuzzlite/build.sh.

    crash     The OpenCode doctor's crash test: `opencode repair` runs killed at random write
              steps and by SIGKILL, each checked (every file old or new, undo restores the
              original), for the JSON tree and opencode.db.
        --runs N              runs per store [default: 120]
        --seed N              repeat a run sequence (the seed is printed)

    mutants [--crate guard|prevent|recover ...] [--shard K/N] [--list] [--iterate]
              Mutation testing with cargo-mutants (not part of verify: it takes hours), one run per
              crate, each crate's mutants tested by its own tests, in place (the tests read
              ../shared; cargo-mutants puts every file back; proptest's failure persistence is
              off, or a mutant's failing case would be written into the tree). Settings and
              exclusions, each with its reason, are in .cargo/mutants.toml (the `mutants`
              profile, timeouts). Results go to
              target/mutants-out/<crate>[/shard-K-of-N]/mutants.out (missed.txt, caught.txt,
              timeout.txt, unviable.txt, a log per mutant). Ends with a table per crate: mutants,
              caught, missed, timeout, unviable, and score = caught / (caught + missed); fails
              when a crate's complete result (unsharded, or all N shards run) is below 85%.
              Installs nothing: needs `cargo install cargo-mutants --locked`.
        --crate NAME          guard, prevent or recover; repeat or comma-separate [default: all]
        --shard K/N           only shard K of N (K from 0): every N-th mutant, so a shard is a
                              sample of the crate; the table adds the shards run so far
        --list                count the mutants per file and crate, test nothing (the list is
                              written to target/mutants-out/<crate>/list.txt)
        --iterate             test again, by name, only the mutants the last run of the same
                              crate and shard missed or timed out on; its caught and unviable
                              ones are carried into the table (for checking new tests quickly)

    help      This text (also -h, --help, and --help after any command).

FUZZ MODES:
    Default: `cargo fuzz ... -s none` on the stable toolchain: coverage-guided libFuzzer without a
    sanitizer, release build with debug assertions. With --asan: `cargo +nightly fuzz -s address`
    when a nightly toolchain is installed, otherwise RUSTC_BOOTSTRAP=1 on stable (after deleting
    the fuzz target dir's .rustc_info.json, where cargo caches a failed probe). The chosen mode
    and the reason are always printed.

FUZZ SEEDS:
    fuzz/corpus/<target>/ (gitignored) is seeded from corpus/<target>/, corpus/fuzz/<target>/,
    the directories listed for the target under [package.metadata.xtask.seeds] in
    fuzz/Cargo.toml, and corpus/regressions/<target>-*. Files over 256 KiB are left out; a
    target with a -max_len under [package.metadata.xtask.max_len] sees longer seeds truncated.
    fuzz/dicts/<target>.dict, when present, is passed as -dict=.

ENVIRONMENT:
    CI=true             shortens fuzzing when needed to stay within the CI budget
    CARGO_TARGET_DIR    honoured; the fuzz workspace then builds in $CARGO_TARGET_DIR/fuzz
";

/// Command-line arguments, consumed as they are recognised.
struct Args {
    /// What is left to parse.
    rest: Vec<String>,
}

impl Args {
    /// Removes a boolean flag; true when it was present.
    fn flag(&mut self, name: &str) -> bool {
        let before = self.rest.len();
        self.rest.retain(|a| a != name);
        self.rest.len() != before
    }

    /// Removes `--name VALUE` or `--name=VALUE` and parses the value as a number.
    fn number<T: std::str::FromStr>(&mut self, name: &str) -> Result<Option<T>> {
        let prefix = format!("{name}=");
        let Some(i) = self
            .rest
            .iter()
            .position(|a| a == name || a.starts_with(&prefix))
        else {
            return Ok(None);
        };
        let arg = self.rest.remove(i);
        let value = match arg.strip_prefix(&prefix) {
            Some(v) => v.to_owned(),
            None if i < self.rest.len() => self.rest.remove(i),
            None => return Err(fail(format!("{name} needs a value"))),
        };
        value
            .parse()
            .map(Some)
            .map_err(|_| fail(format!("{name}: `{value}` is not a valid number")))
    }

    /// Removes every `--name VALUE` and `--name=VALUE` and returns the values in order.
    fn values(&mut self, name: &str) -> Result<Vec<String>> {
        let prefix = format!("{name}=");
        let mut values = Vec::new();
        while let Some(i) = self
            .rest
            .iter()
            .position(|a| a == name || a.starts_with(&prefix))
        {
            let arg = self.rest.remove(i);
            match arg.strip_prefix(&prefix) {
                Some(v) => values.push(v.to_owned()),
                None if i < self.rest.len() => values.push(self.rest.remove(i)),
                None => return Err(fail(format!("{name} needs a value"))),
            }
        }
        Ok(values)
    }

    /// Takes at most one positional argument and refuses anything left over.
    fn finish(self, positional: bool) -> Result<Option<String>> {
        let mut rest = self.rest.into_iter();
        let first = rest.next();
        if let Some(a) = &first
            && (a.starts_with('-') || !positional)
        {
            return Err(fail(format!(
                "unexpected argument `{a}` (see cargo xtask --help)"
            )));
        }
        if let Some(a) = rest.next() {
            return Err(fail(format!(
                "unexpected argument `{a}` (see cargo xtask --help)"
            )));
        }
        Ok(first)
    }
}

/// The workspace root: the parent of this crate's directory.
fn project_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_owned()
}

/// Parses the command line and runs the command.
fn run(argv: Vec<String>) -> Result<()> {
    let mut argv = argv.into_iter();
    let command = argv.next();
    let mut args = Args {
        rest: argv.collect(),
    };
    if args.flag("--help") || args.flag("-h") {
        print!("{HELP}");
        return Ok(());
    }
    let root = project_root();
    match command.as_deref() {
        None | Some("help" | "--help" | "-h") => {
            print!("{HELP}");
            Ok(())
        }
        Some("verify") => {
            let fuzz_seconds = args.number("--fuzz-seconds")?;
            let opts = verify::VerifyOptions {
                quick: args.flag("--quick"),
                skip_fuzz: args.flag("--skip-fuzz"),
                asan: args.flag("--asan"),
                drop_test_build: args.flag("--drop-test-build"),
                fuzz_seconds_explicit: fuzz_seconds.is_some(),
                fuzz_seconds: fuzz_seconds.unwrap_or(verify::FUZZ_SECONDS),
                proptest_cases: args
                    .number("--proptest-cases")?
                    .unwrap_or(verify::INVARIANT_PROPTEST_CASES),
            };
            args.finish(false)?;
            verify::verify(&root, &opts)
        }
        Some("fuzz") => {
            let opts = fuzz::CampaignOptions {
                seconds: args.number("--time")?.unwrap_or(600),
                jobs: args.number("--jobs")?.unwrap_or(1).max(1),
                asan: args.flag("--asan"),
                target: None,
            };
            let target = args.finish(true)?;
            fuzz::campaign(&root, &fuzz::CampaignOptions { target, ..opts })
        }
        Some("crash") => {
            let runs = args.number("--runs")?.unwrap_or(crash::RUNS);
            let seed = args.number("--seed")?;
            args.finish(false)?;
            crash::crash(&root, runs, seed)
        }
        Some("rules") => {
            let check = args.flag("--check");
            args.finish(false)?;
            rules::rules(&root, check)
        }
        Some("corpus") => {
            let opts = fuzz::CorpusOptions {
                max_bytes: args.number("--max-bytes")?.unwrap_or(8192),
                max_files: args.number("--max-files")?.unwrap_or(64),
                asan: args.flag("--asan"),
                target: None,
            };
            let target = args.finish(true)?;
            fuzz::refresh_corpus(&root, &fuzz::CorpusOptions { target, ..opts })
        }
        Some("mutants") => {
            let opts = mutants::MutantsOptions {
                crates: mutants::select_crates(&args.values("--crate")?)?,
                shard: match args.values("--shard")?.as_slice() {
                    [] => None,
                    [one] => Some(mutants::Shard::parse(one)?),
                    _ => return Err(fail("--shard is given once")),
                },
                list: args.flag("--list"),
                iterate: args.flag("--iterate"),
            };
            args.finish(false)?;
            mutants::mutants(&root, &opts)
        }
        Some("seeds") => {
            let Some(out) = args.finish(true)? else {
                return Err(fail("seeds needs a directory (see cargo xtask --help)"));
            };
            fuzz::export_seeds(&root, Path::new(&out))
        }
        Some("publish") => {
            let build = !args.flag("--no-build");
            args.finish(false)?;
            publish::publish(&root, build)
        }
        Some(other) => Err(fail(format!(
            "unknown command `{other}` (see cargo xtask --help)"
        ))),
    }
}

/// Entry point: runs the command and turns an error into a message and exit code 1.
fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<Reported>() => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds `Args` from literals.
    fn args(list: &[&str]) -> Args {
        Args {
            rest: list.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn numbers_take_both_spellings_and_reject_garbage() -> Result<()> {
        let mut a = args(&["--time", "30", "--jobs=2", "parse_roundtrip"]);
        assert_eq!(a.number::<u64>("--time")?, Some(30));
        assert_eq!(a.number::<u32>("--jobs")?, Some(2));
        assert_eq!(a.number::<u32>("--absent")?, None);
        assert_eq!(a.finish(true)?, Some("parse_roundtrip".to_owned()));
        assert!(args(&["--time", "soon"]).number::<u64>("--time").is_err());
        assert!(args(&["--time"]).number::<u64>("--time").is_err());
        let mut a = args(&["--crate", "guard", "--list", "--crate=recover,prevent"]);
        assert_eq!(a.values("--crate")?, ["guard", "recover,prevent"]);
        assert_eq!(a.values("--crate")?, Vec::<String>::new());
        assert!(a.flag("--list"));
        assert!(args(&["--crate"]).values("--crate").is_err());
        Ok(())
    }

    #[test]
    fn leftovers_are_refused() {
        assert!(args(&["--bogus"]).finish(true).is_err());
        assert!(args(&["a", "b"]).finish(true).is_err());
        assert!(args(&["a"]).finish(false).is_err());
        let mut a = args(&["--quick"]);
        assert!(a.flag("--quick") && !a.flag("--quick"));
    }

    #[test]
    fn unknown_commands_are_errors() {
        assert!(run(vec!["frobnicate".to_owned()]).is_err());
        assert!(run(vec!["verify".to_owned(), "--nope".to_owned()]).is_err());
    }
}
