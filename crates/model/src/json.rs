//! A single-pass, validating, span-recording JSON pull scanner.
//!
//! The scanner reads a `&str` once from left to right. It never builds a tree: callers ask for the
//! shape they expect (`object`, `array`, `string`, ...) and either read a value's span or skip it.
//! A skipped value is still fully validated, so a transcript that scans without error is valid JSON
//! (RFC 8259), whatever parts of it the readers looked at.
//!
//! Why not `serde_json::RawValue`? A raw value inside a typed view needs two passes over every
//! block (one to find its bytes, one to read its fields), and RawValue cannot sit under the
//! internally tagged enums that content blocks call for (rust-anchors.md §3.1). Recording spans
//! during one scan gives us the exact bytes of every block and the few fields rules need at once.
//!
//! Limits: nesting deeper than [`MAX_DEPTH`] (serde_json's own default recursion limit, 128) is
//! an error, and so is an input longer than `u32::MAX` bytes, since spans are stored as `u32`.

use std::borrow::Cow;
use std::fmt;

/// The deepest nesting of arrays and objects the scanner accepts; serde_json's default limit.
pub const MAX_DEPTH: usize = 128;

/// A byte range `[start, end)` into the scanned input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// Builds a span from `usize` offsets (the scanner guarantees they fit in `u32`).
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The bytes of `src` this span covers. Returns `""` for a span outside `src`.
    pub fn get<'s>(&self, src: &'s str) -> &'s str {
        src.get(self.start as usize..self.end as usize)
            .unwrap_or("")
    }

    /// [`Span::get`] over bytes: `None` for a span outside `src`.
    pub fn bytes<'s>(&self, src: &'s [u8]) -> Option<&'s [u8]> {
        src.get(self.start as usize..self.end as usize)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// True when the span covers no byte.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The same bytes after they moved from offset `from` to offset `to` (either way).
    pub fn moved(&self, from: u32, to: u32) -> Span {
        Span {
            start: self.start.wrapping_sub(from).wrapping_add(to),
            end: self.end.wrapping_sub(from).wrapping_add(to),
        }
    }
}

/// A JSON string as found in the input: the span of its contents (without the quotes), and
/// whether it contains escape sequences (then its decoded value differs from its raw bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StrSpan {
    /// The string's contents, quotes excluded.
    pub span: Span,
    /// True when the raw contents hold at least one backslash escape.
    pub escaped: bool,
}

impl StrSpan {
    /// The same string after its bytes moved from offset `from` to offset `to`.
    pub fn moved(&self, from: u32, to: u32) -> StrSpan {
        StrSpan {
            span: self.span.moved(from, to),
            escaped: self.escaped,
        }
    }

    /// The raw (still escaped) contents.
    pub fn raw<'s>(&self, src: &'s str) -> &'s str {
        self.span.get(src)
    }

    /// The decoded string. Borrowed when the string has no escapes.
    pub fn decode<'s>(&self, src: &'s str) -> Cow<'s, str> {
        let raw = self.raw(src);
        if self.escaped {
            Cow::Owned(unescape(raw))
        } else {
            Cow::Borrowed(raw)
        }
    }

    /// True when the decoded string is empty or JSON/Unicode whitespace only. Decides from the
    /// raw bytes without allocating unless the string is made only of escapes, ASCII whitespace
    /// and non-ASCII bytes (which may be Unicode whitespace).
    pub fn is_blank(&self, src: &str) -> bool {
        let raw = self.raw(src);
        if !self.escaped {
            return raw.trim_start().is_empty();
        }
        may_be_blank(raw) && unescape(raw).trim().is_empty()
    }
}

/// True when the raw contents of a JSON string (between its quotes, escapes as written) may
/// decode to whitespace only: every byte is ASCII whitespace, part of an escape (`\`, `n`, `t`,
/// `r`, `u`, hex digits) or non-ASCII (which may be Unicode whitespace). One look at the bytes;
/// `false` settles it, `true` needs the decoded text.
pub fn may_be_blank(raw: &str) -> bool {
    raw.bytes().all(|b| {
        b >= 0x80
            || matches!(
                b,
                b' ' | b'\t' | b'\n' | b'\r' | b'\\' | b'n' | b't' | b'r' | b'u'
            )
            || b.is_ascii_hexdigit()
    })
}

