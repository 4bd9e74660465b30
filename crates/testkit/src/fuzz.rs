//! The fuzz targets' bodies, as library functions: `fuzz/fuzz_targets/<name>.rs` calls them, and
//! the `corpus_fuzz_bodies` test replays every file of `corpus/` through them so they cannot
//! rot. Each body panics (with the input as JSON) when an invariant fails: that is what libFuzzer
//! and `cargo test` both report.
//!
//! Every body takes a [`Depth`]. `cargo test` runs them at [`Depth::Full`]: every check on every
//! input. The libFuzzer entry points run them at [`Depth::Sampled`]: the checks that cost about
//! as much as reading the input run on every input, and the expensive cross-checks (a second
//! repair, a file tree on disk, every wrap of a real error) on a deterministic sample of inputs,
//! chosen by a hash of the bytes ([`Sample`]) so that a saved crash replays the same way. Each
//! body's documentation says what it samples. The `fuzz_replay` example times a body over files
//! (`cargo run --release -p turnkeeper-testkit --example fuzz_replay -- TARGET DIR`).

use std::collections::HashSet;
use std::fmt::Display;
use std::sync::{Mutex, OnceLock};

use arbitrary::Unstructured;
use turnkeeper_model::opencode::{
    AnthropicOptions, Session, load_export, to_anthropic_request, to_model_messages,
};
use turnkeeper_model::{FormatHint, read, read_bytes, sniff};
use turnkeeper_prevent::Options;
use turnkeeper_recover::{Attempts, classify as classify_text, plan};
use turnkeeper_stores::opencode::JsonStore;

use crate::corpus::{ErrorItem, errors, parse_error_lines};
use crate::damage::damage;
use crate::generate::{Conversation, Knobs, conversation_with};
use crate::inv::{
    CLASSIFY_PROBES, HINTS, Wrap, inv_no_panic, inv_roundtrip, no_panic_classify, no_panic_on,
    no_panic_opencode, repair_invariants_read, repair_invariants_where, roundtrip_on,
};
use crate::json::{J, Style};

fn fail(what: impl Display, input: impl std::fmt::Debug) -> ! {
    panic!("invariant violated: {what}\ninput: {input:?}")
}

/// How much of its work a fuzz body does on one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Every check on every input: how `cargo test` replays `corpus/` and the regressions.
    Full,
    /// What the libFuzzer entry points use: the cheap checks on every input, the expensive
    /// cross-checks on a deterministic sample of inputs (see [`Sample`]).
    Sampled,
}

/// A fuzz body: the input's bytes and how deep to check them.
pub type Body = fn(&[u8], Depth);

/// Every fuzz target's name and body, in the order `fuzz/Cargo.toml` lists them.
pub const TARGETS: &[(&str, Body)] = &[
    ("parse_roundtrip", parse_roundtrip),
    ("repair_invariants", repair_invariants),
    ("classify", classify),
    ("opencode_storage", opencode_storage),
    ("claude_code_jsonl", claude_code_jsonl),
    ("sse_assembly", sse_assembly),
    ("wire_families", wire_families),
    ("codex_rollout", codex_rollout),
    ("openclaw_session", openclaw_session),
];

/// Which of a body's sampled checks one input gets: all of them at [`Depth::Full`]; at
/// [`Depth::Sampled`], each check on about one input in `n`, decided by a hash of the input's
/// bytes (stable across runs and machines) and the check's own salt, so that different checks
/// pick different inputs and a crash found by a sampled check reproduces from the saved input.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    depth: Depth,
    hash: u64,
}

impl Sample {
    /// The sample of `data` at `depth`.
    pub fn of(data: &[u8], depth: Depth) -> Sample {
        // FNV-1a over 8-byte words (then a finaliser per question): every byte counts, at a
        // fraction of the cost of reading the input once.
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ data.len() as u64;
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            hash = (hash ^ u64::from_le_bytes(b)).wrapping_mul(PRIME);
        }
        for &b in words.remainder() {
            hash = (hash ^ u64::from(b)).wrapping_mul(PRIME);
        }
        Sample { depth, hash }
    }

    /// The depth this sample was taken at.
    pub fn depth(self) -> Depth {
        self.depth
    }

    /// A number below `n` (which must not be 0) chosen by the input and `salt`.
    pub fn pick(self, n: u64, salt: u64) -> u64 {
        // splitmix64's finaliser.
        let mut z = self.hash ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n.max(1)
    }

    /// Whether the check salted `salt` runs: always at [`Depth::Full`], on about one input in
    /// `n` at [`Depth::Sampled`].
    pub fn one_in(self, n: u64, salt: u64) -> bool {
        self.depth == Depth::Full || self.pick(n, salt) == 0
    }
}

