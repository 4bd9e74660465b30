//! `prevent::opencode`: where a session goes ([`Target`]), what its next request breaks
//! (`check_session`, findings traced to message and part ids), and the doctor's plan of part
//! repairs, on the exports of `corpus/opencode/export` (see its README). Each export's findings
//! and plans, under the plan options a caller can give, are one snapshot, reviewed as a report.

use std::path::{Path, PathBuf};

use turnkeeper_model::opencode::change::PartChange;
use turnkeeper_model::opencode::session::{Session, load_export};
use turnkeeper_model::{FormatHint, read};
use turnkeeper_prevent::opencode::doctor::{self, DoctorPlan, PlanOptions};
use turnkeeper_prevent::opencode::{
    NEXT_PROMPT, SWITCH_MODEL, SessionCheck, Target, check_session, next_turn_body, session_model,
    session_target,
};
use turnkeeper_prevent::{Options, Severity, check};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The export `name` of corpus/opencode/export, as text.
fn export_text(name: &str) -> String {
    let path = root().join("corpus/opencode/export").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn export(name: &str) -> Session {
    load_export(&export_text(name), name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `Target::of(provider, model)` in one line: family, provider, model, and the model checked.
fn target(provider: Option<&str>, model: Option<&str>) -> String {
    let t = Target::of(provider, model);
    format!(
        "{:?} provider={} model={} checked={}",
        t.family,
        t.provider.as_deref().unwrap_or("-"),
        t.model.as_deref().unwrap_or("-"),
        t.checked_model().as_deref().unwrap_or("-")
    )
}

#[test]
fn the_target_is_claude_or_the_anthropic_provider() {
    let cases: &[(Option<&str>, Option<&str>, &str)] = &[
        (
            Some("anthropic"),
            Some("claude-sonnet-4-5"),
            "Anthropic provider=anthropic model=claude-sonnet-4-5 checked=claude-sonnet-4-5",
        ),
        (
            Some("Anthropic"),
            Some("some-model"),
            "Anthropic provider=Anthropic model=some-model checked=some-model",
        ),
        (
            Some("openrouter"),
            Some("anthropic/Claude-Opus-4-6"),
            "Anthropic provider=openrouter model=anthropic/Claude-Opus-4-6 checked=anthropic/Claude-Opus-4-6",
        ),
        (
            None,
            Some("anthropic/claude-opus-4-6"),
            "Anthropic provider=anthropic model=claude-opus-4-6 checked=claude-opus-4-6",
        ),
        (
            None,
            Some("moonshot/kimi-k2"),
            "Other provider=moonshot model=kimi-k2 checked=claude-sonnet-4-5",
        ),
        (
            None,
            Some("a/b/c"),
            "Other provider=- model=a/b/c checked=claude-sonnet-4-5",
        ),
        (
            Some("deepseek"),
            Some("deepseek-chat"),
            "Other provider=deepseek model=deepseek-chat checked=claude-sonnet-4-5",
        ),
        (
            None,
            None,
            "Other provider=- model=- checked=claude-sonnet-4-5",
        ),
    ];
    for (p, m, expect) in cases {
        assert_eq!(target(*p, *m), *expect, "{p:?} {m:?}");
    }
    assert_eq!(SWITCH_MODEL, "claude-sonnet-4-5");
}

/// Findings, one a line: severity, rule, message and part ids, message.
fn render_check(c: &SessionCheck) -> String {
    let mut out = format!(
        "target: {:?} {} / {} (checked as {})\n",
        c.target.family,
        c.target.provider.as_deref().unwrap_or("-"),
        c.target.model.as_deref().unwrap_or("-"),
        c.model.as_deref().unwrap_or("-")
    );
    for f in &c.findings {
        out.push_str(&format!(
            "{:?} {} {}/{}: {}\n",
            f.finding.severity,
            f.finding.rule,
            f.message_id.as_deref().unwrap_or("-"),
            f.part_id.as_deref().unwrap_or("-"),
            f.finding.message
        ));
    }
    out.push_str(&format!("has errors: {}\n", doctor::has_errors(c)));
    out
}

/// A doctor plan, one repair a line (rule, action, kind, ids, reason, and the new part's JSON
/// for a change or an addition), then what it leaves alone.
fn render_plan(p: &DoctorPlan) -> String {
    let mut out = format!("session {}: {} repair(s)\n", p.session_id, p.repairs.len());
    for r in &p.repairs {
        out.push_str(&format!(
            "{} {} {:?} {}/{}: {}\n",
            r.rule(),
            r.action(),
            r.kind,
            r.message_id,
            r.part_id,
            r.reason
        ));
        match &r.change {
            PartChange::Replace { new_raw, .. } => out.push_str(&format!("    now {new_raw}\n")),
            PartChange::Create { json, .. } => out.push_str(&format!("    new {json}\n")),
            _ => {}
        }
    }
    for l in &p.left_alone {
        out.push_str(&format!("left alone: {l}\n"));
    }
    assert_eq!(p.is_empty(), p.repairs.is_empty());
    assert_eq!(p.to_write_plan().changes.len(), p.repairs.len());
    out
}

/// The report of one export: its findings, the doctor's plans under each option set, and the
/// findings left once the default plan is applied.
fn report(name: &str) -> String {
    let session = export(name);
    let opts = Options::default();
    let c = check_session(&session, &opts).expect("checks");
    let mut out = format!("== {name}\nmodel: {:?}\n", session_model(&session));
    out.push_str(&render_check(&c));
    let own = PlanOptions {
        last_message_live: false,
        target: Some(session_target(&session, None)),
    };
    let default = doctor::plan(&session, &own);
    out.push_str("-- plan, for the session's own target\n");
    out.push_str(&render_plan(&default));
    out.push_str("-- plan, no target given (Anthropic, the strictest)\n");
    out.push_str(&render_plan(&doctor::plan(
        &session,
        &PlanOptions::default(),
    )));
    out.push_str("-- plan, the last message still being written\n");
    out.push_str(&render_plan(&doctor::plan(
        &session,
        &PlanOptions {
            last_message_live: true,
            target: None,
        },
    )));
    out.push_str("-- plan, bound for another provider\n");
    out.push_str(&render_plan(&doctor::plan(
        &session,
        &PlanOptions {
            last_message_live: false,
            target: Some(Target::of(Some("moonshot"), Some("kimi-k2"))),
        },
    )));
    let after = doctor::simulate(&session, &default);
    out.push_str("-- after the plan\n");
    out.push_str(&render_check(
        &check_session(&after, &opts).expect("checks"),
    ));
    out
}

/// The doctor corpus's `interrupted` session (corpus/opencode/doctor/README.md: crash-mid-stream
/// text, thinking-only last steps, turns emptied of unsigned reasoning, stuck tool parts in
/// finished and errored messages, empty and sentinel signatures), read from its JSON tree into
/// the bare `[{info, parts}]` export, messages and parts in id order as OpenCode sorts them.
fn interrupted_session() -> Session {
    let storage = root().join("corpus/opencode/doctor/before/storage");
    let sessions: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("corpus/opencode/doctor/before/sessions.json"))
            .expect("sessions.json"),
    )
    .expect("sessions.json is JSON");
    let id = sessions["interrupted"]
        .as_str()
        .expect("an interrupted session");
    let files = |dir: PathBuf| -> Vec<String> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        paths.sort();
        paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect()
    };
    let mut entries = Vec::new();
    for info in files(storage.join("message").join(id)) {
        let msg: serde_json::Value = serde_json::from_str(&info).expect("a message file");
        let msg_id = msg["id"].as_str().expect("a message id");
        let parts = files(storage.join("part").join(msg_id));
        entries.push(format!(
            r#"{{"info":{info},"parts":[{}]}}"#,
            parts.join(",")
        ));
    }
    let text = format!("[{}]", entries.join(","));
    load_export(&text, "interrupted").expect("the interrupted session loads")
}

