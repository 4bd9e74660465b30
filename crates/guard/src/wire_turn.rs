//! The wire families' turns: the reasoning an OpenAI Chat, OpenAI Responses, Bedrock Converse or
//! Gemini `generateContent` response carried, kept as the provider sent it so a later request that lost it can get it
//! back (api-rules-reasoning-2026-11.md §10.2: "the raw reasoning fields verbatim ... This
//! includes empty strings: store `""`, not absent").
//!
//! A [`WireTurn`] holds one JSON text in the shape the family's request reader takes for one
//! item: Chat, the assistant message object (`choices[0].message`); Responses, the `output`
//! array; Converse, the assistant message (`output.message`); Gemini, the first candidate's
//! `content` (its `functionCall` parts' `thoughtSignature`s are what it gives back, found as
//! [`GeminiRecord`] says). A JSON response's text is its
//! bytes as they arrived; a stream's is assembled from its events (Chat: `delta.content`,
//! `delta.reasoning_content`, `delta.reasoning`, `delta.reasoning_details`, `delta.tool_calls`;
//! Responses: `response.completed`'s `output`, else each `response.output_item.done` item;
//! Gemini: candidate 0's parts, chunk after chunk). A stream that did not finish (no
//! `finish_reason`, no `response.completed`, no Gemini `finishReason`, an error event)
//! records nothing: a truncated reasoning text restored later would be one the provider never
//! sent.

use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use turnkeeper_model::json::write_string;

use crate::store::StoreError;

/// Which API a response came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WireFamily {
    /// Anthropic Messages (kept as a [`crate::StoredTurn`]).
    Anthropic,
    /// OpenAI Chat Completions and its compatible vendors.
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Bedrock Converse.
    Converse,
    /// Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
}

impl WireFamily {
    /// The family's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            WireFamily::Anthropic => "Anthropic Messages",
            WireFamily::Chat => "Chat Completions",
            WireFamily::Responses => "Responses",
            WireFamily::Converse => "Converse",
            WireFamily::Gemini => "Gemini generateContent",
        }
    }
}

/// One stored turn of a wire family.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WireTurn {
    /// The family.
    pub family: WireFamily,
    /// The response id (`chatcmpl-…`, `resp_…`), when known.
    pub response_id: Option<String>,
    /// The model that produced it.
    pub model: Option<String>,
    /// Chat and Converse: the assistant message object; Responses: the `output` array; Gemini:
    /// the first candidate's `content` (`{"parts":[...],"role":"model"}`). JSON text as the
    /// provider sent it (a stream: assembled).
    pub raw: String,
}

/// What a stored Chat turn carries, each value as JSON text as the provider sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatRecord {
    /// `reasoning_content` (a JSON string; `""` kept), when the response had one.
    pub reasoning_content: Option<String>,
    /// `reasoning`, when not null.
    pub reasoning: Option<String>,
    /// `reasoning_details`, when not null.
    pub reasoning_details: Option<String>,
    /// The tool calls, in order.
    pub calls: Vec<ChatCallRecord>,
    /// The hash of the trimmed `content` string, when it is not blank.
    pub text: Option<String>,
}

/// A tool call of a stored Chat turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatCallRecord {
    /// `id`.
    pub id: String,
    /// `extra_content` (Gemini's `{"google":{"thought_signature":…}}`), JSON text.
    pub extra_content: Option<String>,
    /// `extra_content.google.thought_signature`, JSON text (a string).
    pub thought_signature: Option<String>,
}

/// One output item of a stored Responses turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponsesItem {
    /// The item's JSON text, as the provider sent it.
    pub raw: String,
    /// `type`.
    pub kind: String,
    /// `id`.
    pub id: Option<String>,
    /// `call_id`.
    pub call_id: Option<String>,
}

/// What a stored Converse turn carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConverseRecord {
    /// Each content block, JSON text, in order.
    pub blocks: Vec<String>,
    /// The indexes of the `reasoningContent` blocks.
    pub reasoning: Vec<usize>,
    /// The `toolUse.toolUseId`s.
    pub tool_ids: Vec<String>,
}

/// A stored wire turn, read: what lookups use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireRecord {
    /// A Chat assistant message.
    Chat(ChatRecord),
    /// A Responses output.
    Responses(Vec<ResponsesItem>),
    /// A Converse assistant message.
    Converse(ConverseRecord),
    /// A Gemini model content.
    Gemini(GeminiRecord),
}

impl ResponsesItemsExt for [ResponsesItem] {
    fn reasoning_before(&self, key: &str) -> Option<&ResponsesItem> {
        let at = self
            .iter()
            .position(|it| it.call_id.as_deref() == Some(key) || it.id.as_deref() == Some(key))?;
        let prev = self.get(at.checked_sub(1)?)?;
        (prev.kind == "reasoning" && self[at].kind != "reasoning").then_some(prev)
    }
}

/// Lookups over a Responses output.
pub trait ResponsesItemsExt {
    /// The reasoning item immediately before the item whose `call_id` or `id` is `key`, when
    /// that item is not itself reasoning.
    fn reasoning_before(&self, key: &str) -> Option<&ResponsesItem>;
}

/// The hash a turn's visible text is found by (32 hex digits of SHA-256 of the trimmed text).
pub fn text_key(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let h = Sha256::digest(t.as_bytes());
    Some(crate::ledger::hex(h.get(..16).unwrap_or_default()))
}

impl WireTurn {
    /// The turn's name: a fingerprint of its family and its text (the name of its file in a
    /// store directory, and its key in a shared store).
    pub fn fingerprint(&self) -> String {
        crate::ledger::fingerprint(&format!("{}\n{}", self.family.name(), self.raw))
    }

