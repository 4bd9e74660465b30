//! Small parsers for what the tools print: libtest's `test result:` lines, libFuzzer's status and
//! final-stats lines, and the parts of `fuzz/Cargo.toml` the xtask needs.

use std::ops::AddAssign;

/// Test counts summed over libtest `test result:` lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestCounts {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests marked with the `ignore` attribute (forbidden in this house).
    pub ignored: u64,
    /// Tests left out by a name filter.
    pub filtered_out: u64,
    /// How many `test result:` lines were seen (one per test binary or doc-test run).
    pub runs: u64,
}

impl AddAssign for TestCounts {
    /// Adds another set of counts to this one.
    fn add_assign(&mut self, other: TestCounts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.ignored += other.ignored;
        self.filtered_out += other.filtered_out;
        self.runs += other.runs;
    }
}

/// Keeps the lines `TestCounts::from_lines` and the failure report need.
pub fn is_test_line(line: &str) -> bool {
    line.starts_with("test result:") || (line.starts_with("test ") && line.ends_with("FAILED"))
}

impl TestCounts {
    /// Parses one `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out; ...`.
    pub fn from_line(line: &str) -> Option<TestCounts> {
        let rest = line.trim().strip_prefix("test result:")?;
        let mut counts = TestCounts {
            runs: 1,
            ..TestCounts::default()
        };
        let words: Vec<&str> = rest
            .split(|c: char| c.is_whitespace() || c == ';' || c == '.' || c == ',')
            .collect();
        let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
        for pair in words.windows(2) {
            let Ok(n) = pair[0].parse::<u64>() else {
                continue;
            };
            match pair[1] {
                "passed" => counts.passed = n,
                "failed" => counts.failed = n,
                "ignored" => counts.ignored = n,
                "filtered" => counts.filtered_out = n,
                _ => {}
            }
        }
        Some(counts)
    }

    /// Sums the counts of every `test result:` line.
    pub fn from_lines(lines: &[String]) -> TestCounts {
        let mut total = TestCounts::default();
        for counts in lines.iter().filter_map(|l| TestCounts::from_line(l)) {
            total += counts;
        }
        total
    }

    /// `12 passed, 0 failed`.
    pub fn short(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }
}

/// Names of failed tests from libtest's `test some::name ... FAILED` lines.
pub fn failed_tests(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .map(str::to_owned)
        .collect()
}

/// What a libFuzzer run reported about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuzzStats {
    /// Inputs executed (`stat::number_of_executed_units`, else `Done N runs`, else the last `#N`).
    pub execs: Option<u64>,
    /// Coverage counters (`cov:`) at the last status line.
    pub cov: Option<u64>,
    /// Features (`ft:`) at the last status line.
    pub ft: Option<u64>,
    /// Corpus size (`corp: files/size`) at the last status line, as printed.
    pub corp: Option<String>,
    /// New corpus units added during the run.
    pub new_units: Option<u64>,
    /// Peak RSS in MB.
    pub peak_rss_mb: Option<u64>,
    /// Executions per second over the whole run (`stat::average_exec_per_sec`, else the
    /// `exec/s:` of the last status line).
    pub exec_per_sec: Option<u64>,
}

/// Keeps libFuzzer's status (`#N ...`), `Done` and `stat::` lines.
pub fn is_fuzz_line(line: &str) -> bool {
    line.starts_with('#') || line.starts_with("Done ") || line.starts_with("stat::")
}

