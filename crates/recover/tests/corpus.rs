//! Data-driven accuracy over `corpus/errors/*.jsonl`, reported apart for the development part
//! (rules are tuned on it) and the held-out part (never looked at while tuning), per kind.
//!
//! The thresholds below are the contract; every miss is listed in the output
//! (`cargo test -p turnkeeper-recover --test corpus -- --nocapture`, which `cargo xtask verify`
//! runs and echoes).

mod common;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use common::{Item, Split, Tally, pct};
use turnkeeper_recover::{ErrorKind, classify};

/// Overall held-out accuracy must reach this (percent).
const HELD_OUT_OVERALL_MIN: f64 = 95.0;
/// Every kind with at least [`MIN_ITEMS_FOR_KIND_THRESHOLD`] held-out items must reach this.
const HELD_OUT_PER_KIND_MIN: f64 = 85.0;
/// Overall development accuracy must reach this (percent).
const DEVELOPMENT_OVERALL_MIN: f64 = 95.0;
/// Kinds with fewer held-out items than this are reported but not held to the per-kind floor.
const MIN_ITEMS_FOR_KIND_THRESHOLD: usize = 8;

fn tallies(items: &[Item]) -> BTreeMap<Split, Tally> {
    let mut out: BTreeMap<Split, Tally> = BTreeMap::new();
    for item in items {
        let d = classify(item.status, &item.body);
        out.entry(item.split()).or_default().add(item, d.kind);
    }
    out
}

fn print_table(tallies: &BTreeMap<Split, Tally>) {
    let empty = Tally::default();
    let dev = tallies.get(&Split::Development).unwrap_or(&empty);
    let held = tallies.get(&Split::HeldOut).unwrap_or(&empty);
    let kinds: BTreeSet<ErrorKind> = dev
        .per_kind
        .keys()
        .chain(held.per_kind.keys())
        .copied()
        .collect();
    println!(
        "{:<28} {:>13} {:>8} {:>13} {:>8}",
        "kind", "development", "acc", "held-out", "acc"
    );
    let cell = |t: &Tally, k: ErrorKind| t.per_kind.get(&k).copied().unwrap_or((0, 0));
    for k in kinds {
        let (dh, dn) = cell(dev, k);
        let (hh, hn) = cell(held, k);
        println!(
            "{:<28} {:>13} {:>7.1}% {:>13} {:>7.1}%",
            k.as_str(),
            format!("{dh}/{dn}"),
            pct(dh, dn),
            format!("{hh}/{hn}"),
            pct(hh, hn)
        );
    }
    let (dh, dn) = dev.overall();
    let (hh, hn) = held.overall();
    println!(
        "{:<28} {:>13} {:>7.1}% {:>13} {:>7.1}%",
        "overall",
        format!("{dh}/{dn}"),
        pct(dh, dn),
        format!("{hh}/{hn}"),
        pct(hh, hn)
    );
    for (split, t) in [(Split::HeldOut, held), (Split::Development, dev)] {
        for m in &t.misses {
            println!("miss [{}] {m}", split.label());
        }
    }
}

#[test]
fn corpus_accuracy() {
    let items = common::corpus();
    let threads: HashSet<String> = items.iter().map(Item::thread).collect();
    println!(
        "corpus: {} items from {} threads ({} held out)",
        items.len(),
        threads.len(),
        items.iter().filter(|i| i.split() == Split::HeldOut).count()
    );
    let t = tallies(&items);
    print_table(&t);

    let empty = Tally::default();
    let held = t.get(&Split::HeldOut).unwrap_or(&empty);
    let dev = t.get(&Split::Development).unwrap_or(&empty);
    let (hh, hn) = held.overall();
    assert!(
        pct(hh, hn) >= HELD_OUT_OVERALL_MIN,
        "held-out accuracy {:.1}% < {HELD_OUT_OVERALL_MIN}%",
        pct(hh, hn)
    );
    for (kind, (h, n)) in &held.per_kind {
        if *n >= MIN_ITEMS_FOR_KIND_THRESHOLD {
            assert!(
                pct(*h, *n) >= HELD_OUT_PER_KIND_MIN,
                "held-out {kind}: {:.1}% < {HELD_OUT_PER_KIND_MIN}%",
                pct(*h, *n)
            );
        }
    }
    let (dh, dn) = dev.overall();
    assert!(
        pct(dh, dn) >= DEVELOPMENT_OVERALL_MIN,
        "development accuracy {:.1}% < {DEVELOPMENT_OVERALL_MIN}%",
        pct(dh, dn)
    );
}

#[test]
fn no_hard_error_is_classified_retryable() {
    // A hard error (any kind that sending the same bytes again cannot fix) must never be called
    // retryable, in either part of the corpus, whatever its status: an agent would retry it until
    // it gives up.
    let mut wrong = Vec::new();
    for item in common::corpus() {
        if item.kind.is_retryable() {
            continue;
        }
        let d = classify(item.status, &item.body);
        if d.retryable {
            wrong.push(format!(
                "{} ({}): {} called {}",
                item.id, item.source, item.kind, d.kind
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "hard errors called retryable:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn corpus_items_are_well_formed() {
    let items = common::corpus();
    assert!(items.len() >= 400, "corpus has only {} items", items.len());
    let mut ids = HashSet::new();
    let mut bodies = HashSet::new();
    let mut threads = HashSet::new();
    for item in &items {
        assert!(ids.insert(item.id.clone()), "duplicate id {}", item.id);
        assert!(!item.body.trim().is_empty(), "{} has no body", item.id);
        let thread = item.thread();
        // The same text pasted in two threads is two observations; twice from one thread is one.
        assert!(
            bodies.insert((thread.clone(), item.body.clone())),
            "duplicate body in {} ({thread})",
            item.id
        );
        let ok = thread
            .split_once('#')
            .is_some_and(|(repo, n)| repo.contains('/') && !n.is_empty());
        assert!(ok, "{}: source {:?} names no thread", item.id, item.source);
        threads.insert(thread);
    }
    assert!(
        threads.len() >= 120,
        "only {} source threads",
        threads.len()
    );
}

#[test]
fn the_split_is_by_thread_and_about_a_third() {
    let items = common::corpus();
    let mut by_thread: BTreeMap<String, Split> = BTreeMap::new();
    for item in &items {
        let s = item.split();
        let prev = by_thread.insert(item.thread(), s);
        assert!(prev.is_none_or(|p| p == s), "{} split apart", item.thread());
    }
    // The same thread written as a URL and as `owner/repo#N` is one thread.
    assert_eq!(
        common::thread_key("https://github.com/Anthropics/claude-code/issues/5989#issuecomment-1"),
        common::thread_key("anthropics/claude-code#5989")
    );
    let held = by_thread.values().filter(|s| **s == Split::HeldOut).count();
    let share = held as f64 / by_thread.len() as f64;
    assert!((0.25..=0.42).contains(&share), "held-out share {share:.2}");
}
