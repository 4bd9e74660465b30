//! The turn store: assistant content exactly as the provider returned it.
//!
//! api-rules.md §5.2 (AN-22/AN-27): "Store and replay the provider's raw `content` array for each
//! assistant turn, next to any normalised form. Before sending, compare the latest assistant
//! message against the stored raw copy and restore it if they differ." The store is that raw copy.
//!
//! A turn is found again from a later request's assistant message by the ids of the tool calls it
//! made (the strongest key: they are unique per response), else by a hash of its visible text.
//! On disk the store is a directory of JSON files, one per turn, each written atomically (a
//! temporary file in the same directory, flushed, renamed over, the directory synced).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use turnkeeper_model::{BlockKind, BodyKind, Format, FormatHint, Transcript, read};

use crate::sse;

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A file system error.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A response body that is neither a Messages response nor a stream of one.
    #[error("{0}")]
    NotAResponse(String),
}

/// One stored assistant turn.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredTurn {
    /// The response id (`msg_...`), when known.
    pub response_id: Option<String>,
    /// The model that produced it.
    pub model: Option<String>,
    /// The content array, as the provider sent it (JSON text).
    pub content: String,
}

/// The store: turns in memory, optionally backed by a directory.
#[derive(Debug, Default)]
pub struct TurnStore {
    dir: Option<PathBuf>,
    turns: Vec<StoredTurn>,
    by_tool: HashMap<String, usize>,
    by_text: HashMap<String, usize>,
    /// Files in the directory that could not be read, with the reason.
    pub problems: Vec<String>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The keys a turn's content is found by: its tool call ids and a hash of its visible text.
fn keys(t: &Transcript<'_>, msg: usize) -> (Vec<String>, Option<String>) {
    let mut ids = Vec::new();
    let mut h = Sha256::new();
    let mut any_text = false;
    for b in t.blocks_of(msg) {
        match b.kind() {
            BlockKind::ToolCall | BlockKind::ServerToolCall => {
                if let Some(id) = b.id {
                    ids.push(id.decode(t.src).into_owned());
                }
            }
            BlockKind::Text => {
                if let Some(x) = b.text.filter(|x| !x.is_blank(t.src)) {
                    h.update(x.decode(t.src).trim().as_bytes());
                    h.update([0x1f]);
                    any_text = true;
                }
            }
            _ => {}
        }
    }
    let text = any_text.then(|| {
        h.finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect()
    });
    (ids, text)
}

impl TurnStore {
    /// An empty store that lives in memory only.
    pub fn in_memory() -> Self {
        TurnStore::default()
    }

    /// Opens (creating it if needed) the store in `dir` and loads every turn in it. Unreadable
    /// files are listed in [`TurnStore::problems`], not fatal.
    ///
    /// # Errors
    /// When the directory cannot be created or listed.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut store = TurnStore {
            dir: Some(dir.to_owned()),
            ..TurnStore::default()
        };
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io(dir))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        entries.sort();
        for p in entries {
            match std::fs::read_to_string(&p)
                .map_err(|e| e.to_string())
                .and_then(|s| serde_json::from_str::<StoredTurn>(&s).map_err(|e| e.to_string()))
            {
                Ok(turn) => store.index(turn),
                Err(e) => store.problems.push(format!("{}: {e}", p.display())),
            }
        }
        Ok(store)
    }

    /// Number of stored turns.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    fn index(&mut self, turn: StoredTurn) {
        let body = format!(
            "{{\"type\":\"message\",\"role\":\"assistant\",\"content\":{}}}",
            turn.content
        );
        let Ok(t) = read(&body, FormatHint::Exactly(Format::Anthropic)) else {
            self.problems
                .push("a stored turn whose content does not parse".to_owned());
            return;
        };
        let (ids, text) = keys(&t, 0);
        let n = self.turns.len();
        for id in ids {
            self.by_tool.insert(id, n);
        }
        if let Some(text) = text {
            self.by_text.insert(text, n);
        }
        self.turns.push(turn);
    }

    /// Records a response body: a Messages API response (JSON) or its event stream (SSE).
    /// Returns the stored turn. With a directory, the turn is also written to disk atomically.
    ///
    /// # Errors
    /// When `body` is not a response, or writing fails.
    pub fn add_response(&mut self, body: &str) -> Result<&StoredTurn, StoreError> {
        let turn = if sse::looks_like_sse(body) {
            let a = sse::assemble(body);
            if a.content == "[]" {
                return Err(StoreError::NotAResponse(
                    "the stream carried no content block".to_owned(),
                ));
            }
            StoredTurn {
                response_id: a.id,
                model: a.model,
                content: a.content,
            }
        } else {
            let t = read(body, FormatHint::Exactly(Format::Anthropic))
                .map_err(|e| StoreError::NotAResponse(e.to_string()))?;
            if t.body != BodyKind::Response {
                return Err(StoreError::NotAResponse(
                    "a request body, not a response (expected {\"type\":\"message\",\"content\":[...]})".to_owned(),
                ));
            }
            let content = t.messages[0]
                .content_span
                .map(|s| s.get(body).to_owned())
                .unwrap_or_default();
            StoredTurn {
                response_id: t.meta.response_id.map(|s| s.decode(body).into_owned()),
                model: t.model().map(|m| m.into_owned()),
                content,
            }
        };
        if let Some(dir) = &self.dir {
            write_atomically(dir, &turn)?;
        }
        self.index(turn);
        Ok(&self.turns[self.turns.len() - 1])
    }

    /// The stored original of message `msg` of `t`, if the store has it.
    pub fn find(&self, t: &Transcript<'_>, msg: usize) -> Option<&StoredTurn> {
        let (ids, text) = keys(t, msg);
        ids.iter()
            .find_map(|id| self.by_tool.get(id))
            .or_else(|| text.and_then(|x| self.by_text.get(&x)))
            .and_then(|&n| self.turns.get(n))
    }
}

