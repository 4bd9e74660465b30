//! A stored OpenCode session ([`Session`]), the record builders the store readers share, and
//! reading an exported one ([`load_export`]).
//!
//! The three forms of a session (the JSON-file tree and the SQLite database, read by
//! `turnkeeper_stores`, and an exported JSON document, read here) produce the same [`Session`]: each message and part keeps its exact stored bytes
//! ([`StoredPart::raw`]) next to its typed view, and damage confined to one file or row becomes a
//! [`Problem`] in [`Session::problems`] instead of failing the whole load.
//!
//! Ids are taken from locations (file names, directory names, id columns), never from bodies,
//! as OpenCode's own importer does (opencode-storage.md §3.2). Every id that would be used to
//! build a path is checked with [`check_id`], and every path is resolved and checked to stay
//! under the storage root, so a hostile id or symlink cannot make us read elsewhere.
//!
//! Order: parts by id (OpenCode's own rule, §3.3); messages by `(time.created, id)`, which is
//! id order except across the 2026-08-14 wrap of OpenCode's id clock (§4.3).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::error::{OpencodeError, Origin, Problem, ProblemKind, check_id};
use super::types::{
    BodyIds, MessageInfo, Part, Peeked, SessionInfo, parse_message, parse_message_peeked,
    parse_part, parse_part_peeked, peek_object,
};

/// One stored part: exact bytes, typed view, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPart {
    /// The part id (from the file name, row or export entry).
    pub id: String,
    /// The message id (from the directory name, row or enclosing export entry).
    pub message_id: String,
    /// The exact stored JSON text: the whole file, the `data` column, or the export slice.
    /// Writing an unchanged part back means writing these bytes.
    pub raw: String,
    /// Ids found in the body (absent in SQLite `data`).
    pub body_ids: BodyIds,
    /// The typed view.
    pub typed: Part,
    /// Where it came from.
    pub origin: Origin,
}

/// One stored message with its parts in order.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// The message id (from the file name, row or export entry).
    pub id: String,
    /// The exact stored JSON text of the message info.
    pub raw: String,
    /// Ids found in the body.
    pub body_ids: BodyIds,
    /// The typed view.
    pub typed: MessageInfo,
    /// Parts, sorted by id.
    pub parts: Vec<StoredPart>,
    /// Where it came from.
    pub origin: Origin,
}

/// A whole session as read from one store.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// The session record (built from columns for SQLite; synthesised from message ids for a
    /// bare exported array).
    pub info: SessionInfo,
    /// The exact session file text (JSON store, or `info` of an `opencode export` document).
    pub raw_info: Option<String>,
    /// Messages in conversation order.
    pub messages: Vec<StoredMessage>,
    /// Problems found while loading; the affected files/rows were skipped.
    pub problems: Vec<Problem>,
}

impl Session {
    /// Renders the session as an exported JSON array of `{info, parts}`, splicing the stored
    /// bytes of every message and part unchanged.
    ///
    /// Bodies read from SQLite carry no id fields, so for those the ids are spliced in at the
    /// front of the object (as OpenCode rebuilds them on read, opencode-storage.md §5.4).
    pub fn to_export_array(&self) -> String {
        let mut out = String::from("[");
        for (i, m) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"info\":");
            let mut ids = Vec::new();
            if m.body_ids.id.is_none() {
                ids.push(("id", m.id.as_str()));
            }
            if m.body_ids.session_id.is_none() {
                ids.push(("sessionID", self.info.id.as_str()));
            }
            splice_ids(&mut out, &m.raw, &ids);
            out.push_str(",\"parts\":[");
            for (j, p) in m.parts.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                let mut ids = Vec::new();
                if p.body_ids.id.is_none() {
                    ids.push(("id", p.id.as_str()));
                }
                if p.body_ids.session_id.is_none() {
                    ids.push(("sessionID", self.info.id.as_str()));
                }
                if p.body_ids.message_id.is_none() {
                    ids.push(("messageID", m.id.as_str()));
                }
                splice_ids(&mut out, &p.raw, &ids);
            }
            out.push_str("]}");
        }
        out.push(']');
        out
    }
}

