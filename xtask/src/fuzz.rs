//! cargo-fuzz plumbing shared by `verify`, `fuzz` and `corpus`: finding targets, choosing the
//! sanitizer mode, seeding working corpora, running libFuzzer, and turning crashes into
//! regression inputs.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::cmd::{Cmd, fmt_duration, fmt_status};
use crate::parse::{FuzzManifest, FuzzStats, content_hash, is_fuzz_line};
use crate::{Result, fail};

/// The directory, under the fuzz workspace's target directory, of the targets built without
/// comparison tracing.
pub const NO_TRACE_COMPARES_DIR: &str = "no-trace-compares";

/// Seed files bigger than this are left out of working corpora (libFuzzer's `-max_len` follows
/// the largest input, and huge inputs slow every execution).
pub const MAX_SEED_BYTES: u64 = 256 * 1024;

/// RSS limit passed to libFuzzer, in MB.
pub const RSS_LIMIT_MB: u32 = 2048;

/// Per-input timeout passed to libFuzzer, in seconds (the work is linear; a slow input is a bug).
pub const INPUT_TIMEOUT_SECS: u32 = 30;

/// Reads `fuzz/Cargo.toml`; `None` when the fuzz crate does not exist.
pub fn load_manifest(root: &Path) -> Result<Option<FuzzManifest>> {
    let path = root.join("fuzz/Cargo.toml");
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(FuzzManifest::parse(&text))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(fail(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Picks the targets to work on: all of them, or the one named (which must exist).
pub fn select_targets(manifest: &FuzzManifest, only: Option<&str>) -> Result<Vec<String>> {
    match only {
        None => Ok(manifest.targets.clone()),
        Some(name) if manifest.targets.iter().any(|t| t == name) => Ok(vec![name.to_owned()]),
        Some(name) => Err(fail(format!(
            "no fuzz target `{name}` in fuzz/Cargo.toml (targets: {})",
            if manifest.targets.is_empty() {
                "none yet".into()
            } else {
                manifest.targets.join(", ")
            }
        ))),
    }
}

/// How cargo-fuzz is invoked: which toolchain and which sanitizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `cargo fuzz ... -s none` on the current (stable) toolchain: coverage-guided, no sanitizer.
    Plain,
    /// `cargo +nightly fuzz ... -s address`.
    NightlyAsan,
    /// `RUSTC_BOOTSTRAP=1 cargo fuzz ... -s address` on stable (officially unsupported switch).
    BootstrapAsan,
}

/// The chosen mode plus the environment that shapes every cargo-fuzz command.
#[derive(Clone, Debug)]
pub struct Fuzzer {
    /// Workspace root (cargo-fuzz runs from here and finds `fuzz/`).
    pub root: PathBuf,
    /// Toolchain and sanitizer.
    pub mode: Mode,
    /// Why that mode was chosen, for the log.
    pub reason: String,
    /// Target dir of the fuzz workspace when `CARGO_TARGET_DIR` is set (kept apart from the main one).
    target_dir: Option<PathBuf>,
    /// What `fuzz/Cargo.toml` says about each target (its `-max_len`).
    manifest: FuzzManifest,
}

impl Fuzzer {
    /// Chooses the mode: plain unless `asan` was asked for; then nightly when installed, else
    /// `RUSTC_BOOTSTRAP=1` (after deleting cargo's cached, possibly failed, target-info probe).
    ///
    /// The fuzz workspace builds in `$CARGO_TARGET_DIR/fuzz` when that variable is set.
    pub fn new(root: &Path, asan: bool) -> Result<Fuzzer> {
        let cargo_target_dir = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from);
        Fuzzer::in_target_dir(root, asan, cargo_target_dir)
    }

    /// Like [`Fuzzer::new`], with the main `CARGO_TARGET_DIR` given instead of read from the
    /// environment (`None`: unset), so that what the commands look like does not depend on the
    /// caller's environment.
    fn in_target_dir(root: &Path, asan: bool, cargo_target_dir: Option<PathBuf>) -> Result<Fuzzer> {
        let target_dir = cargo_target_dir.map(|d| d.join("fuzz"));
        let (mode, reason) = if !asan {
            (
                Mode::Plain,
                "default: `-s none` works on stable (AddressSanitizer needs nightly's \
                 -Zsanitizer and buys little in safe Rust); pass --asan for it"
                    .to_owned(),
            )
        } else if Cmd::new(root, "rustup")
            .args(["run", "nightly", "rustc", "--version"])
            .succeeds()
        {
            (
                Mode::NightlyAsan,
                "--asan and a nightly toolchain is installed".to_owned(),
            )
        } else {
            (
                Mode::BootstrapAsan,
                "--asan but no nightly toolchain: using RUSTC_BOOTSTRAP=1 on stable \
                 (unsupported switch)"
                    .to_owned(),
            )
        };
        let fuzzer = Fuzzer {
            root: root.to_owned(),
            mode,
            reason,
            target_dir,
            manifest: FuzzManifest::default(),
        };
        if fuzzer.mode != Mode::Plain {
            fuzzer.forget_rustc_probe()?;
        }
        Ok(fuzzer)
    }

    /// Takes each target's `-max_len` and build flags from the manifest.
    pub fn with_limits(mut self, manifest: &FuzzManifest) -> Fuzzer {
        self.manifest = manifest.clone();
        self
    }

    /// Deletes `<fuzz target dir>/.rustc_info.json`: cargo caches a failed `-Zsanitizer` probe
    /// there and its cache key ignores `RUSTC_BOOTSTRAP` (rust-anchors.md §3.5).
    fn forget_rustc_probe(&self) -> Result<()> {
        let base = self.base_target_dir();
        for dir in [base.clone(), base.join(NO_TRACE_COMPARES_DIR)] {
            let probe = dir.join(".rustc_info.json");
            match fs::remove_file(&probe) {
                Ok(()) => println!("fuzz: deleted {} (cached rustc probe)", probe.display()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(fail(format!("cannot delete {}: {e}", probe.display()))),
            }
        }
        Ok(())
    }

    /// One line for the log: which mode and why.
    pub fn describe(&self) -> String {
        let what = match self.mode {
            Mode::Plain => "coverage-guided libFuzzer, no sanitizer (-s none)",
            Mode::NightlyAsan => "AddressSanitizer on nightly (cargo +nightly fuzz -s address)",
            Mode::BootstrapAsan => "AddressSanitizer on stable via RUSTC_BOOTSTRAP=1 (-s address)",
        };
        format!("fuzz mode: {what}; because {}", self.reason)
    }

    /// The fuzz workspace's target directory: `$CARGO_TARGET_DIR/fuzz`, else `fuzz/target`.
    fn base_target_dir(&self) -> PathBuf {
        self.target_dir
            .clone()
            .unwrap_or_else(|| self.root.join("fuzz/target"))
    }

    /// `cargo fuzz <sub>` for `target` with the flags its build takes: [`Fuzzer::cmd`], then,
    /// for a target `fuzz/Cargo.toml` builds without comparison tracing,
    /// `--no-trace-compares --target-dir <fuzz target dir>/no-trace-compares` (a directory of
    /// their own, so that the two builds do not undo each other's).
    pub fn target_cmd(&self, sub: &str, target: &str) -> Cmd {
        let cmd = self.cmd(sub);
        if self.manifest.traces_compares(target) {
            return cmd;
        }
        let dir = self.base_target_dir().join(NO_TRACE_COMPARES_DIR);
        cmd.args([
            "--no-trace-compares".to_owned(),
            "--target-dir".to_owned(),
            dir.display().to_string(),
        ])
    }

    /// `cargo [+nightly] fuzz <sub> -s <sanitizer> -a`: release build with debug assertions;
    /// in the plain mode, with the fuzz crate's `fast-alloc` feature (mimalloc as the global
    /// allocator; under AddressSanitizer the system allocator stays, so ASan sees every
    /// allocation).
    pub fn cmd(&self, sub: &str) -> Cmd {
        let mut cmd = match self.mode {
            Mode::NightlyAsan => Cmd::rustup_cargo(&self.root, "nightly"),
            Mode::Plain | Mode::BootstrapAsan => Cmd::cargo(&self.root),
        };
        if self.mode == Mode::BootstrapAsan {
            cmd = cmd.env("RUSTC_BOOTSTRAP", "1");
        }
        if let Some(dir) = &self.target_dir {
            cmd = cmd.env("CARGO_TARGET_DIR", dir.display().to_string());
        }
        let sanitizer = if self.mode == Mode::Plain {
            "none"
        } else {
            "address"
        };
        let cmd = cmd.args(["fuzz", sub, "-s", sanitizer, "--debug-assertions"]);
        if self.mode == Mode::Plain {
            cmd.args(["--features", "fast-alloc"])
        } else {
            cmd
        }
    }

    /// The builds that make every target: `cargo fuzz build` (every target, with comparison
    /// tracing), then one build without it for each target `fuzz/Cargo.toml` sets so. Each with
    /// its label for the log.
    pub fn build_cmds(&self) -> Vec<(String, Cmd)> {
        let mut cmds = vec![("fuzz: build".to_owned(), self.cmd("build"))];
        for target in &self.manifest.targets {
            if !self.manifest.traces_compares(target) {
                cmds.push((
                    format!("fuzz: build {target} (no trace-compares)"),
                    self.target_cmd("build", target).arg(target),
                ));
            }
        }
        cmds
    }

    /// `cargo fuzz run <target> fuzz/corpus/<target> -- -max_total_time=N ...` (with `-fork=jobs`
    /// when `jobs > 1`, and the target's `-max_len` when the manifest sets one: libFuzzer then
    /// truncates longer seeds to that length).
    pub fn run_cmd(&self, target: &str, seconds: u64, jobs: u32) -> Cmd {
        let mut cmd = self.target_cmd("run", target);
        if jobs > 1 {
            cmd = cmd.args(["--jobs".to_owned(), jobs.to_string()]);
        }
        cmd = cmd
            .arg(target)
            .arg(format!("fuzz/corpus/{target}"))
            .arg("--");
        cmd = cmd.args([
            format!("-max_total_time={seconds}"),
            format!("-rss_limit_mb={RSS_LIMIT_MB}"),
            format!("-timeout={INPUT_TIMEOUT_SECS}"),
            "-print_final_stats=1".to_owned(),
        ]);
        if let Some(n) = self.manifest.max_len_for(target) {
            cmd = cmd.arg(format!("-max_len={n}"));
        }
        let dict = format!("fuzz/dicts/{target}.dict");
        if self.root.join(&dict).is_file() {
            cmd = cmd.arg(format!("-dict={dict}"));
        }
        cmd
    }

    /// `cargo fuzz run <target> <input>`: replays one input (how a crash is reproduced).
    pub fn replay_cmd(&self, target: &str, input: &str) -> Cmd {
        self.target_cmd("run", target).arg(target).arg(input)
    }

    /// `cargo fuzz tmin <target> <artifact>`: minimises a crashing input.
    pub fn tmin_cmd(&self, target: &str, artifact: &str) -> Cmd {
        self.target_cmd("tmin", target)
            .args([target, artifact, "--runs", "1000"])
    }

    /// `cargo fuzz cmin <target> fuzz/corpus/<target>`: minimises the working corpus in place.
    pub fn cmin_cmd(&self, target: &str) -> Cmd {
        self.target_cmd("cmin", target)
            .arg(target)
            .arg(format!("fuzz/corpus/{target}"))
    }

    /// Runs a fuzz target for `seconds`, then saves any crash as a regression input.
    pub fn run(&self, target: &str, seconds: u64, jobs: u32) -> Result<FuzzRun> {
        let before = artifact_names(&self.root, target);
        let cmd = self.run_cmd(target, seconds, jobs);
        println!("fuzz: {}", cmd.display());
        let out = cmd.run(is_fuzz_line)?;
        let stats = FuzzStats::from_lines(&out.lines);
        let mut run = FuzzRun {
            target: target.to_owned(),
            ok: out.status.success(),
            status: fmt_status(out.status),
            stats,
            elapsed: out.elapsed,
            regressions: Vec::new(),
            reproduce: cmd.display(),
        };
        if !run.ok {
            let after = artifact_names(&self.root, target);
            for name in after.difference(&before) {
                if name.starts_with("minimized-from-") {
                    continue;
                }
                let saved = self.save_regression(target, name)?;
                run.reproduce = self
                    .replay_cmd(target, &saved.display().to_string())
                    .display();
                run.regressions.push(saved);
            }
        }
        Ok(run)
    }

    /// Minimises a new artifact (crashes only), copies it to `corpus/regressions/<target>-<hash>`
    /// and prints the test a human still has to write.
    fn save_regression(&self, target: &str, name: &str) -> Result<PathBuf> {
        let rel_artifact = format!("fuzz/artifacts/{target}/{name}");
        let mut source = self.root.join(&rel_artifact);
        if name.starts_with("crash-") {
            let started = SystemTime::now();
            let tmin = self.tmin_cmd(target, &rel_artifact);
            println!("fuzz: minimising {rel_artifact}: {}", tmin.display());
            match tmin.run(|_| false) {
                Ok(out) if out.status.success() => {
                    if let Some(min) = newest_minimized(&self.root, target, started) {
                        source = min;
                    }
                }
                Ok(out) => println!(
                    "fuzz: tmin failed ({}); keeping the raw artifact",
                    fmt_status(out.status)
                ),
                Err(e) => println!("fuzz: tmin could not run ({e}); keeping the raw artifact"),
            }
        } else {
            println!("fuzz: {rel_artifact} is not a crash (timeout, oom, leak); kept unminimised");
        }
        let bytes = fs::read(&source)
            .map_err(|e| fail(format!("cannot read {}: {e}", source.display())))?;
        let hash = content_hash(&bytes);
        let dir = self.root.join("corpus/regressions");
        fs::create_dir_all(&dir)?;
        let file = format!("{target}-{hash}");
        fs::write(dir.join(&file), &bytes)?;
        let rel = format!("corpus/regressions/{file}");
        let short = &hash[..8];
        println!(
            "\nfuzz: saved regression input {rel} ({} bytes, from {})\n\
             reproduce: {}\n\
             The regression harness replays corpus/regressions/ on every `cargo test`; still write \
             the test that names the bug\n(one file per regression), in the crate that had it:\n\n\
             \x20   /// Found by fuzzing `{target}`: <say what went wrong and what is right>.\n\
             \x20   #[test]\n\
             \x20   fn regression_{target}_{short}() {{\n\
             \x20       let input = include_bytes!(\"../../../{rel}\");\n\
             \x20       // call what the `{target}` fuzz target calls, and assert the correct behaviour\n\
             \x20   }}\n",
            bytes.len(),
            source.strip_prefix(&self.root).unwrap_or(&source).display(),
            self.replay_cmd(target, &rel).display(),
        );
        Ok(PathBuf::from(rel))
    }
}

/// The outcome of one `cargo fuzz run`.
#[derive(Debug)]
pub struct FuzzRun {
    /// Target name.
    pub target: String,
    /// Whether libFuzzer exited cleanly (no crash, timeout or OOM).
    pub ok: bool,
    /// The exit status, described.
    pub status: String,
    /// What libFuzzer reported.
    pub stats: FuzzStats,
    /// Wall time, including the (usually no-op) build.
    pub elapsed: Duration,
    /// Regression inputs saved from new artifacts.
    pub regressions: Vec<PathBuf>,
    /// The command that reproduces the failure (the run, or a replay of the saved input).
    pub reproduce: String,
}

/// Names of the files in `fuzz/artifacts/<target>/`.
fn artifact_names(root: &Path, target: &str) -> BTreeSet<String> {
    let dir = root.join("fuzz/artifacts").join(target);
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The newest `minimized-from-*` artifact written after `since`.
fn newest_minimized(root: &Path, target: &str, since: SystemTime) -> Option<PathBuf> {
    let dir = root.join("fuzz/artifacts").join(target);
    fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("minimized-from-")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .filter(|(modified, _)| *modified >= since)
        .max()
        .map(|(_, path)| path)
}

/// What seeding a working corpus did.
#[derive(Debug, Default)]
pub struct SeedReport {
    /// Seed files copied (or already present).
    pub copied: usize,
    /// Seed files skipped because they exceed [`MAX_SEED_BYTES`].
    pub too_big: usize,
    /// Source directories that exist.
    pub sources: Vec<String>,
}

/// Copies seeds into `fuzz/corpus/<target>/` (gitignored), named by content hash: files from
/// `corpus/<target>/`, `corpus/fuzz/<target>/`, the directories listed for the target in
/// `[package.metadata.xtask.seeds]`, and `corpus/regressions/<target>-*`.
pub fn seed(root: &Path, manifest: &FuzzManifest, target: &str) -> Result<SeedReport> {
    seed_into(
        root,
        manifest,
        target,
        &root.join("fuzz/corpus").join(target),
    )
}

/// [`seed`] into `dest` instead of the working corpus.
pub fn seed_into(
    root: &Path,
    manifest: &FuzzManifest,
    target: &str,
    dest: &Path,
) -> Result<SeedReport> {
    fs::create_dir_all(dest)?;
    let mut dirs = vec![format!("corpus/{target}"), format!("corpus/fuzz/{target}")];
    dirs.extend(manifest.seeds_for(target).iter().cloned());
    let mut files = Vec::new();
    let mut report = SeedReport::default();
    for dir in &dirs {
        let path = root.join(dir);
        if path.is_dir() {
            report.sources.push(dir.clone());
            walk_files(&path, &mut files)?;
        }
    }
    let prefix = format!("{target}-");
    let regressions = root.join("corpus/regressions");
    if let Ok(entries) = fs::read_dir(&regressions) {
        let before = files.len();
        files.extend(
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .filter(|p| p.is_file()),
        );
        if files.len() > before {
            report
                .sources
                .push(format!("corpus/regressions/{target}-*"));
        }
    }
    for file in files {
        if fs::metadata(&file)?.len() > MAX_SEED_BYTES {
            report.too_big += 1;
            continue;
        }
        let bytes = fs::read(&file)?;
        let out = dest.join(format!("seed-{}", content_hash(&bytes)));
        if !out.exists() {
            fs::write(out, &bytes)?;
        }
        report.copied += 1;
    }
    Ok(report)
}

/// `cargo xtask seeds DIR`: what a fuzzing service (ClusterFuzzLite, OSS-Fuzz) needs beside each
/// target's binary: `DIR/<target>/` holds the seeds the working corpus is seeded with (the same
/// choice as [`seed`]), `DIR/<target>.dict` the target's dictionary and `DIR/<target>.options`
/// its libFuzzer options (`-max_len`), when it has them. `.clusterfuzzlite/build.sh` zips each
/// directory into `$OUT/<target>_seed_corpus.zip`.
pub fn export_seeds(root: &Path, out: &Path) -> Result<()> {
    let Some(manifest) = load_manifest(root)? else {
        return Err(fail("fuzz/Cargo.toml does not exist"));
    };
    fs::create_dir_all(out)?;
    for target in &manifest.targets {
        let report = seed_into(root, &manifest, target, &out.join(target))?;
        let mut extras = Vec::new();
        let dict = root.join("fuzz/dicts").join(format!("{target}.dict"));
        if dict.is_file() {
            fs::copy(&dict, out.join(format!("{target}.dict")))?;
            extras.push(format!("{target}.dict"));
        }
        if let Some(n) = manifest.max_len_for(target) {
            fs::write(out.join(format!("{target}.options")), options_file(n))?;
            extras.push(format!("{target}.options"));
        }
        println!(
            "seeds: {}/{target}/: {} file(s) from {}{}",
            out.display(),
            report.copied,
            report.sources.join(", "),
            if extras.is_empty() {
                String::new()
            } else {
                format!("; {}", extras.join(", "))
            }
        );
    }
    Ok(())
}

/// A libFuzzer options file (the format OSS-Fuzz and ClusterFuzzLite read beside a binary).
pub fn options_file(max_len: u64) -> String {
    format!("[libfuzzer]\nmax_len = {max_len}\n")
}

/// Collects every regular file under `dir`, recursively, in a stable order.
fn walk_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk_files(&path, out)?;
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// Number of files and total bytes directly in `dir`.
pub fn dir_size(dir: &Path) -> (usize, u64) {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .filter(|m| m.is_file())
                .fold((0, 0), |(n, b), m| (n + 1, b + m.len()))
        })
        .unwrap_or((0, 0))
}

/// Makes sure `cargo fuzz` works, installing cargo-fuzz from crates.io when it is missing.
pub fn ensure_cargo_fuzz(root: &Path) -> Result<()> {
    if let Some(version) = Cmd::cargo(root).args(["fuzz", "--version"]).stdout_text() {
        println!("fuzz: using {version}");
        return Ok(());
    }
    let install = Cmd::cargo(root).args(["install", "cargo-fuzz", "--locked"]);
    println!(
        "fuzz: cargo-fuzz is missing; installing it: {}",
        install.display()
    );
    let out = install.run(|_| false)?;
    if !out.status.success() {
        return Err(fail(format!(
            "installing cargo-fuzz failed ({}); reproduce with: {}",
            fmt_status(out.status),
            install.display()
        )));
    }
    println!(
        "fuzz: installed cargo-fuzz in {}",
        fmt_duration(out.elapsed)
    );
    Ok(())
}

/// Options of `cargo xtask fuzz`.
#[derive(Debug)]
pub struct CampaignOptions {
    /// One target, or all.
    pub target: Option<String>,
    /// Seconds per target.
    pub seconds: u64,
    /// Parallel libFuzzer jobs (`-fork=N`).
    pub jobs: u32,
    /// Use AddressSanitizer.
    pub asan: bool,
}

/// `cargo xtask fuzz`: seeds, fuzzes each selected target for the given time, minimises crashes
/// into `corpus/regressions/`, and prints executions, corpus size and coverage.
pub fn campaign(root: &Path, opts: &CampaignOptions) -> Result<()> {
    let Some(manifest) = load_manifest(root)? else {
        return Err(fail("fuzz/Cargo.toml does not exist"));
    };
    let targets = select_targets(&manifest, opts.target.as_deref())?;
    if targets.is_empty() {
        println!("fuzz: fuzz/Cargo.toml lists no [[bin]] targets yet; nothing to fuzz");
        return Ok(());
    }
    ensure_cargo_fuzz(root)?;
    let fuzzer = Fuzzer::new(root, opts.asan)?.with_limits(&manifest);
    println!("{}", fuzzer.describe());
    let start = Instant::now();
    let mut rows = Vec::new();
    for target in &targets {
        let report = seed(root, &manifest, target)?;
        print_seed_report(target, &report);
        let corpus_dir = root.join("fuzz/corpus").join(target);
        let before = dir_size(&corpus_dir);
        let run = fuzzer.run(target, opts.seconds, opts.jobs)?;
        let after = dir_size(&corpus_dir);
        rows.push((run, before, after));
    }
    println!(
        "\nfuzz campaign: {} target(s), {}",
        rows.len(),
        fmt_duration(start.elapsed())
    );
    println!(
        "  {:<24} {:>8} {:>12} {:>8} {:>7} {:>8}  {:<28} result",
        "target", "time", "execs", "exec/s", "cov", "ft", "corpus files (bytes)"
    );
    let mut failed = 0;
    for (run, before, after) in &rows {
        let opt = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
        let result = if run.ok {
            "ok".to_owned()
        } else {
            failed += 1;
            format!(
                "FAILED ({}), {} regression input(s) saved",
                run.status,
                run.regressions.len()
            )
        };
        println!(
            "  {:<24} {:>8} {:>12} {:>8} {:>7} {:>8}  {:<28} {result}",
            run.target,
            fmt_duration(run.elapsed),
            opt(run.stats.execs),
            opt(run.stats.exec_per_sec),
            opt(run.stats.cov),
            opt(run.stats.ft),
            format!("{} ({}) -> {} ({})", before.0, before.1, after.0, after.1),
        );
    }
    for (run, _, _) in rows.iter().filter(|(r, _, _)| !r.ok) {
        println!("  reproduce {}: {}", run.target, run.reproduce);
    }
    if failed > 0 {
        return Err(fail(format!("{failed} target(s) found a failure")));
    }
    Ok(())
}

/// Prints where a target's seeds came from.
pub fn print_seed_report(target: &str, report: &SeedReport) {
    let sources = if report.sources.is_empty() {
        "no seed dirs yet".into()
    } else {
        report.sources.join(", ")
    };
    let big = if report.too_big > 0 {
        format!(
            ", {} skipped (> {} KiB)",
            report.too_big,
            MAX_SEED_BYTES / 1024
        )
    } else {
        String::new()
    };
    println!(
        "fuzz: seeded fuzz/corpus/{target}/ with {} file(s) from {sources}{big}",
        report.copied
    );
}

/// Options of `cargo xtask corpus`.
#[derive(Debug)]
pub struct CorpusOptions {
    /// One target, or all.
    pub target: Option<String>,
    /// Largest file kept in `corpus/fuzz/<target>/`.
    pub max_bytes: u64,
    /// Most files kept per target.
    pub max_files: usize,
    /// Use AddressSanitizer.
    pub asan: bool,
}

/// `cargo xtask corpus`: seeds and `cargo fuzz cmin`s each working corpus, then replaces the
/// checked-in seeds in `corpus/fuzz/<target>/` with its smallest files (capped in size and count).
pub fn refresh_corpus(root: &Path, opts: &CorpusOptions) -> Result<()> {
    let Some(manifest) = load_manifest(root)? else {
        return Err(fail("fuzz/Cargo.toml does not exist"));
    };
    let targets = select_targets(&manifest, opts.target.as_deref())?;
    if targets.is_empty() {
        println!("corpus: fuzz/Cargo.toml lists no [[bin]] targets yet; nothing to minimise");
        return Ok(());
    }
    ensure_cargo_fuzz(root)?;
    let fuzzer = Fuzzer::new(root, opts.asan)?.with_limits(&manifest);
    println!("{}", fuzzer.describe());
    for target in &targets {
        let report = seed(root, &manifest, target)?;
        print_seed_report(target, &report);
        let work = root.join("fuzz/corpus").join(target);
        let before = dir_size(&work);
        let cmin = fuzzer.cmin_cmd(target);
        println!("corpus: {}", cmin.display());
        let out = cmin.run(|_| false)?;
        if !out.status.success() {
            return Err(fail(format!(
                "cmin of `{target}` failed ({}); reproduce with: {}",
                fmt_status(out.status),
                cmin.display()
            )));
        }
        let after = dir_size(&work);
        let mut files: Vec<(u64, PathBuf)> = fs::read_dir(&work)?
            .filter_map(|e| e.ok())
            .filter_map(|e| Some((e.metadata().ok()?, e.path())))
            .filter(|(m, _)| m.is_file())
            .map(|(m, p)| (m.len(), p))
            .collect();
        files.sort();
        let small: Vec<&(u64, PathBuf)> = files
            .iter()
            .filter(|(len, _)| *len <= opts.max_bytes)
            .collect();
        let kept: Vec<&(u64, PathBuf)> = small.iter().copied().take(opts.max_files).collect();
        let dest = root.join("corpus/fuzz").join(target);
        fs::create_dir_all(&dest)?;
        for entry in fs::read_dir(&dest)?.filter_map(|e| e.ok()) {
            if entry.path().is_file() {
                fs::remove_file(entry.path())?;
            }
        }
        let mut bytes_kept = 0;
        for (len, path) in &kept {
            let bytes = fs::read(path)?;
            fs::write(dest.join(content_hash(&bytes)), &bytes)?;
            bytes_kept += len;
        }
        println!(
            "corpus: {target}: working corpus {} files ({} bytes) -> cmin {} files ({} bytes); \
             corpus/fuzz/{target}/ now holds {} files ({bytes_kept} bytes); left out {} over {} \
             bytes and {} over the cap of {}",
            before.0,
            before.1,
            after.0,
            after.1,
            kept.len(),
            files.len() - small.len(),
            opts.max_bytes,
            small.len() - kept.len(),
            opts.max_files,
        );
    }
    println!("corpus: review and commit with `git add corpus/fuzz`");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory under the system's temporary directory, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!(
                "xtask-{name}-{}-{:?}",
                std::process::id(),
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default()
            ));
            let _ = fs::remove_dir_all(&dir);
            Scratch(dir)
        }

        fn write(&self, rel: &str, bytes: &[u8]) -> Result<()> {
            let path = self.0.join(rel);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(path, bytes)?;
            Ok(())
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// Each target gets the seeds its working corpus would get (its own dirs, the listed ones,
    /// its regressions; nothing over 256 KiB), and its dictionary and options when it has them.
    #[test]
    fn exported_seeds_are_the_working_corpus_seeds_with_dict_and_options() -> Result<()> {
        let root = Scratch::new("seeds");
        root.write(
            "fuzz/Cargo.toml",
            b"[package.metadata.xtask.seeds]\nalpha = [\"corpus/shared\"]\n\
              [package.metadata.xtask.max_len]\nalpha = 4096\n\
              [[bin]]\nname = \"alpha\"\n[[bin]]\nname = \"beta\"\n",
        )?;
        root.write("corpus/fuzz/alpha/a.txt", b"one")?;
        root.write("corpus/shared/deep/b.json", b"two")?;
        root.write("corpus/shared/huge.bin", &vec![b'x'; 300 * 1024])?;
        root.write("corpus/regressions/alpha-0123", b"three")?;
        root.write("corpus/regressions/beta-4567", b"four")?;
        root.write("fuzz/dicts/beta.dict", b"\"kw\"\n")?;
        let out = root.0.join("out");
        export_seeds(&root.0, &out)?;
        let names = |dir: &str| -> Vec<Vec<u8>> {
            let mut files: Vec<Vec<u8>> = fs::read_dir(out.join(dir))
                .map(|rd| rd.filter_map(|e| fs::read(e.ok()?.path()).ok()).collect())
                .unwrap_or_default();
            files.sort();
            files
        };
        assert_eq!(
            names("alpha"),
            vec![b"one".to_vec(), b"three".to_vec(), b"two".to_vec()]
        );
        assert_eq!(names("beta"), vec![b"four".to_vec()]);
        assert_eq!(
            fs::read_to_string(out.join("alpha.options"))?,
            "[libfuzzer]\nmax_len = 4096\n"
        );
        assert!(!out.join("beta.options").exists());
        assert_eq!(fs::read_to_string(out.join("beta.dict"))?, "\"kw\"\n");
        assert!(!out.join("alpha.dict").exists());
        Ok(())
    }

    /// A target set to `trace_compares = false` is built and run without comparison tracing, in a
    /// target directory of its own; the others keep cargo-fuzz's default; the plain mode asks for
    /// the fast allocator.
    #[test]
    fn targets_without_trace_compares_build_and_run_apart() -> Result<()> {
        let root = Scratch::new("trace-compares");
        let manifest = FuzzManifest::parse(
            "[package.metadata.xtask.trace_compares]\nbeta = false\n\
             [[bin]]\nname = \"alpha\"\n[[bin]]\nname = \"beta\"\n",
        );
        // Both with and without a `CARGO_TARGET_DIR`, whatever the caller's environment holds.
        let outer = root.0.join("outer-target");
        for (cargo_target_dir, env, base) in [
            (None, String::new(), root.0.join("fuzz/target")),
            (
                Some(outer.clone()),
                format!("CARGO_TARGET_DIR={} ", outer.join("fuzz").display()),
                outer.join("fuzz"),
            ),
        ] {
            let fuzzer =
                Fuzzer::in_target_dir(&root.0, false, cargo_target_dir)?.with_limits(&manifest);
            let base = base.join(NO_TRACE_COMPARES_DIR);
            let builds: Vec<(String, String)> = fuzzer
                .build_cmds()
                .into_iter()
                .map(|(label, cmd)| (label, cmd.display()))
                .collect();
            let common = "fuzz build -s none --debug-assertions --features fast-alloc";
            assert_eq!(
                builds,
                vec![
                    ("fuzz: build".to_owned(), format!("{env}cargo {common}")),
                    (
                        "fuzz: build beta (no trace-compares)".to_owned(),
                        format!(
                            "{env}cargo {common} --no-trace-compares --target-dir {} beta",
                            base.display()
                        )
                    ),
                ]
            );
        }
        let fuzzer = Fuzzer::in_target_dir(&root.0, false, None)?.with_limits(&manifest);
        let base = fuzzer.base_target_dir().join(NO_TRACE_COMPARES_DIR);
        let alpha = fuzzer.run_cmd("alpha", 5, 1).display();
        let beta = fuzzer.run_cmd("beta", 5, 1).display();
        assert!(!alpha.contains("--no-trace-compares"), "{alpha}");
        assert!(
            beta.contains(&format!(
                "--no-trace-compares --target-dir {} beta fuzz/corpus/beta",
                base.display()
            )),
            "{beta}"
        );
        assert!(
            fuzzer
                .replay_cmd("beta", "x")
                .display()
                .contains("--no-trace-compares")
        );
        Ok(())
    }
}
