//! Conformance over real traffic and the checked-in corpus.
//!
//! - Every request the API accepted (real-traffic `MANIFEST.json`, `api_accepted: true`) and every
//!   valid corpus transcript passes `check` with no error, and `repair` returns it byte for byte.
//! - Every damaged corpus transcript is flagged with the rules its `.expect.json` names, and its
//!   repair passes the guard and leaves no error the policy could have repaired.

use std::path::{Path, PathBuf};

use turnkeeper_model::{FormatHint, read};
use turnkeeper_prevent::{Options, Severity, check, repair};

#[path = "../../testkit/src/shared.rs"]
mod shared;

/// How many transcripts a test over the accepted real requests and the valid corpus must see:
/// the 308 accepted requests with `../shared`, the corpus's own otherwise.
fn floor(real: &[PathBuf]) -> usize {
    if real.is_empty() { 25 } else { 300 }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The accepted real requests of `../shared/real-traffic` (empty when it is absent: see
/// [`shared::shared_dir`]).
fn accepted_requests() -> Vec<PathBuf> {
    let Some(dir) = shared::shared_dir("real-traffic") else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(dir.join("MANIFEST.json")) else {
        return Vec::new();
    };
    let Ok(m) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    m["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| {
            f["kind"] == "request"
                && f["api_accepted"] == true
                && f["provider"] != "openai-responses"
        })
        .filter_map(|f| f["file"].as_str().map(|p| dir.join(p)))
        .collect()
}

fn corpus_valid() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for sub in ["corpus/anthropic", "corpus/gemini"] {
        if let Ok(rd) = std::fs::read_dir(root().join(sub)) {
            v.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json")),
            );
        }
    }
    v.sort();
    v
}

#[test]
fn corpus_accepted_requests_pass_check_and_repair_unchanged() {
    let real = accepted_requests();
    let floor = floor(&real);
    let files: Vec<PathBuf> = real.into_iter().chain(corpus_valid()).collect();
    assert!(files.len() >= floor, "only {} files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let t = match read(&text, FormatHint::Auto) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: unreadable: {e}", path.display()));
                continue;
            }
        };
        let opts = Options::default();
        let errors: Vec<String> = check(&t, &opts)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| format!("{} {} {}", f.rule, f.path, f.message))
            .collect();
        if !errors.is_empty() {
            failures.push(format!("{}: {}", path.display(), errors.join(" | ")));
            continue;
        }
        match repair(&t, &opts) {
            Ok(r) if r.body == text => {}
            Ok(r) => failures.push(format!(
                "{}: repair changed a valid body: {:?}",
                path.display(),
                r.report.changes
            )),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_damaged_transcripts_are_flagged_and_repaired() {
    let dir = root().join("corpus/damaged");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    cases.retain(|p| {
        p.extension().is_some_and(|x| x == "json") && !p.to_string_lossy().ends_with(".expect.json")
    });
    cases.sort();
    assert!(cases.len() >= 30, "only {} damaged cases", cases.len());
    let mut failures = Vec::new();
    for path in &cases {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let expect_path = path.with_extension("expect.json");
        let expect: serde_json::Value = std::fs::read_to_string(&expect_path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let t = match read(&text, FormatHint::Auto) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: unreadable: {e}", path.display()));
                continue;
            }
        };
        let opts = Options {
            model: expect["model"].as_str().map(str::to_owned),
            ..Options::default()
        };
        let findings = check(&t, &opts);
        let found: Vec<&str> = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.rule.as_str())
            .collect();
        let wanted: Vec<String> = expect["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str())
            .map(str::to_owned)
            .collect();
        let hit = wanted.iter().any(|w| found.contains(&w.as_str()));
        // A real signature moved from another provider looks like any other signature: only the
        // provider can tell (guard::provenance). These cases document the limit.
        let undetectable = path
            .file_name()
            .is_some_and(|n| n == "an23_gemini_signature.json");
        if !hit && !wanted.is_empty() && !undetectable {
            failures.push(format!(
                "{}: expected one of {wanted:?}, found {found:?}",
                path.display()
            ));
            continue;
        }
        match repair(&t, &opts) {
            Ok(r) => {
                let left: Vec<String> = r
                    .report
                    .findings_left
                    .iter()
                    .filter(|f| {
                        f.severity == Severity::Error && f.repair.is_some() && !f.rule.is_config()
                    })
                    .map(|f| format!("{} {} {}", f.rule, f.path, f.message))
                    .collect();
                if !left.is_empty() {
                    failures.push(format!(
                        "{}: repairable errors left after repair: {}",
                        path.display(),
                        left.join(" | ")
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The reader's `Facts` are a shortcut, never a second opinion: with every block's facts wiped
/// (so rules read the texts themselves), every accepted, valid and damaged transcript gets the
/// same findings.
#[test]
fn rules_find_the_same_with_and_without_the_readers_facts() {
    let real = accepted_requests();
    let floor = floor(&real);
    let mut files: Vec<PathBuf> = real.into_iter().chain(corpus_valid()).collect();
    if let Ok(rd) = std::fs::read_dir(root().join("corpus/damaged")) {
        files.extend(rd.flatten().map(|e| e.path()).filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".expect.json")
        }));
    }
    let opts = Options::default();
    let mut compared = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(t) = read(&text, FormatHint::Auto) else {
            continue;
        };
        let mut bare = t.clone();
        for b in &mut bare.blocks {
            b.facts = turnkeeper_model::Facts::default();
        }
        let with: Vec<String> = check(&t, &opts).iter().map(|f| format!("{f:?}")).collect();
        let without: Vec<String> = check(&bare, &opts)
            .iter()
            .map(|f| format!("{f:?}"))
            .collect();
        assert_eq!(with, without, "{}", path.display());
        compared += 1;
    }
    assert!(
        compared >= floor,
        "only {compared} transcripts compared (at least {floor})"
    );
}
