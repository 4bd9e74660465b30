//! Bedrock Converse over real traffic (`../shared/real-traffic/bedrock-converse`, MANIFEST
//! entries with `api: "converse"`), and mutators on accepted real bodies.
//!
//! - Every accepted request passes `check_converse` with no error, for its recorded model and
//!   with no model, and `repair_converse` returns the input itself.
//! - Each rejected request is found for what it was rejected for.
//! - Damage done to an accepted body (a toolResult removed, reasoning moved after text, a
//!   signature stripped, a text nulled) is found and, where a safe repair exists, repaired to a
//!   body that checks clean; every reasoningContent block of the output is byte-identical to one
//!   of the input.

use std::borrow::Cow;
use std::path::PathBuf;

use turnkeeper_model::Span;
use turnkeeper_model::wire::converse::{BlockKind, read};
use turnkeeper_prevent::wire::converse::{check_converse, repair_converse};
use turnkeeper_prevent::{Options, Policy, Severity};

#[path = "../../testkit/src/shared.rs"]
mod shared;

/// A Converse request of the manifest: its file, model and whether the API accepted it.
struct Req {
    path: PathBuf,
    model: String,
    accepted: bool,
}

fn requests() -> Vec<Req> {
    let Some(dir) = shared::shared_dir("real-traffic") else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(dir.join("MANIFEST.json")).expect("manifest");
    let m: serde_json::Value = serde_json::from_str(&text).expect("manifest parses");
    m["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["api"] == "converse" && f["kind"] == "request")
        .filter_map(|f| {
            Some(Req {
                path: dir.join(f["file"].as_str()?),
                model: f["model"].as_str()?.to_owned(),
                accepted: f["api_accepted"] == true,
            })
        })
        .collect()
}

fn opts(model: Option<&str>) -> Options<'static> {
    Options {
        model: model.map(str::to_owned),
        ..Options::default()
    }
}

fn load(name: &str) -> Option<(String, String)> {
    let r = requests()
        .into_iter()
        .find(|r| r.path.to_string_lossy().contains(name))?;
    Some((std::fs::read_to_string(&r.path).expect("reads"), r.model))
}

/// The bytes of every reasoningContent block of `src`.
fn reasoning(src: &str) -> Vec<String> {
    let b = read(src).expect("reads as Converse");
    b.messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .filter(|b| b.kind == BlockKind::Reasoning)
        .map(|b| b.span.get(src).to_owned())
        .collect()
}

/// Every reasoning block of `out` is byte-identical to one of `input`.
fn reasoning_kept(input: &str, out: &str) {
    let before = reasoning(input);
    for r in reasoning(out) {
        assert!(before.contains(&r), "altered reasoning block: {r}");
    }
}

/// `src` with `span` replaced by `with`.
fn splice(src: &str, span: Span, with: &str) -> String {
    format!(
        "{}{with}{}",
        &src[..span.start as usize],
        &src[span.end as usize..]
    )
}

