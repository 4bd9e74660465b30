//! Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`, read line by
//! line, and the Responses request a resume sends (session-stores.md §6.1).
//!
//! Every line is `{timestamp, type, payload}`: `session_meta` (the session's `id`,
//! `model_provider`, `forked_from_id`, ...), `turn_context` (the `model` of the turn),
//! `response_item` (the replayed history: messages, reasoning, function calls and their
//! outputs), `event_msg` (what the UI shows, never replayed) and `compacted` (a summary that
//! replaces what came before, with its `replacement_history` when it has one).
//!
//! [`Rollout::to_request`] writes the history as a Responses body, `{"model", "store": false,
//! "input": [...]}` (Codex is stateless: reasoning goes inline with its `encrypted_content`),
//! every item the bytes of its line's `payload`, and records which line each item came from.
//! A line that does not parse is a [`LineProblem`]: torn by a crash (the last line, without its
//! newline), or two writers' records interleaved on one line (openai/codex#24425).

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::json::write_string;

/// What went wrong reading a rollout as a whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodexError {
    /// No line of the file is a rollout line.
    #[error("{origin}: no rollout line (`{{timestamp, type, payload}}`): not a Codex rollout")]
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
    /// True when the line looks like two records written into each other (a second
    /// `{"timestamp"` inside it).
    pub interleaved: bool,
}

/// What a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineKind {
    /// `session_meta`.
    SessionMeta,
    /// `turn_context`.
    TurnContext,
    /// `response_item`: history.
    ResponseItem,
    /// `event_msg`: shown, never replayed.
    EventMsg,
    /// `compacted`.
    Compacted,
    /// Any other type.
    Other,
    /// A line that does not parse (see [`Rollout::problems`]), or a blank one.
    Bad,
}

/// One line of a rollout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The 1-based line number.
    pub number: usize,
    /// The byte range of the line in the text, without its newline.
    pub start: usize,
    /// End of the line (exclusive), without its newline.
    pub end: usize,
    /// What the line is.
    pub kind: LineKind,
    /// The byte range of the `payload` value, in the text.
    pub payload: Option<(usize, usize)>,
    /// `payload.type` (`message`, `reasoning`, `function_call`, `error`, ...).
    pub item_type: Option<String>,
    /// `payload.role` of a message.
    pub role: Option<String>,
    /// `payload.call_id`.
    pub call_id: Option<String>,
    /// `payload.name` (a call's).
    pub name: Option<String>,
    /// `payload.message` of an `event_msg` (an error's text).
    pub event_message: Option<String>,
}

/// The session's own description, from its first `session_meta` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// The session id (a UUID).
    pub id: Option<String>,
    /// `model_provider` (`openai`, `ollama-launch`, `azure`, ...).
    pub model_provider: Option<String>,
    /// `forked_from_id`.
    pub forked_from_id: Option<String>,
    /// `cli_version`.
    pub cli_version: Option<String>,
    /// `cwd`.
    pub cwd: Option<String>,
}

/// A rollout, read.
#[derive(Debug, Clone)]
pub struct Rollout {
    /// The text.
    pub text: String,
    /// Every line, in order (blank lines included, as [`LineKind::Bad`] without a problem).
    pub lines: Vec<Line>,
    /// The lines that do not parse.
    pub problems: Vec<LineProblem>,
    /// The index (into `lines`) of a last line torn by a crash: no newline, does not parse.
    pub torn_tail: Option<usize>,
    /// The first `session_meta`.
    pub meta: Meta,
    /// The `model` of the last `turn_context`.
    pub model: Option<String>,
    /// Items of a `compacted` line's `replacement_history`: (line index, byte range).
    pub replacement: Vec<(usize, (usize, usize))>,
    /// The index of the last `compacted` line: history before it is not replayed.
    pub compacted_at: Option<usize>,
}

#[derive(Deserialize)]
struct RawLine<'a> {
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct Payload {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model_provider: Option<String>,
    #[serde(default)]
    forked_from_id: Option<String>,
    #[serde(default)]
    cli_version: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct Compacted<'a> {
    #[serde(default, borrow)]
    replacement_history: Option<Vec<&'a RawValue>>,
}

/// The byte offset of `inner` (a slice of `outer`) in `outer`.
fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize)
}

