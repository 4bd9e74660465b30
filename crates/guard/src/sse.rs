//! Assembling an Anthropic Messages streaming response (`text/event-stream`) into a message.
//!
//! The stream's events are documented in the Messages streaming reference: `message_start`
//! carries the message without content, `content_block_start` opens block `index` with its initial
//! object, `content_block_delta` appends `text_delta.text`, `thinking_delta.thinking`,
//! `signature_delta.signature`, `input_json_delta.partial_json` or `citations_delta.citation`, and
//! `content_block_stop` closes it. A mid-stream `error` event ends the stream.
//!
//! Each block is rebuilt from its `content_block_start` object with the accumulated fields set in
//! place, so its key order is the provider's. Blocks are kept by their `index` and written in its
//! order; an index no `content_block_start` opened is skipped. Text, thinking and signature are the
//! start object's value followed by every delta, byte for byte (a thinking block's signature covers
//! exactly that text). Tool input is the concatenated `partial_json` when that is JSON; a stream
//! cut inside it leaves the start object's input. So the content is always a JSON array.

use std::collections::BTreeMap;

use turnkeeper_model::edit::object;
use turnkeeper_model::json::write_string;

/// A message assembled from a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assembled {
    /// `message.id`.
    pub id: Option<String>,
    /// `message.model`.
    pub model: Option<String>,
    /// The content array, as JSON text.
    pub content: String,
    /// The stream's `error` event payload, if one arrived.
    pub error: Option<String>,
    /// True when the stream reached its `message_stop` event with no `error` event: the message
    /// is whole. A stream cut short (a dropped connection, an overloaded upstream) is not, and
    /// must not be recorded as a turn.
    pub complete: bool,
}

#[derive(Default)]
struct Open {
    start: String,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    input: Option<String>,
    citations: Vec<String>,
}

/// True when `text` looks like an event stream rather than a JSON body.
pub fn looks_like_sse(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("event:") || t.starts_with("data:")
}

/// Assembles the stream. Unknown events and malformed `data:` lines are skipped (and traced).
pub fn assemble(stream: &str) -> Assembled {
    let mut out = Assembled::default();
    // By `index`: a stream names its blocks, and a number from the stream must not size a vector.
    let mut blocks: BTreeMap<u64, Open> = BTreeMap::new();
    for line in stream.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim_start();
        let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
            tracing::debug!(line = data, "skipping a data line that is not JSON");
            continue;
        };
        let idx = v.get("index").and_then(|i| i.as_u64()).unwrap_or(0);
        match v.get("type").and_then(|t| t.as_str()) {
            Some("message_start") => {
                let m = v.get("message");
                out.id = m
                    .and_then(|m| m.get("id"))
                    .and_then(|s| s.as_str())
                    .map(str::to_owned);
                out.model = m
                    .and_then(|m| m.get("model"))
                    .and_then(|s| s.as_str())
                    .map(str::to_owned);
            }
            Some("content_block_start") => {
                // The raw object text of `content_block`, so its key order is kept.
                let start = raw_member(data, "content_block").unwrap_or_else(|| "{}".to_owned());
                blocks.insert(
                    idx,
                    Open {
                        start,
                        ..Open::default()
                    },
                );
            }
            Some("content_block_delta") => {
                let Some(b) = blocks.get_mut(&idx) else {
                    continue;
                };
                let d = v.get("delta");
                let field = |k: &str| {
                    d.and_then(|d| d.get(k))
                        .and_then(|s| s.as_str())
                        .unwrap_or("")
                };
                match d.and_then(|d| d.get("type")).and_then(|t| t.as_str()) {
                    Some("text_delta") => b
                        .text
                        .get_or_insert_with(String::new)
                        .push_str(field("text")),
                    Some("thinking_delta") => b
                        .thinking
                        .get_or_insert_with(String::new)
                        .push_str(field("thinking")),
                    Some("signature_delta") => b
                        .signature
                        .get_or_insert_with(String::new)
                        .push_str(field("signature")),
                    Some("input_json_delta") => b
                        .input
                        .get_or_insert_with(String::new)
                        .push_str(field("partial_json")),
                    Some("citations_delta") => {
                        if let Some(c) = d.and_then(|d| d.get("citation")) {
                            b.citations.push(c.to_string());
                        }
                    }
                    _ => {}
                }
            }
            Some("error") => out.error = Some(data.to_owned()),
            Some("message_stop") => out.complete = true,
            _ => {}
        }
    }
    let mut content = String::from("[");
    for (n, b) in blocks.values().enumerate() {
        if n > 0 {
            content.push(',');
        }
        content.push_str(&finish_block(b));
    }
    content.push(']');
    out.content = content;
    out.complete &= out.error.is_none();
    out
}

