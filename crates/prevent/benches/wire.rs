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

#[path = "wire_workload.rs"]
mod wire_workload;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use turnkeeper_model::Format;
use turnkeeper_prevent::wire::{check_wire, repair_wire};
use turnkeeper_prevent::{Options, Severity};
use wire_workload::{chat_body, responses_body};

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
