//! turnkeeper's proof kit: one generator of realistic conversations, the damage real transcripts
//! suffer, the invariants every repair must keep, and the fuzz targets' bodies.
//!
//! - [`conversation`] / [`conversation_with`] ([`generate`]): Anthropic request bodies, Gemini
//!   `contents` and OpenCode export arrays from [`arbitrary::Unstructured`] bytes, written with
//!   varying key order, whitespace and escapes ([`json`]).
//! - [`damage()`] ([`mod@damage`]): reordered blocks, dropped/duplicated/orphan results, empty
//!   text, bad signatures, odd tool ids, aborted turns, ...
//! - [`strategy`]: proptest strategies over the same generator.
//! - [`inv`]: the invariants, each a named function returning `Err(explanation)`.
//! - [`wire_gen`] / [`wire_inv`]: the OpenAI-style families (Chat Completions, Responses,
//!   Converse): valid bodies per vendor, their damage, and their invariants.
//! - [`fuzz`]: the bodies of `fuzz/fuzz_targets/*`, also replayed over `corpus/` by
//!   `cargo test`.
//!
//! ```
//! use arbitrary::Unstructured;
//! use turnkeeper_testkit::{conversation, damage, inv};
//!
//! let bytes: Vec<u8> = (0..2048u32).map(|i| (i * 7919 % 251) as u8).collect();
//! let mut u = Unstructured::new(&bytes);
//! let mut c = conversation(&mut u)?;
//! damage(&mut u, &mut c)?;
//! let body = c.json();
//! inv::inv_untouched_thinking(&body, &c.options()).expect("thinking bytes survive repair");
//! # Ok::<(), arbitrary::Error>(())
//! ```

pub mod corpus;
pub mod damage;
pub mod fuzz;
pub mod generate;
pub mod inv;
pub mod json;
pub mod kept;
pub mod samples;
pub mod shared;
pub mod strategy;
pub mod wire_gen;
pub mod wire_inv;

pub use damage::{Damage, damage};
pub use generate::{Conversation, Knobs, conversation, conversation_with};

/// The number of proptest cases: `PROPTEST_CASES`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
