//! Readings of recent request bodies, kept so that the next request of the same conversation
//! is read at the cost of what it adds.
//!
//! An agent sends its whole conversation with every request: the body of one request is the body
//! of the one before with a turn or two more. Reading a megabyte costs the proxy most of its own
//! time before forwarding (BENCHMARKS.md, "The proxy"); comparing a megabyte with the bytes of the
//! last request costs a tenth of that. So the readings of the last few request bodies are kept
//! (the body itself, its messages and their blocks), and a new body is read with
//! [`turnkeeper_model::read_reusing`]: each of its messages that is, byte for byte, the message
//! at the same place in a kept body has that message's reading moved over instead of being
//! scanned again. The comparison is the guarantee: a message that differs in one byte is read
//! afresh, and the reading is the one [`turnkeeper_model::read`] gives (the model's contract,
//! tested there and in this crate's tests). Only the reading is reused; every rule still judges
//! every message.
//!
//! Which kept reading a body is read against: the one of the same format whose body begins with
//! the longest run of the same bytes (up to [`COMPARED`] bytes), the most recent on a tie. It is
//! taken out while the new body is read (two requests never share one), and when the new body
//! reused a message of it, the new reading replaces it (the conversation grew); otherwise it goes
//! back beside the new one.
//!
//! Bounded: at most `Config::keep_readings` readings, of bodies of at most [`MAX_BODY`] bytes
//! and at most [`MAX_TOTAL`] bytes in all; the oldest go first. A reading let go hands its body
//! to `on_drop` (the proxy's kept buffers).

use std::sync::Mutex;

use bytes::Bytes;
use turnkeeper_model::{
    Block, BodyKind, Format, FormatHint, Message, ModelError, Transcript, read, read_reusing_copies,
};

/// How many bytes at the start of two bodies are compared to choose the kept reading.
pub(crate) const COMPARED: usize = 64 * 1024;

/// The largest body whose reading is kept.
pub(crate) const MAX_BODY: usize = 16 * 1024 * 1024;

/// The most body bytes kept in all.
pub(crate) const MAX_TOTAL: usize = 64 * 1024 * 1024;

/// One kept reading.
#[derive(Debug)]
struct Kept {
    format: Format,
    body: Bytes,
    messages: Vec<Message>,
    blocks: Vec<Block>,
}

/// What [`Readings::read`] found: the reading, and the kept reading it was made against (to be
/// handed back to [`Readings::put`]).
#[derive(Debug)]
pub(crate) struct Reading<'a> {
    /// The body's reading, equal to [`turnkeeper_model::read`]'s.
    pub(crate) transcript: Transcript<'a>,
    /// How many of its messages were moved over from a kept reading.
    pub(crate) reused: usize,
    from: Option<Kept>,
}

/// The kept readings.
#[derive(Debug)]
pub(crate) struct Readings {
    keep: usize,
    kept: Mutex<Vec<Kept>>,
}

impl Readings {
    /// Keeps at most `keep` readings (0: none, every body is read whole).
    pub(crate) fn new(keep: usize) -> Readings {
        Readings {
            keep,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Reads `text` (the UTF-8 of `body`) as `format`, against the kept reading that looks most
    /// like it when there is one.
    ///
    /// # Errors
    /// As [`turnkeeper_model::read`].
    pub(crate) fn read<'a>(
        &self,
        text: &'a str,
        format: Format,
    ) -> Result<Reading<'a>, ModelError> {
        let from = if self.keep == 0 {
            None
        } else {
            self.take_closest(text.as_bytes(), format)
        };
        let Some(from) = from else {
            let transcript = read(text, FormatHint::Exactly(format))?;
            return Ok(Reading {
                transcript,
                reused: 0,
                from: None,
            });
        };
        let prev = Transcript {
            src: utf8_of(&from.body),
            format: from.format,
            body: BodyKind::Request,
            root: Default::default(),
            messages_span: None,
            messages: from.messages,
            blocks: from.blocks,
            meta: Default::default(),
        };
        let keep: Vec<Option<u32>> = (0..prev.messages.len() as u32).map(Some).collect();
        let res = read_reusing_copies(text, &prev, &keep, None);
        let from = Kept {
            format: from.format,
            body: from.body.clone(),
            messages: prev.messages,
            blocks: prev.blocks,
        };
        match res {
            Ok((transcript, copies)) => Ok(Reading {
                transcript,
                reused: copies.iter().filter(|c| c.is_some()).count(),
                from: Some(from),
            }),
            Err(e) => {
                self.give_back_with(Some(from), None, &mut |_| {});
                Err(e)
            }
        }
    }

