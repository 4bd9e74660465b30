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

/// The provenance of a signature the reader already found to be at least 8 base64 bytes without
/// escapes ([`turnkeeper_model::Facts::signature_base64`]): plausible, unless it is one of the
/// sentinels or a word ([`is_word`]), without reading a long one again.
pub fn provenance_of_base64(sig: &str) -> Provenance {
    if SENTINELS.contains(&sig) || ENCODED_SENTINELS.contains(&sig) {
        Provenance::Sentinel
    } else if is_word(sig) {
        Provenance::Malformed
    } else {
        Provenance::Plausible
    }
}

/// Longest value [`is_word`] looks at: real signatures are hundreds of bytes (the recorded
/// traffic's shortest is 232), words and field names a few dozen at most.
const WORD_MAX: usize = 64;

/// True when `s` has the shape of a word or a field name rather than an encoding of bytes: made
/// of base64's letters but written the way people and code write names. A signature that is
/// `signature`, `thoughtSignature`, `placeholder`, `NO_SIGNATURE` or `12345678` was put there
/// by a translator, and can never verify. The shapes (each under 64 bytes):
/// - lower case, digits, `_` and `-` only (`signature`, `thinking_signature`, `sig-1`);
/// - upper case, digits and `_` only (`SIGNATURE`, `NO_SIGNATURE`);
/// - camel or Pascal case: words of one capital and lower case letters, digits only at the end
///   (`thoughtSignature`, `ThoughtSignature2`).
///
/// A byte string in base64 has letters of both cases mixed at random: `EqQBCkYI` is none of
/// these.
pub fn is_word(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || b.len() >= WORD_MAX {
        return false;
    }
    let lower = b
        .iter()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'));
    let upper = b
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
    lower || upper || is_camel(b)
}

/// Camel or Pascal case: every capital starts a word of at least one lower-case letter, and
/// digits come only at the end.
fn is_camel(b: &[u8]) -> bool {
    let body_end = b
        .iter()
        .rposition(|c| !c.is_ascii_digit())
        .map_or(0, |p| p + 1);
    let body = &b[..body_end];
    if body.is_empty() || !body.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    body.iter().enumerate().all(|(n, c)| {
        !c.is_ascii_uppercase() || body.get(n + 1).is_some_and(u8::is_ascii_lowercase)
    })
}

/// Classifies a signature value.
///
/// ```
/// use turnkeeper_guard::{provenance, Provenance};
/// assert_eq!(provenance(Some("")), Provenance::Empty);
/// assert_eq!(provenance(Some("skip_thought_signature_validator")), Provenance::Sentinel);
/// assert_eq!(provenance(Some("[Continuing from previous reasoning]")), Provenance::Malformed);
/// assert_eq!(provenance(Some("EqQBCkYIBxgCKkBvXz0w+/ab==")), Provenance::Plausible);
/// assert_eq!(provenance(Some("thoughtSignature")), Provenance::Malformed);
/// ```
pub fn provenance(sig: Option<&str>) -> Provenance {
    let Some(s) = sig else {
        return Provenance::Empty;
    };
    let s = s.trim();
    if s.is_empty() {
        return Provenance::Empty;
    }
    // Both sentinels are base64 bytes themselves, so this order finds them.
    if !turnkeeper_model::json::is_base64(s.as_bytes())
        || s.len() < turnkeeper_model::json::MIN_SIGNATURE_BYTES
    {
        return Provenance::Malformed;
    }
    provenance_of_base64(s)
}

#[cfg(test)]
mod tests {
    use turnkeeper_model::json::is_base64;

    /// The chunked check agrees with a byte-by-byte one wherever the bad byte falls: inside a
    /// chunk, on a chunk's edges, or in the remainder.
    #[test]
    fn chunked_base64_check_finds_a_bad_byte_anywhere() {
        let good = "EqQBCkYIBxgCKkBvXz0w+/ab-_09AZaz=".repeat(4);
        for len in [0, 1, 31, 32, 33, 64, 65, 100, 128] {
            let s = &good[..len];
            assert!(is_base64(s.as_bytes()), "all good at length {len}");
            for pos in 0..len {
                for bad in [b' ', b'"', b'.', b'[', 0xC3, b'\n'] {
                    let mut b = s.as_bytes().to_vec();
                    b[pos] = bad;
                    assert!(!is_base64(&b), "bad byte {bad:#x} at {pos} of {len}");
                }
            }
        }
    }

    /// `provenance` tests the alphabet before the sentinels, which is right only while every
    /// sentinel is made of base64 bytes and long enough.
    #[test]
    fn sentinels_pass_the_alphabet_test() {
        for s in super::SENTINELS
            .iter()
            .chain(super::ENCODED_SENTINELS.iter())
        {
            assert!(is_base64(s.as_bytes()), "{s}");
            assert!(
                s.len() >= turnkeeper_model::json::MIN_SIGNATURE_BYTES,
                "{s}"
            );
            assert_eq!(
                super::provenance(Some(s)),
                super::Provenance::Sentinel,
                "{s}"
            );
        }
    }

    /// Classifies a signature and compares with what is expected.
    fn check(sig: Option<&str>, expect: super::Provenance) {
        assert_eq!(super::provenance(sig), expect, "{sig:?}");
    }

    #[test]
    fn signatures_are_classified() {
        use super::Provenance::{Empty, Malformed, Plausible, Sentinel};
        check(None, Empty);
        check(Some(" \n"), Empty);
        check(Some("EqQBCkY"), Malformed); // 7 bytes: one short of MIN_SIGNATURE_BYTES
        check(Some("EqQBCkYI"), Plausible); // 8 bytes
        check(Some(" EqQBCkYI\n"), Plausible);
        check(Some("EqQB CkYI"), Malformed);
        check(
            Some("c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="),
            Sentinel,
        );
        check(Some("context_engineering_is_the_way_to_go"), Sentinel);
        assert_eq!(super::provenance_of_base64("EqQBCkYI"), Plausible);
        assert_eq!(
            super::provenance_of_base64("skip_thought_signature_validator"),
            Sentinel
        );
    }

    /// Words and field names are no signatures; base64 of bytes, short or long, is. Each case
    /// is (value, expected).
    #[test]
    fn words_and_field_names_are_malformed() {
        use super::Provenance::{Malformed, Plausible};
        for (sig, expect) in [
            ("signature", Malformed),
            ("thinking_signature", Malformed),
            ("placeholder", Malformed),
            ("sig-12345", Malformed),
            ("12345678", Malformed),
            ("SIGNATURE", Malformed),
            ("NO_SIGNATURE", Malformed),
            ("thoughtSignature", Malformed),
            ("ThoughtSignature2", Malformed),
            ("reasoningSignature", Malformed),
            ("EqQBCkYI", Plausible),
            ("EqQBCkYIBxgCKkDvZ9Q==", Plausible),
            ("EqQBCkYIBxgCKkDv+Z9Q==", Plausible),
            ("ErUBCkYIBRgCIkBhbGxvd2VkX3RoaW5raW5n", Plausible),
            ("CAEQAhgB", Plausible),
        ] {
            check(Some(sig), expect);
        }
        // A long value is never judged a word, whatever its letters.
        check(Some(&"abcdefgh".repeat(8)), Plausible);
    }

    #[test]
    fn every_byte_value_is_classified_as_the_alphabet_says() {
        for b in 0..=255u8 {
            let expected = b.is_ascii_alphanumeric() || b"+/=-_".contains(&b);
            assert_eq!(is_base64(&[b]), expected, "byte {b:#x}");
        }
    }
}
