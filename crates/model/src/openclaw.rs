//! openclaw sessions: `~/.openclaw/agents/<agent>/sessions/<uuid>.jsonl`, pi-coding-agent's
//! session format, version 3 (session-stores.md §5.1), read line by line.
//!
//! A `session` header (`{type, version, id, timestamp, cwd}`), then entries, each with an `id`
//! and a `parentId` (a tree, like Claude Code's): `model_change {provider, modelId}`,
//! `thinking_level_change`, `custom` (`model-snapshot` with `data.{provider, modelApi,
//! modelId}`, `openclaw:prompt-error`, ...), `custom_message`, `compaction`, and `message`, whose
//! `message` is a `user`, `assistant` or `toolResult {toolCallId, toolName, content, isError}`.
//! An assistant message is one line holding all its blocks: `thinking` (with
//! `thinkingSignature`: base64 from Anthropic, the JSON of the whole reasoning item from OpenAI),
//! `text`, `toolCall {id, name, arguments, partialJson?}`.
//!
//! [`Session::active_branch`] is the conversation openclaw sends: the last entry (the leaf) and
//! its ancestors through `parentId`. [`Session::current_model`] is the model the next request
//! goes to: the latest `model_change` or `model-snapshot` line.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// What went wrong reading a session file as a whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenclawError {
    /// No line of the file is an entry.
    #[error("{origin}: no JSON line with a `type`: not an openclaw session")]
    Empty {
        /// Where the text came from.
        origin: String,
    },
}

/// A line that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// One content block of a message, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The byte range of the block in the text.
    pub span: (usize, usize),
    /// `type` (`thinking`, `text`, `toolCall`, `image`, ...).
    pub kind: String,
    /// `thinkingSignature` (thinking).
    pub signature: Option<String>,
    /// `id` (toolCall).
    pub id: Option<String>,
    /// `name` (toolCall).
    pub name: Option<String>,
    /// `partialJson` (a toolCall's leftover streaming buffer).
    pub partial_json: Option<String>,
}

/// One line of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The 1-based line number.
    pub number: usize,
    /// The byte range of the line, without its newline.
    pub start: usize,
    /// End of the line (exclusive).
    pub end: usize,
    /// `type` (`session`, `message`, `model_change`, ...); `None` for a bad or blank line.
    pub kind: Option<String>,
    /// `id`.
    pub id: Option<String>,
    /// `parentId` (`None` for null or absent).
    pub parent: Option<String>,
    /// `customType` of a `custom` line.
    pub custom_type: Option<String>,
    /// The (provider, model id, api) a `model_change` or `model-snapshot` line sets.
    pub sets_model: Option<(Option<String>, Option<String>, Option<String>)>,
    /// `message.role`.
    pub role: Option<String>,
    /// `message.content` as blocks (an array), with the byte range of the array.
    pub content: Option<(Vec<Block>, (usize, usize))>,
    /// `message.content` is a string.
    pub content_is_text: bool,
    /// `message.toolCallId`.
    pub tool_call_id: Option<String>,
    /// `message.toolName`.
    pub tool_name: Option<String>,
    /// `message.stopReason`.
    pub stop_reason: Option<String>,
    /// `message.provider`.
    pub provider: Option<String>,
    /// `message.api`.
    pub api: Option<String>,
    /// `message.model`.
    pub model: Option<String>,
    /// The byte range of `parentId`'s value.
    pub parent_span: Option<(usize, usize)>,
}

/// A session, read.
#[derive(Debug, Clone)]
pub struct Session {
    /// The text.
    pub text: String,
    /// Every line.
    pub lines: Vec<Line>,
    /// Lines that do not parse.
    pub problems: Vec<LineProblem>,
    /// The index of a last line torn by a crash.
    pub torn_tail: Option<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head<'a> {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default, borrow)]
    parent_id: Option<&'a RawValue>,
    #[serde(default)]
    custom_type: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model_id: Option<String>,
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
    #[serde(default, borrow)]
    message: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model_id: Option<String>,
    #[serde(default)]
    model_api: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Msg<'a> {
    #[serde(default)]
    role: Option<String>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    api: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBlock {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    thinking_signature: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    partial_json: Option<String>,
}

fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize)
}

