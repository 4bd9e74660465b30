//! Fuzz target `parse_roundtrip`: the body is `turnkeeper_testkit::fuzz::parse_roundtrip` at `Depth::Sampled`
//! (expensive cross-checks on a deterministic sample of inputs). `cargo test` replays every
//! file of `corpus/` through the same body at `Depth::Full` (test `corpus_fuzz_bodies`).
#![no_main]

use turnkeeper_testkit::fuzz::{Depth, parse_roundtrip};

libfuzzer_sys::fuzz_target!(|data: &[u8]| parse_roundtrip(data, Depth::Sampled));

/// mimalloc when the crate's `fast-alloc` feature is on (`cargo xtask fuzz`'s plain mode).
#[cfg(feature = "fast-alloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
