//! Throughput of `check` and of the doctor's repair on OpenCode input: the `transcript` bench's
//! sessions as `opencode export` writes them (`workload::to_opencode_export`), against the same
//! two baselines on the same bytes (issue 7; results in BENCHMARKS.md).
//!
//! One criterion group per workload, `opencode/<workload>`, each with:
//! - `ignored_any` and `value_roundtrip`, as in the `transcript` bench;
//! - `read`: `turnkeeper::read` of the export (the neutral view, spans only);
//! - `check`: `turnkeeper::check_str`, through the public API: the export is read, loaded as an
//!   OpenCode session, converted to the request OpenCode would send, and that request checked,
//!   with findings mapped back to export paths;
//! - `repair`: what `turnkeeper opencode repair` does before it writes: load the session,
//!   `doctor::plan` the part-level repairs, `doctor::simulate` them, and check the result.
//!
//! `TURNKEEPER_BENCH_LARGE=1` adds the 100 MB workload; criterion's test mode
//! (`cargo test --benches`) builds only the small ones and runs each bench once.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

#[path = "../../prevent/benches/workload/mod.rs"]
mod workload;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use turnkeeper::doctor::{self, PlanOptions};
use turnkeeper::opencode::load_export;
use turnkeeper::{FormatHint, Options, Severity, check_str, read};

use workload::{Workload, corpus_thinking, large_enabled, quick_mode, specs};

/// The doctor's whole in-memory repair: load, plan, simulate, check what it would write.
/// Returns the number of repairs and of error-level findings left.
fn doctor_repair(export: &str, opts: &Options<'_>) -> (usize, usize) {
    let session = load_export(export, "bench").expect("the export loads");
    let plan = doctor::plan(&session, &PlanOptions::default());
    let after = doctor::simulate(&session, &plan);
    let checked = doctor::check_stored(&after, opts).expect("the repaired session converts");
    let errors = checked
        .findings
        .iter()
        .filter(|f| f.finding.severity == Severity::Error)
        .count();
    (plan.repairs.len(), errors)
}

/// The export of each workload, checked to be what it claims: a valid one has no error-level
/// finding and nothing to repair; a damaged one has findings, and the doctor plans repairs.
fn exports() -> Vec<(String, String)> {
    let thinking = corpus_thinking();
    let opts = Options::default();
    specs(quick_mode(), large_enabled())
        .iter()
        .map(|spec| {
            let w = Workload::build(spec, &thinking);
            let export = workload::to_opencode_export(&w.json, spec.damaged);
            // `TURNKEEPER_BENCH_DUMP=DIR`: each export is also written there, for the process
            // bench and profilers (`DIR/<workload>.export.json`).
            if let Ok(dir) = std::env::var("TURNKEEPER_BENCH_DUMP") {
                let path = std::path::Path::new(&dir).join(format!("{}.export.json", w.name()));
                std::fs::create_dir_all(&dir).expect("creating the dump directory");
                std::fs::write(&path, &export).expect("writing the export");
            }
            let errors = check_str(&export, &opts)
                .expect("the export reads")
                .into_iter()
                .filter(|f| f.severity == Severity::Error)
                .count();
            let (repairs, left) = doctor_repair(&export, &opts);
            assert_eq!(
                left,
                0,
                "{}: errors left after the doctor's repair",
                w.name()
            );
            if spec.damaged {
                assert!(errors > 0, "{}: no finding", w.name());
                assert!(repairs > 0, "{}: nothing to repair", w.name());
            } else {
                assert_eq!((errors, repairs), (0, 0), "{}", w.name());
            }
            eprintln!(
                "workload {} (OpenCode export): {} bytes, {} error findings, {} repairs",
                w.name(),
                export.len(),
                errors,
                repairs
            );
            (w.name(), export)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let opts = Options::default();
    for (name, export) in exports() {
        let src = export.as_str();
        let bytes = src.as_bytes();
        let mut g = workload::group(c, format!("opencode/{name}"), bytes.len());
        workload::baselines(&mut g, bytes, true);
        g.bench_function("read", |b| {
            b.iter(|| read(black_box(src), FormatHint::Auto).expect("reads"))
        });
        g.bench_function("check", |b| {
            b.iter(|| check_str(black_box(src), &opts).expect("reads"))
        });
        g.bench_function("repair", |b| {
            b.iter(|| doctor_repair(black_box(src), &opts))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
