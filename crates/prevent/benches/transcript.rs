//! Throughput of `check` and `repair` on realistic transcripts, against two baselines, on the
//! same bytes (issue 7; results and targets in BENCHMARKS.md).
//!
//! One criterion group per workload (see `workload/mod.rs`), each with:
//! - `ignored_any`: `serde_json::from_slice::<IgnoredAny>`, the cost of reading the JSON at all;
//! - `value_roundtrip`: parse into `serde_json::Value` and `serde_json::to_vec` it back, what a
//!   typical hand-written fixer does;
//! - `read`: `turnkeeper_model::read` alone;
//! - `check`: `turnkeeper_prevent::check_str`, read + every rule, through the public API;
//! - `rules`: the rule pipeline alone (`check(&t, &opts)`) on an already-read transcript, with
//!   throughput in messages (criterion's elem/s; µs per message = 1e6 / elem/s);
//! - `repair`: read + `repair` + the output body;
//! - `repair_into`: read + `repair_into` into one buffer kept across iterations (a long-running
//!   agent's reuse: no fresh body-sized allocation per call).
//!
//! Throughput is in bytes of input (criterion prints MiB/s). `TURNKEEPER_BENCH_LARGE=1` adds the
//! 100 MB workload. Under
//! `cargo test --benches` (criterion's test mode) only the small workloads are built and each
//! bench runs once.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

#[path = "workload/mod.rs"]
mod workload;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use turnkeeper_model::{FormatHint, read};
use turnkeeper_prevent::{Options, Severity, check, check_str, repair, repair_into};

use workload::{Workload, corpus_thinking, large_enabled, quick_mode, specs};

/// Builds the workloads and checks that each is what it claims: a valid one has no error-level
/// finding; a damaged one has some, and `repair` leaves none.
fn workloads() -> Vec<Workload> {
    let thinking = corpus_thinking();
    let opts = Options::default();
    specs(quick_mode(), large_enabled())
        .iter()
        .map(|spec| {
            let w = Workload::build(spec, &thinking);
            let t = read(&w.json, FormatHint::Auto).expect("workload reads");
            let errors = check(&t, &opts)
                .into_iter()
                .filter(|f| f.severity == Severity::Error)
                .collect::<Vec<_>>();
            if spec.damaged {
                assert!(!errors.is_empty(), "{}: no finding", w.name());
                let fixed = repair(&t, &opts).expect("repair succeeds");
                assert!(
                    !fixed.report.has_errors(),
                    "{}: errors left after repair: {:?}",
                    w.name(),
                    fixed.report.findings_left
                );
            } else {
                assert!(errors.is_empty(), "{}: {errors:?}", w.name());
            }
            eprintln!(
                "workload {}: {} bytes, {} messages, {} damaged",
                w.name(),
                w.json.len(),
                w.messages,
                w.damaged_messages
            );
            w
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let opts = Options::default();
    for w in workloads() {
        let src = w.json.as_str();
        let bytes = src.as_bytes();
        let mut g = workload::group(c, format!("transcript/{}", w.name()), bytes.len());
        workload::baselines(&mut g, bytes, true);
        g.bench_function("read", |b| {
            b.iter(|| read(black_box(src), FormatHint::Auto).expect("reads"))
        });
        g.bench_function("check", |b| {
            b.iter(|| check_str(black_box(src), None, &opts).expect("reads"))
        });
        let t = read(src, FormatHint::Auto).expect("reads");
        g.throughput(Throughput::Elements(w.messages as u64));
        g.bench_function("rules", |b| b.iter(|| check(black_box(&t), &opts)));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function("repair", |b| {
            b.iter(|| {
                let t = read(black_box(src), FormatHint::Auto).expect("reads");
                let r = repair(&t, &opts).expect("repairs");
                black_box(r.body.len());
                r.report
            })
        });
        let mut buf = String::new();
        g.bench_function("repair_into", |b| {
            b.iter(|| {
                let t = read(black_box(src), FormatHint::Auto).expect("reads");
                let r = repair_into(&t, &opts, &mut buf).expect("repairs");
                black_box(r.body(src, &buf).len());
                r.report
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
