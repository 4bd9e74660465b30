//! Claude Code sessions: the JSONL transcript Claude Code keeps per session
//! (`~/.claude/projects/<encoded-cwd>/<session-uuid>.jsonl`), read line by line, and the
//! Anthropic request Claude Code would send when the session is resumed.
//!
//! How Claude Code stores a conversation (session-stores.md §4.2–4.3, checked on the real files
//! in `shared/real-stores/claude-code/`):
//! - one JSON object per line; `user`, `assistant`, `system`, `progress`, `attachment`,
//!   `queue-operation`, `file-history-snapshot`, ... lines, each with a `uuid` and a
//!   `parentUuid`;
//! - one API response is written as several `assistant` lines, **one content block per line**,
//!   sharing `message.id`;
//! - the lines form a **tree**: parallel tool calls are chained, each `tool_result` line hangs off
//!   *its* `tool_use` line, and the next assistant line hangs off the last result written;
//! - a `compact_boundary` system line has `parentUuid: null` (what came before is not sent any
//!   more), and is followed by the compact summary (`isCompactSummary`);
//! - `<synthetic>` assistant lines (API errors, "Prompt is too long") and `isApiErrorMessage`
//!   lines are shown to the user, never sent;
//! - sub-agents live in files of their own (`isSidechain: true`).
//!
//! [`Session::rebuild`] takes the leaf (the last message line), walks its ancestors, and widens
//! the path to every line of each `message.id` on it and every tool-result line whose parent is
//! on it; that is the conversation the next request replays. A naive walk from the leaf keeps one
//! result of each parallel batch and invents missing results (session-stores.md §4.3).
//!
//! [`Session::to_request`] writes that conversation as a Messages request, every block's bytes
//! as stored (a `thinking` block byte for byte), less the `caller` member Claude Code adds to
//! `tool_use` blocks on disk and strips before sending, and records which line each block came
//! from.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::edit::object;
use crate::json::write_string;
use crate::opencode::ThinkingMode;

/// What went wrong reading a session file as a whole (a bad line is not an error: it becomes a
/// [`LineProblem`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClaudeCodeError {
    /// The file holds no line that parses.
    #[error("{origin}: no JSON line: not a Claude Code session")]
    Empty {
        /// Where the text came from.
        origin: String,
    },
}

/// A line that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// The fields of a line this reader uses.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Head<'a> {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default)]
    parent_uuid: Option<String>,
    #[serde(default)]
    is_sidechain: bool,
    #[serde(default)]
    is_api_error_message: bool,
    #[serde(default)]
    is_compact_summary: bool,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default, borrow)]
    message: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

/// The role of a message line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRole {
    /// A `user` line (a prompt, tool results, a compact summary).
    User,
    /// An `assistant` line (one block of a response).
    Assistant,
}

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    /// Byte range of the line in the file, without its newline.
    pub start: usize,
    /// End of the line (exclusive), without its newline.
    pub end: usize,
    /// `type` (`user`, `assistant`, `system`, `progress`, ...).
    pub kind: String,
    /// `subtype` of a system line (`compact_boundary`, ...).
    pub subtype: Option<String>,
    /// `uuid`.
    pub uuid: Option<String>,
    /// `parentUuid`.
    pub parent: Option<String>,
    /// `isSidechain`.
    pub sidechain: bool,
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// For user and assistant lines: the role, the API message id, the model, and the blocks.
    pub message: Option<LineMessage>,
    /// Shown to the user, never sent (`<synthetic>` model, `isApiErrorMessage`).
    pub display_only: bool,
    /// `isCompactSummary`.
    pub compact_summary: bool,
}

/// The `message` of a user or assistant line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMessage {
    /// The role.
    pub role: LineRole,
    /// `message.id` (assistant lines: the API response this block belongs to).
    pub id: Option<String>,
    /// `message.model`.
    pub model: Option<String>,
    /// The content as stored: a JSON string (`"text"`), or the blocks' exact texts.
    pub content: Content,
}

/// A message's content as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A JSON string, as its JSON text (quotes included).
    Text(String),
    /// Blocks, each its exact JSON text.
    Blocks(Vec<String>),
}

