//! Readings of recent request bodies, kept so that the next request of the same conversation
//! is read at the cost of what it adds.
//!
//! An agent sends its whole conversation with every request: the body of one request is the body
//! of the one before with a turn or two more. So the readings of the last few request bodies are
//! kept (the body itself and what its reader found in its messages: their blocks for Messages
//! and Gemini, their tool calls for Chat, the input items for Responses), and a new body is read
//! against the closest kept one ([`turnkeeper_model::read_against`],
//! `wire::chat::read_against`, `wire::responses::read_against`, over the kept body's bytes,
//! which are only compared with the new text and so are not checked as UTF-8 again): each of
//! its messages that is, byte for byte, the message at the same place in the kept body has that
//! message's reading moved over instead of being scanned again. The comparison is the
//! guarantee: a message that differs in one byte is read afresh, and the reading is the one the
//! body gets read alone (the model's contract, tested there, in the testkit's invariants 6 and
//! of the wire families, and in this crate's tests). Only the reading is reused; every rule still judges every message.
//!
//! Which kept reading a body is read against: the one of the same format whose body begins with
//! the longest run of the same bytes (up to [`COMPARED`] bytes), the most recent on a tie. It is
//! taken out while the new body is read (two requests never share one), and when the new body
//! reused a message of it, the new reading replaces it (the conversation grew); otherwise it goes
//! back beside the new one.
//!
//! Bounded: at most `Config::keep_readings` readings, of bodies of at most [`MAX_BODY`] bytes
//! and at most [`MAX_TOTAL`] bytes in all, bodies and readings; the oldest go first. A reading
//! let go hands its body to `on_drop` (the proxy's kept buffers).

use std::sync::Mutex;

use bytes::Bytes;
use turnkeeper_model::wire::Member;
use turnkeeper_model::wire::chat::{self, ChatMessage};
use turnkeeper_model::wire::responses::{self, Item};
use turnkeeper_model::{
    Block, BodyKind, Earlier, Format, FormatHint, Message, ModelError, Transcript, read,
    read_against,
};
use turnkeeper_prevent::wire::WireBody;

/// How many bytes at the start of two bodies are compared to choose the kept reading.
pub(crate) const COMPARED: usize = 64 * 1024;

/// The largest body whose reading is kept.
pub(crate) const MAX_BODY: usize = 16 * 1024 * 1024;

/// The most bytes kept in all: bodies and their readings.
pub(crate) const MAX_TOTAL: usize = 64 * 1024 * 1024;

/// What is kept of a reading: what the next reading moves over, without the body's settings.
#[derive(Debug)]
pub(crate) enum Parts {
    /// A Messages or Gemini request's messages and their blocks.
    Blocks {
        messages: Vec<Message>,
        blocks: Vec<Block>,
    },
    /// A Chat Completions request's messages and their tool calls' members.
    Chat {
        messages: Vec<ChatMessage>,
        call_members: Vec<Member>,
    },
    /// A Responses request's input items.
    Responses { items: Vec<Item> },
}

/// One kept reading.
#[derive(Debug)]
struct Kept {
    format: Format,
    body: Bytes,
    parts: Parts,
}

impl Kept {
    /// The bytes it holds: its body and its reading's vectors (not what those point to on the
    /// heap in turn: a message's member list, a few dozen bytes).
    fn weight(&self) -> usize {
        fn of<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        self.body.len()
            + match &self.parts {
                Parts::Blocks { messages, blocks } => of(messages) + of(blocks),
                Parts::Chat {
                    messages,
                    call_members,
                } => of(messages) + of(call_members),
                Parts::Responses { items } => of(items),
            }
    }
}

/// A reading the proxy can keep: a Messages or Gemini [`Transcript`], or a Chat or Responses
/// [`WireBody`].
pub(crate) trait Keepable<'a>: Sized {
    /// Reads `text` as `format`, alone.
    fn read_alone(text: &'a str, format: Format) -> Result<Self, ModelError>;
    /// Reads `text` as `format` against `prev`, kept over the bytes `prev_text` (compared with
    /// `text`, never read as text, so not checked as UTF-8 again): the reading and how many
    /// messages were moved over. A `prev` of another kind is not used.
    fn read_against(
        text: &'a str,
        format: Format,
        prev_text: &[u8],
        prev: &Parts,
    ) -> Result<(Self, usize), ModelError>;
    /// What is kept of it, when it is a request's reading.
    fn into_parts(self) -> Option<(Format, Parts)>;
}

