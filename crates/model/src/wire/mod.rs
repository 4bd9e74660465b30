//! The OpenAI-style wire families: OpenAI Chat Completions (and every OpenAI-compatible vendor),
//! OpenAI Responses and Bedrock Converse.
//!
//! These formats do not keep reasoning as blocks of a content array, as Anthropic and Gemini do:
//! Chat carries it in message fields (`reasoning_content`, `reasoning`, `reasoning_details`),
//! Responses as items of their own (`type: "reasoning"`), Converse as `reasoningContent` blocks
//! keyed by name rather than by a `type`. Each has its own view here, read in one pass with the
//! same [`Scanner`] as the other readers and holding only spans into the
//! input; a repair is a [`Plan`] of byte-range edits and array rewrites, written by [`render`],
//! which copies every byte it was not told to change. A body nothing was planned for is never
//! written at all: the caller sends the input.
//!
//! The neutral [`Transcript`](crate::Transcript) view (and its [`Draft`](crate::Draft)) stays the
//! view of the block-list formats; forcing fields and items into blocks would make a repair
//! write them back in the wrong place (see ARCHITECTURE.md).

pub mod chat;
pub mod converse;
pub mod responses;

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::ModelError;
use crate::json::{Kind, Scanner, Span, StrSpan, SyntaxError};

/// One member of an object: its key and the span of its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Member {
    /// The key (contents, without quotes).
    pub key: StrSpan,
    /// The value.
    pub value: Span,
}

impl Member {
    /// Offset of the key's opening quote.
    pub fn start(&self) -> u32 {
        self.key.span.start.saturating_sub(1)
    }

    /// The same member after its bytes moved from offset `from` to offset `to`.
    pub fn moved(&self, from: u32, to: u32) -> Member {
        Member {
            key: self.key.moved(from, to),
            value: self.value.moved(from, to),
        }
    }
}

/// A value as found: its span and its JSON kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    /// The whole value.
    pub span: Span,
    /// Its kind.
    pub kind: Kind,
    /// For a string: the contents.
    pub string: Option<StrSpan>,
}

impl Value {
    /// True for a string that is empty (no byte between the quotes).
    pub fn is_empty_string(&self) -> bool {
        self.string.is_some_and(|s| s.span.is_empty())
    }

    /// The same value after its bytes moved from offset `from` to offset `to`.
    pub fn moved(&self, from: u32, to: u32) -> Value {
        Value {
            span: self.span.moved(from, to),
            kind: self.kind,
            string: self.string.map(|s| s.moved(from, to)),
        }
    }
}

/// An array as found: its span and the span of each element.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArrayAt {
    /// The array, brackets included.
    pub span: Span,
    /// Each element.
    pub elems: Vec<Span>,
}

impl ArrayAt {
    /// The same array after its bytes moved from offset `from` to offset `to`.
    pub fn moved(&self, from: u32, to: u32) -> ArrayAt {
        ArrayAt {
            span: self.span.moved(from, to),
            elems: self.elems.iter().map(|e| e.moved(from, to)).collect(),
        }
    }
}

/// Reads any value, recording its kind and, for a string, its contents.
pub(crate) fn value(s: &mut Scanner<'_>) -> Result<Value, SyntaxError> {
    let kind = s.peek_kind()?;
    if kind == Kind::String {
        let start = s.pos();
        let st = s.string()?;
        return Ok(Value {
            span: Span::new(start, s.pos()),
            kind,
            string: Some(st),
        });
    }
    let span = s.skip_value()?;
    Ok(Value {
        span,
        kind,
        string: None,
    })
}

/// Compares a key with a plain ASCII name, decoding escapes only when the key has them.
pub(crate) fn key_is(src: &str, key: StrSpan, name: &str) -> bool {
    if key.escaped {
        key.decode(src) == name
    } else {
        key.raw(src) == name
    }
}

