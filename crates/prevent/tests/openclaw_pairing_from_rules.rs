//! Regression: the openclaw doctor decided tool pairing and empty messages with its own copy of
//! the rules (a call was answered by a result anywhere after it on the branch). It now judges
//! the request's shape with the checker's AN-04, AN-08, AN-10 and AN-11 and translates each
//! finding into an edit of lines. Where the two disagreed, the API's rule (the result in the
//! user messages right after the calls) is the one that holds: a result behind a new prompt is
//! AN-11, reported and left (no edit of whole lines puts it back in order), and never answered a
//! second time; an error reply between a call and its result is only the empty message.

mod openclaw_common;
use openclaw_common::{HEADER, USER, repaired};
use turnkeeper_model::openclaw::Session;
use turnkeeper_prevent::openclaw::{check_session, plan};

const CALL: &str = r#"{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"exec","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse"}}"#;
const TWO_CALLS: &str = r#"{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"exec","arguments":{}},{"type":"toolCall","id":"call_2","name":"exec","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse"}}"#;
const ERROR_REPLY: &str = r#"{"type":"message","id":"e1","parentId":"a1","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"error"}}"#;
const ANSWER: &str = r#"{"type":"message","id":"a2","parentId":"r1","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop"}}"#;

/// The result of `call_1`, its parent `parent`, its id `id`.
fn result(id: &str, parent: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","message":{{"role":"toolResult","toolCallId":"call_1","toolName":"exec","content":[{{"type":"text","text":"ok"}}],"isError":false}}}}"#
    )
}

/// A prompt, its parent `parent`.
fn prompt(parent: &str) -> String {
    format!(
        r#"{{"type":"message","id":"p1","parentId":"{parent}","message":{{"role":"user","content":[{{"type":"text","text":"and?"}}]}}}}"#
    )
}

/// Checks `input`: its findings as `(rule, line, block)`, and whether the repair leaves the
/// text as it is. Every finding but AN-11's offers a repair. Returns the findings' messages.
fn check(
    input: &str,
    expect: &[(&str, usize, Option<usize>)],
    repair_changes_nothing: bool,
) -> Vec<String> {
    let s = Session::parse(input.to_owned(), "test").expect("the session reads");
    let findings = check_session(&s, None).findings;
    for f in &findings {
        assert_eq!(
            f.finding.repair.is_some(),
            f.finding.rule != turnkeeper_prevent::RuleId::An11,
            "{f:#?}"
        );
    }
    let found: Vec<(String, usize, Option<usize>)> = findings
        .iter()
        .map(|f| {
            (
                f.finding.rule.to_string(),
                f.line.unwrap_or(0),
                f.finding.block_index,
            )
        })
        .collect();
    let expect: Vec<(String, usize, Option<usize>)> = expect
        .iter()
        .map(|&(r, l, b)| (r.to_owned(), l, b))
        .collect();
    assert_eq!(found, expect);
    if repair_changes_nothing {
        let p = plan(&s, None).expect("a plan");
        assert!(p.changes.is_empty(), "{:#?}", p.changes);
        assert_eq!(p.text, input);
    } else {
        repaired(input);
    }
    findings.into_iter().map(|f| f.finding.message).collect()
}

#[test]
fn a_result_behind_a_new_prompt_is_reported_and_left() {
    let input = format!(
        "{HEADER}\n{USER}\n{CALL}\n{}\n{}\n",
        prompt("a1"),
        result("r1", "p1")
    );
    check(&input, &[("AN-11", 4, None)], true);
}

#[test]
fn a_prompt_stored_as_a_string_stands_between_too() {
    let prompt = prompt("a1").replace(r#"[{"type":"text","text":"and?"}]"#, r#""and?""#);
    let input = format!(
        "{HEADER}\n{USER}\n{CALL}\n{prompt}\n{}\n",
        result("r1", "p1")
    );
    check(&input, &[("AN-11", 4, None)], true);
}

#[test]
fn a_message_line_with_no_content_is_not_judged_and_stands_nowhere() {
    let input = format!(
        "{HEADER}\n{USER}\n{CALL}\n{}\n{}\n",
        r#"{"type":"message","id":"p1","parentId":"a1","message":{"role":"user"}}"#,
        result("r1", "p1")
    );
    check(&input, &[], true);
}

#[test]
fn an_error_reply_between_a_call_and_its_result_is_only_an_empty_message() {
    let input = format!(
        "{HEADER}\n{USER}\n{CALL}\n{ERROR_REPLY}\n{}\n{ANSWER}\n",
        result("r1", "e1")
    );
    let said = check(&input, &[("AN-04", 4, None)], false);
    assert!(
        said[0].starts_with("an error reply stored as `content: []`: "),
        "{said:?}"
    );
}

#[test]
fn an_empty_message_that_is_no_error_reply_is_not_called_one() {
    let empty = ERROR_REPLY.replace(r#""stopReason":"error""#, r#""stopReason":"stop""#);
    let input = format!(
        "{HEADER}\n{USER}\n{CALL}\n{empty}\n{}\n{ANSWER}\n",
        result("r1", "e1")
    );
    let said = check(&input, &[("AN-04", 4, None)], false);
    assert!(said[0].starts_with("`content: []`: "), "{said:?}");
}

#[test]
fn a_call_followed_by_a_second_reply_is_answered_where_it_was_made() {
    let reply = ANSWER.replace(r#""parentId":"r1""#, r#""parentId":"a1""#);
    check(
        &format!("{HEADER}\n{USER}\n{CALL}\n{reply}\n"),
        &[("AN-08", 3, Some(0))],
        false,
    );
}

#[test]
fn a_branch_that_starts_with_an_open_call_has_it_answered() {
    let call = CALL.replace(r#""parentId":"u1""#, r#""parentId":null"#);
    check(
        &format!("{HEADER}\n{call}\n"),
        &[("AN-08", 2, Some(0))],
        false,
    );
}

#[test]
fn the_call_without_a_result_is_answered_and_its_sibling_is_not() {
    let input = format!(
        "{HEADER}\n{USER}\n{TWO_CALLS}\n{}\n{ANSWER}\n",
        result("r1", "a1")
    );
    check(&input, &[("AN-08", 3, Some(1))], false);
}

#[test]
fn a_call_open_at_the_end_of_the_branch_is_answered() {
    check(
        &format!("{HEADER}\n{USER}\n{CALL}\n"),
        &[("AN-08", 3, Some(0))],
        false,
    );
}

#[test]
fn a_second_result_for_one_call_goes() {
    let input = format!(
        "{HEADER}\n{USER}\n{CALL}\n{}\n{}\n{}\n",
        result("r0", "a1"),
        result("r1", "r0"),
        ANSWER
    );
    let said = check(&input, &[("AN-10", 5, None)], false);
    assert!(
        said[0].starts_with(r#"a toolResult for "call_1": "#),
        "{said:?}"
    );
}

#[test]
fn a_result_whose_call_is_further_back_says_so() {
    // call_1 is made, answered, and answered again after the next reply.
    let input = format!(
        "{HEADER}\n{USER}\n{CALL}\n{}\n{ANSWER}\n{}\n",
        result("r1", "a1"),
        result("r2", "a2")
    );
    let said = check(&input, &[("AN-10", 6, None)], false);
    assert!(
        said[0].starts_with(
            r#"a toolResult for "call_1" (its call is on another branch or further back): "#
        ),
        "{said:?}"
    );
}
