//! Round trips over the real recorded traffic and the checked-in corpus: reading then writing an
//! untouched transcript gives the input back byte for byte, and editing one block leaves every
//! other block's bytes where they were.

use std::path::{Path, PathBuf};

use std::sync::Mutex;

use turnkeeper_model::{
    BodyKind, Draft, Format, FormatHint, ReadBehind, Role, Summary, read, read_reusing,
    read_reusing_copies,
};

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

#[path = "../../testkit/src/shared.rs"]
mod shared;

#[path = "../../testkit/src/kept.rs"]
mod kept;
use kept::{blocks_read_as_own, chat_reads_as_own, responses_reads_as_own, without_last};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The corpus's transcripts, and the real traffic of `../shared` when it is there.
fn sources() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    if let Some(real) = shared::shared_dir("real-traffic") {
        json_files(&real, &mut files);
    }
    json_files(&root.join("corpus"), &mut files);
    files.retain(|p| !p.ends_with("MANIFEST.json"));
    files.sort();
    files
}

/// A floor for a test over [`sources`]: `with_real` with `../shared`, a fifth of it without.
fn floor(with_real: usize) -> usize {
    if root().join("../shared/real-traffic").is_dir() {
        with_real
    } else {
        with_real / 5
    }
}

#[test]
fn corpus_untouched_transcripts_round_trip_byte_for_byte() {
    let mut read_ok = 0;
    for path in sources() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(t) = read(&text, FormatHint::Auto) else {
            continue;
        };
        read_ok += 1;
        let d = Draft::new(&t);
        assert_eq!(d.output(), text.as_str(), "{}", path.display());
    }
    assert!(read_ok >= floor(100), "only {read_ok} transcripts read");
}

#[test]
fn corpus_removing_one_block_keeps_every_other_block_identical() {
    let mut edited = 0;
    for path in sources() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(t) = read(&text, FormatHint::Auto) else {
            continue;
        };
        // Remove the first block of the first message that has two or more.
        let Some(i) = (0..t.messages.len()).find(|&i| t.blocks_of(i).len() >= 2) else {
            continue;
        };
        let mut d = Draft::new(&t);
        // The summaries the rules skip messages by: the reader's, and the draft's once edited.
        for k in 0..t.messages.len() {
            let summary = Summary::of(t.blocks_of(k));
            assert_eq!(t.messages[k].summary, summary, "{}", path.display());
            assert_eq!(d.summary(k), summary, "{}", path.display());
        }
        d.remove_block(i, 0);
        assert_eq!(
            d.summary(i),
            Summary::of(&t.blocks_of(i)[1..]),
            "{}",
            path.display()
        );
        let out = d.output();
        let t2 = read(&out, FormatHint::Exactly(t.format))
            .unwrap_or_else(|e| panic!("{}: output does not parse: {e}", path.display()));
        // Reading the output again reusing the untouched messages gives the same view.
        let reused =
            read_reusing(&out, &t, &d.kept()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            format!("{reused:?}"),
            format!("{t2:?}"),
            "{}",
            path.display()
        );
        assert_eq!(t2.messages.len(), t.messages.len(), "{}", path.display());
        for (k, m) in t.messages.iter().enumerate() {
            let before: Vec<&str> = t.blocks_of(k).iter().map(|b| b.span.get(&text)).collect();
            let after: Vec<&str> = t2.blocks_of(k).iter().map(|b| b.span.get(&out)).collect();
            if k == i {
                assert_eq!(&before[1..], &after[..], "{}", path.display());
            } else {
                assert_eq!(before, after, "{}", path.display());
                if t.body == BodyKind::Request {
                    assert_eq!(m.span.get(&text), t2.messages[k].span.get(&out));
                }
            }
        }
        edited += 1;
    }
    assert!(edited >= floor(50), "only {edited} transcripts edited");
}