impl Session {
    /// Reads a session. Bad lines become [`LineProblem`]s.
    ///
    /// # Errors
    /// [`OpenclawError::Empty`] when no line is a JSON object with a `type`.
    pub fn parse(text: String, origin: &str) -> Result<Session, OpenclawError> {
        let mut lines = Vec::new();
        let mut problems = Vec::new();
        let mut torn_tail = None;
        let mut good = 0;
        let mut start = 0;
        let mut number = 0;
        while start < text.len() {
            number += 1;
            let nl = text[start..].find('\n').map(|i| start + i);
            let end = nl.unwrap_or(text.len());
            let raw = &text[start..end];
            let mut line = Line {
                number,
                start,
                end,
                kind: None,
                id: None,
                parent: None,
                custom_type: None,
                sets_model: None,
                role: None,
                content: None,
                content_is_text: false,
                tool_call_id: None,
                tool_name: None,
                stop_reason: None,
                provider: None,
                api: None,
                model: None,
                parent_span: None,
            };
            if !raw.trim().is_empty() {
                match serde_json::from_str::<Head<'_>>(raw.trim_end_matches('\r')) {
                    Ok(h) if h.kind.is_some() => {
                        good += 1;
                        read_head(&mut line, h, raw, start);
                    }
                    Ok(_) => problems.push(LineProblem {
                        line: number,
                        reason: "a JSON line without `type`".to_owned(),
                    }),
                    Err(e) => {
                        if nl.is_none() {
                            torn_tail = Some(lines.len());
                        }
                        problems.push(LineProblem {
                            line: number,
                            reason: e.to_string(),
                        });
                    }
                }
            }
            lines.push(line);
            start = end + 1;
        }
        if good == 0 {
            return Err(OpenclawError::Empty {
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

    /// The bytes of line `i`.
    pub fn line_text(&self, i: usize) -> &str {
        &self.text[self.lines[i].start..self.lines[i].end]
    }

    /// The session id of the first `session` header.
    pub fn id(&self) -> Option<&str> {
        self.lines
            .iter()
            .find(|l| l.kind.as_deref() == Some("session"))
            .and_then(|l| l.id.as_deref())
    }

    /// The active branch, root first: the last entry with an `id` (not a header) and its
    /// ancestors through `parentId`, restricted to lines not in `skip`. A cycle or a parent that
    /// is missing ends the walk.
    pub fn active_branch(&self, skip: &dyn Fn(usize) -> bool) -> Vec<usize> {
        self.active_branch_through(skip, &|_| None)
    }

    /// [`Session::active_branch`], where a line whose parent is missing (or skipped) continues
    /// at `fallback(line)` when that names one: how a repair that re-links such a line sees the
    /// branch. A cycle ends the walk; the walk is linear in the file.
    pub fn active_branch_through(
        &self,
        skip: &dyn Fn(usize) -> bool,
        fallback: &dyn Fn(usize) -> Option<usize>,
    ) -> Vec<usize> {
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        let mut leaf = None;
        for (i, l) in self.lines.iter().enumerate() {
            if skip(i) || l.kind.is_none() || l.kind.as_deref() == Some("session") {
                continue;
            }
            if let Some(id) = &l.id {
                by_id.insert(id, i);
                leaf = Some(i);
            }
        }
        let mut seen = vec![false; self.lines.len()];
        let mut out = Vec::new();
        let mut cur = leaf;
        while let Some(i) = cur {
            if seen[i] {
                break;
            }
            seen[i] = true;
            out.push(i);
            cur = match self.lines[i].parent.as_deref() {
                Some(p) => by_id.get(p).copied().or_else(|| fallback(i)),
                None => None,
            }
            .filter(|&j| !skip(j));
        }
        out.reverse();
        out
    }

    /// The model the next request goes to: (provider, model id, api) of the latest
    /// `model_change` or `model-snapshot` line not in `skip`.
    pub fn current_model(
        &self,
        skip: &dyn Fn(usize) -> bool,
    ) -> Option<(Option<String>, Option<String>, Option<String>)> {
        self.lines
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, l)| (!skip(i)).then(|| l.sets_model.clone()).flatten())
    }
}

fn read_head(line: &mut Line, h: Head<'_>, raw: &str, start: usize) {
    line.kind = h.kind;
    line.id = h.id;
    line.custom_type = h.custom_type;
    if let Some(p) = h.parent_id {
        let at = start + offset_in(raw, p.get());
        line.parent_span = Some((at, at + p.get().len()));
        line.parent = serde_json::from_str::<Option<String>>(p.get())
            .ok()
            .flatten();
    }
    match line.kind.as_deref() {
        Some("model_change") => {
            line.sets_model = Some((h.provider, h.model_id, None));
        }
        Some("custom") if line.custom_type.as_deref() == Some("model-snapshot") => {
            let s: Snapshot = h
                .data
                .and_then(|d| serde_json::from_str(d.get()).ok())
                .unwrap_or_default();
            line.sets_model = Some((s.provider, s.model_id, s.model_api));
        }
        Some("message") => {
            let Some(m) = h
                .message
                .and_then(|m| serde_json::from_str::<Msg<'_>>(m.get()).ok())
            else {
                return;
            };
            line.role = m.role;
            line.tool_call_id = m.tool_call_id;
            line.tool_name = m.tool_name;
            line.stop_reason = m.stop_reason;
            line.provider = m.provider;
            line.api = m.api;
            line.model = m.model;
            if let Some(c) = m.content {
                if c.get().starts_with('"') {
                    line.content_is_text = true;
                } else if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(c.get()) {
                    let at = start + offset_in(raw, c.get());
                    let blocks = items
                        .iter()
                        .map(|b| {
                            let s = start + offset_in(raw, b.get());
                            let rb: Option<RawBlock> = serde_json::from_str(b.get()).ok();
                            let rb = rb.unwrap_or(RawBlock {
                                kind: None,
                                thinking_signature: None,
                                id: None,
                                name: None,
                                partial_json: None,
                            });
                            Block {
                                span: (s, s + b.get().len()),
                                kind: rb.kind.unwrap_or_default(),
                                signature: rb.thinking_signature,
                                id: rb.id,
                                name: rb.name,
                                partial_json: rb.partial_json,
                            }
                        })
                        .collect();
                    line.content = Some((blocks, (at, at + c.get().len())));
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_branch_is_the_leafs_ancestors() -> Result<(), OpenclawError> {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/"}"#,
            "\n",
            r#"{"type":"model_change","id":"a","parentId":null,"provider":"anthropic","modelId":"claude-sonnet-4-5"}"#,
            "\n",
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"hi"}}"#,
            "\n",
            r#"{"type":"message","id":"c","parentId":"b","message":{"role":"assistant","content":[{"type":"text","text":"old"}]}}"#,
            "\n",
            r#"{"type":"message","id":"d","parentId":"b","message":{"role":"assistant","content":[{"type":"thinking","thinking":"x","thinkingSignature":"QUJD"},{"type":"toolCall","id":"t1","name":"ls","arguments":{}}]}}"#,
            "\n",
        );
        let s = Session::parse(text.to_owned(), "test")?;
        assert_eq!(s.active_branch(&|_| false), vec![1, 2, 4]);
        assert_eq!(
            s.current_model(&|_| false),
            Some((
                Some("anthropic".into()),
                Some("claude-sonnet-4-5".into()),
                None
            ))
        );
        let (blocks, _) = s.lines[4].content.clone().unwrap_or_default();
        assert_eq!(blocks[0].signature.as_deref(), Some("QUJD"));
        assert_eq!(blocks[1].id.as_deref(), Some("t1"));
        assert_eq!(s.id(), Some("s1"));
        Ok(())
    }

    #[test]
    fn a_lost_parent_continues_at_the_fallback_and_a_cycle_ends_the_walk()
    -> Result<(), OpenclawError> {
        let text = concat!(
            "{\"type\":\"session\",\"id\":\"s1\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n",
            "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\"}\n",
            "{\"type\":\"message\",\"id\":\"d\",\"parentId\":\"gone\"}\n",
            "{\"type\":\"message\",\"id\":\"x\",\"parentId\":\"y\"}\n",
            "{\"type\":\"message\",\"id\":\"y\",\"parentId\":\"x\"}\n",
        );
        let s = Session::parse(text.to_owned(), "test")?;
        assert_eq!(s.active_branch(&|_| false), vec![4, 5]);
        let before_y = |i: usize| (i == 5).then_some(3);
        assert_eq!(s.active_branch_through(&|i| i == 4, &before_y), vec![3, 5]);
        let skip_cycle = |i: usize| i >= 4;
        assert_eq!(s.active_branch(&skip_cycle), vec![3]);
        let before_d = |i: usize| (i == 3).then_some(2);
        assert_eq!(
            s.active_branch_through(&skip_cycle, &before_d),
            vec![1, 2, 3]
        );
        Ok(())
    }
}