/// Appends `raw` (a JSON object) with `ids` inserted after its opening brace.
fn splice_ids(out: &mut String, raw: &str, ids: &[(&str, &str)]) {
    let trimmed = raw.trim();
    let Some(rest) = trimmed.strip_prefix('{') else {
        out.push_str(trimmed);
        return;
    };
    if ids.is_empty() {
        out.push_str(trimmed);
        return;
    }
    out.push('{');
    for (k, v) in ids {
        out.push_str(&serde_json::Value::from(*k).to_string());
        out.push(':');
        out.push_str(&serde_json::Value::from(*v).to_string());
        out.push(',');
    }
    let body = rest.trim_start();
    if body.starts_with('}') {
        out.pop();
    }
    out.push_str(body);
}

/// A [`Problem`] at `origin`.
pub fn problem(origin: Origin, kind: ProblemKind) -> Problem {
    Problem { origin, kind }
}

/// Puts messages in conversation order, `(time.created, id)` (id order except across the
/// 2026-08-14 wrap of OpenCode's id clock, opencode-storage.md §4.3), and each message's parts
/// in id order (§3.3).
pub fn sort_messages(messages: &mut [StoredMessage]) {
    messages.sort_by(|a, b| {
        (a.typed.created(), a.id.as_str()).cmp(&(b.typed.created(), b.id.as_str()))
    });
    for m in messages {
        m.parts.sort_by(|a, b| a.id.cmp(&b.id));
    }
}

/// Records an id mismatch (body vs. location); returns false when the body id is unsafe and
/// the record must be skipped.
pub fn check_body_id(
    field: &'static str,
    found: Option<&String>,
    expected: &str,
    origin: &Origin,
    problems: &mut Vec<Problem>,
) -> bool {
    let Some(found) = found else { return true };
    if let Err(reason) = check_id(found) {
        problems.push(problem(
            origin.clone(),
            ProblemKind::UnsafeId {
                id: found.clone(),
                reason,
            },
        ));
        return false;
    }
    if found != expected {
        problems.push(problem(
            origin.clone(),
            ProblemKind::IdMismatch {
                field,
                found: found.clone(),
                expected: expected.to_owned(),
            },
        ));
    }
    true
}

/// The problem of a record serde could not read: its JSON, or its shape.
pub fn shape_or_json(e: &serde_json::Error) -> ProblemKind {
    if e.is_data() {
        ProblemKind::WrongShape {
            detail: e.to_string(),
        }
    } else {
        ProblemKind::InvalidJson {
            detail: e.to_string(),
        }
    }
}

/// The record's id and parse when the id is safe and the text parsed; otherwise the problem,
/// recorded (an unsafe id first: it is what makes the record unusable wherever it came from).
fn safe_and_parsed<T>(
    id: String,
    parsed: Result<T, serde_json::Error>,
    origin: &Origin,
    problems: &mut Vec<Problem>,
) -> Option<(String, T)> {
    if let Err(reason) = check_id(&id) {
        problems.push(problem(
            origin.clone(),
            ProblemKind::UnsafeId { id, reason },
        ));
        return None;
    }
    match parsed {
        Ok(v) => Some((id, v)),
        Err(e) => {
            problems.push(problem(origin.clone(), shape_or_json(&e)));
            None
        }
    }
}