    /// After the request: keeps `reading` (of `body`) when it is a request's, replacing the kept
    /// reading it was made against when it reused any of its messages; hands back every body
    /// let go to `on_drop`.
    pub(crate) fn put(&self, body: Bytes, reading: Reading<'_>, on_drop: impl FnMut(Bytes)) {
        let Reading {
            transcript,
            reused,
            from,
        } = reading;
        let new = (transcript.body == BodyKind::Request && body.len() <= MAX_BODY).then(|| Kept {
            format: transcript.format,
            body,
            messages: transcript.messages,
            blocks: transcript.blocks,
        });
        let mut on_drop = on_drop;
        match from {
            // The conversation grew: the new reading takes the old one's place.
            Some(old) if reused > 0 => {
                on_drop(old.body);
                self.give_back_with(new, None, &mut on_drop);
            }
            from => self.give_back_with(from, new, &mut on_drop),
        }
    }

    /// The kept reading of `format` whose body shares the longest beginning with `body`, taken
    /// out; none when nothing of that format is kept.
    fn take_closest(&self, body: &[u8], format: Format) -> Option<Kept> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let head = &body[..body.len().min(COMPARED)];
        // Newest last: `max_by_key` keeps the last of equal keys, the most recent.
        let best = kept
            .iter()
            .enumerate()
            .filter(|(_, k)| k.format == format)
            .max_by_key(|(_, k)| common_prefix(head, &k.body))
            .map(|(i, _)| i)?;
        Some(kept.remove(best))
    }

    /// Puts `a`, then `b`, back as the newest readings, letting the oldest go over the limits.
    fn give_back_with(&self, a: Option<Kept>, b: Option<Kept>, on_drop: &mut impl FnMut(Bytes)) {
        if self.keep == 0 {
            for k in [a, b].into_iter().flatten() {
                on_drop(k.body);
            }
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.extend([a, b].into_iter().flatten());
        let mut total: usize = kept.iter().map(|k| k.body.len()).sum();
        while kept.len() > self.keep || total > MAX_TOTAL {
            let old = kept.remove(0);
            total -= old.body.len();
            on_drop(old.body);
        }
    }

    /// How many readings are kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// How many bytes `a` and `b` share at their start.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    // Compared in chunks, so the comparison runs at memcmp's speed.
    const CHUNK: usize = 256;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// The text of a kept body: it was read as UTF-8 before it was kept.
fn utf8_of(body: &Bytes) -> &str {
    // A kept body was valid UTF-8 when it was read, and `Bytes` never changes; were it ever
    // not, the empty text reuses nothing (every comparison fails) and the body is read whole.
    turnkeeper_model::utf8(body).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Anthropic request of `turns` user/assistant exchanges about `topic`.
    fn body(topic: &str, turns: usize) -> Bytes {
        let mut messages = Vec::new();
        for k in 0..turns {
            messages.push(format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"{topic} question {k}"}}]}}"#
            ));
            messages.push(format!(
                r#"{{"role":"assistant","content":[{{"type":"text","text":"{topic} answer {k}"}}]}}"#
            ));
        }
        messages.push(format!(
            r#"{{"role":"user","content":"{topic} question {turns}"}}"#
        ));
        Bytes::from(format!(
            r#"{{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{}]}}"#,
            messages.join(",")
        ))
    }

    /// Reads `b` through `r`, checks the reading against a reading of its own, puts it back,
    /// and says how many messages were moved over and which bodies were let go.
    fn check(r: &Readings, b: &Bytes) -> (usize, Vec<Bytes>) {
        let text = std::str::from_utf8(b).expect("utf-8");
        let reading = r.read(text, Format::Anthropic).expect("reads");
        let own = read(text, FormatHint::Exactly(Format::Anthropic)).expect("reads");
        assert_eq!(format!("{:?}", reading.transcript), format!("{own:?}"));
        let reused = reading.reused;
        let mut dropped = Vec::new();
        r.put(b.clone(), reading, |d| dropped.push(d));
        (reused, dropped)
    }

    #[test]
    fn a_conversation_that_grows_is_read_at_the_cost_of_what_it_adds() {
        let r = Readings::new(8);
        let (b1, b2, b3) = (body("rust", 2), body("rust", 3), body("rust", 4));
        assert_eq!(check(&r, &b1), (0, vec![]));
        // The second request repeats the first one's four exchanges' messages; its fifth, the
        // user's last, changed from string content to blocks, so it is read.
        let (reused, dropped) = check(&r, &b2);
        assert_eq!(reused, 4);
        assert_eq!(dropped, vec![b1]);
        assert_eq!(r.len(), 1);
        assert_eq!(check(&r, &b3).0, 6);
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn two_conversations_at_once_keep_a_reading_each() {
        let r = Readings::new(8);
        assert_eq!(check(&r, &body("rust", 2)).0, 0);
        assert_eq!(check(&r, &body("go", 2)).0, 0);
        assert_eq!(r.len(), 2);
        assert_eq!(check(&r, &body("rust", 3)).0, 4);
        assert_eq!(check(&r, &body("go", 3)).0, 4);
        assert_eq!(check(&r, &body("rust", 4)).0, 6);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn a_changed_message_is_read_afresh() {
        let r = Readings::new(8);
        check(&r, &body("rust", 3));
        // The same conversation (seven messages), one early word changed: the six around it are
        // moved over, the changed one is read, and the reading is the body's own.
        let changed = String::from_utf8(body("rust", 3).to_vec())
            .expect("utf-8")
            .replacen("rust answer 0", "rust answer X", 1);
        assert_eq!(check(&r, &Bytes::from(changed)).0, 6);
    }

    #[test]
    fn the_oldest_reading_goes_first_and_none_is_kept_when_told_so() {
        let r = Readings::new(2);
        check(&r, &body("a", 1));
        check(&r, &body("b", 1));
        let (_, dropped) = check(&r, &body("c", 1));
        assert_eq!(dropped, vec![body("a", 1)]);
        assert_eq!(r.len(), 2);

        let none = Readings::new(0);
        let (reused, dropped) = check(&none, &body("a", 1));
        assert_eq!((reused, dropped), (0, vec![body("a", 1)]));
        assert_eq!(check(&none, &body("a", 2)).0, 0);
        assert_eq!(none.len(), 0);
    }

    #[test]
    fn a_body_that_does_not_read_leaves_the_kept_reading_in_place() {
        let r = Readings::new(8);
        check(&r, &body("rust", 2));
        let broken = &body("rust", 3)[..40];
        let text = std::str::from_utf8(broken).expect("utf-8");
        assert!(r.read(text, Format::Anthropic).is_err());
        assert_eq!(r.len(), 1);
        assert_eq!(check(&r, &body("rust", 3)).0, 4);
    }

    #[test]
    fn readings_of_another_format_are_not_offered() {
        let r = Readings::new(8);
        check(&r, &body("rust", 2));
        let gemini = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
        let reading = r.read(gemini, Format::Gemini).expect("reads");
        assert_eq!(reading.reused, 0);
        assert!(reading.from.is_none());
        r.put(Bytes::from_static(gemini.as_bytes()), reading, drop);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn common_prefix_counts_the_shared_start() {
        let a = vec![7u8; 1000];
        let mut b = a.clone();
        assert_eq!(common_prefix(&a, &b), 1000);
        b[600] = 8;
        assert_eq!(common_prefix(&a, &b), 600);
        assert_eq!(common_prefix(&a[..10], &b), 10);
        assert_eq!(common_prefix(b"", &b), 0);
    }
}