    /// Reads [`WireTurn::raw`].
    ///
    /// # Errors
    /// [`StoreError::NotAResponse`] when it does not parse as its family's shape.
    pub fn record(&self) -> Result<WireRecord, StoreError> {
        let bad = |e: serde_json::Error| {
            StoreError::NotAResponse(format!("a stored {} turn: {e}", self.family.name()))
        };
        match self.family {
            WireFamily::Chat => chat_record(&self.raw).map(WireRecord::Chat).map_err(bad),
            WireFamily::Responses => responses_record(&self.raw)
                .map(WireRecord::Responses)
                .map_err(bad),
            WireFamily::Converse => converse_record(&self.raw)
                .map(WireRecord::Converse)
                .map_err(bad),
            WireFamily::Gemini => gemini_record(&self.raw)
                .map(WireRecord::Gemini)
                .map_err(bad),
            WireFamily::Anthropic => Err(StoreError::NotAResponse(
                "an Anthropic turn is a StoredTurn".to_owned(),
            )),
        }
    }

    /// The keys this turn is found by, namespaced by family (`chat:call:<id>`,
    /// `chat:text:<hash>`, `responses:id:<id>`, `responses:call:<call_id>`,
    /// `converse:tool:<id>`, `gemini:id:<id>`, `gemini:call:<hash>`, see [`gemini_call_keys`]).
    /// Text keys are the ones a store drops when two turns share them; a Gemini key, when two
    /// turns hold different signatures under it.
    pub fn keys(record: &WireRecord) -> Vec<String> {
        let mut k = Vec::new();
        match record {
            WireRecord::Chat(c) => {
                for call in &c.calls {
                    k.push(format!("chat:call:{}", call.id));
                }
                if c.calls.is_empty()
                    && let Some(t) = &c.text
                {
                    k.push(format!("chat:text:{t}"));
                }
            }
            WireRecord::Responses(items) => {
                for it in items {
                    if let Some(id) = &it.id {
                        k.push(format!("responses:id:{id}"));
                    }
                    if let Some(c) = &it.call_id {
                        k.push(format!("responses:call:{c}"));
                    }
                }
            }
            WireRecord::Converse(c) => {
                for id in &c.tool_ids {
                    k.push(format!("converse:tool:{id}"));
                }
            }
            WireRecord::Gemini(g) => {
                for call in g.calls.iter().filter(|c| c.thought_signature.is_some()) {
                    let key = call.key();
                    if !k.contains(&key) {
                        k.push(key);
                    }
                }
            }
        }
        k
    }

    /// The turn a response body of `family` carries (JSON or a complete stream).
    ///
    /// # Errors
    /// [`StoreError::NotAResponse`] when `body` is not a whole response of that family.
    pub fn from_response(body: &str, family: WireFamily) -> Result<WireTurn, StoreError> {
        let sse = looks_like_stream(body);
        let turn = match (family, sse) {
            (WireFamily::Chat, false) => chat_json(body),
            (WireFamily::Chat, true) => chat_stream(body),
            (WireFamily::Responses, false) => responses_json(body),
            (WireFamily::Responses, true) => responses_stream(body),
            (WireFamily::Converse, false) => converse_json(body),
            (WireFamily::Converse, true) => Err(StoreError::NotAResponse(
                "a ConverseStream is a binary event stream; record the assembled Converse response"
                    .to_owned(),
            )),
            (WireFamily::Gemini, false) => gemini_json(body),
            (WireFamily::Gemini, true) => gemini_stream(body),
            (WireFamily::Anthropic, _) => Err(StoreError::NotAResponse(
                "an Anthropic response is a StoredTurn".to_owned(),
            )),
        }?;
        // What is stored must read back.
        turn.record()?;
        Ok(turn)
    }
}

/// True when `body` is an event stream: its first line that is neither blank nor an SSE comment
/// (`: OPENROUTER PROCESSING`) starts with `event:` or `data:`.
pub fn looks_like_stream(body: &str) -> bool {
    body.lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with(':'))
        .is_some_and(|l| l.starts_with("event:") || l.starts_with("data:"))
}

fn not(msg: impl Into<String>) -> StoreError {
    StoreError::NotAResponse(msg.into())
}

/// The family of a response body: Anthropic Messages, Chat, Responses, Converse or Gemini, as
/// JSON or as an event stream (Gemini also as the JSON array `streamGenerateContent` sends
/// without `alt=sse`). `None` when it is none of them.
pub fn response_family(body: &str) -> Option<WireFamily> {
    if looks_like_stream(body) {
        for line in body.lines() {
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let data = data.trim();
            #[derive(Deserialize)]
            struct Ev {
                #[serde(rename = "type")]
                kind: Option<String>,
                choices: Option<serde::de::IgnoredAny>,
                object: Option<String>,
                candidates: Option<serde::de::IgnoredAny>,
            }
            let Ok(ev) = serde_json::from_str::<Ev>(data) else {
                continue;
            };
            if ev.candidates.is_some() {
                return Some(WireFamily::Gemini);
            }
            if ev.choices.is_some() || ev.object.as_deref() == Some("chat.completion.chunk") {
                return Some(WireFamily::Chat);
            }
            match ev.kind.as_deref() {
                Some(t) if t.starts_with("response.") => return Some(WireFamily::Responses),
                Some("message_start" | "content_block_start" | "message_stop") => {
                    return Some(WireFamily::Anthropic);
                }
                _ => {}
            }
        }
        return None;
    }
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(rename = "type")]
        kind: Option<String>,
        object: Option<String>,
        choices: Option<serde::de::IgnoredAny>,
        #[serde(borrow)]
        output: Option<&'a RawValue>,
        candidates: Option<serde::de::IgnoredAny>,
    }
    if body.trim_start().starts_with('[') {
        // `streamGenerateContent` without `alt=sse`: a JSON array of Gemini chunks.
        let chunks: Vec<&RawValue> = serde_json::from_str(body).ok()?;
        let first: Top<'_> = serde_json::from_str(chunks.first()?.get()).ok()?;
        return first.candidates.is_some().then_some(WireFamily::Gemini);
    }
    let top: Top<'_> = serde_json::from_str(body).ok()?;
    if top.candidates.is_some() {
        return Some(WireFamily::Gemini);
    }
    if top.choices.is_some() {
        return Some(WireFamily::Chat);
    }
    if let Some(out) = top.output {
        let t = out.get().trim_start();
        if t.starts_with('[') || top.object.as_deref() == Some("response") {
            return Some(WireFamily::Responses);
        }
        if t.starts_with('{') {
            return Some(WireFamily::Converse);
        }
    }
    (top.kind.as_deref() == Some("message")).then_some(WireFamily::Anthropic)
}

