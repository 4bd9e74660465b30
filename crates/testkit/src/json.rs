//! A JSON tree whose exact text the generator controls: key order is whatever the tree holds,
//! every string chooses its own escaping, and a [`Style`] chooses the whitespace.
//!
//! Real agents serialise the same conversation in many ways (compact `JSON.stringify`, Python's
//! `", "` separators, pretty files with CRLF, `\u00e9` versus raw `é`, `\/`). turnkeeper promises
//! byte identity, so the generator must produce all of them.

use std::borrow::Cow;
use std::fmt::Write as _;

/// An object member's name: usually a literal, so it costs no allocation.
pub type Key = Cow<'static, str>;

/// How a string's characters are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Esc {
    /// Only what JSON requires: `"`, `\`, control characters (`\n`, `\t`, `\u0001`, ...).
    Minimal,
    /// Every non-ASCII character as `\uXXXX`, astral ones as surrogate pairs
    /// (`\ud83d\ude00`), the way Python's `json.dumps` writes by default.
    Ascii,
    /// Like [`Esc::Minimal`], plus `/` written as `\/` (PHP, some Java encoders).
    Slashes,
}

/// A string and how to write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JStr {
    /// The decoded text.
    pub text: String,
    /// Its escaping.
    pub esc: Esc,
}

/// A JSON value with a fixed key order and per-string escaping.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as its exact text (`1024`, `0.0123`, `1e3`).
    Num(String),
    /// A string.
    Str(JStr),
    /// An array.
    Arr(Vec<J>),
    /// An object, members in output order (duplicates allowed, as JSON text allows them).
    Obj(Vec<(Key, J)>),
}

impl J {
    /// A string written with minimal escaping.
    pub fn s(text: impl Into<String>) -> J {
        J::Str(JStr {
            text: text.into(),
            esc: Esc::Minimal,
        })
    }

    /// A number.
    pub fn n(v: impl std::fmt::Display) -> J {
        J::Num(v.to_string())
    }

