//! The invariants as proptest properties, one `prop_<name>` test each (`cargo test -- prop_`).
//! Cases: `PROPTEST_CASES` (64 by default; `cargo xtask verify` runs more).

use proptest::prelude::*;
use turnkeeper_testkit::inv::{self, Wrap};
use turnkeeper_testkit::strategy::{any_conversation, conversations, damaged};
use turnkeeper_testkit::{Conversation, Knobs, cases, corpus};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn holds(
    c: &Conversation,
    f: fn(&str, &turnkeeper_prevent::Options<'_>) -> inv::Outcome,
) -> Result<(), TestCaseError> {
    f(&c.json(), &c.options()).map_err(TestCaseError::fail)
}

fn wrap() -> impl Strategy<Value = Wrap> {
    prop_oneof![
        Just(Wrap::JsonString),
        Just(Wrap::PythonRepr),
        any::<u8>().prop_map(Wrap::Prefix),
        (40u8..=110, 0u8..=8).prop_map(|(width, indent)| Wrap::Hard { width, indent }),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn prop_thinking_first(c in any_conversation(Knobs::anthropic_only())) {
        holds(&c, inv::inv_thinking_first)?;
    }

    #[test]
    fn prop_untouched_thinking(c in any_conversation(Knobs::default())) {
        holds(&c, inv::inv_untouched_thinking)?;
    }

    #[test]
    fn prop_idempotent(c in any_conversation(Knobs::default())) {
        holds(&c, inv::inv_idempotent)?;
    }

    #[test]
    fn prop_convergence(c in any_conversation(Knobs::default())) {
        holds(&c, inv::inv_convergence)?;
    }

    #[test]
    fn prop_roundtrip(c in any_conversation(Knobs::default())) {
        inv::inv_roundtrip(&c.json()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn prop_tool_pairing(c in damaged(Knobs::anthropic_only())) {
        holds(&c, inv::inv_tool_pairing)?;
    }

    #[test]
    fn prop_conservation(c in any_conversation(Knobs::default())) {
        holds(&c, inv::inv_conservation)?;
    }

    #[test]
    fn prop_classifier_stable(pick in any::<prop::sample::Index>(), wraps in prop::collection::vec(wrap(), 1..=3)) {
        let items = corpus::errors();
        let item = &items[pick.index(items.len())];
        // Stability: the wrapped text keeps the kind the unwrapped text gets.
        let unwrapped = turnkeeper_recover::classify(item.status, &item.body).kind;
        let labelled = corpus::ErrorItem { kind: unwrapped, ..item.clone() };
        inv::inv_classifier_stable(&labelled, &wraps).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn prop_no_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        inv::inv_no_panic(&bytes).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn prop_no_panic_on_generated_json(c in any_conversation(Knobs::default()), cut in any::<prop::sample::Index>()) {
        // Whole and truncated generated bodies: realistic structure, broken at any byte.
        let text = c.json();
        inv::inv_no_panic(text.as_bytes()).map_err(TestCaseError::fail)?;
        let at = cut.index(text.len().max(1));
        inv::inv_no_panic(&text.as_bytes()[..at]).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn prop_fuzz_bodies_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        for (_, body) in turnkeeper_testkit::fuzz::TARGETS {
            body(&bytes, turnkeeper_testkit::fuzz::Depth::Full);
        }
    }
}

/// Invariant 4 with a count: the property passes over inputs `check` finds anything in, so it
/// also counts the cases that reach its assertion and requires that at least half of them do.
#[test]
fn prop_noop_on_valid() {
    let cfg = config();
    let total = cfg.cases as usize;
    let mut runner = proptest::test_runner::TestRunner::new(cfg);
    let reached = std::cell::Cell::new(0usize);
    let result = runner.run(&conversations(Knobs::default()), |c| {
        if inv::noop_on_valid_counted(&c.json(), &c.options()).map_err(TestCaseError::fail)? {
            reached.set(reached.get() + 1);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let reached = reached.get();
    eprintln!("prop_noop_on_valid: {reached} of {total} cases were clean and asserted");
    assert!(
        reached * 2 >= total,
        "only {reached} of {total} generated conversations were clean: the invariant barely ran"
    );
}

/// Invariant 11 on generated conversations, one buffer reused across every case (so each repair
/// starts from the body an earlier case left in it); counts the cases whose body was rewritten
/// into the buffer and requires that a quarter were.
#[test]
fn prop_repair_into() {
    let cfg = config();
    let total = cfg.cases as usize;
    let mut runner = proptest::test_runner::TestRunner::new(cfg);
    let buf = std::cell::RefCell::new("[\"stale\",".repeat(10_000));
    let written = std::cell::Cell::new(0usize);
    let result = runner.run(&any_conversation(Knobs::default()), |c| {
        let mut buf = buf.borrow_mut();
        inv::inv_repair_into(&c.json(), &c.options(), &mut buf).map_err(TestCaseError::fail)?;
        if !buf.is_empty() {
            written.set(written.get() + 1);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let written = written.get();
    eprintln!("prop_repair_into: {written} of {total} cases wrote a new body");
    assert!(
        written * 4 >= total,
        "only {written} of {total} generated conversations needed a repair: the buffer was barely used"
    );
}
