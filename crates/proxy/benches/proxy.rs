//! The proxy's benchmark (a plain binary: `cargo bench -p turnkeeper-proxy --bench proxy -- MODE`).
//!
//! The proxy runs as its own process (the release `turnkeeper` binary, `turnkeeper proxy`), in
//! front of the mock upstream of the tests (`tests/support/mock.rs`, replaying real recorded
//! responses from `../shared/real-traffic`), so its memory and file handles are its own.
//!
//! Each of the four routes is measured the same way (`--family anthropic|chat|responses|gemini|all`,
//! default `all`, one table per family): Anthropic `/v1/messages`, Chat `/v1/chat/completions`
//! and Responses `/v1/responses` (the proxy's `--upstream-openai`), Gemini
//! `/v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`
//! (`--upstream-gemini`), all three upstreams the mock.
//!
//! - `latency`: sequential requests of about 10 KB and 1 MB, each sent straight to the mock and
//!   through the proxy, alternately; prints p50 and p99 of both and of the difference, the
//!   proxy's time before forwarding (and of it, the time after the body's last byte: the
//!   judging), and the p50 added by a hop that reads nothing (`serve_hop`: each request received
//!   whole into one buffer and sent on unchanged), run twice: in threads of the bench's own
//!   process, and as a process of its own as the proxy is (this binary again, `hop UPSTREAM`):
//!   the floor of a store-and-forward proxy process on the same HTTP libraries here. Each
//!   request is a real recorded one whose conversation is grown to the size (Anthropic: text
//!   turns after a signed thinking + tool turn the mock issued; the others: earlier turns before
//!   a recorded follow-up that carries its reasoning, `reasoning_content`, reasoning items with
//!   `encrypted_content`, a signed `functionCall`), so it stays valid: before timing, one is sent
//!   through the proxy and must reach the mock byte-identical, unrepaired.
//! - `streams`: 100 concurrent streaming requests, repeated; prints throughput and the proxy's
//!   peak and current resident memory (one proxy process per family).
//! - `soak [N]`: N requests (default 100,000), 16 at a time: three in four a 10 KB follow-up
//!   whose signed turn is looked up in the turn store, one in four a stream that is recorded;
//!   samples the proxy's resident memory and open file handles ten times.
//!
//! Build the binary first: `cargo build --release -p turnkeeper-cli`. Under `cargo test
//! --benches` (no `--bench` argument) every mode runs a handful of requests per family and
//! asserts nothing about time.

#[path = "../tests/support/mod.rs"]
#[allow(missing_docs)]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Exchange, Mock, response_content, tool_turn};

/// A child process, stopped when dropped (also when the bench panics while it starts).
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The address a starting process says it listens on: the first word `http://127.0.0.1:...`
/// of its `lines`, each line handed to `keep` as it is read.
fn address(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    keep: &mut impl FnMut(&str),
) -> String {
    loop {
        let line = match lines.next() {
            Some(Ok(line)) => line,
            _ => panic!("the process exited before saying its address"),
        };
        keep(&line);
        if let Some(url) = line
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
        {
            return url.to_owned();
        }
    }
}

/// The proxy process, stopped when dropped.
struct ProxyProcess {
    child: Stopped,
    url: String,
}

