//! Transcript cases taken from peers' own test suites (issue 22): the request body a peer's test
//! builds and what the peer does to it, rewritten as a synthetic fixture with the exact findings
//! and the exact body turnkeeper must give. Where turnkeeper and the peer disagree, the
//! provider's rules (`shared/research/api-rules-reasoning-2026-11.md`) decide, and a valid body
//! never gets a finding.
//!
//! Source of every case here: openclaw/openclaw
//! `src/agents/pi-embedded-runner-extraparams-moonshot.test.ts` (Moonshot Kimi, Chat
//! Completions). The peer's payloads hold only the assistant message under test; each fixture
//! puts the user turn before it and the tool answer after it, so that the only rule in play is
//! the one the peer's case is about.

use turnkeeper_model::Format;
use turnkeeper_prevent::Options;
use turnkeeper_prevent::wire::{check_wire, repair_wire};

/// One peer case: the body, the `rule:severity` findings turnkeeper must give (in order), and the
/// repaired body (`None`: unchanged, byte for byte).
struct Case {
    peer_test: &'static str,
    body: &'static str,
    findings: &'static [&'static str],
    repaired: Option<&'static str>,
}

fn check(case: &Case) {
    let o = Options::default();
    let found: Vec<String> = check_wire(case.body, Format::Chat, &o)
        .unwrap_or_else(|e| panic!("{}: {e}", case.peer_test))
        .iter()
        .map(|f| format!("{}:{:?}", f.rule, f.severity).to_ascii_lowercase())
        .collect();
    let want: Vec<String> = case
        .findings
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    assert_eq!(found, want, "{}: findings", case.peer_test);
    let fixed = repair_wire(case.body, Format::Chat, &o)
        .unwrap_or_else(|e| panic!("{}: {e}", case.peer_test));
    assert_eq!(
        fixed.body,
        case.repaired.unwrap_or(case.body),
        "{}: repaired body",
        case.peer_test
    );
    // The repaired body is one the provider takes: checked again, no finding is left.
    let again = check_wire(&fixed.body, Format::Chat, &o).expect("reads the repaired body");
    assert!(again.is_empty(), "{}: left {again:?}", case.peer_test);
}

const CASES: &[Case] = &[
    // Peer: "disables thinking when replayed OpenAI tool_calls lacks reasoning_content".
    // The rule (KM-01): with thinking on, every assistant message with `tool_calls` carries
    // `reasoning_content`; the peer turns thinking off for the turn, turnkeeper keeps the
    // request and replays the empty stand-in Moonshot's own CLI sends (KM-07), reported.
    Case {
        peer_test: "disables thinking when replayed OpenAI tool_calls lacks reasoning_content",
        body: r#"{"model":"kimi-k2.5","thinking":{"type":"enabled"},"messages":[{"role":"user","content":"read it"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_123","type":"function","function":{"name":"read","arguments":"{\"path\":\"README.md\"}"}}]},{"role":"tool","tool_call_id":"call_123","content":"readme text"}]}"#,
        findings: &["KM-01:error"],
        repaired: Some(
            r#"{"model":"kimi-k2.5","thinking":{"type":"enabled"},"messages":[{"role":"user","content":"read it"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_123","type":"function","function":{"name":"read","arguments":"{\"path\":\"README.md\"}"}}],"reasoning_content":""},{"role":"tool","tool_call_id":"call_123","content":"readme text"}]}"#,
        ),
    },
    // Peer: "keeps thinking enabled when replayed tool calls include reasoning_content".
    // A valid body: nothing to find, nothing to change.
    Case {
        peer_test: "keeps thinking enabled when replayed tool calls include reasoning_content",
        body: r#"{"model":"kimi-k2.5","thinking":{"type":"enabled"},"messages":[{"role":"user","content":"read it"},{"role":"assistant","content":null,"reasoning_content":"I should inspect the file before answering.","tool_calls":[{"id":"call_123","type":"function","function":{"name":"read","arguments":"{\"path\":\"README.md\"}"}}]},{"role":"tool","tool_call_id":"call_123","content":"readme text"}]}"#,
        findings: &[],
        repaired: None,
    },
    // Peer: "maps thinkingLevel=off to Moonshot thinking.type=disabled". With thinking off no
    // reasoning is replayed, so the same tool turn without `reasoning_content` is valid.
    Case {
        peer_test: "maps thinkingLevel=off to Moonshot thinking.type=disabled",
        body: r#"{"model":"kimi-k2.5","thinking":{"type":"disabled"},"messages":[{"role":"user","content":"read it"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_123","type":"function","function":{"name":"read","arguments":"{\"path\":\"README.md\"}"}}]},{"role":"tool","tool_call_id":"call_123","content":"readme text"}]}"#,
        findings: &[],
        repaired: None,
    },
    // Peer: "forwards thinking.keep=all to kimi-k2.6 requests". The peer only sets the field;
    // under preserved thinking (KM-06, reported under KM-01) every assistant message needs
    // `reasoning_content`, so a replayed plain answer without it is an error the peer misses.
    Case {
        peer_test: "forwards thinking.keep=all to kimi-k2.6 requests",
        body: r#"{"model":"kimi-k2.6","thinking":{"type":"enabled","keep":"all"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"read it"}]}"#,
        findings: &["KM-01:error"],
        repaired: Some(
            r#"{"model":"kimi-k2.6","thinking":{"type":"enabled","keep":"all"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello","reasoning_content":""},{"role":"user","content":"read it"}]}"#,
        ),
    },
    // Peer: "omits thinking.keep on kimi-k2.6 when not configured". Without `keep`, k2.6 ignores
    // old reasoning (KM-02), and a plain answer without reasoning is valid.
    Case {
        peer_test: "omits thinking.keep on kimi-k2.6 when not configured",
        body: r#"{"model":"kimi-k2.6","thinking":{"type":"enabled"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"read it"}]}"#,
        findings: &[],
        repaired: None,
    },
];

#[test]
fn openclaw_moonshot_cases() {
    for case in CASES {
        check(case);
    }
}
