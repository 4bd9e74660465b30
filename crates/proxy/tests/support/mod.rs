//! What the proxy's tests share: the mock upstream, a proxy in front of it, a client, a real
//! `redis-server` on loopback.

#![allow(dead_code)]

pub mod mock;

#[path = "../../../testkit/src/shared.rs"]
mod shared;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};
use turnkeeper_proxy::{Config, Proxy};

pub use mock::{Exchange, Mock, load_exchanges, load_family, response_content};

/// The recorded exchanges, or `None` (with one printed line) when `../shared` is absent.
pub fn exchanges() -> Option<Vec<Exchange>> {
    let dir = shared::shared_dir("real-traffic")?;
    Some(load_exchanges(&dir.join("anthropic")))
}

/// The recorded exchanges of every family the proxy reads (Anthropic, Chat, Responses, Gemini),
/// or `None` (with one printed line) when `../shared` is absent.
pub fn all_exchanges() -> Option<Vec<Exchange>> {
    let dir = shared::shared_dir("real-traffic")?;
    let mut all = Vec::new();
    for f in ["anthropic", "openai-chat", "openai-responses", "gemini"] {
        all.extend(load_family(&dir, f));
    }
    Some(all)
}

/// A mock of every family, and a proxy in front of it (all three upstreams the mock).
pub async fn start_all(tune: impl FnOnce(&mut Config)) -> Option<(Mock, Proxy)> {
    let mock = Mock::start(all_exchanges()?).await;
    let proxy = proxy_for(&mock, tune).await;
    Some((mock, proxy))
}

/// `POST base + path` with `body` and `headers`, read whole.
pub async fn post_to(
    base: &str,
    path: &str,
    body: impl Into<Bytes>,
    headers: &[(&str, &str)],
) -> Got {
    let mut rb = client()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-test-not-a-key")
        .body(body.into());
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let r = rb.send().await.expect("request sent");
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let body = r.bytes().await.expect("body read");
    Got {
        status,
        headers,
        body,
    }
}

/// The path a recorded exchange of a family is sent to (Chat alternates the two spellings).
pub fn path_of(e: &Exchange, n: usize) -> String {
    match e.family.as_str() {
        "openai-chat" if n.is_multiple_of(2) => "/v1/chat/completions".to_owned(),
        "openai-chat" => "/chat/completions".to_owned(),
        "openai-responses" if n.is_multiple_of(2) => "/v1/responses".to_owned(),
        "openai-responses" => "/responses".to_owned(),
        "gemini" => {
            let method = if e.sse {
                "streamGenerateContent?alt=sse"
            } else {
                "generateContent"
            };
            format!("/v1beta/models/{}:{method}", e.model)
        }
        _ => "/v1/messages".to_owned(),
    }
}

/// A mock, and a proxy in front of it configured by `tune`.
pub async fn start(tune: impl FnOnce(&mut Config)) -> Option<(Mock, Proxy)> {
    let mock = Mock::start(exchanges()?).await;
    let proxy = proxy_for(&mock, tune).await;
    Some((mock, proxy))
}

/// A proxy on a free loopback port in front of `mock`.
pub async fn proxy_for(mock: &Mock, tune: impl FnOnce(&mut Config)) -> Proxy {
    let mut c = Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        upstream: mock.url(),
        upstream_openai: mock.url(),
        upstream_gemini: mock.url(),
        ..Config::default()
    };
    tune(&mut c);
    Proxy::start(c).await.expect("proxy starts")
}

/// A plain HTTP client (no proxy from the environment).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// A response, read whole.
#[derive(Debug)]
pub struct Got {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Bytes,
}