impl ProxyProcess {
    fn start(upstream: &str, extra: &[&str]) -> ProxyProcess {
        let bin = std::env::var("TURNKEEPER_BIN")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| {
                let exe = std::env::current_exe().expect("exe");
                exe.parent()
                    .and_then(|d| d.parent())
                    .expect("target dir")
                    .join("turnkeeper")
            });
        assert!(
            bin.exists(),
            "{} is missing: run `cargo build --release -p turnkeeper-cli` first (or set TURNKEEPER_BIN)",
            bin.display()
        );
        let mut child = Stopped(
            Command::new(&bin)
                .args(["proxy", "--listen", "127.0.0.1:0", "--upstream", upstream])
                .args(["--upstream-openai", upstream, "--upstream-gemini", upstream])
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the proxy starts"),
        );
        let stderr = child.0.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        // `TURNKEEPER_BENCH_PROXY_LOG=FILE` (with the proxy's `TURNKEEPER_LOG`) keeps what the
        // proxy logs in FILE; the address is on the first line that names one.
        let mut log = std::env::var_os("TURNKEEPER_BENCH_PROXY_LOG")
            .and_then(|p| std::fs::File::create(p).ok())
            .map(std::io::BufWriter::new);
        let mut keep = move |line: &str| {
            if let Some(f) = log.as_mut() {
                use std::io::Write;
                let _ = writeln!(f, "{line}");
            }
        };
        let url = address(&mut lines, &mut keep);
        // Keep draining stderr so the proxy never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                keep(&line);
            }
        });
        ProxyProcess { child, url }
    }

    fn status(&self, key: &str) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.0.id()))
            .unwrap_or_default();
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    fn rss_kib(&self) -> u64 {
        self.status("VmRSS:")
    }

    fn peak_kib(&self) -> u64 {
        self.status("VmHWM:")
    }

    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.0.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

/// A hop that reads nothing: it receives each request whole (as the proxy must, to judge a body
/// before a byte of it goes on) and sends it unchanged to `upstream`, then answers with the
/// upstream's response. What any store-and-forward proxy adds on this machine, beside which the
/// proxy's own time is seen. Serves on a runtime of its own (two workers, as the proxy's on this
/// machine) and says its `http://127.0.0.1:PORT` through `tx`.
fn serve_hop(upstream: String, tx: std::sync::mpsc::Sender<String>) {
    use http_body_util::{BodyExt, Full};
    use hyper::body::Incoming;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("addr");
        tx.send(format!("http://{addr}"))
            .expect("the bench waits for the address");
        let client = support::client();
        support::mock::serve_each(listener, move |req: http::Request<Incoming>| {
            let (client, upstream) = (client.clone(), upstream.clone());
            async move {
                let (parts, mut body) = req.into_parts();
                let hint = parts
                    .headers
                    .get(http::header::CONTENT_LENGTH)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                let mut buf = bytes::BytesMut::with_capacity(hint);
                while let Some(Ok(frame)) = body.frame().await {
                    if let Ok(data) = frame.into_data() {
                        buf.extend_from_slice(&data);
                    }
                }
                let body = buf.freeze();
                let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
                let mut rb = client.post(format!("{upstream}{path}")).body(body);
                for name in ["content-type", "x-mock-reply", "x-mock-link-mbps"] {
                    if let Some(v) = parts.headers.get(name) {
                        rb = rb.header(name, v.clone());
                    }
                }
                let (status, bytes) = match rb.send().await {
                    Ok(r) => (r.status(), r.bytes().await.unwrap_or_default()),
                    Err(_) => (http::StatusCode::BAD_GATEWAY, Default::default()),
                };
                let mut resp = http::Response::new(Full::new(bytes));
                *resp.status_mut() = status;
                resp
            }
        })
        .await;
    });
}

/// The hop in threads of the bench's own process (beside the client and the mock). Returns its
/// URL.
fn start_hop(upstream: String) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || serve_hop(upstream, tx));
    rx.recv().expect("the hop's address")
}

/// The hop as a process of its own, as the proxy is (this bench binary again, `hop UPSTREAM`):
/// the floor of a proxy process, crossing the same process boundaries. Stopped when dropped.
struct HopProcess {
    _child: Stopped,
    url: String,
}

impl HopProcess {
    fn start(upstream: &str) -> HopProcess {
        let exe = std::env::current_exe().expect("the bench's own path");
        let mut child = Stopped(
            Command::new(exe)
                .args(["hop", upstream])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the hop starts"),
        );
        let stdout = child.0.stdout.take().expect("stdout");
        let url = address(&mut BufReader::new(stdout).lines(), &mut |_| {});
        HopProcess { _child: child, url }
    }
}