// ---- Chat -------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct ChatMsg<'a> {
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    reasoning_content: Option<&'a RawValue>,
    #[serde(borrow)]
    reasoning: Option<&'a RawValue>,
    #[serde(borrow)]
    reasoning_details: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ChatCall<'a>>>,
}

#[derive(Deserialize)]
struct ChatCall<'a> {
    id: Option<String>,
    #[serde(borrow)]
    extra_content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Extra<'a> {
    #[serde(borrow)]
    google: Option<Google<'a>>,
}

#[derive(Deserialize)]
struct Google<'a> {
    #[serde(borrow)]
    thought_signature: Option<&'a RawValue>,
}

fn non_null(v: Option<&RawValue>) -> Option<String> {
    v.map(RawValue::get)
        .filter(|s| *s != "null")
        .map(str::to_owned)
}

fn chat_record(raw: &str) -> Result<ChatRecord, serde_json::Error> {
    let m: ChatMsg<'_> = serde_json::from_str(raw)?;
    let text = m
        .content
        .and_then(|c| serde_json::from_str::<String>(c.get()).ok())
        .and_then(|t| text_key(&t));
    let calls = m
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .filter_map(|c| {
            let id = c.id?;
            let sig = c
                .extra_content
                .and_then(|e| serde_json::from_str::<Extra<'_>>(e.get()).ok())
                .and_then(|e| e.google)
                .and_then(|g| non_null(g.thought_signature));
            Some(ChatCallRecord {
                id,
                extra_content: non_null(c.extra_content),
                thought_signature: sig,
            })
        })
        .collect();
    let reasoning_content = m
        .reasoning_content
        .map(RawValue::get)
        .filter(|s| s.starts_with('"'))
        .map(str::to_owned);
    Ok(ChatRecord {
        reasoning_content,
        reasoning: non_null(m.reasoning),
        reasoning_details: non_null(m.reasoning_details),
        calls,
        text,
    })
}

fn chat_json(body: &str) -> Result<WireTurn, StoreError> {
    #[derive(Deserialize)]
    struct Resp<'a> {
        id: Option<String>,
        model: Option<String>,
        #[serde(borrow)]
        choices: Vec<Choice<'a>>,
    }
    #[derive(Deserialize)]
    struct Choice<'a> {
        index: Option<u64>,
        #[serde(borrow)]
        message: Option<&'a RawValue>,
    }
    let r: Resp<'_> = serde_json::from_str(body).map_err(|e| not(e.to_string()))?;
    let msg = r
        .choices
        .iter()
        .find(|c| c.index.unwrap_or(0) == 0)
        .and_then(|c| c.message)
        .ok_or_else(|| not("a Chat response without choices[0].message"))?;
    Ok(WireTurn {
        family: WireFamily::Chat,
        response_id: r.id,
        model: r.model,
        raw: msg.get().to_owned(),
    })
}

/// A Chat tool call being assembled from stream deltas.
#[derive(Default)]
struct OpenCall {
    id: Option<String>,
    name: String,
    arguments: String,
    extra_content: Option<String>,
}

/// A `reasoning_details` entry being assembled: its first object, the string fields appended.
struct OpenDetail {
    index: Option<u64>,
    obj: serde_json::Map<String, serde_json::Value>,
}