impl Content {
    /// The blocks' `type`s (`text` for string content).
    pub fn types(&self) -> Vec<String> {
        match self {
            Content::Text(_) => vec!["text".to_owned()],
            Content::Blocks(b) => b
                .iter()
                .map(|raw| {
                    object::get(raw, "type")
                        .and_then(|t| serde_json::from_str::<String>(t).ok())
                        .unwrap_or_default()
                })
                .collect(),
        }
    }
}

/// A session file, read.
#[derive(Debug, Clone)]
pub struct Session {
    /// The file's text.
    pub text: String,
    /// Every line that parsed as a JSON object, in file order.
    pub lines: Vec<Line>,
    /// Lines that did not (a torn last line among them).
    pub problems: Vec<LineProblem>,
    /// The byte offset where a torn last line starts (a crash mid-write: the file does not end
    /// with a newline and its last line is not JSON).
    pub torn_tail: Option<usize>,
}

/// The conversation a resumed session replays: messages of line indices (into
/// [`Session::lines`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// Messages in order, each the indices of its lines.
    pub messages: Vec<(LineRole, Vec<usize>)>,
    /// The model of the last assistant line that was sent by a real model.
    pub model: Option<String>,
}

/// A request body and the line behind each block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The Messages request body.
    pub body: String,
    /// `blocks[i][j]`: the index (into [`Session::lines`]) of the line `messages[i].content[j]`
    /// came from.
    pub blocks: Vec<Vec<usize>>,
}

impl Session {
    /// Reads a session file's text. Lines that are not JSON objects are recorded as problems;
    /// a last line cut short by a crash is recorded as [`Session::torn_tail`].
    ///
    /// # Errors
    /// [`ClaudeCodeError::Empty`] when no line is a JSON object.
    pub fn parse(text: String, origin: &str) -> Result<Session, ClaudeCodeError> {
        let mut lines = Vec::new();
        let mut problems = Vec::new();
        let mut torn_tail = None;
        let mut start = 0;
        let mut number = 0;
        while start < text.len() {
            number += 1;
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            let raw = text[start..end].trim_end_matches('\r');
            let last = end == text.len();
            if !raw.trim().is_empty() {
                match parse_line(raw, number, start, start + raw.len()) {
                    Ok(line) => lines.push(line),
                    Err(reason) => {
                        if last {
                            torn_tail = Some(start);
                        }
                        problems.push(LineProblem {
                            line: number,
                            reason,
                        });
                    }
                }
            }
            start = end + 1;
        }
        if lines.is_empty() {
            return Err(ClaudeCodeError::Empty {
                origin: origin.to_owned(),
            });
        }
        Ok(Session {
            text,
            lines,
            problems,
            torn_tail,
        })
    }

    /// The exact text of line `i` (an index into [`Session::lines`]).
    pub fn raw(&self, i: usize) -> &str {
        &self.text[self.lines[i].start..self.lines[i].end]
    }

    /// The session id the lines carry.
    pub fn session_id(&self) -> Option<&str> {
        self.lines.iter().find_map(|l| l.session_id.as_deref())
    }

