//! The OpenAI Responses rules (`turnkeeper_prevent::wire::responses`): data-driven cases with
//! the exact repaired bytes, the real recorded traffic of `../shared`, and damage done to real
//! accepted bodies.

use std::path::PathBuf;

use turnkeeper_model::Format;
use turnkeeper_model::wire::responses::{ItemKind, read};
use turnkeeper_prevent::wire::{Provider, check_wire, provider_of, repair_wire};
use turnkeeper_prevent::{Finding, Options, Policy, Severity};

#[path = "../../testkit/src/shared.rs"]
mod shared;

/// One case: a body, what `check` finds, and what `repair` does.
struct Case {
    /// What it shows.
    name: &'static str,
    /// The target model, when it is not the body's.
    model: Option<&'static str>,
    /// OR-11's stand-in on (the default) or off.
    empty_summary: bool,
    /// The body.
    body: &'static str,
    /// `check`'s findings, as `"OR-01 error input[1]"`.
    findings: &'static [&'static str],
    /// `repair`'s body; `None` when it must return the input unchanged.
    repaired: Option<&'static str>,
    /// `repair`'s changes, as `"OR-01 removed_block input[1]"`.
    changes: &'static [&'static str],
    /// What `repair` leaves: what `check` finds on the repaired body, located in it.
    left: &'static [&'static str],
}

const fn case(name: &'static str, body: &'static str) -> Case {
    Case {
        name,
        model: None,
        empty_summary: true,
        body,
        findings: &[],
        repaired: None,
        changes: &[],
        left: &[],
    }
}

fn finding(f: &Finding) -> String {
    let sev = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    format!("{} {sev} {}", f.rule, f.path)
}

fn opts(c: &Case) -> Options<'static> {
    Options {
        model: c.model.map(str::to_owned),
        policy: Policy {
            empty_stand_ins: c.empty_summary,
            ..Policy::default()
        },
        ..Options::default()
    }
}

fn check_str(src: &str, o: &Options<'_>) -> Result<Vec<Finding>, String> {
    check_wire(src, Format::Responses, o).map_err(|e| e.to_string())
}

/// What `repair` made: the body when it changed, the changes, what is left.
struct Repaired {
    body: Option<String>,
    changes: Vec<turnkeeper_prevent::Change>,
    findings_left: Vec<Finding>,
}

fn repair_str(src: &str, o: &Options<'_>) -> Result<Repaired, String> {
    let r = repair_wire(src, Format::Responses, o).map_err(|e| e.to_string())?;
    Ok(Repaired {
        body: (r.body != src).then(|| r.body.into_owned()),
        changes: r.report.changes,
        findings_left: r.report.findings_left,
    })
}

fn check(c: &Case) {
    let o = opts(c);
    let found: Vec<String> = check_str(c.body, &o)
        .unwrap_or_else(|e| panic!("{}: {e}", c.name))
        .iter()
        .map(finding)
        .collect();
    assert_eq!(found, c.findings, "{}: findings", c.name);
    let r: Repaired = repair_str(c.body, &o).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    assert_eq!(r.body.as_deref(), c.repaired, "{}: repaired body", c.name);
    let changes: Vec<String> = r
        .changes
        .iter()
        .map(|ch| format!("{} {} {}", ch.rule, ch.action.as_str(), ch.path))
        .collect();
    assert_eq!(changes, c.changes, "{}: changes", c.name);
    for ch in &r.changes {
        assert!(
            !ch.reason.is_empty(),
            "{}: a change without a reason",
            c.name
        );
    }
    let left: Vec<String> = r.findings_left.iter().map(finding).collect();
    assert_eq!(left, c.left, "{}: left", c.name);
    let out = r.body.as_deref().unwrap_or(c.body);
    let again: Vec<String> = check_str(out, &o)
        .unwrap_or_else(|e| panic!("{}: output unreadable: {e}", c.name))
        .iter()
        .map(finding)
        .collect();
    assert_eq!(again, c.left, "{}: check of the repaired body", c.name);
    if r.body.is_some() {
        let twice = repair_str(out, &o).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(twice.body, None, "{}: a second repair changes more", c.name);
    }
}

