//! `fuzz/Cargo.toml` and `testkit::fuzz::TARGETS` name the same targets in the same order, and
//! each has its entry point: a target libFuzzer runs is a body `cargo test` replays, and the
//! other way round.

use turnkeeper_testkit::corpus::root;
use turnkeeper_testkit::fuzz::TARGETS;

#[test]
fn every_fuzz_bin_is_a_replayed_body_and_back() {
    let manifest =
        std::fs::read_to_string(root().join("fuzz/Cargo.toml")).expect("fuzz/Cargo.toml reads");
    let mut bins = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(rest) = line.strip_prefix("name = ") {
            bins.push(rest.trim_matches('"').to_owned());
        }
    }
    let bodies: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(bins, bodies, "fuzz/Cargo.toml [[bin]]s and TARGETS differ");
    for name in &bodies {
        let entry = root().join(format!("fuzz/fuzz_targets/{name}.rs"));
        let text =
            std::fs::read_to_string(&entry).unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
        assert!(
            text.contains(&format!("{name}(data, Depth::Sampled)")),
            "{} does not call its body at Depth::Sampled",
            entry.display()
        );
    }
}
