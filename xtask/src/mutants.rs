//! `cargo xtask mutants`: mutation testing of guard, prevent and recover with cargo-mutants.
//!
//! Each crate is mutated on its own (`cargo mutants --package turnkeeper-<crate>`), so its
//! mutants are tested by that package's own tests (cargo-mutants' default) and its results land
//! in a directory of their own: `target/mutants-out/<crate>/mutants.out`, or
//! `target/mutants-out/<crate>/shard-K-of-N/mutants.out` for one shard. The shared settings
//! (profile, timeouts, exclusions, each with its reason) are in `.cargo/mutants.toml`, which
//! `cargo mutants` run by hand reads too.
//!
//! Mutants are tested in place (`--in-place`): the tests read `../shared` beside the checkout,
//! which a copy of the tree in a temporary directory would not see, and the build reuses the
//! `mutants` profile's directory instead of starting cold. cargo-mutants restores every file it
//! mutates, also when interrupted; do not edit the tree while a run is going.
//!
//! The score is caught / (caught + missed), as issue 16 defines it; timeouts and unviable
//! mutants (those that do not build) are counted apart.

use std::path::{Path, PathBuf};

use crate::cmd::{Cmd, fmt_duration, fmt_status, target_dir};
use crate::{Reported, Result, fail};

/// The crates `cargo xtask mutants` covers, by directory name under `crates/`.
pub const CRATES: [&str; 3] = ["guard", "prevent", "recover"];

/// The score each crate must reach (percent), issue 16.
pub const TARGET_SCORE: f64 = 85.0;

/// One shard of a run: `k` of `n`, counted from 0 as cargo-mutants does (`0/4` ... `3/4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0..n`.
    pub k: u32,
    /// How many shards the mutants are split into.
    pub n: u32,
}

impl Shard {
    /// Parses `K/N` with `0 <= K < N`.
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = || fail(format!("--shard: `{text}` is not K/N with 0 <= K < N"));
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if k >= n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// `K/N`, as cargo-mutants takes it.
    fn arg(self) -> String {
        format!("{}/{}", self.k, self.n)
    }

    /// The directory name of this shard's results: `shard-K-of-N`.
    fn dir_name(self) -> String {
        format!("shard-{}-of-{}", self.k, self.n)
    }
}

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutantsOptions {
    /// Crates to mutate, by directory name, in [`CRATES`] order.
    pub crates: Vec<&'static str>,
    /// One shard only.
    pub shard: Option<Shard>,
    /// List the mutants and count them, test nothing.
    pub list: bool,
    /// Test again only the mutants the last run in the same directory missed or timed out on,
    /// by name, and carry its caught and unviable ones into the result (see [`Carried`]).
    pub iterate: bool,
}

/// Turns the `--crate` values (repeated or comma-separated) into crate names in [`CRATES`]
/// order; none means all of them.
pub fn select_crates(values: &[String]) -> Result<Vec<&'static str>> {
    let mut wanted = Vec::new();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let name = v.trim().trim_start_matches("turnkeeper-");
        if !CRATES.contains(&name) {
            return Err(fail(format!(
                "--crate: `{v}` is not one of {}",
                CRATES.join(", ")
            )));
        }
        wanted.push(name);
    }
    Ok(CRATES
        .into_iter()
        .filter(|c| wanted.is_empty() || wanted.contains(c))
        .collect())
}

/// The outcome counts of one run of cargo-mutants (or a sum of shards).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Mutants some test failed on.
    pub caught: u64,
    /// Mutants every test passed on.
    pub missed: u64,
    /// Mutants whose tests ran past the timeout.
    pub timeout: u64,
    /// Mutants that did not build.
    pub unviable: u64,
}

