//! A mock of the providers' APIs on loopback (Anthropic Messages, OpenAI-style Chat Completions,
//! OpenAI Responses, Gemini `generateContent`), for the proxy's tests and benchmark.
//!
//! It replays recorded real responses (`../shared/real-traffic/anthropic`, read in place, never
//! copied) and rejects what the real API rejects, with the real error texts of
//! `research/api-rules.md`:
//! - a `thinking` block whose (signature, thinking) pair the API never issued (AN-23), a
//!   `redacted_thinking` block whose `data` it never issued, a thinking block with no
//!   signature (AN-06);
//! - a latest assistant message holding a thinking block this mock served whose thinking blocks
//!   are not exactly those it served (AN-22), and an assistant message with thinking that does
//!   not start with it (AN-18);
//! - a `tool_use` with no `tool_result` in the next message (AN-08), a `tool_result` with no
//!   `tool_use` before it (AN-10), a blank text block (AN-05).
//!
//!
//! The other families (`openai-chat`, `openai-responses`, `gemini` of `real-traffic/`) are
//! replayed from their own recordings, on their own paths, and judged as their APIs judge:
//! - Chat: a DeepSeek or Kimi assistant message with `tool_calls` and no `reasoning_content`
//!   (DeepSeek's and Kimi's exact texts, DS-03/KM-01), tool calls without their tool messages
//!   (OpenAI's text);
//! - Responses: a reasoning item not followed by the item it produced (OR-01), an
//!   `encrypted_content` no recorded or served response carried (OR-04,
//!   `invalid_encrypted_content`);
//! - Gemini 3: a step of the current turn whose first `functionCall` part has no
//!   `thoughtSignature` (GM-01, the observed text).
//!
//! It is written against `serde_json::Value` and shares no code with turnkeeper's rules, so a
//! request the proxy gets wrong is caught by an independent judge.
//!
//! Test controls travel as request headers (the proxy forwards them like any header):
//! `x-mock-reply: <exchange id>` picks the recorded response; `x-mock-hold: 1` sends a
//! stream's first event, then waits for [`Mock::release`]; `x-mock-cut-after: N` ends a stream
//! abruptly after N events; `x-mock-delay-ms: N` waits between events; `x-mock-wait-ms: N`
//! waits before the response headers.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};

type MockBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

/// One recorded exchange the API accepted.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The file stem (`<source-slug>__<n>`).
    pub id: String,
    /// The request body, as recorded.
    pub request: Bytes,
    /// The response body, as recorded (JSON or SSE).
    pub response: Bytes,
    /// True when the response is an event stream.
    pub sse: bool,
    /// The family's folder in `real-traffic/` (`anthropic`, `openai-chat`, `openai-responses`,
    /// `gemini`).
    pub family: String,
    /// The model the manifest names.
    pub model: String,
}

/// The recorded exchanges, loaded from `dir` (`real-traffic/anthropic`).
pub fn load_exchanges(dir: &Path) -> Vec<Exchange> {
    load_family(&dir.join(".."), "anthropic")
}

/// The accepted exchanges of one family (`openai-chat`, ...) of `root` (`real-traffic/`).
pub fn load_family(root: &Path, family: &str) -> Vec<Exchange> {
    let dir = root.join(family);
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(dir.join("../MANIFEST.json")).expect("MANIFEST.json"),
    )
    .expect("manifest parses");
    let mut out = Vec::new();
    for e in manifest["exchanges"].as_array().expect("exchanges") {
        if e["status"].as_u64() != Some(200) {
            continue;
        }
        let (Some(req), Some(resp)) = (e["request"].as_str(), e["response"].as_array()) else {
            continue;
        };
        if !req.starts_with(&format!("{family}/")) {
            continue;
        }
        let root = dir.join("..");
        // Prefer the verbatim stream over a derived assembly.
        let pick = resp
            .iter()
            .filter_map(|r| r.as_str())
            .find(|r| r.ends_with(".response.sse"))
            .or_else(|| {
                resp.iter()
                    .filter_map(|r| r.as_str())
                    .find(|r| r.ends_with(".response.json"))
            });
        let Some(pick) = pick else { continue };
        let (Ok(request), Ok(response)) = (
            std::fs::read(root.join(req)),
            std::fs::read(root.join(pick)),
        ) else {
            continue;
        };
        out.push(Exchange {
            id: e["id"].as_str().unwrap_or_default().to_owned(),
            request: Bytes::from(request),
            response: Bytes::from(response),
            sse: pick.ends_with(".sse"),
            family: family.to_owned(),
            model: e["model"].as_str().unwrap_or_default().to_owned(),
        });
    }
    out
}