impl Got {
    /// A header's value, or "".
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// `POST /v1/messages` to `base` with `body`, the usual client headers and `headers` (the mock's
/// controls among them); the response as it starts, its body not yet read.
pub async fn send(
    base: &str,
    body: impl Into<Bytes>,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut rb = client()
        .post(format!("{base}/v1/messages"))
        .header("content-type", "application/json")
        .header("anthropic-version", "2023-06-01")
        .header("x-api-key", "sk-ant-test-not-a-key")
        .body(body.into());
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    rb.send().await.expect("request sent")
}

/// POSTs `body` to `base` + `/v1/messages` with `headers`, and reads the whole response.
pub async fn post(base: &str, body: impl Into<Bytes>, headers: &[(&str, &str)]) -> Got {
    let r = send(base, body, headers).await;
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let body = r.bytes().await.expect("body read");
    Got {
        status,
        headers,
        body,
    }
}

/// `http://ADDR` of a proxy.
pub fn base(p: &Proxy) -> String {
    format!("http://{}", p.local_addr())
}

/// The first exchange whose response is (or is not) a stream and whose content holds a signed
/// thinking block and a tool call: a turn an agent replays with the tool's result.
pub fn tool_turn(mock: &Mock, sse: bool) -> Exchange {
    mock.exchanges()
        .iter()
        .find(|e| {
            e.sse == sse && {
                let c = response_content(&e.response, e.sse);
                let types: Vec<&str> = c
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["type"].as_str())
                    .collect();
                types.first() == Some(&"thinking") && types.contains(&"tool_use")
            }
        })
        .cloned()
        .expect("the recorded traffic has a thinking + tool_use turn")
}

/// The first request of a conversation: one question, thinking on.
pub fn first_request(question: &str, stream: bool) -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "stream": stream,
        "messages": [{"role": "user", "content": question}],
    })
}

/// The follow-up an agent sends: the question, the assistant turn `content` (as the agent
/// kept it), and the result of every tool call in it.
pub fn follow_up(question: &str, content: &Value, stream: bool) -> Value {
    let results: Vec<Value> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| json!({"type": "tool_result", "tool_use_id": b["id"], "content": "18°C, light rain"}))
        .collect();
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "stream": stream,
        "messages": [
            {"role": "user", "content": question},
            {"role": "assistant", "content": content},
            {"role": "user", "content": results},
        ],
    })
}

/// The raw bytes of the `content` of message `i` of a request body.
pub fn raw_content(body: &[u8], i: usize) -> String {
    #[derive(serde::Deserialize)]
    struct Req<'a> {
        #[serde(borrow)]
        messages: Vec<Msg<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Msg<'a> {
        #[serde(borrow)]
        content: &'a serde_json::value::RawValue,
    }
    let r: Req<'_> = serde_json::from_slice(body).expect("a request body");
    r.messages[i].content.get().to_owned()
}

/// The raw bytes of a JSON response's `content`.
pub fn raw_response_content(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Resp<'a> {
        #[serde(borrow)]
        content: &'a serde_json::value::RawValue,
    }
    let r: Resp<'_> = serde_json::from_slice(body).expect("a response body");
    r.content.get().to_owned()
}

/// The raw bytes of each element of a JSON array.
pub fn raw_blocks(array: &str) -> Vec<String> {
    let v: Vec<&serde_json::value::RawValue> = serde_json::from_str(array).expect("an array");
    v.into_iter().map(|r| r.get().to_owned()).collect()
}

/// Waits (up to 5 s) until `cond` holds.
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A `redis-server` on a free loopback port, stopped when dropped.
pub struct Redis {
    child: Child,
    /// `redis://127.0.0.1:PORT/0`.
    pub url: String,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `redis-server` (Debian's package) when it is installed; otherwise prints one line and
/// answers `None`, or fails when `CI=true` (CI installs it).
pub fn redis() -> Option<Redis> {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok();
    if !found {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("redis-server is not installed, and CI=true requires it (.ci/run installs it)");
        }
        println!("skipped: redis-server is not installed (apt-get install redis-server)");
        return None;
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("free port")
        .local_addr()
        .expect("addr")
        .port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "redis-server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Redis {
        child,
        url: format!("redis://127.0.0.1:{port}/0"),
    })
}
