//! Large bodies sent ahead (`Config::send_ahead`): a valid one reaches the upstream byte-identical
//! as a single request; one that needs a change is withdrawn mid-body, so the upstream only ever
//! receives the changed body whole; the next request of that conversation is read whole first;
//! a client that leaves mid-body leaves nothing the upstream could act on.

mod support;

use std::io::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use support::*;
use turnkeeper_proxy::SendAhead;

/// A question long enough (compiler output pasted in) that the body is sent ahead.
fn long_question() -> String {
    let mut q = String::from("Why does this fail to build?\n");
    for i in 0..2_000 {
        q.push_str(&format!(
            "error[E0308]: mismatched types at src/lib.rs:{i}:9\n"
        ));
    }
    q
}

/// The first turn of a conversation whose question is `q`, through the proxy: the assistant's
/// signed thinking + tool call, as the agent keeps it.
async fn first_turn(mock: &Mock, proxy: &turnkeeper_proxy::Proxy, q: &str) -> Value {
    let turn = tool_turn(mock, false);
    let got = post(
        &base(proxy),
        first_request(q, false).to_string(),
        &[("x-mock-reply", &turn.id)],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    response_content(&turn.response, false)
}

/// The follow-up with its tool result lost and an empty text block left: it needs AN-05 and
/// AN-08.
fn damaged(q: &str, content: &Value) -> Value {
    let mut d = follow_up(q, content, false);
    d["messages"][2] = json!({"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "never mind, cancel that"}]});
    d
}

fn ahead(proxy: &turnkeeper_proxy::Proxy, result: &str) -> u64 {
    proxy.metrics().get(
        "sent_ahead_total",
        &[("route", "messages"), ("result", result)],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_large_body_goes_ahead_and_arrives_byte_identical_once() {
    let Some((mock, proxy)) = start(|c| c.send_ahead = SendAhead::Always).await else {
        return;
    };
    let q = long_question();
    let content = first_turn(&mock, &proxy, &q).await;
    let valid = follow_up(&q, &content, false).to_string();
    assert!(valid.len() > 64 * 1024, "{} bytes", valid.len());
    let before = mock.received().len();
    let got = post(&base(&proxy), valid.clone(), &[]).await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert_eq!(got.header("x-turnkeeper-repaired"), "");
    let received = mock.received();
    assert_eq!(received.len(), before + 1, "one upstream request");
    assert!(received[before] == valid.as_bytes(), "changed on the way");
    // Framed by its length, as the client sent it, not re-chunked.
    let headers = mock.received_headers();
    let h = |name: &str| {
        headers[before]
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(h("content-length"), Some(valid.len().to_string()));
    assert_eq!(h("transfer-encoding"), None);
    assert_eq!(mock.incomplete(), 0);
    // The first request and the follow-up, both over 64 KiB.
    assert_eq!(ahead(&proxy, "released"), 2);
    assert_eq!(ahead(&proxy, "withdrawn"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_needs_a_change_is_withdrawn_then_its_conversation_is_held() {
    let Some((mock, proxy)) = start(|c| c.send_ahead = SendAhead::Always).await else {
        return;
    };
    let q = long_question();
    let content = first_turn(&mock, &proxy, &q).await;
    let before = mock.received().len();

    let bad = damaged(&q, &content).to_string();
    let got = post(&base(&proxy), bad.clone(), &[]).await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert_eq!(got.header("x-turnkeeper-repaired"), "AN-05,AN-08");
    let received = mock.received();
    assert_eq!(received.len(), before + 1, "only the repaired body arrived");
    let sent: Value = serde_json::from_slice(&received[before]).expect("json");
    assert_eq!(sent["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(ahead(&proxy, "withdrawn"), 1);
    eventually("the withdrawn body is seen cut", || mock.incomplete() == 1).await;

    // The agent sends the same damaged conversation again: read whole, nothing withdrawn.
    let got = post(&base(&proxy), bad, &[]).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.header("x-turnkeeper-repaired"), "AN-05,AN-08");
    assert_eq!(ahead(&proxy, "held"), 1);
    assert_eq!(ahead(&proxy, "withdrawn"), 1);
    assert_eq!(mock.received().len(), before + 2);

    // Mended (a doctor ran), it is held once more, found valid, and goes ahead after that.
    let valid = follow_up(&q, &content, false).to_string();
    for n in 0..2 {
        let got = post(&base(&proxy), valid.clone(), &[]).await;
        assert_eq!(got.status, 200);
        assert!(mock.received().last().expect("sent") == valid.as_bytes());
        assert_eq!(ahead(&proxy, "held"), 2, "request {n}");
    }
    assert_eq!(
        ahead(&proxy, "released"),
        2,
        "the first request and the last"
    );
    assert_eq!(mock.incomplete(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_mid_body_leaves_the_upstream_nothing_whole() {
    let Some((mock, proxy)) = start(|c| c.send_ahead = SendAhead::Always).await else {
        return;
    };
    let body = first_request(&long_question(), false).to_string();
    let addr = proxy.local_addr();
    let half = body.len() / 2;
    let head = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nx-api-key: sk-ant-test-not-a-key\r\nanthropic-version: 2023-06-01\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let sent = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.write_all(head.as_bytes()).expect("head");
        s.write_all(&body.as_bytes()[..half])
            .expect("half the body");
        s.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(300));
        // Gone, half the body sent.
    });
    sent.await.expect("client");
    eventually("the upstream sees the body cut", || mock.incomplete() == 1).await;
    assert!(mock.received().is_empty(), "nothing arrived whole");
    assert_eq!(ahead(&proxy, "released"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_send_ahead_a_large_body_is_read_whole_first() {
    let Some((mock, proxy)) = start(|c| c.send_ahead = SendAhead::Never).await else {
        return;
    };
    let q = long_question();
    let content = first_turn(&mock, &proxy, &q).await;
    let got = post(&base(&proxy), damaged(&q, &content).to_string(), &[]).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.header("x-turnkeeper-repaired"), "AN-05,AN-08");
    assert_eq!(proxy.metrics().total("sent_ahead_total"), 0);
    assert_eq!(mock.incomplete(), 0);
    assert_eq!(mock.received().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_loopback_upstream_gets_each_body_whole() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let q = long_question();
    let content = first_turn(&mock, &proxy, &q).await;
    let valid = follow_up(&q, &content, false).to_string();
    let got = post(&base(&proxy), valid.clone(), &[]).await;
    assert_eq!(got.status, 200);
    assert!(mock.received().last().expect("sent") == valid.as_bytes());
    assert_eq!(proxy.metrics().total("sent_ahead_total"), 0);
}