impl FuzzStats {
    /// Parses libFuzzer's output lines (only the last status line and final stats matter).
    pub fn from_lines(lines: &[String]) -> FuzzStats {
        let mut stats = FuzzStats::default();
        let mut last_hash_execs = None;
        let mut last_rate = None;
        let mut done_runs = None;
        for line in lines {
            if let Some(rest) = line.strip_prefix("stat::") {
                let mut kv = rest.splitn(2, ':');
                let (Some(key), Some(value)) = (kv.next(), kv.next()) else {
                    continue;
                };
                let value = value.trim().parse::<u64>().ok();
                match key.trim() {
                    "number_of_executed_units" => stats.execs = value,
                    "new_units_added" => stats.new_units = value,
                    "peak_rss_mb" => stats.peak_rss_mb = value,
                    "average_exec_per_sec" => stats.exec_per_sec = value,
                    _ => {}
                }
            } else if let Some(rest) = line.strip_prefix("Done ") {
                done_runs = rest
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok());
            } else if let Some(rest) = line.strip_prefix('#') {
                let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(n) = n.parse::<u64>() {
                    last_hash_execs = Some(n);
                }
                // `exec/s: N` in a normal run, `exec/s N` in fork mode.
                if let Some(rate) = word_after(line, "exec/s:")
                    .or_else(|| word_after(line, "exec/s"))
                    .and_then(|w| w.parse().ok())
                {
                    last_rate = Some(rate);
                }
                if line.contains("cov:") {
                    stats.cov = word_after(line, "cov:").and_then(|w| w.parse().ok());
                    stats.ft = word_after(line, "ft:").and_then(|w| w.parse().ok());
                    stats.corp = word_after(line, "corp:").map(str::to_owned);
                }
            }
        }
        stats.execs = stats.execs.or(done_runs).or(last_hash_execs);
        stats.exec_per_sec = stats.exec_per_sec.or(last_rate);
        stats
    }

    /// `123456 execs, 2057 exec/s, cov 812, ft 2301, corp 140/38Kb` with unknowns left out.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match self.execs {
            Some(n) => parts.push(format!("{n} execs")),
            None => parts.push("execs unknown".to_owned()),
        }
        if let Some(rate) = self.exec_per_sec {
            parts.push(format!("{rate} exec/s"));
        }
        if let Some(cov) = self.cov {
            parts.push(format!("cov {cov}"));
        }
        if let Some(ft) = self.ft {
            parts.push(format!("ft {ft}"));
        }
        if let Some(corp) = &self.corp {
            parts.push(format!("corp {corp}"));
        }
        parts.join(", ")
    }
}

/// The word following `key` in a whitespace-separated line.
fn word_after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|w| *w == key)?;
    words.next()
}

/// What the xtask reads from `fuzz/Cargo.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuzzManifest {
    /// Names of the `[[bin]]` entries: the fuzz targets.
    pub targets: Vec<String>,
    /// `[package.metadata.xtask.seeds]`: target name to seed directories (relative to the root).
    pub seeds: Vec<(String, Vec<String>)>,
    /// `[package.metadata.xtask.max_len]`: target name to libFuzzer's `-max_len` (bytes).
    pub max_len: Vec<(String, u64)>,
    /// `[package.metadata.xtask.trace_compares]`: the targets set to `false` there, built
    /// without comparison tracing (`cargo fuzz --no-trace-compares`).
    pub no_trace_compares: Vec<String>,
}

impl FuzzManifest {
    /// Parses the subset of TOML used by `fuzz/Cargo.toml`: section headers, `name = "..."` in
    /// `[[bin]]` tables, one-line string arrays in `[package.metadata.xtask.seeds]`, integers
    /// in `[package.metadata.xtask.max_len]` and booleans in
    /// `[package.metadata.xtask.trace_compares]`.
    pub fn parse(text: &str) -> FuzzManifest {
        let mut manifest = FuzzManifest::default();
        let mut section = String::new();
        for raw in text.lines() {
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                section = line.to_owned();
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let (key, value) = (key.trim().trim_matches('"'), value.trim());
            if section == "[[bin]]" && key == "name" {
                manifest.targets.push(value.trim_matches('"').to_owned());
            } else if section == "[package.metadata.xtask.seeds]" {
                let dirs = value
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .split(',')
                    .map(|s| s.trim().trim_matches('"').to_owned())
                    .filter(|s| !s.is_empty())
                    .collect();
                manifest.seeds.push((key.to_owned(), dirs));
            } else if section == "[package.metadata.xtask.max_len]"
                && let Ok(n) = value.replace('_', "").parse::<u64>()
            {
                manifest.max_len.push((key.to_owned(), n));
            } else if section == "[package.metadata.xtask.trace_compares]" && value == "false" {
                manifest.no_trace_compares.push(key.to_owned());
            }
        }
        manifest
    }

    /// The `-max_len` configured for `target`, if any.
    pub fn max_len_for(&self, target: &str) -> Option<u64> {
        self.max_len
            .iter()
            .find(|(t, _)| t == target)
            .map(|(_, n)| *n)
    }

    /// Whether `target` is built with comparison tracing (the default; `false` under
    /// `[package.metadata.xtask.trace_compares]` turns it off).
    pub fn traces_compares(&self, target: &str) -> bool {
        !self.no_trace_compares.iter().any(|t| t == target)
    }

    /// The seed directories configured for `target`, if any.
    pub fn seeds_for(&self, target: &str) -> &[String] {
        self.seeds
            .iter()
            .find(|(t, _)| t == target)
            .map_or(&[], |(_, dirs)| dirs.as_slice())
    }
}

/// Drops a `#` comment that is not inside a string.
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