/// A shape error found while reading: offset, JSON path, what was expected.
pub(crate) type Bad = Option<(usize, String, &'static str)>;

/// The top-level object of a wire body, read.
pub(crate) struct Root {
    /// Its span.
    pub span: Span,
    /// Its members, in order.
    pub members: Vec<Member>,
}

/// Reads the top-level object of a body of a wire family in one pass: `field` is called with each
/// member's key and must consume its value (reading what its family needs, skipping the rest;
/// it records shape errors in `bad`), and every member's span is recorded. A body that is not an
/// object is a shape error saying `not_object`. A syntax error anywhere comes first (the body is
/// not JSON); then the first shape error recorded.
pub(crate) fn read_root<'a>(
    src: &'a str,
    not_object: &'static str,
    bad: &mut Bad,
    mut field: impl FnMut(&mut Scanner<'a>, StrSpan, &mut Bad) -> Result<(), SyntaxError>,
) -> Result<Root, ModelError> {
    let mut members = Vec::new();
    let res = (|| -> Result<Span, SyntaxError> {
        let mut s = Scanner::new(src)?;
        if s.peek_kind()? != Kind::Object {
            bad.get_or_insert((s.pos(), String::new(), not_object));
            let span = s.skip_value()?;
            s.finish()?;
            return Ok(span);
        }
        let span = s.object(|s, key| -> Result<(), SyntaxError> {
            s.skip_ws();
            let start = s.pos();
            field(s, key, bad)?;
            members.push(Member {
                key,
                value: Span::new(start, s.pos()),
            });
            Ok(())
        })?;
        s.finish()?;
        Ok(span)
    })();
    let span = res.map_err(|e| syntax_error(src, e))?;
    if let Some((offset, path, message)) = bad.take() {
        return Err(ModelError::Shape {
            path,
            offset,
            message: message.into(),
        });
    }
    Ok(Root { span, members })
}

/// A shape error at `offset`, at JSON path `path`.
pub(crate) fn shape(offset: usize, path: String, message: &'static str) -> ModelError {
    ModelError::Shape {
        path,
        offset,
        message: message.into(),
    }
}

/// A scanner's syntax error as a [`ModelError`] with its line and column.
pub(crate) fn syntax_error(src: &str, e: SyntaxError) -> ModelError {
    let (line, column) = crate::read::line_col(src, e.offset);
    ModelError::Syntax {
        path: String::new(),
        offset: e.offset,
        line,
        column,
        message: e.message,
    }
}

/// One replacement: the bytes of `span` become `text` (an empty span inserts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced.
    pub span: Span,
    /// What replaces them.
    pub text: String,
}

impl Edit {
    /// Inserts `text` at offset `at`.
    pub fn insert(at: u32, text: impl Into<String>) -> Edit {
        Edit {
            span: Span { start: at, end: at },
            text: text.into(),
        }
    }

    /// Removes member `k` of an object whose members are `members`, with the comma that
    /// separated it from its neighbour.
    pub fn remove_member(members: &[Member], k: usize) -> Option<Edit> {
        let m = members.get(k)?;
        let span = if k > 0 {
            Span {
                start: members[k - 1].value.end,
                end: m.value.end,
            }
        } else if let Some(next) = members.get(1) {
            Span {
                start: m.start(),
                end: next.start(),
            }
        } else {
            Span {
                start: m.start(),
                end: m.value.end,
            }
        };
        Some(Edit {
            span,
            text: String::new(),
        })
    }

    /// Appends the member `"key": json` to the object at `obj` whose members are `members`,
    /// after its last member (or as its only one).
    pub fn add_member(obj: Span, members: &[Member], key: &str, json: &str) -> Edit {
        let mut text = String::with_capacity(key.len() + json.len() + 4);
        match members.last() {
            Some(last) => {
                text.push(',');
                crate::json::write_string(&mut text, key);
                text.push(':');
                text.push_str(json);
                Edit::insert(last.value.end, text)
            }
            None => {
                crate::json::write_string(&mut text, key);
                text.push(':');
                text.push_str(json);
                Edit::insert(obj.start + 1, text)
            }
        }
    }
}

impl Edit {
    /// Inserts the member `"key": json` into the object at `obj` (members `members`) the way the
    /// object writes its own: with its separators (`, ` or `,` between members, `: ` or `:`
    /// after a key, taken from its first members), at the place sorted keys would give it when
    /// the object's keys are sorted, else after its last member. Used to put a field back that
    /// a client dropped, so that the object comes out as the client wrote it before.
    pub fn insert_member_like(
        src: &str,
        obj: Span,
        members: &[Member],
        key: &str,
        json: &str,
    ) -> Edit {
        let Some(first) = members.first() else {
            return Edit::add_member(obj, members, key, json);
        };
        // After the key's closing quote, up to the value.
        let colon = Span::new(first.key.span.end as usize + 1, first.value.start as usize)
            .get(src)
            .to_owned();
        let colon = if colon.trim() == ":" {
            colon
        } else {
            ":".to_owned()
        };
        let comma = members
            .get(1)
            .map(|m| Span::new(first.value.end as usize, m.start() as usize).get(src))
            .filter(|c| c.trim() == ",")
            .unwrap_or(",")
            .to_owned();
        let keys: Vec<std::borrow::Cow<'_, str>> =
            members.iter().map(|m| m.key.decode(src)).collect();
        let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
        let mut member = String::with_capacity(key.len() + json.len() + 6);
        crate::json::write_string(&mut member, key);
        member.push_str(&colon);
        member.push_str(json);
        let before = if sorted {
            keys.iter().position(|k| k.as_ref() > key)
        } else {
            None
        };
        match before {
            Some(k) => {
                member.push_str(&comma);
                Edit::insert(members[k].start(), member)
            }
            None => {
                let mut text = comma;
                text.push_str(&member);
                Edit::insert(members[members.len() - 1].value.end, text)
            }
        }
    }
}

