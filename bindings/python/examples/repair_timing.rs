//! The Rust side of `bench/bench_repair.py`: times `turnkeeper::repair_str` on each body file
//! given, and prints one JSON line per file (`{"file", "bytes", "runs", "median_ns", "min_ns"}`).
//!
//! `cargo run --release -p turnkeeper-python --example repair_timing -- RUNS FILE...`

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().ok_or("RUNS FILE...")?.parse()?;
    let opts = turnkeeper::Options::default();
    for file in args {
        let body = std::fs::read_to_string(&file)?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            let fixed = turnkeeper::repair_str(&body, &opts)?;
            // What the binding hands back: the report's fields as JSON values, the body owned.
            let report = serde_json::json!({
                "changes": fixed.report.changes,
                "request_changes": fixed.report.request_changes,
                "findings_left": fixed.report.findings_left,
            });
            std::hint::black_box((&fixed.body, report));
            times.push(start.elapsed().as_nanos());
        }
        times.sort_unstable();
        println!(
            "{}",
            serde_json::json!({
                "file": file,
                "bytes": body.len(),
                "runs": runs,
                "median_ns": times[runs / 2],
                "min_ns": times[0],
            })
        );
    }
    Ok(())
}
