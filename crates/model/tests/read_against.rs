//! Reading against what is kept of an earlier body, over its bytes (`read_against` of the three
//! readers, as the proxy calls them): the earlier bytes are only compared, never read as text, so
//! bytes that are not UTF-8, or an earlier reading whose spans fall outside them, cost reuse,
//! never correctness or a panic.

use turnkeeper_model::wire::{chat, responses};
use turnkeeper_model::{Earlier, FormatHint, read, read_against};

const MESSAGES: &str = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":"more"}]}"#;
const CHAT: &str = r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#;
const RESPONSES: &str = r#"{"model":"o4-mini","input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}"#;

/// The earlier bodies tried against each text: the text's own bytes (every message moved over),
/// the same with a byte that is not UTF-8 in the middle message (that one scanned), cut short
/// (the messages past the cut scanned), and empty.
fn earlier_texts(text: &str, middle: (usize, usize)) -> Vec<(Vec<u8>, &'static str)> {
    let own = text.as_bytes().to_vec();
    let mut broken = own.clone();
    broken[(middle.0 + middle.1) / 2] = 0xff;
    let cut = own[..middle.1 - 1].to_vec();
    vec![
        (own, "own"),
        (broken, "not UTF-8"),
        (cut, "cut short"),
        (Vec::new(), "empty"),
    ]
}

/// How many messages each earlier text lets through: all three, the two around the broken one,
/// the first, none.
const MOVED: [usize; 4] = [3, 2, 1, 0];

#[test]
fn messages_read_against_any_earlier_bytes_read_as_alone() {
    let t = read(MESSAGES, FormatHint::Auto).expect("reads");
    let want = format!("{t:?}");
    let middle = (
        t.messages[1].span.start as usize,
        t.messages[1].span.end as usize,
    );
    let keep: Vec<Option<u32>> = (0..3).map(Some).collect();
    for ((bytes, what), moved) in earlier_texts(MESSAGES, middle).into_iter().zip(MOVED) {
        let earlier = Earlier {
            src: &bytes,
            ..Earlier::of(&t)
        };
        let (again, copies) = read_against(MESSAGES, &earlier, &keep, None).expect("reads");
        assert_eq!(format!("{again:?}"), want, "{what}");
        assert_eq!(copies.iter().flatten().count(), moved, "{what}");
    }
}

#[test]
fn chat_read_against_any_earlier_bytes_reads_as_alone() {
    let b = chat::read(CHAT).expect("reads");
    let want = format!("{b:?}");
    let m = b.messages_at.elems[1];
    for ((bytes, what), moved) in earlier_texts(CHAT, (m.start as usize, m.end as usize))
        .into_iter()
        .zip(MOVED)
    {
        let earlier = chat::Earlier {
            src: &bytes,
            ..chat::Earlier::of(&b)
        };
        let (again, n) = chat::read_against(CHAT, earlier).expect("reads");
        assert_eq!(format!("{again:?}"), want, "{what}");
        assert_eq!(n, moved, "{what}");
    }
}

#[test]
fn responses_read_against_any_earlier_bytes_reads_as_alone() {
    let b = responses::read(RESPONSES).expect("reads");
    let want = format!("{b:?}");
    let it = b.input_at.elems[1];
    for ((bytes, what), moved) in earlier_texts(RESPONSES, (it.start as usize, it.end as usize))
        .into_iter()
        .zip(MOVED)
    {
        let earlier = responses::Earlier {
            src: &bytes,
            ..responses::Earlier::of(&b)
        };
        let (again, n) = responses::read_against(RESPONSES, earlier).expect("reads");
        assert_eq!(format!("{again:?}"), want, "{what}");
        assert_eq!(n, moved, "{what}");
    }
}