/// Writes `src[range]` with `edits` applied (each inside `range`; overlapping edits after the
/// first are skipped) into `out`.
pub fn splice_into(src: &str, range: Span, edits: &mut [Edit], out: &mut String) {
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let mut at = range.start;
    for e in edits.iter() {
        if e.span.start < at || e.span.end > range.end {
            continue;
        }
        out.push_str(Span::new(at as usize, e.span.start as usize).get(src));
        out.push_str(&e.text);
        at = e.span.end;
    }
    out.push_str(Span::new(at as usize, range.end as usize).get(src));
}

/// One element of a rewritten array: an original element (by index) or new JSON text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Element `i` of the original array, with its own edits applied.
    Orig(usize),
    /// New JSON text.
    New(String),
}

/// The changes to one body: edits anywhere outside the item array, a new order for the item
/// array (`messages`, `input`), and edits inside single items.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Edits outside the item array.
    pub top: Vec<Edit>,
    /// The item array's new elements, when items were removed, moved or added.
    pub items: Option<Vec<Piece>>,
    /// Edits inside item `i` (applied wherever it ends up).
    pub inner: BTreeMap<usize, Vec<Edit>>,
}

impl Plan {
    /// True when nothing is planned.
    pub fn is_empty(&self) -> bool {
        self.top.is_empty() && self.items.is_none() && self.inner.values().all(Vec::is_empty)
    }

    /// The current order of the items (the original order until one was moved or removed).
    pub fn order(&mut self, n: usize) -> &mut Vec<Piece> {
        self.items
            .get_or_insert_with(|| (0..n).map(Piece::Orig).collect())
    }

    /// Removes original item `i` from the order.
    pub fn remove_item(&mut self, n: usize, i: usize) {
        self.order(n).retain(|p| *p != Piece::Orig(i));
    }

    /// Adds an edit inside item `i`.
    pub fn edit(&mut self, i: usize, e: Edit) {
        self.inner.entry(i).or_default().push(e);
    }

    /// True when original item `i` is still in the order.
    pub fn keeps(&self, i: usize) -> bool {
        self.items
            .as_ref()
            .is_none_or(|o| o.contains(&Piece::Orig(i)))
    }
}

/// Writes `src` with `plan` applied, the item array being `array`; `None` when the plan is empty
/// (the input is the body).
pub fn render(src: &str, array: &ArrayAt, mut plan: Plan) -> Option<String> {
    if plan.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(src.len() + 256);
    let mut top = std::mem::take(&mut plan.top);
    match plan.items.take() {
        None => {
            for (i, mut edits) in std::mem::take(&mut plan.inner) {
                if array.elems.get(i).is_some() {
                    top.append(&mut edits);
                }
            }
            splice_into(src, Span::new(0, src.len()), &mut top, &mut out);
        }
        Some(order) => {
            let arr = write_array(src, array, &order, &mut plan.inner);
            top.push(Edit {
                span: array.span,
                text: arr,
            });
            splice_into(src, Span::new(0, src.len()), &mut top, &mut out);
        }
    }
    Some(out)
}

