//! The before/after ledger of thinking blocks.

use std::collections::HashMap;

use sha2::{Digest, Sha256};
use turnkeeper_model::{Block, Transcript};

/// True for blocks whose bytes turnkeeper must never alter: thinking and redacted thinking
/// (Anthropic, OpenCode reasoning), and Gemini parts that carry a `thoughtSignature` (a signature
/// must stay in its original part, api-rules.md GM-04). A `signature` on an Anthropic text block
/// is a schema error (AN-06), not a guarded value.
pub fn is_guarded(b: &Block) -> bool {
    b.kind().is_thinking() || (b.static_type.is_some() && b.signature.is_some())
}

/// A short, stable fingerprint of a block's exact bytes: the first 8 bytes of its SHA-256, hex.
pub fn fingerprint(raw: &str) -> String {
    let d = Sha256::digest(raw.as_bytes());
    hex(d.get(..8).unwrap_or_default())
}

/// `bytes` in lowercase hexadecimal, two digits a byte (what `format!("{b:02x}")` gives for each
/// byte, without a formatter and a string per byte: the proxy keys every assistant turn of every
/// request by such a hash).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// A thinking block changed, appeared or vanished without a report: the pipeline is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GuardViolation {
    /// A guarded block in the output is not byte-identical to any input or restored block.
    #[error(
        "{path}: a thinking block in the output (fingerprint {fingerprint}) matches no block of the input: it was altered or invented"
    )]
    Altered {
        /// Where it is in the output.
        path: String,
        /// Its fingerprint.
        fingerprint: String,
    },
    /// Input guarded blocks are missing from the output beyond what was reported removed.
    #[error(
        "{missing} thinking block(s) vanished without a reported removal (first: {first_path}, fingerprint {fingerprint})"
    )]
    Unreported {
        /// How many.
        missing: usize,
        /// The input location of the first one.
        first_path: String,
        /// Its fingerprint.
        fingerprint: String,
    },
    /// The output could not be read back.
    #[error("the repaired body does not parse: {0}")]
    Unreadable(String),
}

/// Maps keyed by block texts. foldhash reads eight bytes a step (SipHash, the default, costs
/// several times as much, and a ledger hashes every thinking block twice) and is seeded per
/// process, so texts crafted to collide under one run do not under the next.
type TextMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The multiset of guarded blocks of an input, by exact bytes.
#[derive(Debug, Default)]
pub struct Ledger<'a> {
    /// Each distinct guarded text: how many times it occurs, and where it first occurs (message,
    /// block), for the error message.
    counts: TextMap<&'a str, (usize, (u32, u32))>,
    /// Where the input's paths are spelled (`messages[1].content[0]`, ...).
    paths: Option<PathStyle>,
    extra: TextMap<String, usize>,
}

/// How to spell an input location, kept instead of the transcript so a ledger only borrows text.
#[derive(Clone, Copy, Debug)]
struct PathStyle {
    format: turnkeeper_model::Format,
    body: turnkeeper_model::BodyKind,
}

impl<'a> Ledger<'a> {
    /// Records every guarded block of `t`.
    pub fn take(t: &Transcript<'a>) -> Self {
        Self::take_blocks(t, t.blocks.iter())
    }

    /// Records the guarded blocks of the listed messages of `t` only. For a check whose other
    /// messages come out as byte-for-byte copies of themselves, each at most once: their blocks
    /// are the same on both sides and cancel out of the count, so leaving them out of both (see
    /// [`Ledger::verify_messages`]) gives the verdict the whole ledger gives, while the ledger
    /// holds only what changed.
    pub fn take_messages(t: &Transcript<'a>, messages: impl IntoIterator<Item = usize>) -> Self {
        Self::take_blocks(t, messages.into_iter().flat_map(|i| t.blocks_of(i)))
    }