impl Tally {
    /// Reads the counts from a `mutants.out` directory: one mutant a line in `caught.txt`,
    /// `missed.txt`, `timeout.txt` and `unviable.txt` (a missing file counts none), plus what an
    /// `--iterate` run carried from the runs before it ([`Carried`]). A mutant counts once: the
    /// run's own outcome wins over a carried one (cargo-mutants tests a few mutants outside its
    /// `--re` filters, struct-field deletions among them).
    pub fn read(mutants_out: &Path) -> Tally {
        let mut outcome: std::collections::BTreeMap<String, usize> = Default::default();
        // Carried first, so that the run's own files overwrite them.
        let files = [
            (Carried::CAUGHT, 0),
            (Carried::MISSED, 1),
            (Carried::UNVIABLE, 3),
            ("caught.txt", 0),
            ("missed.txt", 1),
            ("timeout.txt", 2),
            ("unviable.txt", 3),
        ];
        let universe = Carried::universe(mutants_out);
        for (file, class) in files {
            for name in lines(&mutants_out.join(file)) {
                if universe.as_ref().is_none_or(|u| u.contains(&name)) {
                    outcome.insert(name, class);
                }
            }
        }
        let count = |class: usize| outcome.values().filter(|c| **c == class).count() as u64;
        Tally {
            caught: count(0),
            missed: count(1),
            timeout: count(2),
            unviable: count(3),
        }
    }

    /// Every mutant tested.
    pub fn total(&self) -> u64 {
        self.caught + self.missed + self.timeout + self.unviable
    }

    /// caught / (caught + missed), in percent; `None` when neither happened.
    pub fn score(&self) -> Option<f64> {
        let judged = self.caught + self.missed;
        (judged > 0).then(|| 100.0 * self.caught as f64 / judged as f64)
    }

    /// Adds another tally (another shard of the same crate).
    fn add(&mut self, other: Tally) {
        self.caught += other.caught;
        self.missed += other.missed;
        self.timeout += other.timeout;
        self.unviable += other.unviable;
    }
}

/// The non-empty lines of a file (none when it cannot be read).
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// What an `--iterate` run takes over from the run before it, in the same directory: the
/// mutants it caught or found unviable (not tested again: a new test cannot make a caught mutant
/// pass, and an unviable one still does not build), and the ones to test again, its missed and
/// timed-out mutants. Written into the new run's `mutants.out` as `xtask_*_before.txt`, so the
/// next `--iterate` carries them on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Carried {
    /// Caught by an earlier run.
    pub caught: Vec<String>,
    /// Unviable in an earlier run.
    pub unviable: Vec<String>,
    /// Missed or timed out last time: tested again.
    pub retest: Vec<String>,
}

impl Carried {
    /// The carried caught mutants, in the new run's directory.
    pub const CAUGHT: &str = "xtask_caught_before.txt";
    /// The carried unviable mutants.
    pub const UNVIABLE: &str = "xtask_unviable_before.txt";
    /// Mutants to test again that the new run did not find (the source changed under them):
    /// counted as missed until a full run.
    pub const MISSED: &str = "xtask_missed_not_found.txt";
    /// The mutants an `--iterate` run was asked to test again.
    pub const RETESTED: &str = "xtask_retested.txt";

    /// After an `--iterate` run, the mutants its result is about: the carried ones and the ones
    /// tested again (cargo-mutants also tests a few mutants outside its `--re` filters, struct
    /// field deletions among them; they belong to other shards and are left out). `None` for a
    /// run without `--iterate`.
    pub fn universe(mutants_out: &Path) -> Option<std::collections::BTreeSet<String>> {
        let files = [Carried::CAUGHT, Carried::UNVIABLE, Carried::RETESTED];
        if !mutants_out.join(Carried::RETESTED).is_file() {
            return None;
        }
        Some(
            files
                .iter()
                .flat_map(|f| lines(&mutants_out.join(f)))
                .collect(),
        )
    }

