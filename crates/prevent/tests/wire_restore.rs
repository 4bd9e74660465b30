//! Restoring reasoning from the turn store in the wire families (DS-03, KM-01, GM-18, OR-17):
//! each case records synthetic responses in a store, repairs a request that lost (or altered)
//! what they carried, and compares the exact body and the changes (rule, action, path). Then,
//! per family, real recorded traffic end to end: the response of an exchange is recorded, the
//! reasoning is taken out of the next recorded request, and repair must give back exactly the
//! recorded request's bytes.

#[path = "../../testkit/src/shared.rs"]
mod shared;

use turnkeeper_guard::TurnStore;
use turnkeeper_model::Format;
use turnkeeper_prevent::wire::repair_wire;
use turnkeeper_prevent::{Options, Policy};

/// Repairs `input` (of `format`) with a store holding `responses`; the body and the changes as
/// `RULE action path` must be `expect`.
fn check(format: Format, responses: &[&str], input: &str, expect: (&str, &[&str])) {
    let mut store = TurnStore::in_memory();
    for r in responses {
        store.add_any_response(r).expect("a response");
    }
    let o = Options {
        store: Some(&store),
        policy: Policy::default(),
        ..Options::default()
    };
    let fixed = repair_wire(input, format, &o).expect("repairs");
    let changes: Vec<String> = fixed
        .report
        .changes
        .iter()
        .map(|c| format!("{} {} {}", c.rule, c.action, c.path))
        .collect();
    let changes: Vec<&str> = changes.iter().map(String::as_str).collect();
    assert_eq!((fixed.body.as_ref(), changes.as_slice()), expect, "{input}");
}

const DS_RESP: &str = r#"{"id":"c1","model":"deepseek-v4-pro","choices":[{"index":0,"message":{"role":"assistant","content":"","reasoning_content":"Look it up \u00e9.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;

#[test]
fn deepseek_gets_its_reasoning_back_and_the_stand_in_only_without_it() {
    let req = r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"x"}]}"#;
    check(
        Format::Chat,
        &[DS_RESP],
        req,
        (
            r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}],"reasoning_content":"Look it up \u00e9."},{"role":"tool","tool_call_id":"call_1","content":"x"}]}"#,
            &["DS-03 restored_field messages[1].reasoning_content"],
        ),
    );
    // Another turn's reasoning is not this one's: the stand-in, reported lossy.
    check(
        Format::Chat,
        &[DS_RESP],
        &req.replace("call_1", "call_2"),
        (
            r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_2","type":"function","function":{"name":"f","arguments":"{}"}}],"reasoning_content":""},{"role":"tool","tool_call_id":"call_2","content":"x"}]}"#,
            &["DS-03 lossy_stand_in messages[1].reasoning_content"],
        ),
    );
}

#[test]
fn kimi_restores_by_call_and_by_an_unambiguous_text_in_sorted_keys() {
    let call = r#"{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"","tool_calls":[{"id":"functions.f:0","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;
    let text = r#"{"id":"c2","choices":[{"index":0,"message":{"role":"assistant","content":"Done.","reasoning_content":"All good."},"finish_reason":"stop"}]}"#;
    // Sorted keys get the field in sorted place, with the message's own separators; an empty
    // stored value is put back as the empty value it was, restored, not a stand-in.
    let req = r#"{"model":"kimi-k2-thinking","thinking":{"type":"enabled","keep":"all"},"messages":[{"content": "q", "role": "user"}, {"content": null, "role": "assistant", "tool_calls": [{"id": "functions.f:0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"content": "x", "role": "tool", "tool_call_id": "functions.f:0"}, {"content": "Done.", "role": "assistant"}]}"#;
    check(
        Format::Chat,
        &[call, text],
        req,
        (
            r#"{"model":"kimi-k2-thinking","thinking":{"type":"enabled","keep":"all"},"messages":[{"content": "q", "role": "user"}, {"content": null, "reasoning_content": "", "role": "assistant", "tool_calls": [{"id": "functions.f:0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"content": "x", "role": "tool", "tool_call_id": "functions.f:0"}, {"content": "Done.", "reasoning_content": "All good.", "role": "assistant"}]}"#,
            &[
                "KM-01 restored_field messages[1].reasoning_content",
                "KM-01 restored_field messages[3].reasoning_content",
            ],
        ),
    );
}

