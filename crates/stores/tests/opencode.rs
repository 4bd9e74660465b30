//! OpenCode storage readers and conversion, over corpus/opencode/ (regenerate the corpus with
//! `python3 corpus/opencode/make_corpus.py`; refresh expected bodies with
//! `UPDATE_EXPECT=1 cargo test -p turnkeeper-stores --test opencode`).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use turnkeeper_model::opencode::{
    AnthropicOptions, MessageInfo, ModelContent, NoteKind, Origin, Part, ProblemKind, Session,
    ThinkingMode, ToolOutput, load_export, to_anthropic_request, to_model_messages,
};
use turnkeeper_stores::StoreError;
use turnkeeper_stores::opencode::{JsonStore, SqliteStore};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/opencode")
}

fn ids() -> (String, String) {
    let text = fs::read_to_string(corpus().join("sessions.json")).expect("sessions.json");
    let v: Value = serde_json::from_str(&text).expect("sessions.json is JSON");
    (
        v["healthy"].as_str().expect("healthy id").to_owned(),
        v["broken"].as_str().expect("broken id").to_owned(),
    )
}

fn json_store() -> JsonStore {
    JsonStore::open(corpus().join("storage")).expect("open JSON store")
}

fn sqlite_store() -> SqliteStore {
    SqliteStore::open(corpus().join("opencode.db")).expect("open SQLite store")
}

fn export(name: &str) -> Session {
    let path = corpus().join("export").join(name);
    let text = fs::read_to_string(&path).expect("export file");
    load_export(&text, name).expect("load export")
}

/// Problem kinds as short strings, sorted, for comparison.
fn problem_kinds(s: &Session) -> Vec<String> {
    let mut out: Vec<String> = s
        .problems
        .iter()
        .map(|p| match &p.kind {
            ProblemKind::InvalidJson { .. } => "InvalidJson".to_owned(),
            ProblemKind::WrongShape { .. } => "WrongShape".to_owned(),
            ProblemKind::UnsafeId { id, .. } => format!("UnsafeId({id})"),
            ProblemKind::IdMismatch { field, .. } => format!("IdMismatch({field})"),
            ProblemKind::OrphanParts { count, .. } => format!("OrphanParts({count})"),
            ProblemKind::OutsideRoot => "OutsideRoot".to_owned(),
            ProblemKind::Unreadable { .. } => "Unreadable".to_owned(),
            other => format!("{other:?}"),
        })
        .collect();
    out.sort();
    out
}

#[test]
fn listing_both_stores() {
    let (healthy, broken) = ids();
    let json = json_store().list_sessions().expect("list json");
    let sql = sqlite_store().list_sessions().expect("list sqlite");
    for listing in [&json, &sql] {
        let found: Vec<&str> = listing.sessions.iter().map(|s| s.id.as_str()).collect();
        // newest first: the broken session was created a day later
        assert_eq!(found, vec![broken.as_str(), healthy.as_str()]);
        let h = &listing.sessions[1];
        assert_eq!(h.title, "Fix the failing parser test");
        assert_eq!(h.messages, 7);
        assert!(
            h.size > 1000,
            "size counts message and part bytes: {}",
            h.size
        );
        assert!(h.updated > 0);
    }
    // The session file whose body id is `../../../etc/passwd` is reported and skipped.
    assert_eq!(json.problems.len(), 1, "{:?}", json.problems);
    assert!(matches!(
        &json.problems[0].kind,
        ProblemKind::UnsafeId { id, .. } if id == "../../../etc/passwd"
    ));
    assert!(sql.problems.is_empty());
}

