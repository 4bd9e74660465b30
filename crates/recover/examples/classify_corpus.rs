//! Classify every error of `corpus/errors/` a fixed number of times, for instruction counts that
//! a contended machine cannot blur:
//!
//! ```sh
//! cargo build --release -p turnkeeper-recover --example classify_corpus
//! valgrind --tool=callgrind target/release/examples/classify_corpus 20
//! ```
//!
//! Prints how many errors were classified and how many came out retryable (so the work cannot be
//! optimised away).

use std::path::PathBuf;

use turnkeeper_recover::classify;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/errors");
    let mut items = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("cannot read {}", dir.display());
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let status = v["status"].as_u64().and_then(|s| u16::try_from(s).ok());
            if let Some(body) = v["body"].as_str() {
                items.push((status, body.to_owned()));
            }
        }
    }
    let mut retryable = 0usize;
    for _ in 0..rounds {
        for (status, body) in &items {
            retryable += usize::from(classify(*status, body).retryable);
        }
    }
    println!(
        "{} classifications, {retryable} retryable",
        items.len() * rounds
    );
}