    /// Reads the last run's `mutants.out`.
    pub fn from_last_run(mutants_out: &Path) -> Carried {
        let names = |files: &[&str]| -> Vec<String> {
            files
                .iter()
                .flat_map(|f| lines(&mutants_out.join(f)))
                .collect()
        };
        let universe = Carried::universe(mutants_out);
        let keep = |v: Vec<String>| -> Vec<String> {
            let mut v: Vec<String> = v
                .into_iter()
                .filter(|n| universe.as_ref().is_none_or(|u| u.contains(n)))
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let caught = keep(names(&["caught.txt", Carried::CAUGHT]));
        let unviable = keep(names(&["unviable.txt", Carried::UNVIABLE]));
        let retest = keep(names(&["missed.txt", "timeout.txt", Carried::MISSED]))
            .into_iter()
            .filter(|n| !caught.contains(n) && !unviable.contains(n))
            .collect();
        Carried {
            caught,
            unviable,
            retest,
        }
    }

    /// The `--re` filters that select exactly the mutants to test again.
    pub fn filters(&self) -> Vec<String> {
        self.retest
            .iter()
            .map(|name| format!("^{}$", regex_escape(name)))
            .collect()
    }

    /// Writes what was carried into the new run's `mutants.out`, with the mutants to test again
    /// that the new run did not test (by name) as missed.
    pub fn write(&self, mutants_out: &Path) -> std::io::Result<()> {
        let tested: Vec<String> = ["caught.txt", "missed.txt", "timeout.txt", "unviable.txt"]
            .iter()
            .flat_map(|f| lines(&mutants_out.join(f)))
            .collect();
        let lost: Vec<String> = self
            .retest
            .iter()
            .filter(|n| !tested.contains(n))
            .cloned()
            .collect();
        for (file, names) in [
            (Carried::CAUGHT, &self.caught),
            (Carried::UNVIABLE, &self.unviable),
            (Carried::MISSED, &lost),
            (Carried::RETESTED, &self.retest),
        ] {
            let mut text = names.join("\n");
            if !text.is_empty() {
                text.push('\n');
            }
            std::fs::write(mutants_out.join(file), text)?;
        }
        Ok(())
    }
}

/// Escapes the characters a regular expression gives a meaning to.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One row of the summary: a crate (or its shards so far) and its counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// What the row is about: `guard`, `prevent shard 2/8`, `prevent (3 of 8 shards)`.
    pub label: String,
    /// Its counts.
    pub tally: Tally,
}

/// The summary table, one line per row, with the score to one decimal and `n/a` when nothing
/// was caught or missed.
pub fn table(rows: &[Row]) -> String {
    let width = rows
        .iter()
        .map(|r| r.label.len())
        .chain([5])
        .max()
        .unwrap_or(5);
    let mut out = format!(
        "{:<width$}  {:>7}  {:>6}  {:>6}  {:>7}  {:>8}  {:>6}\n",
        "crate", "mutants", "caught", "missed", "timeout", "unviable", "score"
    );
    for r in rows {
        let t = r.tally;
        let score = t
            .score()
            .map_or_else(|| "n/a".to_owned(), |s| format!("{s:.1}%"));
        out.push_str(&format!(
            "{:<width$}  {:>7}  {:>6}  {:>6}  {:>7}  {:>8}  {:>6}\n",
            r.label,
            t.total(),
            t.caught,
            t.missed,
            t.timeout,
            t.unviable,
            score
        ));
    }
    out
}

/// Where a crate's results go: `target/mutants-out/<crate>` (`$CARGO_TARGET_DIR` honoured),
/// then `shard-K-of-N` for one shard.
fn out_dir(root: &Path, krate: &str, shard: Option<Shard>) -> PathBuf {
    let dir = target_dir(root).join("mutants-out").join(krate);
    match shard {
        Some(s) => dir.join(s.dir_name()),
        None => dir,
    }
}

/// The cargo-mutants command for one crate: `--list`, a run, or (`retest` given) a run of
/// exactly those mutants, whatever the shard (the shard is the output directory's).
pub fn command(
    root: &Path,
    krate: &str,
    shard: Option<Shard>,
    list: bool,
    retest: Option<&Carried>,
) -> Cmd {
    let mut cmd = Cmd::cargo(root).args(["mutants", "--package", &format!("turnkeeper-{krate}")]);
    if list {
        cmd = cmd.arg("--list");
    } else {
        // A mutant that fails a proptest would have proptest write the failing case into
        // `tests/*.proptest-regressions` of the tree, which cargo-mutants does not put back.
        cmd = cmd.env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1").args([
            "--in-place".to_owned(),
            "--output".to_owned(),
            out_dir(root, krate, shard).display().to_string(),
        ]);
    }
    match (retest, shard) {
        (Some(carried), _) => {
            for re in carried.filters() {
                cmd = cmd.args(["--re".to_owned(), re]);
            }
        }
        (None, Some(s)) => cmd = cmd.args(["--shard".to_owned(), s.arg()]),
        (None, None) => {}
    }
    cmd
}

/// Counts listed mutants per source file, in the order the files first appear. A line of
/// `cargo mutants --list` is `path:line:col: description`.
pub fn count_by_file(listing: &str) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for line in listing.lines().filter(|l| !l.trim().is_empty()) {
        let file = line.split(':').next().unwrap_or(line);
        match counts.iter_mut().find(|(f, _)| f == file) {
            Some((_, n)) => *n += 1,
            None => counts.push((file.to_owned(), 1)),
        }
    }
    counts
}