#[test]
fn interrupted_session_report() {
    let session = interrupted_session();
    let c = check_session(&session, &Options::default()).expect("checks");
    let mut out = render_check(&c);
    let plan = doctor::plan(&session, &PlanOptions::default());
    out.push_str(&render_plan(&plan));
    out.push_str("-- the last message still being written\n");
    out.push_str(&render_plan(&doctor::plan(
        &session,
        &PlanOptions {
            last_message_live: true,
            target: None,
        },
    )));
    out.push_str("-- after the plan\n");
    let after = doctor::simulate(&session, &plan);
    out.push_str(&render_check(
        &check_session(&after, &Options::default()).expect("checks"),
    ));
    insta::assert_snapshot!(out);
}

#[test]
fn broken_session_report() {
    insta::assert_snapshot!(report("broken.json"));
}

#[test]
fn aborted_reasoning_report() {
    insta::assert_snapshot!(report("aborted_reasoning.export.json"));
}

#[test]
fn kimi_session_report() {
    insta::assert_snapshot!(report("kimi_session.export.json"));
}

#[test]
fn healthy_sessions_report() {
    insta::assert_snapshot!(format!(
        "{}{}",
        report("healthy.json"),
        report("healthy.doc.json")
    ));
}

#[test]
fn a_session_goes_where_its_last_model_says_unless_told() {
    let s = export("kimi_session.export.json");
    let t = session_target(&s, None);
    assert_eq!(
        (t.provider.as_deref(), t.model.as_deref(), t.is_anthropic()),
        (Some("opencode"), Some("moonshotai/kimi-k2.6"), false),
        "{t:?}"
    );
    let t = session_target(&s, Some("anthropic/claude-opus-4-6"));
    assert_eq!(
        (t.provider.as_deref(), t.model.as_deref(), t.is_anthropic()),
        (Some("anthropic"), Some("claude-opus-4-6"), true)
    );
}

