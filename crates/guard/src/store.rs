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

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use turnkeeper_model::{BlockKind, BodyKind, Format, FormatHint, Transcript, read};

use crate::sse;
use crate::wire_turn::{
    ChatRecord, ConverseRecord, ResponsesItem, WireFamily, WireRecord, WireTurn, gemini_call_keys,
    response_family, text_key,
};

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

/// The keys a stored turn is found by: the ids of the tool calls it made (unique per response),
/// and a hash of its visible text. A store shared between processes (the proxy's Redis store)
/// indexes turns by these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnKeys {
    /// The `tool_use` / `server_tool_use` ids, in order.
    pub tool_ids: Vec<String>,
    /// A hash (32 hex digits) of the trimmed non-blank text blocks, when there is any.
    pub text: Option<String>,
}

impl TurnKeys {
    /// The keys of message `msg` of `t`.
    pub fn of(t: &Transcript<'_>, msg: usize) -> TurnKeys {
        let (tool_ids, text) = keys(t, msg);
        TurnKeys { tool_ids, text }
    }

    /// True when the turn can be found by nothing (no tool call, no text).
    pub fn is_empty(&self) -> bool {
        self.tool_ids.is_empty() && self.text.is_none()
    }
}

impl StoredTurn {
    /// The turn a response body carries: a Messages API response (JSON) or its event stream
    /// (SSE). A stream must be complete (it reached `message_stop` with no `error` event): a
    /// stream cut short is not a turn the provider finished, and recording it would restore a
    /// truncated turn later.
    ///
    /// # Errors
    /// [`StoreError::NotAResponse`] when `body` is not a whole response.
    pub fn from_response(body: &str) -> Result<StoredTurn, StoreError> {
        if sse::looks_like_sse(body) {
            let a = sse::assemble(body);
            if let Some(e) = &a.error {
                return Err(StoreError::NotAResponse(format!(
                    "the stream ended with an error event: {e}"
                )));
            }
            if !a.complete {
                return Err(StoreError::NotAResponse(
                    "the stream ended before `message_stop`".to_owned(),
                ));
            }
            if a.content == "[]" {
                return Err(StoreError::NotAResponse(
                    "the stream carried no content block".to_owned(),
                ));
            }
            return Ok(StoredTurn {
                response_id: a.id,
                model: a.model,
                content: a.content,
            });
        }
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
        Ok(StoredTurn {
            response_id: t.meta.response_id.map(|s| s.decode(body).into_owned()),
            model: t.model().map(|m| m.into_owned()),
            content,
        })
    }

    /// The keys this turn is found by.
    ///
    /// # Errors
    /// [`StoreError::NotAResponse`] when `content` is not a content array.
    pub fn keys(&self) -> Result<TurnKeys, StoreError> {
        let body = self.as_message();
        let t = read(&body, FormatHint::Exactly(Format::Anthropic)).map_err(|_| {
            StoreError::NotAResponse("a stored turn whose content does not parse".to_owned())
        })?;
        Ok(TurnKeys::of(&t, 0))
    }

    /// The fingerprint of the content: the turn's name on disk and in shared stores.
    pub fn fingerprint(&self) -> String {
        crate::ledger::fingerprint(&self.content)
    }

    fn as_message(&self) -> String {
        format!(
            "{{\"type\":\"message\",\"role\":\"assistant\",\"content\":{}}}",
            self.content
        )
    }
}

/// The store: turns in memory, optionally backed by a directory, optionally bounded.
///
/// A bounded store ([`TurnStore::with_limit`]) keeps the most recently recorded turns and
/// forgets the oldest (deleting its file, with a directory), so a long-running process (the
/// proxy) holds a bounded amount of memory and disk.
#[derive(Debug, Default)]
pub struct TurnStore {
    dir: Option<PathBuf>,
    limit: Option<usize>,
    next: u64,
    turns: HashMap<u64, StoredTurn>,
    /// Slots, oldest first.
    order: VecDeque<u64>,
    by_fingerprint: HashMap<String, u64>,
    by_tool: HashMap<String, u64>,
    by_text: HashMap<String, u64>,
    /// The wire families' turns, with what they carry, read.
    wire: HashMap<u64, (WireTurn, WireRecord)>,
    /// Wire turns by namespaced key ([`WireTurn::keys`]).
    by_wire: HashMap<String, u64>,
    /// Text keys two different wire turns share: found by neither.
    ambiguous: HashSet<String>,
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
    let text = any_text.then(|| crate::ledger::hex(h.finalize().get(..16).unwrap_or_default()));
    (ids, text)
}

