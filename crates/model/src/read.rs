//! Readers: one scan of the input fills a [`Transcript`].
//!
//! Each reader walks the shape its format defines and records spans; every value it does not need
//! is skipped (validated, not materialised). Field names and block types follow the Anthropic SDK
//! request types (api-rules.md §1.1), Gemini's `Content`/`Part` (api-rules.md §2.1, python-genai
//! `types.py`) and OpenCode's message and part records (seed 003).

use std::borrow::Cow;
use std::cell::RefCell;

use crate::behind::{ReadBehind, Sweep};
use crate::error::ModelError;
use crate::json::{Kind, Scanner, Span, StrSpan, SyntaxError};
use crate::view::{
    Block, BlockKind, BodyKind, Content, Format, Message, RequestMeta, Role, Summary, Transcript,
};

/// A path segment, collected while an error bubbles up.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// An error inside a reader: a syntax error or a shape error, with the path to where it happened.
#[derive(Debug)]
struct ReadErr {
    path: Vec<Seg>,
    offset: usize,
    message: Cow<'static, str>,
    syntax: bool,
}

impl From<SyntaxError> for ReadErr {
    fn from(e: SyntaxError) -> Self {
        ReadErr {
            path: Vec::new(),
            offset: e.offset,
            message: e.message,
            syntax: true,
        }
    }
}

impl ReadErr {
    fn shape(offset: usize, message: impl Into<Cow<'static, str>>) -> Self {
        ReadErr {
            path: Vec::new(),
            offset,
            message: message.into(),
            syntax: false,
        }
    }
    fn at_key(mut self, key: &str) -> Self {
        self.path.push(Seg::Key(key.to_owned()));
        self
    }
    fn at_index(mut self, i: usize) -> Self {
        self.path.push(Seg::Index(i));
        self
    }
    fn into_model_error(self, src: &str) -> ModelError {
        let mut path = String::new();
        for seg in self.path.iter().rev() {
            match seg {
                Seg::Key(k) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                }
                Seg::Index(i) => {
                    path.push('[');
                    path.push_str(&i.to_string());
                    path.push(']');
                }
            }
        }
        let (line, column) = line_col(src, self.offset);
        if self.syntax {
            ModelError::Syntax {
                path,
                offset: self.offset,
                line,
                column,
                message: self.message,
            }
        } else {
            ModelError::Shape {
                path,
                offset: self.offset,
                message: self.message,
            }
        }
    }
}

type R<T> = std::result::Result<T, ReadErr>;

pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = src.get(..offset.min(src.len())).unwrap_or("");
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |p| p + 1) + 1;
    (line, column)
}

/// Compares a key with a plain ASCII name, decoding escapes only when the key has them.
fn key_is(src: &str, key: StrSpan, name: &str) -> bool {
    if key.escaped {
        key.decode(src) == name
    } else {
        key.raw(src) == name
    }
}

fn key_str(src: &str, key: StrSpan) -> Cow<'_, str> {
    key.decode(src)
}

/// Which format to read. `Auto` sniffs the top-level shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FormatHint {
    /// Sniff: `messages` → Anthropic request; `contents` → Gemini; a top-level array of
    /// `{info, parts}` → OpenCode; `{"type":"message", "content": [...]}` → Anthropic response.
    #[default]
    Auto,
    /// Read as this format.
    Exactly(Format),
}

/// Reads a transcript from text.
///
/// # Errors
/// A [`ModelError`] naming the place (`messages[3].content[2]: ...`) for invalid JSON, a wrong
/// shape, or an input whose format cannot be told.
///
/// # Example
/// ```
/// use turnkeeper_model::{read, FormatHint, Format};
/// let body = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#;
/// let t = read(body, FormatHint::Auto)?;
/// assert_eq!(t.format, Format::Anthropic);
/// assert_eq!(t.messages.len(), 1);
/// # Ok::<(), turnkeeper_model::ModelError>(())
/// ```
pub fn read(src: &str, hint: FormatHint) -> Result<Transcript<'_>, ModelError> {
    let format = match hint {
        FormatHint::Exactly(f) => f,
        FormatHint::Auto => sniff(src)?,
    };
    if !format.is_transcript() {
        return Err(ModelError::NotTranscript { format });
    }
    read_with(src, format, None)
}

/// Reads `src`, a text a repair made from `prev`'s, reusing `prev`'s reading of the messages it
/// holds unchanged. `keep[i] == Some(k)` says message `i` of `src` is message `k` of `prev`, byte
/// for byte (what [`Draft::kept`](crate::Draft::kept) returns). Each such message is compared
/// byte for byte with the original before its reading is moved over, and read afresh when it
/// differs, so a wrong `keep` costs time, never correctness. Everything else (the top level, the
/// messages a repair rebuilt) is scanned and validated as [`read`] does.
///
/// The result equals `read(src, FormatHint::Exactly(prev.format))`; it costs a scan of what
/// changed plus a byte comparison of the rest, instead of a scan of everything.
///
/// # Errors
/// As [`read`].
pub fn read_reusing<'a>(
    src: &'a str,
    prev: &Transcript<'_>,
    keep: &[Option<u32>],
) -> Result<Transcript<'a>, ModelError> {
    read_reusing_copies(src, prev, keep, None).map(|(t, _)| t)
}

/// [`read_reusing`], also saying which messages were reused: for each message of the result,
/// `Some(k)` when it was found to be message `k` of `prev` byte for byte (its bytes compared,
/// its reading moved over), `None` when it was scanned. No message of `prev` is reused twice
/// (a second claim on one is scanned instead), so the `Some`s name distinct messages. A check
/// that must see every changed byte (the thinking-block ledger) can leave the reused messages
/// out, as they are copies.
///
/// `behind`, when given, is told how far into `prev`'s text the comparisons have gone (see
/// [`ReadBehind`]).
///
/// # Errors
/// As [`read`].
pub fn read_reusing_copies<'a>(
    src: &'a str,
    prev: &Transcript<'_>,
    keep: &[Option<u32>],
    behind: Option<&dyn ReadBehind>,
) -> Result<(Transcript<'a>, Vec<Option<u32>>), ModelError> {
    if prev.body != BodyKind::Request {
        let t = read_with(src, prev.format, None)?;
        let copies = vec![None; t.messages.len()];
        return Ok((t, copies));
    }
    read_against(src, &Earlier::of(prev), keep, behind)
}

