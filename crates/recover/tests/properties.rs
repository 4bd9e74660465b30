//! Property tests. Run more cases with `PROPTEST_CASES=10000 cargo test -p turnkeeper-recover
//! --test properties` (the xtask verify run does).
//!
//! - Every real corpus error, wrapped the ways real errors get wrapped (nested JSON strings,
//!   Python reprs, SDK prefixes, terminal hard-wraps at width 40–100, TUI boxes), keeps its kind.
//! - No input, however malformed, makes `classify` or `plan` panic.

mod common;

use proptest::prelude::*;
use turnkeeper_recover::{Attempts, classify, plan};

#[derive(Debug, Clone)]
enum Wrap {
    /// The text becomes a JSON string inside `{"error":{"message": …}}`.
    JsonString,
    /// A Python repr: `Error code: 400 - {'error': {'message': '…'}}`.
    PythonRepr,
    /// An SDK or gateway prefix.
    Prefix(usize),
    /// A terminal hard-wrap: newline plus indentation every `width` characters, anywhere.
    Hard { width: usize, indent: usize },
    /// A TUI box around every line.
    BoxDrawing,
}

const PREFIXES: &[(&str, &str)] = &[
    ("APIError: ", ""),
    ("litellm.BadRequestError: AnthropicException - ", ""),
    ("Error: ", ""),
    ("[API Error: ", "]"),
    ("  ⎿  ", ""),
    ("模型请求失败: ", ""),
    ("🤖 ", " (request id: 20240812230606897709001qmTtjTcX)"),
];

fn wrap_strategy() -> impl Strategy<Value = Wrap> {
    prop_oneof![
        Just(Wrap::JsonString),
        Just(Wrap::PythonRepr),
        (0..PREFIXES.len()).prop_map(Wrap::Prefix),
        (40usize..=100, 0usize..=8).prop_map(|(width, indent)| Wrap::Hard { width, indent }),
        Just(Wrap::BoxDrawing),
    ]
}

fn apply(text: &str, wrap: &Wrap) -> String {
    match wrap {
        Wrap::JsonString => {
            let inner = serde_json::to_string(text).unwrap_or_default();
            format!(r#"{{"error":{{"message":{inner},"code":400,"status":"Bad Request"}}}}"#)
        }
        Wrap::PythonRepr => {
            let inner = text.replace('\\', "\\\\").replace('\'', "\\'");
            format!(
                "Error code: 400 - {{'error': {{'message': '{inner}', 'type': 'invalid_request_error', 'param': None}}}}"
            )
        }
        Wrap::Prefix(i) => {
            let (before, after) = PREFIXES[*i % PREFIXES.len()];
            format!("{before}{text}{after}")
        }
        Wrap::Hard { width, indent } => {
            let mut out = String::with_capacity(text.len() + text.len() / width * (indent + 1));
            for (i, c) in text.chars().enumerate() {
                if i > 0 && i % width == 0 {
                    out.push('\n');
                    out.extend(std::iter::repeat_n(' ', *indent));
                }
                out.push(c);
            }
            out
        }
        Wrap::BoxDrawing => {
            let mut out = String::from("╭────────────╮\n");
            for line in text.lines() {
                out.push_str("│ ");
                out.push_str(line);
                out.push_str(" │\n");
            }
            out.push_str("╰────────────╯");
            out
        }
    }
}

proptest! {
    #[test]
    fn wrapped_corpus_errors_keep_their_kind(
        pick in any::<prop::sample::Index>(),
        wraps in prop::collection::vec(wrap_strategy(), 1..=3),
    ) {
        let items = corpus();
        let item = &items[pick.index(items.len())];
        let mut text = item.body.clone();
        for w in &wraps {
            text = apply(&text, w);
        }
        // Wrapping must not lose a right verdict (accuracy itself is corpus.rs's business). The
        // generated envelopes state a status of their own (400), which may rightly overrule a
        // verdict that rests on a status alone, so those items are left out.
        prop_assume!(classify(item.status, &item.body).kind == item.kind);
        prop_assume!(classify(None, &without_statuses(&item.body)).kind == item.kind);
        let d = classify(item.status, &text);
        prop_assert_eq!(d.kind, item.kind, "{} wrapped by {:?}:\n{}", item.id, wraps, text);
    }

    #[test]
    fn classify_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048), status in any::<Option<u16>>()) {
        let text = String::from_utf8_lossy(&bytes);
        let d = classify(status, &text);
        let _ = plan(&d, &Attempts::new());
    }

    #[test]
    fn classify_never_panics_on_escape_soup(
        text in r#"[\\"'{}\[\]:,.a-z0-9 \n│⎿é_>+-]{0,400}"#,
        status in any::<Option<u16>>(),
    ) {
        let d = classify(status, &text);
        let mut attempts = Attempts::new();
        for _ in 0..10 {
            let a = plan(&d, &attempts);
            attempts.record(&d, a);
        }
    }
}

/// The text with every three-digit number in the HTTP status range masked.
fn without_statuses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        let is_status =
            digits.len() == 3 && digits.parse::<u16>().is_ok_and(|v| (100..600).contains(&v));
        out.push_str(if is_status { "nnn" } else { digits });
        digits.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            flush(&mut digits, &mut out);
            out.push(c);
        }
    }
    flush(&mut digits, &mut out);
    out
}

fn corpus() -> &'static [common::Item] {
    static CORPUS: std::sync::OnceLock<Vec<common::Item>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(common::corpus)
}