/// Builds a stored part from its text, or a problem.
pub fn build_part(
    id: String,
    message_id: &str,
    session_id: &str,
    raw: String,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredPart> {
    let parsed = parse_part(&raw);
    build_parsed_part(id, message_id, session_id, raw, parsed, origin, problems)
}

/// [`build_part`] of a part already parsed (`parsed` is `parse_part(&raw)`), for a loader that
/// needed the body's ids before it knew the part's id.
fn build_parsed_part(
    id: String,
    message_id: &str,
    session_id: &str,
    raw: String,
    parsed: Result<(BodyIds, Part), serde_json::Error>,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredPart> {
    let (id, (body_ids, typed)) = safe_and_parsed(id, parsed, &origin, problems)?;
    let ok = check_body_id("id", body_ids.id.as_ref(), &id, &origin, problems)
        && check_body_id(
            "messageID",
            body_ids.message_id.as_ref(),
            message_id,
            &origin,
            problems,
        )
        && check_body_id(
            "sessionID",
            body_ids.session_id.as_ref(),
            session_id,
            &origin,
            problems,
        );
    ok.then(|| StoredPart {
        id,
        message_id: message_id.to_owned(),
        raw,
        body_ids,
        typed,
        origin,
    })
}

/// Builds a stored message (without parts) from its text, or a problem.
pub fn build_message(
    id: String,
    session_id: &str,
    raw: String,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredMessage> {
    let parsed = parse_message(&raw);
    build_parsed_message(id, session_id, raw, parsed, origin, problems)
}

/// [`build_message`] of a message already parsed (`parsed` is `parse_message(&raw)`).
fn build_parsed_message(
    id: String,
    session_id: &str,
    raw: String,
    parsed: Result<(BodyIds, MessageInfo), serde_json::Error>,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredMessage> {
    let (id, (body_ids, typed)) = safe_and_parsed(id, parsed, &origin, problems)?;
    let ok = check_body_id("id", body_ids.id.as_ref(), &id, &origin, problems)
        && check_body_id(
            "sessionID",
            body_ids.session_id.as_ref(),
            session_id,
            &origin,
            problems,
        );
    ok.then(|| StoredMessage {
        id,
        raw,
        body_ids,
        typed,
        parts: Vec::new(),
        origin,
    })
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

/// One `{info, parts}` entry, borrowing the document's text (no copy until a part is kept).
#[derive(Deserialize)]
struct ExportEntry<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
    #[serde(default, borrow)]
    parts: Vec<&'a RawValue>,
}

/// An [`ExportEntry`] as the loader uses it: the exact slices of the info and of each part,
/// each with what a quick reading read of it in passing (its discriminants and ids), so that it
/// is not scanned again for them.
struct Entry<'a> {
    info: (&'a str, Option<Peeked>),
    parts: Vec<(&'a str, Option<Peeked>)>,
}

impl<'a> From<ExportEntry<'a>> for Entry<'a> {
    fn from(e: ExportEntry<'a>) -> Self {
        Entry {
            info: (e.info.get(), None),
            parts: e.parts.into_iter().map(|p| (p.get(), None)).collect(),
        }
    }
}

/// Reads the value at the scanner: an object through [`peek_object`], anything else skipped.
fn peeked_value<'a>(
    sc: &mut crate::json::Scanner<'a>,
) -> Result<(&'a str, Option<Peeked>), GiveUp> {
    let text = sc.src();
    if sc.peek_kind()? == crate::json::Kind::Object {
        let (span, peeked) = peek_object(sc)?;
        Ok((span.get(text), peeked))
    } else {
        Ok((sc.skip_value()?.get(text), None))
    }
}

/// Gives up on a quick reading (see [`quick_entries`]).
struct GiveUp;

impl From<crate::json::SyntaxError> for GiveUp {
    fn from(_: crate::json::SyntaxError) -> Self {
        GiveUp
    }
}

/// The bare-array export read with the crate's scanner, which skips long strings faster than
/// serde: `Some` only for a plain array of objects with one `info` and at most one array
/// `parts` (other keys ignored, as serde ignores them), spelled without escapes. Then serde's
/// `Vec<ExportEntry>` would read the same slices (both trim whitespace around a raw value);
/// anything else is left to serde, its result and its error.
fn quick_entries(text: &str) -> Option<Vec<Entry<'_>>> {
    use crate::json::Scanner;
    // `array` and `object` refuse any other kind of value, which gives the reading up.
    let mut sc = Scanner::new(text).ok()?;
    let mut entries = Vec::new();
    sc.array(|sc, _| -> Result<(), GiveUp> {
        let mut info = None;
        let mut parts: Option<Vec<(&str, Option<Peeked>)>> = None;
        sc.object(|sc, key| -> Result<(), GiveUp> {
            if key.escaped {
                return Err(GiveUp);
            }
            match key.raw(text) {
                "info" if info.is_none() => info = Some(peeked_value(sc)?),
                "parts" if parts.is_none() => {
                    let mut list = Vec::new();
                    sc.array(|sc, _| -> Result<(), GiveUp> {
                        list.push(peeked_value(sc)?);
                        Ok(())
                    })?;
                    parts = Some(list);
                }
                "info" | "parts" => return Err(GiveUp),
                _ => {
                    sc.skip_value()?;
                }
            }
            Ok(())
        })?;
        entries.push(Entry {
            info: info.ok_or(GiveUp)?,
            parts: parts.unwrap_or_default(),
        });
        Ok(())
    })
    .ok()?;
    sc.finish().ok()?;
    Some(entries)
}

#[derive(Deserialize)]
struct ExportDocument<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
    #[serde(borrow)]
    messages: Vec<ExportEntry<'a>>,
}

/// Loads a session from exported JSON: either a bare array of `{info, parts}` (what OpenCode
/// hands plugins, peers.md §1) or the `opencode export` document `{info, messages: [...]}`.
///
/// Every message and part keeps the exact slice of the document it came from. For a bare
/// array the session id is taken from the messages' `sessionID`.
///
/// # Errors
/// [`OpencodeError::InvalidExport`] when the text is not JSON or has neither shape.
pub fn load_export(text: &str, origin: &str) -> Result<Session, OpencodeError> {
    let invalid = |reason: String| OpencodeError::InvalidExport {
        origin: origin.to_owned(),
        reason,
    };
    let read = match quick_entries(text) {
        Some(entries) => Ok(entries),
        None => serde_json::from_str::<Vec<ExportEntry<'_>>>(text)
            .map(|v| v.into_iter().map(Entry::from).collect::<Vec<_>>()),
    };
    let (raw_info, entries, document) = match read {
        Ok(entries) => (None, entries, false),
        Err(array_err) => match serde_json::from_str::<ExportDocument<'_>>(text) {
            Ok(doc) => (
                Some(doc.info),
                doc.messages.into_iter().map(Entry::from).collect(),
                true,
            ),
            Err(_) => return Err(invalid(array_err.to_string())),
        },
    };
    let mut problems = Vec::new();
    let mut info = match &raw_info {
        Some(raw) => serde_json::from_str::<SessionInfo>(raw.get())
            .map_err(|e| invalid(format!("session info: {e}")))?,
        None => SessionInfo::default(),
    };
    if info.id.is_empty() {
        info.id = entries
            .iter()
            .find_map(|e| super::types::body_ids(e.info.0).session_id)
            .unwrap_or_default();
    }
    if let Err(reason) = check_id(&info.id) {
        problems.push(problem(
            Origin::Export(String::new()),
            ProblemKind::UnsafeId {
                id: std::mem::take(&mut info.id),
                reason,
            },
        ));
    }
    let session_id = info.id.clone();
    let mut messages = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let (info, info_peeked) = entry.info;
        let origin = export_origin(document, i, None);
        let parsed = parse_message_peeked(info, info_peeked);
        let mid = match &parsed {
            Ok((ids, _)) => ids.id.clone(),
            Err(_) => super::types::body_ids(info).id,
        };
        let Some(mid) = mid else {
            problems.push(problem(
                origin,
                ProblemKind::WrongShape {
                    detail: "message info has no id".to_owned(),
                },
            ));
            continue;
        };
        let Some(mut message) = build_parsed_message(
            mid,
            &session_id,
            info.to_owned(),
            parsed,
            origin,
            &mut problems,
        ) else {
            if !entry.parts.is_empty() {
                problems.push(problem(
                    Origin::Export(format!(
                        "{}[{i}].parts",
                        if document { ".messages" } else { "" }
                    )),
                    ProblemKind::OrphanParts {
                        message_id: String::new(),
                        count: entry.parts.len(),
                    },
                ));
            }
            continue;
        };
        message.parts.reserve(entry.parts.len());
        for (j, (raw, peeked)) in entry.parts.into_iter().enumerate() {
            let origin = export_origin(document, i, Some(j));
            // The export's part has its id only in its body: one parse gives both (the ids
            // alone, as `BodyIds` reads them, when the part does not parse).
            let parsed = parse_part_peeked(raw, peeked);
            let pid = match &parsed {
                Ok((ids, _)) => ids.id.clone(),
                Err(_) => super::types::body_ids(raw).id,
            };
            let Some(pid) = pid else {
                problems.push(problem(
                    origin,
                    ProblemKind::WrongShape {
                        detail: "part has no id".to_owned(),
                    },
                ));
                continue;
            };
            if let Some(p) = build_parsed_part(
                pid,
                &message.id,
                &session_id,
                raw.to_owned(),
                parsed,
                origin,
                &mut problems,
            ) {
                message.parts.push(p);
            }
        }
        messages.push(message);
    }
    sort_messages(&mut messages);
    Ok(Session {
        info,
        raw_info: raw_info.map(|r| r.get().to_owned()),
        messages,
        problems,
    })
}