fn write_atomically(dir: &Path, turn: &StoredTurn) -> Result<(), StoreError> {
    let name = format!("{}.json", &crate::ledger::fingerprint(&turn.content));
    let path = dir.join(&name);
    let text = serde_json::to_string(turn).map_err(|e| StoreError::NotAResponse(e.to_string()))?;
    crate::fsio::write_atomically(&path, text.as_bytes()).map_err(io(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESP: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"hm","signature":"EqQBCkYIBxgC"},{"type":"tool_use","id":"toolu_9","name":"f","input":{}}],"stop_reason":"tool_use"}"#;

    #[test]
    fn stores_and_finds_by_tool_id_across_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let mut s = TurnStore::open(dir.path()).expect("open");
            s.add_response(RESP).expect("add");
        }
        let s = TurnStore::open(dir.path()).expect("reopen");
        assert_eq!(s.len(), 1);
        let req = r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"f","input":{}}]}]}"#;
        let t = read(req, FormatHint::Auto).expect("reads");
        let turn = s.find(&t, 1).expect("found");
        assert!(turn.content.contains("EqQBCkYIBxgC"));
        assert_eq!(turn.response_id.as_deref(), Some("msg_1"));
    }

    /// A request whose assistant message (index 1) has `content`.
    fn request(content: &str) -> String {
        format!(
            r#"{{"messages":[{{"role":"user","content":"q"}},{{"role":"assistant","content":{content}}}]}}"#
        )
    }

    /// Looks message 1 of `request(content)` up in `store`; the stored response id, if found.
    fn check(store: &TurnStore, content: &str, expect: Option<&str>) {
        let body = request(content);
        let t = read(&body, FormatHint::Auto).expect("reads");
        let found = store.find(&t, 1).map(|turn| turn.response_id.as_deref());
        assert_eq!(found, expect.map(Some), "{content}");
    }

    const TEXT_RESP: &str = r#"{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"hm","signature":"EqQBCkYIBxgC"},{"type":"text","text":"  The answer.  "},{"type":"text","text":" "}],"stop_reason":"end_turn"}"#;

    #[test]
    fn turns_are_found_by_tool_id_then_by_visible_text() {
        let mut s = TurnStore::in_memory();
        assert_eq!((s.len(), s.is_empty()), (0, true));
        s.add_response(RESP).expect("add");
        s.add_response(TEXT_RESP).expect("add");
        assert_eq!((s.len(), s.is_empty()), (2, false));
        let tool = r#"{"type":"tool_use","id":"toolu_9","name":"f","input":{}}"#;
        check(&s, &format!("[{tool}]"), Some("msg_1"));
        check(
            &s,
            &format!(r#"[{{"type":"text","text":"The answer."}},{tool}]"#),
            Some("msg_1"),
        );
        // The text is compared trimmed, blank blocks left out; the thinking block is not a key.
        check(
            &s,
            r#"[{"type":"text","text":"The answer."}]"#,
            Some("msg_2"),
        );
        check(&s, r#"[{"type":"text","text":"The answer!"}]"#, None);
        check(
            &s,
            r#"[{"type":"tool_use","id":"toolu_8","name":"f","input":{}}]"#,
            None,
        );
        check(
            &s,
            r#"[{"type":"thinking","thinking":"hm","signature":"EqQBCkYIBxgC"}]"#,
            None,
        );
        check(&s, r#"[{"type":"text","text":" "}]"#, None);
    }

    #[test]
    fn a_stream_is_stored_as_its_assembled_content() {
        let mut s = TurnStore::in_memory();
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_3\",\"model\":\"claude-opus-4-1\",\"content\":[]}}\n\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"streamed\"}}\n\n";
        let turn = s.add_response(sse).expect("add").clone();
        assert_eq!(
            turn,
            StoredTurn {
                response_id: Some("msg_3".to_owned()),
                model: Some("claude-opus-4-1".to_owned()),
                content: r#"[{"type":"text","text":"streamed"}]"#.to_owned(),
            }
        );
        check(&s, r#"[{"type":"text","text":"streamed"}]"#, Some("msg_3"));
        let empty = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_4\"}}\n\n";
        assert_eq!(
            s.add_response(empty)
                .map(|t| t.content.clone())
                .map_err(|e| e.to_string()),
            Err("the stream carried no content block".to_owned())
        );
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn unreadable_files_are_listed_as_problems() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("broken.json"), "{").expect("write");
        std::fs::write(dir.path().join("notes.txt"), "{").expect("write");
        let s = TurnStore::open(dir.path()).expect("open");
        assert_eq!(s.len(), 0);
        assert_eq!(s.problems.len(), 1, "{:?}", s.problems);
        assert!(s.problems[0].contains("broken.json"), "{:?}", s.problems);
    }

    #[test]
    fn a_request_is_not_a_response() {
        let mut s = TurnStore::in_memory();
        assert!(s.add_response(r#"{"messages":[]}"#).is_err());
    }
}