fn chat_stream(body: &str) -> Result<WireTurn, StoreError> {
    let mut id = None;
    let mut model = None;
    let mut content: Option<String> = None;
    let mut reasoning_content: Option<String> = None;
    let mut reasoning: Option<String> = None;
    let mut details: Vec<OpenDetail> = Vec::new();
    let mut calls: std::collections::BTreeMap<u64, OpenCall> = Default::default();
    let mut finished = false;
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
            tracing::debug!(line = data, "skipping a data line that is not JSON");
            continue;
        };
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(not(format!("the stream ended with an error: {data}")));
        }
        if id.is_none() {
            id = v.get("id").and_then(|s| s.as_str()).map(str::to_owned);
        }
        if model.is_none() {
            model = v.get("model").and_then(|s| s.as_str()).map(str::to_owned);
        }
        let Some(choices) = v.get("choices").and_then(|c| c.as_array()) else {
            continue;
        };
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(|i| i.as_u64()).unwrap_or(0) == 0)
        else {
            continue;
        };
        if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
            finished = true;
        }
        let Some(d) = choice.get("delta") else {
            continue;
        };
        let append = |slot: &mut Option<String>, key: &str| {
            if let Some(s) = d.get(key).and_then(|s| s.as_str()) {
                slot.get_or_insert_with(String::new).push_str(s);
            }
        };
        append(&mut content, "content");
        append(&mut reasoning_content, "reasoning_content");
        append(&mut reasoning, "reasoning");
        if let Some(ds) = d.get("reasoning_details").and_then(|x| x.as_array()) {
            for x in ds {
                let Some(obj) = x.as_object() else { continue };
                let index = obj.get("index").and_then(|i| i.as_u64());
                match details
                    .iter_mut()
                    .find(|o| index.is_some() && o.index == index)
                {
                    Some(open) => {
                        for (k, val) in obj {
                            match (open.obj.get_mut(k), val) {
                                (
                                    Some(serde_json::Value::String(have)),
                                    serde_json::Value::String(more),
                                ) if k != "type" && k != "format" && k != "id" => {
                                    have.push_str(more);
                                }
                                (None, _) => {
                                    open.obj.insert(k.clone(), val.clone());
                                }
                                _ => {}
                            }
                        }
                    }
                    None => details.push(OpenDetail {
                        index,
                        obj: obj.clone(),
                    }),
                }
            }
        }
        if let Some(tc) = d.get("tool_calls").and_then(|x| x.as_array()) {
            for (n, c) in tc.iter().enumerate() {
                let idx = c.get("index").and_then(|i| i.as_u64()).unwrap_or(n as u64);
                let open = calls.entry(idx).or_default();
                if let Some(i) = c.get("id").and_then(|s| s.as_str()) {
                    open.id.get_or_insert_with(|| i.to_owned());
                }
                if let Some(f) = c.get("function") {
                    if let Some(nm) = f.get("name").and_then(|s| s.as_str()) {
                        open.name.push_str(nm);
                    }
                    if let Some(a) = f.get("arguments").and_then(|s| s.as_str()) {
                        open.arguments.push_str(a);
                    }
                }
                if let Some(e) = c.get("extra_content").filter(|e| !e.is_null()) {
                    open.extra_content = Some(e.to_string());
                }
            }
        }
    }
    if !finished {
        return Err(not(
            "the stream ended before a finish_reason: a stream cut short is not a turn",
        ));
    }
    let mut raw = String::from("{\"role\":\"assistant\",\"content\":");
    match &content {
        Some(c) => write_string(&mut raw, c),
        None => raw.push_str("null"),
    }
    for (key, val) in [
        ("reasoning_content", &reasoning_content),
        ("reasoning", &reasoning),
    ] {
        if let Some(v) = val {
            raw.push(',');
            write_string(&mut raw, key);
            raw.push(':');
            write_string(&mut raw, v);
        }
    }
    if !details.is_empty() {
        let arr: Vec<serde_json::Value> = details
            .into_iter()
            .map(|d| serde_json::Value::Object(d.obj))
            .collect();
        raw.push_str(",\"reasoning_details\":");
        raw.push_str(&serde_json::Value::Array(arr).to_string());
    }
    if !calls.is_empty() {
        raw.push_str(",\"tool_calls\":[");
        for (n, c) in calls.values().enumerate() {
            if n > 0 {
                raw.push(',');
            }
            raw.push_str("{\"id\":");
            write_string(&mut raw, c.id.as_deref().unwrap_or(""));
            raw.push_str(",\"type\":\"function\",\"function\":{\"name\":");
            write_string(&mut raw, &c.name);
            raw.push_str(",\"arguments\":");
            write_string(&mut raw, &c.arguments);
            raw.push('}');
            if let Some(e) = &c.extra_content {
                raw.push_str(",\"extra_content\":");
                raw.push_str(e);
            }
            raw.push('}');
        }
        raw.push(']');
    }
    raw.push('}');
    Ok(WireTurn {
        family: WireFamily::Chat,
        response_id: id,
        model,
        raw,
    })
}

// ---- Responses --------------------------------------------------------------------------------

#[derive(Deserialize)]
struct ItemHead {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    call_id: Option<String>,
}

fn responses_record(raw: &str) -> Result<Vec<ResponsesItem>, serde_json::Error> {
    let items: Vec<&RawValue> = serde_json::from_str(raw)?;
    items
        .into_iter()
        .map(|it| {
            let h: ItemHead = serde_json::from_str(it.get())?;
            Ok(ResponsesItem {
                raw: it.get().to_owned(),
                kind: h.kind.unwrap_or_default(),
                id: h.id,
                call_id: h.call_id,
            })
        })
        .collect()
}

fn responses_json(body: &str) -> Result<WireTurn, StoreError> {
    #[derive(Deserialize)]
    struct Resp<'a> {
        id: Option<String>,
        model: Option<String>,
        status: Option<String>,
        #[serde(borrow)]
        output: &'a RawValue,
    }
    let r: Resp<'_> = serde_json::from_str(body).map_err(|e| not(e.to_string()))?;
    if let Some(s) = r.status.as_deref().filter(|s| *s != "completed") {
        return Err(not(format!(
            "a response with status {s:?}: only a completed response is a turn"
        )));
    }
    Ok(WireTurn {
        family: WireFamily::Responses,
        response_id: r.id,
        model: r.model,
        raw: r.output.get().to_owned(),
    })
}