/// What is kept of an earlier request's reading to read a later request against: its format,
/// its messages and blocks, over the bytes of its text. The bytes need not be checked as UTF-8
/// again: they are only compared with the new text, which is.
#[derive(Clone, Copy, Debug)]
pub struct Earlier<'p> {
    /// The earlier request's text, as bytes.
    pub src: &'p [u8],
    /// Its format.
    pub format: Format,
    /// Its messages.
    pub messages: &'p [Message],
    /// Its blocks.
    pub blocks: &'p [Block],
}

impl<'p> Earlier<'p> {
    /// The earlier reading `prev` (a request's).
    pub fn of(prev: &'p Transcript<'_>) -> Earlier<'p> {
        Earlier {
            src: prev.src.as_bytes(),
            format: prev.format,
            messages: &prev.messages,
            blocks: &prev.blocks,
        }
    }

    /// The blocks of message `i`.
    fn blocks_of(&self, i: usize) -> &'p [Block] {
        crate::view::blocks_of(self.messages, self.blocks, i)
    }
}

/// [`read_reusing_copies`] against what is kept of an earlier request's reading (its format
/// is the one `src` is read as).
///
/// # Errors
/// As [`read`].
pub fn read_against<'a>(
    src: &'a str,
    prev: &Earlier<'_>,
    keep: &[Option<u32>],
    behind: Option<&dyn ReadBehind>,
) -> Result<(Transcript<'a>, Vec<Option<u32>>), ModelError> {
    let copies = RefCell::new(Copies {
        of: Vec::with_capacity(keep.len()),
        used: vec![false; prev.messages.len()],
    });
    let sweep = Sweep::begin(behind);
    let t = read_with(
        src,
        prev.format,
        Some(Reuse {
            prev,
            keep,
            copies: &copies,
            sweep: &sweep,
        }),
    )?;
    let mut of = copies.into_inner().of;
    of.resize(t.messages.len(), None);
    Ok((t, of))
}

/// The earlier reading [`read_reusing`] moves messages over from.
#[derive(Clone, Copy)]
struct Reuse<'p, 'q> {
    prev: &'q Earlier<'p>,
    keep: &'q [Option<u32>],
    copies: &'q RefCell<Copies>,
    /// Told of each message of `prev` compared ([`ReadBehind`]).
    sweep: &'q Sweep<'q>,
}

/// Which messages [`Reuse::take`] moved over: `of[i]`, the earlier message that message `i` is a
/// copy of; `used[k]`, whether earlier message `k` was moved over already.
struct Copies {
    of: Vec<Option<u32>>,
    used: Vec<bool>,
}

impl Reuse<'_, '_> {
    /// A new messages array begins (a duplicate key restarts it).
    fn restart(&self) {
        let mut c = self.copies.borrow_mut();
        c.of.clear();
        c.used.iter_mut().for_each(|u| *u = false);
    }

    /// When message `i` of the new text is a kept message of the earlier one, byte for byte,
    /// steps over it and appends its moved reading, already stamped with its place (so the
    /// caller does not [`stamp`] it again); otherwise leaves the scanner where it was and
    /// returns false.
    fn take(
        &self,
        s: &mut Scanner<'_>,
        i: usize,
        messages: &mut Vec<Message>,
        blocks: &mut Vec<Block>,
    ) -> bool {
        let Some(&Some(k)) = self.keep.get(i) else {
            return false;
        };
        let Some(m) = self.prev.messages.get(k as usize) else {
            return false;
        };
        let mut c = self.copies.borrow_mut();
        if c.used.get(k as usize).is_none_or(|u| *u) {
            return false;
        }
        s.skip_ws();
        let to = s.pos() as u32;
        if !m
            .span
            .bytes(self.prev.src)
            .is_some_and(|b| s.skip_verbatim(b))
        {
            return false;
        }
        self.sweep.past(m.span.end as usize);
        let from = m.span.start;
        let first = blocks.len() as u32;
        let at = messages.len() as u32;
        blocks.extend(self.prev.blocks_of(k as usize).iter().map(|b| {
            let mut b = b.moved(from, to);
            b.msg = at;
            b
        }));
        messages.push(m.moved(from, to, first));
        c.used[k as usize] = true;
        if c.of.len() <= i {
            c.of.resize(i + 1, None);
        }
        c.of[i] = Some(k);
        true
    }
}

fn read_with<'a>(
    src: &'a str,
    format: Format,
    reuse: Option<Reuse<'_, '_>>,
) -> Result<Transcript<'a>, ModelError> {
    let mut t = Transcript {
        src,
        format,
        body: BodyKind::Request,
        root: Span::default(),
        messages_span: None,
        // Enough for a short conversation without growing; `after_message` sizes longer ones. A
        // repaired body has about as many as the body it was made from.
        messages: Vec::with_capacity(reuse.map_or(8, |r| r.prev.messages.len() + 8)),
        blocks: Vec::with_capacity(reuse.map_or(16, |r| r.prev.blocks.len() + 16)),
        meta: RequestMeta::default(),
    };
    let res = (|| -> R<()> {
        let mut s = Scanner::new(src)?;
        match format {
            Format::Anthropic => read_anthropic_root(&mut s, &mut t, reuse)?,
            Format::Gemini => read_gemini_root(&mut s, &mut t, reuse)?,
            Format::Opencode => read_opencode_root(&mut s, &mut t)?,
            Format::Chat | Format::Responses | Format::Converse => {
                return Err(ReadErr::shape(0, "not a block transcript"));
            }
        }
        s.finish()?;
        Ok(())
    })();
    res.map_err(|e| e.into_model_error(src))?;
    Ok(t)
}