impl Rollout {
    /// Reads a rollout. Bad lines become [`LineProblem`]s; only a text with no rollout line at
    /// all is an error.
    ///
    /// # Errors
    /// [`CodexError::Empty`] when no line is `{type, payload}`.
    pub fn parse(text: String, origin: &str) -> Result<Rollout, CodexError> {
        let mut lines = Vec::new();
        let mut problems = Vec::new();
        let mut meta: Option<Meta> = None;
        let mut model = None;
        let mut replacement = Vec::new();
        let mut compacted_at = None;
        let mut torn_tail = None;
        let mut good = 0usize;
        let mut start = 0usize;
        let mut number = 0usize;
        while start < text.len() {
            number += 1;
            let nl = text[start..].find('\n').map(|i| start + i);
            let end = nl.unwrap_or(text.len());
            let raw = text[start..end].trim_end_matches('\r');
            let mut line = Line {
                number,
                start,
                end,
                kind: LineKind::Bad,
                payload: None,
                item_type: None,
                role: None,
                call_id: None,
                name: None,
                event_message: None,
            };
            if !raw.trim().is_empty() {
                match serde_json::from_str::<RawLine<'_>>(raw) {
                    Ok(r) if r.kind.is_some() => {
                        good += 1;
                        line.kind = match r.kind.unwrap_or_default() {
                            "session_meta" => LineKind::SessionMeta,
                            "turn_context" => LineKind::TurnContext,
                            "response_item" => LineKind::ResponseItem,
                            "event_msg" => LineKind::EventMsg,
                            "compacted" => LineKind::Compacted,
                            _ => LineKind::Other,
                        };
                        if let Some(p) = r.payload {
                            let at = start + offset_in(raw, p.get());
                            line.payload = Some((at, at + p.get().len()));
                            let head: Payload = serde_json::from_str(p.get()).unwrap_or_default();
                            match line.kind {
                                LineKind::SessionMeta if meta.is_none() => {
                                    meta = Some(Meta {
                                        id: head.id.clone(),
                                        model_provider: head.model_provider.clone(),
                                        forked_from_id: head.forked_from_id.clone(),
                                        cli_version: head.cli_version.clone(),
                                        cwd: head.cwd.clone(),
                                    });
                                }
                                LineKind::TurnContext if head.model.is_some() => {
                                    model.clone_from(&head.model);
                                }
                                LineKind::Compacted => {
                                    let idx = lines.len();
                                    compacted_at = Some(idx);
                                    replacement.clear();
                                    if let Ok(c) = serde_json::from_str::<Compacted<'_>>(p.get()) {
                                        for it in c
                                            .replacement_history
                                            .unwrap_or_default()
                                            .into_iter()
                                            .filter(|it| it.get().starts_with('{'))
                                        {
                                            let at = start + offset_in(raw, it.get());
                                            replacement.push((idx, (at, at + it.get().len())));
                                        }
                                    }
                                }
                                _ => {}
                            }
                            line.item_type = head.kind;
                            line.role = head.role;
                            line.call_id = head.call_id;
                            line.name = head.name;
                            line.event_message = head.message;
                        }
                    }
                    Ok(_) => problems.push(LineProblem {
                        line: number,
                        reason: "a JSON line without `type`".to_owned(),
                        interleaved: false,
                    }),
                    Err(e) => {
                        let interleaved = raw.match_indices("{\"timestamp\"").count() > 1
                            || (raw.match_indices("\"timestamp\"").count() > 1);
                        if nl.is_none() {
                            torn_tail = Some(lines.len());
                        }
                        problems.push(LineProblem {
                            line: number,
                            reason: e.to_string(),
                            interleaved,
                        });
                    }
                }
            }
            lines.push(line);
            start = end + 1;
        }
        if good == 0 {
            return Err(CodexError::Empty {
                origin: origin.to_owned(),
            });
        }
        Ok(Rollout {
            text,
            lines,
            problems,
            torn_tail,
            meta: meta.unwrap_or_default(),
            model,
            replacement,
            compacted_at,
        })
    }

    /// The bytes of line `i` (without its newline).
    pub fn line_text(&self, i: usize) -> &str {
        let l = &self.lines[i];
        &self.text[l.start..l.end]
    }

    /// The history a resume replays, in order: for each item, the line it is on and the byte
    /// range of its JSON (a `compacted` line's replacement history, then the `response_item`
    /// lines after it).
    pub fn history(&self) -> Vec<(usize, (usize, usize))> {
        let mut out = self.replacement.clone();
        let from = self.compacted_at.map_or(0, |c| c + 1);
        for (i, l) in self.lines.iter().enumerate().skip(from) {
            if l.kind == LineKind::ResponseItem
                && let Some(p) = l.payload
                && self.text[p.0..p.1].starts_with('{')
            {
                out.push((i, p));
            }
        }
        out
    }

    /// The Responses body a resume sends for `model` (none: the rollout's own): `{"model",
    /// "store": false, "input": [...]}`, each item its stored bytes; and, per item, its line.
    pub fn to_request(&self, model: Option<&str>) -> Request {
        let history = self.history();
        let mut body = String::with_capacity(self.text.len() / 2 + 64);
        body.push('{');
        if let Some(m) = model.or(self.model.as_deref()) {
            body.push_str("\"model\":");
            write_string(&mut body, m);
            body.push(',');
        }
        body.push_str("\"store\":false,\"input\":[");
        let mut lines = Vec::with_capacity(history.len());
        for (k, (line, (a, b))) in history.iter().enumerate() {
            if k > 0 {
                body.push(',');
            }
            body.push_str(&self.text[*a..*b]);
            lines.push(*line);
        }
        body.push_str("]}");
        Request { body, lines }
    }
}

/// The request a resume sends, and where its items come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The Responses body.
    pub body: String,
    /// For item `i` of `input`, the index of its line in [`Rollout::lines`].
    pub lines: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_the_response_items_and_a_torn_tail_is_told() -> Result<(), CodexError> {
        let text = concat!(
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"abc","model_provider":"openai"}}"#,
            "\n",
            r#"{"timestamp":"t","type":"turn_context","payload":{"model":"gpt-5.4"}}"#,
            "\n",
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#,
            "\n",
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count"}}"#,
            "\n",
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}"#,
            "\n",
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_"#,
        );
        let r = Rollout::parse(text.to_owned(), "test")?;
        assert_eq!(r.meta.id.as_deref(), Some("abc"));
        assert_eq!(r.model.as_deref(), Some("gpt-5.4"));
        assert_eq!(r.torn_tail, Some(5));
        assert_eq!(r.problems.len(), 1);
        let req = r.to_request(None);
        assert_eq!(
            req.body,
            r#"{"model":"gpt-5.4","store":false,"input":[{"type":"message","role":"user","content":[]},{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}]}"#
        );
        assert_eq!(req.lines, vec![2, 4]);
        assert_eq!(r.lines[4].call_id.as_deref(), Some("c1"));
        assert!(Rollout::parse("nothing\n".into(), "x").is_err());
        Ok(())
    }
}