impl<'a> Keepable<'a> for Transcript<'a> {
    fn read_alone(text: &'a str, format: Format) -> Result<Self, ModelError> {
        read(text, FormatHint::Exactly(format))
    }

    fn read_against(
        text: &'a str,
        format: Format,
        prev_text: &[u8],
        prev: &Parts,
    ) -> Result<(Self, usize), ModelError> {
        let Parts::Blocks { messages, blocks } = prev else {
            return Self::read_alone(text, format).map(|t| (t, 0));
        };
        let earlier = Earlier {
            src: prev_text,
            format,
            messages,
            blocks,
        };
        let keep: Vec<Option<u32>> = (0..messages.len() as u32).map(Some).collect();
        read_against(text, &earlier, &keep, None)
            .map(|(t, copies)| (t, copies.iter().filter(|c| c.is_some()).count()))
    }

    fn into_parts(self) -> Option<(Format, Parts)> {
        (self.body == BodyKind::Request).then_some((
            self.format,
            Parts::Blocks {
                messages: self.messages,
                blocks: self.blocks,
            },
        ))
    }
}

impl<'a> Keepable<'a> for WireBody<'a> {
    fn read_alone(text: &'a str, format: Format) -> Result<Self, ModelError> {
        WireBody::read(text, format)
    }

    fn read_against(
        text: &'a str,
        format: Format,
        prev_text: &[u8],
        prev: &Parts,
    ) -> Result<(Self, usize), ModelError> {
        match prev {
            Parts::Chat {
                messages,
                call_members,
            } => {
                let earlier = chat::Earlier {
                    src: prev_text,
                    messages,
                    call_members,
                };
                chat::read_against(text, earlier).map(|(b, n)| (WireBody::Chat(b), n))
            }
            Parts::Responses { items } => {
                let earlier = responses::Earlier {
                    src: prev_text,
                    items,
                };
                responses::read_against(text, earlier).map(|(b, n)| (WireBody::Responses(b), n))
            }
            Parts::Blocks { .. } => Self::read_alone(text, format).map(|b| (b, 0)),
        }
    }

    fn into_parts(self) -> Option<(Format, Parts)> {
        Some(match self {
            WireBody::Chat(b) => (
                Format::Chat,
                Parts::Chat {
                    messages: b.messages,
                    call_members: b.call_members,
                },
            ),
            WireBody::Responses(b) => (Format::Responses, Parts::Responses { items: b.items }),
        })
    }
}

/// What [`Readings::read`] found: the reading, and the kept reading it was made against (to be
/// handed back to [`Readings::put`]).
#[derive(Debug)]
pub(crate) struct Reading<T> {
    /// The body's reading, equal to the one made alone.
    pub(crate) value: T,
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