/// Tells message `i`'s blocks where they are (`msg`, `pos`) and records the message's
/// [`Summary`], while its blocks are still in cache.
fn stamp(messages: &mut [Message], blocks: &mut [Block], i: usize) {
    let Some(m) = messages.get_mut(i) else {
        return;
    };
    if let Content::Blocks { first, len } = m.content {
        let mut summary = Summary::default();
        let own = blocks
            .get_mut(first as usize..(first + len) as usize)
            .unwrap_or_default();
        for (j, b) in own.iter_mut().enumerate() {
            b.msg = i as u32;
            b.pos = j as u32;
            summary.add(b);
        }
        m.summary = summary;
    }
}

/// Reads one block (an Anthropic content block, a Gemini part, an OpenCode part) from `src`.
///
/// # Errors
/// When `src` is not exactly one valid JSON value.
pub fn read_block(format: Format, src: &str) -> Result<Block, ModelError> {
    let res = (|| -> R<Block> {
        let mut s = Scanner::new(src)?;
        let b = match format {
            Format::Anthropic => read_one(&mut s, fill_anthropic_block)?,
            Format::Gemini => read_one(&mut s, fill_gemini_part)?,
            Format::Opencode => read_one(&mut s, fill_opencode_part)?,
            Format::Chat | Format::Responses | Format::Converse => {
                return Err(ReadErr::shape(0, "not a block transcript"));
            }
        };
        s.finish()?;
        Ok(b)
    })();
    res.map_err(|e| e.into_model_error(src))
}

/// Reads bytes: checks UTF-8 first (naming the offset of the first invalid byte), then [`read`].
///
/// # Errors
/// [`ModelError::InvalidUtf8`], or any error of [`read`].
pub fn read_bytes(bytes: &[u8], hint: FormatHint) -> Result<Transcript<'_>, ModelError> {
    read(utf8(bytes)?, hint)
}

/// `bytes` as text, checked with SIMD instructions where the processor has them (`simdutf8`:
/// about twice as fast as `std::str::from_utf8` on JSON with some non-ASCII text, BENCHMARKS.md);
/// the offset of the first invalid byte is found by the standard library's check, on the
/// error path only.
///
/// # Errors
/// [`ModelError::InvalidUtf8`].
pub fn utf8(bytes: &[u8]) -> Result<&str, ModelError> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(_) => Err(ModelError::InvalidUtf8 {
            offset: std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len),
        }),
    }
}

/// Guesses the format from the top-level shape, looking at top-level keys only.
///
/// # Errors
/// [`ModelError::UnknownFormat`] when no format fits, or a syntax error in the part looked at.
pub fn sniff(src: &str) -> Result<Format, ModelError> {
    crate::sniff::sniff_detail(src).map(|s| s.format)
}

// ---------------------------------------------------------------------------------------------
// Anthropic

fn read_anthropic_root(
    s: &mut Scanner<'_>,
    t: &mut Transcript<'_>,
    reuse: Option<Reuse<'_, '_>>,
) -> R<()> {
    let src = s.src();
    // A response body's top-level `content` array, read into a list of its own: it becomes the
    // one message's blocks when there is no `messages` array, and is dropped when there is.
    let mut response_content: Option<Span> = None;
    let mut content_blocks: Vec<Block> = Vec::new();
    let mut role: Option<StrSpan> = None;
    let mut is_response = false;
    let mut blocks = std::mem::take(&mut t.blocks);
    let mut messages = std::mem::take(&mut t.messages);
    let mut meta = std::mem::take(&mut t.meta);
    let mut messages_span = None;
    if s.peek_kind()? != Kind::Object {
        return Err(ReadErr::shape(
            s.pos(),
            "expected a JSON object (a Messages API body)",
        ));
    }
    let root = s.object(|s, key| -> R<()> {
        let vstart = s.pos();
        let k = key_str(src, key);
        let res = (|| -> R<()> {
            match &*k {
                "messages" => {
                    if s.peek_kind()? != Kind::Array {
                        return Err(ReadErr::shape(s.pos(), "expected an array of messages"));
                    }
                    messages.clear();
                    blocks.clear();
                    if let Some(r) = reuse {
                        r.restart();
                    }
                    let span = s.array(|s, i| -> R<()> {
                        let moved = reuse.is_some_and(|r| r.take(s, i, &mut messages, &mut blocks));
                        if !moved {
                            let m = read_anthropic_message(s, &mut blocks)
                                .map_err(|e| e.at_index(i))?;
                            messages.push(m);
                        }
                        after_message(&mut messages, &mut blocks, !moved, s.pos(), src.len());
                        Ok(())
                    })?;
                    messages_span = Some(span);
                }
                "content" if s.peek_kind()? == Kind::Array => {
                    // A duplicate key: the last one wins, as in serde_json.
                    content_blocks.clear();
                    let (_, span) = read_block_list(s, &mut content_blocks, fill_anthropic_block)?;
                    response_content = Some(span);
                }
                "role" => role = s.opt_string()?,
                "type" => {
                    is_response = s.opt_string()?.is_some_and(|v| key_is(src, v, "message"));
                }
                "model" => meta.model = s.opt_string()?,
                "thinking" => read_thinking_param(s, &mut meta)?,
                "max_tokens" => meta.max_tokens = s.opt_u64()?,
                "temperature" => meta.temperature = Some(s.skip_value()?),
                "top_p" => meta.top_p = Some(s.skip_value()?),
                "top_k" => meta.top_k = Some(s.skip_value()?),
                "system" => meta.system = Some(s.skip_value()?),
                "tools" => meta.tools = Some(s.skip_value()?),
                "anthropic_beta" => meta.betas = Some(s.skip_value()?),
                "stop_reason" => meta.stop_reason = s.opt_string()?,
                "id" => meta.response_id = s.opt_string()?,
                "tool_choice" if s.peek_kind()? == Kind::Object => {
                    s.object(|s, k2| -> R<()> {
                        if key_is(src, k2, "type") {
                            meta.tool_choice = s.opt_string()?;
                        } else {
                            s.skip_value()?;
                        }
                        Ok(())
                    })?;
                }
                _ => {
                    s.skip_value()?;
                }
            }
            Ok(())
        })();
        res.map_err(|e| e.at_key(&k))?;
        let vspan = Span::new(vstart, s.pos());
        meta.top_keys.push((key, trim_span(src, vspan)));
        Ok(())
    })?;
    t.root = root;
    if messages_span.is_some() {
        // A request; a stray top-level `content` array is no message's.
        t.body = BodyKind::Request;
    } else if let Some(span) = response_content {
        // A response body (`"type": "message"`): one assistant message whose content is the
        // top-level array.
        let role_kind = match role.map(|r| r.decode(src)) {
            Some(r) if r == "user" => Role::User,
            _ => Role::Assistant,
        };
        messages.push(Message {
            span: root,
            role: role_kind,
            role_raw: role,
            content: Content::Blocks {
                first: 0,
                len: content_blocks.len() as u32,
            },
            content_span: Some(span),
            id: meta.response_id,
            error: None,
            error_name: None,
            completed: true,
            summary: Default::default(),
        });
        blocks = content_blocks;
        stamp(&mut messages, &mut blocks, 0);
        messages_span = Some(span);
        t.body = BodyKind::Response;
        let _ = is_response;
    } else {
        return Err(ReadErr::shape(
            root.start as usize,
            "no `messages` array (request) or `content` array (response)",
        ));
    }
    t.messages = messages;
    t.blocks = blocks;
    t.meta = meta;
    t.messages_span = messages_span;
    Ok(())
}