fn responses_stream(body: &str) -> Result<WireTurn, StoreError> {
    #[derive(Deserialize)]
    struct Ev<'a> {
        #[serde(rename = "type")]
        kind: Option<String>,
        output_index: Option<u64>,
        #[serde(borrow)]
        item: Option<&'a RawValue>,
        #[serde(borrow)]
        response: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Resp<'a> {
        id: Option<String>,
        model: Option<String>,
        #[serde(borrow)]
        output: Option<&'a RawValue>,
    }
    let mut done: std::collections::BTreeMap<u64, String> = Default::default();
    let mut completed: Option<(Option<String>, Option<String>, Option<String>)> = None;
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        let Ok(ev) = serde_json::from_str::<Ev<'_>>(data) else {
            continue;
        };
        match ev.kind.as_deref() {
            Some("response.output_item.done") => {
                if let (Some(i), Some(item)) = (ev.output_index, ev.item) {
                    done.insert(i, item.get().to_owned());
                }
            }
            Some("response.completed") => {
                let r = ev
                    .response
                    .and_then(|r| serde_json::from_str::<Resp<'_>>(r.get()).ok());
                completed = Some(match r {
                    Some(r) => (r.id, r.model, r.output.map(|o| o.get().to_owned())),
                    None => (None, None, None),
                });
            }
            Some("response.failed" | "response.incomplete" | "error") => {
                return Err(not(format!("the stream ended with {data}")));
            }
            _ => {}
        }
    }
    let Some((id, model, output)) = completed else {
        return Err(not(
            "the stream ended before `response.completed`: a stream cut short is not a turn",
        ));
    };
    let raw = match output.filter(|o| o.trim() != "[]") {
        Some(o) => o,
        None => format!("[{}]", done.into_values().collect::<Vec<_>>().join(",")),
    };
    Ok(WireTurn {
        family: WireFamily::Responses,
        response_id: id,
        model,
        raw,
    })
}

// ---- Converse ---------------------------------------------------------------------------------

fn converse_record(raw: &str) -> Result<ConverseRecord, serde_json::Error> {
    #[derive(Deserialize)]
    struct Msg<'a> {
        #[serde(borrow)]
        content: Vec<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Block {
        #[serde(rename = "reasoningContent")]
        reasoning: Option<serde::de::IgnoredAny>,
        #[serde(rename = "toolUse")]
        tool_use: Option<ToolUse>,
    }
    #[derive(Deserialize)]
    struct ToolUse {
        #[serde(rename = "toolUseId")]
        id: Option<String>,
    }
    let m: Msg<'_> = serde_json::from_str(raw)?;
    let mut rec = ConverseRecord::default();
    for (n, b) in m.content.iter().enumerate() {
        let h: Block = serde_json::from_str(b.get())?;
        if h.reasoning.is_some() {
            rec.reasoning.push(n);
        }
        if let Some(id) = h.tool_use.and_then(|t| t.id) {
            rec.tool_ids.push(id);
        }
        rec.blocks.push(b.get().to_owned());
    }
    Ok(rec)
}

fn converse_json(body: &str) -> Result<WireTurn, StoreError> {
    #[derive(Deserialize)]
    struct Resp<'a> {
        #[serde(borrow)]
        output: Out<'a>,
    }
    #[derive(Deserialize)]
    struct Out<'a> {
        #[serde(borrow)]
        message: &'a RawValue,
    }
    let r: Resp<'_> = serde_json::from_str(body).map_err(|e| not(e.to_string()))?;
    Ok(WireTurn {
        family: WireFamily::Converse,
        response_id: None,
        model: None,
        raw: r.output.message.get().to_owned(),
    })
}

// ---- Gemini -----------------------------------------------------------------------------------

/// What a stored Gemini turn carries: its `functionCall` parts, in order.
///
/// **How a call is found again (the key).** A later request is matched to a recorded call by
/// what survives a client's round trip, decided from the recorded traffic in
/// `real-traffic/gemini/`:
///
/// - Gemini 3 responses give each `functionCall` an `id` (`"1wzw08fx"`), and clients that got
///   one send it back unchanged (fantasy, pydantic-ai): a recorded call with an `id` is found by
///   that id only (`gemini:id:<id>`). It is not also filed under its name and arguments: a
///   request call with another id is another call, and the same name and arguments recur from
///   turn to turn (`generate_topic({})` four times in one pydantic-ai session, each with its own
///   signature).
/// - Responses without ids (Gemini 2.5, and some Gemini 3 traffic) leave clients to send no id
///   (mirascope) or one of their own (pydantic-ai's `pyd_ai_…`): such a call is found by its
///   name and its arguments in canonical JSON (`gemini:call:<hash>`, [`canonical_json`]: keys
///   sorted at every depth, no whitespace), since clients re-serialise `args` in another key
///   order (`{"b":3,"a":2}` came back as `{"a":2,"b":3}`). Absent `args` counts as `{}`: both
///   are the empty `Struct` of Google's schema.
///
/// A request call is looked up by its id first, then by its name and arguments
/// ([`gemini_call_keys`]). Two recorded calls under one key with different signatures (in one
/// response or in two) make that key ambiguous: the store then finds nothing by it, and a rule
/// falls back to what it does without a store. Calls without a signature (the parallel calls
/// after the first, GM-02) are kept in the record but filed under no key: they have nothing to
/// give back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeminiRecord {
    /// The `functionCall` parts, in order.
    pub calls: Vec<GeminiCallRecord>,
}

/// A `functionCall` part of a stored Gemini turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeminiCallRecord {
    /// `functionCall.id`, when the response gave one.
    pub id: Option<String>,
    /// `functionCall.name`.
    pub name: String,
    /// `functionCall.args` in canonical JSON ([`canonical_json`]); `{}` when absent.
    pub args: String,
    /// The part's `thoughtSignature`, JSON text as the provider sent it (a string), when it has
    /// one.
    pub thought_signature: Option<String>,
}

impl GeminiCallRecord {
    /// The key this call is filed under ([`GeminiRecord`] says why).
    pub fn key(&self) -> String {
        match &self.id {
            Some(id) => format!("gemini:id:{id}"),
            None => gemini_args_key(&self.name, &self.args),
        }
    }
}