#[test]
fn gemini_gets_its_signature_back_before_the_dummy() {
    let resp = r#"{"id":"g1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"fc_a","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"CiQB0e2Kb=="}}}]},"finish_reason":"tool_calls"}]}"#;
    let req = r#"{"model":"gemini-3-pro-preview","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"fc_a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"fc_a","content":"x"}]}"#;
    check(
        Format::Chat,
        &[resp],
        req,
        (
            r#"{"model":"gemini-3-pro-preview","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"fc_a","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"CiQB0e2Kb=="}}}]},{"role":"tool","tool_call_id":"fc_a","content":"x"}]}"#,
            &["GM-18 restored_field messages[1].tool_calls[0].extra_content"],
        ),
    );
    check(
        Format::Chat,
        &[],
        req,
        (
            r#"{"model":"gemini-3-pro-preview","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"fc_a","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"skip_thought_signature_validator"}}}]},{"role":"tool","tool_call_id":"fc_a","content":"x"}]}"#,
            &["GM-18 lossy_stand_in messages[1].tool_calls[0].extra_content"],
        ),
    );
}

const RS: &str = r#"{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"gAAAA1"}"#;
const FC: &str =
    r#"{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}"#;

fn responses_resp() -> String {
    format!(
        r#"{{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[{RS},{FC}]}}"#
    )
}

