//! A driver for instruction-count profiles (BENCHMARKS.md): runs each operation of the
//! `transcript` bench once, each in its own never-inlined function, so that
//! `valgrind --tool=callgrind --toggle-collect='profile_ops::op_*'` counts each one alone.
//!
//! ```sh
//! cargo build --profile bench -p turnkeeper-prevent --example profile_ops
//! valgrind --tool=callgrind --toggle-collect='profile_ops::op_*' \
//!     target/release/examples/profile_ops all m10000_10MB
//! callgrind_annotate --inclusive=yes callgrind.out.* | grep 'profile_ops::op_'
//! ```
//!
//! `repair_into` is counted with a buffer that an earlier, uncounted `repair_into` of the same
//! body already sized, as a long-running agent reuses it.
//!
//! `profile_ops rules m10000_10MB 200` instead times 200 runs of the rule pipeline (for `perf`);
//! `profile_ops opencode m10000_10MB 20` times the workload as an OpenCode export: both
//! baselines on its bytes, then `check` of it.

#![allow(missing_docs)]

#[path = "../benches/workload/mod.rs"]
mod workload;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use turnkeeper_model::{FormatHint, Transcript, read};
use turnkeeper_prevent::{Options, check, repair, repair_into};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(what), Some(name)) = (args.get(1), args.get(2)) else {
        eprintln!(
            "usage: profile_ops all|read|rules|check|repair|repair_into|opencode WORKLOAD [ITERATIONS]"
        );
        return ExitCode::from(2);
    };
    let iters: u32 = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(1).max(1);
    let thinking = workload::corpus_thinking();
    let Some(spec) = workload::specs(false, true)
        .into_iter()
        .find(|s| &s.name() == name)
    else {
        eprintln!("no workload named {name}");
        return ExitCode::from(2);
    };
    let w = workload::Workload::build(&spec, &thinking);
    let src = w.json.as_str();
    let opts = Options::default();
    let opencode = if what == "opencode" {
        workload::to_opencode_export(src, spec.damaged)
    } else {
        String::new()
    };
    let Ok(t) = read(src, FormatHint::Auto) else {
        eprintln!("the workload does not read");
        return ExitCode::FAILURE;
    };
    let mut buf = String::new();
    if what == "all" || what == "repair_into" {
        warm_buffer(src, &opts, &mut buf);
    }
    let start = Instant::now();
    for _ in 0..iters {
        match what.as_str() {
            "all" => {
                op_ignored_any(src);
                op_value_roundtrip(src);
                op_read(src);
                op_check(src, &opts);
                op_rules(&t, &opts);
                op_repair(src, &opts);
                op_repair_into(src, &opts, &mut buf);
            }
            "read" => op_read(src),
            "opencode" => {
                // Both baselines on the export's own bytes, then `check` of the export.
                op_ignored_any(&opencode);
                op_value_roundtrip(&opencode);
                op_check(&opencode, &opts);
            }
            "rules" => op_rules(&t, &opts),
            "check" => op_check(src, &opts),
            "repair" => op_repair(src, &opts),
            "repair_into" => op_repair_into(src, &opts, &mut buf),
            other => {
                eprintln!("unknown operation {other}");
                return ExitCode::from(2);
            }
        }
    }
    eprintln!("{what} {name}: {:?} per iteration", start.elapsed() / iters);
    ExitCode::SUCCESS
}

#[inline(never)]
fn op_ignored_any(src: &str) {
    let _ = black_box(serde_json::from_slice::<serde::de::IgnoredAny>(
        src.as_bytes(),
    ));
}

#[inline(never)]
fn op_value_roundtrip(src: &str) {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(src.as_bytes()) {
        let _ = black_box(serde_json::to_vec(&v));
    }
}

#[inline(never)]
fn op_read(src: &str) {
    let _ = black_box(read(src, FormatHint::Auto));
}

#[inline(never)]
fn op_check(src: &str, opts: &Options<'_>) {
    let _ = black_box(turnkeeper_prevent::check_str(src, None, opts));
}

#[inline(never)]
fn op_rules(t: &Transcript<'_>, opts: &Options<'_>) {
    black_box(check(t, opts));
}

#[inline(never)]
fn op_repair(src: &str, opts: &Options<'_>) {
    if let Ok(t) = read(src, FormatHint::Auto) {
        let _ = black_box(repair(&t, opts).map(|r| r.body.len()));
    }
}

#[inline(never)]
fn op_repair_into(src: &str, opts: &Options<'_>, buf: &mut String) {
    if let Ok(t) = read(src, FormatHint::Auto) {
        let _ = black_box(repair_into(&t, opts, buf).map(|r| r.body(src, buf).len()));
    }
}

/// Sizes `buf` as a reused buffer would be: not counted (its name is not `op_*`). It must not
/// be the same machine code as `op_repair_into`, or the two are folded into one function under
/// one of the names: it reserves the input's size on top.
#[inline(never)]
fn warm_buffer(src: &str, opts: &Options<'_>, buf: &mut String) {
    if let Ok(t) = read(src, FormatHint::Auto) {
        let _ = black_box(repair_into(&t, opts, buf).map(|r| r.body(src, buf).len()));
    }
    buf.reserve(src.len());
}
