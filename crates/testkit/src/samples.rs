//! Real signed values, sampled from the checked-in corpus at build time (`include_str!`), so
//! generated thinking blocks carry signatures with the length, alphabet and prefixes of real ones
//! (Claude `Eq…`/`Es…`/`CA…`, Gemini `Ev0B…`, URL-safe base64 with `-` and `_`).

use std::sync::OnceLock;

const ANTHROPIC_SOURCES: &[&str] = &[
    include_str!("../../../corpus/anthropic/tool_loop_manual.json"),
    include_str!("../../../corpus/anthropic/long_200_messages.json"),
    include_str!("../../../corpus/anthropic/redacted_thinking.json"),
    include_str!("../../../corpus/anthropic/redacted_thinking_two_blocks.json"),
    include_str!("../../../corpus/anthropic/interleaved_thinking_server_tools.json"),
    include_str!("../../../corpus/anthropic/display_omitted_tool_loop.json"),
];

const GEMINI_SOURCES: &[&str] = &[
    include_str!("../../../corpus/gemini/gemini3_two_signed_steps_open_turn.json"),
    include_str!("../../../corpus/gemini/gemini3_signed_call_then_new_turn.json"),
    include_str!("../../../corpus/gemini/gemini25_parallel_calls_and_rare_parts.json"),
];

/// Real values found in the embedded corpus files.
#[derive(Debug, Default)]
pub struct Samples {
    /// `signature` of Anthropic thinking blocks.
    pub signatures: Vec<String>,
    /// `data` of redacted thinking blocks.
    pub redacted: Vec<String>,
    /// Gemini `thoughtSignature` values (sentinels excluded).
    pub gemini: Vec<String>,
}

fn walk(v: &serde_json::Value, s: &mut Samples) {
    match v {
        serde_json::Value::Object(o) => {
            let ty = o.get("type").and_then(|t| t.as_str());
            if let (Some("thinking"), Some(sig)) = (ty, o.get("signature").and_then(|x| x.as_str()))
                && !sig.is_empty()
            {
                s.signatures.push(sig.to_owned());
            }
            if let (Some("redacted_thinking"), Some(data)) =
                (ty, o.get("data").and_then(|x| x.as_str()))
            {
                s.redacted.push(data.to_owned());
            }
            for key in ["thoughtSignature", "thought_signature"] {
                if let Some(sig) = o.get(key).and_then(|x| x.as_str())
                    && sig.len() > 64
                {
                    s.gemini.push(sig.to_owned());
                }
            }
            for x in o.values() {
                walk(x, s);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                walk(x, s);
            }
        }
        _ => {}
    }
}

/// The samples, extracted once.
pub fn samples() -> &'static Samples {
    static SAMPLES: OnceLock<Samples> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut s = Samples::default();
        for src in ANTHROPIC_SOURCES.iter().chain(GEMINI_SOURCES) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(src) {
                walk(&v, &mut s);
            }
        }
        for list in [&mut s.signatures, &mut s.redacted, &mut s.gemini] {
            list.sort();
            list.dedup();
        }
        // Never empty, even if a corpus file changes shape.
        if s.signatures.is_empty() {
            s.signatures.push(
                "EqQBCkYIBxgCKkBvXz0wQ8rT2vX9wY4bN6cD1eF5gH7jKLk3mZ0pQ8rT2vX9wY4bN6cD==".into(),
            );
        }
        if s.redacted.is_empty() {
            s.redacted.push(s.signatures[0].clone());
        }
        if s.gemini.is_empty() {
            s.gemini
                .push(s.signatures[0].replace('+', "-").replace('/', "_"));
        }
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_signatures_are_found_and_plausible() {
        let s = samples();
        assert!(s.signatures.len() >= 10, "{}", s.signatures.len());
        assert!(s.redacted.len() >= 2);
        assert!(s.gemini.len() >= 3);
        for sig in s.signatures.iter().chain(&s.redacted).chain(&s.gemini) {
            assert_eq!(
                turnkeeper_guard::provenance(Some(sig)),
                turnkeeper_guard::Provenance::Plausible,
                "{sig}"
            );
        }
    }
}
