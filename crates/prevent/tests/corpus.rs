//! Conformance over real traffic and the checked-in corpus.
//!
//! - Every request the API accepted (real-traffic `MANIFEST.json`, `api_accepted: true`) and every
//!   valid corpus transcript passes `check` with no error, and `repair` returns it byte for byte.
//! - Every damaged corpus transcript gets exactly the rules its `.expect.json` lists, in order,
//!   and `repair` gives exactly the bytes of its `.after.json`, passes the guard and leaves no
//!   error the policy could have repaired.

use std::path::{Path, PathBuf};

use turnkeeper_model::{FormatHint, Summary, read};
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
                // Every family of ../shared/real-traffic.
                && ["messages", "gemini", "chat", "responses", "converse"]
                    .contains(&f["api"].as_str().unwrap_or("messages"))
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
        let opts = Options::default();
        match turnkeeper_model::sniff(&text) {
            Ok(format) if !format.is_transcript() => {
                if let Err(e) = wire_valid(&text, format, &opts) {
                    failures.push(format!("{}: {e}", path.display()));
                }
                continue;
            }
            _ => {}
        }
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

/// The turn store a damaged case runs with: the provider's responses its expect file lists under
/// `"store"` (files beside the case), recorded as `turnkeeper store add` records them; `None`
/// without the key.
fn case_store(case: &Path, expect: &serde_json::Value) -> Option<turnkeeper_guard::TurnStore> {
    let files = expect["store"].as_array()?;
    let dir = case.parent()?;
    let mut store = turnkeeper_guard::TurnStore::in_memory();
    for f in files.iter().filter_map(|f| f.as_str()) {
        let body = std::fs::read_to_string(dir.join(f))
            .unwrap_or_else(|e| panic!("{}: {f}: {e}", case.display()));
        store
            .add_any_response(&body)
            .unwrap_or_else(|e| panic!("{}: {f}: {e}", case.display()));
    }
    Some(store)
}

/// What `check` finds in `text` and what `repair` makes of it, each family by its own reader.
fn check_and_repair<'a>(
    text: &'a str,
    opts: &Options<'_>,
) -> Result<
    (
        Vec<turnkeeper_prevent::Finding>,
        turnkeeper_prevent::Repaired<'a>,
    ),
    String,
> {
    use turnkeeper_prevent::wire::{check_wire, repair_wire};
    let format = turnkeeper_model::sniff(text).map_err(|e| format!("unreadable: {e}"))?;
    if !format.is_transcript() {
        let findings = check_wire(text, format, opts).map_err(|e| e.to_string())?;
        let r = repair_wire(text, format, opts).map_err(|e| e.to_string())?;
        return Ok((findings, r));
    }
    let t = read(text, FormatHint::Auto).map_err(|e| format!("unreadable: {e}"))?;
    let findings = check(&t, opts);
    let r = repair(&t, opts).map_err(|e| e.to_string())?;
    Ok((findings, r))
}

