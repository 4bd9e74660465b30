//! Fuzz target `wire_families`: the body is `turnkeeper_testkit::fuzz::wire_families` at
//! `Depth::Sampled` (a second repair on a deterministic sample of inputs). `cargo test` replays
//! every file of `corpus/` through the same body at `Depth::Full` (test `corpus_fuzz_bodies`).
#![no_main]

use turnkeeper_testkit::fuzz::{Depth, wire_families};

libfuzzer_sys::fuzz_target!(|data: &[u8]| wire_families(data, Depth::Sampled));

/// mimalloc when the crate's `fast-alloc` feature is on (`cargo xtask fuzz`'s plain mode).
#[cfg(feature = "fast-alloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
