//! Replays files through one fuzz body outside libFuzzer and prints executions per second: the
//! way to see what a target's input costs (run it under `valgrind --tool=callgrind`, whose
//! instruction counts do not depend on the machine's load, or `perf record`).
//!
//! ```sh
//! cargo run --release -p turnkeeper-testkit --example fuzz_replay -- classify fuzz/corpus/classify
//! cargo run --release -p turnkeeper-testkit --example fuzz_replay -- --full classify corpus/errors
//! ```
//!
//! Arguments: `[--full] [--repeat N] TARGET PATH...`, each path a file or a directory (read
//! recursively). Without `--full` the body runs as the libFuzzer entry point calls it (sampled
//! cross-checks); with it, as `cargo test` does.

use std::path::PathBuf;
use std::time::Instant;

use turnkeeper_testkit::corpus::files_under;
use turnkeeper_testkit::fuzz::{Depth, TARGETS};

fn main() {
    let mut depth = Depth::Sampled;
    let mut repeat = 1usize;
    let mut rest = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--full" => depth = Depth::Full,
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1),
            _ => rest.push(a),
        }
    }
    let Some((name, paths)) = rest.split_first() else {
        eprintln!("usage: fuzz_replay [--full] [--repeat N] TARGET PATH...");
        std::process::exit(2);
    };
    let Some((_, body)) = TARGETS.iter().find(|(n, _)| n == name) else {
        let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
        eprintln!("no target `{name}` (targets: {})", names.join(", "));
        std::process::exit(2);
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for p in paths {
        let p = PathBuf::from(p);
        if p.is_dir() {
            files.extend(files_under(&p));
        } else {
            files.push(p);
        }
    }
    let inputs: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    let bytes: usize = inputs.iter().map(Vec::len).sum();
    let start = Instant::now();
    for _ in 0..repeat {
        for input in &inputs {
            body(input, depth);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let runs = inputs.len() * repeat;
    println!(
        "{name} ({depth:?}): {runs} runs over {} files ({bytes} bytes) in {secs:.2} s: {:.0} exec/s",
        inputs.len(),
        runs as f64 / secs.max(1e-9)
    );
}
