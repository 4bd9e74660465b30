//! The OpenCode doctor's plan for a session bound elsewhere, planned with no target (Anthropic,
//! the strictest), and `plan_checked` given a check already made: the plan is the one `plan`
//! makes, whatever check the caller had (a Kimi session's own check has only warnings, which
//! must not stand in for the Anthropic one), and the second check of the planned session is
//! made for the same model as the first.

use turnkeeper_model::opencode::session::{Session, load_export};
use turnkeeper_prevent::Options;
use turnkeeper_prevent::opencode::check_session;
use turnkeeper_prevent::opencode::doctor::{self, PlanOptions};

const SES: &str = "ses_0a1b2c3d4ffeTinySession01";

/// A prompt, then a finished assistant message of `parts` (JSON members without the ids), both
/// for `provider`/`model`.
fn session(provider: &str, model: &str, parts: &[&str]) -> Session {
    let msg = "msg_ed8700000002AsstFirst0002";
    let parts: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(n, p)| {
            format!(r#"{{"id":"prt_ed870000002{n}Part0000000{n}","sessionID":"{SES}","messageID":"{msg}",{p}}}"#)
        })
        .collect();
    let text = format!(
        r#"[{{"info":{{"id":"msg_ed8700000001UserFirst0001","sessionID":"{SES}","role":"user","time":{{"created":1781740000000}},"model":{{"providerID":"{provider}","modelID":"{model}"}}}},"parts":[{{"id":"prt_ed8700000011TextPartUser01","sessionID":"{SES}","messageID":"msg_ed8700000001UserFirst0001","type":"text","text":"go"}}]}},{{"info":{{"id":"{msg}","sessionID":"{SES}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"{provider}","modelID":"{model}","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":1781740001000,"completed":1781740002000}}}},"parts":[{}]}}]"#,
        parts.join(",")
    );
    load_export(&text, "tiny").expect("the tiny export loads")
}

const STEP: &str = r#""type":"step-start""#;
const SIGNED: &str = r#""type":"reasoning","text":"hm","metadata":{"anthropic":{"signature":"EqQBCkYIBxgCKkDvZ9Q"}},"time":{"start":1,"end":2}"#;
const TEXT: &str = r#""type":"text","text":"Done.","time":{"start":3,"end":3}"#;
const BLANK: &str = r#""type":"text","text":"  ","time":{"start":3,"end":3}"#;

/// The plan as `kind part` lines.
fn listed(plan: &doctor::DoctorPlan) -> Vec<String> {
    plan.repairs
        .iter()
        .map(|r| format!("{:?} {}", r.kind, r.part_id))
        .collect()
}

/// `plan`, and `plan_checked` given the session's own check, for `opts`: both lists, which
/// must be equal, and the list.
fn check(s: &Session, opts: &PlanOptions, expect: &[&str]) {
    let own = check_session(s, &Options::default()).expect("checks");
    let planned = listed(&doctor::plan(s, opts));
    assert_eq!(planned, expect, "plan");
    assert_eq!(
        listed(&doctor::plan_checked(s, opts, &own)),
        expect,
        "plan_checked with the session's own check"
    );
}

#[test]
fn a_kimi_session_planned_with_no_target_is_judged_as_anthropic() {
    let s = session("moonshot", "kimi-k2", &[STEP, TEXT, BLANK, STEP, TEXT]);
    check(
        &s,
        &PlanOptions::default(),
        &["EmptyText prt_ed8700000022Part00000002"],
    );
    // For its own target, nothing Anthropic-only is planned.
    let own = PlanOptions {
        target: Some(turnkeeper_prevent::opencode::session_target(&s, None)),
        ..PlanOptions::default()
    };
    check(&s, &own, &[]);
}

#[test]
fn a_claude_session_gets_the_same_plan_from_a_check_made_already() {
    let s = session(
        "anthropic",
        "claude-sonnet-4-5",
        &[STEP, SIGNED, TEXT, BLANK],
    );
    check(
        &s,
        &PlanOptions::default(),
        &["EmptyText prt_ed8700000023Part00000003"],
    );
}

#[test]
fn the_planned_session_is_checked_again_for_the_same_model() {
    // Once the blank text goes, the turn's request message is left with its reasoning alone:
    // as Claude sees a Kimi turn (another model's metadata is not replayed, so the reasoning is
    // unsigned and dropped) it is empty (AN-04). Checked again for Kimi, nothing would be found.
    let s = session("moonshot", "kimi-k2", &[STEP, SIGNED, BLANK]);
    check(
        &s,
        &PlanOptions::default(),
        &[
            "EmptyText prt_ed8700000022Part00000002",
            "EmptyTurn prt_ed8700000022Part00000002ieJLBQlCL8HPGA",
        ],
    );
}