#[test]
fn healthy_session_loads_cleanly_from_every_store() {
    let (healthy, _) = ids();
    let from_json = json_store().load_session(&healthy).expect("json");
    let from_sql = sqlite_store().load_session(&healthy).expect("sqlite");
    let from_array = export("healthy.json");
    let from_doc = export("healthy.doc.json");
    for s in [&from_json, &from_sql, &from_array, &from_doc] {
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        assert_eq!(s.info.id, healthy);
        assert_eq!(s.messages.len(), 7);
    }
    assert_eq!(from_json.info.title, "Fix the failing parser test");
    assert_eq!(from_sql.info.title, from_json.info.title);
    assert_eq!(from_doc.info, from_json.info);

    // Every one of the 12 part types is present and typed (none fell back to Unknown).
    let kinds: BTreeSet<&str> = from_json
        .messages
        .iter()
        .flat_map(|m| m.parts.iter().map(|p| p.typed.kind()))
        .collect();
    let expected: BTreeSet<&str> = [
        "text",
        "file",
        "tool",
        "reasoning",
        "agent",
        "subtask",
        "compaction",
        "step-start",
        "step-finish",
        "snapshot",
        "patch",
        "retry",
    ]
    .into_iter()
    .collect();
    assert_eq!(kinds, expected);
    assert!(
        from_json
            .messages
            .iter()
            .flat_map(|m| &m.parts)
            .all(|p| !matches!(p.typed, Part::Unknown { .. }))
    );

    // Typed views agree across stores (ids aside, SQLite bodies have none).
    for (a, b) in from_json.messages.iter().zip(&from_sql.messages) {
        assert_eq!(a.id, b.id);
        assert_eq!(a.typed.created(), b.typed.created());
        let pa: Vec<&Part> = a.parts.iter().map(|p| &p.typed).collect();
        let pb: Vec<&Part> = b.parts.iter().map(|p| &p.typed).collect();
        assert_eq!(pa, pb, "parts of {}", a.id);
    }

    let model = to_model_messages(&from_json);
    assert_eq!(model, to_model_messages(&from_sql));
    assert_eq!(model, to_model_messages(&from_array));
    assert_eq!(model, to_model_messages(&from_doc));
}

#[test]
fn broken_session_gives_the_same_model_messages_from_every_store() {
    let (_, broken) = ids();
    let from_json = json_store().load_session(&broken).expect("json");
    let from_sql = sqlite_store().load_session(&broken).expect("sqlite");
    let from_array = export("broken.json");
    let model = to_model_messages(&from_json);
    assert_eq!(model, to_model_messages(&from_sql));
    assert_eq!(model, to_model_messages(&from_array));
    assert_eq!(from_json.messages.len(), from_sql.messages.len());
    assert_eq!(from_json.messages.len(), from_array.messages.len());
}

#[test]
fn damage_is_reported_and_skipped() {
    let (_, broken) = ids();
    let from_json = json_store().load_session(&broken).expect("json");
    assert_eq!(
        problem_kinds(&from_json),
        vec![
            "InvalidJson",               // truncated part
            "InvalidJson",               // 0-byte part
            "InvalidJson",               // NUL-filled part
            "OrphanParts(1)",            // parts of the message without a role
            "OrphanParts(1)",            // parts of a message that never existed
            "UnsafeId(.)",               // message file `..json`
            "UnsafeId(../../../../etc)", // part body naming a parent directory
            "WrongShape",                // message without a role
        ]
    );
    for p in &from_json.problems {
        assert!(matches!(p.origin, Origin::File(_)), "{p}");
    }
    let from_sql = sqlite_store().load_session(&broken).expect("sqlite");
    assert_eq!(
        problem_kinds(&from_sql),
        vec![
            "InvalidJson",
            "OrphanParts(1)", // ghost message
            "OrphanParts(1)", // parts of the unsafe message
            "UnsafeId(../../x)",
        ]
    );
    let from_array = export("broken.json");
    assert_eq!(
        problem_kinds(&from_array),
        vec![
            "OrphanParts(1)",
            "UnsafeId(../../x)",
            "WrongShape",
            "WrongShape"
        ]
    );
    // The rest of the session still loads: 19 messages in every store.
    assert_eq!(from_json.messages.len(), 19);
}

