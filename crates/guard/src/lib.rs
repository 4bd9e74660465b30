//! Thinking-block identity: the guarantee that turnkeeper never alters a thinking block.
//!
//! - [`Ledger`]: taken before a repair runs and checked after it. Every `thinking` /
//!   `redacted_thinking` block (and Gemini part with a `thoughtSignature`, OpenCode reasoning part
//!   with a signature) in the output must be byte-identical to one in the input or one restored
//!   from the store; every input block missing from the output must be accounted for by a
//!   reported removal. Anything else is a [`GuardViolation`]: a bug, and the repair fails closed.
//! - [`provenance()`]: what a signature looks like it is (empty, a known sentinel, not base64, a
//!   word or field name, or plausibly a real provider signature), for api-rules.md AN-23.
//! - [`store`]: the turn store, the provider's raw assistant content as it arrived, used to
//!   restore turns a later request altered (api-rules.md AN-22).

pub mod fsio;
pub mod ledger;
pub mod provenance;
pub mod sse;
pub mod store;
pub mod wire_turn;

pub use ledger::{GuardViolation, Ledger, fingerprint, hex, is_guarded};
pub use provenance::{Provenance, provenance, provenance_of_base64};
pub use store::{Recorded, StoreError, StoredTurn, TurnKeys, TurnStore};
pub use wire_turn::{WireFamily, WireTurn, gemini_call_keys, response_family};