/// A request of about `size` bytes: a signed thinking + tool turn the mock issued, its result,
/// then text turns carrying tool output until the size is reached.
fn request_of_size(turn: &Exchange, size: usize, stream: bool) -> String {
    let content = response_content(&turn.response, turn.sse);
    let results: Vec<Value> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| json!({"type": "tool_result", "tool_use_id": b["id"], "content": "src/main.rs\nsrc/lib.rs\nCargo.toml"}))
        .collect();
    let mut messages = vec![
        json!({"role": "user", "content": "List the files and then summarise the build log."}),
        json!({"role": "assistant", "content": content}),
        json!({"role": "user", "content": results}),
    ];
    let line = "warning: unused variable `x` --> src/lib.rs:12:9 | help: prefix it with an underscore: `_x` (\"quoted\", ünïcödé)\n";
    let mut n = 0;
    while serde_json::to_string(&messages)
        .map(|s| s.len())
        .unwrap_or(0)
        < size.saturating_sub(200)
    {
        let chunk = line.repeat((size / 40 / line.len()).max(1));
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("Step {n}: reading the next part of the log.")}]}));
        messages.push(json!({"role": "user", "content": [{"type": "text", "text": chunk}]}));
        n += 1;
    }
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "stream": stream,
        "messages": messages,
    })
    .to_string()
}

/// The conversation of `base` (a request of `family`) with `turns` more exchanges at its end
/// (the assistant's short answer, the user's next question): the request an agent sends `turns`
/// requests later.
fn request_grown(family: Family, base: &str, turns: usize) -> String {
    let mut v: Value = serde_json::from_str(base).expect("json");
    let (key, assistant, user) = match family {
        Family::Anthropic => ("messages", "assistant", "user"),
        Family::Chat => ("messages", "assistant", "user"),
        Family::Responses => ("input", "assistant", "user"),
        Family::Gemini => ("contents", "model", "user"),
    };
    let said = |role: &str, text: String| match family {
        Family::Anthropic => json!({"role": role, "content": [{"type": "text", "text": text}]}),
        // The reasoner's answer closes the recorded tool-calling turn: DeepSeek wants the
        // `reasoning_content` it sent with it back (DS-03), as an agent keeps it.
        Family::Chat if role == "assistant" => {
            json!({"role": role, "content": text, "reasoning_content": "The next part, then."})
        }
        Family::Chat | Family::Responses => json!({"role": role, "content": text}),
        Family::Gemini => json!({"role": role, "parts": [{"text": text}]}),
    };
    let messages = v[key].as_array_mut().expect("a conversation");
    for k in 0..turns {
        messages.push(said(assistant, format!("Done with part {k}.")));
        messages.push(said(user, format!("Go on with part {}.", k + 1)));
    }
    v.to_string()
}

/// A route of the proxy, measured the same way as the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Anthropic,
    Chat,
    Responses,
    Gemini,
}

impl Family {
    const ALL: [Family; 4] = [
        Family::Anthropic,
        Family::Chat,
        Family::Responses,
        Family::Gemini,
    ];

    /// The name `--family` takes.
    fn name(self) -> &'static str {
        match self {
            Family::Anthropic => "anthropic",
            Family::Chat => "chat",
            Family::Responses => "responses",
            Family::Gemini => "gemini",
        }
    }

    /// The proxy's `route` label in `/metrics`.
    fn route(self) -> &'static str {
        match self {
            Family::Anthropic => "messages",
            other => other.name(),
        }
    }

    /// The heading of its tables.
    fn title(self) -> &'static str {
        match self {
            Family::Anthropic => "Anthropic `POST /v1/messages`",
            Family::Chat => "Chat Completions `POST /v1/chat/completions`",
            Family::Responses => "Responses `POST /v1/responses`",
            Family::Gemini => {
                "Gemini `POST /v1beta/models/{model}:generateContent` (`:streamGenerateContent?alt=sse`)"
            }
        }
    }

    /// The recorded follow-up grown for `latency` (a tool turn with the reasoning its API needs
    /// back: DeepSeek `reasoning_content`, a gpt-5 reasoning item with `encrypted_content`, a
    /// Gemini 3 `functionCall` with its `thoughtSignature`), and the recorded stream `streams`
    /// replays. Anthropic's are found in the traffic (`support::tool_turn`).
    fn recorded(self) -> (&'static str, &'static str) {
        match self {
            Family::Anthropic => ("", ""),
            Family::Chat => (
                "pydantic-ai--test_deepseek-test_deepseek_deferred_capability_with_thinking__1",
                "fantasy--TestOpenAICompatibleThinking-zai-glm-4.5-thinking-streaming--adfbbc090a__0",
            ),
            Family::Responses => (
                "fantasy--TestOpenAIResponsesWithSummaryThinking-openai-gpt-5-thinking--caf105e7e1__1",
                "fantasy--TestOpenAIResponsesWithSummaryThinking-openai-gpt-5-thinking-streaming--caf105e7e1__0",
            ),
            Family::Gemini => (
                "fantasy--TestGoogleCommon-gemini-3-pro-preview-tool__1",
                "fantasy--TestGoogleCommon-gemini-3-pro-preview-multi_tool_streaming__0",
            ),
        }
    }
}