/// `Draft::output_into` into a buffer that holds an earlier body: an untouched draft leaves it
/// empty (the input is the output); an edited one (a block removed, so one content array is
/// rebuilt; messages removed and inserted, so the whole array is; a top-level key set) replaces
/// all of it with exactly what `output` returns, which the read-back checks above hold to the
/// input's bytes.
#[test]
fn output_into_a_used_buffer_replaces_it() {
    let mut buf = String::from("{\"an earlier body\":true}").repeat(1000);
    let mut edited = 0;
    for path in sources() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(t) = read(&text, FormatHint::Auto) else {
            continue;
        };
        let untouched = Draft::new(&t);
        assert!(!untouched.output_into(&mut buf), "{}", path.display());
        assert!(buf.is_empty(), "{}", path.display());
        let mut drafts = Vec::new();
        if let Some(i) = (0..t.messages.len()).find(|&i| !t.blocks_of(i).is_empty()) {
            let mut d = Draft::new(&t);
            d.remove_block(i, 0);
            drafts.push(d);
        }
        if t.messages.len() >= 2 {
            let mut d = Draft::new(&t);
            d.remove_message(1);
            d.insert_message(0, Role::User, Vec::new());
            drafts.push(d);
        }
        let mut d = Draft::new(&t);
        d.set_top("max_tokens", Some("7".to_owned()));
        drafts.push(d);
        for d in drafts {
            buf.push_str("left over from the last request");
            assert!(d.output_into(&mut buf), "{}", path.display());
            assert_eq!(buf, d.output(), "{}", path.display());
            edited += 1;
        }
    }
    assert!(edited >= floor(150), "only {edited} drafts written");
}

/// What a sweep told its [`ReadBehind`]: `None` for a start, `Some(offset)` for each step.
#[derive(Debug, Default)]
struct Told(Mutex<Vec<Option<usize>>>);

impl ReadBehind for Told {
    fn start(&self) {
        self.0.lock().expect("not poisoned").push(None);
    }
    fn past(&self, offset: usize) {
        self.0.lock().expect("not poisoned").push(Some(offset));
    }
}

impl Told {
    /// The offsets of the one sweep told, checked to begin with a start and to rise.
    fn sweep(self) -> Vec<usize> {
        let calls = self.0.into_inner().expect("not poisoned");
        assert_eq!(
            calls.first(),
            Some(&None),
            "a sweep starts first: {calls:?}"
        );
        let offsets: Vec<usize> = calls[1..].iter().map(|c| c.expect("one start")).collect();
        assert!(
            offsets.windows(2).all(|w| w[0] < w[1]),
            "rising: {offsets:?}"
        );
        offsets
    }
}

/// The sweeps a repair makes over its input say how far they have gone: writing a draft's output
/// (the same output as without a listener) ends past the input's last byte, and the second
/// reading's comparisons end each at a kept message's end, the last at the last one compared.
#[test]
fn sweeps_over_the_input_say_how_far_they_have_gone() {
    let mut swept = 0;
    for path in sources() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(t) = read(&text, FormatHint::Auto) else {
            continue;
        };
        if t.body != BodyKind::Request || t.messages.len() < 2 {
            continue;
        }
        // A message removed (the whole array written), and a block removed (one content array).
        let mut drafts = vec![Draft::new(&t)];
        drafts[0].remove_message(1);
        if let Some(i) = (0..t.messages.len()).find(|&i| !t.blocks_of(i).is_empty()) {
            let mut d = Draft::new(&t);
            d.remove_block(i, 0);
            drafts.push(d);
        }
        for d in drafts {
            let told = Told::default();
            let mut buf = String::new();
            assert!(
                d.output_into_behind(&mut buf, Some(&told)),
                "{}",
                path.display()
            );
            assert_eq!(buf, d.output(), "{}", path.display());
            assert_eq!(told.sweep().last(), Some(&text.len()), "{}", path.display());

            let told = Told::default();
            let (_, copies) = read_reusing_copies(&buf, &t, &d.kept(), Some(&told))
                .expect("reads its own output");
            let ends: Vec<usize> = copies
                .iter()
                .flatten()
                .map(|&k| t.messages[k as usize].span.end as usize)
                .collect();
            let offsets = told.sweep();
            assert!(
                offsets.iter().all(|o| ends.contains(o)),
                "{}",
                path.display()
            );
            assert_eq!(offsets.last(), ends.iter().max(), "{}", path.display());
            swept += 1;
        }
    }
    assert!(swept >= floor(50), "only {swept} transcripts swept");
}