/// The JSON text of `array` rewritten as `order`: original elements keep their bytes (with their
/// `inner` edits applied) and the separators of the original are reused.
pub fn write_array(
    src: &str,
    array: &ArrayAt,
    order: &[Piece],
    inner: &mut BTreeMap<usize, Vec<Edit>>,
) -> String {
    let open = array.span.start + 1;
    let close = array.span.end.saturating_sub(1);
    let (lead, sep, trail): (Cow<'_, str>, Cow<'_, str>, Cow<'_, str>) =
        match (array.elems.first(), array.elems.get(1), array.elems.last()) {
            (Some(first), second, Some(last)) => (
                Cow::Borrowed(Span::new(open as usize, first.start as usize).get(src)),
                match second {
                    Some(s2) => {
                        Cow::Borrowed(Span::new(first.end as usize, s2.start as usize).get(src))
                    }
                    None => Cow::Borrowed(","),
                },
                Cow::Borrowed(Span::new(last.end as usize, close as usize).get(src)),
            ),
            _ => (Cow::Borrowed(""), Cow::Borrowed(","), Cow::Borrowed("")),
        };
    let mut out = String::with_capacity(array.span.len() + 64);
    out.push('[');
    if order.is_empty() {
        out.push(']');
        return out;
    }
    out.push_str(&lead);
    for (n, p) in order.iter().enumerate() {
        if n > 0 {
            out.push_str(&sep);
        }
        match p {
            Piece::Orig(i) => {
                if let Some(span) = array.elems.get(*i) {
                    let mut edits = inner.remove(i).unwrap_or_default();
                    splice_into(src, *span, &mut edits, &mut out);
                }
            }
            Piece::New(text) => out.push_str(text),
        }
    }
    out.push_str(&trail);
    out.push(']');
    out
}

/// Which member of `members` has key `name`.
pub fn member_index(src: &str, members: &[Member], name: &str) -> Option<usize> {
    members.iter().position(|m| key_is(src, m.key, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(src: &str) -> ArrayAt {
        let mut s = Scanner::new(src).expect("scanner");
        let mut elems = Vec::new();
        let span = s
            .array(|s, _| -> Result<(), SyntaxError> {
                elems.push(s.skip_value()?);
                Ok(())
            })
            .expect("array");
        ArrayAt { span, elems }
    }

    fn check(src: &str, order: &[Piece], expect: &str) {
        let a = arr(src);
        let got = write_array(src, &a, order, &mut BTreeMap::new());
        assert_eq!(got, expect);
    }

    #[test]
    fn arrays_are_rewritten_with_their_own_separators() {
        check("[1, 2, 3]", &[Piece::Orig(0), Piece::Orig(2)], "[1, 3]");
        check(
            "[\n  1,\n  2\n]",
            &[Piece::Orig(1), Piece::Orig(0)],
            "[\n  2,\n  1\n]",
        );
        check("[1]", &[Piece::Orig(0), Piece::New("9".into())], "[1,9]");
        check("[ 1 ]", &[], "[]");
        check("[]", &[Piece::New("{}".into())], "[{}]");
    }

    #[test]
    fn members_are_removed_with_one_comma() {
        let src = r#"{"a":1, "b":2, "c":3}"#;
        let mut s = Scanner::new(src).expect("scanner");
        let mut members = Vec::new();
        let obj = s
            .object(|s, key| -> Result<(), SyntaxError> {
                let value = s.skip_value()?;
                members.push(Member { key, value });
                Ok(())
            })
            .expect("object");
        for (k, expect) in [
            (0, r#"{"b":2, "c":3}"#),
            (1, r#"{"a":1, "c":3}"#),
            (2, r#"{"a":1, "b":2}"#),
        ] {
            let mut out = String::new();
            let mut e = vec![Edit::remove_member(&members, k).expect("member")];
            splice_into(src, obj, &mut e, &mut out);
            assert_eq!(out, expect);
        }
        for (src2, expect) in [
            (r#"{"a": 1, "c": 3}"#, r#"{"a": 1, "b": "", "c": 3}"#),
            (r#"{"c":1,"a":3}"#, r#"{"c":1,"a":3,"b":""}"#),
            (r#"{"a" : 1}"#, r#"{"a" : 1,"b" : ""}"#),
            ("{}", r#"{"b":""}"#),
        ] {
            let mut s2 = Scanner::new(src2).expect("scanner");
            let mut m2 = Vec::new();
            let o2 = s2
                .object(|s, key| -> Result<(), SyntaxError> {
                    let value = s.skip_value()?;
                    m2.push(Member { key, value });
                    Ok(())
                })
                .expect("object");
            let mut out = String::new();
            let mut e = vec![Edit::insert_member_like(src2, o2, &m2, "b", "\"\"")];
            splice_into(src2, o2, &mut e, &mut out);
            assert_eq!(out, expect, "{src2}");
        }
        let mut out = String::new();
        let mut e = vec![Edit::add_member(obj, &members, "d", "\"\"")];
        splice_into(src, obj, &mut e, &mut out);
        assert_eq!(out, r#"{"a":1, "b":2, "c":3,"d":""}"#);
    }
}
