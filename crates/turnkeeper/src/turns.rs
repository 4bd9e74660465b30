//! The turn store: assistant turns exactly as the provider sent them, so that a repair can put a
//! damaged turn back (thinking blocks, signatures, reasoning items) instead of dropping it.
//!
//! Record each response with [`TurnStore::add_any_response`] (a JSON response or an assembled
//! SSE stream of any family the store knows), and pass the store in [`Options::store`]: the
//! restore rules (AN-22 for Anthropic, the wire families' own) look a later request's assistant
//! turns up in it by their tool-call ids, else by a hash of their visible text. A store is in
//! memory ([`TurnStore::in_memory`]) or a directory of one file per turn, each written atomically
//! ([`TurnStore::open`]).
//!
//! ```
//! use turnkeeper::turns::{TurnStore, WireFamily};
//!
//! let mut store = TurnStore::in_memory();
//! let rec = store.add_any_response(r#"{"id":"msg_01","type":"message","role":"assistant",
//!   "model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"look","signature":"c2ln"},
//!   {"type":"tool_use","id":"toolu_01","name":"ls","input":{}}],"stop_reason":"tool_use"}"#)?;
//! assert_eq!(rec.family, WireFamily::Anthropic);
//! assert_eq!(store.len(), 1);
//! # Ok::<(), turnkeeper::turns::TurnStoreError>(())
//! ```
//!
//! [`Options::store`]: crate::Options::store

/// Why the turn store could not record or open: a file system error, or a body that is no
/// response of a family it knows. (Not [`crate::stores::StoreError`], which is about agents'
/// session stores.)
pub use turnkeeper_guard::StoreError as TurnStoreError;
pub use turnkeeper_guard::{Recorded, StoredTurn, TurnKeys, TurnStore, WireFamily, WireTurn};