#[test]
fn the_next_turn_is_the_request_and_a_prompt_after_an_assistant_message() {
    let ends_with_assistant = r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"a"}]}]}"#;
    assert_eq!(
        next_turn_body(ends_with_assistant).as_deref(),
        Some(
            format!(
                r#"{{"messages":[{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"a"}}]}},{{"role":"user","content":[{{"type":"text","text":"{NEXT_PROMPT}"}}]}}]}}"#
            )
            .as_str()
        )
    );
    assert_eq!(
        next_turn_body(r#"{"messages":[{"role":"user","content":"q"}]}"#),
        None
    );
    assert_eq!(next_turn_body("not json"), None);
}

#[test]
fn an_export_is_checked_with_paths_into_the_export() {
    let text = export_text("broken.json");
    let t = read(&text, FormatHint::Auto).expect("reads");
    let findings: Vec<String> = check(&t, &Options::default())
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} {} {}", f.rule, f.path, f.message))
        .collect();
    insta::assert_snapshot!(findings.join("\n"));
    // `repair` leaves an export as it is (the doctor repairs stored sessions) and says what is
    // left: what `check` finds.
    let r = turnkeeper_prevent::repair(&t, &Options::default()).expect("repairs");
    assert!(matches!(r.body, std::borrow::Cow::Borrowed(b) if b == text));
    let left: Vec<String> = r
        .report
        .findings_left
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} {} {}", f.rule, f.path, f.message))
        .collect();
    assert_eq!(left, findings);
    let healthy = export_text("healthy.json");
    let t = read(&healthy, FormatHint::Auto).expect("reads");
    assert_eq!(check(&t, &Options::default()).len(), 0);
}

#[test]
fn a_session_switched_elsewhere_is_checked_as_if_switched_to_claude() {
    let s = export("broken.json");
    let opts = Options {
        model: Some("moonshot/kimi-k2".to_owned()),
        ..Options::default()
    };
    let c = check_session(&s, &opts).expect("checks");
    insta::assert_snapshot!(render_check(&c));
}

