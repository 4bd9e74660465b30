//! Throughput of `check_wire` and `repair_wire` on 10 MB OpenAI Chat Completions and OpenAI
//! Responses bodies, against serde_json reading the same bytes into `IgnoredAny` (issue 21 item
//! 8; results in BENCHMARKS.md, "Wire families").
//!
//! The bodies are agent sessions of the shape real clients send: a Kimi thinking session on
//! Chat (each step an assistant message with `reasoning_content` of about 1.5 KB and one or two
//! `tool_calls`, then a `tool` message per call with about 30 KB of compiler output, JSON-escaped,
//! some non-ASCII), and a Codex-style session on Responses (`reasoning` items with a summary and
//! about 3 KB of `encrypted_content`, `function_call` and `function_call_output` items with the
//! same outputs, an assistant `message` closing each turn). Both are valid for their target, so
//! `repair_wire` hands the input back; the bench checks that first.
//!
//! Per group: `ignored_any` (serde_json reading the JSON, keeping nothing), `read` (the
//! family's reader alone), `check` (`check_wire`: read and every rule) and `repair`
//! (`repair_wire`). Under `cargo test --benches` (criterion's test mode) the bodies are 200 KB
//! and each bench runs once.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use turnkeeper_model::Format;
use turnkeeper_prevent::wire::{check_wire, repair_wire};
use turnkeeper_prevent::{Options, Severity};

/// A JSON string literal of `s`.
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// About `len` bytes of tool output: compiler diagnostics with quotes, backslashes, tabs and
/// some non-ASCII, so the string scan meets escapes all along.
fn tool_output(step: usize, len: usize) -> String {
    let mut s = String::with_capacity(len + 256);
    let mut i = 0;
    while s.len() < len {
        i += 1;
        let _ = write!(
            s,
            "error[E0308]: mismatched types\n --> src\\parser\\mod.rs:{step}:{i}\n   |\n{i:>4} |     let n: u32 = \"valeur — é\";\n   |\texpected `u32`, found `&str`\n"
        );
    }
    s
}

/// Reasoning text of about `len` bytes.
fn reasoning(step: usize, len: usize) -> String {
    let mut s = String::with_capacity(len + 128);
    while s.len() < len {
        let _ = write!(
            s,
            "Step {step}: the test fails because the parser returns a \"str\" where a u32 is expected; read the file, then patch it. "
        );
    }
    s
}

/// An opaque blob of about `len` base64 characters (encrypted reasoning).
fn blob(step: usize, len: usize) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = step as u64 * 2_654_435_761 + 1;
    let mut s = String::from("gAAAAA");
    while s.len() < len {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        s.push(B64[(x >> 58) as usize] as char);
    }
    s
}

