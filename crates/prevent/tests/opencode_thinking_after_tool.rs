//! Regression (real OpenCode 1.18.33 in `integrations/opencode/e2e`): a step whose reasoning
//! part is stored after its tool part (seed 002, opencode#9364). The conversion assumed OpenCode
//! moves such thinking first in manual-thinking mode; OpenCode sends the parts in their order,
//! `[tool_use, thinking, ...]`, and the API rejects it ("Expected `thinking` or
//! `redacted_thinking`, but found `tool_use`"). The check now finds it (AN-18), and the doctor
//! translates the finding into part edits: the parts before the reasoning get new ids that sort
//! right after it; the reasoning part is not touched.

use turnkeeper_model::opencode::change::PartChange;
use turnkeeper_model::opencode::session::{Session, load_export};
use turnkeeper_prevent::Options;
use turnkeeper_prevent::opencode::check_session;
use turnkeeper_prevent::opencode::doctor::{self, PlanOptions};

const SES: &str = "ses_0a1b2c3d4ffeTinySession01";
const MSG: &str = "msg_ed8700000002AsstFirst0002";
const TOOL: &str = r#"{"id":"prt_ed8700000020Part0000000000","sessionID":"ses_0a1b2c3d4ffeTinySession01","messageID":"msg_ed8700000002AsstFirst0002","type":"tool","callID":"toolu_01Lost","tool":"bash","state":{"status":"running","input":{"command":"ls"},"time":{"start":1781740001500}}}"#;
const REASONING: &str = r#"{"id":"prt_ed8700000021Part0000000001","sessionID":"ses_0a1b2c3d4ffeTinySession01","messageID":"msg_ed8700000002AsstFirst0002","type":"reasoning","text":"I should list the files.","metadata":{"anthropic":{"signature":"EqQBCkYIBxgCKkDvZ9QmX2"}},"time":{"start":1,"end":2}}"#;
const TEXT: &str = r#"{"id":"prt_ed8700000022Part0000000002","sessionID":"ses_0a1b2c3d4ffeTinySession01","messageID":"msg_ed8700000002AsstFirst0002","type":"text","text":"Listing."}"#;

/// The plan as `rule action part` lines.
fn listed(plan: &doctor::DoctorPlan) -> Vec<String> {
    plan.repairs
        .iter()
        .map(|r| format!("{} {} {}", r.rule(), r.action(), r.part_id))
        .collect()
}

/// `s` as a run of `plan` cut short after its first `n` repairs leaves it.
fn cut_after(s: &Session, plan: &doctor::DoctorPlan, n: usize) -> Session {
    let done = doctor::DoctorPlan {
        repairs: plan.repairs[..n].to_vec(),
        ..plan.clone()
    };
    doctor::simulate(s, &done)
}

/// The part ids of the assistant message.
fn ids(s: &Session) -> Vec<String> {
    s.messages[1].parts.iter().map(|p| p.id.clone()).collect()
}

/// A prompt, then a finished assistant message of `parts` (in id order), for Claude.
fn session(parts: &[&str]) -> Session {
    let user = format!(
        r#"{{"info":{{"id":"msg_ed8700000001UserFirst0001","sessionID":"{SES}","role":"user","time":{{"created":1781740000000}},"model":{{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}}},"parts":[{{"id":"prt_ed8700000011TextPartUser01","sessionID":"{SES}","messageID":"msg_ed8700000001UserFirst0001","type":"text","text":"go"}}]}}"#
    );
    let text = format!(
        r#"[{user},{{"info":{{"id":"{MSG}","sessionID":"{SES}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":1781740001000,"completed":1781740002000}}}},"parts":[{}]}}]"#,
        parts.join(",")
    );
    load_export(&text, "tiny").expect("the tiny export loads")
}