/// True for a byte of standard or URL-safe base64, padding included. Written as comparisons
/// rather than a table so that [`is_base64`] compiles to vector compares.
#[inline(always)]
fn base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() | (b == b'+') | (b == b'/') | (b == b'=') | (b == b'-') | (b == b'_')
}

/// True when every byte of `s` is a base64 byte (standard or URL-safe, padding included).
/// Signatures are kilobytes long, so this folds 32-byte chunks without an early exit (the
/// compiler turns a chunk into a few vector instructions) and stops only between chunks.
pub fn is_base64(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(32);
    for c in &mut chunks {
        if !c.iter().fold(true, |ok, &b| ok & base64_byte(b)) {
            return false;
        }
    }
    chunks.remainder().iter().all(|&b| base64_byte(b))
}

/// The fewest bytes a signature can have and still look like a provider's (shorter base64 is a
/// placeholder; used by the reader's facts and by `turnkeeper_guard::provenance`).
pub const MIN_SIGNATURE_BYTES: usize = 8;

/// True for a valid Anthropic client tool id, `^[a-zA-Z0-9_-]+$` (api-rules.md AN-12).
pub fn is_tool_id(id: &str) -> bool {
    // No early exit: ids are short, and a fold the compiler can vectorise beats a branch a byte.
    !id.is_empty()
        && id.bytes().fold(true, |ok, b| {
            ok & (b.is_ascii_alphanumeric() | (b == b'_') | (b == b'-'))
        })
}

/// The kind of a JSON value, as seen from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `{...}`
    Object,
    /// `[...]`
    Array,
    /// `"..."`
    String,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

impl Kind {
    /// A short name for messages ("an object", "a string", ...).
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Object => "an object",
            Kind::Array => "an array",
            Kind::String => "a string",
            Kind::Number => "a number",
            Kind::Bool => "a boolean",
            Kind::Null => "null",
        }
    }
}

/// A syntax error: what went wrong and at which byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset of the offending input.
    pub offset: usize,
    /// What was wrong.
    pub message: Cow<'static, str>,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for SyntaxError {}

/// The result type of scanner operations.
pub type Result<T> = std::result::Result<T, SyntaxError>;

