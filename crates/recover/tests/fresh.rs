//! Issue 22, "measured on what you did not tune on": accuracy over `corpus/errors/fresh.jsonl`,
//! a set collected from public threads (and peers' test suites) that no other file of the corpus
//! and no third-party labelled set had drawn on.
//!
//! Every item carries its part (`development` or `held-out`), computed by the corpus's own rule
//! (FNV-1a over `SPLIT_SEED` and the thread key, held out when 0 mod 3; a peer case's key is
//! `owner/repo:path`) and written into the file **before** the classifier was run on any of it.
//! The test checks the written part against the computed one, so nobody can move an item.
//!
//! Rules may be written from development items only. Held-out misses are counted, never listed,
//! unless `TURNKEEPER_SHOW_HELD_OUT=1` (for the end of a round of work, never while writing rules).
//!
//! `cargo test -p turnkeeper-recover --test fresh -- --nocapture` prints the tables.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use common::{Split, pct, split_of, thread_key};
use serde::Deserialize;
use turnkeeper_recover::{ErrorKind, classify};

/// Floors, in percent, for the items of public threads. Measured before the work of branch
/// `fresh-errors`: development 50/72 (69.4 %), held-out 30/35 (85.7 %); after it: development
/// 72/72, held-out 33/35 (94.3 %). The held-out floor is the figure after the work, so that it
/// cannot regress.
const THREAD_DEVELOPMENT_MIN: f64 = 100.0;
const THREAD_HELD_OUT_MIN: f64 = 94.0;
/// Held-out hard errors the classifier calls retryable: 1 before the work and 1 after it (no
/// development item shows its wording, so no rule was written for it). A ceiling, never to
/// rise; the development part must have none.
const HELD_OUT_RETRIED_HARD_MAX: usize = 1;
/// Floors for the classifier cases taken from peers' test suites (43: openfang and openclaw in
/// the development part, a fork of openclaw's other overflow test held out). Before the work:
/// development 27/35 (77.1 %), held-out 3/8 (37.5 %); after it: 34/35 (97.1 %) and 3/8.
const PEER_DEVELOPMENT_MIN: f64 = 97.0;
const PEER_HELD_OUT_MIN: f64 = 37.5;

/// One line of `fresh.jsonl`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fresh {
    id: String,
    /// `owner/repo#N` for a thread, `owner/repo:path` for a peer's test file.
    source: String,
    status: Option<u16>,
    #[allow(dead_code)]
    provider: String,
    /// `thread` (a public issue or pull request) or `peer` (a peer's test suite).
    origin: String,
    /// `development` or `held-out`, written before the first measurement.
    part: String,
    body: String,
    kind: ErrorKind,
}

impl Fresh {
    /// The key the split hashes: the thread, or the peer's repository and path.
    fn key(&self) -> String {
        if self.origin == "peer" {
            self.source.trim().to_ascii_lowercase()
        } else {
            thread_key(&self.source)
        }
    }
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/errors")
}

