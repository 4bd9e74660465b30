//! `prevent::claude_code`: a Claude Code session file checked as its resume request, and its
//! whole-line repair. Each case is a small session written line by line with the helpers below,
//! the plan's changes and what it leaves to the user rendered one per line, and the repaired
//! text compared byte for byte with the lines it must hold.

use turnkeeper_model::claude_code::Session;
use turnkeeper_prevent::claude_code::{INTERRUPTED, REJECTED_TOOL, check_session, plan};
use turnkeeper_prevent::{Options, Severity};

/// A signature that looks like a real one.
const SIG: &str = "EqQBCkgIDBABGAIqQZm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4";

/// The uuid of line `n` of a test session.
fn id(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

/// `"<uuid of n>"` or `null`.
fn parent(p: Option<u32>) -> String {
    p.map_or_else(|| "null".to_owned(), |p| format!("\"{}\"", id(p)))
}

/// A user line whose `message.content` is `content` (JSON).
fn user(n: u32, p: Option<u32>, content: &str) -> String {
    format!(
        r#"{{"parentUuid":{},"isSidechain":false,"type":"user","message":{{"role":"user","content":{content}}},"uuid":"{}","timestamp":"2026-03-29T22:15:{n:02}.000Z","sessionId":"s1"}}"#,
        parent(p),
        id(n)
    )
}

/// An assistant line: one block of response `msg` from `model`.
fn reply(n: u32, p: Option<u32>, model: &str, msg: &str, block: &str) -> String {
    format!(
        r#"{{"parentUuid":{},"isSidechain":false,"message":{{"model":"{model}","id":"{msg}","type":"message","role":"assistant","content":[{block}]}},"type":"assistant","uuid":"{}","timestamp":"2026-03-29T22:15:{n:02}.000Z","sessionId":"s1"}}"#,
        parent(p),
        id(n)
    )
}

/// An assistant line of `claude-sonnet-4-6`.
fn asst(n: u32, p: Option<u32>, msg: &str, block: &str) -> String {
    reply(n, p, "claude-sonnet-4-6", msg, block)
}

fn think(text: &str) -> String {
    format!(r#"{{"type":"thinking","thinking":"{text}","signature":"{SIG}"}}"#)
}

fn say(t: &str) -> String {
    format!(r#"{{"type":"text","text":"{t}"}}"#)
}

fn call(tool: &str) -> String {
    format!(r#"{{"type":"tool_use","id":"{tool}","name":"Read","input":{{}}}}"#)
}

/// The content of a user line answering `tool`.
fn result(tool: &str) -> String {
    format!(r#"[{{"type":"tool_result","tool_use_id":"{tool}","content":"ok"}}]"#)
}

/// Lines joined as a file (each ending in a newline).
fn file(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The plan of `text` under default options: each change as `line N RULE action uuid: reason`
/// (an added line's uuid shown as `new`), then each note left to the user as `left: ...`.
fn render_plan(text: &str) -> (Vec<String>, String) {
    let session = Session::parse(text.to_owned(), "test").expect("a session");
    let p = plan(&session, &Options::default()).expect("plans");
    let mut out: Vec<String> = p
        .changes
        .iter()
        .map(|c| {
            let uuid = match (&c.uuid, c.action) {
                (Some(_), "added_line") => "new".to_owned(),
                (Some(u), _) => u.trim_start_matches("00000000-0000-4000-8000-").to_owned(),
                (None, _) => "-".to_owned(),
            };
            format!(
                "line {} {} {} {uuid}: {}",
                c.line, c.rule, c.action, c.reason
            )
        })
        .collect();
    out.extend(p.left_alone.iter().map(|l| format!("left: {l}")));
    assert_eq!(p.is_empty(), p.changes.is_empty());
    (out, p.text)
}

/// Plans the repair of `input` and compares the rendered changes and the repaired text.
fn check(input: &[String], changes: &[&str], after: &str) {
    let (got, text) = render_plan(&file(input));
    assert_eq!(got, changes, "changes of\n{}", file(input));
    assert_eq!(text, after, "repaired text");
}

/// The healthy start of every case: a prompt, a thinking line and a text line of one response.
fn start() -> Vec<String> {
    vec![
        user(1, None, r#""Read f1.""#),
        asst(2, Some(1), "msg_A", &think("plan")),
        asst(3, Some(2), "msg_A", &call("toolu_1")),
        user(4, Some(3), &result("toolu_1")),
        asst(5, Some(4), "msg_B", &say("done")),
    ]
}

#[test]
fn a_healthy_session_is_left_as_it_is() {
    let lines = start();
    check(&lines, &[], &file(&lines));
    let session = Session::parse(file(&lines), "test").expect("a session");
    let c = check_session(&session, &Options::default()).expect("checks");
    assert_eq!(c.model.as_deref(), Some("claude-sonnet-4-6"));
    assert!(c.findings.is_empty(), "{:?}", c.findings);
}

#[test]
fn a_line_written_twice_goes_and_a_lost_parent_is_relinked() {
    let mut lines = start();
    lines.insert(3, lines[2].clone());
    check(
        &lines,
        &[
            "line 4 store removed_line 000000000003: a second line with uuid 00000000-0000-4000-8000-000000000003 (written twice)",
        ],
        &file(&start()),
    );
    // Line 4's parent (line 3) is not in the file: it hangs off the message line before it.
    // Then stage 2 sees a result with no call (AN-10) and a response left holding only
    // thinking (AN-19), and both go; the last response hangs off the prompt.
    let mut lines = start();
    lines.remove(2);
    check(
        &lines,
        &[
            "line 3 store reparented_line 000000000004: its parent line 00000000-0000-4000-8000-000000000003 is missing from the file (a removed line); parentUuid is now 00000000-0000-4000-8000-000000000002",
            "line 2 AN-19 removed_line 000000000002: a response holding only thinking (interrupted after thinking)",
            "line 3 AN-10 removed_line 000000000004: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. The previous message has no matching call",
            "line 4 AN-10 reparented_line 000000000005: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000001",
        ],
        &file(&[
            user(1, None, r#""Read f1.""#),
            asst(5, Some(1), "msg_B", &say("done")),
        ]),
    );
}

#[test]
fn a_torn_last_line_is_cut_and_a_thinking_only_response_with_it() {
    let mut lines = start();
    lines.push(asst(6, Some(5), "msg_C", &think("next")));
    let whole = asst(7, Some(6), "msg_C", &say("half"));
    // Torn after the response's id, before its content.
    let torn = &whole[..whole.find(r#""type":"message""#).expect("a message line")];
    let input = format!("{}{torn}", file(&lines));
    let (got, text) = render_plan(&input);
    assert_eq!(
        got,
        [
            "line 6 store removed_line 000000000006: response msg_C was cut short by the crash that tore the last line; what is left of it is only thinking, which the API rejects at the end of a response".to_owned(),
            format!(
                "line 7 store cut_torn_line -: the last line is cut short ({} bytes, not JSON): a crash mid-write",
                torn.len()
            ),
        ]
    );
    assert_eq!(text, file(&start()));
    // A torn line that names no response cuts only itself.
    let input = format!("{}{{\"parentUuid\":", file(&start()));
    let (got, text) = render_plan(&input);
    assert_eq!(
        got,
        [
            "line 6 store cut_torn_line -: the last line is cut short (14 bytes, not JSON): a crash mid-write"
        ]
    );
    assert_eq!(text, file(&start()));
}

#[test]
fn an_orphan_result_line_goes_and_its_child_follows_its_parent() {
    let mut lines = start();
    lines.push(user(6, Some(5), &result("toolu_9")));
    lines.push(user(7, Some(6), r#""and now?""#));
    let mut want = start();
    want.push(user(7, Some(5), r#""and now?""#));
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].starts_with("line 6 AN-10 removed_line 000000000006: "),
        "{got:#?}"
    );
    assert_eq!(
        got[1],
        "line 7 AN-10 reparented_line 000000000007: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000005"
    );
    assert_eq!(text, file(&want));
}

#[test]
fn a_thinking_only_response_goes_unless_it_is_the_latest() {
    let mut lines = start();
    lines.truncate(4);
    lines.push(asst(5, Some(4), "msg_B", &think("only")));
    lines.push(user(6, Some(5), r#""go on""#));
    lines.push(asst(7, Some(6), "msg_C", &say("done")));
    let mut want = start();
    want.truncate(4);
    want.push(user(6, Some(4), r#""go on""#));
    want.push(asst(7, Some(6), "msg_C", &say("done")));
    check(
        &lines,
        &[
            "line 5 AN-19 removed_line 000000000005: a response holding only thinking (interrupted after thinking)",
            "line 6 AN-19 reparented_line 000000000006: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000004",
        ],
        &file(&want),
    );
    // The same response as the latest assistant message: left to the user, nothing changes.
    lines.truncate(6);
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with("left: line 5: ")
            && got[0].ends_with("(thinking in the latest assistant message is never dropped or edited: disable thinking for the next request, or /rewind)"),
        "{got:#?}"
    );
    assert_eq!(text, file(&lines));
}

#[test]
fn calls_left_open_get_claude_codes_interrupt_lines() {
    let mut lines = start();
    lines.truncate(3);
    lines.push(user(4, Some(3), r#""never mind""#));
    let input = file(&lines);
    let (got, text) = render_plan(&input);
    let interrupt_uuid = got[2][got[2].len() - 36..].to_owned();
    assert_eq!(
        got,
        [
            "line 3 AN-08 added_line new: tool call(s) toolu_1 left without a result: the error result Claude Code writes on an interrupt".to_owned(),
            format!("line 3 AN-08 added_line new: then the user line {INTERRUPTED:?}, as Claude Code writes it"),
            format!("line 4 AN-08 reparented_line 000000000004: it followed calls that had no results; it now follows the interrupt; parentUuid is now {interrupt_uuid}"),
        ]
    );
    let out: Vec<&str> = text.lines().collect();
    assert_eq!(out.len(), 6, "{text}");
    assert_eq!(out[..3], [&lines[0][..], &lines[1], &lines[2]]);
    assert!(out[3].contains(REJECTED_TOOL) && out[3].contains(r#""tool_use_id":"toolu_1""#));
    assert!(out[3].contains(&format!(r#""parentUuid":"{}""#, id(3))));
    assert!(out[4].contains(INTERRUPTED));
    // The prompt now follows the interrupt line, and the repaired file checks clean.
    assert!(
        out[4].contains(&format!(r#""uuid":"{interrupt_uuid}""#)),
        "{}",
        out[4]
    );
    assert!(out[5].contains(&format!(r#""parentUuid":"{interrupt_uuid}""#)));
    let again = Session::parse(text.clone(), "repaired").expect("reads");
    let c = check_session(&again, &Options::default()).expect("checks");
    assert!(
        c.findings
            .iter()
            .all(|f| f.finding.severity != Severity::Error),
        "{:?}",
        c.findings
    );
    // The same repair of the same file writes the same lines.
    assert_eq!(render_plan(&input).1, text);
}

/// The model of the non-Anthropic backend of the real session this table is modelled on
/// (`shared/real-stores/claude-code/vps-config-root`: Claude Code behind `ANTHROPIC_BASE_URL`).
const MINIMAX: &str = "minimax-m2.7";

/// An assistant line of [`MINIMAX`].
fn mm(n: u32, p: Option<u32>, msg: &str, block: &str) -> String {
    reply(n, p, MINIMAX, msg, block)
}

/// A thinking block as MiniMax's Anthropic endpoint stores it: `signature: ""`.
fn mm_think(text: &str) -> String {
    format!(r#"{{"type":"thinking","thinking":"{text}","signature":""}}"#)
}

/// A healthy MiniMax session: a prompt, a response of thinking and a call, its result, a
/// response of text.
fn mm_start() -> Vec<String> {
    vec![
        user(1, None, r#""Read f1.""#),
        mm(2, Some(1), "msg_A", &mm_think("plan")),
        mm(3, Some(2), "msg_A", &call("call_function_a_1")),
        user(4, Some(3), &result("call_function_a_1")),
        mm(5, Some(4), "msg_B", &say("done")),
    ]
}

/// The check of `text` under default options: each finding as `line N RULE severity judged`.
fn render_check(text: &str) -> Vec<String> {
    let session = Session::parse(text.to_owned(), "test").expect("a session");
    let c = check_session(&session, &Options::default()).expect("checks");
    c.findings
        .iter()
        .map(|f| {
            let judged = serde_json::to_value(f.judged).expect("serialises");
            format!(
                "line {} {} {} {}",
                f.line.map_or("-".to_owned(), |n| n.to_string()),
                f.finding.rule,
                match f.finding.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "info",
                },
                judged.as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// What the healthy MiniMax session is reported with: its thinking is unsigned, which only
/// Claude would reject (warnings, never repaired).
const MM_WARNINGS: [&str; 1] = ["line 2 AN-23 warning if_sent_to_claude"];

/// A session on a non-Anthropic backend (MiniMax behind `ANTHROPIC_BASE_URL`): the file's
/// damage and the damage every provider rejects are errors, judged `any_backend`, and repaired
/// as for Claude; the Anthropic-only findings stay warnings and its thinking stays as it is.
/// Each case: the damaged lines, the check, the plan's changes (and the note), the text after.
#[test]
fn a_session_on_another_backend_is_held_to_what_every_provider_rejects() {
    let note = "left: the session runs on minimax-m2.7 (not Anthropic): damage every provider rejects is repaired (AN-01, AN-02, AN-04, AN-05, AN-08, AN-09, AN-10, AN-11); its thinking and signatures are judged valid for it and left as they are";
    // Healthy: only the warnings, nothing to repair.
    let healthy = mm_start();
    assert_eq!(render_check(&file(&healthy)), MM_WARNINGS);
    check(&healthy, &[note], &file(&healthy));
    let c = check_session(
        &Session::parse(file(&healthy), "t").expect("reads"),
        &Options::default(),
    )
    .expect("checks");
    assert_eq!(c.target.model.as_deref(), Some(MINIMAX));
    assert!(!c.target.is_anthropic());

    struct Case {
        name: &'static str,
        lines: Vec<String>,
        check: Vec<&'static str>,
        plan: Vec<String>,
        after: Vec<String>,
    }
    let dup = {
        let mut l = mm_start();
        l.insert(3, l[2].clone());
        l
    };
    let unlinked = {
        let mut l = mm_start();
        l[4] = mm(5, Some(99), "msg_B", &say("done"));
        l
    };
    let orphan = {
        let mut l = mm_start();
        l.push(user(6, Some(5), &result("call_function_z_9")));
        l.push(user(7, Some(6), r#""and now?""#));
        l
    };
    let empty_text = {
        let mut l = mm_start();
        l[4] = mm(5, Some(4), "msg_B", &say(""));
        l
    };
    let blank_text = {
        let mut l = mm_start();
        l[4] = mm(5, Some(4), "msg_B", &say("\\n\\n"));
        l.push(mm(6, Some(5), "msg_B", &say("done")));
        l
    };
    let cases = vec![
        Case {
            name: "a line written twice",
            lines: dup,
            // Both copies are replayed: the call twice, its result once. Pairing goes by id, so
            // the one result answers the call (no AN-08); the repeated id is AN-46's.
            check: vec![
                "line 4 store error any_backend",
                MM_WARNINGS[0],
                "line 4 AN-46 warning if_sent_to_claude",
            ],
            plan: vec![
                "line 4 store removed_line 000000000003: a second line with uuid 00000000-0000-4000-8000-000000000003 (written twice)".to_owned(),
                note.to_owned(),
            ],
            after: mm_start(),
        },
        Case {
            name: "an assistant line whose parent is gone",
            lines: unlinked,
            // A resume replays from that line: a conversation starting with the assistant.
            check: vec![
                "line 5 store error any_backend",
                "line 5 AN-01 error any_backend",
            ],
            plan: vec![
                "line 5 store reparented_line 000000000005: its parent line 00000000-0000-4000-8000-000000000099 is missing from the file (a removed line); parentUuid is now 00000000-0000-4000-8000-000000000004".to_owned(),
                note.to_owned(),
            ],
            after: mm_start(),
        },
        Case {
            name: "an orphan result line (AN-10)",
            lines: orphan,
            check: vec![MM_WARNINGS[0], "line 6 AN-10 error any_backend"],
            plan: vec![
                "line 6 AN-10 removed_line 000000000006: unexpected `tool_use_id` found in `tool_result` blocks: call_function_z_9. The previous message has no matching call".to_owned(),
                "line 7 AN-10 reparented_line 000000000007: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000005".to_owned(),
                note.to_owned(),
            ],
            after: {
                let mut l = mm_start();
                l.push(user(7, Some(5), r#""and now?""#));
                l
            },
        },
        Case {
            name: "an empty text block (AN-05): an error, left to the user as for Claude",
            lines: empty_text.clone(),
            check: vec![MM_WARNINGS[0], "line 5 AN-05 error any_backend"],
            plan: vec![note.to_owned()],
            after: empty_text,
        },
        Case {
            name: "a whitespace-only text block: valid for the backend, a warning",
            lines: blank_text.clone(),
            check: vec![MM_WARNINGS[0], "line 5 AN-05 warning if_sent_to_claude"],
            plan: vec![note.to_owned()],
            after: blank_text,
        },
    ];
    for c in cases {
        assert_eq!(render_check(&file(&c.lines)), c.check, "check: {}", c.name);
        let (got, text) = render_plan(&file(&c.lines));
        assert_eq!(got, c.plan, "plan: {}", c.name);
        assert_eq!(text, file(&c.after), "repaired text: {}", c.name);
        assert_eq!(
            render_check(&text),
            render_check(&file(&c.after)),
            "{}",
            c.name
        );
    }
}

/// The result line of a MiniMax call removed: the line after it lost its parent (store), and once
/// re-linked the call has no result (AN-08): both repaired as for Claude, the unsigned thinking
/// untouched, and the repaired file holds only the warnings it had.
#[test]
fn a_removed_result_line_on_another_backend_is_relinked_and_answered() {
    let mut lines = mm_start();
    lines.remove(3);
    assert_eq!(
        render_check(&file(&lines)),
        [
            "line 4 store error any_backend",
            "line 4 AN-01 error any_backend"
        ]
    );
    let (got, text) = render_plan(&file(&lines));
    let text_uuid = uuid_of(&text, 4);
    assert_eq!(
        got,
        [
            "line 4 store reparented_line 000000000005: its parent line 00000000-0000-4000-8000-000000000004 is missing from the file (a removed line); parentUuid is now 00000000-0000-4000-8000-000000000003".to_owned(),
            "line 3 AN-08 added_line new: tool call(s) call_function_a_1 left without a result: the error result Claude Code writes on an interrupt".to_owned(),
            format!("line 3 AN-08 added_line new: then the user line {INTERRUPTED:?}, as Claude Code writes it"),
            format!("line 4 AN-08 reparented_line 000000000005: it followed calls that had no results; it now follows the interrupt; parentUuid is now {text_uuid}"),
            "left: the session runs on minimax-m2.7 (not Anthropic): damage every provider rejects is repaired (AN-01, AN-02, AN-04, AN-05, AN-08, AN-09, AN-10, AN-11); its thinking and signatures are judged valid for it and left as they are".to_owned(),
        ]
    );
    let [results, interrupted] =
        interrupt_lines(3, &["call_function_a_1"], &uuid_of(&text, 3), &text_uuid);
    let want = vec![
        lines[0].clone(),
        lines[1].clone(),
        lines[2].clone(),
        results,
        interrupted,
        mm(5, None, "msg_B", &say("done")).replace(
            r#""parentUuid":null"#,
            &format!(r#""parentUuid":"{text_uuid}""#),
        ),
    ];
    assert_eq!(text, file(&want));
    assert_eq!(render_check(&text), MM_WARNINGS);
}

/// A torn last line of a MiniMax session is an error, cut by the repair.
#[test]
fn a_torn_line_on_another_backend_is_an_error_and_cut() {
    let whole = mm(6, Some(5), "msg_C", &say("half"));
    let torn = &whole[..whole.find(r#""content""#).expect("content")];
    let input = format!("{}{torn}", file(&mm_start()));
    assert_eq!(
        render_check(&input),
        ["line 6 store error any_backend", MM_WARNINGS[0]]
    );
    let (got, text) = render_plan(&input);
    assert_eq!(
        got,
        [
            format!(
                "line 6 store cut_torn_line -: the last line is cut short ({} bytes, not JSON): a crash mid-write",
                torn.len()
            ),
            "left: the session runs on minimax-m2.7 (not Anthropic): damage every provider rejects is repaired (AN-01, AN-02, AN-04, AN-05, AN-08, AN-09, AN-10, AN-11); its thinking and signatures are judged valid for it and left as they are".to_owned(),
        ]
    );
    assert_eq!(text, file(&mm_start()));
}

/// The file's damage is an error on a Claude session too, and the store findings come first, in
/// line order.
#[test]
fn store_damage_is_an_error_for_claude_too() {
    let mut lines = start();
    lines.insert(3, lines[2].clone());
    lines[5] = asst(5, Some(99), "msg_B", &say("done"));
    assert_eq!(
        render_check(&file(&lines)),
        [
            "line 4 store error target",
            "line 6 store error target",
            "line 6 AN-01 error target"
        ]
    );
}

#[test]
fn a_thinking_line_whose_signature_cannot_verify_goes_unless_it_is_the_latest() {
    let bad =
        r#"{"type":"thinking","thinking":"t","signature":"skip_thought_signature_validator"}"#;
    let mut lines = start();
    lines[1] = asst(2, Some(1), "msg_A", bad);
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].starts_with("line 2 AN-23 removed_line 000000000002: "),
        "{got:#?}"
    );
    assert_eq!(
        got[1],
        "line 3 AN-23 reparented_line 000000000003: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000001"
    );
    let mut want = start();
    want.remove(1);
    want[1] = asst(3, Some(1), "msg_A", &call("toolu_1"));
    assert_eq!(text, file(&want));
    // In the latest assistant message: left to the user.
    let mut lines = start();
    lines[4] = asst(5, Some(4), "msg_B", bad);
    lines.push(asst(6, Some(5), "msg_B", &say("done")));
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with("left: line 5: ") && got[0].ends_with("/rewind)"),
        "{got:#?}"
    );
    assert_eq!(text, file(&lines));
}

#[test]
fn line_ends_blank_lines_and_side_chains_are_kept() {
    let mut lines = start();
    lines.insert(2, lines[1].clone());
    // CRLF line ends and a blank line survive the removal of the duplicate around them.
    let input = format!(
        "{}\r\n{}\r\n\r\n{}\r\n{}\n{}\n{}\n",
        lines[0], lines[1], lines[2], lines[3], lines[4], lines[5]
    );
    let (got, text) = render_plan(&input);
    assert_eq!(
        got,
        [
            "line 4 store removed_line 000000000002: a second line with uuid 00000000-0000-4000-8000-000000000002 (written twice)"
        ]
    );
    assert_eq!(
        text,
        format!(
            "{}\r\n{}\r\n\r\n{}\n{}\n{}\n",
            lines[0], lines[1], lines[3], lines[4], lines[5]
        )
    );
    // A side-chain line whose parent is not in the file is not re-linked.
    let mut lines = start();
    lines.push(
        user(6, Some(99), r#""sub-agent""#)
            .replace(r#""isSidechain":false"#, r#""isSidechain":true"#),
    );
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(got, Vec::<String>::new());
    assert_eq!(text, file(&lines));
}

#[test]
fn changes_after_a_torn_line_are_numbered_as_in_the_original_file() {
    let mut lines = start();
    lines.push(user(6, Some(5), &result("toolu_9")));
    lines.push(asst(7, Some(6), "msg_C", &say("next")));
    let input = format!("{}{{\"parentUuid\":", file(&lines));
    let (got, _) = render_plan(&input);
    let numbers: Vec<String> = got
        .iter()
        .map(|g| g.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(numbers, ["line 8", "line 6", "line 7"], "{got:#?}");
    assert!(
        got[1].contains(" AN-10 removed_line 000000000006"),
        "{got:#?}"
    );
}

/// Lines whose parents form a cycle (a corrupt file) do not hang the repair, and the line that
/// hung off them is re-linked to the kept message line before it, not to one of the removed
/// lines (which left it with a missing parent, cutting the conversation before it off a resume).
#[test]
fn a_cycle_of_removed_lines_ends() {
    let mut lines = start();
    lines.push(asst(6, Some(7), "msg_C", &think("a")));
    lines.push(asst(7, Some(6), "msg_C", &think("b")));
    lines.push(user(8, Some(7), r#""next""#));
    let whole = asst(9, Some(8), "msg_C", &say("half"));
    let torn = &whole[..whole.find(r#""type":"message""#).expect("a message line")];
    let input = format!("{}{torn}", file(&lines));
    let cut = "response msg_C was cut short by the crash that tore the last line; what is left of it is only thinking, which the API rejects at the end of a response";
    let (got, text) = render_plan(&input);
    assert_eq!(
        got,
        [
            format!("line 6 store removed_line 000000000006: {cut}"),
            format!("line 7 store removed_line 000000000007: {cut}"),
            "line 8 store reparented_line 000000000008: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000005".to_owned(),
            format!(
                "line 9 store cut_torn_line -: the last line is cut short ({} bytes, not JSON): a crash mid-write",
                torn.len()
            ),
        ]
    );
    let mut want = start();
    want.push(user(8, Some(5), r#""next""#));
    assert_eq!(text, file(&want));
}

/// The child of a removed line hangs off the removed line's own kept ancestor, which need not
/// be the line just before it.
#[test]
fn a_removed_lines_child_follows_its_ancestor_not_its_neighbour() {
    let mut lines = start();
    // An orphan result hanging off the prompt (line 1), then a prompt hanging off it.
    lines.push(user(6, Some(1), &result("toolu_9")));
    lines.push(user(7, Some(6), r#""and now?""#));
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(
        got[1],
        "line 7 AN-10 reparented_line 000000000007: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000001",
        "{got:#?}"
    );
    assert!(
        text.ends_with(&format!("{}\n", user(7, Some(1), r#""and now?""#))),
        "{text}"
    );
}

/// The `uuid` of line `k` (0-based) of `text`.
fn uuid_of(text: &str, k: usize) -> String {
    let line = text.lines().nth(k).expect("the line");
    let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    v["uuid"].as_str().expect("a uuid").to_owned()
}

/// The two lines the repair adds after line `n` for the calls `ids` (Claude Code's own interrupt
/// lines), with the uuids it gave them.
fn interrupt_lines(n: u32, ids: &[&str], results_uuid: &str, text_uuid: &str) -> [String; 2] {
    let results: Vec<String> = ids
        .iter()
        .map(|t| {
            format!(
                r#"{{"type":"tool_result","content":"{REJECTED_TOOL}","is_error":true,"tool_use_id":"{t}"}}"#
            )
        })
        .collect();
    [
        format!(
            r#"{{"parentUuid":"{}","isSidechain":false,"type":"user","message":{{"role":"user","content":[{}]}},"uuid":"{results_uuid}","timestamp":"2026-03-29T22:15:{n:02}.000Z","toolUseResult":"User rejected tool use","sessionId":"s1"}}"#,
            id(n),
            results.join(",")
        ),
        format!(
            r#"{{"parentUuid":"{results_uuid}","isSidechain":false,"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"{INTERRUPTED}"}}]}},"uuid":"{text_uuid}","timestamp":"2026-03-29T22:15:{n:02}.000Z","sessionId":"s1"}}"#
        ),
    ]
}

/// A torn response goes with the torn line when what is left of it is only thinking, redacted
/// thinking included; a whole line of it holding text stays. Kills `t == "redacted_thinking"`
/// turned into `!=` in `plan` (which kept the first and removed the second).
#[test]
fn a_torn_response_goes_when_only_redacted_thinking_is_left_and_stays_with_text() {
    let torn_of = |line: &str| -> String {
        line[..line.find(r#""type":"message""#).expect("a message line")].to_owned()
    };
    let mut lines = start();
    lines.push(asst(
        6,
        Some(5),
        "msg_C",
        r#"{"type":"redacted_thinking","data":"EqQB"}"#,
    ));
    let torn = torn_of(&asst(7, Some(6), "msg_C", &say("half")));
    let (got, text) = render_plan(&format!("{}{torn}", file(&lines)));
    assert_eq!(
        got,
        [
            "line 6 store removed_line 000000000006: response msg_C was cut short by the crash that tore the last line; what is left of it is only thinking, which the API rejects at the end of a response".to_owned(),
            format!(
                "line 7 store cut_torn_line -: the last line is cut short ({} bytes, not JSON): a crash mid-write",
                torn.len()
            ),
        ]
    );
    assert_eq!(text, file(&start()));
    // A line of the torn response holding text: only the torn line goes.
    let mut lines = start();
    lines.push(user(6, Some(5), r#""more""#));
    lines.push(asst(7, Some(6), "msg_C", &say("half")));
    let torn = torn_of(&asst(8, Some(7), "msg_C", &say("rest")));
    let (got, text) = render_plan(&format!("{}{torn}", file(&lines)));
    assert_eq!(
        got,
        [format!(
            "line 8 store cut_torn_line -: the last line is cut short ({} bytes, not JSON): a crash mid-write",
            torn.len()
        )]
    );
    assert_eq!(text, file(&lines));
}

/// Stage 2 numbers its changes as in the original file, past a line stage 1 removed. Kills `&&`
/// turned into `||` in the stage-1 line map of `plan`, which kept the removed line's number.
#[test]
fn changes_after_a_removed_duplicate_are_numbered_as_in_the_original_file() {
    let mut lines = start();
    lines.insert(3, lines[2].clone());
    lines.push(user(6, Some(5), &result("toolu_9")));
    lines.push(user(7, Some(6), r#""and now?""#));
    let mut want = start();
    want.push(user(7, Some(5), r#""and now?""#));
    check(
        &lines,
        &[
            "line 4 store removed_line 000000000003: a second line with uuid 00000000-0000-4000-8000-000000000003 (written twice)",
            "line 7 AN-10 removed_line 000000000006: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. The previous message has no matching call",
            "line 8 AN-10 reparented_line 000000000007: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000005",
        ],
        &file(&want),
    );
}

/// Of two calls, the one whose result is in the next message keeps it: the interrupt lines
/// answer only the other, and the result line stays where it hangs. Kills `a + 1` turned into
/// `a * 1` in `interrupt` (which looked for results in the calls' own message and answered both)
/// and `!is_result && j > last` turned into `!is_result || j > last` (which moved the result
/// line after the interrupt).
#[test]
fn only_the_calls_without_a_result_get_the_interrupt_lines() {
    let lines = vec![
        user(1, None, r#""Read f1 and f2.""#),
        asst(2, Some(1), "msg_A", &call("toolu_1")),
        asst(3, Some(2), "msg_A", &call("toolu_2")),
        user(4, Some(3), &result("toolu_1")),
        asst(5, Some(4), "msg_B", &say("done")),
    ];
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(
        got,
        [
            "line 3 AN-08 added_line new: tool call(s) toolu_2 left without a result: the error result Claude Code writes on an interrupt".to_owned(),
            format!("line 3 AN-08 added_line new: then the user line {INTERRUPTED:?}, as Claude Code writes it"),
        ]
    );
    let [results, interrupted] =
        interrupt_lines(3, &["toolu_2"], &uuid_of(&text, 3), &uuid_of(&text, 4));
    let mut want = lines.clone();
    want.splice(3..3, [results, interrupted]);
    assert_eq!(text, file(&want));
    let again = Session::parse(text, "repaired").expect("reads");
    let c = check_session(&again, &Options::default()).expect("checks");
    assert!(
        c.findings
            .iter()
            .all(|f| f.finding.severity != Severity::Error),
        "{:?}",
        c.findings
    );
}

/// Only the line that hung off the unanswered calls moves after the interrupt; the lines after
/// it keep their parents. Kills `parent matches && !is_result` turned into `||` in `interrupt`,
/// which re-linked every later line to the interrupt.
#[test]
fn only_the_line_that_followed_the_calls_moves_after_the_interrupt() {
    let mut lines = start();
    lines.truncate(3);
    lines.push(user(4, Some(3), r#""never mind""#));
    lines.push(asst(5, Some(4), "msg_B", &say("ok")));
    let (got, text) = render_plan(&file(&lines));
    let (results_uuid, text_uuid) = (uuid_of(&text, 3), uuid_of(&text, 4));
    assert_eq!(
        got,
        [
            "line 3 AN-08 added_line new: tool call(s) toolu_1 left without a result: the error result Claude Code writes on an interrupt".to_owned(),
            format!("line 3 AN-08 added_line new: then the user line {INTERRUPTED:?}, as Claude Code writes it"),
            format!("line 4 AN-08 reparented_line 000000000004: it followed calls that had no results; it now follows the interrupt; parentUuid is now {text_uuid}"),
        ]
    );
    let [results, interrupted] = interrupt_lines(3, &["toolu_1"], &results_uuid, &text_uuid);
    let mut want = lines.clone();
    want[3] = lines[3].replace(
        &format!(r#""parentUuid":"{}""#, id(3)),
        &format!(r#""parentUuid":"{text_uuid}""#),
    );
    want.splice(3..3, [results, interrupted]);
    assert_eq!(text, file(&want));
}

/// A line whose parent is missing hangs off the message line before it in the main
/// conversation, never off a side-chain line in between. Kills `&&` turned into `||` in the
/// stage-1 search of `plan` (`b.message.is_some() || !b.sidechain && …`), under which the
/// sub-agent's line became its parent.
#[test]
fn a_line_with_a_missing_parent_skips_a_side_chain_line_before_it() {
    let mut lines = start();
    lines.push(
        user(6, Some(5), r#""sub-agent""#)
            .replace(r#""isSidechain":false"#, r#""isSidechain":true"#),
    );
    lines.push(user(7, Some(99), r#""next""#));
    let mut want = lines.clone();
    want[6] = user(7, Some(5), r#""next""#);
    check(
        &lines,
        &[
            "line 7 store reparented_line 000000000007: its parent line 00000000-0000-4000-8000-000000000099 is missing from the file (a removed line); parentUuid is now 00000000-0000-4000-8000-000000000005",
        ],
        &file(&want),
    );
}

/// An orphan result that shares its line with other content is left to the user: removing the
/// line would lose the text beside it. Kills the match guard `one_block(i)` replaced with `true`
/// for AN-10 in `rule_edits`, under which the whole line went.
#[test]
fn an_orphan_result_beside_text_on_its_line_is_left_alone() {
    let mut lines = start();
    lines.push(user(
        6,
        Some(5),
        r#"[{"type":"tool_result","tool_use_id":"toolu_9","content":"ok"},{"type":"text","text":"and this"}]"#,
    ));
    lines.push(asst(7, Some(6), "msg_C", &say("fine")));
    check(
        &lines,
        &[
            "left: line 6: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. The previous message has no matching call",
        ],
        &file(&lines),
    );
}

/// An earlier response of redacted thinking and then thinking (it ends in thinking, AN-19) holds
/// only thinking: both its lines go, and the next prompt hangs off the line before them. Kills
/// `t == "redacted_thinking"` turned into `!=` in the AN-19 arm of `rule_edits`, under which the
/// redacted line counted as content and the response was left to the user.
#[test]
fn an_earlier_response_of_redacted_and_plain_thinking_goes_whole() {
    let redacted = r#"{"type":"redacted_thinking","data":"EqQBCkgIDBABGAIqQZm9vYmFy"}"#;
    let mut lines = start();
    lines.push(user(6, Some(5), r#""more""#));
    lines.push(asst(7, Some(6), "msg_C", redacted));
    lines.push(asst(8, Some(7), "msg_C", &think("half")));
    lines.push(user(9, Some(8), r#""go on""#));
    lines.push(asst(10, Some(9), "msg_D", &say("done")));
    let mut want = lines.clone();
    want.splice(6..9, [user(9, Some(6), r#""go on""#)]);
    check(
        &lines,
        &[
            "line 7 AN-19 removed_line 000000000007: a response holding only thinking (interrupted after thinking)",
            "line 8 AN-19 removed_line 000000000008: a response holding only thinking (interrupted after thinking)",
            "line 9 AN-19 reparented_line 000000000009: its parent line was removed; parentUuid is now 00000000-0000-4000-8000-000000000006",
        ],
        &file(&want),
    );
}

/// Of a run of two responses, only the one that made the calls gets the interrupt lines; the
/// response after it (text only) gets none, and it now follows the interrupt. Kills
/// `ids.is_empty() || …` turned into `&&` in `interrupt`, under which the text-only response got
/// interrupt lines answering no call.
#[test]
fn a_response_without_calls_in_the_run_gets_no_interrupt_lines() {
    let lines = vec![
        user(1, None, r#""Read f1.""#),
        asst(2, Some(1), "msg_A", &call("toolu_1")),
        asst(3, Some(2), "msg_B", &say("hm")),
        user(4, Some(3), r#""never mind""#),
    ];
    let (got, text) = render_plan(&file(&lines));
    let (results_uuid, text_uuid) = (uuid_of(&text, 2), uuid_of(&text, 3));
    assert_eq!(
        got,
        [
            "line 2 AN-08 added_line new: tool call(s) toolu_1 left without a result: the error result Claude Code writes on an interrupt".to_owned(),
            format!("line 2 AN-08 added_line new: then the user line {INTERRUPTED:?}, as Claude Code writes it"),
            format!("line 3 AN-08 reparented_line 000000000003: it followed calls that had no results; it now follows the interrupt; parentUuid is now {text_uuid}"),
        ]
    );
    let [results, interrupted] = interrupt_lines(2, &["toolu_1"], &results_uuid, &text_uuid);
    let mut want = lines.clone();
    want[2] = asst(3, Some(2), "msg_B", &say("hm")).replace(
        &format!(r#""parentUuid":"{}""#, id(2)),
        &format!(r#""parentUuid":"{text_uuid}""#),
    );
    want.splice(2..2, [results, interrupted]);
    assert_eq!(text, file(&want));
}

/// A calls line that names itself as its parent (a corrupt file) gets the interrupt lines after
/// it and keeps its own `parentUuid`: only a later line moves after the interrupt. Kills
/// `j > last` turned into `j >= last` in `interrupt`, under which the calls line itself was
/// re-linked to the interrupt written after it (a cycle).
#[test]
fn a_calls_line_that_is_its_own_parent_is_not_relinked_after_its_interrupt() {
    let mut lines = start();
    lines.truncate(2);
    lines.push(asst(3, Some(3), "msg_A", &call("toolu_1")));
    let (got, text) = render_plan(&file(&lines));
    assert_eq!(
        got,
        [
            "line 3 AN-08 added_line new: tool call(s) toolu_1 left without a result: the error result Claude Code writes on an interrupt".to_owned(),
            format!("line 3 AN-08 added_line new: then the user line {INTERRUPTED:?}, as Claude Code writes it"),
        ]
    );
    let [results, interrupted] =
        interrupt_lines(3, &["toolu_1"], &uuid_of(&text, 3), &uuid_of(&text, 4));
    let mut want = lines.clone();
    want.extend([results, interrupted]);
    assert_eq!(text, file(&want));
}
