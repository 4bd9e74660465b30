//! Regression: an OpenCode assistant message whose only part is reasoning without a signature
//! (the AI SDK drops it) is sent with no content, and the check's AN-04 finding named no
//! OpenCode message (`messages[1]`, and nothing a user could find in their session): the
//! request message's origins were known only through its blocks, and it has none. The
//! conversion now records the OpenCode messages behind every request message
//! (`crates/model/tests/opencode_message_origins.rs`).

use turnkeeper_model::opencode::session::load_export;
use turnkeeper_prevent::Options;
use turnkeeper_prevent::opencode::check_session;

const SES: &str = "ses_0a1b2c3d4ffeTinySession01";

/// A message of `role` with id `id` holding `parts` (JSON objects without their ids). Its
/// creation time follows from its id (`msg_ed870000000N...`: N seconds in), as OpenCode's do.
fn message(id: &str, role: &str, parts: &[&str]) -> String {
    let created = 1_781_740_000_000_u64 + 1000 * u64::from(id.as_bytes()[15] - b'0');
    let info = match role {
        "user" => format!(
            r#"{{"id":"{id}","sessionID":"{SES}","role":"user","time":{{"created":{created}}},"model":{{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}}}"#
        ),
        _ => format!(
            r#"{{"id":"{id}","sessionID":"{SES}","role":"assistant","parentID":"msg_ed8700000001UserFirst0001","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","path":{{"cwd":"/","root":"/"}},"cost":0,"tokens":{{"input":1,"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}},"time":{{"created":{created},"completed":{created}}}}}"#
        ),
    };
    let parts: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(n, p)| {
            format!(
                r#"{{"id":"prt_{}{n:02}","sessionID":"{SES}","messageID":"{id}",{p}}}"#,
                &id[4..]
            )
        })
        .collect();
    format!(r#"{{"info":{info},"parts":[{}]}}"#, parts.join(","))
}

/// The session's first message: the prompt "go".
fn first_prompt() -> String {
    message(
        "msg_ed8700000001UserFirst0001",
        "user",
        &[r#""type":"text","text":"go""#],
    )
}

/// The findings of a session of `messages` as `rule path message part` lines.
fn check(messages: &[String], expect: &[&str]) {
    let text = format!("[{}]", messages.join(","));
    let s = load_export(&text, "tiny").expect("the export loads");
    let c = check_session(&s, &Options::default()).expect("the session is checked");
    let got: Vec<String> = c
        .findings
        .iter()
        .map(|f| {
            format!(
                "{} {} {} {}",
                f.finding.rule,
                f.finding.path,
                f.message_id.as_deref().unwrap_or("-"),
                f.part_id.as_deref().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(got, expect);
}

#[test]
fn a_message_left_without_content_names_its_opencode_message() {
    check(
        &[
            first_prompt(),
            message(
                "msg_ed8700000002AsstFirst0002",
                "assistant",
                &[r#""type":"reasoning","text":"Unsigned.","time":{"start":1,"end":2}"#],
            ),
            message(
                "msg_ed8700000003UserAgain0003",
                "user",
                &[r#""type":"text","text":"go on""#],
            ),
        ],
        &["AN-04 messages[1] msg_ed8700000002AsstFirst0002 -"],
    );
}

#[test]
fn a_block_of_a_merged_message_names_its_own_opencode_message() {
    // The tool result the assistant message makes is merged with the prompt after it; the
    // prompt's blank text part is found there, and named with its own message, not the first
    // message of the merged one.
    check(
        &[
            first_prompt(),
            message(
                "msg_ed8700000002AsstFirst0002",
                "assistant",
                &[
                    r#""type":"text","text":"Listing.""#,
                    r#""type":"tool","callID":"toolu_01List","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"a","title":"ls","metadata":{},"time":{"start":1,"end":2}}"#,
                ],
            ),
            message(
                "msg_ed8700000003UserAgain0003",
                "user",
                &[
                    r#""type":"text","text":"go on""#,
                    r#""type":"text","text":"  ""#,
                ],
            ),
        ],
        &[
            "AN-05 messages[2].content[2] msg_ed8700000003UserAgain0003 prt_ed8700000003UserAgain000301",
        ],
    );
}