/// A two-message export: a prompt, then a finished assistant message of `parts` (JSON objects
/// without their ids, which are filled in).
fn two_messages(parts: &[&str]) -> Session {
    let ses = "ses_0a1b2c3d4ffeTinySession01";
    let user = r#"{"info":{"id":"msg_ed8700000001UserFirst0001","sessionID":"ses_0a1b2c3d4ffeTinySession01","role":"user","time":{"created":1781740000000},"model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}},"parts":[{"id":"prt_ed8700000011TextPartUser01","sessionID":"ses_0a1b2c3d4ffeTinySession01","messageID":"msg_ed8700000001UserFirst0001","type":"text","text":"go"}]}"#;
    let msg = "msg_ed8700000002AsstFirst0002";
    let parts: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(n, p)| {
            format!(
                r#"{{"id":"prt_ed870000002{n}Part0000000{n}","sessionID":"{ses}","messageID":"{msg}",{}"#,
                &p[1..]
            )
        })
        .collect();
    let text = format!(
        r#"[{user},{{"info":{{"id":"{msg}","sessionID":"{ses}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":1781740001000,"completed":1781740002000}}}},"parts":[{}]}}]"#,
        parts.join(",")
    );
    load_export(&text, "tiny").expect("the tiny export loads")
}

/// The kinds of the repairs the doctor plans for `parts`.
fn planned(parts: &[&str]) -> Vec<String> {
    doctor::plan(&two_messages(parts), &PlanOptions::default())
        .repairs
        .iter()
        .map(|r| format!("{:?}", r.kind))
        .collect()
}

#[test]
fn a_last_step_of_reasoning_alone_gets_a_placeholder_text() {
    let step = r#"{"type":"step-start"}"#;
    let unsigned = r#"{"type":"reasoning","text":"thinking aloud","time":{"start":1,"end":2}}"#;
    let empty = r#"{"type":"reasoning","text":"","time":{"start":1,"end":2}}"#;
    let text = r#"{"type":"text","text":"done","time":{"start":3,"end":3}}"#;
    let signed_empty = r#"{"type":"reasoning","text":"","metadata":{"anthropic":{"signature":"EqQBCkYIBxgCKkDvZ9Q"}},"time":{"start":1,"end":2}}"#;
    let redacted = r#"{"type":"reasoning","text":"","metadata":{"anthropic":{"redactedData":"EqQBCkYIBxgCKkDvZ9Q"}},"time":{"start":1,"end":2}}"#;
    // Unsigned reasoning is dropped by the AI SDK: the turn is sent empty (AN-04).
    assert_eq!(planned(&[step, unsigned]), ["EmptyTurn"]);
    assert_eq!(planned(&[step, signed_empty]), ["ContentlessTurn"]);
    // The check's AN-19 is about `thinking` (api-rules.md: `content[-1].type == "thinking"`); a
    // turn ending in redacted thinking is not found, so the doctor adds nothing.
    assert_eq!(planned(&[step, redacted]), Vec::<String>::new());
    assert_eq!(planned(&[step, unsigned, text]), Vec::<String>::new());
    assert_eq!(planned(&[step, empty]), Vec::<String>::new());
    // Text in an earlier step helps only when no tool call ended that step.
    assert_eq!(planned(&[step, text, step, unsigned]), Vec::<String>::new());
    // A turn whose only text is blank: once that part is removed (AN-05), the turn ends with
    // its thinking, which the check of the planned session finds (AN-19).
    let signed = r#"{"type":"reasoning","text":"hm","metadata":{"anthropic":{"signature":"EqQBCkYIBxgCKkDvZ9Q"}},"time":{"start":1,"end":2}}"#;
    let blank = r#"{"type":"text","text":"  ","time":{"start":3,"end":3}}"#;
    assert_eq!(
        planned(&[step, signed, blank]),
        ["EmptyText", "ContentlessTurn"]
    );
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("JSON")
}

