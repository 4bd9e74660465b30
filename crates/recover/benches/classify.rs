//! Throughput of `classify` over the real-error corpus (errors per second), and the cost of one
//! `recover` call (classify, plan, repair, re-check) on a damaged request.
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use turnkeeper_recover::{Attempts, classify, recover};

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

    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let Ok(request) = std::fs::read_to_string(root.join("corpus/damaged/an08_aborted_turn.json"))
    else {
        return;
    };
    let error = "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_014azqsWLU8Djh6RhmBGRC2u.";
    let mut group = c.benchmark_group("recover");
    group.throughput(Throughput::Bytes(request.len() as u64));
    group.bench_function("an08_aborted_turn", |b| {
        b.iter(|| {
            let d = classify(Some(400), black_box(error));
            let mut attempts = Attempts::new();
            black_box(recover(black_box(&request), &d, &mut attempts, None).ok())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