/// The plan as `rule action part` lines, and the parts of the assistant message after it.
fn check(parts: &[&str], expect_plan: &[&str], expect_parts: &[&str]) {
    let s = session(parts);
    let plan = doctor::plan(&s, &PlanOptions::default());
    let got = listed(&plan);
    assert_eq!(got, expect_plan, "the plan");
    let after = doctor::simulate(&s, &plan);
    let parts_after: Vec<String> = after.messages[1]
        .parts
        .iter()
        .map(|p| {
            let v: serde_json::Value = serde_json::from_str(&p.raw).expect("a part is JSON");
            format!(
                "{} {} {}",
                p.id,
                v["type"].as_str().unwrap_or_default(),
                v["state"]["status"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(parts_after, expect_parts, "the parts after the plan");
    // The reasoning part leaves byte for byte as it came.
    assert!(after.messages[1].parts.iter().any(|p| p.raw == REASONING));
    let c = check_session(&after, &Options::default()).expect("checks");
    assert!(!doctor::has_errors(&c), "left: {:#?}", c.findings);
    for r in &plan.repairs {
        if let PartChange::Create { json, .. } = &r.change {
            assert!(
                !json.contains("\"running\""),
                "a moved part keeps its rewrite: {json}"
            );
        }
    }
}

#[test]
fn a_tool_part_stored_before_its_reasoning_moves_after_it() {
    check(
        &[TOOL, REASONING, TEXT],
        &[
            "AN-08 changed_part prt_ed8700000020Part0000000000",
            "AN-18 added_part prt_ed8700000021Part0000000002",
            "AN-18 removed_part prt_ed8700000020Part0000000000",
        ],
        &[
            "prt_ed8700000021Part0000000001 reasoning -",
            "prt_ed8700000021Part0000000002 tool error",
            "prt_ed8700000022Part0000000002 text -",
        ],
    );
}

#[test]
fn reasoning_first_needs_nothing() {
    let reasoning = REASONING.replace(
        "prt_ed8700000021Part0000000001",
        "prt_ed870000001fPart0000000001",
    );
    let tool = TOOL
        .replace(
            "\"running\",",
            "\"completed\",\"output\":\"a\",\"title\":\"ls\",\"metadata\":{},",
        )
        .replace(
            "\"time\":{\"start\":1781740001500}",
            "\"time\":{\"start\":1781740001500,\"end\":1781740001600}",
        );
    let s = session(&[&reasoning, &tool, TEXT]);
    let plan = doctor::plan(&s, &PlanOptions::default());
    assert!(plan.is_empty(), "{:#?}", plan.repairs);
}

#[test]
fn a_move_cut_short_by_a_crash_is_finished_by_the_next_plan() {
    // The copy was created, the original not yet removed: the plan removes the original only.
    let s = session(&[TOOL, REASONING, TEXT]);
    let first = doctor::plan(&s, &PlanOptions::default());
    let crashed = cut_after(&s, &first, 2);
    let plan = doctor::plan(&crashed, &PlanOptions::default());
    let got = listed(&plan);
    assert_eq!(got, ["AN-18 removed_part prt_ed8700000020Part0000000000"]);
    assert_eq!(
        ids(&doctor::simulate(&crashed, &plan)),
        ids(&doctor::simulate(&s, &first))
    );
}

#[test]
fn a_part_id_of_another_shape_leaves_the_step_alone_and_says_so() {
    let reasoning = REASONING.replace("prt_ed8700000021Part0000000001", "prt_imported-reasoning");
    let text = TEXT.replace("prt_ed8700000022Part0000000002", "prt_z");
    let s = session(&[TOOL, &reasoning, &text]);
    let plan = doctor::plan(&s, &PlanOptions::default());
    assert!(
        plan.repairs
            .iter()
            .all(|r| r.kind != doctor::RepairKind::ThinkingNotFirst),
        "{:#?}",
        plan.repairs
    );
    assert!(
        plan.left_alone
            .iter()
            .any(|l| l.contains("could not be given an id")),
        "{:?}",
        plan.left_alone
    );
}

#[test]
fn a_run_cut_short_after_its_first_move_is_finished_by_the_next_plan() {
    // Two parts before the reasoning; the run stopped once the first was moved (its copy made,
    // its original removed): the next plan moves the second to the id after the first's copy.
    // (`doctor_crash` found this: the next id was taken by the first copy, and the step was left.)
    let before = TEXT
        .replace(
            "prt_ed8700000022Part0000000002",
            "prt_ed870000001fPart0000000009",
        )
        .replace("Listing.", "First.");
    let s = session(&[&before, TOOL, REASONING, TEXT]);
    let first = doctor::plan(&s, &PlanOptions::default());
    let got = listed(&first);
    assert_eq!(
        got,
        [
            "AN-08 changed_part prt_ed8700000020Part0000000000",
            "AN-18 added_part prt_ed8700000021Part0000000002",
            "AN-18 removed_part prt_ed870000001fPart0000000009",
            "AN-18 added_part prt_ed8700000021Part0000000003",
            "AN-18 removed_part prt_ed8700000020Part0000000000",
        ]
    );
    let cut = cut_after(&s, &first, 3);
    let plan = doctor::plan(&cut, &PlanOptions::default());
    let got = listed(&plan);
    assert_eq!(
        got,
        [
            "AN-18 added_part prt_ed8700000021Part0000000003",
            "AN-18 removed_part prt_ed8700000020Part0000000000",
        ]
    );
    assert_eq!(
        ids(&doctor::simulate(&cut, &plan)),
        ids(&doctor::simulate(&s, &first))
    );
}

#[test]
fn thinking_after_an_earlier_step_of_the_same_request_message_moves_first_too() {
    // Two steps with no tool call between them are one request message, `[text, thinking,
    // text]`: the check finds it (AN-18) though no step stores its reasoning late. (The review
    // found this: a pre-scan of the doctor's own, step by step, had kept the check from being
    // asked.)
    let part = |n: u32, body: &str| {
        format!(
            r#"{{"id":"prt_ed870000002{n}Part000000000{n}","sessionID":"{SES}","messageID":"{MSG}",{}"#,
            &body[1..]
        )
    };
    let parts = [
        part(0, r#"{"type":"step-start"}"#),
        part(1, r#"{"type":"text","text":"First."}"#),
        part(2, r#"{"type":"step-finish","reason":"stop"}"#),
        part(3, r#"{"type":"step-start"}"#),
        part(
            4,
            r#"{"type":"reasoning","text":"hmm","metadata":{"anthropic":{"signature":"EqQBCkYIBxgCKkDvZ9QmX2"}},"time":{"start":1,"end":2}}"#,
        ),
        part(5, r#"{"type":"text","text":"Second."}"#),
    ];
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let s = session(&refs);
    let plan = doctor::plan(&s, &PlanOptions::default());
    assert_eq!(
        listed(&plan),
        [
            "AN-18 added_part prt_ed8700000024Part0000000005",
            "AN-18 removed_part prt_ed8700000021Part0000000001",
        ]
    );
    let c = check_session(&doctor::simulate(&s, &plan), &Options::default()).expect("checks");
    assert!(!doctor::has_errors(&c), "left: {:#?}", c.findings);
}