/// Target `parse_roundtrip`: raw bytes through every reader (each format), `check`, `repair`,
/// the classifier and the OpenCode loader (invariant 10), then the lossless round trip for every
/// format the bytes read as (invariant 6).
///
/// At [`Depth::Sampled`] the same steps share their work: each reading serves both invariants,
/// the forced reading of the format the bytes sniff as is skipped because it is the automatic
/// reading (`read` with [`FormatHint::Auto`] is `read` with the sniffed format), and the
/// classifier sees one input in [`CLASSIFY_ONE_IN`], with one of its four probes
/// ([`CLASSIFY_PROBES`]) chosen by the input: a whole transcript is a large text for it, its
/// phrase search costs several times everything else together, and the `classify` target
/// probes the classifier on every input.
pub fn parse_roundtrip(data: &[u8], depth: Depth) {
    if depth == Depth::Full {
        if let Err(e) = inv_no_panic(data) {
            fail(e, String::from_utf8_lossy(data));
        }
        if let Ok(text) = std::str::from_utf8(data)
            && let Err(e) = inv_roundtrip(text)
        {
            fail(e, text);
        }
        return;
    }
    let sample = Sample::of(data, depth);
    let text = String::from_utf8_lossy(data);
    let _ = sniff(&text);
    let mut sniffed = None;
    for hint in HINTS {
        let Ok(t) = read_bytes(data, hint) else {
            continue;
        };
        match hint {
            FormatHint::Auto => sniffed = Some(t.format),
            FormatHint::Exactly(f) if sniffed == Some(f) => continue,
            FormatHint::Exactly(_) => {}
        }
        if let Err(e) = no_panic_on(&t, hint).and_then(|()| roundtrip_on(&t, hint)) {
            fail(e, &text);
        }
    }
    if sample.one_in(CLASSIFY_ONE_IN, 8) {
        let probe = CLASSIFY_PROBES[sample.pick(CLASSIFY_PROBES.len() as u64, 1) as usize];
        no_panic_classify(&text, probe);
    }
    no_panic_opencode(&text);
}

/// At [`Depth::Sampled`], `parse_roundtrip` hands one input in this many to the classifier.
pub const CLASSIFY_ONE_IN: u64 = 4;

/// The size of conversations the fuzz targets generate: `base` with long strings (tool output,
/// thinking) of about 512 bytes instead of 6000, and at most 3 turns of 2 steps of 2 parallel
/// calls and 2 thinking blocks, so one execution reads and repairs a few kilobytes. The shapes
/// are the same (multi-turn tool loops, interleaved thinking, every damage); the long strings
/// still cross every chunk boundary of the reader's scan; proptest keeps the default sizes.
pub fn fuzz_knobs(base: Knobs) -> Knobs {
    Knobs {
        long_len: 512,
        max_turns: 3,
        max_steps: 2,
        max_parallel: 2,
        max_thinking: 2,
        ..base
    }
}

/// The knobs a body generates with at `depth`: `base` at [`Depth::Full`] (the sizes the inputs
/// saved in `corpus/` were found with, so they replay as they did), [`fuzz_knobs`] at
/// [`Depth::Sampled`]. The corpus test runs both, so an input libFuzzer saves replays too.
pub fn knobs_at(depth: Depth, base: Knobs) -> Knobs {
    match depth {
        Depth::Full => base,
        Depth::Sampled => fuzz_knobs(base),
    }
}

/// The conversation the bytes describe: the bytes themselves when they are a readable transcript
/// (corpus files, and the fuzzer's mutations of them), else a conversation generated under
/// `knobs`, damaged when the next byte says so.
pub fn input_of(
    data: &[u8],
    knobs: &Knobs,
) -> Option<(String, Options<'static>, Option<Conversation>)> {
    if let Ok(text) = std::str::from_utf8(data)
        && text.trim_start().starts_with(['{', '['])
        && read(text, FormatHint::Auto).is_ok()
    {
        return Some((text.to_owned(), Options::default(), None));
    }
    let mut u = Unstructured::new(data);
    let mut c = conversation_with(&mut u, knobs).ok()?;
    if u.ratio(3u8, 4u8).unwrap_or(true) {
        let _ = damage(&mut u, &mut c);
    }
    Some((c.json(), c.options(), Some(c)))
}