#[test]
fn a_dropped_responses_reasoning_item_is_put_back_before_its_call() {
    let out = r#"{"type":"function_call_output","call_id":"call_1","output":"x"}"#;
    let user = r#"{"role":"user","content":"q"}"#;
    let req = format!(r#"{{"model":"gpt-5","input":[{user}, {FC}, {out}]}}"#);
    check(
        Format::Responses,
        &[&responses_resp()],
        &req,
        (
            &format!(r#"{{"model":"gpt-5","input":[{user}, {RS}, {FC}, {out}]}}"#),
            &["OR-17 restored_field input[1]"],
        ),
    );
    // The same request continuing a stored response: the server has the item; nothing added.
    let chained = format!(
        r#"{{"model":"gpt-5","previous_response_id":"resp_1","input":[{user}, {FC}, {out}]}}"#
    );
    let mut store = TurnStore::in_memory();
    store.add_any_response(&responses_resp()).expect("stored");
    let o = Options {
        store: Some(&store),
        ..Options::default()
    };
    let fixed = repair_wire(&chained, Format::Responses, &o).expect("repairs");
    assert!(
        fixed.report.changes.iter().all(|c| c.rule != "OR-17"),
        "{:?}",
        fixed.report.changes
    );
    // A model without reasoning (OR-13) gets nothing back.
    let old = req.replace("gpt-5", "gpt-4.1");
    check(Format::Responses, &[&responses_resp()], &old, (&old, &[]));
}

#[test]
fn an_altered_responses_reasoning_item_is_replaced_by_the_original() {
    let out = r#"{"type":"function_call_output","call_id":"call_1","output":"x"}"#;
    // The encrypted blob stripped: the provider's item goes back.
    for altered in [
        RS.replace(
            r#""encrypted_content":"gAAAA1""#,
            r#""encrypted_content":null"#,
        ),
        RS.replace(r#","encrypted_content":"gAAAA1""#, ""),
    ] {
        let req = format!(r#"{{"model":"gpt-5","input":[{altered},{FC},{out}]}}"#);
        check(
            Format::Responses,
            &[&responses_resp()],
            &req,
            (
                &format!(r#"{{"model":"gpt-5","input":[{RS},{FC},{out}]}}"#),
                &["OR-17 restored_field input[0]"],
            ),
        );
    }
    // Another encrypted blob, or another summary, is no edit the server rejects: a stream sends
    // each item's blob up to three times, each encrypted anew, and OpenAI takes any of them back;
    // a real client replays an empty summary text for `summary: []` (real traffic). Left alone.
    for other in [
        RS.replace("gAAAA1", "gAAAA2"),
        RS.replace(r#""text":"plan""#, r#""text":"""#),
    ] {
        let req = format!(r#"{{"model":"gpt-5","input":[{other},{FC},{out}]}}"#);
        check(Format::Responses, &[&responses_resp()], &req, (&req, &[]));
    }
    // The same state written another way (key order) is no alteration.
    let reordered = r#"{"type":"reasoning","id":"rs_1","encrypted_content":"gAAAA1","summary":[{"type":"summary_text","text":"plan"}]}"#;
    let same = format!(r#"{{"model":"gpt-5","input":[{reordered},{FC},{out}]}}"#);
    check(Format::Responses, &[&responses_resp()], &same, (&same, &[]));
}

// ---- real traffic -------------------------------------------------------------------------------

/// Records `responses` (files of `../shared/real-traffic`), takes `cut` out of the recorded
/// request `request`, repairs it (as bound for `model` when given) and expects the recorded
/// request back, byte for byte, with `changes`.
fn round_trip(
    responses: &[&str],
    request: &str,
    cut: &dyn Fn(&str) -> String,
    format: Format,
    model: Option<&str>,
    changes: &[&str],
) {
    let Some(dir) = shared::shared_dir("real-traffic") else {
        return;
    };
    let mut store = TurnStore::in_memory();
    for r in responses {
        let body = std::fs::read_to_string(dir.join(r)).expect("response file");
        store.add_any_response(&body).expect("recorded");
    }
    let want = std::fs::read_to_string(dir.join(request)).expect("request file");
    let damaged = cut(&want);
    assert_ne!(damaged, want, "the cut took something out");
    let o = Options {
        store: Some(&store),
        model: model.map(str::to_owned),
        ..Options::default()
    };
    let fixed = repair_wire(&damaged, format, &o).expect("repairs");
    let got: Vec<String> = fixed
        .report
        .changes
        .iter()
        .map(|c| format!("{} {} {}", c.rule, c.action, c.path))
        .collect();
    assert_eq!(got, changes, "{request}");
    assert!(
        fixed.body == want,
        "{request}: the recorded request is not given back"
    );
}

/// Takes the first member `"key": <value>` out of `src`, with the separator `sep` after it (or,
/// for a last member, the comma before it).
fn cut_member(src: &str, key: &str, sep: &str) -> String {
    let k = format!("\"{key}\":");
    let Some(at) = src.find(&k) else {
        return src.to_owned();
    };
    let v: &str = &src[at + k.len()..];
    let lead = v.len() - v.trim_start().len();
    let mut de = serde_json::Deserializer::from_str(&v[lead..]).into_iter::<serde_json::Value>();
    let _ = de.next();
    let end = at + k.len() + lead + de.byte_offset();
    let (start, end) = if src[end..].starts_with(sep) {
        (at, end + sep.len())
    } else {
        // Last member: take the separator before it.
        let before = src[..at].trim_end_matches(' ');
        (before.len() - 1, end)
    };
    format!("{}{}", &src[..start], &src[end..])
}

#[test]
fn real_chat_deepseek_json_gets_its_reasoning_content_back() {
    round_trip(
        &[
            "openai-chat/pydantic-ai--test_deepseek-test_deepseek_deferred_capability_with_thinking__0.response.json",
        ],
        "openai-chat/pydantic-ai--test_deepseek-test_deepseek_deferred_capability_with_thinking__1.request.json",
        &|s| cut_member(s, "reasoning_content", ", "),
        Format::Chat,
        None,
        &["DS-03 restored_field messages[3].reasoning_content"],
    );
}

#[test]
fn real_chat_stream_gets_its_reasoning_content_back() {
    // A Z.ai GLM exchange recorded as a stream, judged as bound for DeepSeek's own API (whose
    // rule restores it): the assembled reasoning_content is the one the client replayed.
    round_trip(
        &[
            "openai-chat/fantasy--TestOpenAICompatibleThinking-zai-glm-4-7-flash-thinking-streaming__0.response.sse",
        ],
        "openai-chat/fantasy--TestOpenAICompatibleThinking-zai-glm-4-7-flash-thinking-streaming__1.request.json",
        &|s| cut_member(s, "reasoning_content", ","),
        Format::Chat,
        Some("deepseek-v4-pro"),
        &["DS-03 restored_field messages[2].reasoning_content"],
    );
}

#[test]
fn real_responses_get_their_reasoning_item_back() {
    let f = "openai-responses/pydantic-ai--test_openai_responses-test_openai_responses_thinking_with_tool_calls";
    round_trip(
        &[&format!("{f}__0.response.json")],
        &format!("{f}__1.request.json"),
        &|s| {
            // The reasoning item is input[1]: take it out with its separator.
            let at = s.find("{\"encrypted_content\"").unwrap_or(0);
            let end = s[at..]
                .find("\"type\": \"reasoning\"}, ")
                .map(|e| at + e + 22);
            match end {
                Some(end) => format!("{}{}", &s[..at], &s[end..]),
                None => s.to_owned(),
            }
        },
        Format::Responses,
        None,
        &["OR-17 restored_field input[1]"],
    );
}