    fn take_blocks<'b>(t: &Transcript<'a>, blocks: impl Iterator<Item = &'b Block>) -> Self {
        let mut counts: TextMap<&'a str, (usize, (u32, u32))> = TextMap::default();
        for b in blocks.filter(|b| is_guarded(b)) {
            let e = counts
                .entry(b.span.get(t.src))
                .or_insert((0, (b.msg, b.pos)));
            e.0 += 1;
        }
        Ledger {
            counts,
            paths: Some(PathStyle {
                format: t.format,
                body: t.body,
            }),
            extra: TextMap::default(),
        }
    }

    /// Number of guarded blocks recorded.
    pub fn len(&self) -> usize {
        self.counts.values().map(|(n, _)| n).sum::<usize>() + self.extra.values().sum::<usize>()
    }

    /// True when the input had no guarded block.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Allows a block that was restored from the turn store (its bytes are the provider's).
    pub fn allow_restored(&mut self, raw: &str) {
        *self.extra.entry(raw.to_owned()).or_insert(0) += 1;
    }

    /// Checks the output against the ledger. `reported_removed` is the number of guarded input
    /// blocks the rules reported removing.
    ///
    /// # Errors
    /// [`GuardViolation::Altered`] for an output block not in the ledger, and
    /// [`GuardViolation::Unreported`] when more input blocks are missing than were reported.
    pub fn verify(
        &self,
        out: &Transcript<'_>,
        reported_removed: usize,
    ) -> Result<(), GuardViolation> {
        self.verify_blocks(out, out.blocks.iter(), reported_removed)
    }

    /// [`Ledger::verify`] over the blocks of the listed messages of `out` only, for a ledger
    /// taken with [`Ledger::take_messages`]: every message of `out` not listed must be a
    /// byte-for-byte copy of an input message the ledger left out, and no input message may be
    /// copied twice. The caller establishes both (a repair compares each copied message with
    /// its original as it reads the output back).
    ///
    /// # Errors
    /// As [`Ledger::verify`].
    pub fn verify_messages(
        &self,
        out: &Transcript<'_>,
        messages: impl IntoIterator<Item = usize>,
        reported_removed: usize,
    ) -> Result<(), GuardViolation> {
        self.verify_blocks(
            out,
            messages.into_iter().flat_map(|i| out.blocks_of(i)),
            reported_removed,
        )
    }

    fn verify_blocks<'b>(
        &self,
        out: &Transcript<'_>,
        blocks: impl Iterator<Item = &'b Block>,
        reported_removed: usize,
    ) -> Result<(), GuardViolation> {
        let mut left: TextMap<&str, usize> = TextMap::default();
        left.reserve(self.counts.len());
        left.extend(self.counts.iter().map(|(k, (n, _))| (*k, *n)));
        let mut extra = self.extra.clone();
        for b in blocks.filter(|b| is_guarded(b)) {
            let raw = b.span.get(out.src);
            if let Some(n) = left.get_mut(raw).filter(|n| **n > 0) {
                *n -= 1;
            } else if let Some(n) = extra.get_mut(raw).filter(|n| **n > 0) {
                *n -= 1;
            } else {
                return Err(GuardViolation::Altered {
                    path: out.block_path(b.msg as usize, b.pos as usize),
                    fingerprint: fingerprint(raw),
                });
            }
        }
        let missing: usize = left.values().sum();
        if missing > reported_removed {
            let (raw, (msg, pos)) = self
                .counts
                .iter()
                .filter(|(k, _)| left.get(*k).is_some_and(|n| *n > 0))
                .map(|(k, (_, at))| (*k, *at))
                .min_by_key(|(_, at)| *at)
                .unwrap_or(("", (0, 0)));
            return Err(GuardViolation::Unreported {
                missing: missing - reported_removed,
                first_path: self.path(msg as usize, pos as usize),
                fingerprint: fingerprint(raw),
            });
        }
        Ok(())
    }

    /// The input path of block `pos` of message `msg`.
    fn path(&self, msg: usize, pos: usize) -> String {
        self.paths
            .map(|p| turnkeeper_model::view::block_path(p.format, p.body, msg, pos))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnkeeper_model::{Draft, FormatHint, read};

    const BODY: &str = r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"a\u00e9","signature":"EqQB"},{"type":"text","text":"x"}]},{"role":"user","content":"r"}]}"#;

    #[test]
    fn hex_writes_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        let every: Vec<u8> = (0..=255).collect();
        let h = hex(&every);
        assert_eq!(h.len(), 512);
        for (b, pair) in every.iter().zip(h.as_bytes().chunks(2)) {
            assert_eq!(pair, format!("{b:02x}").as_bytes(), "byte {b}");
        }
    }

    #[test]
    fn unchanged_output_passes() {
        let t = read(BODY, FormatHint::Auto).expect("reads");
        let l = Ledger::take(&t);
        assert_eq!(l.len(), 1);
        assert_eq!(l.verify(&t, 0), Ok(()));
    }

    #[test]
    fn altered_thinking_is_caught() {
        let t = read(BODY, FormatHint::Auto).expect("reads");
        let l = Ledger::take(&t);
        let altered = BODY.replace(r#""a\u00e9""#, r#""aé""#);
        let t2 = read(&altered, FormatHint::Auto).expect("reads");
        assert!(matches!(
            l.verify(&t2, 0),
            Err(GuardViolation::Altered { .. })
        ));
    }

    /// Reads `body` and lists, block by block in reading order, whether it is guarded.
    fn check(body: &str, expect: &[bool]) {
        let t = read(body, FormatHint::Auto).expect("reads");
        let got: Vec<bool> = t.blocks.iter().map(is_guarded).collect();
        assert_eq!(got, expect, "{body}");
    }

    #[test]
    fn guarded_blocks_are_thinking_and_gemini_parts_with_a_signature() {
        check(BODY, &[true, false]);
        check(
            r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"redacted_thinking","data":"EqQB"},{"type":"text","text":"x","signature":"EqQBCkYIBxgC"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]}]}"#,
            &[true, false, false],
        );
        check(
            r#"{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"text":"a","thoughtSignature":"EqQBCkYIBxgC"},{"functionCall":{"name":"f","args":{}}},{"text":"b"}]}]}"#,
            &[false, true, false, false],
        );
    }

    #[test]
    fn fingerprints_are_the_first_eight_bytes_of_sha256_in_hex() {
        // SHA-256("abc") = ba7816bf8f01cfea 414140de5dae2223 ... (FIPS 180-2, appendix B.1).
        assert_eq!(fingerprint("abc"), "ba7816bf8f01cfea");
        assert_eq!(fingerprint(""), "e3b0c44298fc1c14");
    }

    /// Two assistant turns, each with one thinking block: `A` at `messages[1].content[0]` and
    /// `B` at `messages[3].content[1]`.
    const TWO: &str = r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"A","signature":"EqQBCkYI"},{"type":"text","text":"x"}]},{"role":"user","content":"r"},{"role":"assistant","content":[{"type":"text","text":"y"},{"type":"thinking","thinking":"B","signature":"EqQBCkYI"}]},{"role":"user","content":"s"}]}"#;

    /// `TWO` with message `msg`'s block `pos` removed.
    fn without(msg: usize, pos: usize) -> String {
        let t = read(TWO, FormatHint::Auto).expect("reads");
        let mut d = Draft::new(&t);
        d.remove_block(msg, pos);
        d.output().into_owned()
    }

    #[test]
    fn a_ledger_counts_its_blocks_and_the_restored_ones() {
        let t = read(TWO, FormatHint::Auto).expect("reads");
        let mut l = Ledger::take(&t);
        assert_eq!((l.len(), l.is_empty()), (2, false));
        l.allow_restored(r#"{"type":"thinking","thinking":"C","signature":"EqQBCkYI"}"#);
        assert_eq!(l.len(), 3);
        let plain = read(
            r#"{"messages":[{"role":"user","content":"q"}]}"#,
            FormatHint::Auto,
        )
        .expect("reads");
        let empty = Ledger::take(&plain);
        assert_eq!((empty.len(), empty.is_empty()), (0, true));
        assert_eq!(
            (Ledger::default().len(), Ledger::default().is_empty()),
            (0, true)
        );
    }

    /// A ledger of some messages holds their blocks only, and checks the listed messages of
    /// the output against them: `A` (message 1) and `B` (message 3) of `TWO`.
    #[test]
    fn a_ledger_of_listed_messages_checks_the_listed_messages() {
        let t = read(TWO, FormatHint::Auto).expect("reads");
        let only_b = Ledger::take_messages(&t, [3]);
        assert_eq!(only_b.len(), 1);
        assert_eq!(Ledger::take_messages(&t, [0, 2, 4]).len(), 0);
        // Message 3 unchanged passes; message 1 is not looked at.
        assert_eq!(only_b.verify_messages(&t, [3], 0), Ok(()));
        // B gone from message 3: unreported, then reported.
        let b_gone = without(3, 1);
        let out = read(&b_gone, FormatHint::Auto).expect("reads");
        assert!(matches!(
            only_b.verify_messages(&out, [3], 0),
            Err(GuardViolation::Unreported { missing: 1, .. })
        ));
        assert_eq!(only_b.verify_messages(&out, [3], 1), Ok(()));
        // A, which this ledger does not hold, found in a listed message: altered or invented.
        assert!(matches!(
            only_b.verify_messages(&t, [1, 3], 0),
            Err(GuardViolation::Altered { .. })
        ));
        // B altered in message 3.
        let altered = TWO.replace(r#""thinking":"B""#, r#""thinking":"b""#);
        let out = read(&altered, FormatHint::Auto).expect("reads");
        assert!(matches!(
            only_b.verify_messages(&out, [3], 0),
            Err(GuardViolation::Altered { .. })
        ));
    }

    #[test]
    fn the_first_unreported_removal_is_named_by_its_input_path() {
        let t = read(TWO, FormatHint::Auto).expect("reads");
        let l = Ledger::take(&t);
        let b_gone = without(3, 1);
        let out = read(&b_gone, FormatHint::Auto).expect("reads");
        let b = r#"{"type":"thinking","thinking":"B","signature":"EqQBCkYI"}"#;
        assert_eq!(
            l.verify(&out, 0),
            Err(GuardViolation::Unreported {
                missing: 1,
                first_path: "messages[3].content[1]".to_owned(),
                fingerprint: fingerprint(b),
            })
        );
        // Both gone, one reported: one is still unaccounted for, and the first is `A`.
        let t1 = read(&b_gone, FormatHint::Auto).expect("reads");
        let mut d = Draft::new(&t1);
        d.remove_block(1, 0);
        let both_gone = d.output().into_owned();
        let out = read(&both_gone, FormatHint::Auto).expect("reads");
        assert_eq!(
            l.verify(&out, 1),
            Err(GuardViolation::Unreported {
                missing: 1,
                first_path: "messages[1].content[0]".to_owned(),
                fingerprint: fingerprint(
                    r#"{"type":"thinking","thinking":"A","signature":"EqQBCkYI"}"#
                ),
            })
        );
        assert_eq!(l.verify(&out, 2), Ok(()));
    }

    #[test]
    fn a_block_is_accounted_for_as_often_as_it_was_recorded() {
        let a = r#"{"type":"thinking","thinking":"A","signature":"EqQBCkYI"}"#;
        let c = r#"{"type":"thinking","thinking":"C","signature":"EqQBCkYI"}"#;
        let t = read(TWO, FormatHint::Auto).expect("reads");
        let mut l = Ledger::take(&t);
        // `A` copied into the last turn: the input had it once.
        let twice_a = TWO.replace(r#"{"type":"text","text":"y"}"#, a);
        let out = read(&twice_a, FormatHint::Auto).expect("reads");
        assert_eq!(
            l.verify(&out, 0),
            Err(GuardViolation::Altered {
                path: "messages[3].content[0]".to_owned(),
                fingerprint: fingerprint(a),
            })
        );
        // A restored block passes once it is allowed, and as many times as it is.
        let one_c = TWO.replace(r#"{"type":"text","text":"y"}"#, c);
        let two_c = one_c.replace(r#"{"type":"text","text":"x"}"#, c);
        let out1 = read(&one_c, FormatHint::Auto).expect("reads");
        let out2 = read(&two_c, FormatHint::Auto).expect("reads");
        assert_eq!(
            l.verify(&out1, 0),
            Err(GuardViolation::Altered {
                path: "messages[3].content[0]".to_owned(),
                fingerprint: fingerprint(c),
            })
        );
        l.allow_restored(c);
        assert_eq!(l.verify(&out1, 0), Ok(()));
        assert_eq!(
            l.verify(&out2, 0),
            Err(GuardViolation::Altered {
                path: "messages[3].content[0]".to_owned(),
                fingerprint: fingerprint(c),
            })
        );
        l.allow_restored(c);
        assert_eq!(l.verify(&out2, 0), Ok(()));
    }

    #[test]
    fn unreported_removal_is_caught_and_reported_one_passes() {
        let t = read(BODY, FormatHint::Auto).expect("reads");
        let l = Ledger::take(&t);
        let mut d = Draft::new(&t);
        d.remove_block(1, 0);
        let out = d.output();
        let t2 = read(&out, FormatHint::Auto).expect("reads");
        assert!(matches!(
            l.verify(&t2, 0),
            Err(GuardViolation::Unreported { missing: 1, .. })
        ));
        assert_eq!(l.verify(&t2, 1), Ok(()));
    }
}