/// The origin of a record of an export: where [`crate::view::export_path`] places it, after a
/// `.` in a document (`.messages[3].info`, `[3].parts[2]`), which [`export_place`] reads back.
fn export_origin(document: bool, i: usize, j: Option<usize>) -> Origin {
    let mut out = String::with_capacity(32);
    if document {
        out.push('.');
    }
    crate::view::write_export_path(&mut out, document, i, j);
    if j.is_none() {
        out.push_str(".info");
    }
    Origin::Export(out)
}

/// Where in an export [`load_export`] found a record, from its [`Origin::Export`]: the entry's
/// index and, for a part, the part's index in that entry (`[3].parts[2]` → `(3, Some(2))`,
/// `.messages[3].info` → `(3, None)`). `None` for any other origin.
pub fn export_place(origin: &Origin) -> Option<(usize, Option<usize>)> {
    let Origin::Export(path) = origin else {
        return None;
    };
    let rest = path.strip_prefix(".messages").unwrap_or(path);
    let rest = rest.strip_prefix('[')?;
    let (i, rest) = rest.split_once(']')?;
    let i = i.parse().ok()?;
    if rest == ".info" {
        return Some((i, None));
    }
    let j = rest
        .strip_prefix(".parts[")?
        .strip_suffix(']')?
        .parse()
        .ok()?;
    Some((i, Some(j)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_s_place_is_written_as_format_would_and_read_back() {
        for (i, j) in [
            (0, None),
            (9, Some(10)),
            (10, Some(0)),
            (12_345, Some(99)),
            (usize::MAX, Some(usize::MAX)),
        ] {
            for (document, base) in [(false, ""), (true, ".messages")] {
                let want = match j {
                    Some(j) => format!("{base}[{i}].parts[{j}]"),
                    None => format!("{base}[{i}].info"),
                };
                let origin = export_origin(document, i, j);
                assert_eq!(origin, Origin::Export(want));
                assert_eq!(export_place(&origin), Some((i, j)));
            }
        }
    }

    /// Where the scanner reads an export, it reads what serde reads: the same slices, or it
    /// leaves the export to serde. Each case is one way an export can be unusual.
    #[test]
    fn quick_entries_read_what_serde_reads() {
        let cases = [
            r#"[{"info":{"id":"msg_1"},"parts":[{"id":"prt_1"},{"id":"prt_2"}]}]"#,
            " [ { \"parts\" : [ 1 , \"x\" ] , \"info\" : { \"id\" : \"msg_1\" } } ] ",
            r#"[{"info":{"id":"msg_1"}}]"#,
            r#"[{"info":null,"parts":[]}]"#,
            r#"[{"info":{"id":"msg_1"},"parts":null}]"#,
            r#"[{"info":{"id":"msg_1"},"parts":{"a":1}}]"#,
            r#"[{"info":{"id":"msg_1"},"info":{"id":"msg_2"}}]"#,
            r#"[{"info":{"id":"msg_1"},"parts":[],"parts":[]}]"#,
            r#"[{"info":{"id":"msg_1"},"extra":[1,{"b":2}]}]"#,
            r#"[{"info":{"role":"user","id":"msg_1"},"parts":[{"ty\u0070e":"text","text":"a"},{"type":"text","id":"prt_1","id":"prt_2","text":"b"},{"type":"text","id":5,"text":"c"},{"type":"text","text":"d","id":"prt_3"}]}]"#,
            r#"[{"\u0069nfo":{"id":"msg_1"}}]"#,
            r#"[{"parts":[]}]"#,
            r#"[[{"id":"msg_1"},[]]]"#,
            r#"[5]"#,
            r#"[]"#,
            r#"{"info":{"id":"ses_1"},"messages":[]}"#,
            r#"[{"info":{"id":"msg_1"}}] trailing"#,
            r#"[{"info":{"id":"msg_1"}"#,
        ];
        let mut quick_read = 0;
        for text in cases {
            let slow = serde_json::from_str::<Vec<ExportEntry<'_>>>(text)
                .map(|v| v.into_iter().map(Entry::from).collect::<Vec<_>>());
            let Some(quick) = quick_entries(text) else {
                continue;
            };
            quick_read += 1;
            let slow =
                slow.unwrap_or_else(|e| panic!("serde refuses what the scanner read: {text}: {e}"));
            let pairs = |v: &[Entry<'_>]| -> Vec<(String, Vec<String>)> {
                v.iter()
                    .map(|e| {
                        (
                            e.info.0.to_owned(),
                            e.parts.iter().map(|p| p.0.to_owned()).collect(),
                        )
                    })
                    .collect()
            };
            assert_eq!(pairs(&quick), pairs(&slow), "{text}");
            // What was read in passing gives the parse a record gets alone, unusual ones too.
            let outcome = |r: Result<(BodyIds, Part), serde_json::Error>| match r {
                Ok(v) => Ok(v),
                Err(e) => Err(e.to_string()),
            };
            for e in quick {
                for (raw, peeked) in e.parts {
                    assert_eq!(
                        outcome(parse_part_peeked(raw, peeked)),
                        outcome(parse_part(raw)),
                        "{raw}"
                    );
                }
                let (info, info_peeked) = e.info;
                let alone = parse_message(info).map_err(|e| e.to_string());
                let peeked = parse_message_peeked(info, info_peeked).map_err(|e| e.to_string());
                assert_eq!(peeked, alone, "{info}");
            }
        }
        assert_eq!(quick_read, 7, "the plain cases are read by the scanner");
    }

    /// Every message and part of a loaded export says where it was, in both export shapes.
    #[test]
    fn export_places_are_read_back_from_origins() {
        let entries = r#"[{"info":{"id":"msg_b","sessionID":"ses_1","role":"user","time":{"created":2}},"parts":[{"id":"prt_2","type":"text","text":"b"},{"id":"prt_1","type":"text","text":"a"}]},{"info":{"id":"msg_a","sessionID":"ses_1","role":"user","time":{"created":1}},"parts":[]}]"#;
        let document = format!(r#"{{"info":{{"id":"ses_1"}},"messages":{entries}}}"#);
        for text in [entries.to_owned(), document] {
            let s = load_export(&text, "t").expect("loads");
            let places: Vec<_> = s
                .messages
                .iter()
                .map(|m| {
                    (
                        export_place(&m.origin),
                        m.parts
                            .iter()
                            .map(|p| export_place(&p.origin))
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            // Messages by creation time, parts by id: the places are the export's own.
            assert_eq!(
                places,
                vec![
                    (Some((1, None)), vec![]),
                    (
                        Some((0, None)),
                        vec![Some((0, Some(1))), Some((0, Some(0)))]
                    ),
                ],
                "{text}"
            );
        }
        assert_eq!(export_place(&Origin::Export("[1].parts".into())), None);
        assert_eq!(export_place(&Origin::Export("[x].info".into())), None);
        assert_eq!(export_place(&Origin::File("a".into())), None);
    }
}