    /// The conversation a resumed session replays (see the module docs).
    pub fn rebuild(&self) -> Conversation {
        let by_uuid: HashMap<&str, usize> = self
            .lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.uuid.as_deref().map(|u| (u, i)))
            .collect();
        let sent = |l: &Line| l.message.is_some() && !l.display_only && !l.sidechain;
        let Some(leaf) = self.lines.iter().rposition(sent) else {
            return Conversation {
                messages: Vec::new(),
                model: None,
            };
        };
        // The leaf's ancestors, up to a root or a compact boundary (its parent is null).
        let mut on_path: HashSet<usize> = HashSet::new();
        let mut at = Some(leaf);
        while let Some(i) = at {
            if !on_path.insert(i) {
                break; // a cycle: stop rather than loop
            }
            at = self.lines[i]
                .parent
                .as_deref()
                .and_then(|p| by_uuid.get(p).copied());
        }
        // Widen: every line of each response on the path, then every result hanging off them.
        let ids: HashSet<&str> = on_path
            .iter()
            .filter_map(|&i| self.lines[i].message.as_ref()?.id.as_deref())
            .collect();
        let mut keep: HashSet<usize> = on_path.clone();
        for (i, l) in self.lines.iter().enumerate() {
            if let Some(m) = &l.message
                && m.role == LineRole::Assistant
                && m.id.as_deref().is_some_and(|id| ids.contains(id))
                && !l.sidechain
            {
                keep.insert(i);
            }
        }
        let uuids: HashSet<&str> = keep
            .iter()
            .filter_map(|&i| self.lines[i].uuid.as_deref())
            .collect();
        for (i, l) in self.lines.iter().enumerate() {
            if let Some(m) = &l.message
                && m.role == LineRole::User
                && !l.sidechain
                && l.parent.as_deref().is_some_and(|p| uuids.contains(p))
                && m.content.types().iter().any(|t| t == "tool_result")
            {
                keep.insert(i);
            }
        }
        let mut order: Vec<usize> = keep.into_iter().filter(|&i| sent(&self.lines[i])).collect();
        order.sort_unstable();
        let mut messages: Vec<(LineRole, Vec<usize>)> = Vec::new();
        let mut model = None;
        for i in order {
            let Some(m) = &self.lines[i].message else {
                continue;
            };
            if m.role == LineRole::Assistant && m.model.is_some() {
                model.clone_from(&m.model);
            }
            let same = match messages.last() {
                Some((LineRole::User, _)) => m.role == LineRole::User,
                Some((LineRole::Assistant, prev)) => {
                    m.role == LineRole::Assistant
                        && prev.last().and_then(|&p| {
                            self.lines[p]
                                .message
                                .as_ref()
                                .and_then(|pm| pm.id.as_deref())
                        }) == m.id.as_deref()
                        && m.id.is_some()
                }
                None => false,
            };
            match messages.last_mut() {
                Some((_, v)) if same => v.push(i),
                _ => messages.push((m.role, vec![i])),
            }
        }
        Conversation { messages, model }
    }

    /// The Messages request the conversation is sent as: `model`, `max_tokens`, `thinking`, and
    /// the messages, every block's bytes as stored except for the `caller` member of `tool_use`
    /// blocks.
    pub fn to_request(
        &self,
        c: &Conversation,
        model: Option<&str>,
        thinking: ThinkingMode,
    ) -> Request {
        let mut body = String::from("{");
        if let Some(m) = model {
            body.push_str("\"model\":");
            write_string(&mut body, m);
            body.push(',');
        }
        body.push_str("\"max_tokens\":32000,");
        if let Some(t) = thinking.param_json() {
            body.push_str("\"thinking\":");
            body.push_str(&t);
            body.push(',');
        }
        body.push_str("\"messages\":[");
        let mut blocks = Vec::new();
        for (k, (role, lines)) in c.messages.iter().enumerate() {
            if k > 0 {
                body.push(',');
            }
            body.push_str(match role {
                LineRole::User => "{\"role\":\"user\",\"content\":[",
                LineRole::Assistant => "{\"role\":\"assistant\",\"content\":[",
            });
            let mut origins = Vec::new();
            for &i in lines {
                let Some(m) = &self.lines[i].message else {
                    continue;
                };
                match &m.content {
                    Content::Text(json) => {
                        if !origins.is_empty() {
                            body.push(',');
                        }
                        body.push_str("{\"type\":\"text\",\"text\":");
                        body.push_str(json);
                        body.push('}');
                        origins.push(i);
                    }
                    Content::Blocks(bs) => {
                        for raw in bs {
                            if !origins.is_empty() {
                                body.push(',');
                            }
                            let stripped = if raw.contains("\"caller\"") {
                                object::remove_key(raw, "caller")
                            } else {
                                None
                            };
                            body.push_str(stripped.as_deref().unwrap_or(raw));
                            origins.push(i);
                        }
                    }
                }
            }
            body.push_str("]}");
            blocks.push(origins);
        }
        body.push_str("]}");
        Request { body, blocks }
    }
}