/// A valid body of a wire family: no error from `check`, and `repair` returns it unchanged.
fn wire_valid(
    text: &str,
    format: turnkeeper_model::Format,
    opts: &Options<'_>,
) -> Result<(), String> {
    use turnkeeper_prevent::wire::{check_wire, repair_wire};
    let errors: Vec<String> = check_wire(text, format, opts)
        .map_err(|e| format!("unreadable as {format}: {e}"))?
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} {} {}", f.rule, f.path, f.message))
        .collect();
    if !errors.is_empty() {
        return Err(errors.join(" | "));
    }
    match repair_wire(text, format, opts) {
        Ok(r) if r.body == text => Ok(()),
        Ok(r) => Err(format!(
            "repair changed a valid body: {:?}",
            r.report.changes
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// The ids of `findings` at `level`, in order.
fn ids_at(findings: &[turnkeeper_prevent::Finding], level: Severity) -> Vec<String> {
    findings
        .iter()
        .filter(|f| f.severity == level)
        .map(|f| f.rule.as_str().to_owned())
        .collect()
}

/// The ids of `findings` at error level, in order.
fn error_ids(findings: &[turnkeeper_prevent::Finding]) -> Vec<String> {
    ids_at(findings, Severity::Error)
}

/// What a case must give, as its expect file lists it.
struct Lists {
    rules: Vec<String>,
    warnings: Vec<String>,
    changes: Vec<String>,
    left: Vec<String>,
}

/// A string list of an expect file.
fn list(v: &serde_json::Value) -> Option<Vec<String>> {
    v.as_array().map(|a| {
        a.iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect()
    })
}

/// Writes an expect file with its keys in a fixed order (`TURNKEEPER_BLESS=1` only).
fn write_expect(path: &Path, expect: &serde_json::Value, got: &Lists) {
    let mut fields: Vec<(&str, serde_json::Value)> = vec![
        ("model", expect["model"].clone()),
        ("thinking", expect["thinking"].clone()),
    ];
    if !expect["policy"].is_null() {
        fields.push(("policy", expect["policy"].clone()));
    }
    if !expect["store"].is_null() {
        fields.push(("store", expect["store"].clone()));
    }
    fields.extend([
        ("rules", serde_json::json!(got.rules)),
        ("warnings", serde_json::json!(got.warnings)),
        ("changes", serde_json::json!(got.changes)),
        ("left", serde_json::json!(got.left)),
    ]);
    for key in ["api_rules", "api_only", "error", "note"] {
        if !expect[key].is_null() {
            fields.push((key, expect[key].clone()));
        }
    }
    let mut out = String::from("{\n");
    for (n, (k, v)) in fields.iter().enumerate() {
        let value = serde_json::to_string_pretty(v)
            .unwrap_or_default()
            .replace('\n', "\n  ");
        out.push_str(&format!("  \"{k}\": {value}"));
        out.push_str(if n + 1 < fields.len() { ",\n" } else { "\n" });
    }
    out.push_str("}\n");
    if let Err(e) = std::fs::write(path, out) {
        panic!("{}: {e}", path.display());
    }
}

/// The damaged transcripts of `corpus/damaged/`, sorted: each `.json` but the `.expect.json`
/// and `.after.json` beside it.
fn damaged_cases() -> Vec<PathBuf> {
    let dir = root().join("corpus/damaged");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    cases.retain(|p| {
        let name = p.to_string_lossy();
        p.extension().is_some_and(|x| x == "json")
            && !name.ends_with(".expect.json")
            && !name.ends_with(".after.json")
            && !name.ends_with(".response.json")
    });
    cases.sort();
    cases
}

/// Every damaged case has an `.expect.json` (model, thinking mode, an optional `policy`, the
/// exact ordered rule ids `check` reports at error level (`rules`) and at warning level
/// (`warnings`), those of `repair`'s changes (`changes`) and those left after it (`left`), and
/// the ids the API's own error is about, `api_rules`) and an `.after.json` with the exact bytes `repair` returns. A case only the API
/// can tell (a real signature moved from another provider) says `"api_only": true`: no rule
/// fires, and the body comes back unchanged. `TURNKEEPER_BLESS=1` rewrites the rule lists and
/// the `.after.json` files from what turnkeeper does now, for review in the diff.
#[test]
fn corpus_damaged_transcripts_give_exact_rules_and_repairs() {
    let cases = damaged_cases();
    assert!(cases.len() >= 30, "only {} damaged cases", cases.len());
    let bless = std::env::var_os("TURNKEEPER_BLESS").is_some();
    let mut failures = Vec::new();
    for path in &cases {
        let name = path.display();
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let expect_path = path.with_extension("expect.json");
        let after_path = path.with_extension("after.json");
        let Some(expect) = std::fs::read_to_string(&expect_path)
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        else {
            failures.push(format!("{name}: no readable {}", expect_path.display()));
            continue;
        };
        let store = case_store(path, &expect);
        let mut opts = Options {
            model: expect["model"].as_str().map(str::to_owned),
            store: store.as_ref(),
            ..Options::default()
        };
        opts.policy.merge_same_role = expect["policy"]["merge_same_role"].as_bool();
        let (findings, r) = match check_and_repair(&text, &opts) {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let found = error_ids(&findings);
        let got = Lists {
            rules: found.clone(),
            warnings: ids_at(&findings, Severity::Warning),
            changes: r
                .report
                .changes
                .iter()
                .map(|c| c.rule.as_str().to_owned())
                .collect(),
            left: error_ids(&r.report.findings_left),
        };
        if bless {
            write_expect(&expect_path, &expect, &got);
            if let Err(e) = std::fs::write(&after_path, r.body.as_bytes()) {
                failures.push(format!("{}: {e}", after_path.display()));
            }
            continue;
        }
        let api_only = expect["api_only"] == true;
        if api_only != found.is_empty() {
            failures.push(format!(
                "{name}: `api_only` is {api_only} but check finds {found:?}"
            ));
        }
        for (key, have) in [
            ("rules", &got.rules),
            ("warnings", &got.warnings),
            ("changes", &got.changes),
            ("left", &got.left),
        ] {
            match list(&expect[key]) {
                Some(want) if &want == have => {}
                Some(want) => {
                    failures.push(format!("{name}: {key} expected {want:?}, found {have:?}"))
                }
                None => failures.push(format!("{name}: the expect file has no `{key}` list")),
            }
        }
        // Nothing the policy could have repaired is left (config errors are the caller's).
        let repairable: Vec<String> = r
            .report
            .findings_left
            .iter()
            .filter(|f| f.severity == Severity::Error && f.repair.is_some() && !f.rule.is_config())
            .map(|f| format!("{} {} {}", f.rule, f.path, f.message))
            .collect();
        if !repairable.is_empty() {
            failures.push(format!(
                "{name}: repairable errors left after repair: {}",
                repairable.join(" | ")
            ));
        }
        match std::fs::read_to_string(&after_path) {
            Ok(after) if after == r.body => {}
            Ok(_) => failures.push(format!(
                "{name}: repair differs from {} (changes: {:?})",
                after_path.display(),
                r.report.changes
            )),
            Err(e) => failures.push(format!("{}: {e}", after_path.display())),
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
/// (so rules read the texts themselves, and the message summaries they skip messages by no
/// longer know which texts hold text), every accepted, valid and damaged transcript gets the
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
                && !p.to_string_lossy().ends_with(".after.json")
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
        // The summaries the rules skip messages by, worked out again without the facts.
        let summaries: Vec<Summary> = (0..bare.messages.len())
            .map(|i| Summary::of(bare.blocks_of(i)))
            .collect();
        for (m, s) in bare.messages.iter_mut().zip(summaries) {
            m.summary = s;
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

/// The reports behind the damaged corpus: for every damaged transcript, each finding of `check`
/// (severity, rule, path, message, and whether a repair is offered) and each change of `repair`
/// (rule, action, path, reason, fingerprint of a removed thinking block), the request changes
/// and what is left, as one reviewed snapshot. `corpus_damaged_transcripts_give_exact_rules_and_repairs`
/// holds the rule ids and the repaired bytes; this holds the words and places a user reads.
#[test]
fn corpus_damaged_reports() {
    let cases = damaged_cases();
    let mut out = String::new();
    for path in &cases {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let expect: serde_json::Value = std::fs::read_to_string(path.with_extension("expect.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let store = case_store(path, &expect);
        let mut opts = Options {
            model: expect["model"].as_str().map(str::to_owned),
            store: store.as_ref(),
            ..Options::default()
        };
        opts.policy.merge_same_role = expect["policy"]["merge_same_role"].as_bool();
        out.push_str(&format!("== {name}\n"));
        let (findings, r) = check_and_repair(&text, &opts).expect("damaged cases read and repair");
        for f in findings {
            out.push_str(&format!(
                "find {:?} {} {} [{:?}/{:?}]{}: {}\n",
                f.severity,
                f.rule,
                f.path,
                f.message_index,
                f.block_index,
                if f.repair.is_some() { " (repair)" } else { "" },
                f.message
            ));
        }
        for c in &r.report.changes {
            out.push_str(&format!(
                "change {} {} {}{}: {}\n",
                c.rule,
                c.action,
                c.path,
                c.fingerprint
                    .as_deref()
                    .map(|f| format!(" #{f}"))
                    .unwrap_or_default(),
                c.reason
            ));
        }
        for rc in &r.report.request_changes {
            out.push_str(&format!(
                "request {}\n",
                serde_json::to_string(rc).unwrap_or_default()
            ));
        }
        for f in &r.report.findings_left {
            out.push_str(&format!(
                "left {:?} {} {}: {}\n",
                f.severity, f.rule, f.path, f.message
            ));
        }
        assert_eq!(
            r.report.is_empty(),
            r.report.changes.is_empty() && r.report.request_changes.is_empty()
        );
        assert_eq!(
            r.report.has_errors(),
            r.report
                .findings_left
                .iter()
                .any(|f| f.severity == Severity::Error)
        );
    }
    insta::assert_snapshot!(out);
}