#[test]
fn unchanged_parts_round_trip_byte_identical() {
    let (healthy, broken) = ids();
    let store = json_store();
    let db = rusqlite::Connection::open_with_flags(
        corpus().join("opencode.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("db");
    for id in [&healthy, &broken] {
        let s = store.load_session(id).expect("json");
        for m in &s.messages {
            let Origin::File(path) = &m.origin else {
                panic!("file origin expected")
            };
            assert_eq!(m.raw.as_bytes(), fs::read(path).expect("read").as_slice());
            for p in &m.parts {
                let Origin::File(path) = &p.origin else {
                    panic!("file origin expected")
                };
                assert_eq!(p.raw.as_bytes(), fs::read(path).expect("read").as_slice());
            }
        }
        let s = sqlite_store().load_session(id).expect("sqlite");
        for p in s.messages.iter().flat_map(|m| &m.parts) {
            let data: String = db
                .query_row("SELECT data FROM part WHERE id = ?1", [&p.id], |r| r.get(0))
                .expect("row");
            assert_eq!(p.raw, data);
        }
    }
    // Exported array: every stored slice is found verbatim in the document, and re-exporting
    // the JSON-store session gives the same JSON as the export file.
    let text = fs::read_to_string(corpus().join("export/healthy.json")).expect("export");
    let s = load_export(&text, "healthy.json").expect("export");
    for p in s.messages.iter().flat_map(|m| &m.parts) {
        assert!(text.contains(&p.raw));
    }
    let original: Value = serde_json::from_str(&text).expect("json");
    let from_json = store.load_session(&healthy).expect("json");
    let again: Value = serde_json::from_str(&from_json.to_export_array()).expect("json");
    assert_eq!(again, original);
    // SQLite bodies get their ids spliced back in: same document.
    let from_sql = sqlite_store().load_session(&healthy).expect("sqlite");
    let again: Value = serde_json::from_str(&from_sql.to_export_array()).expect("json");
    assert_eq!(again, original);
}

#[test]
fn unsafe_ids_are_refused() {
    for bad in ["../../x", "..", "a/b", "a\\b", "/etc/passwd", "C:x", ""] {
        assert!(
            matches!(
                json_store().load_session(bad),
                Err(StoreError::UnsafeId { .. })
            ),
            "{bad}"
        );
        assert!(
            matches!(
                sqlite_store().load_session(bad),
                Err(StoreError::UnsafeId { .. })
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        json_store().load_session("ses_doesnotexist"),
        Err(StoreError::SessionNotFound { .. })
    ));
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_root_are_not_followed() {
    let base = std::env::temp_dir().join(format!("tk-opencode-{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    let root = base.join("storage");
    let outside = base.join("outside");
    fs::create_dir_all(root.join("session/global")).expect("mkdir");
    fs::create_dir_all(root.join("message/ses_1")).expect("mkdir");
    fs::create_dir_all(root.join("part")).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(
        root.join("session/global/ses_1.json"),
        r#"{"id":"ses_1","title":"t","time":{"created":1,"updated":2}}"#,
    )
    .expect("write");
    fs::write(
        root.join("message/ses_1/msg_1.json"),
        r#"{"id":"msg_1","sessionID":"ses_1","role":"user","time":{"created":1}}"#,
    )
    .expect("write");
    fs::write(
        outside.join("prt_1.json"),
        r#"{"id":"prt_1","type":"text","text":"secret"}"#,
    )
    .expect("write");
    std::os::unix::fs::symlink(&outside, root.join("part/msg_1")).expect("symlink");
    let secret = base.join("secret.json");
    fs::write(
        &secret,
        r#"{"id":"msg_2","role":"user","time":{"created":2}}"#,
    )
    .expect("write");
    std::os::unix::fs::symlink(&secret, root.join("message/ses_1/msg_2.json")).expect("symlink");

    let s = JsonStore::open(&root)
        .expect("open")
        .load_session("ses_1")
        .expect("load");
    let _ = fs::remove_dir_all(&base);
    assert_eq!(s.messages.len(), 1);
    assert!(s.messages[0].parts.is_empty());
    let outside: Vec<_> = s
        .problems
        .iter()
        .filter(|p| p.kind == ProblemKind::OutsideRoot)
        .collect();
    assert_eq!(outside.len(), 2, "{:?}", s.problems);
}

#[test]
fn conversion_follows_the_ten_rules() {
    let (healthy, broken) = ids();
    let h = json_store().load_session(&healthy).expect("json");
    let model = to_model_messages(&h);
    let texts: Vec<&str> = model
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|p| match &p.content {
            ModelContent::Text { text, .. } => Some(*text),
            _ => None,
        })
        .collect();
    // rule 1 (ignored text left out, synthetic text kept), 3, 4, 10
    assert!(texts.contains(&"What did we do so far?"));
    assert!(texts.contains(&"The following tool was executed by the user"));
    assert!(texts.contains(&"Attached image(s) from tool result:"));
    assert!(!texts.contains(&"(hidden note for the UI)"));
    assert!(texts.iter().any(|t| t.starts_with("Called the Read tool")));
    // rule 2: the text/plain file is not sent, the image is
    let files: Vec<&str> = model
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|p| match &p.content {
            ModelContent::File { media_type, .. } => Some(*media_type),
            _ => None,
        })
        .collect();
    assert_eq!(files, vec!["image/png", "image/png"]);

    let b = json_store().load_session(&broken).expect("json");
    let (model, notes) =
        turnkeeper_model::opencode::to_model_messages_with(&b, &Default::default());
    // rule 8: running and pending tools become interrupted error results
    let interrupted: Vec<&str> = model
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|p| match &p.content {
            ModelContent::ToolResult {
                call_id,
                output: ToolOutput::ErrorText(e),
                ..
            } if *e == "[Tool execution was interrupted]" => Some(*call_id),
            _ => None,
        })
        .collect();
    assert_eq!(
        interrupted,
        vec![
            "toolu_01BrokenBench0000000001",
            "toolu_01BrokenGrep00000000001"
        ]
    );
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.kind == NoteKind::ToolInterrupted)
            .count(),
        2
    );
    // errored messages: the APIError one and the content-less aborted one are skipped, the
    // aborted one with content is kept
    let skipped: Vec<&str> = notes
        .iter()
        .filter(|n| n.kind == NoteKind::ErroredMessageSkipped)
        .map(|n| n.message_id.as_str())
        .collect();
    assert_eq!(skipped.len(), 2);
    let aborted_kept = b.messages.iter().any(|m| {
        matches!(&m.typed, MessageInfo::Assistant(a) if a.error.as_ref().is_some_and(|e| e.is_aborted()))
            && model.iter().any(|mm| mm.message_id == m.id)
    });
    assert!(aborted_kept);
}

fn expected_file(name: &str) -> PathBuf {
    corpus().join("expected").join(name)
}

/// Renders a request as reviewable JSON: the body, the origin of every block, the notes.
fn render(req: &turnkeeper_model::opencode::AnthropicRequest) -> Value {
    let body: Value = serde_json::from_str(&req.body).expect("body is JSON");
    let blocks: Vec<Vec<String>> = req
        .blocks
        .iter()
        .map(|m| {
            m.iter()
                .map(|o| format!("{}/{}", o.message_id, o.part_id))
                .collect()
        })
        .collect();
    let notes: Vec<String> = req
        .notes
        .iter()
        .map(|n| {
            format!(
                "{:?} {}{}",
                n.kind,
                n.message_id,
                n.part_id
                    .as_deref()
                    .map(|p| format!("/{p}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    serde_json::json!({ "body": body, "blocks": blocks, "notes": notes })
}

fn check_expected(name: &str, req: &turnkeeper_model::opencode::AnthropicRequest) {
    let got = render(req);
    let path = expected_file(name);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let text = serde_json::to_string_pretty(&got).expect("render") + "\n";
        fs::write(&path, text).expect("write expected");
        return;
    }
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_EXPECT=1)", path.display()));
    let want: Value = serde_json::from_str(&text).expect("expected is JSON");
    assert_eq!(
        got, want,
        "{name} differs; review and UPDATE_EXPECT=1 if intended"
    );
}

#[test]
fn anthropic_bodies_match_expected() {
    let (healthy, broken) = ids();
    let adaptive = AnthropicOptions::default();
    let manual = AnthropicOptions {
        thinking: ThinkingMode::Manual {
            budget_tokens: 16_000,
        },
        ..AnthropicOptions::default()
    };
    let h = json_store().load_session(&healthy).expect("json");
    check_expected(
        "healthy.adaptive.json",
        &to_anthropic_request(&h, None, &adaptive),
    );
    let b = json_store().load_session(&broken).expect("json");
    check_expected(
        "broken.adaptive.json",
        &to_anthropic_request(&b, None, &adaptive),
    );
    check_expected(
        "broken.manual.json",
        &to_anthropic_request(&b, None, &manual),
    );
    // Same bodies from the other stores.
    let from_sql = sqlite_store().load_session(&broken).expect("sqlite");
    assert_eq!(
        to_anthropic_request(&from_sql, None, &manual),
        to_anthropic_request(&b, None, &manual)
    );
    let from_array = export("broken.json");
    assert_eq!(
        to_anthropic_request(&from_array, None, &manual).body,
        to_anthropic_request(&b, None, &manual).body
    );
}

#[test]
fn every_thinking_mode_keeps_the_parts_order() {
    let (_, broken) = ids();
    let b = json_store().load_session(&broken).expect("json");
    let first_assistant = |opts: &AnthropicOptions| -> Vec<String> {
        let req = to_anthropic_request(&b, None, opts);
        let body: Value = serde_json::from_str(&req.body).expect("json");
        body["messages"][1]["content"]
            .as_array()
            .expect("content")
            .iter()
            .map(|b| b["type"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(
        first_assistant(&AnthropicOptions::default()),
        vec!["text", "tool_use", "thinking"]
    );
    let manual = AnthropicOptions {
        thinking: ThinkingMode::Manual {
            budget_tokens: 4096,
        },
        ..AnthropicOptions::default()
    };
    // OpenCode sends a step's parts in their order in every mode: a reasoning part stored after
    // the step's text and tool call is sent after them (seed 002; real OpenCode 1.18.33 in
    // integrations/opencode/e2e), and the check, not the conversion, finds it.
    assert_eq!(
        first_assistant(&manual),
        vec!["text", "tool_use", "thinking"]
    );
    let req = to_anthropic_request(&b, None, &manual);
    let origin = req.origin(1, 2).expect("origin");
    let part = b
        .messages
        .iter()
        .flat_map(|m| &m.parts)
        .find(|p| p.id == origin.part_id)
        .expect("part");
    assert!(matches!(part.typed, Part::Reasoning(_)));
}

#[test]
fn every_block_maps_to_its_part() {
    let (healthy, broken) = ids();
    for id in [healthy, broken] {
        let s = json_store().load_session(&id).expect("json");
        let req = to_anthropic_request(&s, None, &AnthropicOptions::default());
        let body: Value = serde_json::from_str(&req.body).expect("json");
        let messages = body["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), req.blocks.len());
        for (i, m) in messages.iter().enumerate() {
            let content = m["content"].as_array().expect("content");
            assert_eq!(content.len(), req.blocks[i].len());
            for (j, block) in content.iter().enumerate() {
                let origin = req.origin(i, j).expect("origin");
                let msg = s
                    .messages
                    .iter()
                    .find(|m| m.id == origin.message_id)
                    .expect("message");
                let part = msg
                    .parts
                    .iter()
                    .find(|p| p.id == origin.part_id)
                    .expect("part");
                let ok = match block["type"].as_str().unwrap_or_default() {
                    "thinking" | "redacted_thinking" => matches!(part.typed, Part::Reasoning(_)),
                    "tool_use" | "tool_result" => matches!(part.typed, Part::Tool(_)),
                    "image" | "document" => {
                        matches!(part.typed, Part::File(_) | Part::Tool(_))
                    }
                    "text" => matches!(
                        part.typed,
                        Part::Text(_) | Part::Compaction(_) | Part::Subtask(_) | Part::Tool(_)
                    ),
                    _ => false,
                };
                assert!(ok, "messages[{i}].content[{j}] from {}", part.typed.kind());
                if let Part::Reasoning(r) = &part.typed {
                    // thinking leaves exactly as stored
                    if let Some(sig) = r.anthropic_signature() {
                        assert_eq!(block["signature"], sig);
                        assert_eq!(block["thinking"], r.text.as_str());
                    }
                }
            }
        }
    }
}

#[test]
fn compact_json_keeps_strings_order_and_numbers() {
    use turnkeeper_model::opencode::compact_json;
    let pretty = "{\n  \"b\": \"a \\\" b\\n\",\n  \"a\": [ 1.50, 1e2 ],\n  \"c\": { }\n}\n";
    assert_eq!(
        compact_json(pretty),
        r#"{"b":"a \" b\n","a":[1.50,1e2],"c":{}}"#
    );
    assert_eq!(
        compact_json(r#"{"k":"  spaced  "}"#),
        r#"{"k":"  spaced  "}"#
    );
}

#[test]
fn check_id_accepts_opencode_ids_and_rejects_paths() {
    use turnkeeper_model::opencode::check_id;
    for ok in [
        "ses_540679eafffe7KXkxANan0DQdq",
        "msg_abf986538002ERer4HUhu7KXkx",
        "prt_0000000000_synthetic_thinking",
        "msg_3f2a1c3e-uuid-style",
        "global",
    ] {
        assert_eq!(check_id(ok), Ok(()), "{ok}");
    }
    for bad in [
        "", ".", "..", "../x", "a/b", "a\\b", "/abs", "C:\\x", "c:x", "~root", "a\0b", "a\nb",
        "x..y",
    ] {
        assert!(check_id(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn unknown_part_types_are_kept_verbatim_and_not_sent() {
    let (_, broken) = ids();
    let s = json_store().load_session(&broken).expect("json");
    let unknown: Vec<_> = s
        .messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter(|p| matches!(p.typed, Part::Unknown { .. }))
        .collect();
    let kinds: Vec<&str> = unknown.iter().map(|p| p.typed.kind()).collect();
    assert_eq!(kinds, vec!["tool_result", "thinking"]);
    for p in &unknown {
        let Origin::File(path) = &p.origin else {
            panic!("file origin")
        };
        assert_eq!(p.raw, fs::read_to_string(path).expect("read"));
    }
    let req = to_anthropic_request(&s, None, &AnthropicOptions::default());
    for p in &unknown {
        assert!(
            req.blocks.iter().flatten().all(|o| o.part_id != p.id),
            "{} was sent",
            p.id
        );
    }
    assert!(!req.body.contains("toolu_01GoneGoneGone000000001"));
    assert!(!req.body.contains("[Continuing from previous reasoning]"));
}