/// The command as a shell line, with a long list of `--re` filters abbreviated.
fn shown(cmd: &Cmd) -> String {
    let line = cmd.display();
    match line.find(" --re ") {
        Some(at) if line.len() > 400 => {
            let n = line.matches(" --re ").count();
            format!("{} --re ... ({n} mutants by name)", &line[..at])
        }
        _ => line,
    }
}

/// Checks that cargo-mutants is installed, and says how to install it when it is not.
fn require_cargo_mutants(root: &Path) -> Result<()> {
    if Cmd::cargo(root).args(["mutants", "--version"]).succeeds() {
        Ok(())
    } else {
        Err(fail(
            "cargo-mutants is not installed; install it with `cargo install cargo-mutants --locked`",
        ))
    }
}

/// Runs `cargo xtask mutants`.
pub fn mutants(root: &Path, opts: &MutantsOptions) -> Result<()> {
    require_cargo_mutants(root)?;
    if opts.list {
        return list(root, opts);
    }
    let mut rows = Vec::new();
    let mut below = Vec::new();
    for &krate in &opts.crates {
        let dir = out_dir(root, krate, opts.shard);
        let carried = if opts.iterate {
            let c = Carried::from_last_run(&dir.join("mutants.out"));
            if c.caught.is_empty() && c.unviable.is_empty() && c.retest.is_empty() {
                return Err(fail(format!(
                    "--iterate: no earlier run in {}; run without --iterate first",
                    dir.display()
                )));
            }
            Some(c)
        } else {
            None
        };
        // cargo-mutants refuses an `--output` directory that does not exist (a fresh clone, or
        // after target/ was cleaned).
        std::fs::create_dir_all(&dir)?;
        let cmd = command(root, krate, opts.shard, false, carried.as_ref());
        if carried.as_ref().is_some_and(|c| c.retest.is_empty()) {
            println!("==> mutants {krate}: the last run missed nothing; nothing to test again");
        } else {
            println!("==> mutants {krate}: {}", shown(&cmd));
            let out = cmd.run(|_| false)?;
            // cargo-mutants exits 0 when every mutant was caught, 2 when some were missed and 3
            // when some timed out; anything else means the run itself failed (usage, baseline).
            if !matches!(out.status.code(), Some(0 | 2 | 3)) {
                // cargo-mutants moved the last run to mutants.out.old when it started; an
                // --iterate run that failed puts it back, so it can be tried again.
                let (new, old) = (dir.join("mutants.out"), dir.join("mutants.out.old"));
                if carried.is_some() && old.is_dir() {
                    let _ = std::fs::remove_dir_all(&new);
                    std::fs::rename(&old, &new)?;
                }
                return Err(fail(format!(
                    "cargo-mutants failed on {krate} ({}); reproduce with `{}`",
                    fmt_status(out.status),
                    cmd.display()
                )));
            }
            println!("    {krate}: done in {}", fmt_duration(out.elapsed));
        }
        if let Some(c) = &carried {
            c.write(&dir.join("mutants.out"))?;
            let lost = lines(&dir.join("mutants.out").join(Carried::MISSED)).len();
            if lost > 0 {
                eprintln!(
                    "    {krate}: {lost} mutant(s) to test again were not found (the source changed?); counted as missed until a run without --iterate"
                );
            }
        }
        let tally = Tally::read(&dir.join("mutants.out"));
        println!(
            "    {krate}: {} mutants; missed ones in {}",
            tally.total(),
            dir.join("mutants.out/missed.txt").display()
        );
        let complete = match opts.shard {
            None => {
                rows.push(Row {
                    label: krate.to_owned(),
                    tally,
                });
                Some(tally)
            }
            Some(s) => {
                rows.push(Row {
                    label: format!("{krate} shard {}", s.arg()),
                    tally,
                });
                let (done, sum) = shards_so_far(&out_dir(root, krate, None), s.n);
                rows.push(Row {
                    label: format!("{krate} ({done} of {} shards)", s.n),
                    tally: sum,
                });
                (done == s.n).then_some(sum)
            }
        };
        if let Some(score) = complete.and_then(|t| t.score())
            && score < TARGET_SCORE
        {
            below.push(format!("{krate} ({score:.1}%)"));
        }
    }
    println!("\nmutation score = caught / (caught + missed); timeouts and unviable apart:");
    print!("{}", table(&rows));
    if below.is_empty() {
        Ok(())
    } else {
        eprintln!(
            "below the {TARGET_SCORE:.0}% target: {} (the missed mutants are in target/mutants-out/<crate>/.../missed.txt)",
            below.join(", ")
        );
        Err(Box::new(Reported))
    }
}