#[test]
fn an_interrupted_call_starts_when_it_started_or_else_with_its_message() {
    let running = |start: i64| {
        format!(
            r#"{{"type":"tool","callID":"toolu_1","tool":"bash","state":{{"status":"running","input":{{"command":"ls"}},"time":{{"start":{start}}}}}}}"#
        )
    };
    let new_state = |start: i64| -> serde_json::Value {
        let plan = doctor::plan(&two_messages(&[&running(start)]), &PlanOptions::default());
        match plan.repairs.first().map(|r| &r.change) {
            Some(PartChange::Replace { new_raw, .. }) => {
                let v: serde_json::Value = serde_json::from_str(new_raw).expect("JSON");
                v["state"].clone()
            }
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        new_state(1781740001500),
        json(
            r#"{"error":"[Tool execution was interrupted]","input":{"command":"ls"},"status":"error","time":{"end":1781740002000,"start":1781740001500}}"#
        )
    );
    // No real start: the message's creation, and an end no earlier than the start.
    assert_eq!(
        new_state(0),
        json(
            r#"{"error":"[Tool execution was interrupted]","input":{"command":"ls"},"status":"error","time":{"end":1781740002000,"start":1781740001000}}"#
        )
    );
    assert_eq!(
        new_state(1781740009000),
        json(
            r#"{"error":"[Tool execution was interrupted]","input":{"command":"ls"},"status":"error","time":{"end":1781740009000,"start":1781740009000}}"#
        )
    );
}

/// A session whose last message is a prompt goes where that prompt's model says, even when an
/// assistant message before it ran elsewhere (OpenCode sends the next request with the prompt's
/// model).
#[test]
fn the_last_prompts_model_beats_an_earlier_assistants() {
    let ses = "ses_0a1b2c3d4ffeTinySession01";
    let user = |id: &str, created: u64, model: &str| {
        format!(
            r#"{{"info":{{"id":"{id}","sessionID":"{ses}","role":"user","time":{{"created":{created}}},"model":{{"providerID":"anthropic","modelID":"{model}"}}}},"parts":[]}}"#
        )
    };
    let assistant = format!(
        r#"{{"info":{{"id":"msg_ed8700000002AsstFirst0002","sessionID":"{ses}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"opencode","modelID":"moonshotai/kimi-k2.6","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":1781740001000,"completed":1781740002000}}}},"parts":[]}}"#
    );
    let text = format!(
        "[{},{assistant},{}]",
        user(
            "msg_ed8700000001UserFirst0001",
            1_781_740_000_000,
            "claude-sonnet-4-5"
        ),
        user(
            "msg_ed8700000003UserSecond003",
            1_781_740_003_000,
            "claude-opus-4-6"
        )
    );
    let s = load_export(&text, "three").expect("loads");
    let t = session_target(&s, None);
    assert_eq!(
        (t.provider.as_deref(), t.model.as_deref(), t.is_anthropic()),
        (Some("anthropic"), Some("claude-opus-4-6"), true),
        "{t:?}"
    );
}

/// An assistant message that names no model (here only a provider) says nothing about where the
/// next request goes: the session goes where the prompt before it says. Kills the match guard
/// `a.model_id.is_some()` replaced with `true` in `session_target`, under which the last
/// assistant message decided alone and the session went to `opencode` with no model, not to
/// Claude.
#[test]
fn an_assistant_message_without_a_model_leaves_the_target_to_the_prompt() {
    let ses = "ses_0a1b2c3d4ffeTinySession01";
    let user = format!(
        r#"{{"info":{{"id":"msg_ed8700000001UserFirst0001","sessionID":"{ses}","role":"user","time":{{"created":1781740000000}},"model":{{"providerID":"anthropic","modelID":"claude-opus-4-6"}}}},"parts":[]}}"#
    );
    let assistant = format!(
        r#"{{"info":{{"id":"msg_ed8700000002AsstFirst0002","sessionID":"{ses}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"opencode","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":1781740001000,"completed":1781740002000}}}},"parts":[]}}"#
    );
    let s = load_export(&format!("[{user},{assistant}]"), "two").expect("loads");
    let t = session_target(&s, None);
    assert_eq!(
        (t.provider.as_deref(), t.model.as_deref(), t.is_anthropic()),
        (Some("anthropic"), Some("claude-opus-4-6"), true),
        "{t:?}"
    );
}

/// While OpenCode runs, only a last message that is still unfinished is left alone; a finished
/// one is repaired like any other: under `|| i != last` turned into `&&` in `doctor::plan`,
/// grouped `(completed || error) && i != last`, a finished last message counted as one still
/// being written. (cargo-mutants' own text, without brackets, is killed by
/// `an_aborted_last_message_is_repaired_while_opencode_runs`.)
#[test]
fn a_finished_last_message_is_repaired_while_opencode_runs() {
    let text = r#"{"type":"text","text":"done","time":{"start":3,"end":3}}"#;
    let blank = r#"{"type":"text","text":"  ","time":{"start":3,"end":3}}"#;
    let live = PlanOptions {
        last_message_live: true,
        target: None,
    };
    let session = two_messages(&[text, blank]);
    let plan = doctor::plan(&session, &live);
    assert_eq!(
        render_plan(&plan),
        "session ses_0a1b2c3d4ffeTinySession01: 1 repair(s)\n\
         AN-05 removed_part EmptyText msg_ed8700000002AsstFirst0002/prt_ed8700000021Part00000001: \
         an empty text block: \"text content blocks must contain non-whitespace text\"; the part is removed\n"
    );
    assert_eq!(plan, doctor::plan(&session, &PlanOptions::default()));
}

/// Of the parts a plugin wrote, only a `tool_result` naming a call no tool part made goes: one
/// answering a real call stays, and so does a part of a kind the doctor does not know. Kills the
/// deletion of the `Part::Tool(t)` arm that collects the session's calls in `doctor::plan`
/// (every plugin-written result then looked like an orphan) and the match guard
/// `kind == "tool_result"` replaced with `true` (the unknown part was then removed as an orphan
/// result).
#[test]
fn only_a_plugin_written_result_for_no_call_is_removed() {
    let tool = r#"{"type":"tool","callID":"toolu_1","tool":"read","state":{"status":"completed","input":{"filePath":"a.rs"},"output":"fn a() {}","title":"a.rs","metadata":{},"time":{"start":1781740001100,"end":1781740001200}}}"#;
    let answer = r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"fn a() {}"}"#;
    let orphan = r#"{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}"#;
    let note = r#"{"type":"plugin-note","note":"kept"}"#;
    let text = r#"{"type":"text","text":"done","time":{"start":3,"end":3}}"#;
    let plan = doctor::plan(
        &two_messages(&[tool, answer, orphan, note, text]),
        &PlanOptions::default(),
    );
    assert_eq!(
        render_plan(&plan),
        "session ses_0a1b2c3d4ffeTinySession01: 1 repair(s)\n\
         AN-10 removed_part OrphanToolResult msg_ed8700000002AsstFirst0002/prt_ed8700000022Part00000002: \
         plugin-written tool_result for call \"toolu_9\", which no tool part of this session made\n"
    );
}