fn quoted(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    write_string(&mut q, s);
    q
}

fn finish_block(b: &Open) -> String {
    let mut json = b.start.clone();
    let mut set = |k: &str, v: String| {
        if let Some(j) = object::set_key(&json, k, &v) {
            json = j;
        }
    };
    // The start object's value (usually empty) and then the deltas.
    let prior = |k: &str| {
        object::get(&b.start, k)
            .and_then(|r| serde_json::from_str::<String>(r).ok())
            .unwrap_or_default()
    };
    for (k, deltas) in [
        ("text", &b.text),
        ("thinking", &b.thinking),
        ("signature", &b.signature),
    ] {
        if let Some(d) = deltas {
            set(k, quoted(&(prior(k) + d)));
        }
    }
    if let Some(i) = b.input.as_deref().filter(|i| !i.trim().is_empty()) {
        // Read as the events themselves are read (a `Value`): skipping it (`IgnoredAny`) takes a
        // number out of range, `1E999`, that reading the assembled message again refuses.
        if serde_json::from_str::<serde_json::Value>(i).is_ok() {
            set("input", i.to_owned());
        } else {
            tracing::debug!(
                partial_json = i,
                "the tool input's deltas are not JSON (a cut stream); keeping the start's input"
            );
        }
    }
    if !b.citations.is_empty() {
        set("citations", format!("[{}]", b.citations.join(",")));
    }
    json
}

