//! Top-level keys a draft sets: each lands where the body puts it, beside other edits that start
//! at the same place or right where another ends, none of them dropped.

use turnkeeper_model::{Draft, FormatHint, read};

/// Applies `edit` to a draft of `input` and requires exactly `expect` out.
fn check(input: &str, edit: impl FnOnce(&mut Draft<'_, '_>), expect: &str) {
    let t = read(input, FormatHint::Auto).expect("the input reads");
    let mut d = Draft::new(&t);
    edit(&mut d);
    assert_eq!(d.output(), expect);
    let mut into = String::from("an earlier body");
    assert!(d.output_into(&mut into));
    assert_eq!(into, expect);
}

const BODY: &str = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"hi"}]}]}"#;

#[test]
fn two_keys_added_at_one_place_both_land_in_the_order_set() {
    check(
        BODY,
        |d| {
            d.set_top("max_tokens", Some("1024".to_owned()));
            d.set_top("stream", Some("true".to_owned()));
        },
        r#"{"max_tokens":1024,"stream":true,"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"hi"}]}]}"#,
    );
}

#[test]
fn a_key_replaced_right_before_a_content_edit_keeps_both() {
    // The model's value ends at `,` and the messages array starts one byte later; the content
    // edit starts further in. Each edit is written, the bytes between them copied.
    check(
        BODY,
        |d| {
            d.set_top("model", Some(r#""claude-opus-4-1""#.to_owned()));
            d.remove_block(0, 0);
        },
        r#"{"model":"claude-opus-4-1","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#,
    );
}

#[test]
fn a_key_removed_and_one_added_at_the_start() {
    check(
        BODY,
        |d| {
            d.set_top("model", None);
            d.set_top("max_tokens", Some("8".to_owned()));
        },
        r#"{"max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"hi"}]}]}"#,
    );
}