/// What a family's requests are made of: the recorded exchanges that answer them and the paths
/// they go to.
struct Case {
    family: Family,
    /// The exchange whose recorded (JSON) response answers the latency requests.
    reply: Exchange,
    /// The exchange whose recorded stream answers the stream requests.
    stream_reply: Exchange,
    path: String,
    stream_path: String,
}

impl Case {
    fn new(mock: &Mock, family: Family) -> Case {
        let find = |id: &str| {
            mock.exchanges()
                .iter()
                .find(|e| e.id == id)
                .unwrap_or_else(|| panic!("no recorded exchange {id} in real-traffic"))
                .clone()
        };
        let (reply, stream_reply) = match family {
            Family::Anthropic => (tool_turn(mock, false), tool_turn(mock, true)),
            other => {
                let (json_id, sse_id) = other.recorded();
                (find(json_id), find(sse_id))
            }
        };
        assert!(
            !reply.sse && stream_reply.sse,
            "{family:?}: JSON, then a stream"
        );
        let (path, stream_path) = match family {
            Family::Anthropic => ("/v1/messages".to_owned(), "/v1/messages".to_owned()),
            Family::Chat => (
                "/v1/chat/completions".to_owned(),
                "/v1/chat/completions".to_owned(),
            ),
            Family::Responses => ("/v1/responses".to_owned(), "/v1/responses".to_owned()),
            Family::Gemini => (
                format!("/v1beta/models/{}:generateContent", reply.model),
                format!(
                    "/v1beta/models/{}:streamGenerateContent?alt=sse",
                    stream_reply.model
                ),
            ),
        };
        Case {
            family,
            reply,
            stream_reply,
            path,
            stream_path,
        }
    }

    /// A valid request of about `size` bytes.
    fn request_of_size(&self, size: usize) -> String {
        match self.family {
            Family::Anthropic => request_of_size(&self.reply, size, false),
            family => grow(family, &self.reply.request, size),
        }
    }

    /// The first request of a conversation, streamed (`tag` makes each one different).
    fn stream_request(&self, tag: &str) -> String {
        let question = format!("question {tag}");
        let model = self.stream_reply.model.as_str();
        match self.family {
            Family::Anthropic => json!({
                "model": "claude-sonnet-4-5", "max_tokens": 4096, "stream": true,
                "thinking": {"type": "enabled", "budget_tokens": 2048},
                "messages": [{"role": "user", "content": question}],
            }),
            Family::Chat => json!({
                "model": model, "stream": true,
                "messages": [{"role": "user", "content": question}],
            }),
            Family::Responses => json!({
                "model": model, "stream": true, "store": false,
                "include": ["reasoning.encrypted_content"],
                "input": [{"role": "user", "content": [{"type": "input_text", "text": question}]}],
            }),
            Family::Gemini => json!({
                "contents": [{"role": "user", "parts": [{"text": question}]}],
            }),
        }
        .to_string()
    }
}