fn rules(found: &[turnkeeper_prevent::Finding]) -> Vec<(String, String)> {
    found
        .iter()
        .map(|f| (f.rule.as_str().to_owned(), f.path.clone()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn accepted_converse_requests_check_clean_and_repair_unchanged() {
    let reqs = requests();
    if reqs.is_empty() {
        return;
    }
    let accepted: Vec<&Req> = reqs.iter().filter(|r| r.accepted).collect();
    assert!(accepted.len() >= 12, "only {} accepted", accepted.len());
    for r in accepted {
        let text = std::fs::read_to_string(&r.path).expect("reads");
        for model in [Some(r.model.as_str()), None] {
            let o = opts(model);
            let found = check_converse(&text, &o).expect("reads as Converse");
            let errors: Vec<_> = found
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .collect();
            assert!(errors.is_empty(), "{}: {errors:#?}", r.path.display());
            let rep = repair_converse(&text, &o).expect("repairs");
            assert!(
                matches!(rep.body, Cow::Borrowed(b) if std::ptr::eq(b, text.as_str())),
                "{}: repair changed an accepted body",
                r.path.display()
            );
            assert!(rep.report.is_empty());
        }
    }
}

#[test]
fn rejected_converse_requests_are_found_for_what_they_were_rejected_for() {
    let reqs = requests();
    if reqs.is_empty() {
        return;
    }
    // The two recorded 400s: Claude on an S3 document (`document.source.type: Field required`)
    // and Nova on a toolResult holding one (`extraneous key [toolResult] is not permitted`).
    let expect = [
        ("bedrock_claude__1", "messages[2].content[2]"),
        ("bedrock_nova__1", "messages[2].content[0]"),
    ];
    let rejected: Vec<&Req> = reqs.iter().filter(|r| !r.accepted).collect();
    assert_eq!(rejected.len(), expect.len());
    for r in rejected {
        let name = r.path.to_string_lossy();
        let (_, at) = expect
            .iter()
            .find(|(n, _)| name.contains(n))
            .expect("a known rejected request");
        let text = std::fs::read_to_string(&r.path).expect("reads");
        let found = check_converse(&text, &opts(Some(&r.model))).expect("reads");
        assert_eq!(rules(&found), pairs(&[("BR-15", at)]), "{name}");
    }
}

const TOOL_TURN: &str = "test_bedrock_anthropic_tool_with_thinking__1";
const THINKING: &str = "test_bedrock_model_thinking_part_anthropic__1";
const REDACTED: &str = "test_bedrock_model_thinking_part_redacted__1";

#[test]
fn reasoning_moved_after_the_text_is_put_back_first() {
    for name in [TOOL_TURN, THINKING, REDACTED] {
        let Some((text, model)) = load(name) else {
            return;
        };
        let b = read(&text).expect("reads");
        let a = &b.messages[1];
        let arr = a.content_array().expect("array");
        assert!(a.blocks[0].is_reasoning() && arr.elems.len() >= 2);
        // [R, x, ...] -> [x, R, ...], separators kept.
        let (r, x) = (arr.elems[0], arr.elems[1]);
        let swapped = format!(
            "{}{}{}",
            x.get(&text),
            &text[r.end as usize..x.start as usize],
            r.get(&text)
        );
        let damaged = splice(&text, Span::new(r.start as usize, x.end as usize), &swapped);
        let o = opts(Some(&model));
        let found = check_converse(&damaged, &o).expect("reads");
        assert_eq!(
            rules(&found),
            pairs(&[("BR-01", "messages[1].content[0]")]),
            "{name}"
        );
        let rep = repair_converse(&damaged, &o).expect("repairs");
        assert_eq!(rep.body, text, "{name}: the original order comes back");
        assert!(rep.report.findings_left.is_empty());
        assert_eq!(rep.report.changes.len(), 1);
        reasoning_kept(&damaged, &rep.body);
    }
}

#[test]
fn a_removed_tool_result_is_found_and_the_signed_turn_left_whole() {
    let Some((text, model)) = load(TOOL_TURN) else {
        return;
    };
    let b = read(&text).expect("reads");
    let result = b.messages[2].blocks[0];
    assert_eq!(result.kind, BlockKind::ToolResult);
    let damaged = splice(&text, result.span, "");
    let o = opts(Some(&model));
    let found = check_converse(&damaged, &o).expect("reads");
    assert_eq!(
        rules(&found),
        pairs(&[
            ("BR-11", "messages[1].content[2]"),
            ("BR-14", "messages[2]")
        ])
    );
    // The call sits in a signed turn, and the empty message is the request's last: nothing is
    // safe to change, and nothing is.
    assert!(found.iter().all(|f| f.repair.is_none()));
    let rep = repair_converse(&damaged, &o).expect("repairs");
    assert!(matches!(rep.body, Cow::Borrowed(_)));
    assert_eq!(rep.report.findings_left, found);
}

#[test]
fn a_removed_tool_use_leaves_an_orphan_result_that_goes() {
    let Some((text, model)) = load(TOOL_TURN) else {
        return;
    };
    // The user's next message gets a text after the result, so the message survives the repair.
    let b = read(&text).expect("reads");
    let a = b.messages[1].content_array().expect("array").clone();
    let call = b.messages[1].blocks[2];
    assert_eq!(call.kind, BlockKind::ToolUse);
    let u = b.messages[2].content_array().expect("array").clone();
    let tail = Span::new(u.span.end as usize - 1, u.span.end as usize - 1);
    let damaged = splice(&text, tail, ", {\"text\": \"and?\"}");
    let damaged = splice(
        &damaged,
        Span::new(a.elems[1].end as usize, call.span.end as usize),
        "",
    );
    let o = opts(Some(&model));
    let found = check_converse(&damaged, &o).expect("reads");
    assert_eq!(rules(&found), pairs(&[("BR-12", "messages[2].content[0]")]));
    let rep = repair_converse(&damaged, &o).expect("repairs");
    assert!(rep.report.findings_left.is_empty(), "{:#?}", rep.report);
    assert!(
        rep.body
            .contains(r#"{"role": "user", "content": [{"text": "and?"}]}"#),
        "{}",
        rep.body
    );
    reasoning_kept(&damaged, &rep.body);
    assert_eq!(reasoning(&rep.body), reasoning(&text));
}

#[test]
fn a_stripped_signature_is_dropped_for_deepseek_and_a_nulled_text_is_handled_by_policy() {
    let Some((text, model)) = load(THINKING) else {
        return;
    };
    let b = read(&text).expect("reads");
    let r = b.messages[1].blocks[0].reasoning.expect("reasoning");
    let sig = r.signature.expect("signed");
    let txt = r.text.expect("text");
    // Strip the signature (with its key): `, "signature": "..."`.
    let key_start = text[..sig.span.start as usize]
        .rfind(", \"signature\"")
        .expect("signature key");
    let unsigned = splice(&text, Span::new(key_start, sig.span.end as usize + 1), "");
    let o = opts(Some("us.deepseek.r1-v1:0"));
    let found = check_converse(&unsigned, &o).expect("reads");
    assert_eq!(rules(&found), pairs(&[("BR-05", "messages[1].content[0]")]));
    let rep = repair_converse(&unsigned, &o).expect("repairs");
    assert!(rep.report.findings_left.is_empty());
    assert!(reasoning(&rep.body).is_empty());
    assert_eq!(rep.report.changes.len(), 1);
    assert!(rep.report.changes[0].fingerprint.is_some());

    // Null the text of the signed block: reported, left by default; filled on opt-in.
    let nulled = splice(&text, txt.span, "null");
    let o = opts(Some(&model));
    let found = check_converse(&nulled, &o).expect("reads");
    assert_eq!(rules(&found), pairs(&[("BR-04", "messages[1].content[0]")]));
    let rep = repair_converse(&nulled, &o).expect("repairs");
    assert!(matches!(rep.body, Cow::Borrowed(_)));
    assert_eq!(rep.report.findings_left, found);
    let mut on = opts(Some(&model));
    on.policy = Policy {
        bedrock_empty_reasoning_text: true,
        ..Policy::default()
    };
    let rep = repair_converse(&nulled, &on).expect("repairs");
    assert_eq!(rep.body, splice(&text, txt.span, "\"\""));
    assert!(rep.report.findings_left.is_empty());
    assert_eq!(rep.report.changes[0].action.as_str(), "lossy_stand_in");

    // Null the text of the unsigned block: it goes whole.
    let b = read(&unsigned).expect("reads");
    let t2 = b.messages[1].blocks[0]
        .reasoning
        .and_then(|r| r.text)
        .expect("text");
    let both = splice(&unsigned, t2.span, "null");
    let rep = repair_converse(&both, &o).expect("repairs");
    assert_eq!(
        rules(&check_converse(&both, &o).expect("reads")),
        pairs(&[("BR-04", "messages[1].content[0]")])
    );
    assert!(rep.report.findings_left.is_empty());
    assert!(reasoning(&rep.body).is_empty());
}