/// A session whose prompts name no model (as older OpenCode stored them) goes where its last
/// assistant message ran: that message's provider and model decide. Kills the match guard
/// `a.model_id.is_some()` replaced with `false` in `session_target`, under which the assistant
/// message was passed over and only its model id was found (by `session_model`): the
/// session lost its provider.
#[test]
fn prompts_without_a_model_leave_the_target_to_the_last_assistant_message() {
    let ses = "ses_0a1b2c3d4ffeTinySession01";
    let user = format!(
        r#"{{"info":{{"id":"msg_ed8700000001UserFirst0001","sessionID":"{ses}","role":"user","time":{{"created":1781740000000}}}},"parts":[]}}"#
    );
    let assistant = format!(
        r#"{{"info":{{"id":"msg_ed8700000002AsstFirst0002","sessionID":"{ses}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"anthropic","modelID":"claude-opus-4-6","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":1781740001000,"completed":1781740002000}}}},"parts":[]}}"#
    );
    let s = load_export(&format!("[{user},{assistant}]"), "two").expect("loads");
    let t = session_target(&s, None);
    assert_eq!(
        (t.provider.as_deref(), t.model.as_deref(), t.is_anthropic()),
        (Some("anthropic"), Some("claude-opus-4-6"), true),
        "{t:?}"
    );
}