    /// Reads `text` as `format`, against the kept reading that looks most like it when there
    /// is one.
    ///
    /// # Errors
    /// As reading `text` alone.
    pub(crate) fn read<'a, T: Keepable<'a>>(
        &self,
        text: &'a str,
        format: Format,
    ) -> Result<Reading<T>, ModelError> {
        let from = if self.keep == 0 {
            None
        } else {
            self.take_closest(text.as_bytes(), format)
        };
        let Some(from) = from else {
            return T::read_alone(text, format).map(|value| Reading {
                value,
                reused: 0,
                from: None,
            });
        };
        match T::read_against(text, format, &from.body, &from.parts) {
            Ok((value, reused)) => Ok(Reading {
                value,
                reused,
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
    pub(crate) fn put<'a, T: Keepable<'a>>(
        &self,
        body: Bytes,
        reading: Reading<T>,
        on_drop: impl FnMut(Bytes),
    ) {
        let Reading {
            value,
            reused,
            from,
        } = reading;
        let new = value
            .into_parts()
            .filter(|_| body.len() <= MAX_BODY)
            .map(|(format, parts)| Kept {
                format,
                body,
                parts,
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
        let mut total: usize = kept.iter().map(Kept::weight).sum();
        while kept.len() > self.keep || total > MAX_TOTAL {
            let old = kept.remove(0);
            total -= old.weight();
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
        let reading: Reading<Transcript<'_>> = r.read(text, Format::Anthropic).expect("reads");
        let own = read(text, FormatHint::Exactly(Format::Anthropic)).expect("reads");
        assert_eq!(format!("{:?}", reading.value), format!("{own:?}"));
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
        assert!(r.read::<Transcript<'_>>(text, Format::Anthropic).is_err());
        assert_eq!(r.len(), 1);
        assert_eq!(check(&r, &body("rust", 3)).0, 4);
    }

    #[test]
    fn readings_of_another_format_are_not_offered() {
        let r = Readings::new(8);
        check(&r, &body("rust", 2));
        let gemini = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
        let reading: Reading<Transcript<'_>> = r.read(gemini, Format::Gemini).expect("reads");
        assert_eq!(reading.reused, 0);
        assert!(reading.from.is_none());
        r.put(Bytes::from_static(gemini.as_bytes()), reading, drop);
        assert_eq!(r.len(), 2);
    }

    /// A Chat conversation of `turns` tool rounds (a call with its reasoning, its result).
    fn chat(turns: usize) -> String {
        let mut messages = vec![r#"{"role":"user","content":"roll a die"}"#.to_owned()];
        for k in 0..turns {
            messages.push(format!(
                r#"{{"role":"assistant","content":null,"reasoning_content":"thinking {k}","tool_calls":[{{"id":"call_{k}","type":"function","function":{{"name":"roll","arguments":"{{}}"}}}}]}}"#
            ));
            messages.push(format!(
                r#"{{"role":"tool","tool_call_id":"call_{k}","content":"{k}"}}"#
            ));
        }
        format!(
            r#"{{"model":"deepseek-reasoner","messages":[{}]}}"#,
            messages.join(",")
        )
    }

    /// A Responses input of `turns` rounds (a reasoning item, its call, the call's output).
    fn responses(turns: usize) -> String {
        let mut items = vec![r#"{"role":"user","content":"roll a die"}"#.to_owned()];
        for k in 0..turns {
            items.push(format!(
                r#"{{"type":"reasoning","id":"rs_{k}","summary":[],"encrypted_content":"gAAA{k}"}}"#
            ));
            items.push(format!(
                r#"{{"type":"function_call","id":"fc_{k}","call_id":"call_{k}","name":"roll","arguments":"{{}}"}}"#
            ));
            items.push(format!(
                r#"{{"type":"function_call_output","call_id":"call_{k}","output":"{k}"}}"#
            ));
        }
        format!(
            r#"{{"model":"gpt-5","store":false,"input":[{}]}}"#,
            items.join(",")
        )
    }

    /// Reads `text` as a wire body through `r`, checks it against its own reading, puts it back
    /// and says how many messages or items were moved over.
    fn check_wire(r: &Readings, text: &str, format: Format) -> usize {
        let reading: Reading<WireBody<'_>> = r.read(text, format).expect("reads");
        let own = WireBody::read(text, format).expect("reads");
        assert_eq!(format!("{:?}", reading.value), format!("{own:?}"));
        let reused = reading.reused;
        r.put(Bytes::from(text.to_owned()), reading, drop);
        reused
    }

    #[test]
    fn chat_and_responses_conversations_are_read_at_the_cost_of_what_they_add() {
        let r = Readings::new(8);
        assert_eq!(check_wire(&r, &chat(1), Format::Chat), 0);
        assert_eq!(check_wire(&r, &responses(1), Format::Responses), 0);
        // A round more each: the earlier messages (with their tool calls) and items move over.
        assert_eq!(check_wire(&r, &chat(2), Format::Chat), 3);
        assert_eq!(check_wire(&r, &responses(2), Format::Responses), 4);
        assert_eq!(check_wire(&r, &chat(3), Format::Chat), 5);
        assert_eq!(r.len(), 2);
        // The agent dropped a tool turn's reasoning: that message is read, the others move over.
        let dropped = chat(3).replacen(r#""reasoning_content":"thinking 1","#, "", 1);
        assert_eq!(check_wire(&r, &dropped, Format::Chat), 6);
    }

    #[test]
    fn the_bytes_kept_in_all_are_bounded() {
        let r = Readings::new(8);
        // Five different conversations of 15 MiB each (under the 16 MiB a body may have): 75 MiB,
        // over the 64 MiB bound, so the oldest goes.
        let big = |k: usize| {
            Bytes::from(format!(
                r#"{{"model":"claude-sonnet-4-5","messages":[{{"role":"user","content":"{k}{}"}}]}}"#,
                "x".repeat(15 * 1024 * 1024)
            ))
        };
        let mut dropped = Vec::new();
        for k in 0..5 {
            let b = big(k);
            let text = std::str::from_utf8(&b).expect("utf-8");
            let reading: Reading<Transcript<'_>> = r.read(text, Format::Anthropic).expect("reads");
            assert_eq!(reading.reused, 0, "another conversation each time");
            r.put(b.clone(), reading, |d| dropped.push(d.len()));
        }
        assert_eq!(r.len(), 4);
        assert_eq!(dropped, vec![big(0).len()]);
        // A body over 16 MiB is read but not kept.
        let huge = Bytes::from(format!(
            r#"{{"model":"claude-sonnet-4-5","messages":[{{"role":"user","content":"{}"}}]}}"#,
            "y".repeat(MAX_BODY)
        ));
        let text = std::str::from_utf8(&huge).expect("utf-8");
        let reading: Reading<Transcript<'_>> = r.read(text, Format::Anthropic).expect("reads");
        r.put(huge.clone(), reading, drop);
        assert_eq!(r.len(), 4);
    }

    /// A kept reading of `n` body bytes with nothing in its reading.
    fn kept_of(n: usize) -> Kept {
        Kept {
            format: Format::Responses,
            body: Bytes::from(vec![b' '; n]),
            parts: Parts::Responses { items: Vec::new() },
        }
    }

    #[test]
    fn a_reading_weighs_its_body_and_its_vectors() {
        use std::mem::size_of;
        let body = Bytes::from_static(b"0123456789");
        let chat = Kept {
            format: Format::Chat,
            body: body.clone(),
            parts: Parts::Chat {
                messages: Vec::with_capacity(3),
                call_members: Vec::with_capacity(5),
            },
        };
        assert_eq!(
            chat.weight(),
            10 + 3 * size_of::<ChatMessage>() + 5 * size_of::<Member>()
        );
        let blocks = Kept {
            format: Format::Anthropic,
            body: body.clone(),
            parts: Parts::Blocks {
                messages: Vec::with_capacity(2),
                blocks: Vec::with_capacity(7),
            },
        };
        assert_eq!(
            blocks.weight(),
            10 + 2 * size_of::<Message>() + 7 * size_of::<Block>()
        );
        let items = Kept {
            format: Format::Responses,
            body,
            parts: Parts::Responses {
                items: Vec::with_capacity(4),
            },
        };
        assert_eq!(items.weight(), 10 + 4 * size_of::<Item>());
    }

    #[test]
    fn readings_up_to_the_bound_stay_and_the_oldest_go_until_under_it() {
        let r = Readings::new(8);
        // Exactly at the bound: both stay.
        r.give_back_with(
            Some(kept_of(MAX_TOTAL / 2)),
            Some(kept_of(MAX_TOTAL / 2)),
            &mut |_| panic!("nothing goes at the bound"),
        );
        assert_eq!(r.len(), 2);
        // Three of 40 MiB: the two oldest go, one after the other, until under the bound.
        let r = Readings::new(8);
        let mut gone = 0;
        let forty = 40 * 1024 * 1024;
        r.give_back_with(Some(kept_of(forty)), None, &mut |_| gone += 1);
        r.give_back_with(Some(kept_of(forty)), Some(kept_of(forty)), &mut |_| {
            gone += 1
        });
        assert_eq!((r.len(), gone), (1, 2));
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
        // A difference at a chunk's first or last byte, or next to one, ends the count there.
        for at in [0, 1, 255, 256, 257, 511, 512, 999] {
            let mut c = a.clone();
            c[at] = 9;
            assert_eq!(common_prefix(&a, &c), at, "a difference at {at}");
            assert_eq!(
                common_prefix(&c, &a),
                at,
                "a difference at {at}, the other way"
            );
        }
    }
}
