//! Data-driven accuracy over `corpus/errors/*.jsonl`: every real error must classify as labelled.
//!
//! Prints accuracy per kind; asserts at least 98% overall and no kind below 90%.

mod common;

use std::collections::BTreeMap;

use turnkeeper_recover::{ErrorKind, classify};

#[test]
fn corpus_accuracy() {
    let items = common::corpus();
    assert!(items.len() >= 150, "corpus has only {} items", items.len());
    let mut per_kind: BTreeMap<ErrorKind, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for item in &items {
        let d = classify(item.status, &item.body);
        let entry = per_kind.entry(item.kind).or_default();
        entry.1 += 1;
        if d.kind == item.kind {
            entry.0 += 1;
        } else {
            misses.push(format!(
                "{}: expected {}, got {}",
                item.id, item.kind, d.kind
            ));
        }
    }
    let total: usize = per_kind.values().map(|(_, n)| n).sum();
    let hits: usize = per_kind.values().map(|(h, _)| h).sum();
    println!("{:<30} {:>5} {:>5} {:>8}", "kind", "ok", "n", "acc");
    for (kind, (h, n)) in &per_kind {
        println!(
            "{:<30} {h:>5} {n:>5} {:>7.1}%",
            kind.as_str(),
            100.0 * *h as f64 / *n as f64
        );
    }
    let overall = 100.0 * hits as f64 / total as f64;
    println!("{:<30} {hits:>5} {total:>5} {overall:>7.1}%", "overall");
    for m in &misses {
        println!("miss {m}");
    }
    assert!(overall >= 98.0, "overall accuracy {overall:.1}% < 98%");
    for (kind, (h, n)) in &per_kind {
        let acc = 100.0 * *h as f64 / *n as f64;
        assert!(acc >= 90.0, "{kind}: accuracy {acc:.1}% < 90%");
    }
}

#[test]
fn corpus_items_are_well_formed() {
    let items = common::corpus();
    let mut ids = std::collections::HashSet::new();
    for item in &items {
        assert!(ids.insert(item.id.clone()), "duplicate id {}", item.id);
        assert!(!item.source.is_empty(), "{} has no source", item.id);
        assert!(!item.body.trim().is_empty(), "{} has no body", item.id);
    }
}
