//! The wire invariants over the checked-in damaged cases (under the model their expect files
//! name) and over every recorded Chat, Responses and Converse request of `../shared/real-traffic`
//! (when it is there): each must be repaired losslessly, keep or report its reasoning, agree
//! with check, and be idempotent.

use turnkeeper_model::{Format, sniff_detail};
use turnkeeper_prevent::Options;
use turnkeeper_testkit::corpus::{files_under, root};
use turnkeeper_testkit::wire_inv::{WIRE_FORMATS, wire_invariants};

/// Runs every invariant on `path` when it sniffs as a wire family; returns whether it did.
fn judge(path: &std::path::Path, model: Option<String>, failures: &mut Vec<String>) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Some(format) = sniff_detail(&text)
        .ok()
        .map(|s| s.format)
        .filter(|f| WIRE_FORMATS.contains(f))
    else {
        return false;
    };
    for stand_ins in [true, false] {
        let mut opts = Options {
            model: model.clone(),
            ..Options::default()
        };
        opts.policy.empty_stand_ins = stand_ins;
        if let Err(e) = wire_invariants(&text, format, &opts, true) {
            failures.push(format!("{} ({format}): {e}", path.display()));
        }
    }
    true
}

#[test]
fn damaged_wire_cases_keep_every_invariant() {
    let mut failures = Vec::new();
    let mut judged = [0usize; 3];
    for path in files_under(&root().join("corpus/damaged")) {
        let name = path.to_string_lossy();
        if name.ends_with(".expect.json") || name.ends_with(".after.json") {
            continue;
        }
        let model = std::fs::read_to_string(path.with_extension("expect.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v["model"].as_str().map(str::to_owned));
        let format = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| sniff_detail(&t).ok())
            .map(|s| s.format);
        if judge(&path, model, &mut failures)
            && let Some(k) = WIRE_FORMATS.iter().position(|f| Some(*f) == format)
        {
            judged[k] += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every family has damaged cases (on this corpus: a dozen or more each).
    assert!(
        judged.iter().all(|&n| n >= 5),
        "damaged cases judged per family (chat, responses, converse): {judged:?}"
    );
}

#[test]
fn real_wire_requests_keep_every_invariant() {
    let Some(real) = turnkeeper_testkit::shared::shared_dir("real-traffic") else {
        return;
    };
    let mut failures = Vec::new();
    let mut judged = 0;
    for (dir, format) in [
        ("openai-chat", Format::Chat),
        ("openai-responses", Format::Responses),
        ("bedrock-converse", Format::Converse),
    ] {
        for path in files_under(&real.join(dir)) {
            if !path.to_string_lossy().ends_with(".request.json") {
                continue;
            }
            if judge(&path, None, &mut failures) {
                judged += 1;
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                // A request the sniffer leaves to another family (or refuses) is judged as the
                // family its folder names.
                if let Err(e) = wire_invariants(&text, format, &Options::default(), true) {
                    failures.push(format!("{} ({format}): {e}", path.display()));
                }
                judged += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(judged >= 100, "only {judged} real requests judged");
    eprintln!("{judged} real wire requests judged");
}