/// Called after each message of a request: finishes the message just read ([`stamp`], unless
/// `scanned` is false: a message moved over by [`read_reusing`] comes stamped), then grows the
/// message and block lists ahead of need by extrapolating what was read so far to the rest of
/// the input (`done` of `total` bytes read), instead of letting `Vec` double: doubling a list of
/// 100,000 blocks copies it again and again and can hold twice what is used. A session's
/// messages are alike enough that the estimate lands close; when it falls short, the list
/// estimates again once it nears full.
fn after_message(
    messages: &mut Vec<Message>,
    blocks: &mut Vec<Block>,
    scanned: bool,
    done: usize,
    total: usize,
) {
    if scanned && let Some(last) = messages.len().checked_sub(1) {
        stamp(messages, blocks, last);
    }
    /// Grows `v` when fewer than `headroom` free slots are left and more items are expected.
    fn ahead<T>(v: &mut Vec<T>, headroom: usize, done: usize, total: usize) {
        if v.len() < 8 || done == 0 {
            return;
        }
        // Items per byte so far, times the bytes left.
        let rest = total.saturating_sub(done);
        let expected = (v.len() as u128 * rest as u128 / done as u128) as usize;
        if v.capacity() - v.len() >= expected.min(headroom) {
            return;
        }
        // At most four times what is there, so a few small messages before a huge one cannot
        // ask for a huge list; plus a little slack.
        let more = expected.min(4 * v.len()) + v.len() / 16 + 8;
        // On failure the list grows the ordinary way, and fails there if it must.
        let _ = v.try_reserve_exact(more);
    }
    ahead(messages, 1, done, total);
    // A message rarely has more than 64 blocks; a bigger one makes the list double once.
    ahead(blocks, 64, done, total);
}

/// Strips whitespace from both ends of a span (values are recorded from before leading
/// whitespace is skipped).
fn trim_span(src: &str, span: Span) -> Span {
    let text = span.get(src);
    let lead = text.len() - text.trim_start_matches([' ', '\n', '\r', '\t']).len();
    let trail = text.len() - text.trim_end_matches([' ', '\n', '\r', '\t']).len();
    Span::new(span.start as usize + lead, span.end as usize - trail)
}