fn parse_line(raw: &str, number: usize, start: usize, end: usize) -> Result<Line, String> {
    let head: Head<'_> = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    let mut display_only = head.is_api_error_message;
    let message = match (&head.kind, head.message) {
        (Some(k), Some(m)) if k == "user" || k == "assistant" => {
            let env: Envelope<'_> =
                serde_json::from_str(m.get()).map_err(|e| format!("message: {e}"))?;
            let role = match env.role.as_deref().unwrap_or(k) {
                "assistant" => LineRole::Assistant,
                _ => LineRole::User,
            };
            if env.model.as_deref() == Some("<synthetic>") {
                display_only = true;
            }
            let content = match env.content {
                Some(c) if c.get().starts_with('"') => Content::Text(c.get().to_owned()),
                Some(c) => {
                    let blocks: Vec<&RawValue> =
                        serde_json::from_str(c.get()).map_err(|e| format!("content: {e}"))?;
                    Content::Blocks(blocks.into_iter().map(|b| b.get().to_owned()).collect())
                }
                None => Content::Blocks(Vec::new()),
            };
            Some(LineMessage {
                role,
                id: env.id,
                model: env.model,
                content,
            })
        }
        _ => None,
    };
    Ok(Line {
        number,
        start,
        end,
        kind: head.kind.unwrap_or_default(),
        subtype: head.subtype,
        uuid: head.uuid,
        parent: head.parent_uuid,
        sidechain: head.is_sidechain,
        session_id: head.session_id,
        timestamp: head.timestamp,
        message,
        display_only,
        compact_summary: head.is_compact_summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(uuid: &str, parent: Option<&str>, role: &str, id: &str, block: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(
            r#"{{"parentUuid":{parent},"isSidechain":false,"type":"{role}","message":{{"role":"{role}","id":"{id}","model":"claude-sonnet-4-5","content":[{block}]}},"uuid":"{uuid}","sessionId":"s1"}}"#
        )
    }

    /// Parallel calls stored as a tree (session-stores.md §4.3): the rebuilt conversation has
    /// both results, in one user message, and one assistant message per response.
    #[test]
    fn parallel_results_on_sibling_branches_are_all_kept() {
        let text = [
            line("u1", None, "user", "", r#"{"type":"text","text":"go"}"#),
            line(
                "a1",
                Some("u1"),
                "assistant",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"x","input":{},"caller":{"type":"direct"}}"#,
            ),
            line(
                "a2",
                Some("a1"),
                "assistant",
                "m1",
                r#"{"type":"tool_use","id":"t2","name":"x","input":{}}"#,
            ),
            line(
                "r1",
                Some("a1"),
                "user",
                "",
                r#"{"type":"tool_result","tool_use_id":"t1","content":"1"}"#,
            ),
            line(
                "r2",
                Some("a2"),
                "user",
                "",
                r#"{"type":"tool_result","tool_use_id":"t2","content":"2"}"#,
            ),
            line(
                "a3",
                Some("r2"),
                "assistant",
                "m2",
                r#"{"type":"text","text":"done"}"#,
            ),
        ]
        .join("\n")
            + "\n";
        let s = Session::parse(text, "t").expect("parses");
        let c = s.rebuild();
        let shape: Vec<(LineRole, Vec<usize>)> = c.messages.clone();
        assert_eq!(
            shape,
            vec![
                (LineRole::User, vec![0]),
                (LineRole::Assistant, vec![1, 2]),
                (LineRole::User, vec![3, 4]),
                (LineRole::Assistant, vec![5]),
            ]
        );
        let r = s.to_request(&c, Some("claude-sonnet-4-5"), ThinkingMode::Off);
        assert!(!r.body.contains("caller"), "{}", r.body);
        assert_eq!(r.blocks, vec![vec![0], vec![1, 2], vec![3, 4], vec![5]]);
    }

    #[test]
    fn a_torn_last_line_is_recorded_and_the_rest_read() {
        let text = line("u1", None, "user", "", r#"{"type":"text","text":"go"}"#)
            + "\n{\"parentUuid\":\"u1\",\"type\":\"assis";
        let s = Session::parse(text.clone(), "t").expect("parses");
        assert_eq!(s.lines.len(), 1);
        assert_eq!(
            s.torn_tail,
            text.find("\n{\"parentUuid\":\"u1\"").map(|i| i + 1)
        );
    }
}