impl TurnStore {
    /// An empty store that lives in memory only.
    pub fn in_memory() -> Self {
        TurnStore::default()
    }

    /// Opens (creating it if needed, readable by its owner only) the store in `dir` and loads
    /// every turn in it, oldest file first. Unreadable files are listed in
    /// [`TurnStore::problems`], not fatal.
    ///
    /// # Errors
    /// When the directory cannot be created or listed.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        TurnStore::open_bounded(dir, None)
    }

    /// Like [`TurnStore::open`], keeping at most `limit` turns: when the directory holds more,
    /// the oldest (by modification time) are deleted.
    ///
    /// # Errors
    /// When the directory cannot be created or listed.
    pub fn open_bounded(dir: impl AsRef<Path>, limit: Option<usize>) -> Result<Self, StoreError> {
        let dir = dir.as_ref();
        create_private_dir(dir).map_err(io(dir))?;
        let mut store = TurnStore {
            dir: Some(dir.to_owned()),
            limit,
            ..TurnStore::default()
        };
        let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
            .map_err(io(dir))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let t = std::fs::metadata(&p)
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (t, p)
            })
            .collect();
        entries.sort();
        for (_, p) in entries {
            match std::fs::read_to_string(&p)
                .map_err(|e| e.to_string())
                .and_then(|s| serde_json::from_str::<OnDisk>(&s).map_err(|e| e.to_string()))
            {
                Ok(OnDisk::Anthropic(turn)) => store.index(turn),
                Ok(OnDisk::Wire(turn)) => store.index_wire(turn),
                Err(e) => store.problems.push(format!("{}: {e}", p.display())),
            }
        }
        Ok(store)
    }

    /// Bounds the store to `limit` turns (at least one), forgetting the oldest beyond it.
    #[must_use]
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit.max(1));
        self.evict();
        self
    }

    /// Number of stored turns (of every family).
    pub fn len(&self) -> usize {
        self.turns.len() + self.wire.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty() && self.wire.is_empty()
    }

    /// Adds `turn` in memory only (never written to the directory): for a store assembled for
    /// one request from a shared store's turns. A turn already held is refreshed, not doubled.
    pub fn insert(&mut self, turn: StoredTurn) {
        self.index(turn);
    }

    fn index(&mut self, turn: StoredTurn) {
        let fp = turn.fingerprint();
        if let Some(old) = self.by_fingerprint.get(&fp).copied() {
            // The same content again: make it the newest, keep one copy.
            self.order.retain(|&s| s != old);
            self.order.push_back(old);
            return;
        }
        let Ok(k) = turn.keys() else {
            self.problems
                .push("a stored turn whose content does not parse".to_owned());
            return;
        };
        let slot = self.next;
        self.next += 1;
        for id in k.tool_ids {
            self.by_tool.insert(id, slot);
        }
        if let Some(text) = k.text {
            self.by_text.insert(text, slot);
        }
        self.by_fingerprint.insert(fp, slot);
        self.turns.insert(slot, turn);
        self.order.push_back(slot);
        self.evict();
    }

    /// Forgets the oldest turns beyond the limit, and deletes their files.
    fn evict(&mut self) {
        let Some(limit) = self.limit else {
            return;
        };
        while self.len() > limit {
            let Some(slot) = self.order.pop_front() else {
                break;
            };
            let fp = if let Some(turn) = self.turns.remove(&slot) {
                self.by_tool.retain(|_, s| *s != slot);
                self.by_text.retain(|_, s| *s != slot);
                turn.fingerprint()
            } else if let Some((turn, _)) = self.wire.remove(&slot) {
                self.by_wire.retain(|_, s| *s != slot);
                wire_fingerprint(&turn)
            } else {
                continue;
            };
            self.by_fingerprint.remove(&fp);
            if let Some(dir) = &self.dir {
                let path = dir.join(format!("{fp}.json"));
                if let Err(e) = std::fs::remove_file(&path)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!(path = %path.display(), error = %e, "could not delete an evicted turn");
                }
            }
            tracing::debug!(turn = %fp, "turn store: oldest turn evicted");
        }
    }

    /// Records a response body: a Messages API response (JSON) or its complete event stream
    /// (SSE). Returns the stored turn. With a directory, the turn is also written to disk
    /// atomically, readable by its owner only.
    ///
    /// # Errors
    /// When `body` is not a whole response, or writing fails.
    pub fn add_response(&mut self, body: &str) -> Result<&StoredTurn, StoreError> {
        let turn = StoredTurn::from_response(body)?;
        self.add(turn)
    }

    /// Records a turn (see [`TurnStore::add_response`]).
    ///
    /// # Errors
    /// When writing fails.
    pub fn add(&mut self, turn: StoredTurn) -> Result<&StoredTurn, StoreError> {
        let fp = turn.fingerprint();
        if let Some(dir) = &self.dir {
            write_atomically(dir, &turn)?;
        }
        self.index(turn);
        self.by_fingerprint
            .get(&fp)
            .and_then(|s| self.turns.get(s))
            .ok_or_else(|| {
                StoreError::NotAResponse("a turn whose content does not parse".to_owned())
            })
    }

    /// Records a response body of any family turnkeeper reads, told from the body: an Anthropic
    /// Messages response or stream (as [`TurnStore::add_response`]), a Chat Completions
    /// response or its complete stream, a Responses response or its complete stream, a Converse
    /// response, a Gemini `generateContent` response or its complete `streamGenerateContent`
    /// stream (`alt=sse`, or the JSON array of chunks; complete: its last chunk carries a
    /// `finishReason`). With a directory, the turn is also written to disk atomically.
    ///
    /// # Errors
    /// When `body` is no whole response of these, or writing fails.
    pub fn add_any_response(&mut self, body: &str) -> Result<Recorded, StoreError> {
        let family = response_family(body).ok_or_else(|| {
            StoreError::NotAResponse(
                "not a response of a family turnkeeper reads (Anthropic Messages, Chat \
                 Completions, Responses, Converse, Gemini generateContent), nor an event \
                 stream of one"
                    .to_owned(),
            )
        })?;
        if family == WireFamily::Anthropic {
            let turn = self.add_response(body)?;
            return Ok(Recorded {
                family,
                response_id: turn.response_id.clone(),
            });
        }
        let turn = WireTurn::from_response(body, family)?;
        let response_id = turn.response_id.clone();
        self.add_wire(turn)?;
        Ok(Recorded {
            family,
            response_id,
        })
    }

    /// Records a wire family's turn read beforehand ([`WireTurn::from_response`]), so a caller
    /// that holds the store behind a lock reads the response outside it. With a directory, the
    /// turn is also written to disk atomically.
    ///
    /// # Errors
    /// When writing fails.
    pub fn add_wire(&mut self, turn: WireTurn) -> Result<(), StoreError> {
        if let Some(dir) = &self.dir {
            let path = dir.join(format!("{}.json", wire_fingerprint(&turn)));
            let text = serde_json::to_string(&turn)
                .map_err(|e| StoreError::NotAResponse(e.to_string()))?;
            crate::fsio::write_private_atomically(&path, text.as_bytes()).map_err(io(&path))?;
        }
        self.index_wire(turn);
        Ok(())
    }

    /// Adds a wire turn in memory only (never written to the directory): for a store assembled
    /// for one request from a shared store's turns (see [`TurnStore::insert`]).
    pub fn insert_wire(&mut self, turn: WireTurn) {
        self.index_wire(turn);
    }

    /// The stored wire turn found by `key`, a namespaced key of [`WireTurn::keys`]
    /// (`chat:call:<id>`, `responses:id:<id>`, ...).
    pub fn wire_turn(&self, key: &str) -> Option<&WireTurn> {
        self.by_wire
            .get(key)
            .and_then(|s| self.wire.get(s))
            .map(|(t, _)| t)
    }

    fn index_wire(&mut self, turn: WireTurn) {
        let fp = wire_fingerprint(&turn);
        if let Some(old) = self.by_fingerprint.get(&fp).copied() {
            self.order.retain(|&s| s != old);
            self.order.push_back(old);
            return;
        }
        let record = match turn.record() {
            Ok(r) => r,
            Err(e) => {
                self.problems.push(e.to_string());
                return;
            }
        };
        let slot = self.next;
        self.next += 1;
        for k in WireTurn::keys(&record) {
            if self.ambiguous.contains(&k) {
                continue;
            }
            let is_text = k.starts_with("chat:text:");
            let sig = |r: &WireRecord| match r {
                WireRecord::Gemini(g) => g.signature(&k).map(str::to_owned),
                _ => None,
            };
            let is_gemini = matches!(record, WireRecord::Gemini(_));
            match self.by_wire.get(&k).copied() {
                // Two turns with the same visible text: neither can be told by it.
                Some(_) if is_text => {
                    self.by_wire.remove(&k);
                    self.ambiguous.insert(k);
                }
                // Two Gemini calls under one key with different signatures: which one a request
                // means cannot be told, so neither is given back.
                Some(old) if is_gemini => {
                    let theirs = self.wire.get(&old).and_then(|(_, r)| sig(r));
                    let ours = sig(&record);
                    if ours.is_some() && ours == theirs {
                        self.by_wire.insert(k, slot);
                    } else {
                        self.by_wire.remove(&k);
                        self.ambiguous.insert(k);
                    }
                }
                None if is_gemini && sig(&record).is_none() => {
                    self.ambiguous.insert(k);
                }
                _ => {
                    self.by_wire.insert(k, slot);
                }
            }
        }
        self.by_fingerprint.insert(fp, slot);
        self.wire.insert(slot, (turn, record));
        self.order.push_back(slot);
        self.evict();
    }

    fn wire_get(&self, key: &str) -> Option<&WireRecord> {
        self.by_wire
            .get(key)
            .and_then(|s| self.wire.get(s))
            .map(|(_, r)| r)
    }

    /// The stored Chat turn of an assistant message: by the first of its tool call ids the
    /// store knows, else (a message without calls) by its `content` text, when exactly one
    /// stored turn has that text.
    pub fn chat_turn(&self, call_ids: &[&str], content: Option<&str>) -> Option<&ChatRecord> {
        let hit = if call_ids.is_empty() {
            content
                .and_then(text_key)
                .and_then(|h| self.wire_get(&format!("chat:text:{h}")))
        } else {
            call_ids
                .iter()
                .find_map(|id| self.wire_get(&format!("chat:call:{id}")))
        };
        match hit {
            Some(WireRecord::Chat(c)) => Some(c),
            _ => None,
        }
    }

    /// The output of the stored Responses turn holding an item whose `call_id` (first) or `id`
    /// is `key`.
    pub fn responses_output(&self, key: &str) -> Option<&[ResponsesItem]> {
        let hit = self
            .wire_get(&format!("responses:call:{key}"))
            .or_else(|| self.wire_get(&format!("responses:id:{key}")));
        match hit {
            Some(WireRecord::Responses(items)) => Some(items),
            _ => None,
        }
    }

    /// The `thoughtSignature` (JSON text, a string, as Gemini sent it) of the recorded
    /// `functionCall` a request's call is a copy of: found by its `id`, else by its name and
    /// arguments (`args`: the JSON text of `functionCall.args`, `None` when absent), as
    /// [`crate::wire_turn::GeminiRecord`] explains. `None` when the store has no such call,
    /// or when its key is ambiguous (two recorded calls under it with different signatures):
    /// an ambiguous id is not passed over for the name key.
    pub fn gemini_signature(
        &self,
        id: Option<&str>,
        name: &str,
        args: Option<&str>,
    ) -> Option<&str> {
        for k in gemini_call_keys(id, name, args) {
            if self.ambiguous.contains(&k) {
                return None;
            }
            if let Some(WireRecord::Gemini(g)) = self.wire_get(&k) {
                return g.signature(&k);
            }
        }
        None
    }

    /// True when `key` (a namespaced key of [`WireTurn::keys`]) names no turn because two
    /// recorded turns share it (a visible text; a Gemini call with different signatures).
    pub fn is_ambiguous(&self, key: &str) -> bool {
        self.ambiguous.contains(key)
    }

    /// Makes `key` name no turn, now and for turns added later: for a store assembled for one
    /// request from a shared store in which `key` is ambiguous ([`TurnStore::is_ambiguous`]),
    /// so that a turn copied over for another key is not found by this one.
    pub fn mark_ambiguous(&mut self, key: &str) {
        self.by_wire.remove(key);
        self.ambiguous.insert(key.to_owned());
    }

    /// The stored Converse turn that made the tool call `tool_use_id`.
    pub fn converse_turn(&self, tool_ids: &[&str]) -> Option<&ConverseRecord> {
        match tool_ids
            .iter()
            .find_map(|id| self.wire_get(&format!("converse:tool:{id}")))
        {
            Some(WireRecord::Converse(c)) => Some(c),
            _ => None,
        }
    }

    /// The stored original of message `msg` of `t`, if the store has it.
    pub fn find(&self, t: &Transcript<'_>, msg: usize) -> Option<&StoredTurn> {
        self.find_keys(&TurnKeys::of(t, msg))
    }

    /// The stored turn with these keys: the first tool call id found, else the text hash.
    pub fn find_keys(&self, k: &TurnKeys) -> Option<&StoredTurn> {
        k.tool_ids
            .iter()
            .find_map(|id| self.by_tool.get(id))
            .or_else(|| k.text.as_ref().and_then(|x| self.by_text.get(x)))
            .and_then(|n| self.turns.get(n))
    }
}

