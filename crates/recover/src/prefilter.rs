//! A bigram filter over the normalised text: one linear pass records which byte pairs occur, so
//! that a needle with a pair the text lacks is rejected by three bit tests instead of a substring
//! search. Most of the ~250 needles of the phrase table and the structure scan are absent from a
//! given error; this keeps the classifier's cost close to one pass over the text.

/// The set of (hashed) byte pairs present in a text.
pub(crate) struct Bigrams {
    bits: [u64; 64],
}

const MASK: usize = 4095;

fn slot(a: u8, b: u8) -> usize {
    (usize::from(a).wrapping_mul(61) ^ usize::from(b).wrapping_mul(7)) & MASK
}

impl Bigrams {
    /// Record every adjacent byte pair of `text`.
    pub(crate) fn of(text: &[u8]) -> Self {
        let mut bits = [0u64; 64];
        for w in text.windows(2) {
            let s = slot(w[0], w[1]);
            bits[s >> 6] |= 1 << (s & 63);
        }
        Bigrams { bits }
    }

    fn has(&self, s: usize) -> bool {
        self.bits[s >> 6] & (1 << (s & 63)) != 0
    }

    /// Whether every pair of `probe` may occur (false means the needle surely does not).
    pub(crate) fn may_contain(&self, probe: &Probe) -> bool {
        probe.slots.iter().all(|s| self.has(*s))
    }
}

/// Three byte pairs of a needle (first, middle, last), precomputed.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    slots: Vec<usize>,
}

impl Probe {
    /// The probe of `needle`; a needle shorter than two bytes is never filtered out.
    pub(crate) fn new(needle: &[u8]) -> Self {
        let n = needle.len();
        let slots = if n < 2 {
            Vec::new()
        } else {
            let mid = (n - 2) / 2;
            let mut v: Vec<usize> = [0, mid, n - 2]
                .iter()
                .map(|&i| slot(needle[i], needle[i + 1]))
                .collect();
            v.dedup();
            v
        };
        Probe { slots }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_rejects_a_needle_that_occurs() {
        let text = b"prompt is too long: 219898 tokens > 200000 maximum";
        let b = Bigrams::of(text);
        for start in 0..text.len() {
            for end in start + 1..=text.len() {
                assert!(b.may_contain(&Probe::new(&text[start..end])));
            }
        }
        assert!(!b.may_contain(&Probe::new(b"overloaded")));
    }

    /// Whether each needle may occur in `text`, in order.
    fn check(text: &[u8], needles: &[&[u8]], expect: &[bool]) {
        let b = Bigrams::of(text);
        let got: Vec<bool> = needles
            .iter()
            .map(|n| b.may_contain(&Probe::new(n)))
            .collect();
        assert_eq!(got, expect, "{}", String::from_utf8_lossy(text));
    }

    #[test]
    fn rejects_a_needle_whose_first_middle_or_last_pair_is_absent() {
        check(
            b"abcdefgh",
            &[
                b"abcdefgh",
                b"xbcdefgh",
                b"abcxyfgh",
                b"abcdefgz",
                b"cdef",
                b"a",
                b"",
            ],
            &[true, false, false, false, true, true, true],
        );
        check(b"", &[b"ab", b"a"], &[false, true]);
        check(b"ba", &[b"ab", b"ba"], &[false, true]);
        // Pairs spread over all 64 words of the set: every printable pair of a text is found,
        // and none of another alphabet is.
        let text: Vec<u8> = (b'!'..=b'~').collect();
        let present: Vec<[u8; 2]> = text.windows(2).map(|w| [w[0], w[1]]).collect();
        let b = Bigrams::of(&text);
        assert!(present.iter().all(|p| b.may_contain(&Probe::new(p))));
        let absent = [[b'~', b'!'], [b'z', b'a'], [b'0', b'0'], [0xC3, 0xA9]];
        assert!(absent.iter().all(|p| !b.may_contain(&Probe::new(p))));
    }
}