/// Regression (found by the repair invariants): moving the first block of one message to the end
/// of the previous one made them flat-index neighbours, and the writer copied the bytes between
/// the two messages as if they were a separator.
#[test]
fn blocks_moved_across_messages_get_a_plain_separator() {
    let src = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}, {"role":"user","content":[{"type":"text","text":"b"}]}]}"#;
    let t = read(src, FormatHint::Auto).expect("reads");
    let mut d = Draft::new(&t);
    let moved = d.block_handle(1, 0).expect("block");
    d.remove_message(1);
    d.insert_block(0, 1, moved);
    assert_eq!(
        d.output(),
        r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}"#
    );
}

/// The incremental re-read after a repair sees what a full read sees, whatever the draft did
/// (messages removed and inserted, so the array is rebuilt) and even when told wrongly which
/// messages were kept: a message is reused only when its bytes are the same.
#[test]
fn reading_again_reusing_kept_messages_equals_a_full_read() {
    let mut checked = 0;
    for path in sources() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(t) = read(&text, FormatHint::Auto) else {
            continue;
        };
        if t.messages.len() < 3 || t.body != BodyKind::Request {
            continue;
        }
        let mut d = Draft::new(&t);
        d.remove_message(1);
        d.insert_message(0, Role::User, Vec::new());
        let out = d.output();
        let full = read(&out, FormatHint::Exactly(t.format))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let kept = d.kept();
        assert!(kept.iter().flatten().count() >= 2, "{}", path.display());
        let wrong: Vec<Option<u32>> = kept.iter().map(|k| k.map(|k| k ^ 1)).collect();
        for keep in [kept, wrong] {
            let reused =
                read_reusing(&out, &t, &keep).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                format!("{reused:?}"),
                format!("{full:?}"),
                "{}",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= floor(50), "only {checked} transcripts checked");
}

/// Regression (found in review): a top-level `content` array before `messages` (a body mixing
/// request and response keys) made the reader cut every message's blocks, so rules saw empty
/// messages and the ledger saw no thinking block.
#[test]
fn top_level_content_before_messages_keeps_the_messages_blocks() {
    let text = std::fs::read_to_string(root().join(
        "corpus/regressions/model_top_level_content_before_messages_emptied_every_message.json",
    ))
    .expect("regression file");
    let t = read(&text, FormatHint::Auto).expect("reads");
    assert_eq!(t.body, BodyKind::Request);
    assert_eq!(t.messages.len(), 3);
    assert_eq!(t.blocks_of(1).len(), 2);
    assert!(t.blocks_of(1)[0].kind().is_thinking());
}