/// What [`TurnStore::add_any_response`] recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The family the response was read as.
    pub family: WireFamily,
    /// Its response id, when it had one.
    pub response_id: Option<String>,
}

/// A file of the store: an Anthropic turn, or a wire family's.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum OnDisk {
    Anthropic(StoredTurn),
    Wire(WireTurn),
}

/// The name of a wire turn (its family and its text).
fn wire_fingerprint(turn: &WireTurn) -> String {
    turn.fingerprint()
}

/// Creates `dir` (and its parents) and, on Unix, makes it accessible to its owner only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

fn write_atomically(dir: &Path, turn: &StoredTurn) -> Result<(), StoreError> {
    let name = format!("{}.json", turn.fingerprint());
    let path = dir.join(&name);
    let text = serde_json::to_string(turn).map_err(|e| StoreError::NotAResponse(e.to_string()))?;
    crate::fsio::write_private_atomically(&path, text.as_bytes()).map_err(io(&path))
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

    fn response(n: usize) -> String {
        format!(
            r#"{{"id":"msg_{n}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"thinking","thinking":"t{n}","signature":"EqQBCkYIBxgC"}},{{"type":"tool_use","id":"toolu_{n}","name":"f","input":{{}}}}],"stop_reason":"tool_use"}}"#
        )
    }

    fn asking_for(n: usize) -> String {
        format!(
            r#"{{"messages":[{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{n}","name":"f","input":{{}}}}]}}]}}"#
        )
    }

    fn found(s: &TurnStore, n: usize) -> Option<String> {
        let req = asking_for(n);
        let t = read(&req, FormatHint::Auto).expect("reads");
        s.find(&t, 1).and_then(|turn| turn.response_id.clone())
    }

    #[test]
    fn a_bounded_store_forgets_the_oldest_turn_and_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = TurnStore::open(dir.path()).expect("open").with_limit(2);
        for n in 1..=3 {
            s.add_response(&response(n)).expect("add");
        }
        assert_eq!(s.len(), 2);
        assert_eq!(found(&s, 1), None);
        assert_eq!(found(&s, 2).as_deref(), Some("msg_2"));
        assert_eq!(found(&s, 3).as_deref(), Some("msg_3"));
        let files = std::fs::read_dir(dir.path()).expect("ls").count();
        assert_eq!(files, 2, "the evicted turn's file is deleted");
        // Recording a held turn again makes it the newest instead of doubling it.
        s.add_response(&response(2)).expect("again");
        s.add_response(&response(4)).expect("add");
        assert_eq!(found(&s, 2).as_deref(), Some("msg_2"));
        assert_eq!(found(&s, 3), None);
        // Reopening with a smaller limit trims what is on disk.
        drop(s);
        let s = TurnStore::open_bounded(dir.path(), Some(1)).expect("reopen");
        assert_eq!(s.len(), 1);
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
    }

    #[test]
    fn keys_and_insert_serve_a_store_assembled_for_one_request() {
        let turn = StoredTurn::from_response(&response(7)).expect("turn");
        let k = turn.keys().expect("keys");
        assert_eq!(k.tool_ids, vec!["toolu_7".to_owned()]);
        assert_eq!(k.text, None);
        assert!(!k.is_empty());
        let mut s = TurnStore::in_memory();
        s.insert(turn.clone());
        s.insert(turn);
        assert_eq!(s.len(), 1);
        assert_eq!(found(&s, 7).as_deref(), Some("msg_7"));
        let req = asking_for(7);
        let t = read(&req, FormatHint::Auto).expect("reads");
        assert_eq!(TurnKeys::of(&t, 1), k);
    }

    #[test]
    fn a_stream_cut_short_is_not_a_turn() {
        let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"content\":[]}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\n";
        let e = StoredTurn::from_response(start).expect_err("cut short");
        assert!(e.to_string().contains("message_stop"), "{e}");
        let whole = format!("{start}event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n");
        let turn = StoredTurn::from_response(&whole).expect("whole");
        assert_eq!(turn.content, r#"[{"type":"text","text":"hi"}]"#);
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
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"streamed\"}}\n\n\
data: {\"type\":\"message_stop\"}\n\n";
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
        let empty = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_4\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n";
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

    fn chat_response(id: &str, reasoning: &str, call: Option<&str>, text: &str) -> String {
        let calls = call.map_or(String::new(), |c| {
            format!(r#","tool_calls":[{{"id":"{c}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}]"#)
        });
        format!(
            r#"{{"id":"{id}","choices":[{{"index":0,"message":{{"role":"assistant","content":"{text}","reasoning_content":"{reasoning}"{calls}}},"finish_reason":"stop"}}]}}"#
        )
    }

    /// Wire turns are found by call id, by an unambiguous text, and survive a reopen; a text two
    /// turns share finds neither.
    #[test]
    fn wire_turns_are_kept_on_disk_and_found_by_their_keys() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let mut s = TurnStore::open(dir.path()).expect("open");
            let r = s
                .add_any_response(&chat_response("c1", "r1", Some("call_1"), ""))
                .expect("chat");
            assert_eq!(
                r,
                Recorded {
                    family: WireFamily::Chat,
                    response_id: Some("c1".to_owned())
                }
            );
            s.add_any_response(&chat_response("c2", "r2", None, "Same answer."))
                .expect("chat");
            s.add_any_response(&chat_response("c3", "r3", None, "Unique answer."))
                .expect("chat");
            s.add_any_response(&chat_response("c4", "r4", None, " Same answer. "))
                .expect("chat");
            s.add_any_response(RESP).expect("anthropic");
        }
        let s = TurnStore::open(dir.path()).expect("reopen");
        assert_eq!((s.len(), s.problems.len()), (5, 0), "{:?}", s.problems);
        let rc = |c: Option<&ChatRecord>| c.and_then(|c| c.reasoning_content.clone());
        assert_eq!(
            rc(s.chat_turn(&["call_1"], None)),
            Some("\"r1\"".to_owned())
        );
        assert_eq!(
            rc(s.chat_turn(&["call_9", "call_1"], None)),
            Some("\"r1\"".to_owned())
        );
        assert_eq!(
            rc(s.chat_turn(&[], Some("Unique answer."))),
            Some("\"r3\"".to_owned())
        );
        assert_eq!(rc(s.chat_turn(&[], Some("Same answer."))), None);
        assert_eq!(rc(s.chat_turn(&["call_9"], None)), None);
        assert!(s.responses_output("call_1").is_none());
        let mut small = TurnStore::in_memory().with_limit(1);
        small
            .add_any_response(&chat_response("c1", "r1", Some("call_1"), ""))
            .expect("chat");
        small
            .add_any_response(&chat_response("c5", "r5", Some("call_5"), ""))
            .expect("chat");
        assert_eq!(small.len(), 1);
        assert!(small.chat_turn(&["call_1"], None).is_none());
        assert!(small.chat_turn(&["call_5"], None).is_some());
        assert!(small.add_any_response(r#"{"messages":[]}"#).is_err());
    }

    /// A Gemini 3 response in the shape of real-traffic/gemini/fantasy-*-multi_tool__0 (signatures
    /// shortened): two parallel calls with ids, the first signed.
    const GEMINI_JSON: &str = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"add","args":{"b":3,"a":2},"id":"wxvlv0tv"},"thoughtSignature":"Es8KCswKAb4+"},{"functionCall":{"name":"multiply","args":{"b":3,"a":2},"id":"75p2opbh"}}],"role":"model"},"finishReason":"STOP","index":0}],"modelVersion":"gemini-3.1-pro-preview","responseId":"NQCzaa"}"#;

    /// A Gemini stream as real-traffic/gemini/pydantic-ai-*-streaming_tool_call_thought_signature__0
    /// sends it (no call id; the signature on the call; a last chunk with `finishReason`).
    fn gemini_stream(finish: bool) -> String {
        let mut s = String::from(
            "data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\": \"get_country\",\"args\": {}},\"thoughtSignature\": \"EpwICpkIAXLI\"}],\"role\": \"model\"},\"index\": 0}],\"modelVersion\": \"gemini-3-pro-preview\",\"responseId\": \"r1\"}\r\n\r\n",
        );
        if finish {
            s.push_str("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"responseId\": \"r1\"}\r\n\r\n");
        }
        s
    }

    #[test]
    fn a_gemini_response_is_recorded_and_its_signed_call_found_by_id() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let mut s = TurnStore::open(dir.path()).expect("open");
            let r = s.add_any_response(GEMINI_JSON).expect("gemini");
            assert_eq!(
                r,
                Recorded {
                    family: WireFamily::Gemini,
                    response_id: Some("NQCzaa".to_owned())
                }
            );
        }
        // Persisted: found again after a reopen.
        let s = TurnStore::open(dir.path()).expect("reopen");
        assert_eq!((s.len(), s.problems.len()), (1, 0), "{:?}", s.problems);
        let turn = s.wire_turn("gemini:id:wxvlv0tv").expect("by id");
        assert_eq!(turn.model.as_deref(), Some("gemini-3.1-pro-preview"));
        assert_eq!(
            turn.raw,
            r#"{"parts":[{"functionCall":{"name":"add","args":{"b":3,"a":2},"id":"wxvlv0tv"},"thoughtSignature":"Es8KCswKAb4+"},{"functionCall":{"name":"multiply","args":{"b":3,"a":2},"id":"75p2opbh"}}],"role":"model"}"#
        );
        let add = Some(r#"{"a":2,"b":3}"#);
        assert_eq!(
            s.gemini_signature(Some("wxvlv0tv"), "add", add),
            Some("\"Es8KCswKAb4+\"")
        );
        // A call with an id is found by its id only, not by name and arguments.
        assert_eq!(s.gemini_signature(None, "add", add), None);
        assert_eq!(s.gemini_signature(Some("other"), "add", add), None);
        // The unsigned parallel call has nothing to give back.
        assert_eq!(s.gemini_signature(Some("75p2opbh"), "multiply", add), None);
        assert!(s.wire_turn("gemini:id:75p2opbh").is_none());
    }

    #[test]
    fn a_complete_gemini_stream_is_recorded_and_a_cut_one_is_not() {
        let mut s = TurnStore::in_memory();
        let e = s
            .add_any_response(&gemini_stream(false))
            .expect_err("no finishReason");
        assert!(e.to_string().contains("finishReason"), "{e}");
        assert_eq!(s.len(), 0);
        let r = s.add_any_response(&gemini_stream(true)).expect("whole");
        assert_eq!(r.family, WireFamily::Gemini);
        assert_eq!(r.response_id.as_deref(), Some("r1"));
        assert_eq!(s.len(), 1);
        // No id: found by name and arguments, absent `args` counted as `{}`; any id the
        // client gave the call (pydantic-ai's own) is not in the store, so the name key serves.
        for (id, args) in [
            (None, Some("{}")),
            (None, Some(" { } ")),
            (None, None),
            (Some("pyd_ai_29bf"), Some("{}")),
        ] {
            assert_eq!(
                s.gemini_signature(id, "get_country", args),
                Some("\"EpwICpkIAXLI\""),
                "{id:?} {args:?}"
            );
        }
        assert_eq!(
            s.gemini_signature(None, "get_country", Some(r#"{"a":1}"#)),
            None
        );
        assert_eq!(s.gemini_signature(None, "get_city", Some("{}")), None);
        let turn = s
            .wire_turn(&gemini_call_keys(None, "get_country", Some("{}"))[0])
            .expect("turn");
        assert_eq!(
            turn.raw,
            r#"{"parts":[{"functionCall": {"name": "get_country","args": {}},"thoughtSignature": "EpwICpkIAXLI"},{"text": ""}],"role":"model"}"#
        );
        // An error event, or nothing after the first chunk, records nothing.
        let failed = format!(
            "{}data: {{\"error\":{{\"code\":503,\"message\":\"overloaded\"}}}}\n\n",
            gemini_stream(false)
        );
        assert!(TurnStore::in_memory().add_any_response(&failed).is_err());
    }

    #[test]
    fn a_gemini_call_key_with_two_signatures_restores_nothing() {
        let resp = |sig: &str| {
            format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"generate_topic","args":{{}}}},"thoughtSignature":"{sig}"}}],"role":"model"}},"finishReason":"STOP"}}]}}"#
            )
        };
        let mut s = TurnStore::in_memory();
        s.add_any_response(&resp("Es8FCswF")).expect("first");
        assert_eq!(
            s.gemini_signature(None, "generate_topic", Some("{}")),
            Some("\"Es8FCswF\"")
        );
        // The same call and signature again (another response): still one answer.
        let again = resp("Es8FCswF").replace("\"STOP\"", "\"STOP\",\"index\":0");
        s.add_any_response(&again).expect("again");
        assert_eq!(
            s.gemini_signature(None, "generate_topic", Some("{}")),
            Some("\"Es8FCswF\"")
        );
        // Another signature under the same name and arguments: which call a request means
        // cannot be told.
        s.add_any_response(&resp("EtkBCtYB")).expect("second");
        assert_eq!(s.gemini_signature(None, "generate_topic", Some("{}")), None);
        let key = &gemini_call_keys(None, "generate_topic", Some("{}"))[0];
        assert!(s.is_ambiguous(key));
        assert!(s.wire_turn(key).is_none());
        // And stays so when a third turn brings one of them back.
        s.add_any_response(&resp("Es8FCswF").replace("STOP", "MAX_TOKENS"))
            .expect("third");
        assert_eq!(s.gemini_signature(None, "generate_topic", Some("{}")), None);
        // Within one response too.
        let two = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"x":1},"id":"a"},"thoughtSignature":"c2ln"},{"functionCall":{"name":"f","args":{"x":1},"id":"a"},"thoughtSignature":"b3RoZXI="}],"role":"model"},"finishReason":"STOP"}]}"#;
        let mut s = TurnStore::in_memory();
        s.add_any_response(two).expect("two");
        assert_eq!(s.gemini_signature(Some("a"), "f", Some(r#"{"x":1}"#)), None);
        // A store assembled for one request keeps a key the shared store found ambiguous.
        let mut small = TurnStore::in_memory();
        small.mark_ambiguous("gemini:id:a");
        small.insert_wire(
            WireTurn::from_response(
                &two.replace(",\"thoughtSignature\":\"b3RoZXI=\"", ""),
                WireFamily::Gemini,
            )
            .expect("turn"),
        );
        assert_eq!(small.gemini_signature(Some("a"), "f", None), None);
    }

    #[test]
    fn a_request_is_not_a_response() {
        let mut s = TurnStore::in_memory();
        assert!(s.add_response(r#"{"messages":[]}"#).is_err());
    }
}
