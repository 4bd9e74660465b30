//! The proxy's benchmark (a plain binary: `cargo bench -p turnkeeper-proxy --bench proxy -- MODE`).
//!
//! The proxy runs as its own process (the release `turnkeeper` binary, `turnkeeper proxy`), in
//! front of the mock upstream of the tests (`tests/support/mock.rs`, replaying real recorded
//! responses from `../shared/real-traffic`), so its memory and file handles are its own.
//!
//! - `latency`: sequential requests of about 10 KB and 1 MB, each sent straight to the mock and
//!   through the proxy, alternately; prints p50 and p99 of both and of the difference.
//! - `streams`: 100 concurrent streaming requests, repeated; prints throughput and the proxy's
//!   peak and current resident memory.
//! - `soak [N]`: N requests (default 100,000), 16 at a time: three in four a 10 KB follow-up
//!   whose signed turn is looked up in the turn store, one in four a stream that is recorded;
//!   samples the proxy's resident memory and open file handles ten times.
//!
//! Build the binary first: `cargo build --release -p turnkeeper-cli`.

#[path = "../tests/support/mod.rs"]
#[allow(missing_docs)]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Exchange, Mock, response_content, tool_turn};

/// The proxy process, stopped when dropped.
struct ProxyProcess {
    child: Child,
    url: String,
}

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
        let mut child = Command::new(&bin)
            .args(["proxy", "--listen", "127.0.0.1:0", "--upstream", upstream])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the proxy starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_owned();
        // Keep draining stderr so the proxy never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        ProxyProcess { child, url }
    }

    fn status(&self, key: &str) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
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
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
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

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn timed(client: &reqwest::Client, url: &str, body: &str, id: &str) -> f64 {
    let t = Instant::now();
    let r = client
        .post(format!("{url}/v1/messages"))
        .header("content-type", "application/json")
        .header("x-mock-reply", id)
        .body(body.to_owned())
        .send()
        .await
        .expect("sent");
    let status = r.status();
    let b = r.bytes().await.expect("body");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&b));
    t.elapsed().as_secs_f64() * 1e3
}

/// The proxy's own `turnkeeper_proxy_added_seconds` sum and count (time spent before forwarding).
async fn added(client: &reqwest::Client, url: &str) -> (f64, f64) {
    let text = client
        .get(format!("{url}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let get = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (
        get("turnkeeper_proxy_added_seconds_sum "),
        get("turnkeeper_proxy_added_seconds_count "),
    )
}

async fn latency(mock: &Mock, smoke: bool) {
    let proxy = ProxyProcess::start(&mock.url(), &[]);
    let client = support::client();
    let turn = tool_turn(mock, false);
    println!(
        "| request | runs | direct p50 | direct p99 | proxy p50 | proxy p99 | added p50 | added p99 | of which before forwarding (mean) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, size, runs) in [("10 KB", 10_000usize, 400usize), ("1 MB", 1_000_000, 100)] {
        let runs = if smoke { 3 } else { runs };
        let body = request_of_size(&turn, size, false);
        for _ in 0..5 {
            timed(&client, &mock.url(), &body, &turn.id).await;
            timed(&client, &proxy.url, &body, &turn.id).await;
        }
        let (sum0, n0) = added(&client, &proxy.url).await;
        let (mut direct, mut through, mut extra) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let d = timed(&client, &mock.url(), &body, &turn.id).await;
            let p = timed(&client, &proxy.url, &body, &turn.id).await;
            direct.push(d);
            through.push(p);
            extra.push(p - d);
        }
        let (sum1, n1) = added(&client, &proxy.url).await;
        let own = (sum1 - sum0) / (n1 - n0).max(1.0) * 1e3;
        for v in [&mut direct, &mut through, &mut extra] {
            v.sort_by(f64::total_cmp);
        }
        println!(
            "| {label} ({} bytes) | {runs} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {own:.3} ms |",
            body.len(),
            pct(&direct, 0.5),
            pct(&direct, 0.99),
            pct(&through, 0.5),
            pct(&through, 0.99),
            pct(&extra, 0.5),
            pct(&extra, 0.99)
        );
    }
}

async fn streams(mock: &Mock) {
    let proxy = ProxyProcess::start(&mock.url(), &[]);
    let turn = tool_turn(mock, true);
    let client = Arc::new(support::client());
    let rss0 = proxy.rss_kib();
    let rounds = 20;
    let t = Instant::now();
    for round in 0..rounds {
        let mut tasks = Vec::new();
        for n in 0..100 {
            let client = client.clone();
            let url = proxy.url.clone();
            let id = turn.id.clone();
            let body = json!({
                "model": "claude-sonnet-4-5", "max_tokens": 4096, "stream": true,
                "thinking": {"type": "enabled", "budget_tokens": 2048},
                "messages": [{"role": "user", "content": format!("question {round}-{n}")}],
            })
            .to_string();
            tasks.push(tokio::spawn(async move {
                timed(&client, &url, &body, &id).await
            }));
        }
        for t in tasks {
            t.await.expect("task");
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "| concurrent streams | streams | wall | throughput | proxy RSS before | proxy RSS after | proxy peak RSS |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| 100 | {} | {secs:.2} s | {:.0} streams/s | {} KiB | {} KiB | {} KiB |",
        rounds * 100,
        f64::from(rounds * 100) / secs,
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
                        timed(&client, &url, &body, &sid).await;
                    } else {
                        timed(&client, &url, &small, &jid).await;
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
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    // `cargo bench` passes `--bench`; `cargo test --benches` (verify's smoke run) does not, and
    // then every mode runs a few requests only.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let mode = args
        .first()
        .map(String::as_str)
        .unwrap_or(if smoke { "smoke" } else { "latency" })
        .to_owned();
    let Some(exchanges) = support::exchanges() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mock = Mock::start(exchanges).await;
        match mode.as_str() {
            "latency" => latency(&mock, smoke).await,
            "smoke" => {
                latency(&mock, true).await;
                soak(&mock, 64).await;
            }
            "streams" => streams(&mock).await,
            "soak" => {
                let n = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(100_000);
                soak(&mock, n).await;
            }
            "all" => {
                latency(&mock, smoke).await;
                streams(&mock).await;
            }
            other => eprintln!("unknown mode {other}: latency, streams, soak [N], all"),
        }
    });
    // Let the proxy process go before the runtime drops the mock.
    std::thread::sleep(Duration::from_millis(10));
}