    /// An object from `(key, value)` pairs, in the given order.
    pub fn obj<K: Into<Key>>(members: impl IntoIterator<Item = (K, J)>) -> J {
        J::Obj(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&J> {
        match self {
            J::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The member `key` of an object, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut J> {
        match self {
            J::Obj(m) => m.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` (replacing the first member of that name, or appending).
    pub fn set(&mut self, key: &str, value: J) {
        if let J::Obj(m) = self {
            match m.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => m.push((Cow::Owned(key.to_owned()), value)),
            }
        }
    }

    /// Removes every member named `key`; returns the first removed value.
    pub fn remove(&mut self, key: &str) -> Option<J> {
        let J::Obj(m) = self else { return None };
        let pos = m.iter().position(|(k, _)| k == key)?;
        let v = m.remove(pos).1;
        m.retain(|(k, _)| k != key);
        Some(v)
    }

    /// The decoded text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(&s.text),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn as_arr(&self) -> Option<&Vec<J>> {
        match self {
            J::Arr(a) => Some(a),
            _ => None,
        }
    }

    /// The elements of an array, mutably.
    pub fn as_arr_mut(&mut self) -> Option<&mut Vec<J>> {
        match self {
            J::Arr(a) => Some(a),
            _ => None,
        }
    }

    /// Converts a `serde_json` value (keys in its map order, minimal escaping).
    pub fn from_value(v: &serde_json::Value) -> J {
        match v {
            serde_json::Value::Null => J::Null,
            serde_json::Value::Bool(b) => J::Bool(*b),
            serde_json::Value::Number(n) => J::Num(n.to_string()),
            serde_json::Value::String(s) => J::s(s.clone()),
            serde_json::Value::Array(a) => J::Arr(a.iter().map(J::from_value).collect()),
            serde_json::Value::Object(o) => J::Obj(
                o.iter()
                    .map(|(k, v)| (Cow::Owned(k.clone()), J::from_value(v)))
                    .collect(),
            ),
        }
    }
}

/// Whitespace of the serialised text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    /// Spaces per level; 0 writes everything on one line.
    pub indent: u8,
    /// `"key": value` instead of `"key":value` (one-line output only; pretty output always
    /// writes the space).
    pub colon_space: bool,
    /// `, ` between members on one line (Python's default separators).
    pub comma_space: bool,
    /// Line ends are `\r\n` (pretty output only).
    pub crlf: bool,
    /// A newline (and for pretty output, nothing else) after the top-level value.
    pub trailing_newline: bool,
}

impl Style {
    /// Serialises `v` in this style.
    pub fn write(&self, v: &J) -> String {
        let mut out = String::new();
        self.value(v, 0, &mut out);
        if self.trailing_newline {
            out.push_str(if self.crlf { "\r\n" } else { "\n" });
        }
        out
    }

    fn newline(&self, depth: usize, out: &mut String) {
        out.push_str(if self.crlf { "\r\n" } else { "\n" });
        for _ in 0..depth * self.indent as usize {
            out.push(' ');
        }
    }

    /// The separator before member `i` of a container at `depth`, and its line break.
    fn before_member(&self, i: usize, depth: usize, out: &mut String) {
        if i > 0 {
            out.push(',');
            if self.indent == 0 && self.comma_space {
                out.push(' ');
            }
        }
        if self.indent > 0 {
            self.newline(depth + 1, out);
        }
    }

    /// The line break before the closing bracket of a container at `depth`.
    fn before_close(&self, empty: bool, depth: usize, out: &mut String) {
        if self.indent > 0 && !empty {
            self.newline(depth, out);
        }
    }

    fn value(&self, v: &J, depth: usize, out: &mut String) {
        match v {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(n) => out.push_str(n),
            J::Str(s) => write_str(out, &s.text, s.esc),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    self.before_member(i, depth, out);
                    self.value(item, depth + 1, out);
                }
                self.before_close(items.is_empty(), depth, out);
                out.push(']');
            }
            J::Obj(members) => {
                out.push('{');
                for (i, (k, item)) in members.iter().enumerate() {
                    self.before_member(i, depth, out);
                    write_str(out, k, Esc::Minimal);
                    out.push(':');
                    if self.indent > 0 || self.colon_space {
                        out.push(' ');
                    }
                    self.value(item, depth + 1, out);
                }
                self.before_close(members.is_empty(), depth, out);
                out.push('}');
            }
        }
    }
}

/// Which bytes an escaping writes as they are (a byte of a multi-byte character counts as its
/// character does).
const fn plain_bytes(slash: bool, ascii: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 256 {
        t[b] = !(b == b'"' as usize
            || b == b'\\' as usize
            || (slash && b == b'/' as usize)
            || (ascii && b >= 0x80));
        b += 1;
    }
    t
}

const PLAIN_MINIMAL: [bool; 256] = plain_bytes(false, false);
const PLAIN_ASCII: [bool; 256] = plain_bytes(false, true);
const PLAIN_SLASHES: [bool; 256] = plain_bytes(true, false);

/// The length of the run of bytes at the start of `b` that `esc` writes as they are: eight
/// bytes at a time while none of them needs care (a word test per eight bytes instead of a
/// test per byte), then byte by byte.
fn plain_run(b: &[u8], esc: Esc, plain: &[bool; 256]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A high bit set in each byte of `x` that is zero.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = 0;
    while let Some(w) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        let x = u64::from_le_bytes(word);
        // Bytes below 0x20, quotes, backslashes, and per escaping slashes or any non-ASCII
        // byte. Each test is non-zero whenever such a byte is in the word (it may also fire for
        // a word without one: the byte-wise loop below then decides exactly).
        let mut care = x.wrapping_sub(0x20 * ONES) & !x & HIGH
            | zero(x ^ (b'"' as u64 * ONES))
            | zero(x ^ (b'\\' as u64 * ONES));
        match esc {
            Esc::Minimal => {}
            Esc::Ascii => care |= x & HIGH,
            Esc::Slashes => care |= zero(x ^ (b'/' as u64 * ONES)),
        }
        if care != 0 {
            break;
        }
        i += 8;
    }
    i + b[i..]
        .iter()
        .position(|&c| !plain[usize::from(c)])
        .unwrap_or(b.len() - i)
}

/// Writes `s` as a JSON string literal with the given escaping.
pub fn write_str(out: &mut String, s: &str, esc: Esc) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Runs of characters written as they are are copied at once; only the others go one by one.
    let plain = match esc {
        Esc::Minimal => &PLAIN_MINIMAL,
        Esc::Ascii => &PLAIN_ASCII,
        Esc::Slashes => &PLAIN_SLASHES,
    };
    let mut rest = s;
    while !rest.is_empty() {
        let run = plain_run(rest.as_bytes(), esc, plain);
        out.push_str(&rest[..run]);
        rest = &rest[run..];
        let Some(c) = rest.chars().next() else {
            break;
        };
        rest = &rest[c.len_utf8()..];
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '/' if esc == Esc::Slashes => out.push_str("\\/"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if esc == Esc::Ascii && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip_through_serde() {
        let text = "a\"b\\c\nd\u{1}é😀/\u{2028}";
        for esc in [Esc::Minimal, Esc::Ascii, Esc::Slashes] {
            let mut out = String::new();
            write_str(&mut out, text, esc);
            let back: String = serde_json::from_str(&out).expect("valid JSON string");
            assert_eq!(back, text, "{esc:?}: {out}");
        }
        let mut out = String::new();
        write_str(&mut out, "é😀", Esc::Ascii);
        assert_eq!(out, r#""\u00e9\ud83d\ude00""#);
        let mut out = String::new();
        write_str(&mut out, "a/\u{1}\"é\tz", Esc::Slashes);
        assert_eq!(out, r#""a\/\u0001\"é\tz""#);
        let mut out = String::new();
        write_str(&mut out, "x/é\\", Esc::Minimal);
        assert_eq!(out, r#""x/é\\""#);
        // Runs of eight and more, with the byte that needs care at every place of a word.
        let plain = "abcdefghijklmnopqrstuvwxyz0123456789";
        for esc in [Esc::Minimal, Esc::Ascii, Esc::Slashes] {
            for at in 0..plain.len() {
                for special in ["\"", "\\", "\n", "\u{1}", "/", "é", "\u{7f}", "\u{a0}"] {
                    let text = format!("{}{special}{}", &plain[..at], &plain[at..]);
                    let mut out = String::new();
                    write_str(&mut out, &text, esc);
                    let back: String = serde_json::from_str(&out).expect("valid JSON string");
                    assert_eq!(back, text, "{esc:?}: {out}");
                    let escaped =
                        out.contains("\\/") || out.contains("\\u00e9") || out.contains("\\u00a0");
                    let wanted = match esc {
                        Esc::Minimal => false,
                        Esc::Ascii => special == "é" || special == "\u{a0}",
                        Esc::Slashes => special == "/",
                    };
                    assert_eq!(escaped, wanted, "{esc:?}: {out}");
                }
            }
        }
    }

    #[test]
    fn styles_give_different_bytes_for_the_same_value() {
        let v = J::obj([("a", J::Arr(vec![J::n(1), J::Bool(true)])), ("b", J::Null)]);
        let compact = Style::default().write(&v);
        assert_eq!(compact, r#"{"a":[1,true],"b":null}"#);
        let python = Style {
            colon_space: true,
            comma_space: true,
            ..Style::default()
        }
        .write(&v);
        assert_eq!(python, r#"{"a": [1, true], "b": null}"#);
        let pretty = Style {
            indent: 2,
            crlf: true,
            ..Style::default()
        }
        .write(&v);
        assert_eq!(
            pretty,
            "{\r\n  \"a\": [\r\n    1,\r\n    true\r\n  ],\r\n  \"b\": null\r\n}"
        );
        for text in [compact, python, pretty] {
            let parsed: serde_json::Value = serde_json::from_str(&text).expect("valid");
            assert_eq!(parsed["a"][1], serde_json::Value::Bool(true));
        }
    }
}
