//! The fuzz targets' bodies, as library functions: `fuzz/fuzz_targets/<name>.rs` calls them, and
//! the `corpus_fuzz_bodies` test replays every file of `corpus/` through them so they cannot
//! rot. Each body panics (with the input as JSON) when an invariant fails: that is what libFuzzer
//! and `cargo test` both report.

use std::fmt::Display;

use arbitrary::Unstructured;
use turnkeeper_model::opencode::{
    AnthropicOptions, Session, load_export, to_anthropic_request, to_model_messages,
};
use turnkeeper_model::{FormatHint, read};
use turnkeeper_prevent::Options;
use turnkeeper_recover::{Attempts, classify as classify_text, plan};
use turnkeeper_stores::opencode::JsonStore;

use crate::corpus::{errors, parse_error_lines};
use crate::damage::damage;
use crate::generate::{Conversation, Knobs, conversation, conversation_with};
use crate::inv::{Wrap, all_repair_invariants, inv_no_panic, inv_roundtrip};
use crate::json::{J, Style};

fn fail(what: impl Display, input: impl std::fmt::Debug) -> ! {
    panic!("invariant violated: {what}\ninput: {input:?}")
}

/// Target `parse_roundtrip`: raw bytes through every reader (each format), `check`, `repair`,
/// the classifier and the OpenCode loader (invariant 10), then the lossless round trip for every
/// format the bytes read as (invariant 6).
pub fn parse_roundtrip(data: &[u8]) {
    if let Err(e) = inv_no_panic(data) {
        fail(e, String::from_utf8_lossy(data));
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Err(e) = inv_roundtrip(text)
    {
        fail(e, text);
    }
}

/// The conversation the bytes describe: the bytes themselves when they are a readable transcript
/// (corpus files, and the fuzzer's mutations of them), else a generated conversation, damaged
/// when the next byte says so.
pub fn input_of(data: &[u8]) -> Option<(String, Options<'static>, Option<Conversation>)> {
    if let Ok(text) = std::str::from_utf8(data)
        && text.trim_start().starts_with(['{', '['])
        && read(text, FormatHint::Auto).is_ok()
    {
        return Some((text.to_owned(), Options::default(), None));
    }
    let mut u = Unstructured::new(data);
    let mut c = conversation(&mut u).ok()?;
    if u.ratio(3u8, 4u8).unwrap_or(true) {
        let _ = damage(&mut u, &mut c);
    }
    Some((c.json(), c.options(), Some(c)))
}

/// Target `repair_invariants`: invariants 1 to 8 on a generated (usually damaged) conversation,
/// or on the bytes themselves when they read as a transcript.
pub fn repair_invariants(data: &[u8]) {
    let Some((text, opts, c)) = input_of(data) else {
        return;
    };
    if let Err(e) = all_repair_invariants(&text, &opts) {
        match c {
            Some(c) => fail(e, c),
            None => fail(e, text),
        }
    }
}

const WRAPS: &[Wrap] = &[
    Wrap::JsonString,
    Wrap::PythonRepr,
    Wrap::Prefix(0),
    Wrap::Prefix(1),
    Wrap::Prefix(4),
    Wrap::Hard {
        width: 60,
        indent: 2,
    },
];

/// Target `classify`: raw text through the classifier and planner (no panic); labelled corpus
/// lines found in the bytes, and a corpus error chosen by the bytes, keep the kind they classify
/// as when wrapped (invariant 9, against the unwrapped classification).
pub fn classify(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for status in [None, Some(400)] {
        let d = classify_text(status, &text);
        let mut attempts = Attempts::new();
        for _ in 0..3 {
            let a = plan(&d, &attempts);
            attempts.record(&d, a);
        }
    }
    // Real lines (an unmutated corpus file): each keeps its kind under every wrap.
    for item in parse_error_lines(&text) {
        if errors()
            .iter()
            .any(|e| e.id == item.id && e.body == item.body)
        {
            check_wrapped(&item.body, item.status, WRAPS, &item.id);
        }
    }
    // A corpus error and wraps chosen by the bytes.
    let mut u = Unstructured::new(data);
    let Ok(item) = u.choose(errors()) else { return };
    let n = u.int_in_range(1..=3u8).unwrap_or(1);
    let mut wraps = Vec::new();
    for _ in 0..n {
        let w = match u.int_in_range(0..=3u8).unwrap_or(0) {
            0 => Wrap::JsonString,
            1 => Wrap::PythonRepr,
            2 => Wrap::Prefix(u.arbitrary().unwrap_or(0)),
            _ => Wrap::Hard {
                width: u.arbitrary().unwrap_or(80),
                indent: u.arbitrary().unwrap_or(0),
            },
        };
        wraps.push(w);
    }
    check_wrapped(&item.body, item.status, &wraps, &item.id);
}

fn check_wrapped(body: &str, status: Option<u16>, wraps: &[Wrap], id: &str) {
    let want = classify_text(status, body).kind;
    let mut text = body.to_owned();
    for w in wraps {
        text = w.apply(&text);
    }
    let got = classify_text(status, &text).kind;
    if got != want {
        fail(
            format!("{id}: classified {want:?} unwrapped, {got:?} wrapped by {wraps:?}"),
            text,
        );
    }
}

/// Target `opencode_storage`: an OpenCode export (the bytes when they load as one, else a
/// generated and possibly damaged one) through `load_export`, the model-message and Anthropic
/// conversions, the lossless reader, and invariants 1 to 8 on the converted request. When the
/// bytes say so, the generated session is also written as OpenCode's JSON-file tree and read back
/// with `JsonStore`, which must give the same messages and parts.
pub fn opencode_storage(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(session) = load_export(&text, "fuzz") {
        convert(&session, &text);
        return;
    }
    let mut u = Unstructured::new(data);
    let Ok(mut c) = conversation_with(&mut u, &Knobs::opencode_only()) else {
        return;
    };
    if u.ratio(2u8, 3u8).unwrap_or(true) {
        let _ = damage(&mut u, &mut c);
    }
    let text = c.json();
    if let Err(e) = inv_roundtrip(&text) {
        fail(e, &c);
    }
    let session = match load_export(&text, "generated") {
        Ok(s) => s,
        Err(e) => fail(format!("a generated export does not load: {e}"), &c),
    };
    let entries = c.root.as_arr().map_or(0, Vec::len);
    if session.messages.len() + session.problems.len() < entries {
        fail(
            format!(
                "{} entries gave {} messages and {} problems",
                entries,
                session.messages.len(),
                session.problems.len()
            ),
            &c,
        );
    }
    convert(&session, &c);
    if u.ratio(1u8, 4u8).unwrap_or(false) {
        tree_matches_export(&c, &session);
    }
}

fn convert(session: &Session, input: impl std::fmt::Debug) {
    let _ = to_model_messages(session);
    let req = to_anthropic_request(session, None, &AnthropicOptions::default());
    let t = match read(&req.body, FormatHint::Auto) {
        Ok(t) => t,
        Err(e) => fail(
            format!("the converted request does not read: {e}\n{}", req.body),
            input,
        ),
    };
    if t.messages.len() != req.blocks.len() {
        fail(
            format!(
                "{} messages but {} origin rows",
                t.messages.len(),
                req.blocks.len()
            ),
            input,
        );
    }
    if let Err(e) = all_repair_invariants(&req.body, &Options::default()) {
        fail(format!("on the converted request {}: {e}", req.body), input);
    }
}

/// Writes `c` as a JSON-file tree (session, message and part files, each in `c`'s style) and
/// checks that `JsonStore` reads the same messages and parts as `load_export` did.
fn tree_matches_export(c: &Conversation, from_export: &Session) {
    let Ok(dir) = tempfile::tempdir() else { return };
    let root = dir.path();
    let sid = from_export.info.id.clone();
    if sid.is_empty() {
        return;
    }
    let style = Style {
        indent: 2,
        ..c.style
    };
    let write = |path: std::path::PathBuf, v: &J| {
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(path, style.write(v));
    };
    let session = J::obj([
        ("id", J::s(sid.clone())),
        ("projectID", J::s("global")),
        ("directory", J::s("/home/dev/work/parser")),
        ("title", J::s("generated session — tést")),
        ("version", J::s("1.1.60")),
        (
            "time",
            J::obj([
                ("created", J::n(1_764_151_027_000i64)),
                ("updated", J::n(1_764_151_099_000i64)),
            ]),
        ),
    ]);
    write(
        root.join("session/global").join(format!("{sid}.json")),
        &session,
    );
    for entry in c.root.as_arr().into_iter().flatten() {
        let Some(info) = entry.get("info") else {
            continue;
        };
        let Some(mid) = info.get("id").and_then(J::as_str) else {
            continue;
        };
        write(
            root.join("message").join(&sid).join(format!("{mid}.json")),
            info,
        );
        for part in entry.get("parts").and_then(J::as_arr).into_iter().flatten() {
            let Some(pid) = part.get("id").and_then(J::as_str) else {
                continue;
            };
            write(
                root.join("part").join(mid).join(format!("{pid}.json")),
                part,
            );
        }
    }
    let store = match JsonStore::open(root) {
        Ok(s) => s,
        Err(e) => fail(format!("JsonStore::open: {e}"), c),
    };
    let from_tree = match store.load_session(&sid) {
        Ok(s) => s,
        Err(e) => fail(format!("load_session: {e}"), c),
    };
    let ids = |s: &Session| -> Vec<(String, Vec<String>)> {
        s.messages
            .iter()
            .map(|m| {
                let mut parts: Vec<String> = m.parts.iter().map(|p| p.id.clone()).collect();
                // Part order is each store's own rule (the tree sorts by id, an export keeps
                // its array order); the content must agree.
                parts.sort();
                (m.id.clone(), parts)
            })
            .collect()
    };
    if ids(&from_tree) != ids(from_export) {
        fail(
            format!(
                "the file tree and the export disagree:\ntree:   {:?}\nexport: {:?}",
                ids(&from_tree),
                ids(from_export)
            ),
            c,
        );
    }
    for (a, b) in from_tree.messages.iter().zip(&from_export.messages) {
        if a.typed != b.typed {
            fail(
                format!("message {} reads differently from the tree", a.id),
                c,
            );
        }
        for p in &a.parts {
            let Some(q) = b.parts.iter().find(|q| q.id == p.id) else {
                continue;
            };
            if p.typed != q.typed {
                fail(format!("part {} reads differently from the tree", p.id), c);
            }
        }
    }
}

/// Target `claude_code_jsonl`: any bytes as a Claude Code session file. Reading, rebuilding the
/// conversation and writing its request never panic; the request is JSON; a repair plan, when
/// there is one, reads back as a session, and a second plan of its text changes nothing of the
/// file's structure (the repair is stable); every thinking block of the input is still in the
/// repaired text, or the removal of its line was reported.
pub fn claude_code_jsonl(data: &[u8]) {
    use turnkeeper_model::claude_code::{Content, Session};
    use turnkeeper_prevent::RuleId;
    use turnkeeper_prevent::claude_code::plan;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(s) = Session::parse(text.to_owned(), "fuzz") else {
        return;
    };
    let c = s.rebuild();
    let r = s.to_request(
        &c,
        Some("claude-sonnet-4-5"),
        turnkeeper_model::opencode::ThinkingMode::Off,
    );
    if serde_json::from_str::<serde::de::IgnoredAny>(&r.body).is_err() {
        fail("the rebuilt request is not JSON", text);
    }
    let Ok(p) = plan(&s, &Options::default()) else {
        return;
    };
    // (line number, block) of every thinking block.
    let thinking = |s: &Session| -> Vec<(usize, String)> {
        s.lines
            .iter()
            .filter_map(|l| match l.message.as_ref().map(|m| &m.content) {
                Some(Content::Blocks(b)) => Some((l.number, b.clone())),
                _ => None,
            })
            .flat_map(|(u, bs)| {
                bs.into_iter()
                    .filter(|b| b.contains("\"thinking\""))
                    .map(move |b| (u, b))
            })
            .collect()
    };
    if p.is_empty() {
        return;
    }
    let Ok(after) = Session::parse(p.text.clone(), "fuzz repaired") else {
        // Everything was removed (a file of nothing but damage): nothing left to read.
        return;
    };
    let kept = thinking(&after);
    for (line, block) in thinking(&s) {
        let still = kept.iter().any(|(_, b)| *b == block);
        let reported = p
            .changes
            .iter()
            .any(|ch| ch.action == "removed_line" && ch.line == line);
        if !still && !reported {
            fail(
                format!("thinking block of line {line} changed silently"),
                text,
            );
        }
    }
    if let Ok(again) = plan(&after, &Options::default())
        && let Some(ch) = again
            .changes
            .iter()
            .find(|ch| ch.rule == RuleId::Store && ch.action != "reparented_line")
    {
        fail(format!("the repaired text still needs {ch:?}"), text);
    }
}
