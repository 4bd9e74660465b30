//! Fuzz target `openclaw_session`: the body is `turnkeeper_testkit::fuzz::openclaw_session` at `Depth::Sampled`
//! (expensive cross-checks on a deterministic sample of inputs). `cargo test` replays every
//! file of `corpus/` through the same body at `Depth::Full` (test `corpus_fuzz_bodies`).
#![no_main]

use turnkeeper_testkit::fuzz::{Depth, openclaw_session};

libfuzzer_sys::fuzz_target!(|data: &[u8]| openclaw_session(data, Depth::Sampled));

/// mimalloc when the crate's `fast-alloc` feature is on (`cargo xtask fuzz`'s plain mode).
#[cfg(feature = "fast-alloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