/// Regression (found in review): a few small messages before a huge one made the reader reserve
/// room for millions of blocks by extrapolation; the estimate never asks for more than doubling.
#[test]
fn a_huge_message_after_small_ones_does_not_inflate_the_block_list() {
    let mut body = String::from(r#"{"messages":["#);
    for _ in 0..8 {
        body.push_str(r#"{"role":"user","content":[0,0,0,0,0,0,0,0]},"#);
    }
    body.push_str(r#"{"role":"user","content":[{"type":"text","text":""#);
    body.push_str(&"x".repeat(4_000_000));
    body.push_str(r#""}]}]}"#);
    let t = read(&body, FormatHint::Auto).expect("reads");
    assert_eq!(t.blocks.len(), 65);
    assert!(t.blocks.capacity() < 1_000, "{}", t.blocks.capacity());
}

/// The proxy reads a request against the reading of an earlier request (`read_reusing_copies`
/// with every message of the earlier one offered at its own place): the conversation a turn
/// shorter, the same one a turn longer, or another conversation altogether. Whatever the
/// earlier body, the reading is the request's own, and only messages that are byte for byte the
/// same are moved over. The earlier reading is given as the proxy keeps it: its messages and
/// blocks, with no root, messages span or settings.
#[test]
fn a_reading_made_against_another_body_is_the_body_own() {
    let mut bodies: Vec<(PathBuf, String)> = Vec::new();
    for path in sources() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        bodies.push((path, text));
    }
    let mut grown = 0;
    let mut unrelated = 0;
    let mut previous: Option<usize> = None;
    for (n, (path, text)) in bodies.iter().enumerate() {
        let Ok(t) = read(text, FormatHint::Auto) else {
            continue;
        };
        if t.body != BodyKind::Request || t.messages.len() < 2 {
            continue;
        }
        // The same conversation without its last message: what the client sent a turn before.
        let mut d = Draft::new(&t);
        d.remove_message(t.messages.len() - 1);
        let shorter = d.output();
        let s = read(&shorter, FormatHint::Exactly(t.format)).expect("a draft's output reads");
        let p = path.display();
        // Grown by a message: every message of the shorter body is moved over, the last read.
        let copies = blocks_read_as_own(&t, &s).unwrap_or_else(|e| panic!("{p}: {e}"));
        // The formats whose messages are moved over (the proxy's Messages and Gemini routes);
        // an OpenCode export is always read whole.
        let reuses = matches!(t.format, Format::Anthropic | Format::Gemini);
        let expect: Vec<Option<u32>> = (0..t.messages.len() as u32)
            .map(|k| (reuses && k + 1 < t.messages.len() as u32).then_some(k))
            .collect();
        assert_eq!(copies, expect, "{p}");
        // Shrunk by one: the reading is the shorter body's own.
        blocks_read_as_own(&s, &t).unwrap_or_else(|e| panic!("{p}: {e}"));
        grown += 1;
        // Against the previous request body of the corpus, of the same format: another
        // conversation, whose equal messages (a shared system prompt, a "hi") may be moved over.
        if let Some(prev) = previous
            && let Ok(o) = read(&bodies[prev].1, FormatHint::Exactly(t.format))
        {
            blocks_read_as_own(&t, &o).unwrap_or_else(|e| panic!("{p}: {e}"));
            unrelated += 1;
        }
        previous = Some(n);
    }
    assert!(grown >= floor(100), "only {grown} conversations grown");
    assert!(
        unrelated >= floor(100),
        "only {unrelated} pairs of conversations"
    );
}

/// The Chat and Responses readers' `read_reusing`, as the proxy uses them: a body read against
/// itself, against itself without its last message (item), and against the previous body of
/// its format in the corpus (another conversation) reads as it reads alone; against itself and
/// the shorter one, every earlier message (item) is moved over.
#[test]
fn a_wire_reading_made_against_another_body_is_the_body_own() {
    use turnkeeper_model::wire::{chat, responses};
    let mut judged = [0usize; 2];
    let mut last_chat: Option<String> = None;
    let mut last_responses: Option<String> = None;
    for path in sources() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(sniffed) = turnkeeper_model::sniff_detail(&text) else {
            continue;
        };
        let p = path.display();
        match sniffed.format {
            Format::Chat => {
                let Ok(own) = chat::read(&text) else {
                    continue;
                };
                let mut prevs = vec![own.clone()];
                let shorter = without_last(&text, &own.messages_at);
                if let Some(s) = shorter.as_deref() {
                    prevs.push(chat::read(s).expect("the body a message shorter reads"));
                }
                for prev in &prevs {
                    let n =
                        chat_reads_as_own(&text, &own, prev).unwrap_or_else(|e| panic!("{p}: {e}"));
                    assert_eq!(n, prev.messages.len(), "{p}");
                }
                if let Some(other) = &last_chat
                    && let Ok(o) = chat::read(other)
                {
                    let n =
                        chat_reads_as_own(&text, &own, &o).unwrap_or_else(|e| panic!("{p}: {e}"));
                    assert!(n <= own.messages.len(), "{p}");
                }
                last_chat = Some(text);
                judged[0] += 1;
            }
            Format::Responses => {
                let Ok(own) = responses::read(&text) else {
                    continue;
                };
                let mut prevs = vec![own.clone()];
                let shorter = without_last(&text, &own.input_at);
                if let Some(s) = shorter.as_deref() {
                    prevs.push(responses::read(s).expect("the body an item shorter reads"));
                }
                for prev in &prevs {
                    let n = responses_reads_as_own(&text, &own, prev)
                        .unwrap_or_else(|e| panic!("{p}: {e}"));
                    assert_eq!(n, prev.items.len(), "{p}");
                }
                if let Some(other) = &last_responses
                    && let Ok(o) = responses::read(other)
                {
                    let n = responses_reads_as_own(&text, &own, &o)
                        .unwrap_or_else(|e| panic!("{p}: {e}"));
                    assert!(n <= own.items.len(), "{p}");
                }
                last_responses = Some(text);
                judged[1] += 1;
            }
            _ => {}
        }
    }
    assert!(judged[0] >= floor(100), "only {} Chat bodies", judged[0]);
    assert!(
        judged[1] >= floor(20),
        "only {} Responses bodies",
        judged[1]
    );
}