const CASES: &[Case] = &[
    case(
        "a stateless tool turn as Codex sends it is valid",
        r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
    ),
    case(
        "a stored turn with its ids is valid",
        r#"{"model":"o3","input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s"}]},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hello"}]},{"role":"user","content":"again"}]}"#,
    ),
    Case {
        findings: &["OR-01 error input[1]"],
        repaired: Some(r#"{"model":"gpt-5","input":[{"role":"user","content":"hi"}]}"#),
        changes: &["OR-01 removed_block input[1]"],
        ..case(
            "OR-01: a reasoning item left last (stream aborted) goes whole",
            r#"{"model":"gpt-5","input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}]}"#,
        )
    },
    Case {
        findings: &["OR-01 error input[1]"],
        repaired: Some(
            r#"{"model":"gpt-5","input":[{"content":"q","role":"user"}, {"content":"42","role":"assistant"}, {"content":"more?","role":"user"}]}"#,
        ),
        changes: &["OR-01 removed_block input[1]"],
        ..case(
            "OR-01: an id-less assistant message cannot be the item a stored reasoning item produced (real 400)",
            r#"{"model":"gpt-5","input":[{"content":"q","role":"user"}, {"encrypted_content":"gAAA","id":"rs_1","summary":[],"type":"reasoning"}, {"content":"42","role":"assistant"}, {"content":"more?","role":"user"}]}"#,
        )
    },
    case(
        "OR-01: under store:false the same id-less message is no finding (the server has nothing to tie)",
        r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"role":"assistant","content":"42"}]}"#,
    ),
    Case {
        findings: &["OR-01 error input[1]"],
        repaired: Some(
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gBBB"},{"type":"function_call","id":"fc_2","call_id":"c2","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c2","output":"ok"}]}"#,
        ),
        changes: &["OR-01 removed_block input[1]"],
        ..case(
            "OR-01: a reasoning item followed by another reasoning item",
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gBBB"},{"type":"function_call","id":"fc_2","call_id":"c2","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c2","output":"ok"}]}"#,
        )
    },
    case(
        "OR-01 is about items sent with an id: an id-less reasoning item is not checked",
        r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"q"},{"type":"reasoning","summary":[],"encrypted_content":"gAAA"}]}"#,
    ),
    Case {
        findings: &["OR-12 error input[1]"],
        repaired: Some(
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
        ),
        changes: &[
            "OR-12 removed_block input[1]",
            "OR-02 removed_field input[2].id",
        ],
        ..case(
            "OR-12 then OR-02: translated reasoning with content goes whole, and the call it produced loses its fc_ id",
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"thought"}]},{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
        )
    },
    case(
        "OR-12: an empty content array is accepted",
        r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"content":[],"encrypted_content":"gAAA"},{"type":"message","id":"msg_1","role":"assistant","content":"a"}]}"#,
    ),
    Case {
        findings: &[
            "OR-03 error input[1]",
            "OR-03 error input[3]",
            "OR-03 error input[4]",
        ],
        repaired: Some(
            "{\"model\":\"gpt-5\",\"store\":false,\"input\":[\n {\"role\":\"user\",\"content\":\"q\"},\n {\"type\":\"message\",\"role\":\"assistant\",\"content\":\"a\"},\n {\"type\":\"item_reference\",\"id\":\"msg_7\"}]}",
        ),
        changes: &[
            "OR-03 removed_block input[1]",
            "OR-03 removed_block input[3]",
            "OR-02 removed_field input[2].id",
        ],
        left: &["OR-03 error input[2]"],
        ..case(
            "OR-03: under store:false an id-only reasoning item and a reference to one go; a reference to a message is reported",
            "{\"model\":\"gpt-5\",\"store\":false,\"input\":[\n {\"role\":\"user\",\"content\":\"q\"},\n {\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],\"encrypted_content\":null},\n {\"type\":\"message\",\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":\"a\"},\n {\"type\":\"item_reference\",\"id\":\"rs_0\"},\n {\"type\":\"item_reference\",\"id\":\"msg_7\"}]}",
        )
    },
    case(
        "OR-03: with store left to its default, an id-only reasoning item is resolved by the server",
        r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","id":"msg_1","role":"assistant","content":"a"}]}"#,
    ),
    Case {
        findings: &["OR-05 error input[1]"],
        repaired: Some(r#"{"model":"gpt-5","input":[{"role":"user","content":"q"}]}"#),
        changes: &["OR-05 removed_block input[1]"],
        ..case(
            "OR-05: an output that answers no call goes",
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"function_call_output","call_id":"c9","output":"ok"}]}"#,
        )
    },
    case(
        "OR-05: with previous_response_id an output answers a call of the stored response",
        r#"{"model":"gpt-5","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c9","output":"ok"}]}"#,
    ),
    Case {
        findings: &["OR-05 error input[2]"],
        repaired: Some(r#"{"model":"gpt-5","input":[{"role":"user","content":"q"}]}"#),
        changes: &[
            "OR-05 removed_block input[2]",
            "OR-05 removed_block input[1]",
        ],
        ..case(
            "OR-05: an unanswered call goes, with the reasoning item that produced only it",
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"}]}"#,
        )
    },
    Case {
        findings: &["OR-05 error input[2]"],
        repaired: Some(
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","id":"fc_2","call_id":"c2","name":"g","arguments":"{}"},{"type":"function_call_output","call_id":"c2","output":"ok"}]}"#,
        ),
        changes: &["OR-05 removed_block input[2]"],
        ..case(
            "OR-05: of two parallel calls the unanswered one goes; the reasoning item stays with the other",
            r#"{"model":"gpt-5","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","id":"fc_2","call_id":"c2","name":"g","arguments":"{}"},{"type":"function_call_output","call_id":"c2","output":"ok"}]}"#,
        )
    },
    Case {
        findings: &["OR-11 error input[1]"],
        repaired: Some(
            r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"q"},{"type":"reasoning","encrypted_content":"gAAA","summary":[]},{"type":"message","role":"assistant","content":"a"}]}"#,
        ),
        changes: &["OR-11 lossy_stand_in input[1].summary"],
        ..case(
            "OR-11: a reasoning item without summary gets the documented empty one, its own bytes kept",
            r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"q"},{"type":"reasoning","encrypted_content":"gAAA"},{"type":"message","role":"assistant","content":"a"}]}"#,
        )
    },
    Case {
        empty_summary: false,
        findings: &["OR-11 error input[1]"],
        left: &["OR-11 error input[1]"],
        ..case(
            "OR-11 with the stand-in turned off by policy: reported, left alone",
            r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"q"},{"type":"reasoning","encrypted_content":"gAAA"},{"type":"message","role":"assistant","content":"a"}]}"#,
        )
    },
    Case {
        findings: &["OR-13 error input[1]"],
        repaired: Some(
            r#"{"model":"gpt-4.1","input":[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":"a"},{"role":"user","content":"more"}]}"#,
        ),
        changes: &[
            "OR-13 removed_block input[1]",
            "OR-02 removed_field input[2].id",
        ],
        ..case(
            "OR-13: reasoning items to a model without reasoning go, and the ids of what they produced",
            r#"{"model":"gpt-4.1","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"message","id":"msg_1","role":"assistant","content":"a"},{"role":"user","content":"more"}]}"#,
        )
    },
    Case {
        model: Some("openai/gpt-4o"),
        findings: &["OR-13 error input[1]"],
        repaired: Some(
            r#"{"model":"o3","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
        ),
        changes: &["OR-13 removed_block input[1]"],
        ..case(
            "OR-13: the target named by the caller wins over the body's model",
            r#"{"model":"o3","input":[{"role":"user","content":"q"},{"type":"reasoning","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
        )
    },
    Case {
        findings: &["OR-14 error input[2]"],
        left: &["OR-14 error input[2]"],
        ..case(
            "OR-14: with previous_response_id an id sent twice is reported, nothing is guessed",
            r#"{"model":"gpt-5","previous_response_id":"resp_1","input":[{"type":"message","id":"msg_1","role":"assistant","content":"a"},{"role":"user","content":"q"},{"type":"message","id":"msg_1","role":"assistant","content":"a"},{"role":"user","content":"q"}]}"#,
        )
    },
    Case {
        findings: &["OR-01 warning input[1]", "OR-11 warning input[1]"],
        left: &["OR-01 warning input[1]", "OR-11 warning input[1]"],
        ..case(
            "XA-01: xAI accepts what OpenAI refuses; warnings, nothing repaired",
            r#"{"model":"grok-4","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA"}]}"#,
        )
    },
    case(
        "DeepSeek replays its own reasoning with content and back-to-back reasoning items (real traffic)",
        r#"{"model":"deepseek-v4-flash","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"a"}]},{"type":"reasoning","id":"rs_2","summary":[],"content":[{"type":"reasoning_text","text":"b"}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
    ),
    Case {
        findings: &["OR-05 error input[1]"],
        left: &["OR-05 error input[1]"],
        ..case(
            "DeepSeek: a message between a call and its output (real 400), reported",
            r#"{"model":"deepseek-v4-flash","input":[{"role":"assistant","content":"a"},{"type":"function_call","call_id":"call-a","name":"read","arguments":"{}"},{"role":"assistant","content":"b"},{"type":"function_call","call_id":"call-b","name":"view","arguments":"{}"},{"type":"function_call_output","call_id":"call-a","output":"x"},{"type":"function_call_output","call_id":"call-b","output":"y"}]}"#,
        )
    },
];