impl GeminiRecord {
    /// The signature (JSON text) recorded under `key`, when exactly one distinct signature is:
    /// `None` when no signed call has that key, or when two have it with different signatures.
    pub fn signature(&self, key: &str) -> Option<&str> {
        let mut found: Option<&str> = None;
        for c in &self.calls {
            let Some(sig) = c.thought_signature.as_deref() else {
                continue;
            };
            if c.key() != key {
                continue;
            }
            match found {
                Some(f) if f != sig => return None,
                _ => found = Some(sig),
            }
        }
        found
    }
}

/// The key of a call found by its name and canonical arguments.
fn gemini_args_key(name: &str, canonical_args: &str) -> String {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([0x1f]);
    h.update(canonical_args.as_bytes());
    let d = h.finalize();
    format!(
        "gemini:call:{}",
        crate::ledger::hex(d.get(..16).unwrap_or_default())
    )
}

/// The keys a request's `functionCall` is looked up by, best first: its `id` (when it has one),
/// then its name and arguments (`args`: the JSON text of `functionCall.args`, `None` when
/// absent). See [`GeminiRecord`] for why. Arguments that are not JSON give no name key.
pub fn gemini_call_keys(id: Option<&str>, name: &str, args: Option<&str>) -> Vec<String> {
    let mut keys = Vec::with_capacity(2);
    if let Some(id) = id {
        keys.push(format!("gemini:id:{id}"));
    }
    if let Some(canon) = canonical_args(args) {
        keys.push(gemini_args_key(name, &canon));
    }
    keys
}

/// `args` in canonical JSON, absent counted as `{}`; `None` when it is not JSON.
fn canonical_args(args: Option<&str>) -> Option<String> {
    match args {
        None => Some("{}".to_owned()),
        Some(a) => canonical_json(a),
    }
}

/// `json` written canonically: object keys sorted (by their UTF-8 bytes) at every depth, no
/// whitespace, strings and numbers as `serde_json` writes them. `None` when `json` is not JSON.
pub fn canonical_json(json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let mut out = String::with_capacity(json.len());
    write_canonical(&v, &mut out);
    Some(out)
}

fn write_canonical(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::Object(m) => {
            // Sorted here whatever map serde_json was built with (`preserve_order` keeps
            // insertion order).
            let mut entries: Vec<(&String, &serde_json::Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (n, (k, val)) in entries.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_canonical(val, out);
            }
            out.push('}');
        }
        serde_json::Value::Array(a) => {
            out.push('[');
            for (n, val) in a.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_canonical(val, out);
            }
            out.push(']');
        }
        serde_json::Value::String(s) => write_string(out, s),
        other => out.push_str(&other.to_string()),
    }
}

#[derive(Deserialize)]
struct GeminiContent<'a> {
    #[serde(borrow, default)]
    parts: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct GeminiPart<'a> {
    #[serde(rename = "functionCall", alias = "function_call", borrow)]
    function_call: Option<GeminiCall<'a>>,
    #[serde(rename = "thoughtSignature", alias = "thought_signature", borrow)]
    thought_signature: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct GeminiCall<'a> {
    id: Option<String>,
    name: Option<String>,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
}

fn gemini_record(raw: &str) -> Result<GeminiRecord, serde_json::Error> {
    let content: GeminiContent<'_> = serde_json::from_str(raw)?;
    let mut rec = GeminiRecord::default();
    for p in content.parts {
        let part: GeminiPart<'_> = serde_json::from_str(p.get())?;
        let Some(call) = part.function_call else {
            continue;
        };
        let args = call.args.map(RawValue::get).filter(|a| *a != "null");
        let Some(args) = canonical_args(args) else {
            continue;
        };
        rec.calls.push(GeminiCallRecord {
            id: call.id,
            name: call.name.unwrap_or_default(),
            args,
            thought_signature: part
                .thought_signature
                .map(RawValue::get)
                .filter(|s| s.starts_with('"'))
                .map(str::to_owned),
        });
    }
    Ok(rec)
}

#[derive(Deserialize)]
struct GeminiResp<'a> {
    #[serde(rename = "responseId")]
    response_id: Option<String>,
    #[serde(rename = "modelVersion")]
    model_version: Option<String>,
    #[serde(borrow, default)]
    candidates: Vec<GeminiCandidate<'a>>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct GeminiCandidate<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(rename = "finishReason")]
    finish_reason: Option<String>,
}

impl<'a> GeminiResp<'a> {
    /// Candidate 0 (an absent `index` is 0).
    fn first(&self) -> Option<&GeminiCandidate<'a>> {
        self.candidates.iter().find(|c| c.index.unwrap_or(0) == 0)
    }
}

fn gemini_json(body: &str) -> Result<WireTurn, StoreError> {
    if body.trim_start().starts_with('[') {
        // `streamGenerateContent` without `alt=sse`: the chunks as one JSON array.
        let chunks: Vec<&RawValue> = serde_json::from_str(body).map_err(|e| not(e.to_string()))?;
        return gemini_chunks(chunks.iter().map(|c| c.get()));
    }
    let r: GeminiResp<'_> = serde_json::from_str(body).map_err(|e| not(e.to_string()))?;
    if let Some(e) = r.error {
        return Err(not(format!("the response is an error: {}", e.get())));
    }
    let c = r
        .first()
        .ok_or_else(|| not("a Gemini response without candidates[0]"))?;
    if c.finish_reason.is_none() {
        return Err(not(
            "a Gemini response without a finishReason: a response cut short is not a turn",
        ));
    }
    let content = c
        .content
        .ok_or_else(|| not("a Gemini response without candidates[0].content"))?;
    Ok(WireTurn {
        family: WireFamily::Gemini,
        response_id: r.response_id,
        model: r.model_version,
        raw: content.get().to_owned(),
    })
}

