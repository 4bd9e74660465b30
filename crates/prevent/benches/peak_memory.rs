//! Peak heap memory of `check`, `repair` and `repair_into` per workload, as a multiple of the
//! input size (issues 7 and 16; results in BENCHMARKS.md). `repair_into` writes into a buffer
//! that an earlier call already sized, as a long-running agent keeps it, so its `extra` is what a
//! repair holds beyond the body.
//!
//! A plain binary (`harness = false`): `peak_alloc::PeakAlloc` is the global allocator and
//! counts every live heap byte; for each operation the peak is reset, the operation runs on an
//! input already in memory, and the table shows the peak of the bytes it allocated on top
//! (`extra`), and `(input + extra) / input`, the figure the ≤ 1.2 × input target is about.
//! `PeakAlloc` implements `realloc` as alloc + copy + free, so a growing buffer counts old and new
//! at once: the figures are an upper bound of what the system allocator needs.
//!
//! `cargo bench -p turnkeeper-prevent --bench peak_memory` prints the table;
//! `TURNKEEPER_BENCH_LARGE=1` adds the 100 MB workload; `cargo test --benches` runs the small
//! workloads only. With `TURNKEEPER_BENCH_DUMP=DIR` every workload is also written to
//! `DIR/NAME.json`, for timing the CLI on the same bytes.

#[path = "workload/mod.rs"]
mod workload;

use std::hint::black_box;

use peak_alloc::PeakAlloc;
use turnkeeper_model::{FormatHint, read};
use turnkeeper_prevent::{Options, check_str, repair, repair_into};

use workload::{Workload, corpus_thinking, large_enabled, quick_mode, specs};

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// Peak bytes allocated by `f` beyond what was live when it started.
fn peak_of<T>(f: impl FnOnce() -> T) -> usize {
    let before = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let out = f();
    let peak = ALLOC.peak_usage();
    drop(black_box(out));
    peak.saturating_sub(before)
}

fn row(w: &Workload, op: &str, extra: usize) {
    let input = w.json.len();
    println!(
        "| {} | {} | {:.3} | {:.3} | {:.2} |",
        w.name(),
        op,
        input as f64 / 1e6,
        extra as f64 / 1e6,
        (input + extra) as f64 / input as f64,
    );
}

fn main() {
    let thinking = corpus_thinking();
    let opts = Options::default();
    println!("| workload | operation | input MB | extra MB | (input + extra) / input |");
    println!("|---|---|---:|---:|---:|");
    for spec in specs(quick_mode(), large_enabled()) {
        let w = Workload::build(&spec, &thinking);
        if let Ok(dir) = std::env::var("TURNKEEPER_BENCH_DUMP") {
            let path = std::path::Path::new(&dir).join(format!("{}.json", w.name()));
            std::fs::create_dir_all(&dir).expect("creating the dump directory");
            std::fs::write(&path, &w.json).expect("writing the workload");
        }
        let src = w.json.as_str();
        let ignored =
            peak_of(|| serde_json::from_str::<serde::de::IgnoredAny>(src).expect("valid JSON"));
        row(&w, "serde IgnoredAny", ignored);
        let value = peak_of(|| {
            let v: serde_json::Value = serde_json::from_str(src).expect("valid JSON");
            serde_json::to_vec(&v).expect("serialises")
        });
        row(&w, "serde Value round trip", value);
        let read_only = peak_of(|| read(src, FormatHint::Auto).expect("reads"));
        row(&w, "read", read_only);
        let checked = peak_of(|| check_str(src, None, &opts).expect("reads"));
        row(&w, "check (read + rules)", checked);
        let repaired = peak_of(|| {
            let t = read(src, FormatHint::Auto).expect("reads");
            let r = repair(&t, &opts).expect("repairs");
            (r.body.len(), r.report)
        });
        row(&w, "repair (read + repair + output)", repaired);
        let mut buf = String::new();
        let into = |buf: &mut String| {
            let t = read(src, FormatHint::Auto).expect("reads");
            let r = repair_into(&t, &opts, buf).expect("repairs");
            (r.body(src, buf).len(), r.report)
        };
        drop(into(&mut buf));
        let reused = peak_of(|| into(&mut buf));
        row(&w, "repair_into, reused buffer (read + repair)", reused);
    }
}