/// The repair invariants a fuzz body checks on every input; the others
/// ([`SAMPLED_INVARIANTS`]) on one input in [`SAMPLED_ONE_IN`] at [`Depth::Sampled`].
pub const EVERY_INPUT_INVARIANTS: &[&str] =
    &["untouched_thinking", "thinking_first", "tool_pairing"];

/// The repair invariants that need a second repair, a second `check` or more readings of the
/// input: the lossless round trip (four readings), conservation (every tool input and output
/// parsed as a `serde_json::Value` on both sides), convergence (`check` of the output),
/// idempotence (a second repair) and no-op on valid input (`check` of the input).
pub const SAMPLED_INVARIANTS: &[&str] = &[
    "roundtrip",
    "conservation",
    "convergence",
    "idempotent",
    "noop_on_valid",
];

/// One input in this many gets [`SAMPLED_INVARIANTS`] at [`Depth::Sampled`].
pub const SAMPLED_ONE_IN: u64 = 16;

/// Which of invariants 1 to 8 run at `sample`'s depth: [`EVERY_INPUT_INVARIANTS`] always,
/// [`SAMPLED_INVARIANTS`] when the sample says so (salt `salt`).
fn sampled_pick(sample: Sample, salt: u64) -> impl Fn(&str) -> bool {
    let all = sample.one_in(SAMPLED_ONE_IN, salt);
    move |name| all || EVERY_INPUT_INVARIANTS.contains(&name)
}

/// Invariants 1 to 8 on `text` at `sample`'s depth ([`sampled_pick`]).
fn sampled_repair_invariants(
    text: &str,
    opts: &Options<'_>,
    sample: Sample,
    salt: u64,
) -> Result<(), String> {
    repair_invariants_where(text, opts, &sampled_pick(sample, salt))
}