fn gemini_stream(body: &str) -> Result<WireTurn, StoreError> {
    gemini_chunks(
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim),
    )
}

/// Assembles a stream's chunks: the parts of candidate 0, each as it was sent, in the order
/// sent (text split across chunks stays split: only the calls and their signatures are looked
/// at). The stream must end with a chunk whose candidate 0 has a `finishReason`, and carry no
/// `error`.
fn gemini_chunks<'b>(chunks: impl Iterator<Item = &'b str>) -> Result<WireTurn, StoreError> {
    let mut parts: Vec<&'b str> = Vec::new();
    let mut id = None;
    let mut model = None;
    let mut role: Option<String> = None;
    let mut finished = false;
    #[derive(Deserialize)]
    struct Role {
        role: Option<String>,
    }
    for data in chunks {
        let Ok(r) = serde_json::from_str::<GeminiResp<'b>>(data) else {
            continue;
        };
        if let Some(e) = r.error {
            return Err(not(format!("the stream ended with an error: {}", e.get())));
        }
        if finished && r.first().is_some_and(|c| c.content.is_some()) {
            return Err(not("a Gemini stream with content after its finishReason"));
        }
        id = id.or(r.response_id.clone());
        model = model.or(r.model_version.clone());
        let Some(c) = r.first() else { continue };
        if let Some(content) = c.content {
            let head: GeminiContent<'b> =
                serde_json::from_str(content.get()).map_err(|e| not(e.to_string()))?;
            if role.is_none() {
                role = serde_json::from_str::<Role>(content.get())
                    .ok()
                    .and_then(|r| r.role);
            }
            parts.extend(head.parts.iter().map(|p| p.get()));
        }
        if c.finish_reason.is_some() {
            finished = true;
        }
    }
    if !finished {
        return Err(not(
            "the stream ended before a finishReason: a stream cut short is not a turn",
        ));
    }
    let mut raw = String::from("{\"parts\":[");
    raw.push_str(&parts.join(","));
    raw.push_str("],\"role\":");
    write_string(&mut raw, role.as_deref().unwrap_or("model"));
    raw.push('}');
    Ok(WireTurn {
        family: WireFamily::Gemini,
        response_id: id,
        model,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `body` as a response of the family it sniffs as; the raw text stored, or the error.
    fn check(body: &str, family: Option<WireFamily>, expect: Result<&str, &str>) {
        assert_eq!(response_family(body), family, "{body}");
        let got = WireTurn::from_response(body, family.unwrap_or(WireFamily::Anthropic))
            .map(|t| t.raw)
            .map_err(|e| e.to_string());
        match expect {
            Ok(raw) => assert_eq!(got.as_deref(), Ok(raw), "{body}"),
            Err(part) => {
                let e = got.expect_err(body);
                assert!(e.contains(part), "{body}: {e}");
            }
        }
    }

    #[test]
    fn chat_json_keeps_the_message_bytes() {
        check(
            r#"{"id":"c1","model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":"", "reasoning_content":"why \u00e9","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
            Some(WireFamily::Chat),
            Ok(
                r#"{"role":"assistant","content":"", "reasoning_content":"why \u00e9","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}"#,
            ),
        );
    }

    fn sse(events: &[&str]) -> String {
        events.iter().map(|e| format!("data: {e}\n\n")).collect()
    }

    #[test]
    fn a_chat_stream_is_assembled_and_a_cut_one_refused() {
        let events = [
            r#"{"id":"c2","model":"kimi-k2-thinking","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Let "}}]}"#,
            r#"{"id":"c2","choices":[{"index":0,"delta":{"reasoning_content":"me \"see\""}}]}"#,
            r#"{"id":"c2","choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"a","index":0}]}}]}"#,
            r#"{"id":"c2","choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"b","index":0}]}}]}"#,
            r#"{"id":"c2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"functions.f:0","function":{"name":"f","arguments":"{\"a\""}}]}}]}"#,
            r#"{"id":"c2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]}}]}"#,
        ];
        check(
            &sse(&events),
            Some(WireFamily::Chat),
            Err("before a finish_reason"),
        );
        let mut whole = events.to_vec();
        whole
            .push(r#"{"id":"c2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#);
        whole.push("[DONE]");
        check(
            &sse(&whole),
            Some(WireFamily::Chat),
            Ok(
                r#"{"role":"assistant","content":null,"reasoning_content":"Let me \"see\"","reasoning_details":[{"index":0,"text":"ab","type":"reasoning.text"}],"tool_calls":[{"id":"functions.f:0","type":"function","function":{"name":"f","arguments":"{\"a\":1}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]}"#,
            ),
        );
        let failed = format!(
            "{}data: {{\"error\":{{\"message\":\"overloaded\"}}}}\n\n",
            sse(&whole)
        );
        check(&failed, Some(WireFamily::Chat), Err("error"));
    }

    #[test]
    fn a_responses_stream_takes_the_completed_output_else_the_done_items() {
        let rs = r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}"#;
        let fc = r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}"}"#;
        let done = [
            format!(r#"{{"type":"response.output_item.done","output_index":1,"item":{fc}}}"#),
            format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{rs}}}"#),
        ];
        let cut: Vec<&str> = done.iter().map(String::as_str).collect();
        check(
            &sse(&cut),
            Some(WireFamily::Responses),
            Err("response.completed"),
        );
        let completed_empty = r#"{"type":"response.completed","response":{"id":"resp_1","model":"gpt-5","output":[]}}"#;
        let mut whole = cut.clone();
        whole.push(completed_empty);
        check(
            &sse(&whole),
            Some(WireFamily::Responses),
            Ok(&format!("[{rs},{fc}]")),
        );
        let completed = format!(
            r#"{{"type":"response.completed","response":{{"id":"resp_1","model":"gpt-5","output":[{rs}, {fc}]}}}}"#
        );
        let mut whole = cut.clone();
        whole.push(&completed);
        check(
            &sse(&whole),
            Some(WireFamily::Responses),
            Ok(&format!("[{rs}, {fc}]")),
        );
        let failed = r#"{"type":"response.failed","response":{}}"#;
        let mut bad = whole.clone();
        bad.insert(0, failed);
        check(
            &sse(&bad),
            Some(WireFamily::Responses),
            Err("response.failed"),
        );
    }

    #[test]
    fn gemini_json_streams_and_chunk_arrays_are_told_and_assembled() {
        let chunk = |parts: &str, finish: &str| {
            format!(
                r#"{{"candidates":[{{"content":{{"parts":[{parts}],"role":"model"}}{finish},"index":0}}],"responseId":"g1"}}"#
            )
        };
        let call =
            r#"{"functionCall":{"name":"f","args":{"q":"x"},"id":"c1"},"thoughtSignature":"c2ln"}"#;
        let first = chunk(r#"{"text":"Let me "}"#, "");
        let second = chunk(&format!(r#"{{"text":"look."}},{call}"#), "");
        let last = chunk(r#"{"text":""}"#, r#","finishReason":"STOP""#);
        let whole = format!(
            r#"{{"parts":[{{"text":"Let me "}},{{"text":"look."}},{call},{{"text":""}}],"role":"model"}}"#
        );
        check(
            &sse(&[&first, &second, &last]),
            Some(WireFamily::Gemini),
            Ok(&whole),
        );
        check(
            &sse(&[&first, &second]),
            Some(WireFamily::Gemini),
            Err("before a finishReason"),
        );
        // `streamGenerateContent` without `alt=sse`: the same chunks as a JSON array.
        check(
            &format!("[{first},\n{second},\n{last}]"),
            Some(WireFamily::Gemini),
            Ok(&whole),
        );
        check(
            &format!("[{first},{second}]"),
            Some(WireFamily::Gemini),
            Err("before a finishReason"),
        );
        // A JSON response keeps its content's bytes; without finishReason it is no turn.
        check(
            &last,
            Some(WireFamily::Gemini),
            Ok(r#"{"parts":[{"text":""}],"role":"model"}"#),
        );
        check(&first, Some(WireFamily::Gemini), Err("finishReason"));
        let t = WireTurn::from_response(&sse(&[&second, &last]), WireFamily::Gemini).expect("turn");
        let WireRecord::Gemini(g) = t.record().expect("record") else {
            panic!("a Gemini record");
        };
        assert_eq!(
            g.calls,
            vec![GeminiCallRecord {
                id: Some("c1".to_owned()),
                name: "f".to_owned(),
                args: r#"{"q":"x"}"#.to_owned(),
                thought_signature: Some("\"c2ln\"".to_owned()),
            }]
        );
        assert_eq!(
            WireTurn::keys(&WireRecord::Gemini(g)),
            vec!["gemini:id:c1".to_owned()]
        );
        assert_eq!(
            canonical_json(r#" {"b": [ {"d":1, "c":"\u00e9"} ], "a": null} "#).as_deref(),
            Some(r#"{"a":null,"b":[{"c":"é","d":1}]}"#)
        );
        assert_eq!(canonical_json("{"), None);
    }

    #[test]
    fn responses_and_converse_json_and_their_lookups() {
        let body = r#"{"id":"resp_2","object":"response","status":"completed","model":"gpt-5","output":[{"type":"reasoning","id":"rs_2","summary":[]},{"type":"function_call","id":"fc_2","call_id":"call_2"},{"type":"message","id":"msg_2"}]}"#;
        let t = WireTurn::from_response(body, WireFamily::Responses).expect("turn");
        let WireRecord::Responses(items) = t.record().expect("record") else {
            panic!("a Responses record");
        };
        assert_eq!(
            items.reasoning_before("call_2").map(|i| i.raw.as_str()),
            Some(r#"{"type":"reasoning","id":"rs_2","summary":[]}"#)
        );
        assert_eq!(items.reasoning_before("msg_2"), None);
        assert_eq!(items.reasoning_before("call_9"), None);
        let incomplete = body.replace("\"completed\"", "\"incomplete\"");
        check(&incomplete, Some(WireFamily::Responses), Err("incomplete"));
        let conv = r#"{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"s"}}},{"toolUse":{"toolUseId":"tu_1","name":"f","input":{}}}]}},"stopReason":"tool_use"}"#;
        check(
            conv,
            Some(WireFamily::Converse),
            Ok(
                r#"{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"s"}}},{"toolUse":{"toolUseId":"tu_1","name":"f","input":{}}}]}"#,
            ),
        );
        let c = WireTurn::from_response(conv, WireFamily::Converse).expect("turn");
        assert_eq!(
            WireTurn::keys(&c.record().expect("record")),
            vec!["converse:tool:tu_1".to_owned()]
        );
        assert_eq!(
            response_family(r#"{"type":"message","content":[]}"#),
            Some(WireFamily::Anthropic)
        );
        assert_eq!(response_family(r#"{"messages":[]}"#), None);
        assert_eq!(response_family(r#"{"error":{"message":"bad"}}"#), None);
        let commented = ": OPENROUTER PROCESSING\n\ndata: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n";
        check(
            commented,
            Some(WireFamily::Chat),
            Ok(r#"{"role":"assistant","content":"hi"}"#),
        );
    }
}