fn read_thinking_param(s: &mut Scanner<'_>, meta: &mut RequestMeta) -> R<()> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        meta.thinking.span = Some(s.skip_value()?);
        return Ok(());
    }
    let span = s.object(|s, key| -> R<()> {
        if key_is(src, key, "type") {
            meta.thinking.kind = s.opt_string()?;
        } else if key_is(src, key, "budget_tokens") {
            meta.thinking.budget_tokens = s.opt_u64()?;
        } else if key_is(src, key, "block_binding") && s.peek_kind()? == Kind::Object {
            s.object(|s, k2| -> R<()> {
                if key_is(src, k2, "prefix_mismatch_behavior") {
                    meta.thinking.drop_block = s
                        .opt_string()?
                        .is_some_and(|v| v.decode(src) == "drop_block");
                } else {
                    s.skip_value()?;
                }
                Ok(())
            })?;
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    meta.thinking.span = Some(span);
    Ok(())
}

fn read_anthropic_message(s: &mut Scanner<'_>, blocks: &mut Vec<Block>) -> R<Message> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        return Err(ReadErr::shape(s.pos(), "expected a message object"));
    }
    let mut m = Message::empty(Role::Other);
    let first_block = blocks.len();
    let span = s.object(|s, key| -> R<()> {
        if key_is(src, key, "role") {
            m.role_raw = s.opt_string()?;
            m.role = match m.role_raw.map(|r| r.decode(src)) {
                Some(r) if r == "user" => Role::User,
                Some(r) if r == "assistant" => Role::Assistant,
                Some(r) if r == "system" => Role::System,
                _ => Role::Other,
            };
        } else if key_is(src, key, "content") {
            // A duplicate `content` key: the last one wins, as in serde_json.
            blocks.truncate(first_block);
            match s.peek_kind()? {
                Kind::String => {
                    let st = s.string()?;
                    m.content = Content::String(st);
                    m.content_span = Some(Span::new(
                        st.span.start as usize - 1,
                        st.span.end as usize + 1,
                    ));
                }
                Kind::Array => {
                    let (content, span) = read_block_list(s, blocks, fill_anthropic_block)
                        .map_err(|e| e.at_key("content"))?;
                    m.content = content;
                    m.content_span = Some(span);
                }
                _ => {
                    m.content_span = Some(s.skip_value()?);
                    m.content = Content::Missing;
                }
            }
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    m.span = span;
    Ok(m)
}

/// Fields other SDKs leave on content blocks, which the Anthropic schema rejects (api-rules.md
/// AN-06: Gemini's `thoughtSignature`, the AI SDK's `providerOptions`/`providerMetadata`,
/// DeepSeek's `reasoning_content`).
pub const FOREIGN_FIELDS: [&str; 5] = [
    "thoughtSignature",
    "thought_signature",
    "providerOptions",
    "providerMetadata",
    "reasoning_content",
];

/// Classifies an Anthropic block type name (api-rules.md §1.1).
pub fn anthropic_kind(t: &str) -> BlockKind {
    match t {
        "thinking" => BlockKind::Thinking,
        "redacted_thinking" => BlockKind::RedactedThinking,
        "text" => BlockKind::Text,
        "tool_use" => BlockKind::ToolCall,
        "tool_result" => BlockKind::ToolResult,
        "server_tool_use" | "mcp_tool_use" => BlockKind::ServerToolCall,
        "image" | "document" | "search_result" | "container_upload" => BlockKind::Media,
        "compaction" => BlockKind::Meta,
        t if t.ends_with("_tool_result") => BlockKind::ServerToolResult,
        _ => BlockKind::Other,
    }
}

/// Reads one Anthropic content block into `b` (a default block).
fn fill_anthropic_block(s: &mut Scanner<'_>, b: &mut Block) -> R<()> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        // Not an object: keep it as an unknown block so it round-trips; rules flag it.
        b.span = s.skip_value()?;
        return Ok(());
    }
    let mut text: Option<StrSpan> = None;
    let mut thinking: Option<StrSpan> = None;
    let mut nested_clean: Option<bool> = None;
    let mut nested_refs: Option<bool> = None;
    b.span = s.object(|s, key| -> R<()> {
        let k = key.raw(src);
        let k: Cow<'_, str> = if key.escaped {
            key.decode(src)
        } else {
            Cow::Borrowed(k)
        };
        match &*k {
            "type" => b.type_name = s.opt_string()?,
            "id" => b.id = s.opt_string()?,
            "tool_use_id" => b.tool_use_id = s.opt_string()?,
            "name" => b.name = s.opt_string()?,
            "text" => text = s.opt_string()?,
            "thinking" => thinking = s.opt_string()?,
            "signature" => {
                b.has_signature_key = true;
                b.signature = s.opt_string()?;
            }
            "data" => b.data = s.opt_string()?,
            "cache_control" => b.cache_control = Some(s.skip_value()?),
            "is_error" => b.is_error = s.opt_bool()?,
            // Fields other SDKs leave on blocks; the Anthropic schema rejects them (AN-06).
            k if FOREIGN_FIELDS.contains(&k) => {
                b.foreign_key = Some(key);
                s.skip_value()?;
            }
            "content" | "input" => match s.peek_kind()? {
                Kind::String => {
                    let st = s.string()?;
                    b.content_str = Some(st);
                    b.content = Some(Span::new(
                        st.span.start as usize - 1,
                        st.span.end as usize + 1,
                    ));
                }
                Kind::Array => {
                    let (span, clean, refs) =
                        content_list(s).map_err(|e| ReadErr::from(e).at_key(&k))?;
                    b.content = Some(span);
                    nested_clean = Some(clean);
                    nested_refs = Some(refs);
                }
                _ => {
                    b.content = Some(s.skip_value().map_err(|e| ReadErr::from(e).at_key(&k))?);
                }
            },
            _ => {
                s.skip_value().map_err(|e| ReadErr::from(e).at_key(&k))?;
            }
        }
        Ok(())
    })?;
    let kind = b
        .type_name
        .map(|t| anthropic_kind(&t.decode(src)))
        .unwrap_or(BlockKind::Other);
    b.kind = Some(kind);
    b.text = if kind == BlockKind::Thinking {
        thinking
    } else {
        text
    };
    // Worked out now, while the block's strings are still in cache.
    b.facts = b.worked_out_facts(src);
    b.facts.nested_clean = nested_clean;
    b.facts.nested_refs = nested_refs;
    Ok(())
}

/// Reads a block's `content` list (as `skip_value` would, in the same one pass) and says
/// whether it is clean for AN-06 ([`crate::view::Facts::nested_clean`]): no `text` element
/// whose text is missing or may be blank, no element with `signature` or a field another SDK
/// leaves. Conservative: an escaped key or `type`, or a text of whitespace and escapes, counts
/// as not clean, and the rule reads the list itself. Also says whether an element may be a
/// `tool_reference` ([`crate::view::Facts::nested_refs`]: typed so, or with an escaped key or
/// `type`).
fn content_list(s: &mut Scanner<'_>) -> crate::json::Result<(Span, bool, bool)> {
    let src = s.src();
    let mut clean = true;
    let mut refs = false;
    let span = s.array(|s, _| -> crate::json::Result<()> {
        if s.peek_kind()? != Kind::Object {
            s.skip_value()?;
            return Ok(());
        }
        let mut is_text = false;
        let mut text: Option<Span> = None;
        s.object(|s, key| -> crate::json::Result<()> {
            let v = s.skip_value()?;
            if key.escaped {
                clean = false;
                refs = true;
                return Ok(());
            }
            match key.raw(src) {
                "type" => {
                    let raw = v.get(src);
                    is_text = raw == "\"text\"";
                    if raw.contains('\\') {
                        clean = false;
                        refs = true;
                    } else if raw == "\"tool_reference\"" {
                        refs = true;
                    }
                }
                "text" => text = Some(v),
                "signature" => clean = false,
                k if FOREIGN_FIELDS.contains(&k) => clean = false,
                _ => {}
            }
            Ok(())
        })?;
        if is_text && text.is_none_or(|t| may_be_blank(t.get(src))) {
            clean = false;
        }
        Ok(())
    })?;
    Ok((span, clean, refs))
}

/// Whether the JSON value `v` (as written) may be a blank text: not a string, or one whose
/// bytes [`crate::json::may_be_blank`] cannot tell from blank.
fn may_be_blank(v: &str) -> bool {
    v.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .is_none_or(crate::json::may_be_blank)
}

// ---------------------------------------------------------------------------------------------
// Gemini

fn read_gemini_root(
    s: &mut Scanner<'_>,
    t: &mut Transcript<'_>,
    reuse: Option<Reuse<'_, '_>>,
) -> R<()> {
    let src = s.src();
    let mut blocks = std::mem::take(&mut t.blocks);
    let mut messages = std::mem::take(&mut t.messages);
    let mut meta = RequestMeta::default();
    let mut messages_span = None;
    if s.peek_kind()? != Kind::Object {
        return Err(ReadErr::shape(
            s.pos(),
            "expected a JSON object (a generateContent body)",
        ));
    }
    let root = s.object(|s, key| -> R<()> {
        let vstart = s.pos();
        let k = key_str(src, key);
        let res = (|| -> R<()> {
            match &*k {
                "contents" => {
                    if s.peek_kind()? != Kind::Array {
                        return Err(ReadErr::shape(s.pos(), "expected an array of contents"));
                    }
                    messages.clear();
                    blocks.clear();
                    if let Some(r) = reuse {
                        r.restart();
                    }
                    messages_span = Some(s.array(|s, i| -> R<()> {
                        let moved = reuse.is_some_and(|r| r.take(s, i, &mut messages, &mut blocks));
                        if !moved {
                            let m =
                                read_gemini_content(s, &mut blocks).map_err(|e| e.at_index(i))?;
                            messages.push(m);
                        }
                        after_message(&mut messages, &mut blocks, !moved, s.pos(), src.len());
                        Ok(())
                    })?);
                }
                "model" | "modelVersion" => meta.model = s.opt_string()?,
                "systemInstruction" | "system_instruction" => meta.system = Some(s.skip_value()?),
                "tools" => meta.tools = Some(s.skip_value()?),
                "generationConfig" | "generation_config" if s.peek_kind()? == Kind::Object => {
                    s.object(|s, k2| -> R<()> {
                        let k2s = key_str(src, k2);
                        if (k2s == "thinkingConfig" || k2s == "thinking_config")
                            && s.peek_kind()? == Kind::Object
                        {
                            let span = s.object(|s, k3| -> R<()> {
                                let k3s = key_str(src, k3);
                                if k3s == "thinkingBudget" || k3s == "thinking_budget" {
                                    meta.thinking.budget_tokens = s.opt_u64()?;
                                } else {
                                    s.skip_value()?;
                                }
                                Ok(())
                            })?;
                            meta.thinking.span = Some(span);
                        } else if k2s == "maxOutputTokens" || k2s == "max_output_tokens" {
                            meta.max_tokens = s.opt_u64()?;
                        } else {
                            s.skip_value()?;
                        }
                        Ok(())
                    })?;
                }
                _ => {
                    s.skip_value()?;
                }
            }
            Ok(())
        })();
        res.map_err(|e| e.at_key(&k))?;
        meta.top_keys
            .push((key, trim_span(src, Span::new(vstart, s.pos()))));
        Ok(())
    })?;
    if messages_span.is_none() {
        return Err(ReadErr::shape(root.start as usize, "no `contents` array"));
    }
    t.root = root;
    t.messages = messages;
    t.blocks = blocks;
    t.meta = meta;
    t.messages_span = messages_span;
    Ok(())
}

fn read_gemini_content(s: &mut Scanner<'_>, blocks: &mut Vec<Block>) -> R<Message> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        return Err(ReadErr::shape(s.pos(), "expected a content object"));
    }
    // A missing role defaults to `user` (python-genai `Content` docstring, api-rules.md §2.1).
    let mut m = Message::empty(Role::User);
    let first_block = blocks.len();
    m.span = s.object(|s, key| -> R<()> {
        if key_is(src, key, "role") {
            m.role_raw = s.opt_string()?;
            m.role = match m.role_raw.map(|r| r.decode(src)) {
                Some(r) if r == "user" => Role::User,
                Some(r) if r == "model" => Role::Assistant,
                _ => Role::Other,
            };
        } else if key_is(src, key, "parts") && s.peek_kind()? == Kind::Array {
            // A duplicate `parts` key: the last one wins, as in serde_json.
            blocks.truncate(first_block);
            let (content, span) =
                read_block_list(s, blocks, fill_gemini_part).map_err(|e| e.at_key("parts"))?;
            m.content = content;
            m.content_span = Some(span);
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    Ok(m)
}

/// Reads an array of blocks, each filled in place by `fill` (a `Block` is about 200 bytes, and
/// returning one by value copied it), appending them to `blocks`; returns the message content
/// that covers them and the array's span.
fn read_block_list(
    s: &mut Scanner<'_>,
    blocks: &mut Vec<Block>,
    fill: fn(&mut Scanner<'_>, &mut Block) -> R<()>,
) -> R<(Content, Span)> {
    let first = blocks.len();
    let span = s.array(|s, j| -> R<()> {
        blocks.push(Block::default());
        match blocks.last_mut() {
            Some(b) => fill(s, b).map_err(|e| e.at_index(j)),
            None => Ok(()),
        }
    })?;
    Ok((
        Content::Blocks {
            first: first as u32,
            len: (blocks.len() - first) as u32,
        },
        span,
    ))
}

/// One block read by `fill` (for [`read_block`]).
fn read_one(s: &mut Scanner<'_>, fill: fn(&mut Scanner<'_>, &mut Block) -> R<()>) -> R<Block> {
    let mut b = Block::default();
    fill(s, &mut b)?;
    Ok(b)
}

fn read_function_obj(s: &mut Scanner<'_>, b: &mut Block, result: bool) -> R<()> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        s.skip_value()?;
        return Ok(());
    }
    s.object(|s, key| -> R<()> {
        let k = key_str(src, key);
        match &*k {
            "id" if result => b.tool_use_id = s.opt_string()?,
            "id" => b.id = s.opt_string()?,
            "name" => b.name = s.opt_string()?,
            "args" | "response" => b.content = Some(s.skip_value()?),
            _ => {
                s.skip_value()?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

fn fill_gemini_part(s: &mut Scanner<'_>, b: &mut Block) -> R<()> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        b.span = s.skip_value()?;
        b.kind = Some(BlockKind::Other);
        b.static_type = Some("unknown");
        return Ok(());
    }
    let mut kind: Option<(BlockKind, &'static str)> = None;
    let mut has_text = false;
    b.span = s.object(|s, key| -> R<()> {
        let k = key_str(src, key);
        match &*k {
            "text" => {
                b.text = s.opt_string()?;
                has_text = true;
            }
            "thought" => b.thought = s.opt_bool()?.unwrap_or(false),
            "thoughtSignature" | "thought_signature" => {
                b.has_signature_key = true;
                b.signature = s.opt_string()?;
            }
            "functionCall" | "function_call" => {
                read_function_obj(s, b, false)?;
                kind = Some((BlockKind::ToolCall, "functionCall"));
            }
            "functionResponse" | "function_response" => {
                read_function_obj(s, b, true)?;
                kind = Some((BlockKind::ToolResult, "functionResponse"));
            }
            "inlineData" | "inline_data" => {
                s.skip_value()?;
                kind = Some((BlockKind::Media, "inlineData"));
            }
            "fileData" | "file_data" => {
                s.skip_value()?;
                kind = Some((BlockKind::Media, "fileData"));
            }
            "executableCode" | "executable_code" => {
                s.skip_value()?;
                kind = Some((BlockKind::ServerToolCall, "executableCode"));
            }
            "codeExecutionResult" | "code_execution_result" => {
                s.skip_value()?;
                kind = Some((BlockKind::ServerToolResult, "codeExecutionResult"));
            }
            _ => {
                s.skip_value()?;
            }
        }
        Ok(())
    })?;
    let (k, name) = match kind {
        Some(k) => k,
        None if has_text && b.thought => (BlockKind::Thinking, "thought"),
        None if has_text => (BlockKind::Text, "text"),
        None => (BlockKind::Other, "other"),
    };
    b.kind = Some(k);
    b.static_type = Some(name);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// OpenCode (exported array of {info, parts})

/// Classifies an OpenCode part type (seed 003's twelve part types).
pub fn opencode_kind(t: &str) -> BlockKind {
    match t {
        "text" => BlockKind::Text,
        "reasoning" => BlockKind::Thinking,
        "tool" => BlockKind::ToolCall,
        "file" => BlockKind::Media,
        "agent" | "subtask" | "compaction" | "step-start" | "step-finish" | "snapshot"
        | "patch" | "retry" => BlockKind::Meta,
        _ => BlockKind::Other,
    }
}

/// An OpenCode export: the document `opencode export` prints (`{info, messages: [{info, parts}],
/// todos}`), or the bare `[{info, parts}]` array plugins receive.
fn read_opencode_root(s: &mut Scanner<'_>, t: &mut Transcript<'_>) -> R<()> {
    let mut blocks = std::mem::take(&mut t.blocks);
    let mut messages = std::mem::take(&mut t.messages);
    let mut read_list = |s: &mut Scanner<'_>| -> R<Span> {
        if s.peek_kind()? != Kind::Array {
            return Err(ReadErr::shape(
                s.pos(),
                "expected an array of {info, parts} (an OpenCode export)",
            ));
        }
        s.array(|s, i| -> R<()> {
            let m = read_opencode_message(s, &mut blocks).map_err(|e| e.at_index(i))?;
            messages.push(m);
            after_message(&mut messages, &mut blocks, true, s.pos(), s.src().len());
            Ok(())
        })
    };
    match s.peek_kind()? {
        Kind::Array => {
            let span = read_list(s)?;
            t.root = span;
            t.messages_span = Some(span);
        }
        Kind::Object => {
            let src = s.src();
            let mut list = None;
            t.root = s.object(|s, key| -> R<()> {
                if key_is(src, key, "messages") {
                    list = Some(read_list(s).map_err(|e| e.at_key("messages"))?);
                } else {
                    s.skip_value()?;
                }
                Ok(())
            })?;
            t.messages_span = Some(list.ok_or_else(|| {
                ReadErr::shape(
                    t.root.start as usize,
                    "an `opencode export` document has no `messages` array",
                )
            })?);
        }
        _ => {
            return Err(ReadErr::shape(
                s.pos(),
                "expected an OpenCode export: `{info, messages, todos}` or `[{info, parts}]`",
            ));
        }
    }
    t.messages = messages;
    t.blocks = blocks;
    Ok(())
}

fn read_opencode_message(s: &mut Scanner<'_>, blocks: &mut Vec<Block>) -> R<Message> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        return Err(ReadErr::shape(
            s.pos(),
            "expected an object with `info` and `parts`",
        ));
    }
    let mut m = Message::empty(Role::Other);
    m.completed = false;
    let first_block = blocks.len();
    m.span = s.object(|s, key| -> R<()> {
        if key_is(src, key, "info") && s.peek_kind()? == Kind::Object {
            s.object(|s, k| -> R<()> {
                let ks = key_str(src, k);
                match &*ks {
                    "id" => m.id = s.opt_string()?,
                    "role" => {
                        m.role_raw = s.opt_string()?;
                        m.role = match m.role_raw.map(|r| r.decode(src)) {
                            Some(r) if r == "user" => Role::User,
                            Some(r) if r == "assistant" => Role::Assistant,
                            _ => Role::Other,
                        };
                    }
                    "error" if s.peek_kind()? == Kind::Object => {
                        let mut name = None;
                        let span = s.object(|s, k2| -> R<()> {
                            if key_is(src, k2, "name") {
                                name = s.opt_string()?;
                            } else {
                                s.skip_value()?;
                            }
                            Ok(())
                        })?;
                        m.error = Some(span);
                        m.error_name = name;
                    }
                    "time" if s.peek_kind()? == Kind::Object => {
                        s.object(|s, k2| -> R<()> {
                            if key_is(src, k2, "completed") {
                                m.completed = s.peek_kind()? == Kind::Number;
                            }
                            s.skip_value()?;
                            Ok(())
                        })?;
                    }
                    _ => {
                        s.skip_value()?;
                    }
                }
                Ok(())
            })
            .map_err(|e| e.at_key("info"))?;
        } else if key_is(src, key, "parts") && s.peek_kind()? == Kind::Array {
            // A duplicate `parts` key: the last one wins, as in serde_json.
            blocks.truncate(first_block);
            let (content, span) =
                read_block_list(s, blocks, fill_opencode_part).map_err(|e| e.at_key("parts"))?;
            m.content = content;
            m.content_span = Some(span);
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    Ok(m)
}

fn fill_opencode_part(s: &mut Scanner<'_>, b: &mut Block) -> R<()> {
    let src = s.src();
    if s.peek_kind()? != Kind::Object {
        b.span = s.skip_value()?;
        b.kind = Some(BlockKind::Other);
        return Ok(());
    }
    b.span = s.object(|s, key| -> R<()> {
        let k = key_str(src, key);
        match &*k {
            "type" => b.type_name = s.opt_string()?,
            "id" => b.part_id = s.opt_string()?,
            "text" => b.text = s.opt_string()?,
            "callID" => b.id = s.opt_string()?,
            "tool" => b.name = s.opt_string()?,
            "synthetic" => b.synthetic = s.opt_bool()?.unwrap_or(false),
            "state" if s.peek_kind()? == Kind::Object => {
                s.object(|s, k2| -> R<()> {
                    if key_is(src, k2, "status") {
                        b.state = s.opt_string()?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            }
            // Signatures of Anthropic reasoning live at `metadata.anthropic.signature`
            // (peers.md §1.6, the recovery fixture of oh-my-opencode).
            "metadata" if s.peek_kind()? == Kind::Object => {
                s.object(|s, k2| -> R<()> {
                    if key_is(src, k2, "anthropic") && s.peek_kind()? == Kind::Object {
                        s.object(|s, k3| -> R<()> {
                            if key_is(src, k3, "signature") {
                                b.has_signature_key = true;
                                b.signature = s.opt_string()?;
                            } else if key_is(src, k3, "redactedData") {
                                b.data = s.opt_string()?;
                            } else {
                                s.skip_value()?;
                            }
                            Ok(())
                        })?;
                    } else {
                        s.skip_value()?;
                    }
                    Ok(())
                })?;
            }
            _ => {
                s.skip_value()?;
            }
        }
        Ok(())
    })?;
    b.kind = Some(
        b.type_name
            .map(|t| opencode_kind(&t.decode(src)))
            .unwrap_or(BlockKind::Other),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader's facts of a tool result whose content is `list`.
    fn facts(list: &str) -> crate::view::Facts {
        let body = format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":{list}}}]}}]}}"#
        );
        let t = read(&body, FormatHint::Auto).expect("reads");
        t.blocks[0].facts
    }

    /// What the reader says of a tool result's content list: clean only when AN-06 has nothing
    /// to look for in it.
    fn clean(list: &str) -> Option<bool> {
        facts(list).nested_clean
    }

    /// Whether the reader says a tool result's content list may hold a `tool_reference`.
    fn refs(list: &str) -> Option<bool> {
        facts(list).nested_refs
    }

    #[test]
    fn a_tool_results_list_says_whether_it_may_hold_tool_references() {
        assert_eq!(
            refs(r#"[{"type":"text","text":"tool_reference"}]"#),
            Some(false)
        );
        assert_eq!(refs("[]"), Some(false));
        assert_eq!(refs(r#""a tool_reference""#), None);
        assert_eq!(
            refs(r#"[{"type":"text","text":"ok"},{"type":"tool_reference","tool_name":"x"}]"#),
            Some(true)
        );
        assert_eq!(
            refs(r#"[{"type":"tool_r\u0065ference","tool_name":"x"}]"#),
            Some(true)
        );
        assert_eq!(
            refs(r#"[{"typ\u0065":"tool_reference","tool_name":"x"}]"#),
            Some(true)
        );
    }

    #[test]
    fn a_tool_results_list_is_judged_while_it_is_read() {
        let img =
            r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}"#;
        assert_eq!(clean(r#"[{"type":"text","text":"ok"}]"#), Some(true));
        assert_eq!(
            clean(&format!(r#"[{img},{{"text":"x y","type":"text"}}]"#)),
            Some(true)
        );
        assert_eq!(clean("[]"), Some(true));
        assert_eq!(clean(r#""a string""#), None);
        assert_eq!(clean(r#"[{"type":"text","text":" \n"}]"#), Some(false));
        assert_eq!(clean(r#"[{"type":"text","text":"\u00a0"}]"#), Some(false));
        assert_eq!(clean(r#"[{"type":"text"}]"#), Some(false));
        assert_eq!(clean(r#"[{"type":"text","text":null}]"#), Some(false));
        assert_eq!(clean(r#"[{"type":"text","text":"é"}]"#), Some(false));
        assert_eq!(
            clean(r#"[{"type":"text","text":"ok","signature":"x"}]"#),
            Some(false)
        );
        assert_eq!(
            clean(r#"[{"type":"text","text":"ok","providerOptions":{}}]"#),
            Some(false)
        );
        assert_eq!(clean(r#"[{"type":"te\u0078t","text":"ok"}]"#), Some(false));
        assert_eq!(clean(r#"[{"typ\u0065":"text","text":"ok"}]"#), Some(false));
    }
}