/// A Kimi thinking session on Chat Completions of about `target` bytes.
fn chat_body(target: usize) -> String {
    let mut m = Vec::new();
    m.push(r#"{"role":"system","content":"You are a careful coding agent."}"#.to_owned());
    let mut size = 0;
    let mut step = 0;
    while size < target {
        step += 1;
        let mut turn = format!(
            r#"{{"role":"user","content":{}}}"#,
            lit(&format!("Fix the failing test number {step}."))
        );
        for k in 0..2 {
            let calls = if (step + k) % 3 == 0 { 2 } else { 1 };
            let mut tc = Vec::new();
            let mut answers = Vec::new();
            for c in 0..calls {
                let id = format!("functions.read_file:{}", step * 10 + k * 2 + c);
                tc.push(format!(
                    r#"{{"id":{},"type":"function","function":{{"name":"read_file","arguments":{}}}}}"#,
                    lit(&id),
                    lit(r#"{"path":"src/parser/mod.rs"}"#)
                ));
                answers.push(format!(
                    r#"{{"role":"tool","tool_call_id":{},"content":{}}}"#,
                    lit(&id),
                    lit(&tool_output(step, 30_000))
                ));
            }
            let _ = write!(
                turn,
                r#",{{"role":"assistant","content":"","reasoning_content":{},"tool_calls":[{}]}},{}"#,
                lit(&reasoning(step, 1_500)),
                tc.join(","),
                answers.join(",")
            );
        }
        let _ = write!(
            turn,
            r#",{{"role":"assistant","content":{},"reasoning_content":{}}}"#,
            lit("Fixed: the parser now returns a u32."),
            lit(&reasoning(step, 600))
        );
        size += turn.len();
        m.push(turn);
    }
    format!(
        r#"{{"model":"kimi-k2-thinking","messages":[{}],"tools":[{{"type":"function","function":{{"name":"read_file","parameters":{{"type":"object"}}}}}}],"stream":true}}"#,
        m.join(",")
    )
}

/// A Codex-style session on Responses of about `target` bytes.
fn responses_body(target: usize) -> String {
    let mut items = Vec::new();
    items.push(r#"{"role":"developer","content":"You are a careful coding agent."}"#.to_owned());
    let mut size = 0;
    let mut step = 0;
    while size < target {
        step += 1;
        let mut turn = format!(
            r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":{}}}]}}"#,
            lit(&format!("Fix the failing test number {step}."))
        );
        for k in 0..2 {
            let call = format!("call_{step:06}{k}");
            let _ = write!(
                turn,
                r#",{{"type":"reasoning","id":"rs_{step:06}{k}","summary":[{{"type":"summary_text","text":{}}}],"encrypted_content":{}}},{{"type":"function_call","id":"fc_{step:06}{k}","call_id":{},"name":"read_file","arguments":{}}},{{"type":"function_call_output","call_id":{},"output":{}}}"#,
                lit(&reasoning(step, 300)),
                lit(&blob(step * 2 + k, 3_000)),
                lit(&call),
                lit(r#"{"path":"src/parser/mod.rs"}"#),
                lit(&call),
                lit(&tool_output(step, 30_000))
            );
        }
        let _ = write!(
            turn,
            r#",{{"type":"reasoning","id":"rs_{step:06}f","summary":[],"encrypted_content":{}}},{{"type":"message","id":"msg_{step:06}","role":"assistant","content":[{{"type":"output_text","text":{},"annotations":[]}}]}}"#,
            lit(&blob(step * 2 + 7, 3_000)),
            lit("Fixed: the parser now returns a u32.")
        );
        size += turn.len();
        items.push(turn);
    }
    format!(
        r#"{{"model":"gpt-5.1-codex","input":[{}],"store":false,"include":["reasoning.encrypted_content"],"reasoning":{{"effort":"medium","summary":"auto"}},"tools":[{{"type":"function","name":"read_file","parameters":{{"type":"object"}}}}]}}"#,
        items.join(",")
    )
}

/// True in criterion's test mode (`cargo test --benches`) or without `--bench`.
fn quick_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench")
}

fn bench(c: &mut Criterion) {
    let (size, label) = if quick_mode() {
        (200_000, "200KB")
    } else {
        (10_000_000, "10MB")
    };
    let opts = Options::default();
    for (name, format, body) in [
        (format!("chat_kimi_{label}"), Format::Chat, chat_body(size)),
        (
            format!("responses_codex_{label}"),
            Format::Responses,
            responses_body(size),
        ),
    ] {
        let src = body.as_str();
        // The workload is what it claims: valid JSON, no error finding, repaired to itself.
        serde_json::from_str::<serde::de::IgnoredAny>(src).expect("the workload is JSON");
        let found = check_wire(src, format, &opts).expect("the workload reads");
        let errors: Vec<_> = found
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let r = repair_wire(src, format, &opts).expect("repair");
        assert!(
            r.report.changes.is_empty() && r.body == src,
            "{name} changed"
        );
        eprintln!("workload {name}: {} bytes", src.len());

        let mut g = c.benchmark_group(format!("wire/{name}"));
        if src.len() >= 5_000_000 {
            g.sample_size(20);
        }
        g.throughput(criterion::Throughput::Bytes(src.len() as u64));
        g.bench_function("ignored_any", |b| {
            b.iter(|| serde_json::from_str::<serde::de::IgnoredAny>(black_box(src)).expect("valid"))
        });
        g.bench_function("read", |b| {
            b.iter(|| match format {
                Format::Chat => turnkeeper_model::wire::chat::read(black_box(src))
                    .map(|b| b.messages.len())
                    .expect("reads"),
                _ => turnkeeper_model::wire::responses::read(black_box(src))
                    .map(|b| b.items.len())
                    .expect("reads"),
            })
        });
        g.bench_function("check", |b| {
            b.iter(|| check_wire(black_box(src), format, &opts).expect("reads"))
        });
        g.bench_function("repair", |b| {
            b.iter(|| repair_wire(black_box(src), format, &opts).expect("repairs"))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
