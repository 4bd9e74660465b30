//! The wire-family invariants (Chat Completions, Responses, Converse) as proptest properties,
//! one `prop_wire_<name>` test each, so `cargo xtask verify` runs them at CI strength with the
//! other `prop_` tests. Cases: `PROPTEST_CASES` (64 by default).

use arbitrary::Unstructured;
use proptest::prelude::*;
use turnkeeper_model::Format;
use turnkeeper_prevent::Options;
use turnkeeper_testkit::cases;
use turnkeeper_testkit::wire_gen::{WireBody, WireKnobs, wire_body, wire_damage};
use turnkeeper_testkit::wire_inv::{self, WireInvariant};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn build(bytes: &[u8], knobs: &WireKnobs, damaged: bool) -> WireBody {
    let mut u = Unstructured::new(bytes);
    let mut b = match wire_body(&mut u, knobs) {
        Ok(b) => b,
        Err(_) => match wire_body(&mut Unstructured::new(&[]), knobs) {
            Ok(b) => b,
            Err(e) => panic!("the wire generator failed on empty input: {e}"),
        },
    };
    if damaged {
        let _ = wire_damage(&mut u, &mut b);
    }
    b
}

fn valid() -> impl Strategy<Value = WireBody> {
    proptest::collection::vec(any::<u8>(), 64..4096)
        .prop_map(|b| build(&b, &WireKnobs::default(), false))
}

fn damaged() -> impl Strategy<Value = WireBody> {
    proptest::collection::vec(any::<u8>(), 64..4096)
        .prop_map(|b| build(&b, &WireKnobs::default(), true))
}

fn any_body() -> impl Strategy<Value = WireBody> {
    prop_oneof![1 => valid(), 3 => damaged()]
}

/// The policies a body is repaired under: the default, stand-ins off, Converse's opt-in.
fn policy() -> impl Strategy<Value = u8> {
    0u8..3
}

fn options(b: &WireBody, policy: u8) -> Options<'static> {
    let mut o = b.options();
    match policy {
        1 => o.policy.empty_stand_ins = false,
        2 => o.policy.bedrock_empty_reasoning_text = true,
        _ => {}
    }
    o
}

fn holds(b: &WireBody, policy: u8, f: WireInvariant) -> Result<(), TestCaseError> {
    f(&b.json(), b.format, &options(b, policy)).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn prop_wire_valid(b in valid()) {
        wire_inv::inv_wire_sniffed(&b.json(), b.format).map_err(TestCaseError::fail)?;
        holds(&b, 0, wire_inv::inv_wire_valid)?;
    }

    #[test]
    fn prop_wire_lossless(b in any_body(), p in policy()) {
        holds(&b, p, wire_inv::inv_wire_lossless)?;
    }

    #[test]
    fn prop_wire_reasoning(b in any_body(), p in policy()) {
        holds(&b, p, wire_inv::inv_wire_reasoning)?;
    }

    #[test]
    fn prop_wire_idempotent(b in any_body(), p in policy()) {
        holds(&b, p, wire_inv::inv_wire_idempotent)?;
    }

    #[test]
    fn prop_wire_agree(b in any_body(), p in policy()) {
        holds(&b, p, wire_inv::inv_wire_agree)?;
    }

    #[test]
    fn prop_wire_no_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048), pick in any::<usize>()) {
        wire_inv::inv_wire_no_panic(&bytes, pick).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn prop_wire_no_panic_on_cut_bodies(b in any_body(), cut in any::<prop::sample::Index>(), pick in any::<usize>()) {
        let text = b.json();
        let at = cut.index(text.len().max(1));
        wire_inv::inv_wire_no_panic(&text.as_bytes()[..at], pick).map_err(TestCaseError::fail)?;
    }
}

/// The damage is real: over damaged bodies of each family, a good share draws a finding and
/// gets a repair change (a generator whose damage nothing notices would make every invariant
/// above hold vacuously).
#[test]
fn prop_wire_damage_is_found() {
    for format in [Format::Chat, Format::Responses, Format::Converse] {
        let cfg = config();
        let total = cfg.cases as usize;
        let mut runner = proptest::test_runner::TestRunner::new(cfg);
        let found = std::cell::Cell::new(0usize);
        let changed = std::cell::Cell::new(0usize);
        let knobs = WireKnobs::only(format);
        let strategy = proptest::collection::vec(any::<u8>(), 64..4096)
            .prop_map(move |b| build(&b, &knobs, true));
        let result = runner.run(&strategy, |b| {
            let text = b.json();
            let opts = b.options();
            let f = turnkeeper_prevent::wire::check_wire(&text, b.format, &opts)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            if !f.is_empty() {
                found.set(found.get() + 1);
            }
            let r = turnkeeper_prevent::wire::repair_wire(&text, b.format, &opts)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            if !r.report.changes.is_empty() {
                changed.set(changed.get() + 1);
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{format}: {e}");
        }
        let (found, changed) = (found.get(), changed.get());
        eprintln!(
            "{format}: {found} of {total} damaged bodies drew a finding, {changed} were changed"
        );
        assert!(
            found * 2 >= total && changed * 4 >= total,
            "{format}: only {found} of {total} damaged bodies drew a finding and {changed} were repaired"
        );
    }
}
