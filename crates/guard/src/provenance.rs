//! Where a signature seems to come from (api-rules.md AN-23, GM-05, AG-03).
//!
//! Real signatures are opaque; their first bytes differ between model generations (the recorded
//! traffic has Claude signatures starting `Eq`, `Er`, ... and Opus 5 ones starting `CA`), so no
//! prefix says "Anthropic" or "Gemini". What can be told for sure is what can never verify: an
//! empty value, a documented sentinel, or text that is not base64 at all.

/// The provenance class of a signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// No signature, or the empty string: can never verify (AN-23, AN-06).
    Empty,
    /// One of Gemini's documented dummy values (`skip_thought_signature_validator`,
    /// `context_engineering_is_the_way_to_go`; api-rules.md GM-05). Valid on Gemini function-call
    /// parts that never had a signature; always rejected in an Anthropic thinking block (AG-03).
    Sentinel,
    /// Not base64: a placeholder or a corrupted value.
    Malformed,
    /// Looks like a real provider signature (base64, not trivially short). Whether it verifies
    /// only the provider can say.
    Plausible,
}

/// The documented Gemini dummy signatures (api-rules.md GM-05).
pub const SENTINELS: [&str; 2] = [
    "skip_thought_signature_validator",
    "context_engineering_is_the_way_to_go",
];

/// The sentinels as base64, the way Gemini's bytes-typed field carries them in JSON (seen in
/// real traffic: `c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=`).
pub const ENCODED_SENTINELS: [&str; 2] = [
    "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=",
    "Y29udGV4dF9lbmdpbmVlcmluZ19pc190aGVfd2F5X3RvX2dv",
];

/// The bytes of standard and URL-safe base64, padding included: one table lookup a byte.
const BASE64: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'-' | b'_');
        b += 1;
    }
    t
};

/// Classifies a signature value.
///
/// ```
/// use turnkeeper_guard::{provenance, Provenance};
/// assert_eq!(provenance(Some("")), Provenance::Empty);
/// assert_eq!(provenance(Some("skip_thought_signature_validator")), Provenance::Sentinel);
/// assert_eq!(provenance(Some("[Continuing from previous reasoning]")), Provenance::Malformed);
/// assert_eq!(provenance(Some("EqQBCkYIBxgCKkBvXz0w+/ab==")), Provenance::Plausible);
/// ```
pub fn provenance(sig: Option<&str>) -> Provenance {
    let Some(s) = sig else {
        return Provenance::Empty;
    };
    let s = s.trim();
    if s.is_empty() {
        return Provenance::Empty;
    }
    if SENTINELS.contains(&s) || ENCODED_SENTINELS.contains(&s) {
        return Provenance::Sentinel;
    }
    let base64 = s.bytes().all(|b| BASE64[b as usize]);
    if !base64 || s.len() < 8 {
        return Provenance::Malformed;
    }
    Provenance::Plausible
}