/// The pull scanner. See the module docs.
#[derive(Debug)]
pub struct Scanner<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `src`.
    ///
    /// # Errors
    /// When `src` is longer than `u32::MAX` bytes.
    pub fn new(src: &'a str) -> Result<Scanner<'a>> {
        if src.len() > u32::MAX as usize {
            return Err(SyntaxError {
                offset: 0,
                message: Cow::Borrowed("input larger than 4 GiB"),
            });
        }
        Ok(Scanner {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            depth: 0,
        })
    }

    /// The input.
    pub fn src(&self) -> &'a str {
        self.src
    }

    /// The current byte offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    fn err<T>(&self, message: impl Into<Cow<'static, str>>) -> Result<T> {
        Err(self.syntax(message))
    }

    fn syntax(&self, message: impl Into<Cow<'static, str>>) -> SyntaxError {
        SyntaxError {
            offset: self.pos,
            message: message.into(),
        }
    }

    /// Skips JSON whitespace.
    #[inline]
    pub fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// After skipping whitespace, the kind of the next value, or an error at end of input or on a
    /// byte that starts no value.
    pub fn peek_kind(&mut self) -> Result<Kind> {
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b'{') => Ok(Kind::Object),
            Some(b'[') => Ok(Kind::Array),
            Some(b'"') => Ok(Kind::String),
            Some(b'-' | b'0'..=b'9') => Ok(Kind::Number),
            Some(b't' | b'f') => Ok(Kind::Bool),
            Some(b'n') => Ok(Kind::Null),
            Some(_) => self.err("expected a JSON value"),
            None => self.err("unexpected end of input"),
        }
    }

    /// Checks that only whitespace remains.
    ///
    /// # Errors
    /// When anything but whitespace follows.
    pub fn finish(&mut self) -> Result<()> {
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return self.err("trailing characters after the JSON value");
        }
        Ok(())
    }

    fn expect_byte(&mut self, b: u8, what: &'static str) -> Result<()> {
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b) {
            self.pos += 1;
            Ok(())
        } else if self.pos >= self.bytes.len() {
            self.err("unexpected end of input")
        } else {
            self.err(what)
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err("nesting deeper than 128 levels");
        }
        Ok(())
    }

    /// Reads an object, calling `f` once per member with the key. `f` must consume the value
    /// (read it or [`skip_value`](Self::skip_value) it). Returns the object's span.
    ///
    /// # Errors
    /// On a syntax error, or whatever `f` returns.
    pub fn object<E>(
        &mut self,
        mut f: impl FnMut(&mut Self, StrSpan) -> std::result::Result<(), E>,
    ) -> std::result::Result<Span, E>
    where
        E: From<SyntaxError>,
    {
        self.skip_ws();
        let start = self.pos;
        self.expect_byte(b'{', "expected an object")?;
        self.enter()?;
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Span::new(start, self.pos));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.syntax("expected a string key").into());
            }
            let key = self.string()?;
            self.expect_byte(b':', "expected ':' after an object key")?;
            f(self, key)?;
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                None => {
                    return Err(self.syntax("unexpected end of input").into());
                }
                Some(_) => {
                    return Err(self.syntax("expected ',' or '}' in an object").into());
                }
            }
        }
        self.depth -= 1;
        Ok(Span::new(start, self.pos))
    }

    /// Reads an array, calling `f` once per element with its index. `f` must consume the element.
    /// Returns the array's span.
    ///
    /// # Errors
    /// On a syntax error, or whatever `f` returns.
    pub fn array<E>(
        &mut self,
        mut f: impl FnMut(&mut Self, usize) -> std::result::Result<(), E>,
    ) -> std::result::Result<Span, E>
    where
        E: From<SyntaxError>,
    {
        self.skip_ws();
        let start = self.pos;
        self.expect_byte(b'[', "expected an array")?;
        self.enter()?;
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Span::new(start, self.pos));
        }
        let mut i = 0;
        loop {
            f(self, i)?;
            i += 1;
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                None => {
                    return Err(self.syntax("unexpected end of input").into());
                }
                Some(_) => {
                    return Err(self.syntax("expected ',' or ']' in an array").into());
                }
            }
        }
        self.depth -= 1;
        Ok(Span::new(start, self.pos))
    }

    /// Reads a string and returns the span of its contents.
    ///
    /// # Errors
    /// When the next value is not a well-formed string.
    pub fn string(&mut self) -> Result<StrSpan> {
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b'"') {
            return self.err("expected a string");
        }
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            self.pos = find_special(self.bytes, self.pos);
            match self.bytes.get(self.pos) {
                Some(b'"') => {
                    let span = Span::new(start, self.pos);
                    self.pos += 1;
                    return Ok(StrSpan { span, escaped });
                }
                Some(b'\\') => {
                    escaped = true;
                    self.pos += 1;
                    match self.bytes.get(self.pos) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            for _ in 0..4 {
                                match self.bytes.get(self.pos) {
                                    Some(b) if b.is_ascii_hexdigit() => self.pos += 1,
                                    _ => return self.err("invalid \\u escape in a string"),
                                }
                            }
                        }
                        None => return self.err("unexpected end of input in a string"),
                        Some(_) => return self.err("invalid escape in a string"),
                    }
                }
                Some(_) => return self.err("control character in a string"),
                None => return self.err("unexpected end of input in a string"),
            }
        }
    }

    /// Reads a number and returns its span.
    ///
    /// # Errors
    /// When the next value is not a well-formed number.
    pub fn number(&mut self) -> Result<Span> {
        self.skip_ws();
        let start = self.pos;
        let b = self.bytes;
        if b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match b.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                while matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                    self.pos += 1;
                }
            }
            _ => return self.err("invalid number"),
        }
        if b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if !matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                return self.err("invalid number: digit expected after '.'");
            }
            while matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if matches!(b.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(b.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                return self.err("invalid number: digit expected in exponent");
            }
            while matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        Ok(Span::new(start, self.pos))
    }

    /// Reads `true` or `false`.
    ///
    /// # Errors
    /// When the next value is not a boolean.
    pub fn boolean(&mut self) -> Result<bool> {
        self.skip_ws();
        if self.bytes[self.pos.min(self.bytes.len())..].starts_with(b"true") {
            self.pos += 4;
            Ok(true)
        } else if self.bytes[self.pos.min(self.bytes.len())..].starts_with(b"false") {
            self.pos += 5;
            Ok(false)
        } else {
            self.err("expected a boolean")
        }
    }

    /// Reads `null`.
    ///
    /// # Errors
    /// When the next value is not `null`.
    pub fn null(&mut self) -> Result<()> {
        self.skip_ws();
        if self.bytes[self.pos.min(self.bytes.len())..].starts_with(b"null") {
            self.pos += 4;
            Ok(())
        } else {
            self.err("expected null")
        }
    }

    /// Steps over `text` when the input continues with exactly these bytes, and says whether it
    /// did. For a value already validated elsewhere (the incremental re-read after a repair): a
    /// byte comparison instead of a second scan.
    /// Only for texts that end their value themselves (an object, an array or a string): a
    /// number could be the start of a longer one. The bytes need not be UTF-8 checked: equal to
    /// the input's, from a place between characters and ending in an ASCII byte, they leave the
    /// scanner between characters.
    pub fn skip_verbatim(&mut self, text: &[u8]) -> bool {
        let closed = matches!(text.last(), Some(b'}' | b']' | b'"'));
        let same = closed
            && self
                .bytes
                .get(self.pos..)
                .is_some_and(|rest| rest.starts_with(text));
        if same {
            self.pos += text.len();
        }
        same
    }

    /// Validates and skips any value, returning its span.
    ///
    /// # Errors
    /// On a syntax error.
    pub fn skip_value(&mut self) -> Result<Span> {
        let kind = self.peek_kind()?;
        let start = self.pos;
        match kind {
            Kind::Object => self.object(|s, _| s.skip_value().map(|_| ())),
            Kind::Array => self.array(|s, _| s.skip_value().map(|_| ())),
            Kind::String => {
                self.string()?;
                Ok(Span::new(start, self.pos))
            }
            Kind::Number => self.number(),
            Kind::Bool => {
                self.boolean()?;
                Ok(Span::new(start, self.pos))
            }
            Kind::Null => {
                self.null()?;
                Ok(Span::new(start, self.pos))
            }
        }
    }

    /// Reads a value that should be a string; any other kind is skipped and `None` returned.
    ///
    /// # Errors
    /// On a syntax error.
    pub fn opt_string(&mut self) -> Result<Option<StrSpan>> {
        if self.peek_kind()? == Kind::String {
            self.string().map(Some)
        } else {
            self.skip_value().map(|_| None)
        }
    }

    /// Reads a value that should be a boolean; any other kind is skipped and `None` returned.
    ///
    /// # Errors
    /// On a syntax error.
    pub fn opt_bool(&mut self) -> Result<Option<bool>> {
        if self.peek_kind()? == Kind::Bool {
            self.boolean().map(Some)
        } else {
            self.skip_value().map(|_| None)
        }
    }

    /// Reads a value that should be a non-negative integer; anything else is skipped and `None`
    /// returned (also for integers that do not fit in `u64`).
    ///
    /// # Errors
    /// On a syntax error.
    pub fn opt_u64(&mut self) -> Result<Option<u64>> {
        if self.peek_kind()? == Kind::Number {
            let span = self.number()?;
            Ok(span.get(self.src).parse::<u64>().ok())
        } else {
            self.skip_value().map(|_| None)
        }
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

#[inline]
fn has_zero_byte(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

/// Finds the first byte at or after `pos` that is `"`, `\` or a control character (< 0x20),
/// eight bytes at a time.
#[inline]
pub(crate) fn find_special(bytes: &[u8], mut pos: usize) -> usize {
    while pos + 8 <= bytes.len() {
        let mut chunk = [0u8; 8];
        chunk.copy_from_slice(&bytes[pos..pos + 8]);
        let v = u64::from_le_bytes(chunk);
        let quote = has_zero_byte(v ^ (LO * b'"' as u64));
        let slash = has_zero_byte(v ^ (LO * b'\\' as u64));
        // Bytes below 0x20: subtracting 0x20 borrows into the high bit only for them (when the
        // byte's own high bit was clear).
        let ctrl = v.wrapping_sub(LO * 0x20) & !v & HI;
        let hit = quote | slash | ctrl;
        if hit != 0 {
            return pos + (hit.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while let Some(&b) = bytes.get(pos) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return pos;
        }
        pos += 1;
    }
    pos
}

/// Appends `s` as a JSON string, quotes included, escaped exactly as `serde_json` escapes it
/// (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`;
/// everything else as it is), so that text written here matches `serde_json::to_string` byte
/// for byte.
pub fn write_string_as_serde(out: &mut String, s: &str) {
    write_escaped(out, s, true);
}

/// The one string writer behind [`write_string`] and [`write_string_as_serde`], which differ
/// only in `short_bf`: backspace and form feed as `\b` and `\f` (serde_json's way) rather than
/// `\u0008` and `\u000c`. Runs between escapes are found eight bytes at a time and copied
/// whole.
fn write_escaped(out: &mut String, s: &str, short_bf: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    loop {
        let pos = find_special(bytes, start);
        let Some(&b) = bytes.get(pos) else { break };
        // `pos` is at an ASCII byte, so both slices end on character boundaries.
        out.push_str(&s[start..pos]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 if short_bf => out.push_str("\\b"),
            0x0c if short_bf => out.push_str("\\f"),
            _ => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
        }
        start = pos + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The character a short escape stands for (`n` for `\n`, ...); `None` for the others.
#[inline]
fn short_escape(b: Option<&u8>) -> Option<char> {
    match b {
        Some(b'n') => Some('\n'),
        Some(b't') => Some('\t'),
        Some(b'r') => Some('\r'),
        Some(b'b') => Some('\u{8}'),
        Some(b'f') => Some('\u{c}'),
        // `\"`, `\\` and `\/` stand for the byte after the backslash, as any other escape
        // does in the long way (which decodes them alike).
        _ => None,
    }
}

/// Decodes the raw contents of a JSON string the scanner has already validated. Lone surrogate
/// escapes decode to U+FFFD. The runs between escapes are found eight bytes at a time (the
/// scanner's `find_special`) and copied whole; the short escapes (`\n`, `\"`, ...) are decoded on the spot, the others
/// (`\u`) the long way.
pub fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    let mut from = 0;
    loop {
        // The string's specials, of which validated contents hold only backslashes (a quote or
        // control character, should one be there, is kept as it is).
        let i = find_special(rest.as_bytes(), from);
        match rest.as_bytes().get(i) {
            None => break,
            Some(b'\\') => {}
            Some(_) => {
                from = i + 1;
                continue;
            }
        }
        from = 0;
        // `i` is at an ASCII byte, so both slices start and end on character boundaries.
        out.push_str(&rest[..i]);
        let esc = &rest[i + 1..];
        if let Some(c) = short_escape(esc.as_bytes().first()) {
            out.push(c);
            rest = &esc[1..];
            continue;
        }
        let mut chars = esc.chars();
        let c = chars.next().unwrap_or('\\');
        let mut used = 1;
        match c {
            'u' => {
                let hi = esc
                    .get(1..5)
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .unwrap_or(0xFFFD);
                used = 5;
                if (0xD800..0xDC00).contains(&hi) && esc.get(5..7) == Some("\\u") {
                    let lo = esc.get(7..11).and_then(|h| u32::from_str_radix(h, 16).ok());
                    if let Some(lo) = lo.filter(|lo| (0xDC00..0xE000).contains(lo)) {
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        used = 11;
                    } else {
                        out.push('\u{FFFD}');
                    }
                } else {
                    out.push(char::from_u32(hi).unwrap_or('\u{FFFD}'));
                }
            }
            other => out.push(other),
        }
        rest = esc.get(used..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// Writes `s` as a JSON string literal (with quotes) onto `out`, escaping what JSON requires
/// (control characters other than `\n`, `\r` and `\t` as `\u00xx`).
pub fn write_string(out: &mut String, s: &str) {
    write_escaped(out, s, false);
}

/// Validates that `src` is exactly one JSON value (whitespace around it allowed).
///
/// # Errors
/// The first syntax error.
pub fn validate(src: &str) -> Result<Span> {
    let mut s = Scanner::new(src)?;
    let span = s.skip_value()?;
    s.finish()?;
    Ok(span)
}

#[cfg(test)]
mod tests {

    /// The serde-style writer agrees with serde_json on every ASCII byte, on non-ASCII text, and
    /// on strings that are nothing but escapes or have none.
    #[test]
    fn write_string_as_serde_matches_serde_json() {
        let mut cases: Vec<String> = (0u8..0x80)
            .map(|b| format!("a{}b", char::from(b)))
            .collect();
        cases.extend(
            [
                "",
                "plain text without escapes, longer than eight bytes",
                "\"\\\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}",
                "résumé ✓ 🦀 \u{2028}\u{2029}",
                "tail escape at the end\n",
                "\nhead escape",
            ]
            .map(str::to_owned),
        );
        for s in &cases {
            let mut ours = String::new();
            write_string_as_serde(&mut ours, s);
            let theirs = serde_json::to_string(s).expect("a string serialises");
            assert_eq!(ours, theirs, "{s:?}");
            // `write_string` shares the writer and keeps its own spelling of control characters.
            let mut plain = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => plain.push_str("\\\""),
                    '\\' => plain.push_str("\\\\"),
                    '\n' => plain.push_str("\\n"),
                    '\r' => plain.push_str("\\r"),
                    '\t' => plain.push_str("\\t"),
                    c if (c as u32) < 0x20 => plain.push_str(&format!("\\u{:04x}", c as u32)),
                    c => plain.push(c),
                }
            }
            plain.push('"');
            let mut written = String::new();
            write_string(&mut written, s);
            assert_eq!(written, plain, "{s:?}");
        }
    }

    use super::*;

    #[test]
    fn accepts_what_serde_json_accepts() {
        let cases = [
            r#"{"a":[1,2.5,-0,1e2,1E+2,-3.25e-7],"b":"x\"y\\u00e9\n","c":true,"d":false,"e":null}"#,
            " [ ] ",
            "{}",
            r#""\ud83d\ude00""#,
            "0",
        ];
        for c in cases {
            assert!(validate(c).is_ok(), "{c}");
            assert!(serde_json::from_str::<serde::de::IgnoredAny>(c).is_ok());
        }
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        let cases = [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "\"\u{1}\"",
            "\"\\x\"",
            "tru",
            "{} {}",
            "[1 2]",
            "{\"a\":1,}",
            "\"abc",
            "\"\\u12\"",
            "nul",
            "1e",
        ];
        for c in cases {
            assert!(validate(c).is_err(), "{c:?} should fail");
            assert!(
                serde_json::from_str::<serde::de::IgnoredAny>(c).is_err(),
                "{c:?}"
            );
        }
    }

    #[test]
    fn depth_limit_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        let err = validate(&deep).expect_err("too deep");
        assert!(err.message.contains("nesting"), "{err}");
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(validate(&ok).is_ok());
    }

    #[test]
    fn unescape_matches_serde() {
        let raw = r#"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\u0000 z"#;
        let want: String = serde_json::from_str(&format!("\"{raw}\"")).unwrap_or_default();
        assert_eq!(unescape(raw), want);
    }

    use proptest::prelude::*;

    proptest! {
        /// Any text, written by serde_json (short escapes, `\u00xx` for other control
        /// characters) and by hand in every escape form, decodes back to itself: escapes next to
        /// each other, at either end, between multi-byte characters, across eight-byte words.
        #[test]
        fn unescape_decodes_what_serde_writes(
            text in proptest::collection::vec(
                proptest::sample::select(vec!['a', 'z', ' ', '"', '\\', '/', '\n', '\t', '\r', '\u{8}', '\u{c}', '\u{1}', '\u{1f}', 'é', '😀', '\u{3000}']),
                0..80,
            ).prop_map(|v| v.into_iter().collect::<String>()),
        ) {
            let written = serde_json::to_string(&text).unwrap_or_default();
            let inner = &written[1..written.len() - 1];
            prop_assert_eq!(unescape(inner), text.clone());
            // Every character as a `\u` escape (pairs for the astral plane), and `/` as `\/`.
            let mut by_hand = String::new();
            for c in text.chars() {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    by_hand.push_str(&format!("\\u{u:04x}"));
                }
                if c == '/' {
                    by_hand.push_str("\\/");
                }
            }
            let want: String = text.chars().flat_map(|c| if c == '/' { vec![c, c] } else { vec![c] }).collect();
            prop_assert_eq!(unescape(&by_hand), want);
        }
    }

    #[test]
    fn blank_detection_agrees_with_decoding() {
        let cases = [
            ("", true),
            ("  \\n\\t ", true),
            ("\\u0020\\u00a0", true),
            ("\\u3000", true),
            ("\\u0041", false),
            ("a", false),
            ("\\n x", false),
            ("\u{3000}", true),
            ("\\\\", false),
        ];
        for (raw, blank) in cases {
            let src = format!("\"{raw}\"");
            let st = Scanner::new(&src)
                .and_then(|mut s| s.string())
                .expect("a string");
            assert_eq!(st.is_blank(&src), blank, "{raw:?}");
        }
    }

    #[test]
    fn write_string_round_trips() {
        let s = "quote\" back\\ nl\n tab\t ctl\u{1} é 😀";
        let mut out = String::new();
        write_string(&mut out, s);
        let back: String = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(back, s);
    }

    #[test]
    fn special_byte_search_agrees_with_bytewise() {
        let s = "abcdefghijklmnop\"qrstu\\vwxyz\u{1f}";
        for start in 0..s.len() {
            let want = s.as_bytes()[start..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .map_or(s.len(), |p| p + start);
            assert_eq!(find_special(s.as_bytes(), start), want);
        }
    }

    /// The word-at-a-time search (one word, then two a step, then one, then bytes) finds the
    /// first special byte wherever it falls, after fillers that sit next to the specials' values
    /// (0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff), and with a second special after it
    /// (whose borrow must not move the answer).
    #[test]
    fn special_byte_search_finds_every_position_from_every_start() {
        let fillers = [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff, b'a'];
        for (f, &fill) in fillers.iter().enumerate() {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 40, 41] {
                    for at in 0..=len {
                        let mut buf = vec![fill; len];
                        if at < len {
                            buf[at] = special;
                            if at + 1 < len {
                                buf[at + 1] = [0x00, b'"'][f % 2];
                            }
                        }
                        for start in 0..=at.min(len) {
                            let want = buf[start..]
                                .iter()
                                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                                .map_or(len, |p| p + start);
                            assert_eq!(
                                find_special(&buf, start),
                                want,
                                "filler {fill:#x}, special {special:#x} at {at} of {len}, from {start}"
                            );
                        }
                    }
                }
            }
        }
    }
}