/// The content array a response carries (JSON, or assembled from a stream's deltas).
pub fn response_content(body: &[u8], sse: bool) -> Value {
    if !sse {
        let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        return v.get("content").cloned().unwrap_or(Value::Null);
    }
    let text = String::from_utf8_lossy(body);
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial: HashMap<usize, String> = HashMap::new();
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(ev) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        let idx = ev["index"].as_u64().unwrap_or(0) as usize;
        match ev["type"].as_str() {
            Some("content_block_start") => {
                if blocks.len() <= idx {
                    blocks.resize(idx + 1, Value::Null);
                }
                blocks[idx] = ev["content_block"].clone();
            }
            Some("content_block_delta") => {
                let d = &ev["delta"];
                let Some(b) = blocks.get_mut(idx) else {
                    continue;
                };
                let mut append = |k: &str, add: &str| {
                    let cur = b[k].as_str().unwrap_or("").to_owned();
                    b[k] = Value::String(cur + add);
                };
                match d["type"].as_str() {
                    Some("text_delta") => append("text", d["text"].as_str().unwrap_or("")),
                    Some("thinking_delta") => {
                        append("thinking", d["thinking"].as_str().unwrap_or(""))
                    }
                    Some("signature_delta") => {
                        append("signature", d["signature"].as_str().unwrap_or(""))
                    }
                    Some("input_json_delta") => {
                        partial
                            .entry(idx)
                            .or_default()
                            .push_str(d["partial_json"].as_str().unwrap_or(""));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    for (idx, p) in partial {
        if let (Some(b), Ok(v)) = (blocks.get_mut(idx), serde_json::from_str::<Value>(&p)) {
            b["input"] = v;
        }
    }
    Value::Array(blocks)
}

fn thinking_pairs(
    content: &Value,
    into: &mut HashSet<(String, String)>,
    redacted: &mut HashSet<String>,
) {
    for b in content.as_array().into_iter().flatten() {
        match b["type"].as_str() {
            Some("thinking") => {
                if let Some(sig) = b["signature"].as_str() {
                    into.insert((
                        sig.to_owned(),
                        b["thinking"].as_str().unwrap_or("").to_owned(),
                    ));
                }
            }
            Some("redacted_thinking") => {
                if let Some(d) = b["data"].as_str() {
                    redacted.insert(d.to_owned());
                }
            }
            _ => {}
        }
    }
}

struct State {
    exchanges: Vec<Exchange>,
    by_request: HashMap<Bytes, usize>,
    by_id: HashMap<String, usize>,
    /// (signature, thinking) pairs the API issued: every recorded response and request.
    known: Mutex<HashSet<(String, String)>>,
    known_redacted: Mutex<HashSet<String>>,
    /// Turns this mock served, by each thinking signature in them: the content it sent.
    served: Mutex<HashMap<String, Value>>,
    /// Every body received, in order.
    received: Mutex<Vec<Bytes>>,
    /// Headers of every request received (names and values), in order.
    headers: Mutex<Vec<Vec<(String, String)>>>,
    next: AtomicUsize,
    release: Semaphore,
    /// Streams that ended early because the client went away.
    client_gone: AtomicUsize,
    /// Streams sent to the end.
    finished: AtomicUsize,
    /// Every `encrypted_content` a recorded or served response carried (Responses).
    known_encrypted: Mutex<HashSet<String>>,
    /// The `x-mock-reject-once` texts already answered with their 400.
    rejected_once: Mutex<HashSet<String>>,
}

/// Every string under an `encrypted_content` key anywhere in `v`.
fn encrypted_in(v: &Value, into: &mut HashSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if k == "encrypted_content"
                    && let Some(s) = x.as_str()
                {
                    into.insert(s.to_owned());
                }
                encrypted_in(x, into);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| encrypted_in(x, into)),
        _ => {}
    }
}

/// Every JSON value of a body: the body, or each `data:` line of a stream.
fn json_values(body: &[u8]) -> Vec<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return vec![v];
    }
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// The family a path of the API belongs to (`real-traffic/` folder names).
fn family_of(path: &str) -> Option<&'static str> {
    if path == "/v1/messages" {
        Some("anthropic")
    } else if path.ends_with("/chat/completions") {
        Some("openai-chat")
    } else if path.ends_with("/responses") {
        Some("openai-responses")
    } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
        Some("gemini")
    } else {
        None
    }
}

