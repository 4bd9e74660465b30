//! Reading against what is kept of an earlier body, over its bytes (`read_against` of the three
//! readers, as the proxy calls them): the earlier bytes are only compared, never read as text, so
//! bytes that are not UTF-8, or an earlier reading whose spans fall outside them, cost reuse,
//! never correctness or a panic.

use turnkeeper_model::wire::{chat, responses};
use turnkeeper_model::{Earlier, FormatHint, read, read_against};

const MESSAGES: &str = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":"more"}]}"#;
const CHAT: &str = r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#;
const RESPONSES: &str = r#"{"model":"o4-mini","input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}"#;

/// Reads `text` against each earlier text made from it (`read(bytes)`: the reading's `Debug`
/// text and how many messages were moved over) and requires its own reading, `want`, every time,
/// with the messages moved over that each earlier text lets through. The earlier texts: the
/// text's own bytes (all three moved over), the same with a byte that is not UTF-8 in the middle
/// message, whose span is `middle` (the two around it), cut short inside the middle message (the
/// first), and empty (none).
fn check(text: &str, middle: (usize, usize), want: &str, read: impl Fn(&[u8]) -> (String, usize)) {
    let own = text.as_bytes().to_vec();
    let mut broken = own.clone();
    broken[(middle.0 + middle.1) / 2] = 0xff;
    let cut = own[..middle.1 - 1].to_vec();
    let earlier = [
        (own, "own", 3),
        (broken, "not UTF-8", 2),
        (cut, "cut short", 1),
        (Vec::new(), "empty", 0),
    ];
    for (bytes, what, moved) in earlier {
        let (again, n) = read(&bytes);
        assert_eq!(again, want, "{what}");
        assert_eq!(n, moved, "{what}");
    }
}

#[test]
fn messages_read_against_any_earlier_bytes_read_as_alone() {
    let t = read(MESSAGES, FormatHint::Auto).expect("reads");
    let m = t.messages[1].span;
    let keep: Vec<Option<u32>> = (0..3).map(Some).collect();
    check(
        MESSAGES,
        (m.start as usize, m.end as usize),
        &format!("{t:?}"),
        |bytes| {
            let earlier = Earlier {
                src: bytes,
                ..Earlier::of(&t)
            };
            let (again, copies) = read_against(MESSAGES, &earlier, &keep, None).expect("reads");
            (format!("{again:?}"), copies.iter().flatten().count())
        },
    );
}

#[test]
fn chat_read_against_any_earlier_bytes_reads_as_alone() {
    let b = chat::read(CHAT).expect("reads");
    let m = b.messages_at.elems[1];
    check(
        CHAT,
        (m.start as usize, m.end as usize),
        &format!("{b:?}"),
        |bytes| {
            let earlier = chat::Earlier {
                src: bytes,
                ..chat::Earlier::of(&b)
            };
            let (again, n) = chat::read_against(CHAT, earlier).expect("reads");
            (format!("{again:?}"), n)
        },
    );
}

#[test]
fn responses_read_against_any_earlier_bytes_reads_as_alone() {
    let b = responses::read(RESPONSES).expect("reads");
    let it = b.input_at.elems[1];
    check(
        RESPONSES,
        (it.start as usize, it.end as usize),
        &format!("{b:?}"),
        |bytes| {
            let earlier = responses::Earlier {
                src: bytes,
                ..responses::Earlier::of(&b)
            };
            let (again, n) = responses::read_against(RESPONSES, earlier).expect("reads");
            (format!("{again:?}"), n)
        },
    );
}
