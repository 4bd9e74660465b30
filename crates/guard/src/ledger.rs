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
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
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