/// A line of tool output, repeated to grow a conversation.
const LOG_LINE: &str = "warning: unused variable `x` --> src/lib.rs:12:9 | help: prefix it with an underscore: `_x` (\"quoted\", ünïcödé)\n";

/// The recorded request of a Chat, Responses or Gemini follow-up, grown to about `size` bytes by
/// earlier turns (a user message carrying tool output, the assistant's short answer) put before
/// its conversation (after the system and developer messages), so the recorded tool turn with its
/// reasoning stays the latest.
fn grow(family: Family, recorded: &[u8], size: usize) -> String {
    let mut v: Value = serde_json::from_slice(recorded).expect("a recorded request");
    let key = match family {
        Family::Chat => "messages",
        Family::Responses => "input",
        _ => "contents",
    };
    let original = v[key].as_array().cloned().expect("a conversation");
    let lead = original
        .iter()
        .take_while(|m| m["role"] == "system" || m["role"] == "developer")
        .count();
    let (head, tail) = original.split_at(lead);
    let chunk = LOG_LINE.repeat((size / 40 / LOG_LINE.len()).max(1));
    let mut history: Vec<Value> = Vec::new();
    for n in 0.. {
        v[key] = Value::Array(
            head.iter()
                .chain(history.iter())
                .chain(tail.iter())
                .cloned()
                .collect(),
        );
        let body = v.to_string();
        if body.len() >= size.saturating_sub(200) {
            return body;
        }
        let answer = format!("Step {n}: reading the next part of the log.");
        match family {
            Family::Chat => {
                history.push(json!({"role": "user", "content": chunk}));
                history.push(json!({"role": "assistant", "content": answer}));
            }
            Family::Responses => {
                history.push(
                    json!({"role": "user", "content": [{"type": "input_text", "text": chunk}]}),
                );
                history.push(json!({"role": "assistant", "content": answer}));
            }
            _ => {
                history.push(json!({"role": "user", "parts": [{"text": chunk}]}));
                history.push(json!({"role": "model", "parts": [{"text": answer}]}));
            }
        }
    }
    unreachable!("the loop returns")
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Milliseconds from sending `body` to `url` + `path` to the last byte of a 200 response.
async fn timed(client: &reqwest::Client, url: &str, path: &str, body: &str, id: &str) -> f64 {
    // `TURNKEEPER_BENCH_LINK_MBPS=N`: the mock reads each body as an API N megabytes a second
    // away would receive it (the upload to a remote upstream), for the proxied request and the
    // direct one alike. Read from the environment once.
    static LINK: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let link = LINK.get_or_init(|| {
        std::env::var("TURNKEEPER_BENCH_LINK_MBPS")
            .ok()
            .filter(|v| !v.is_empty())
    });
    let mut rb = client
        .post(format!("{url}{path}"))
        .header("content-type", "application/json")
        .header("x-mock-reply", id);
    if let Some(mbps) = link {
        rb = rb.header("x-mock-link-mbps", mbps.as_str());
    }
    let t = Instant::now();
    let r = rb.body(body.to_owned()).send().await.expect("sent");
    let status = r.status();
    let b = r.bytes().await.expect("body");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&b));
    t.elapsed().as_secs_f64() * 1e3
}

/// Sends `body` through the proxy once and checks it reached the mock byte-identical, unrepaired:
/// a valid request, so what is timed is the proxy's pass-through.
async fn assert_forwarded_as_sent(mock: &Mock, proxy: &str, path: &str, body: &str, id: &str) {
    let before = mock.received().len();
    let got = support::post_to(proxy, path, body.to_owned(), &[("x-mock-reply", id)]).await;
    assert_eq!(
        got.status,
        200,
        "{path}: {}",
        String::from_utf8_lossy(&got.body)
    );
    assert_eq!(
        got.header("x-turnkeeper-repaired"),
        "",
        "{path}: repaired (a body of {} bytes)",
        body.len()
    );
    let received = mock.received();
    assert_eq!(received.len(), before + 1, "{path}: one upstream request");
    assert!(
        received[before] == body.as_bytes(),
        "{path}: the proxy changed a valid request of {} bytes",
        body.len()
    );
}

