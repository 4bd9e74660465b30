//! Where `read` spends its time: the bare scanner (`json::validate`, which skips every value)
//! against serde_json's `IgnoredAny` (from bytes and from `&str`), and `read` (scan + the
//! transcript view), on the valid workloads of the prevent benches (issue 7, BENCHMARKS.md).
//!
//! The workloads come from `crates/prevent/benches/workload/mod.rs`, shared by `#[path]`.
//! `TURNKEEPER_BENCH_LARGE=1` adds the 100 MB workload; `cargo test --benches` runs the small
//! ones once.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

#[path = "../../prevent/benches/workload/mod.rs"]
mod workload;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use turnkeeper_model::{FormatHint, json, read};

use workload::{Workload, corpus_thinking, large_enabled, quick_mode, specs};

fn bench(c: &mut Criterion) {
    let thinking = corpus_thinking();
    for spec in specs(quick_mode(), large_enabled()) {
        if spec.damaged {
            continue;
        }
        let w = Workload::build(&spec, &thinking);
        let src = w.json.as_str();
        let bytes = src.as_bytes();
        let mut g = workload::group(c, format!("scan/{}", w.name()), bytes.len());
        workload::baselines(&mut g, bytes, false);
        g.bench_function("ignored_any_str", |b| {
            b.iter(|| serde_json::from_str::<serde::de::IgnoredAny>(black_box(src)).expect("valid"))
        });
        g.bench_function("utf8", |b| {
            b.iter(|| std::str::from_utf8(black_box(bytes)).map(str::len))
        });
        g.bench_function("validate", |b| {
            b.iter(|| json::validate(black_box(src)).expect("valid"))
        });
        g.bench_function("read", |b| {
            b.iter(|| read(black_box(src), FormatHint::Auto).expect("reads"))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