fn raw_member(data: &str, key: &str) -> Option<String> {
    object::get(data, key).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event stream of `data:` lines, one per event, without `event:` lines.
    fn stream(events: &[&str]) -> String {
        events.iter().map(|e| format!("data: {e}\n\n")).collect()
    }

    /// Assembles `events` and compares the content array and the error with what is expected.
    fn check(events: &[&str], content: &str, error: Option<&str>) {
        let a = assemble(&stream(events));
        assert_eq!(
            (a.content.as_str(), a.error.as_deref()),
            (content, error),
            "{events:?}"
        );
    }

    /// (A citation is re-serialised through `serde_json::Value`, which sorts its keys; these
    /// are written sorted so the expectation does not depend on that.)
    #[test]
    fn text_is_appended_to_the_start_text_and_citations_collected() {
        check(
            &[
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hel","citations":[]}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo \"you\""}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"cited_text":"c","start_char_index":0,"type":"char_location"}}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"cited_text":"d","type":"char_location"}}}"#,
                r#"{"type":"content_block_stop","index":0}"#,
            ],
            r#"[{"type":"text","text":"Hello \"you\"","citations":[{"cited_text":"c","start_char_index":0,"type":"char_location"},{"cited_text":"d","type":"char_location"}]}]"#,
            None,
        );
    }

    #[test]
    fn an_error_event_is_kept_and_what_came_before_assembled() {
        let error =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        check(
            &[
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}"#,
                error,
            ],
            r#"[{"type":"text","text":"par"}]"#,
            Some(error),
        );
    }

    #[test]
    fn unknown_events_stray_deltas_and_bad_lines_are_skipped() {
        check(
            &[
                "not json",
                r#"{"type":"ping"}"#,
                r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"lost"}}"#,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" "}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"mystery_delta","text":"x"}}"#,
            ],
            r#"[{"type":"tool_use","id":"t","name":"f","input":{}}]"#,
            None,
        );
        check(&[], "[]", None);
    }

    #[test]
    fn streams_are_told_from_json_bodies() {
        assert!(looks_like_sse("\n event: message_start\ndata: {}"));
        assert!(looks_like_sse("data: {}"));
        assert!(!looks_like_sse(r#"{"type":"message"}"#));
        assert!(!looks_like_sse(": comment\ndata: {}"));
    }

    #[test]
    fn assembles_thinking_text_and_tool_use() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"content\":[]}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me \\\"think\\\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\" é\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCkY=\"}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1}\"}}\n\n";
        let a = assemble(sse);
        assert_eq!(a.id.as_deref(), Some("msg_1"));
        assert_eq!(
            a.content,
            r#"[{"type":"thinking","thinking":"Let me \"think\" é","signature":"EqQBCkY="},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}]"#
        );
        assert!(looks_like_sse(sse));
        assert!(!a.complete, "no message_stop: the stream was cut short");
        let whole = format!("{sse}event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n");
        assert!(assemble(&whole).complete);
        let failed = format!(
            "{whole}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"overloaded_error\"}}}}\n\n"
        );
        let f = assemble(&failed);
        assert!(!f.complete);
        assert!(f.error.is_some_and(|e| e.contains("overloaded_error")));
    }

    fn start(index: &str, block: &str) -> String {
        format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{block}}}\n\n"
        )
    }

    fn delta(index: &str, delta: &str) -> String {
        format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{delta}}}\n\n"
        )
    }

    /// Blocks are written in index order; an index no start opened leaves no hole in the array,
    /// and an index as large as the stream likes sizes nothing (it used to size a vector: an
    /// index of 10^18 asked for that many blocks).
    #[test]
    fn indexes_order_blocks_and_leave_no_holes() {
        let sse = [
            start("7", r#"{"type":"text","text":"b"}"#),
            start("1000000000000000000", r#"{"type":"text","text":"c"}"#),
            start("2", r#"{"type":"text","text":"a"}"#),
            delta("5", r#"{"type":"text_delta","text":"lost"}"#),
        ]
        .concat();
        assert_eq!(
            assemble(&sse).content,
            r#"[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]"#
        );
    }

    /// A stream cut inside a tool's input leaves the start object's input, so the content stays
    /// JSON; a complete input replaces it.
    #[test]
    fn a_cut_tool_input_keeps_the_start_input() {
        let call = r#"{"type":"tool_use","id":"toolu_1","name":"f","input":{}}"#;
        let cut = [
            start("0", call),
            delta(
                "0",
                r#"{"type":"input_json_delta","partial_json":"{\"a\":[1,"}"#,
            ),
        ]
        .concat();
        assert_eq!(assemble(&cut).content, format!("[{call}]"));
        let whole = [
            start("0", call),
            delta(
                "0",
                r#"{"type":"input_json_delta","partial_json":"{\"a\":[1,"}"#,
            ),
            delta("0", r#"{"type":"input_json_delta","partial_json":"2]}"}"#),
        ]
        .concat();
        assert_eq!(
            assemble(&whole).content,
            r#"[{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":[1,2]}}]"#
        );
    }

    /// Thinking and signature are the start object's value followed by the deltas, as text is
    /// (a start carrying thinking used to lose it).
    #[test]
    fn thinking_is_the_start_value_then_the_deltas() {
        let sse = [
            start(
                "0",
                r#"{"type":"thinking","thinking":"Let ","signature":""}"#,
            ),
            delta("0", r#"{"type":"thinking_delta","thinking":"me \u00e9"}"#),
            delta("0", r#"{"type":"signature_delta","signature":"EqQB"}"#),
            delta("0", r#"{"type":"signature_delta","signature":"CkY="}"#),
        ]
        .concat();
        assert_eq!(
            assemble(&sse).content,
            r#"[{"type":"thinking","thinking":"Let me é","signature":"EqQBCkY="}]"#
        );
    }
}
