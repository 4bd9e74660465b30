//! `check_str` of an OpenCode export (loaded once, not read as a transcript first): each
//! finding points at the export's own message and part, in both export shapes, whatever order
//! the export lists them in (the session is put in conversation order to be checked).

use turnkeeper::{Options, check_str};

/// Two entries listed newest first, parts not in id order: a user prompt, then an assistant
/// step whose tool call never finished and which has no thinking though thinking is on.
const ENTRIES: &str = r#"[{"info":{"id":"msg_b2","sessionID":"ses_1","role":"assistant","parentID":"msg_a1","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","path":{"cwd":"/","root":"/"},"cost":0,"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":2,"completed":3}},"parts":[{"id":"prt_9","sessionID":"ses_1","messageID":"msg_b2","type":"text","text":"done"},{"id":"prt_5","sessionID":"ses_1","messageID":"msg_b2","type":"tool","callID":"toolu_01","tool":"bash","state":{"status":"running","input":{"command":"ls"},"time":{"start":2}}}]},
{"info":{"id":"msg_a1","sessionID":"ses_1","role":"user","time":{"created":1},"model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}},"parts":[{"id":"prt_2","sessionID":"ses_1","messageID":"msg_a1","type":"text","text":"go"}]}]"#;

/// The findings of `body` as `rule path message_index block_index` lines.
fn check(body: &str, expect: &[&str]) {
    let got: Vec<String> = check_str(body, &Options::default())
        .expect("the export is checked")
        .iter()
        .map(|f| {
            format!(
                "{} {} {:?} {:?}",
                f.rule, f.path, f.message_index, f.block_index
            )
        })
        .collect();
    assert_eq!(got, expect, "{body}");
}

#[test]
fn findings_point_into_a_bare_array_export() {
    check(ENTRIES, &["AN-16 [0].parts[1] Some(0) Some(1)"]);
}

#[test]
fn findings_point_into_an_export_document() {
    let doc = format!(r#"{{"info":{{"id":"ses_1","title":"t"}},"messages":{ENTRIES}}}"#);
    check(&doc, &["AN-16 messages[0].parts[1] Some(0) Some(1)"]);
}