#[test]
fn responses_rules_cases() {
    for c in CASES {
        check(c);
    }
}

/// The requests of `../shared/real-traffic` recorded against the Responses API, with whether the
/// API accepted them.
fn real_requests() -> Vec<(PathBuf, bool)> {
    let Some(dir) = shared::shared_dir("real-traffic") else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(dir.join("MANIFEST.json")).expect("MANIFEST.json");
    let m: serde_json::Value = serde_json::from_str(&text).expect("MANIFEST.json parses");
    m["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["api"] == "responses" && f["kind"] == "request")
        .filter_map(|f| {
            let p = f["file"].as_str()?;
            Some((dir.join(p), f["api_accepted"] == true))
        })
        .collect()
}

#[test]
fn real_accepted_requests_pass_and_rejected_ones_are_found() {
    let all = real_requests();
    if all.is_empty() {
        return;
    }
    assert!(all.len() >= 40, "only {} Responses requests", all.len());
    let o = Options::default();
    let mut failures = Vec::new();
    let mut rejected = Vec::new();
    for (path, accepted) in &all {
        let text = std::fs::read_to_string(path).expect("readable");
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let found = check_str(&text, &o).expect("a Responses body");
        let r = repair_str(&text, &o).expect("repairs");
        if *accepted {
            if !found.is_empty() {
                failures.push(format!(
                    "{name}: {:?}",
                    found.iter().map(finding).collect::<Vec<_>>()
                ));
            }
            if r.body.is_some() || !r.changes.is_empty() {
                failures.push(format!("{name}: repair changed an accepted body"));
            }
        } else {
            let got: Vec<String> = found.iter().map(finding).collect();
            println!("rejected {name}: {got:?}");
            rejected.push((name.to_owned(), got));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // The rejected requests whose error is a Responses rule are found; the third was refused
    // for an audio file's MIME type, which no rule here checks.
    let expect = [
        ("thinking_with_modified_history", "OR-01 error input[1]"),
        ("rejects_interleaved_function_calls", "OR-05 error input[1]"),
    ];
    for (part, rule) in expect {
        let hit = rejected
            .iter()
            .find(|(n, _)| n.contains(part))
            .unwrap_or_else(|| panic!("no rejected request {part}"));
        assert_eq!(hit.1, [rule], "{}", hit.0);
    }
    let audio = rejected
        .iter()
        .find(|(n, _)| n.contains("audio"))
        .expect("the audio request");
    assert!(audio.1.is_empty(), "{audio:?}");
}

/// One way to damage a real body: where, the damaged body, and the finding it must cause.
struct Damage {
    what: &'static str,
    body: String,
    rule: &'static str,
    path: String,
}

/// Every damage of the four kinds that applies to `src`: a reasoning item orphaned (the item it
/// produced removed), a function output removed, a reasoning item's `summary` removed, and
/// `content` added to a reasoning item.
fn damages(src: &str) -> Vec<Damage> {
    use turnkeeper_model::wire::{Edit, Plan, render};
    let Ok(b) = read(src) else {
        return Vec::new();
    };
    let n = b.items.len();
    let mut out = Vec::new();
    let path = |i: usize| format!("input[{i}]");
    for (i, it) in b.items.iter().enumerate() {
        if it.kind == ItemKind::Reasoning {
            if it.id.is_some()
                && let Some(next) = b.items.get(i + 1)
                && next.is_model_output()
            {
                // Everything it produced goes: the next item is then no model output.
                let mut p = Plan::default();
                let mut j = i + 1;
                while b.items.get(j).is_some_and(|x| x.is_model_output()) {
                    p.remove_item(n, j);
                    j += 1;
                }
                if let Some(body) = render(src, &b.input_at, p) {
                    out.push(Damage {
                        what: "orphaned reasoning",
                        body,
                        rule: "OR-01",
                        path: path(i),
                    });
                }
            }
            if let Some(k) = it.member(src, "summary")
                && let Some(e) = Edit::remove_member(&it.members, k)
            {
                let mut p = Plan::default();
                p.edit(i, e);
                if let Some(body) = render(src, &b.input_at, p) {
                    out.push(Damage {
                        what: "summary stripped",
                        body,
                        rule: "OR-11",
                        path: path(i),
                    });
                }
            }
            let mut p = Plan::default();
            p.edit(
                i,
                Edit::add_member(
                    it.span,
                    &it.members,
                    "content",
                    r#"[{"type":"reasoning_text","text":"translated thinking"}]"#,
                ),
            );
            if let Some(body) = render(src, &b.input_at, p) {
                out.push(Damage {
                    what: "content added",
                    body,
                    rule: "OR-12",
                    path: path(i),
                });
            }
        }
        if it.kind == ItemKind::FunctionCallOutput
            && let Some(call) = b.items[..i].iter().rposition(|c| {
                c.kind == ItemKind::FunctionCall
                    && c.call_id.map(|s| s.raw(src)) == it.call_id.map(|s| s.raw(src))
            })
        {
            let mut p = Plan::default();
            p.remove_item(n, i);
            if let Some(body) = render(src, &b.input_at, p) {
                out.push(Damage {
                    what: "output removed",
                    body,
                    rule: "OR-05",
                    path: path(call),
                });
            }
        }
    }
    out
}

/// The raw bytes of every item of `src` of kind `reasoning` (or not).
fn items(src: &str, reasoning: bool) -> Vec<String> {
    let b = read(src).expect("readable");
    b.items
        .iter()
        .filter(|it| (it.kind == ItemKind::Reasoning) == reasoning)
        .map(|it| it.span.get(src).to_owned())
        .collect()
}

/// `raw` (one item) without its `id` member (when it has one), and with `"summary":[]` added:
/// the two edits a repair may make inside a kept item.
fn edited(raw: &str) -> (Option<String>, String) {
    use turnkeeper_model::wire::{Edit, splice_into};
    let src = format!("{{\"input\":[{raw}]}}");
    let b = read(&src).expect("one item reads");
    let it = b.items.first().expect("one item");
    let no_id = it
        .member(&src, "id")
        .and_then(|k| Edit::remove_member(&it.members, k))
        .map(|e| {
            let mut s = String::new();
            splice_into(&src, it.span, &mut [e], &mut s);
            s
        });
    let mut summary = String::new();
    splice_into(
        &src,
        it.span,
        &mut [Edit::add_member(it.span, &it.members, "summary", "[]")],
        &mut summary,
    );
    (no_id, summary)
}

#[test]
fn damaged_real_bodies_are_found_repaired_and_their_reasoning_left_whole() {
    let mut seen = [0usize; 4];
    for (path, accepted) in real_requests() {
        if !accepted {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let model = read(&text)
            .ok()
            .and_then(|b| b.model().map(|m| m.into_owned()));
        if model.as_deref().map(|m| provider_of(m).0) != Some(Provider::OpenAi) {
            continue;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        for d in damages(&text) {
            let k = ["OR-01", "OR-05", "OR-11", "OR-12"]
                .iter()
                .position(|r| *r == d.rule)
                .unwrap_or(0);
            seen[k] += 1;
            let at = format!("{name} ({}, {})", d.what, d.path);
            let o = Options::default();
            let found = check_str(&d.body, &o).expect("readable");
            assert!(
                found.iter().any(|f| f.rule == *d.rule
                    && f.path == d.path
                    && f.severity == Severity::Error),
                "{at}: not found: {:?}",
                found.iter().map(finding).collect::<Vec<_>>()
            );
            let r = repair_str(&d.body, &o).expect("repairs");
            let out = r
                .body
                .as_deref()
                .unwrap_or_else(|| panic!("{at}: not repaired"));
            assert!(r.changes.iter().all(|c| !c.reason.is_empty()), "{at}");
            assert!(
                r.findings_left
                    .iter()
                    .all(|f| f.severity != Severity::Error),
                "{at}: left {:?}",
                r.findings_left
            );
            let again = check_str(out, &o).expect("the output reads");
            assert!(again.is_empty(), "{at}: check of the output: {again:?}");
            // Every reasoning item left is one of the input's, byte for byte (or with OR-11's
            // empty summary added where it was reported); every other item is one of the
            // input's, or one without its id (OR-02).
            let before = items(&d.body, true);
            let mut allowed = before.clone();
            for raw in &before {
                allowed.push(edited(raw).1);
            }
            let after = items(out, true);
            for raw in &after {
                assert!(allowed.contains(raw), "{at}: reasoning altered: {raw}");
            }
            let removed = r.changes.iter().filter(|c| c.fingerprint.is_some()).count();
            assert_eq!(after.len() + removed, before.len(), "{at}: reasoning count");
            let others = items(&d.body, false);
            let mut allowed: Vec<String> = others.clone();
            for raw in &others {
                allowed.extend(edited(raw).0);
            }
            for raw in items(out, false) {
                assert!(allowed.contains(&raw), "{at}: item altered: {raw}");
            }
        }
    }
    if real_requests().is_empty() {
        return;
    }
    println!("damaged bodies (OR-01, OR-05, OR-11, OR-12): {seen:?}");
    assert!(
        seen.iter().all(|&n| n > 0),
        "damage kinds applied: {seen:?}"
    );
}