/// What DeepSeek, Kimi or OpenAI would reject in a Chat Completions request.
fn judge_chat(req: &Value) -> Option<String> {
    let model = req["model"].as_str().unwrap_or("").to_ascii_lowercase();
    let msgs = req["messages"].as_array()?;
    for (i, m) in msgs.iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        let calls: Vec<&str> = m["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str())
            .collect();
        if calls.is_empty() {
            continue;
        }
        // Only the vendors' own APIs (their own model ids): routers and gateways translate, and
        // real traffic through them was accepted without the field.
        let own_deepseek = [
            "deepseek-chat",
            "deepseek-reasoner",
            "deepseek-v4-pro",
            "deepseek-v4-flash",
            "deepseek-v3.2",
        ]
        .contains(&model.as_str());
        let own_kimi = model.starts_with("kimi-");
        if m.get("reasoning_content").is_none() {
            if own_deepseek {
                // DeepSeek V3.2's text (api-rules-reasoning DS-03).
                return Some(format!(
                    "Missing `reasoning_content` field in the assistant message at message index {i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
                ));
            }
            if own_kimi {
                return Some(format!(
                    "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"
                ));
            }
        }
        let answered: HashSet<&str> = msgs[i + 1..]
            .iter()
            .take_while(|n| n["role"] == "tool")
            .filter_map(|n| n["tool_call_id"].as_str())
            .collect();
        let missing: Vec<&str> = calls
            .into_iter()
            .filter(|c| !answered.contains(c))
            .collect();
        if !missing.is_empty() {
            return Some(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                missing.join(", ")
            ));
        }
    }
    None
}

/// What OpenAI would reject in a Responses request: `(message, code)`.
fn judge_responses(st: &State, req: &Value) -> Option<(String, &'static str)> {
    let items = req["input"].as_array()?;
    // OpenAI's own rules (OR-01, OR-04); DeepSeek's Responses endpoint accepted reasoning items
    // without a following item in real traffic.
    let model = req["model"].as_str().unwrap_or("");
    let openai = model.starts_with("gpt-")
        || model.starts_with("o1")
        || model.starts_with("o3")
        || model.starts_with("o4")
        || model.starts_with("codex");
    if !openai {
        return None;
    }
    let known = st.known_encrypted.lock().expect("lock");
    for (i, it) in items.iter().enumerate() {
        if it["type"] != "reasoning" {
            continue;
        }
        let id = it["id"].as_str().unwrap_or("");
        if let Some(enc) = it["encrypted_content"].as_str()
            && !known.contains(enc)
        {
            return Some((
                format!(
                    "The encrypted content for item {id} could not be verified. Reason: Encrypted content could not be decrypted or parsed."
                ),
                "invalid_encrypted_content",
            ));
        }
        if !id.is_empty() {
            let next = items.get(i + 1);
            let follows = next.is_some_and(|n| {
                let t = n["type"].as_str().unwrap_or("message");
                t != "reasoning" && !(t == "message" && n["role"] == "user")
            });
            if !follows {
                return Some((
                    format!(
                        "Item '{id}' of type 'reasoning' was provided without its required following item."
                    ),
                    "",
                ));
            }
        }
    }
    None
}