/// FNV-1a, 64 bits, as 16 hex digits: a stable content name for seeds and regression inputs.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Turns string literals into owned lines.
    fn lines(ls: &[&str]) -> Vec<String> {
        ls.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn test_result_lines_are_summed() {
        let out = lines(&[
            "running 3 tests",
            "test a::b ... ok",
            "test a::c ... FAILED",
            "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s",
            "test result: ok. 5 passed; 0 failed; 1 ignored; 0 measured; 7 filtered out; finished in 1.20s",
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
        ]);
        let counts = TestCounts::from_lines(&out);
        assert_eq!(
            counts,
            TestCounts {
                passed: 7,
                failed: 1,
                ignored: 1,
                filtered_out: 7,
                runs: 3
            }
        );
        assert_eq!(counts.short(), "7 passed, 1 failed");
        assert_eq!(failed_tests(&out), vec!["a::c".to_owned()]);
        assert!(is_test_line(&out[2]) && is_test_line(&out[3]) && !is_test_line(&out[1]));
    }

    #[test]
    fn libfuzzer_final_stats_win_over_status_lines() {
        let out = lines(&[
            "#2\tINITED cov: 12 ft: 13 corp: 1/1b exec/s: 0 rss: 30Mb",
            "#4096\tpulse  cov: 40 ft: 52 corp: 9/120b lim: 43 exec/s: 2048 rss: 31Mb",
            "#52113\tDONE   cov: 45 ft: 60 corp: 10/200b lim: 4096 exec/s: 868 rss: 50Mb",
            "Done 52113 runs in 61 second(s)",
            "stat::number_of_executed_units: 52114",
            "stat::average_exec_per_sec:     854",
            "stat::new_units_added:          12",
            "stat::peak_rss_mb:              50",
        ]);
        let stats = FuzzStats::from_lines(&out);
        assert_eq!(stats.execs, Some(52114));
        assert_eq!((stats.cov, stats.ft), (Some(45), Some(60)));
        assert_eq!(stats.corp.as_deref(), Some("10/200b"));
        assert_eq!(stats.new_units, Some(12));
        assert_eq!(stats.exec_per_sec, Some(854));
        assert_eq!(
            stats.summary(),
            "52114 execs, 854 exec/s, cov 45, ft 60, corp 10/200b"
        );
        // Without the final stats, the last status line's rate.
        assert_eq!(FuzzStats::from_lines(&out[..3]).exec_per_sec, Some(868));
    }

    #[test]
    fn libfuzzer_fork_mode_falls_back_to_the_last_status_line() {
        let out =
            lines(&["#10: cov: 5 ft: 6 corp: 3 exec/s 100 oom/timeout/crash: 0/0/0 time: 2s"]);
        let stats = FuzzStats::from_lines(&out);
        assert_eq!(
            (stats.execs, stats.cov, stats.corp.as_deref()),
            (Some(10), Some(5), Some("3"))
        );
        assert_eq!(stats.exec_per_sec, Some(100));
        assert_eq!(FuzzStats::from_lines(&[]).summary(), "execs unknown");
    }

    #[test]
    fn fuzz_manifest_targets_and_seeds() {
        let text = r#"
[package]
name = "turnkeeper-fuzz"   # the crate
[package.metadata.xtask.seeds]
parse_roundtrip = ["corpus/anthropic", "corpus/gemini"] # transcripts
classify = ["corpus/errors"]

[[bin]]
name = "parse_roundtrip"
path = "fuzz_targets/parse_roundtrip.rs"

[package.metadata.xtask.max_len]
classify = 4_096

[package.metadata.xtask.trace_compares]
classify = false  # generated inputs
parse_roundtrip = true

[[bin]]
name = "classify"
"#;
        let m = FuzzManifest::parse(text);
        assert_eq!(
            m.targets,
            vec!["parse_roundtrip".to_owned(), "classify".to_owned()]
        );
        assert_eq!(
            m.seeds_for("parse_roundtrip"),
            ["corpus/anthropic", "corpus/gemini"]
        );
        assert_eq!(m.seeds_for("classify"), ["corpus/errors"]);
        assert!(m.seeds_for("other").is_empty());
        assert_eq!(m.max_len_for("classify"), Some(4096));
        assert!(!m.traces_compares("classify"));
        assert!(m.traces_compares("parse_roundtrip"));
        assert!(m.traces_compares("other"));
        assert_eq!(m.max_len_for("parse_roundtrip"), None);
        assert!(
            FuzzManifest::parse("[package]\nname = \"x\"\n")
                .targets
                .is_empty()
        );
    }

    #[test]
    fn content_hash_is_stable_fnv1a() {
        assert_eq!(content_hash(b""), "cbf29ce484222325");
        assert_eq!(content_hash(b"a"), "af63dc4c8601ec8c");
    }
}
