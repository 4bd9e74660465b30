//! Throughput of `classify` over the real-error corpus (errors per second).
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use turnkeeper_recover::classify;

fn corpus() -> Vec<(Option<u16>, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/errors");
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
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
                out.push((status, body.to_owned()));
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let items = corpus();
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(items.len() as u64));
    group.bench_function("corpus", |b| {
        b.iter(|| {
            for (status, body) in &items {
                black_box(classify(*status, black_box(body)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