/// What Gemini 3 would reject: the first `functionCall` part of a step of the current turn
/// without its `thoughtSignature` (GM-01).
fn judge_gemini(model: &str, req: &Value) -> Option<String> {
    if !model.starts_with("gemini-3") {
        return None;
    }
    let contents = req["contents"].as_array()?;
    let is_user_text = |c: &Value| {
        c["role"] == "user"
            && c["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p.get("functionResponse").is_none())
    };
    let start = contents.iter().rposition(is_user_text).map_or(0, |i| i + 1);
    for c in &contents[start..] {
        if c["role"] != "model" {
            continue;
        }
        let parts = c["parts"].as_array().into_iter().flatten();
        if let Some((n, p)) = parts
            .enumerate()
            .find(|(_, p)| p.get("functionCall").is_some())
            && p.get("thoughtSignature").is_none()
        {
            return Some(format!(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{}` , position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                p["functionCall"]["name"].as_str().unwrap_or("?"),
                n + 1
            ));
        }
    }
    None
}

/// A 400 in the error shape of `family`.
fn family_error(family: &str, message: String, code: &str) -> Response<MockBody> {
    let body = match family {
        "gemini" => {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        }
        "anthropic" => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
        _ => json!({"error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "input",
            "code": if code.is_empty() { Value::Null } else { Value::String(code.to_owned()) },
        }}),
    };
    let mut r = Response::new(full(Bytes::from(body.to_string())));
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r.headers_mut()
        .insert("content-type", "application/json".parse().expect("header"));
    r
}

/// A running mock.
pub struct Mock {
    /// Its address.
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl Mock {
    /// Starts a mock serving `exchanges` on a free loopback port.
    pub async fn start(exchanges: Vec<Exchange>) -> Mock {
        let mut known = HashSet::new();
        let mut known_redacted = HashSet::new();
        let mut by_request = HashMap::new();
        let mut by_id = HashMap::new();
        let mut known_encrypted = HashSet::new();
        for e in &exchanges {
            for v in json_values(&e.response)
                .iter()
                .chain(json_values(&e.request).iter())
            {
                encrypted_in(v, &mut known_encrypted);
            }
        }
        for (i, e) in exchanges.iter().enumerate() {
            thinking_pairs(
                &response_content(&e.response, e.sse),
                &mut known,
                &mut known_redacted,
            );
            if let Ok(req) = serde_json::from_slice::<Value>(&e.request) {
                for m in req["messages"].as_array().into_iter().flatten() {
                    thinking_pairs(&m["content"], &mut known, &mut known_redacted);
                }
            }
            by_request.entry(e.request.clone()).or_insert(i);
            by_id.insert(e.id.clone(), i);
        }
        let state = Arc::new(State {
            exchanges,
            by_request,
            by_id,
            known: Mutex::new(known),
            known_redacted: Mutex::new(known_redacted),
            served: Mutex::new(HashMap::new()),
            received: Mutex::new(Vec::new()),
            headers: Mutex::new(Vec::new()),
            next: AtomicUsize::new(0),
            release: Semaphore::new(0),
            client_gone: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            known_encrypted: Mutex::new(known_encrypted),
            rejected_once: Mutex::new(HashSet::new()),
        });
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("addr");
        let st = state.clone();
        tokio::spawn(serve_each(listener, move |req| serve(st.clone(), req)));
        Mock { addr, state }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request body received so far.
    pub fn received(&self) -> Vec<Bytes> {
        self.state.received.lock().expect("lock").clone()
    }

    /// Forgets the bodies and headers received so far (a benchmark's megabytes).
    pub fn clear_received(&self) {
        self.state.received.lock().expect("lock").clear();
        self.state.headers.lock().expect("lock").clear();
    }

    /// The headers of every request received so far.
    pub fn received_headers(&self) -> Vec<Vec<(String, String)>> {
        self.state.headers.lock().expect("lock").clone()
    }

    /// Lets one held stream (`x-mock-hold`) go on, now or when it comes to wait.
    pub fn release(&self) {
        self.state.release.add_permits(1);
    }

    /// The recorded exchanges.
    pub fn exchanges(&self) -> &[Exchange] {
        &self.state.exchanges
    }

    /// The exchange with this id.
    pub fn exchange(&self, id: &str) -> &Exchange {
        &self.state.exchanges[self.state.by_id[id]]
    }

    /// Streams that ended early because the client went away.
    pub fn streams_cut_by_client(&self) -> usize {
        self.state.client_gone.load(Ordering::SeqCst)
    }

    /// Streams sent to the end.
    pub fn streams_finished(&self) -> usize {
        self.state.finished.load(Ordering::SeqCst)
    }
}

fn error(message: String) -> Response<MockBody> {
    let body =
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
    let mut r = Response::new(full(Bytes::from(body.to_string())));
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r.headers_mut()
        .insert("content-type", "application/json".parse().expect("header"));
    r
}

fn full(b: Bytes) -> MockBody {
    http_body_util::Full::new(b)
        .map_err(|never| match never {})
        .boxed()
}

fn is_thinking(b: &Value) -> bool {
    b["type"] == "thinking" || b["type"] == "redacted_thinking"
}

/// A server tool's call or result: the API accepts a turn that starts with one before its
/// thinking (real traffic: pydantic-ai code execution, web search).
fn is_server_block(b: &Value) -> bool {
    b["type"]
        .as_str()
        .is_some_and(|t| t == "server_tool_use" || t.ends_with("_tool_result"))
}

/// The thinking and redacted-thinking blocks of a content array, in order: what AN-22 holds
/// fixed in the latest assistant message (the API accepts changes to the other blocks, e.g. a
/// dropped `caller` member: real traffic, pydantic-ai `test_agent`).
fn thinking_run(content: &Value) -> Vec<&Value> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| is_thinking(b))
        .collect()
}

/// What DeepSeek's Anthropic-compatible endpoint (a `deepseek-*` model, or `endpoint` set)
/// refuses before reading anything else: a `system` message inside `messages`, with its serde
/// error (deepseek-ai/awesome-deepseek-agent#167).
fn deepseek_roles(req: &Value, endpoint: bool) -> Option<String> {
    let deepseek = endpoint
        || req["model"]
            .as_str()
            .is_some_and(|m| m.to_ascii_lowercase().starts_with("deepseek"));
    if !deepseek {
        return None;
    }
    let i = req["messages"]
        .as_array()?
        .iter()
        .position(|m| m["role"] == "system")?;
    Some(format!(
        "Failed to deserialize the JSON body into the target type: messages[{i}].role: unknown variant `system`, expected `user` or `assistant` at line 1 column 467"
    ))
}

/// What the real API would reject in `req`, as its error text.
fn judge(st: &State, req: &Value) -> Option<String> {
    let Some(msgs) = req["messages"].as_array() else {
        return Some("messages: Field required".to_owned());
    };
    let known = st.known.lock().expect("lock");
    let known_redacted = st.known_redacted.lock().expect("lock");
    let served = st.served.lock().expect("lock");
    let latest_assistant = msgs.iter().rposition(|m| m["role"] == "assistant");
    for (i, m) in msgs.iter().enumerate() {
        let blocks: Vec<Value> = match &m["content"] {
            Value::Array(a) => a.clone(),
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            _ => Vec::new(),
        };
        for (j, b) in blocks.iter().enumerate() {
            match b["type"].as_str() {
                Some("text") if b["text"].as_str().is_some_and(|t| t.trim().is_empty()) => {
                    return Some(
                        "messages: text content blocks must contain non-whitespace text".to_owned(),
                    );
                }
                Some("thinking") => {
                    let Some(sig) = b["signature"].as_str() else {
                        return Some(format!(
                            "messages.{i}.content.{j}.thinking.signature: Field required"
                        ));
                    };
                    let pair = (
                        sig.to_owned(),
                        b["thinking"].as_str().unwrap_or("").to_owned(),
                    );
                    if !known.contains(&pair) {
                        return Some(format!(
                            "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                        ));
                    }
                    if Some(i) == latest_assistant
                        && let Some(sent) = served.get(sig)
                        && thinking_run(sent) != thinking_run(&m["content"])
                    {
                        return Some(format!(
                            "messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response."
                        ));
                    }
                }
                Some("redacted_thinking")
                    if !b["data"]
                        .as_str()
                        .is_some_and(|d| known_redacted.contains(d)) =>
                {
                    return Some(format!(
                        "messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
                    ));
                }
                _ => {}
            }
        }
        if m["role"] == "assistant"
            && blocks.iter().any(is_thinking)
            && let Some(first) = blocks
                .first()
                .filter(|b| !is_thinking(b) && !is_server_block(b))
        {
            return Some(format!(
                "messages.{i}.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `{}`.",
                first["type"].as_str().unwrap_or("?")
            ));
        }
        if m["role"] == "assistant" {
            let uses: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .filter_map(|b| b["id"].as_str())
                .collect();
            if !uses.is_empty() {
                let next = msgs.get(i + 1);
                let results: HashSet<&str> = next
                    .filter(|n| n["role"] == "user")
                    .and_then(|n| n["content"].as_array())
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "tool_result")
                    .filter_map(|b| b["tool_use_id"].as_str())
                    .collect();
                let missing: Vec<&str> = uses
                    .iter()
                    .copied()
                    .filter(|u| !results.contains(u))
                    .collect();
                if !missing.is_empty() {
                    return Some(format!(
                        "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                        missing.join(", ")
                    ));
                }
            }
        }
        if m["role"] == "user" {
            let prev_uses: HashSet<&str> = i
                .checked_sub(1)
                .and_then(|p| msgs.get(p))
                .filter(|p| p["role"] == "assistant")
                .and_then(|p| p["content"].as_array())
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_use")
                .filter_map(|b| b["id"].as_str())
                .collect();
            for (j, b) in blocks.iter().enumerate() {
                if b["type"] == "tool_result"
                    && let Some(id) = b["tool_use_id"].as_str()
                    && !prev_uses.contains(id)
                {
                    return Some(format!(
                        "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    ));
                }
            }
        }
    }
    None
}

/// Reads a body no faster than `mbps` megabytes a second from its first byte: the upload over
/// a link of that speed, as a remote API receives it (TCP's window slows the sender to match).
async fn paced(mut body: Incoming, mbps: f64) -> Result<Bytes, hyper::Error> {
    let mut out = Vec::new();
    let mut start: Option<tokio::time::Instant> = None;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        let t0 = *start.get_or_insert_with(tokio::time::Instant::now);
        out.extend_from_slice(&data);
        let due = Duration::from_secs_f64(out.len() as f64 / (mbps * 1e6));
        tokio::time::sleep_until(t0 + due).await;
    }
    Ok(Bytes::from(out))
}

fn header<'a>(req: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Serves every connection `listener` accepts, each on a task of its own (HTTP/1 or 2, no
/// Nagle delay), answering each request with `handle`; runs until the runtime stops.
pub async fn serve_each<F, Fut, B>(listener: TcpListener, handle: F)
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let handle = handle.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let answer = handle(req);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

async fn serve(st: Arc<State>, req: Request<Incoming>) -> Response<MockBody> {
    let reply = header(&req, "x-mock-reply").map(str::to_owned);
    let hold = header(&req, "x-mock-hold").is_some();
    let cut_after = header(&req, "x-mock-cut-after").and_then(|v| v.parse::<usize>().ok());
    let delay = header(&req, "x-mock-delay-ms").and_then(|v| v.parse::<u64>().ok());
    if let Some(ms) = header(&req, "x-mock-wait-ms").and_then(|v| v.parse::<u64>().ok()) {
        // Silence before the response headers (a slow first token).
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let reject_once = header(&req, "x-mock-reject-once").map(str::to_owned);
    // DeepSeek's Anthropic-compatible endpoint, which also answers to `claude-*` model names.
    let deepseek_endpoint = header(&req, "x-mock-endpoint") == Some("deepseek");
    let path = req.uri().path().to_owned();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let gzipped = header(&req, "content-encoding") == Some("gzip");
    // A request is received when its body is: one whose connection closed mid-body never
    // reached the API.
    let link = header(&req, "x-mock-link-mbps").and_then(|v| v.parse::<f64>().ok());
    let read = match link {
        Some(mbps) => paced(req.into_body(), mbps).await,
        None => req.into_body().collect().await.map(|b| b.to_bytes()),
    };
    let Ok(body) = read else {
        return error("could not read the body".to_owned());
    };
    st.headers.lock().expect("lock").push(headers);
    st.received.lock().expect("lock").push(body.clone());
    // A gzip body is read as the real APIs read it: decoded.
    let body = if gzipped {
        use std::io::Read as _;
        let mut out = Vec::new();
        if flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut out)
            .is_err()
        {
            return error("could not decode the gzip body".to_owned());
        }
        Bytes::from(out)
    } else {
        body
    };
    let Some(family) = family_of(&path) else {
        let mut r = Response::new(full(Bytes::from_static(br#"{"data":[],"has_more":false}"#)));
        r.headers_mut()
            .insert("content-type", "application/json".parse().expect("header"));
        return r;
    };
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return family_error(family, "There was an error parsing the body".to_owned(), "");
    };
    let verdict = match family {
        "anthropic" => deepseek_roles(&v, deepseek_endpoint)
            .or_else(|| judge(&st, &v))
            .map(|m| (m, "")),
        "openai-chat" => judge_chat(&v).map(|m| (m, "")),
        "openai-responses" => judge_responses(&st, &v),
        _ => {
            let model = path
                .rsplit('/')
                .next()
                .and_then(|m| m.split(':').next())
                .unwrap_or("");
            judge_gemini(model, &v).map(|m| (m, ""))
        }
    };
    if let Some((msg, code)) = verdict {
        return family_error(family, msg, code);
    }
    if let Some(msg) = reject_once
        && st.rejected_once.lock().expect("lock").insert(msg.clone())
    {
        return family_error(family, msg, "");
    }
    let stream = if family == "gemini" {
        path.ends_with(":streamGenerateContent")
    } else {
        v["stream"].as_bool().unwrap_or(false)
    };
    let idx = match reply.as_deref().and_then(|r| st.by_id.get(r)) {
        Some(&i) => i,
        None => match st.by_request.get(&body) {
            Some(&i) => i,
            None => {
                let same: Vec<usize> = (0..st.exchanges.len())
                    .filter(|&i| st.exchanges[i].sse == stream && st.exchanges[i].family == family)
                    .collect();
                if same.is_empty() {
                    return family_error(
                        family,
                        "mock: no recorded response of this kind".to_owned(),
                        "",
                    );
                }
                same[st.next.fetch_add(1, Ordering::Relaxed) % same.len()]
            }
        },
    };
    let e = &st.exchanges[idx];
    {
        let mut known = st.known_encrypted.lock().expect("lock");
        for v in json_values(&e.response) {
            encrypted_in(&v, &mut known);
        }
    }
    let content = response_content(&e.response, e.sse);
    {
        let mut served = st.served.lock().expect("lock");
        for b in content.as_array().into_iter().flatten() {
            if let Some(sig) = b["signature"].as_str().filter(|s| !s.is_empty()) {
                served.insert(sig.to_owned(), content.clone());
            }
        }
    }
    if !e.sse {
        st.finished.fetch_add(1, Ordering::SeqCst);
        let mut r = Response::new(full(e.response.clone()));
        r.headers_mut()
            .insert("content-type", "application/json".parse().expect("header"));
        r.headers_mut()
            .insert("request-id", "req_mock".parse().expect("header"));
        return r;
    }
    // The stream, event by event (each chunk ends with its blank line), so the bytes the client
    // gets concatenate to the recording.
    let text = e.response.clone();
    let mut events: Vec<Bytes> = Vec::new();
    let mut start = 0;
    let raw = text.as_ref();
    let mut i = 0;
    while i + 1 < raw.len() {
        if raw[i] == b'\n' && raw[i + 1] == b'\n' {
            events.push(text.slice(start..i + 2));
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    if start < raw.len() {
        events.push(text.slice(start..));
    }
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(1);
    let st2 = st.clone();
    tokio::spawn(async move {
        for (n, ev) in events.into_iter().enumerate() {
            if cut_after == Some(n) {
                let _ = tx
                    .send(Err(std::io::Error::other("mock: connection cut")))
                    .await;
                return;
            }
            if tx.send(Ok(Frame::data(ev))).await.is_err() {
                st2.client_gone.fetch_add(1, Ordering::SeqCst);
                return;
            }
            if n == 0
                && hold
                && let Ok(p) = st2.release.acquire().await
            {
                p.forget();
            }
            if let Some(ms) = delay {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
        }
        st2.finished.fetch_add(1, Ordering::SeqCst);
    });
    let body = StreamBody::new(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|x| (x, rx))
    }));
    let mut r = Response::new(BodyExt::boxed(body));
    r.headers_mut()
        .insert("content-type", "text/event-stream".parse().expect("header"));
    r.headers_mut()
        .insert("request-id", "req_mock".parse().expect("header"));
    r
}