/// Target `repair_invariants`: invariants 1 to 8 on a generated (usually damaged) conversation,
/// or on the bytes themselves when they read as a transcript.
///
/// At [`Depth::Sampled`], untouched thinking, thinking first and tool pairing (and the guard's
/// own check inside every repair) hold on every input; [`SAMPLED_INVARIANTS`] on one input in
/// [`SAMPLED_ONE_IN`]; conversations are generated at [`fuzz_knobs`] sizes.
pub fn repair_invariants(data: &[u8], depth: Depth) {
    let Some((text, opts, c)) = input_of(data, &knobs_at(depth, Knobs::default())) else {
        return;
    };
    if let Err(e) = sampled_repair_invariants(&text, &opts, Sample::of(data, depth), 2) {
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

/// True when `item` is a labelled error of the embedded corpus (same id, same text).
fn is_corpus_error(item: &ErrorItem) -> bool {
    static KNOWN: OnceLock<HashSet<(&'static str, &'static str)>> = OnceLock::new();
    KNOWN
        .get_or_init(|| {
            errors()
                .iter()
                .map(|e| (e.id.as_str(), e.body.as_str()))
                .collect()
        })
        .contains(&(item.id.as_str(), item.body.as_str()))
}

/// True the first time this process sees corpus error `id` with `status` (then false): the
/// classifier is a pure function, so a corpus error checked under every wrap once is checked.
fn first_time(id: &str, status: Option<u16>) -> bool {
    /// Corpus error ids and statuses already checked under every wrap.
    type Seen = HashSet<(String, Option<u16>)>;
    static SEEN: OnceLock<Mutex<Seen>> = OnceLock::new();
    let Ok(mut seen) = SEEN.get_or_init(|| Mutex::new(HashSet::new())).lock() else {
        return true;
    };
    seen.insert((id.to_owned(), status))
}

/// Target `classify`: raw text through the classifier and planner (no panic); labelled corpus
/// lines found in the bytes, and a corpus error chosen by the bytes, keep the kind they classify
/// as when wrapped (invariant 9, against the unwrapped classification).
///
/// At [`Depth::Sampled`], the raw text is classified under one of the two statuses, chosen by
/// the input, rather than both; a corpus line found in the bytes is checked under every wrap
/// the first time the process meets it (with that status), not again on each later input that
/// carries it: the check depends on the line alone, and the classifier holds no state. The
/// corpus error chosen by the bytes is checked on every input.
pub fn classify(data: &[u8], depth: Depth) {
    let text = String::from_utf8_lossy(data);
    let statuses = match depth {
        Depth::Full => &[None, Some(400)][..],
        Depth::Sampled if Sample::of(data, depth).pick(2, 7) == 0 => &[None],
        Depth::Sampled => &[Some(400)],
    };
    for &status in statuses {
        let d = classify_text(status, &text);
        let mut attempts = Attempts::new();
        for _ in 0..3 {
            let a = plan(&d, &attempts);
            attempts.record(&d, a);
        }
    }
    // Real lines (an unmutated corpus file): each keeps its kind under every wrap.
    for item in parse_error_lines(&text) {
        if is_corpus_error(&item) && (depth == Depth::Full || first_time(&item.id, item.status)) {
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
    let want = unwrapped_kind(body, status);
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

/// The kind a corpus error's text `body` classifies as under `status`, unwrapped: worked out once
/// per process and remembered (the classifier is a pure function, and every input of the
/// `classify` target checks a corpus error against it).
fn unwrapped_kind(body: &str, status: Option<u16>) -> turnkeeper_recover::ErrorKind {
    type Kinds = std::collections::HashMap<(Option<u16>, String), turnkeeper_recover::ErrorKind>;
    static KINDS: OnceLock<Mutex<Kinds>> = OnceLock::new();
    let kinds = KINDS.get_or_init(|| Mutex::new(Kinds::new()));
    let key = (status, body.to_owned());
    if let Ok(known) = kinds.lock()
        && let Some(kind) = known.get(&key)
    {
        return *kind;
    }
    let kind = classify_text(status, body).kind;
    if let Ok(mut known) = kinds.lock() {
        known.insert(key, kind);
    }
    kind
}

/// Target `opencode_storage`: an OpenCode export (the bytes when they load as one, else a
/// generated and possibly damaged one) through `load_export`, the model-message and Anthropic
/// conversions, the lossless reader, and invariants 1 to 8 on the converted request. When the
/// bytes say so, the generated session is also written as OpenCode's JSON-file tree and read back
/// with `JsonStore`, which must give the same messages and parts.
///
/// At [`Depth::Sampled`], the round trip of a generated export and invariants 1 to 8 on the
/// converted request are sampled as in [`repair_invariants`] (one input in [`SAMPLED_ONE_IN`]
/// gets [`SAMPLED_INVARIANTS`]), and of the inputs whose bytes ask for the file tree one in
/// [`TREE_ONE_IN`] gets it: writing files costs far more than everything else together. The
/// tree is written on `/dev/shm` when it exists. Exports are generated at [`fuzz_knobs`] sizes.
/// The conversion with OpenCode's default options, which the Anthropic conversion makes on its
/// way with the target's, is sampled the same way; the converted request is read once for its
/// check and its invariants.
pub fn opencode_storage(data: &[u8], depth: Depth) {
    let sample = Sample::of(data, depth);
    // An export is a JSON array or object: bytes that start otherwise (after JSON's whitespace)
    // are not one, and go straight to the generator.
    let first = data
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if matches!(first, Some(b'[' | b'{')) {
        let text = String::from_utf8_lossy(data);
        if let Ok(session) = load_export(&text, "fuzz") {
            convert(&session, &text, sample);
            return;
        }
    }
    let mut u = Unstructured::new(data);
    let Ok(mut c) = conversation_with(&mut u, &knobs_at(depth, Knobs::opencode_only())) else {
        return;
    };
    if u.ratio(2u8, 3u8).unwrap_or(true) {
        let _ = damage(&mut u, &mut c);
    }
    let text = c.json();
    if sample.one_in(SAMPLED_ONE_IN, 3)
        && let Err(e) = inv_roundtrip(&text)
    {
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
    convert(&session, &c, sample);
    if u.ratio(1u8, 4u8).unwrap_or(false) && sample.one_in(TREE_ONE_IN, 4) {
        tree_matches_export(&c, &session);
    }
}

/// Of the generated sessions whose bytes ask for the JSON-file tree, one in this many gets it
/// at [`Depth::Sampled`].
pub const TREE_ONE_IN: u64 = 256;

fn convert(session: &Session, input: impl std::fmt::Debug, sample: Sample) {
    // The conversion `to_anthropic_request` makes on its way, with OpenCode's default options
    // instead of the Anthropic target's: sampled, since it rarely takes another path.
    if sample.one_in(SAMPLED_ONE_IN, 6) {
        let _ = to_model_messages(session);
    }
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
    if let Err(e) = repair_invariants_read(&t, &Options::default(), &sampled_pick(sample, 5)) {
        fail(format!("on the converted request {}: {e}", req.body), input);
    }
}

/// A fresh temporary directory for one JSON-file tree, on `/dev/shm` when there is one (a tmpfs
/// makes a tree far cheaper than a disk); removed when dropped.
fn tree_dir() -> Option<tempfile::TempDir> {
    let mut b = tempfile::Builder::new();
    b.prefix("turnkeeper-fuzz-");
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = b.tempdir_in(shm)
    {
        return Some(d);
    }
    b.tempdir().ok()
}

/// Writes `c` as a JSON-file tree (session, message and part files, each in `c`'s style) and
/// checks that `JsonStore` reads the same messages and parts as `load_export` did.
fn tree_matches_export(c: &Conversation, from_export: &Session) {
    let Some(dir) = tree_dir() else { return };
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
///
/// At [`Depth::Sampled`], the stability check (the second plan) runs on one input in
/// [`SAMPLED_ONE_IN`]; everything else on every input.
pub fn claude_code_jsonl(data: &[u8], depth: Depth) {
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
    if !Sample::of(data, depth).one_in(SAMPLED_ONE_IN, 6) {
        return;
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

/// The byte-exact JSON values of `key` (an array of objects) of every line of a JSONL text,
/// reached through `path` (object keys), that have `"type": want`: read here with serde alone,
/// independently of the readers under test.
fn jsonl_items(text: &str, path: &[&str], want: &str) -> Vec<String> {
    use serde_json::value::RawValue;
    let mut out = Vec::new();
    for line in text.lines() {
        let Ok(mut v) = serde_json::from_str::<&RawValue>(line) else {
            continue;
        };
        let mut found = true;
        for key in path {
            match serde_json::from_str::<std::collections::HashMap<String, &RawValue>>(v.get())
                .ok()
                .and_then(|m| m.get(*key).copied())
            {
                Some(x) => v = x,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found {
            continue;
        }
        let items: Vec<&RawValue> = match serde_json::from_str::<Vec<&RawValue>>(v.get()) {
            Ok(list) => list,
            Err(_) => vec![v],
        };
        for it in items {
            #[derive(serde::Deserialize)]
            struct Typed<'a> {
                #[serde(rename = "type", borrow)]
                kind: Option<std::borrow::Cow<'a, str>>,
            }
            if serde_json::from_str::<Typed<'_>>(it.get())
                .is_ok_and(|t| t.kind.as_deref() == Some(want))
            {
                out.push(it.get().to_owned());
            }
        }
    }
    out
}

/// Fails unless every one of `after` is one of `before` (a multiset), byte for byte, and no
/// more are gone than `reported`.
fn kept_byte_identical(
    what: &str,
    before: Vec<String>,
    after: Vec<String>,
    reported: usize,
    input: &str,
) {
    let mut pool = before;
    for x in after {
        match pool.iter().position(|b| *b == x) {
            Some(k) => {
                pool.remove(k);
            }
            None => fail(format!("a {what} was altered: {x}"), input),
        }
    }
    if pool.len() > reported {
        fail(
            format!("{} {what}(s) gone, {reported} reported", pool.len()),
            input,
        );
    }
}

/// Target `codex_rollout`: any bytes as a Codex rollout (`~/.codex/sessions/.../rollout-*.jsonl`).
/// Reading, the resume request (which is JSON), `check` and `plan` never panic; a plan's lines
/// behind a `session_meta` line (what the repair writes as the new rollout) read again as a
/// rollout with no line that does not parse; every reasoning item of the new rollout is one of
/// the input's byte for byte (read independently, with serde), and no more are gone than the
/// plan reported; every kept line is a line of the input, byte for byte, unless the plan says it
/// rewrote its payload.
///
/// At [`Depth::Sampled`], the stability check (a second plan of the new rollout drops no line
/// for the file's own damage) runs on one input in [`SAMPLED_ONE_IN`]; everything else on every
/// input.
pub fn codex_rollout(data: &[u8], depth: Depth) {
    use turnkeeper_model::codex::Rollout;
    use turnkeeper_prevent::RuleId;
    use turnkeeper_prevent::codex::{check_rollout, plan};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(r) = Rollout::parse(text.to_owned(), "fuzz") else {
        return;
    };
    let req = r.to_request(None);
    if serde_json::from_str::<serde::de::IgnoredAny>(&req.body).is_err() {
        fail("the resume request is not JSON", text);
    }
    let opts = Options::default();
    let _ = check_rollout(&r, &opts);
    let Ok(p) = plan(&r, &opts) else {
        return;
    };
    if p.is_empty() {
        return;
    }
    let meta = "{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019d0000-0000-7000-8000-00000000f022\",\"forked_from_id\":\"x\"}}\n";
    let new = format!("{meta}{}", p.text);
    let after = match Rollout::parse(new.clone(), "fuzz repaired") {
        Ok(a) => a,
        Err(e) => fail(format!("the repaired rollout does not read: {e}"), text),
    };
    if let Some(bad) = after.problems.first() {
        fail(
            format!(
                "the repaired rollout has a bad line {}: {}",
                bad.line, bad.reason
            ),
            text,
        );
    }
    let reported = p.changes.iter().filter(|c| c.action == "drop line").count();
    kept_byte_identical(
        "reasoning item",
        jsonl_items(text, &["payload"], "reasoning"),
        jsonl_items(&p.text, &["payload"], "reasoning"),
        reported,
        text,
    );
    let rewritten = p
        .changes
        .iter()
        .filter(|c| c.action == "rewrite payload")
        .count();
    // Lines as a rollout has them: split at `\n` only (`str::lines` would also take a `\r` kept
    // at the end of the input's last line as half of a `\r\n` once the copy ends it with `\n`).
    let originals: HashSet<&str> = text.split('\n').filter(|l| !l.is_empty()).collect();
    let foreign = p
        .text
        .split('\n')
        .filter(|l| !l.is_empty() && !originals.contains(l))
        .count();
    if foreign > rewritten {
        fail(
            format!("{foreign} line(s) not copied byte for byte, {rewritten} rewrite(s) reported"),
            text,
        );
    }
    if !Sample::of(data, depth).one_in(SAMPLED_ONE_IN, 7) {
        return;
    }
    if let Ok(again) = plan(&after, &opts)
        && let Some(ch) = again
            .changes
            .iter()
            .find(|ch| ch.rule == RuleId::Store && ch.action == "drop line")
    {
        fail(format!("the repaired rollout still needs {ch:?}"), text);
    }
}

/// Target `openclaw_session`: any bytes as an openclaw session (`~/.openclaw/agents/<agent>/
/// sessions/<uuid>.jsonl`). Reading, the active branch, and `check` for the session's own model,
/// an Anthropic one and an OpenAI one never panic; a plan is refused only when nothing would be
/// left (its text must read again as a session); every thinking block of the repaired text is
/// one of the input's byte for byte (read independently, with serde), and no more are gone than
/// the plan reported (a block or line dropped).
///
/// At [`Depth::Sampled`], the checks for the two forced models run on one input in
/// [`SAMPLED_ONE_IN`] each, and so does the stability check (the repaired session has none of
/// the file's own damage left); everything else on every input.
pub fn openclaw_session(data: &[u8], depth: Depth) {
    use turnkeeper_model::openclaw::Session;
    use turnkeeper_prevent::RuleId;
    use turnkeeper_prevent::openclaw::{PlanError, check_session, plan};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(s) = Session::parse(text.to_owned(), "fuzz") else {
        return;
    };
    let sample = Sample::of(data, depth);
    let c = check_session(&s, None);
    if c.branch.iter().any(|&i| i >= s.lines.len()) {
        fail("the active branch names a line past the end", text);
    }
    for (model, salt) in [("claude-sonnet-4-5", 8), ("gpt-5.5", 9)] {
        if sample.one_in(SAMPLED_ONE_IN, salt) {
            let _ = check_session(&s, Some(model));
        }
    }
    let p = match plan(&s, None) {
        Ok(p) => p,
        Err(PlanError::Guard(why)) if why.contains("no JSON line") => return,
        Err(e) => fail(format!("the plan was refused: {e}"), text),
    };
    if p.changes.is_empty() {
        if p.text != text {
            fail("no change, yet the text differs", text);
        }
        return;
    }
    let after = match Session::parse(p.text.clone(), "fuzz repaired") {
        Ok(a) => a,
        Err(e) => fail(format!("the repaired session does not read: {e}"), text),
    };
    let reported = p
        .changes
        .iter()
        .filter(|c| c.action == "drop block" || c.action == "drop line")
        .count();
    kept_byte_identical(
        "thinking block",
        jsonl_items(text, &["message", "content"], "thinking"),
        jsonl_items(&p.text, &["message", "content"], "thinking"),
        reported,
        text,
    );
    if !sample.one_in(SAMPLED_ONE_IN, 10) {
        return;
    }
    if let Some(f) = check_session(&after, None)
        .findings
        .iter()
        .find(|f| f.finding.rule == RuleId::Store)
    {
        fail(
            format!("the repaired session still has {}", f.finding.message),
            text,
        );
    }
}

/// Target `sse_assembly`: any bytes as an Anthropic event stream through
/// `turnkeeper_guard::sse::assemble` (what the turn store does with a recorded stream). It never
/// panics; the content is always a JSON array (also when the stream ends in an `error` event: the
/// store keeps what arrived); each block's `text`, `thinking` and `signature` are its
/// `content_block_start` value followed by every delta for its index, byte for byte once decoded
/// (worked out here from the documented events, independently of the assembler); and assembling
/// is idempotent: the assembled message written back as a stream of complete blocks (one
/// `content_block_start` each, no deltas) assembles to the same content, id and model. Every
/// check runs on every input at both depths.
pub fn sse_assembly(data: &[u8], _depth: Depth) {
    use serde_json::Value;
    use turnkeeper_guard::sse::assemble;
    let text = String::from_utf8_lossy(data);
    let a = assemble(&text);
    let raw: Vec<&serde_json::value::RawValue> = match serde_json::from_str(&a.content) {
        Ok(raw) => raw,
        Err(e) => fail(
            format!("the content is not a JSON array ({e}): {}", a.content),
            &text,
        ),
    };
    let want = sse_expected(&text);
    if want.len() != raw.len() {
        fail(
            format!(
                "{} blocks were opened, the content has {}: {}",
                want.len(),
                raw.len(),
                a.content
            ),
            &text,
        );
    }
    for (n, (w, r)) in want.iter().zip(&raw).enumerate() {
        let Ok(Value::Object(block)) = serde_json::from_str::<Value>(r.get()) else {
            continue;
        };
        for (key, expected) in w {
            let got = block.get(*key).and_then(Value::as_str);
            if got != Some(expected.as_str()) {
                fail(
                    format!("block {n}: `{key}` is {got:?}, the deltas make {expected:?}"),
                    &text,
                );
            }
        }
    }
    // Idempotence: the message as a stream of complete blocks.
    let mut again =
        String::from("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{");
    let fields = [("id", &a.id), ("model", &a.model)];
    let mut first = true;
    for (key, value) in fields {
        if let Some(v) = value {
            if !first {
                again.push(',');
            }
            first = false;
            again.push_str(&format!("\"{key}\":{}", Value::String(v.clone())));
        }
    }
    again.push_str("}}\n\n");
    for (n, r) in raw.iter().enumerate() {
        again.push_str(&format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{n},\"content_block\":{}}}\n\n",
            r.get()
        ));
    }
    again.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    let b = assemble(&again);
    if (&b.content, &b.id, &b.model) != (&a.content, &a.id, &a.model) {
        fail(
            format!(
                "assembling the assembled message again changed it:\nfirst:  {:?} {:?} {}\nsecond: {:?} {:?} {}",
                a.id, a.model, a.content, b.id, b.model, b.content
            ),
            &text,
        );
    }
}

/// A block's string fields and their values.
type Fields = Vec<(&'static str, String)>;

/// For each block the stream opens (in index order): the `text`, `thinking` and `signature`
/// its deltas make, each its start object's value (empty when absent) followed by the deltas,
/// for the fields some delta wrote. Read from the documented events: `data:` lines holding a
/// JSON object; `content_block_start` (re)opens block `index`; `content_block_delta` of type
/// `text_delta`, `thinking_delta` or `signature_delta` appends to an open block.
fn sse_expected(stream: &str) -> Vec<Fields> {
    use serde_json::Value;
    let mut open: std::collections::BTreeMap<u64, (Value, Fields)> =
        std::collections::BTreeMap::new();
    for line in stream.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(data.trim_start()) else {
            continue;
        };
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match v.get("type").and_then(Value::as_str) {
            Some("content_block_start") => {
                let start = v.get("content_block").cloned().unwrap_or(Value::Null);
                open.insert(index, (start, Vec::new()));
            }
            Some("content_block_delta") => {
                let Some((start, fields)) = open.get_mut(&index) else {
                    continue;
                };
                let d = v.get("delta");
                let (key, field) = match d.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => ("text", "text"),
                    Some("thinking_delta") => ("thinking", "thinking"),
                    Some("signature_delta") => ("signature", "signature"),
                    _ => continue,
                };
                let piece = d
                    .and_then(|d| d.get(field))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match fields.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, s)) => s.push_str(piece),
                    None => {
                        let prior = start.get(key).and_then(Value::as_str).unwrap_or("");
                        fields.push((key, format!("{prior}{piece}")));
                    }
                }
            }
            _ => {}
        }
    }
    open.into_values()
        .map(|(start, fields)| {
            if start.is_object() {
                fields
            } else {
                Vec::new()
            }
        })
        .collect()
}

/// Target `wire_families`: the OpenAI-style families (Chat Completions, Responses, Converse)
/// through the sniffer, `check_wire` and `repair_wire`.
///
/// The bytes themselves go through the sniffer and, as each of the three families, through
/// check and repair under a model they choose ([`crate::wire_inv::inv_wire_no_panic`]: no
/// panic, and check and repair agree on whether they read). Bytes that sniff as one of the
/// families (corpus files, the seeds, their mutations) are then held to every wire invariant
/// under that family ([`crate::wire_inv::wire_invariants`]: lossless, reasoning kept or reported,
/// check and repair agree, idempotent). Other bytes drive [`crate::wire_gen::wire_body`]: a
/// valid body, which must sniff as its family, draw no error and repair to itself, damaged
/// ([`crate::wire_gen::wire_damage`]) three times in four, and then held to every invariant
/// under the default policy, stand-ins off, or Converse's opt-in stand-in, as the bytes choose.
///
/// At [`Depth::Sampled`], idempotence (a second repair) runs on one input in
/// [`SAMPLED_ONE_IN`] and bodies are generated at [`fuzz_knobs`] sizes; everything else runs
/// on every input.
pub fn wire_families(data: &[u8], depth: Depth) {
    use crate::wire_gen::{WireKnobs, wire_body, wire_damage};
    use crate::wire_inv::{
        PROBE_MODELS, WIRE_FORMATS, inv_wire_no_panic, inv_wire_sniffed, inv_wire_valid,
        wire_invariants,
    };
    let sample = Sample::of(data, depth);
    let deep = sample.one_in(SAMPLED_ONE_IN, 10);
    let probe = sample.pick(PROBE_MODELS.len() as u64, 11) as usize;
    if let Err(e) = inv_wire_no_panic(data, probe) {
        fail(e, String::from_utf8_lossy(data));
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(s) = turnkeeper_model::sniff_detail(text)
        && WIRE_FORMATS.contains(&s.format)
    {
        // A Converse body names no model: the probe's stands in for the URL's.
        let opts = Options {
            model: (s.format == turnkeeper_model::Format::Converse)
                .then(|| PROBE_MODELS[probe].map(str::to_owned))
                .flatten(),
            ..Options::default()
        };
        if let Err(e) = wire_invariants(text, s.format, &opts, deep) {
            fail(format!("as {}: {e}", s.format), text);
        }
        return;
    }
    let mut u = Unstructured::new(data);
    let knobs = WireKnobs {
        base: knobs_at(depth, Knobs::default()),
        ..WireKnobs::default()
    };
    let Ok(mut b) = wire_body(&mut u, &knobs) else {
        return;
    };
    let damaged = u.ratio(3u8, 4u8).unwrap_or(true);
    if damaged {
        let _ = wire_damage(&mut u, &mut b);
    }
    // The text is written once (writing it costs as much as a repair).
    let text = b.json();
    if !damaged
        && let Err(e) = inv_wire_sniffed(&text, b.format)
            .and_then(|()| inv_wire_valid(&text, b.format, &b.options()))
    {
        fail(e, &b);
    }
    let mut opts = b.options();
    match u.int_in_range(0..=3u8).unwrap_or(0) {
        1 => opts.policy.empty_stand_ins = false,
        2 => opts.policy.bedrock_empty_reasoning_text = true,
        _ => {}
    }
    if let Err(e) = wire_invariants(&text, b.format, &opts, deep) {
        fail(e, &b);
    }
}