/// The proxy's time before forwarding on `route`, from one `/metrics`: the sum and count of
/// `turnkeeper_proxy_added_seconds`, and the sum of `turnkeeper_proxy_judged_seconds` (its part
/// after the body's last byte).
async fn added(client: &reqwest::Client, url: &str, route: &str) -> (f64, f64, f64) {
    let text = client
        .get(format!("{url}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let get = |name: &str| {
        let prefix = format!("turnkeeper_proxy_{name}{{route=\"{route}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (
        get("added_seconds_sum"),
        get("added_seconds_count"),
        get("judged_seconds_sum"),
    )
}

async fn latency(mock: &Mock, family: Family, smoke: bool) {
    // `TURNKEEPER_BENCH_PROXY_ARGS="--flag value"` runs the proxy with other options.
    let extra = std::env::var("TURNKEEPER_BENCH_PROXY_ARGS").unwrap_or_default();
    let extra: Vec<&str> = extra.split_whitespace().collect();
    let proxy = ProxyProcess::start(&mock.url(), &extra);
    let client = support::client();
    let hop = start_hop(mock.url());
    let hop_process = HopProcess::start(&mock.url());
    let case = Case::new(mock, family);
    let (path, id) = (case.path.as_str(), case.reply.id.as_str());
    println!(
        "| request | runs | direct p50 | direct p99 | proxy p50 | proxy p99 | added p50 | added p99 | of which before forwarding (mean) | of that, after the body's last byte (mean) | a hop that reads nothing: added p50, in the bench's process | the same hop, a process of its own |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    // `TURNKEEPER_BENCH_LATENCY_RUNS=N`: N requests of 1 MB (and 4 N of 10 KB) instead of 100,
    // for comparisons finer than the run-to-run spread of 100.
    let n = std::env::var("TURNKEEPER_BENCH_LATENCY_RUNS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(100);
    // Each row: a label and the bodies sent, one per request (the last one again when there
    // are fewer): the same body every time (a conversation replayed as it was), or a
    // conversation a turn longer at each request (what an agent sends).
    let mut rows: Vec<(String, Vec<String>, usize)> = Vec::new();
    for (label, size, runs) in [("10 KB", 10_000usize, 4 * n), ("1 MB", 1_000_000, n)] {
        rows.push((label.to_owned(), vec![case.request_of_size(size)], runs));
    }
    {
        let runs = if smoke { 4 } else { n + 5 };
        let base = case.request_of_size(1_000_000);
        let grown = (0..runs).map(|k| request_grown(family, &base, k)).collect();
        rows.push(("1 MB, a turn longer each time".to_owned(), grown, n));
    }
    for (label, bodies, runs) in &rows {
        let (runs, warm) = if smoke { (3, 1) } else { (*runs, 5) };
        let body_at = |k: usize| bodies[k.min(bodies.len() - 1)].as_str();
        // Valid, the first body and a grown one alike: what is timed is the pass-through.
        assert_forwarded_as_sent(mock, &proxy.url, path, body_at(0), id).await;
        assert_forwarded_as_sent(mock, &proxy.url, path, body_at(2), id).await;
        for k in 0..warm {
            timed(&client, &mock.url(), path, body_at(k), id).await;
            timed(&client, &proxy.url, path, body_at(k), id).await;
            timed(&client, &hop, path, body_at(k), id).await;
            timed(&client, &hop_process.url, path, body_at(k), id).await;
        }
        let (sum0, n0, judged0) = added(&client, &proxy.url, family.route()).await;
        let (mut direct, mut through, mut extra) = (Vec::new(), Vec::new(), Vec::new());
        let (mut hopped, mut hopped_apart) = (Vec::new(), Vec::new());
        for k in warm..warm + runs {
            let body = body_at(k);
            let d = timed(&client, &mock.url(), path, body, id).await;
            let p = timed(&client, &proxy.url, path, body, id).await;
            let h = timed(&client, &hop, path, body, id).await;
            let a = timed(&client, &hop_process.url, path, body, id).await;
            direct.push(d);
            through.push(p);
            extra.push(p - d);
            hopped.push(h - d);
            hopped_apart.push(a - d);
        }
        let (sum1, n1, judged1) = added(&client, &proxy.url, family.route()).await;
        assert!(
            n1 - n0 >= runs as f64,
            "the proxy counted {} requests on route {}",
            n1 - n0,
            family.route()
        );
        let own = (sum1 - sum0) / (n1 - n0).max(1.0) * 1e3;
        let judged = (judged1 - judged0) / (n1 - n0).max(1.0) * 1e3;
        // The mock keeps every body it received; let the megabytes go.
        mock.clear_received();
        for v in [
            &mut direct,
            &mut through,
            &mut extra,
            &mut hopped,
            &mut hopped_apart,
        ] {
            v.sort_by(f64::total_cmp);
        }
        println!(
            "| {label} ({} bytes) | {runs} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {own:.3} ms | {judged:.3} ms | {:.3} ms | {:.3} ms |",
            body_at(warm).len(),
            pct(&direct, 0.5),
            pct(&direct, 0.99),
            pct(&through, 0.5),
            pct(&through, 0.99),
            pct(&extra, 0.5),
            pct(&extra, 0.99),
            pct(&hopped, 0.5),
            pct(&hopped_apart, 0.5)
        );
    }
}

async fn streams(mock: &Mock, family: Family, smoke: bool) {
    let proxy = ProxyProcess::start(&mock.url(), &[]);
    let case = Arc::new(Case::new(mock, family));
    let first = case.stream_request("first");
    assert_forwarded_as_sent(
        mock,
        &proxy.url,
        &case.stream_path,
        &first,
        &case.stream_reply.id,
    )
    .await;
    let client = Arc::new(support::client());
    let rss0 = proxy.rss_kib();
    let (rounds, width) = if smoke { (1, 4) } else { (20, 100) };
    let t = Instant::now();
    for round in 0..rounds {
        let mut tasks = Vec::new();
        for n in 0..width {
            let client = client.clone();
            let url = proxy.url.clone();
            let case = case.clone();
            tasks.push(tokio::spawn(async move {
                let body = case.stream_request(&format!("{round}-{n}"));
                timed(
                    &client,
                    &url,
                    &case.stream_path,
                    &body,
                    &case.stream_reply.id,
                )
                .await
            }));
        }
        for t in tasks {
            t.await.expect("task");
        }
    }
    let secs = t.elapsed().as_secs_f64();
    mock.clear_received();
    println!(
        "| concurrent streams | streams | recorded stream | wall | throughput | proxy RSS before | proxy RSS after | proxy peak RSS |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    let events = case
        .stream_reply
        .response
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"data:"))
        .count();
    println!(
        "| {width} | {} | {events} events, {} bytes | {secs:.2} s | {:.0} streams/s | {} KiB | {} KiB | {} KiB |",
        rounds * width,
        case.stream_reply.response.len(),
        f64::from(rounds * width) / secs,
        rss0,
        proxy.rss_kib(),
        proxy.peak_kib()
    );
}

async fn soak(mock: &Mock, total: usize) {
    let proxy = ProxyProcess::start(&mock.url(), &["--store-limit", "2000"]);
    let json_turn = tool_turn(mock, false);
    let sse_turn = tool_turn(mock, true);
    let client = Arc::new(support::client());
    let small = Arc::new(request_of_size(&json_turn, 10_000, false));
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    println!("| requests | proxy RSS | open fds | elapsed |");
    println!("|---:|---:|---:|---:|");
    let t = Instant::now();
    let step = (total / 10).max(1);
    let mut next_mark = step;
    let concurrency = 16;
    let mut sent = 0;
    while sent < total {
        let batch = (total - sent).min(concurrency * 16);
        let mut tasks = Vec::new();
        for k in 0..concurrency {
            let client = client.clone();
            let url = proxy.url.clone();
            let small = small.clone();
            let (jid, sid) = (json_turn.id.clone(), sse_turn.id.clone());
            let done = done.clone();
            let per = batch / concurrency + usize::from(k < batch % concurrency);
            let base = sent;
            tasks.push(tokio::spawn(async move {
                for i in 0..per {
                    let n = base + k * 1000 + i;
                    if n % 4 == 0 {
                        let body = json!({
                            "model": "claude-sonnet-4-5", "max_tokens": 4096, "stream": true,
                            "thinking": {"type": "enabled", "budget_tokens": 2048},
                            "messages": [{"role": "user", "content": format!("soak {n}")}],
                        })
                        .to_string();
                        timed(&client, &url, "/v1/messages", &body, &sid).await;
                    } else {
                        timed(&client, &url, "/v1/messages", &small, &jid).await;
                    }
                    done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }));
        }
        for t in tasks {
            t.await.expect("task");
        }
        sent += batch;
        if sent >= next_mark {
            println!(
                "| {sent} | {} KiB | {} | {:.1} s |",
                proxy.rss_kib(),
                proxy.fds(),
                t.elapsed().as_secs_f64()
            );
            next_mark += step;
        }
    }
    println!(
        "\n{} requests in {:.1} s ({:.0}/s); proxy peak RSS {} KiB",
        done.load(std::sync::atomic::Ordering::Relaxed),
        t.elapsed().as_secs_f64(),
        total as f64 / t.elapsed().as_secs_f64(),
        proxy.peak_kib()
    );
}

fn main() {
    // `hop UPSTREAM`: the bench's own hop process (`HopProcess`), serving until it is killed.
    let mut raw = std::env::args().skip(1);
    if raw.next().as_deref() == Some("hop") {
        let upstream = raw.next().expect("hop UPSTREAM");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            if let Ok(url) = rx.recv() {
                println!("{url}");
            }
        });
        serve_hop(upstream, tx);
        return;
    }
    // `MODE [N] [--family F]`; cargo's own flags (`--bench`) are passed through and skipped.
    let mut args = Vec::new();
    let mut family = "all".to_owned();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        if a == "--family" {
            family = it.next().unwrap_or_default();
        } else if let Some(f) = a.strip_prefix("--family=") {
            family = f.to_owned();
        } else if !a.starts_with("--") {
            args.push(a);
        }
    }
    let families: Vec<Family> = if family == "all" {
        Family::ALL.to_vec()
    } else {
        match Family::ALL.into_iter().find(|f| f.name() == family) {
            Some(f) => vec![f],
            None => {
                eprintln!("unknown family {family}: anthropic, chat, responses, gemini, all");
                std::process::exit(2);
            }
        }
    };
    // `cargo bench` passes `--bench`; `cargo test --benches` (verify's smoke run) does not, and
    // then every mode runs a few requests per family only.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let mode = args
        .first()
        .map(String::as_str)
        .unwrap_or(if smoke { "smoke" } else { "latency" })
        .to_owned();
    let Some(exchanges) = support::all_exchanges() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mock = Mock::start(exchanges).await;
        let (lat, str_) = match mode.as_str() {
            "latency" => (true, false),
            "streams" => (false, true),
            "all" | "smoke" => (true, true),
            "soak" => (false, false),
            other => {
                eprintln!("unknown mode {other}: latency, streams, soak [N], all");
                return;
            }
        };
        for &f in &families {
            if lat || str_ {
                println!("\n### {}\n", f.title());
            }
            if lat {
                latency(&mock, f, smoke).await;
            }
            if lat && str_ {
                println!();
            }
            if str_ {
                streams(&mock, f, smoke).await;
            }
        }
        match mode.as_str() {
            "smoke" => {
                println!("\n### Soak (Anthropic)\n");
                soak(&mock, 64).await;
            }
            "soak" => {
                let n = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(100_000);
                soak(&mock, n).await;
            }
            _ => {}
        }
    });
    // Let the proxy process go before the runtime drops the mock.
    std::thread::sleep(Duration::from_millis(10));
}
