//! Fuzz target `codex_rollout`: the body is `turnkeeper_testkit::fuzz::codex_rollout` at `Depth::Sampled`
//! (expensive cross-checks on a deterministic sample of inputs). `cargo test` replays every
//! file of `corpus/` through the same body at `Depth::Full` (test `corpus_fuzz_bodies`).
#![no_main]

use turnkeeper_testkit::fuzz::{Depth, codex_rollout};

libfuzzer_sys::fuzz_target!(|data: &[u8]| codex_rollout(data, Depth::Sampled));

/// mimalloc when the crate's `fast-alloc` feature is on (`cargo xtask fuzz`'s plain mode).
#[cfg(feature = "fast-alloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
