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
}