fn fresh() -> Vec<Fresh> {
    let path = corpus_dir().join("fresh.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

#[test]
fn fresh_items_are_well_formed_and_split_as_written() {
    let items = fresh();
    assert!(items.len() >= 140, "only {} items", items.len());
    let mut ids = HashSet::new();
    let mut bodies = HashSet::new();
    for item in &items {
        assert!(ids.insert(item.id.as_str()), "duplicate id {}", item.id);
        assert!(!item.body.trim().is_empty(), "{} has no body", item.id);
        assert!(
            bodies.insert((item.key(), item.body.as_str())),
            "{}: the same body twice from one source",
            item.id
        );
        match item.origin.as_str() {
            "thread" => assert!(
                item.key()
                    .split_once('#')
                    .is_some_and(|(r, n)| r.contains('/') && !n.is_empty()),
                "{}: {:?} names no thread",
                item.id,
                item.source
            ),
            "peer" => assert!(
                item.source
                    .split_once(':')
                    .is_some_and(|(r, p)| r.contains('/') && !p.is_empty()),
                "{}: {:?} names no repository and path",
                item.id,
                item.source
            ),
            other => panic!("{}: unknown origin {other:?}", item.id),
        }
        assert_eq!(
            item.part,
            split_of(&item.key()).label(),
            "{}: the written part is not the computed one",
            item.id
        );
    }
    let threads: BTreeMap<String, &str> = items
        .iter()
        .filter(|i| i.origin == "thread")
        .map(|i| (i.key(), i.part.as_str()))
        .collect();
    assert!(threads.len() >= 100, "only {} threads", threads.len());
    let held = threads.values().filter(|p| **p == "held-out").count();
    let share = held as f64 / threads.len() as f64;
    assert!((0.25..=0.42).contains(&share), "held-out share {share:.2}");
}

#[test]
fn fresh_threads_are_new_to_the_corpus() {
    // The point of the set: no thread of it was drawn on by any other corpus file.
    let seen: BTreeSet<String> = common::corpus().iter().map(|i| i.thread()).collect();
    let reused: Vec<String> = fresh()
        .into_iter()
        .filter(|i| i.origin == "thread" && seen.contains(&i.key()))
        .map(|i| i.id)
        .collect();
    assert!(
        reused.is_empty(),
        "threads already in the corpus: {reused:?}"
    );
}

/// Hits and totals per kind, and the misses, for one origin and part.
#[derive(Default)]
struct Tally {
    per_kind: BTreeMap<ErrorKind, (usize, usize)>,
    misses: Vec<String>,
}

impl Tally {
    fn overall(&self) -> (usize, usize) {
        self.per_kind
            .values()
            .fold((0, 0), |(h, n), (a, b)| (h + a, n + b))
    }
}

fn measure(items: &[Fresh], origin: &str) -> BTreeMap<Split, Tally> {
    let mut out: BTreeMap<Split, Tally> = BTreeMap::new();
    for item in items.iter().filter(|i| i.origin == origin) {
        let d = classify(item.status, &item.body);
        let t = out.entry(split_of(&item.key())).or_default();
        let e = t.per_kind.entry(item.kind).or_default();
        e.1 += 1;
        if d.kind == item.kind {
            e.0 += 1;
        } else {
            t.misses.push(format!(
                "{} ({}): expected {}, got {}",
                item.id, item.source, item.kind, d.kind
            ));
        }
    }
    out
}

fn print_table(title: &str, parts: &BTreeMap<Split, Tally>) {
    let empty = Tally::default();
    let dev = parts.get(&Split::Development).unwrap_or(&empty);
    let held = parts.get(&Split::HeldOut).unwrap_or(&empty);
    println!("{title}");
    println!(
        "{:<28} {:>13} {:>8} {:>13} {:>8}",
        "kind", "development", "acc", "held-out", "acc"
    );
    let row = |name: &str, (dh, dn): (usize, usize), (hh, hn): (usize, usize)| {
        println!(
            "{name:<28} {:>13} {:>7.1}% {:>13} {:>7.1}%",
            format!("{dh}/{dn}"),
            pct(dh, dn),
            format!("{hh}/{hn}"),
            pct(hh, hn)
        );
    };
    let kinds: BTreeSet<ErrorKind> = dev
        .per_kind
        .keys()
        .chain(held.per_kind.keys())
        .copied()
        .collect();
    let cell = |t: &Tally, k: ErrorKind| t.per_kind.get(&k).copied().unwrap_or((0, 0));
    for k in kinds {
        row(k.as_str(), cell(dev, k), cell(held, k));
    }
    row("overall", dev.overall(), held.overall());
    for m in &dev.misses {
        println!("miss [development] {m}");
    }
    if std::env::var("TURNKEEPER_SHOW_HELD_OUT").is_ok_and(|v| v == "1") {
        for m in &held.misses {
            println!("miss [held-out] {m}");
        }
    } else {
        println!(
            "held-out misses: {} (not listed; TURNKEEPER_SHOW_HELD_OUT=1 lists them)",
            held.misses.len()
        );
    }
}

fn check_floors(what: &str, parts: &BTreeMap<Split, Tally>, dev_min: f64, held_min: f64) {
    let empty = Tally::default();
    let (dh, dn) = parts.get(&Split::Development).unwrap_or(&empty).overall();
    let (hh, hn) = parts.get(&Split::HeldOut).unwrap_or(&empty).overall();
    assert!(
        pct(dh, dn) >= dev_min,
        "{what} development {dh}/{dn} ({:.1}%) < {dev_min}%",
        pct(dh, dn)
    );
    assert!(
        pct(hh, hn) >= held_min,
        "{what} held-out {hh}/{hn} ({:.1}%) < {held_min}%",
        pct(hh, hn)
    );
}

#[test]
fn fresh_thread_accuracy() {
    let items = fresh();
    let parts = measure(&items, "thread");
    print_table("fresh items from public threads", &parts);
    check_floors(
        "threads",
        &parts,
        THREAD_DEVELOPMENT_MIN,
        THREAD_HELD_OUT_MIN,
    );
}

#[test]
fn fresh_peer_accuracy() {
    let items = fresh();
    let parts = measure(&items, "peer");
    print_table("classifier cases from peers' test suites", &parts);
    check_floors("peers", &parts, PEER_DEVELOPMENT_MIN, PEER_HELD_OUT_MIN);
}

#[test]
fn no_fresh_hard_error_is_called_retryable() {
    // In either part and either origin: a hard error called retryable is resent until the agent
    // gives up. Development items are named, held-out ones only counted.
    let mut dev = Vec::new();
    let mut held = 0;
    for item in fresh() {
        if item.kind.is_retryable() || !classify(item.status, &item.body).retryable {
            continue;
        }
        if split_of(&item.key()) == Split::HeldOut {
            held += 1;
        } else {
            dev.push(item.id);
        }
    }
    assert!(
        dev.is_empty(),
        "hard errors called retryable in the development part: {dev:?}"
    );
    assert!(
        held <= HELD_OUT_RETRIED_HARD_MAX,
        "{held} held-out hard errors called retryable (ceiling {HELD_OUT_RETRIED_HARD_MAX})"
    );
}