/// While OpenCode runs, a last message that ended with an error (here the user aborted it, so
/// it never got a completion time) is finished: OpenCode writes no more to it, and it is
/// repaired as it would be otherwise. Kills `|| i != last` turned into `&& i != last` in
/// `doctor::plan` (cargo-mutants' text, without brackets: `completed || error && i != last ||
/// !live`), under which an aborted last message counted as one still being written and was
/// left alone.
#[test]
fn an_aborted_last_message_is_repaired_while_opencode_runs() {
    let ses = "ses_0a1b2c3d4ffeTinySession01";
    let user = format!(
        r#"{{"info":{{"id":"msg_ed8700000001UserFirst0001","sessionID":"{ses}","role":"user","time":{{"created":1781740000000}},"model":{{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}}},"parts":[]}}"#
    );
    let msg = "msg_ed8700000002AsstFirst0002";
    let part = |n: u32, text: &str| {
        format!(
            r#"{{"id":"prt_ed870000002{n}Part0000000{n}","sessionID":"{ses}","messageID":"{msg}","type":"text","text":"{text}","time":{{"start":3,"end":3}}}}"#
        )
    };
    let assistant = format!(
        r#"{{"info":{{"id":"{msg}","sessionID":"{ses}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":1781740001000}},"error":{{"name":"MessageAbortedError","data":{{"message":"The operation was aborted."}}}}}},"parts":[{},{}]}}"#,
        part(0, "partial"),
        part(1, "  ")
    );
    let session = load_export(&format!("[{user},{assistant}]"), "aborted").expect("loads");
    let live = PlanOptions {
        last_message_live: true,
        target: None,
    };
    let plan = doctor::plan(&session, &live);
    assert_eq!(
        render_plan(&plan),
        "session ses_0a1b2c3d4ffeTinySession01: 1 repair(s)\n\
         AN-05 removed_part EmptyText msg_ed8700000002AsstFirst0002/prt_ed8700000021Part00000001: \
         an empty text block: \"text content blocks must contain non-whitespace text\"; the part is removed\n"
    );
    assert_eq!(plan, doctor::plan(&session, &PlanOptions::default()));
}

/// A session told to go to a model that is not Claude is checked as if switched to
/// [`SWITCH_MODEL`], under that model's rules and not those of the model it was told: with
/// adaptive thinking asked for, Sonnet 4.5 (which has no adaptive mode) is warned about, where
/// the unknown model would have taken it. Kills the deletion of `model` from the options
/// `check_stored_request` checks with, under which the session was checked for the model it
/// was told (`moonshot/kimi-k2`, the strict profile) and nothing was found.
#[test]
fn a_session_sent_elsewhere_is_checked_under_the_switch_models_rules() {
    let text = r#"{"type":"text","text":"done","time":{"start":3,"end":3}}"#;
    let opts = Options {
        model: Some("moonshot/kimi-k2".to_owned()),
        thinking: Some(turnkeeper_prevent::Mode::Adaptive),
        ..Options::default()
    };
    let c = check_session(&two_messages(&[text]), &opts).expect("checks");
    assert_eq!(
        render_check(&c),
        "target: Other moonshot / kimi-k2 (checked as claude-sonnet-4-5)\n\
         Warning CFG-03 -/-: if this session is switched to Claude (claude-sonnet-4-5): \
         adaptive thinking is not supported on this model\n\
         has errors: false\n"
    );
}