/// Sums the results of the shards of an `n`-way split found under a crate's directory; returns
/// how many shards have results, and their sum.
fn shards_so_far(crate_dir: &Path, n: u32) -> (u32, Tally) {
    let mut done = 0;
    let mut sum = Tally::default();
    for k in 0..n {
        let out = crate_dir
            .join(Shard { k, n }.dir_name())
            .join("mutants.out");
        if out.join("outcomes.json").is_file() {
            done += 1;
            sum.add(Tally::read(&out));
        }
    }
    (done, sum)
}

/// `--list`: the mutants of each crate (or shard), written to `target/mutants-out/<crate>/`,
/// and their count per file and per crate.
fn list(root: &Path, opts: &MutantsOptions) -> Result<()> {
    let mut totals = Vec::new();
    for &krate in &opts.crates {
        let cmd = command(root, krate, opts.shard, true, None);
        println!("==> {}", cmd.display());
        let listing = cmd
            .stdout_text()
            .ok_or_else(|| fail(format!("`{}` failed", cmd.display())))?;
        let dir = out_dir(root, krate, opts.shard);
        std::fs::create_dir_all(&dir)?;
        let file = dir.join("list.txt");
        std::fs::write(&file, format!("{listing}\n"))?;
        let counts = count_by_file(&listing);
        for (f, n) in &counts {
            println!("    {n:>5}  {f}");
        }
        let total: usize = counts.iter().map(|(_, n)| n).sum();
        println!("    {total:>5}  in all ({})", file.display());
        totals.push((krate, total));
    }
    let shard = opts
        .shard
        .map(|s| format!(", shard {}", s.arg()))
        .unwrap_or_default();
    println!("\nmutants{shard}:");
    for (krate, total) in totals {
        println!("  {krate:<8} {total:>5}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a shard spelling and compares it with what is expected (`None`: refused).
    fn check(input: &str, expect: Option<(u32, u32)>) {
        let got = Shard::parse(input).ok().map(|s| (s.k, s.n));
        assert_eq!(got, expect, "--shard {input}");
    }

    #[test]
    fn shards_are_k_of_n_from_zero() {
        check("0/4", Some((0, 4)));
        check("3/4", Some((3, 4)));
        check(" 1 / 2 ", Some((1, 2)));
        check("4/4", None);
        check("1/0", None);
        check("1", None);
        check("a/4", None);
        check("-1/4", None);
        assert_eq!(Shard { k: 2, n: 8 }.dir_name(), "shard-2-of-8");
        assert_eq!(Shard { k: 2, n: 8 }.arg(), "2/8");
    }

    #[test]
    fn crates_are_chosen_by_name_in_a_fixed_order() -> Result<()> {
        assert_eq!(select_crates(&[])?, CRATES.to_vec());
        assert_eq!(
            select_crates(&["recover,guard".to_owned()])?,
            vec!["guard", "recover"]
        );
        assert_eq!(
            select_crates(&["turnkeeper-prevent".to_owned(), "prevent".to_owned()])?,
            vec!["prevent"]
        );
        assert!(select_crates(&["model".to_owned()]).is_err());
        Ok(())
    }

    #[test]
    fn a_tally_is_read_from_the_outcome_files() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("xtask-mutants-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("caught.txt"),
            "a.rs:1:1: x\nb.rs:2:2: y\nc.rs:3:3: z\n",
        )?;
        std::fs::write(dir.join("missed.txt"), "d.rs:4:4: w\n\n")?;
        std::fs::write(dir.join("unviable.txt"), "")?;
        let t = Tally::read(&dir);
        std::fs::remove_dir_all(&dir)?;
        assert_eq!(
            t,
            Tally {
                caught: 3,
                missed: 1,
                timeout: 0,
                unviable: 0
            }
        );
        assert_eq!(t.total(), 4);
        assert_eq!(t.score(), Some(75.0));
        assert_eq!(Tally::default().score(), None);
        Ok(())
    }

    #[test]
    fn an_iterate_run_carries_what_earlier_runs_caught_and_found_unviable() -> Result<()> {
        let root = std::env::temp_dir().join(format!("xtask-iterate-{}", std::process::id()));
        let (last, next) = (root.join("last"), root.join("next"));
        std::fs::create_dir_all(&last)?;
        std::fs::create_dir_all(&next)?;
        std::fs::write(last.join("caught.txt"), "a.rs:1:1: x\n")?;
        // `last` was itself an --iterate run: it carried `b` and tested `a` and `c` to `e` again
        // (and `y`, of another shard, outside its filters).
        std::fs::write(last.join(Carried::CAUGHT), "b.rs:1:1: y\n")?;
        std::fs::write(
            last.join(Carried::RETESTED),
            "a.rs:1:1: x\nc.rs:1:1: z\nd.rs:2:3: replace a.b() with (-1)\ne.rs:1:1: loop\n",
        )?;
        std::fs::write(
            last.join("timeout.txt"),
            "e.rs:1:1: loop\ny.rs:1:1: elsewhere\n",
        )?;
        std::fs::write(last.join("unviable.txt"), "c.rs:1:1: z\n")?;
        std::fs::write(
            last.join("missed.txt"),
            "d.rs:2:3: replace a.b() with (-1)\n",
        )?;
        let carried = Carried::from_last_run(&last);
        assert_eq!(
            carried.filters(),
            [
                r"^d\.rs:2:3: replace a\.b\(\) with \(\-1\)$",
                r"^e\.rs:1:1: loop$"
            ]
        );
        // The new run caught `d` and did not find `e`.
        std::fs::write(
            next.join("caught.txt"),
            "d.rs:2:3: replace a.b() with (-1)\n",
        )?;
        carried.write(&next)?;
        let t = Tally::read(&next);
        let lost = lines(&next.join(Carried::MISSED));
        let again = Carried::from_last_run(&next);
        std::fs::remove_dir_all(&root)?;
        assert_eq!(
            t,
            Tally {
                caught: 3,
                missed: 1,
                timeout: 0,
                unviable: 1
            }
        );
        assert_eq!(lost, ["e.rs:1:1: loop"]);
        assert_eq!(again.retest, ["e.rs:1:1: loop"]);
        Ok(())
    }

    #[test]
    fn the_table_shows_counts_and_score() {
        let rows = [
            Row {
                label: "guard".to_owned(),
                tally: Tally {
                    caught: 95,
                    missed: 5,
                    timeout: 1,
                    unviable: 11,
                },
            },
            Row {
                label: "prevent shard 0/8".to_owned(),
                tally: Tally::default(),
            },
        ];
        assert_eq!(
            table(&rows),
            "\
crate              mutants  caught  missed  timeout  unviable   score
guard                  112      95       5        1        11   95.0%
prevent shard 0/8        0       0       0        0         0     n/a
"
        );
    }

    #[test]
    fn listed_mutants_are_counted_per_file() {
        let listing = "\
crates/guard/src/fsio.rs:15:5: replace write_atomically -> std::io::Result<()> with Ok(())
crates/guard/src/ledger.rs:13:5: replace is_guarded -> bool with true
crates/guard/src/fsio.rs:16:20: delete ! in write_atomically
";
        assert_eq!(
            count_by_file(listing),
            vec![
                ("crates/guard/src/fsio.rs".to_owned(), 2),
                ("crates/guard/src/ledger.rs".to_owned(), 1)
            ]
        );
    }

    #[test]
    fn the_command_runs_one_package_in_place_into_its_own_directory() {
        let root = Path::new("/w");
        let shown = command(root, "prevent", Some(Shard { k: 1, n: 4 }), false, None).display();
        let target = out_dir(root, "prevent", Some(Shard { k: 1, n: 4 }));
        assert_eq!(
            shown,
            format!(
                "PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 cargo mutants --package turnkeeper-prevent --in-place --output {} --shard 1/4",
                target.display()
            )
        );
        assert!(target.ends_with("mutants-out/prevent/shard-1-of-4"));
        assert_eq!(
            command(root, "guard", None, true, None).display(),
            "cargo mutants --package turnkeeper-guard --list"
        );
    }
}
