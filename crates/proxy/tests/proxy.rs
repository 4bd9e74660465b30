//! The proxy end to end, over real HTTP on loopback, against a mock upstream that replays real
//! recorded responses and rejects what the real API rejects (`support/mock.rs`).

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::*;
use turnkeeper_proxy::{Config, Proxy, ProxyError, StoreConfig};

/// Every request the API accepted passes through byte-identical, and its recorded response
/// comes back byte-identical, JSON and streams alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_accepted_real_request_passes_byte_identical() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let exchanges = mock.exchanges().to_vec();
    assert!(exchanges.len() > 250, "{} exchanges", exchanges.len());
    let b = base(&proxy);
    for (n, e) in exchanges.iter().enumerate() {
        // Several recordings share a request; the header names the one whose response to send.
        let got = post(&b, e.request.clone(), &[("x-mock-reply", &e.id)]).await;
        assert_eq!(
            got.status,
            200,
            "{}: {}",
            e.id,
            String::from_utf8_lossy(&got.body)
        );
        let received = mock.received();
        assert_eq!(received.len(), n + 1, "{}: one upstream request each", e.id);
        assert!(
            received[n] == e.request,
            "{}: the request was changed on the way",
            e.id
        );
        assert!(
            got.body == e.response,
            "{}: the response was changed on the way back",
            e.id
        );
        assert_eq!(got.header("x-turnkeeper-repaired"), "", "{}", e.id);
    }
    let m = proxy.metrics();
    assert_eq!(
        m.get(
            "forwarded_unchanged_total",
            &[("route", "messages"), ("reason", "valid")]
        ),
        exchanges.len() as u64
    );
    assert_eq!(m.total("repairs_total"), 0);
    // The recordings come in conversations, and each request was read against the reading of
    // the one before it: those readings were used (and the bytes above say they changed nothing).
    assert!(
        m.get("messages_reused_total", &[("route", "messages")]) > 0,
        "no reading was reused"
    );
}

/// A conversation read against the proxy's reading of its last request (its earlier messages
/// compared, not scanned again) is judged as one read whole: a proxy that keeps readings and one
/// that keeps none send the upstream the same bytes and report the same repairs, for a valid
/// follow-up and for one the agent damaged two turns back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_read_against_its_last_request_is_judged_the_same() {
    let Some((mock, warm)) = start(|_| {}).await else {
        return;
    };
    let cold = proxy_for(&mock, |c| c.keep_readings = 0).await;
    let turn = tool_turn(&mock, false);
    let content = response_content(&turn.response, false);
    let q = "What's the weather in Paris?";
    let valid = follow_up(q, &content, false);
    let mut longer = valid.clone();
    let more = longer["messages"].as_array_mut().expect("messages");
    more.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Sunny, 21 °C."}]}));
    more.push(json!({"role": "user", "content": "And in Lyon?"}));
    // The same conversation, with an empty text block left in the tool result's message.
    let mut damaged = longer.clone();
    damaged["messages"][2]["content"]
        .as_array_mut()
        .expect("blocks")
        .push(json!({"type": "text", "text": ""}));
    let steps = [
        (first_request(q, false), Some(turn.id.as_str())),
        (valid, None),
        (longer, None),
        (damaged, None),
    ];
    for (n, (body, reply)) in steps.iter().enumerate() {
        let headers: Vec<(&str, &str)> = reply.iter().map(|id| ("x-mock-reply", *id)).collect();
        let mut sent = Vec::new();
        let mut repaired = Vec::new();
        for proxy in [&warm, &cold] {
            let got = post(&base(proxy), body.to_string(), &headers).await;
            assert_eq!(
                got.status,
                200,
                "step {n}: {}",
                String::from_utf8_lossy(&got.body)
            );
            repaired.push(got.header("x-turnkeeper-repaired").to_owned());
            sent.push(mock.received().last().expect("sent").clone());
        }
        assert!(
            sent[0] == sent[1],
            "step {n}: the upstream got different bodies"
        );
        assert_eq!(repaired[0], repaired[1], "step {n}");
        let expect = if n == 3 { "AN-05" } else { "" };
        assert_eq!(repaired[0], expect, "step {n}");
    }
    let reused = |p: &Proxy| {
        p.metrics()
            .get("messages_reused_total", &[("route", "messages")])
    };
    // Steps 2 and 3 repeat the messages of the step before (the first's one, the second's
    // three); step 4 repeats the third's five but the changed one.
    assert_eq!(reused(&warm), 1 + 3 + 4);
    assert_eq!(reused(&cold), 0);
}

/// A damaged request (an empty text block, a tool call left without its result) would be
/// rejected; through the proxy it arrives valid, and the response says which rules acted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_request_arrives_valid() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let turn = tool_turn(&mock, false);
    let content = response_content(&turn.response, false);
    let q = "What's the weather in Paris?";
    let first = post(
        &base(&proxy),
        first_request(q, false).to_string(),
        &[("x-mock-reply", &turn.id)],
    )
    .await;
    assert_eq!(first.status, 200);
    // The agent lost the tool's result (the user cancelled the call) and left an empty text
    // block behind; the conversation went on.
    let mut damaged = follow_up(q, &content, false);
    damaged["messages"][2] = json!({"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "never mind, cancel that"}]});
    let more = damaged["messages"].as_array_mut().expect("messages");
    more.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Cancelled."}]}));
    more.push(json!({"role": "user", "content": "What about Lyon?"}));
    let direct = post(&mock.url(), damaged.to_string(), &[]).await;
    assert_eq!(direct.status, 400, "the mock rejects it as the API would");
    let msg = direct.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        msg.contains("`tool_use` ids were found without `tool_result` blocks immediately after"),
        "{msg}"
    );
    let got = post(&base(&proxy), damaged.to_string(), &[]).await;
    assert_eq!(
        got.status,
        200,
        "{:?}: {}",
        got.headers,
        String::from_utf8_lossy(&got.body)
    );
    assert_eq!(got.header("x-turnkeeper-repaired"), "AN-05,AN-08");
    let sent: Value = serde_json::from_slice(mock.received().last().expect("sent")).expect("json");
    assert_eq!(sent["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(
        proxy
            .metrics()
            .get("repairs_total", &[("route", "messages"), ("rule", "AN-08")]),
        1
    );
}

/// How an agent may spoil a turn before sending it back.
fn spoil(content: &Value, how: &str) -> Value {
    let mut blocks = content.as_array().cloned().unwrap_or_default();
    match how {
        "reordered" => blocks.rotate_left(1),
        "trimmed" => {
            blocks.retain(|b| b["type"] != "text");
            if let Some(t) = blocks[0]["thinking"].as_str() {
                blocks[0]["thinking"] =
                    Value::String(t.trim_end().trim_end_matches('.').to_owned());
            }
        }
        "unsigned" => {
            if let Some(o) = blocks[0].as_object_mut() {
                o.remove("signature");
            }
        }
        _ => unreachable!("{how}"),
    }
    Value::Array(blocks)
}

/// A turn the client reordered, trimmed or stripped of its signature arrives as the provider
/// sent it, for JSON and streamed responses alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_altered_turn_arrives_as_the_bytes_the_upstream_sent() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    for sse in [false, true] {
        for how in ["reordered", "trimmed", "unsigned"] {
            let turn = tool_turn(&mock, sse);
            let content = response_content(&turn.response, sse);
            let q = format!("weather, {how}, stream={sse}");
            let first = post(
                &base(&proxy),
                first_request(&q, sse).to_string(),
                &[("x-mock-reply", &turn.id)],
            )
            .await;
            assert_eq!(first.status, 200);
            let spoiled = follow_up(&q, &spoil(&content, how), sse);
            assert_ne!(spoiled["messages"][1]["content"], content, "{how}");
            let direct = post(
                &mock.url(),
                spoiled.to_string(),
                &[("x-mock-reply", &turn.id)],
            )
            .await;
            assert_eq!(
                direct.status, 400,
                "{how}, stream={sse}: the mock rejects the spoiled turn"
            );
            let got = post(
                &base(&proxy),
                spoiled.to_string(),
                &[("x-mock-reply", &turn.id)],
            )
            .await;
            assert_eq!(
                got.status,
                200,
                "{how}, stream={sse}: {}",
                String::from_utf8_lossy(&got.body)
            );
            assert_eq!(
                got.header("x-turnkeeper-restored"),
                "1",
                "{how}, stream={sse}"
            );
            let sent = mock.received().last().cloned().expect("sent");
            let restored: Value = serde_json::from_str(&raw_content(&sent, 1)).expect("json");
            assert_eq!(restored, content, "{how}, stream={sse}");
            if !sse {
                // Each block's bytes, as the provider sent them (the separators between blocks
                // are the request's own).
                assert_eq!(
                    raw_blocks(&raw_content(&sent, 1)),
                    raw_blocks(&raw_response_content(&turn.response)),
                    "{how}"
                );
            }
        }
    }
    assert_eq!(proxy.metrics().total("restores_total"), 6);
}

/// A 400 a repair can fix (a signature from elsewhere, which no local rule can judge) is
/// repaired and retried once: the client gets the 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recoverable_400_is_retried_once() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let turn = tool_turn(&mock, false);
    let mut content = response_content(&turn.response, false);
    // A plausible signature the API never issued for this thinking, and a tool id the store
    // has never seen (so there is nothing to restore from).
    let other = tool_turn(&mock, true);
    let foreign = response_content(&other.response, true)[0]["signature"].clone();
    content[0]["signature"] = foreign;
    for b in content.as_array_mut().expect("array") {
        if b["type"] == "tool_use" {
            b["id"] = json!("toolu_01NeverIssuedByTheApi0000");
        }
    }
    let req = follow_up("q", &content, false);
    let before = mock.received().len();
    let got = post(&base(&proxy), req.to_string(), &[]).await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert_eq!(got.header("x-turnkeeper-recovered"), "strip_thinking");
    assert_eq!(
        got.header("x-turnkeeper-error-kind"),
        "thinking_signature_invalid"
    );
    let received = mock.received();
    assert_eq!(received.len() - before, 2, "sent, rejected, retried once");
    let retried = String::from_utf8_lossy(&received[before + 1]).into_owned();
    assert!(
        !retried.contains("\"thinking\",\"thinking\""),
        "the foreign thinking was removed: {retried}"
    );
    assert_eq!(
        proxy.metrics().get(
            "recoveries_total",
            &[
                ("route", "messages"),
                ("action", "strip_thinking"),
                ("result", "2xx")
            ]
        ),
        1
    );

    // An error no repair can fix goes back as it came, after one attempt.
    let bad = json!({"model": "claude-sonnet-4-5", "max_tokens": 10, "stream": false});
    let before = mock.received().len();
    let got = post(&base(&proxy), bad.to_string(), &[]).await;
    assert_eq!(got.status, 400);
    assert_eq!(got.json()["error"]["message"], "messages: Field required");
    assert_eq!(mock.received().len() - before, 1);
    assert_eq!(got.header("x-turnkeeper-recovered"), "");
}

/// Claude Code 2.1.154+ sends mid-conversation `system` messages, which DeepSeek's
/// Anthropic-compatible endpoint refuses (CX-02). For a `deepseek-*` model the proxy folds them
/// into the user turn before sending; under a `claude-*` name (DeepSeek maps those too) the
/// request goes as it came, the endpoint's 400 is recovered by the same fold, and later
/// requests are folded before they are sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_message_deepseek_refuses_is_folded_into_the_user_turn() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let corpus = |name: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus/damaged")
            .join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .replacen(r#""stream":true"#, r#""stream":false"#, 1)
    };
    let sent = corpus("cx02_system_message_deepseek.json");
    let folded = corpus("cx02_system_message_deepseek.after.json");
    assert_ne!(sent, folded);

    let before = mock.received().len();
    let got = post(&base(&proxy), sent.clone(), &[]).await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert_eq!(got.header("x-turnkeeper-repaired"), "CX-02");
    let received = mock.received();
    assert_eq!(received.len() - before, 1, "repaired before it was sent");
    assert_eq!(String::from_utf8_lossy(&received[before]), folded);

    let as_claude = |body: &str| {
        body.replacen(
            r#""model":"deepseek-v4-pro""#,
            r#""model":"claude-opus-4-8""#,
            1,
        )
    };
    let before = mock.received().len();
    let got = post(
        &base(&proxy),
        as_claude(&sent),
        &[("x-mock-endpoint", "deepseek")],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert_eq!(got.header("x-turnkeeper-error-kind"), "role_order");
    let received = mock.received();
    assert_eq!(received.len() - before, 2, "sent, refused, retried once");
    assert_eq!(String::from_utf8_lossy(&received[before]), as_claude(&sent));
    assert_eq!(
        String::from_utf8_lossy(&received[before + 1]),
        as_claude(&folded)
    );

    // The upstream has said it: from now on the proxy folds them before sending.
    let before = mock.received().len();
    let got = post(
        &base(&proxy),
        as_claude(&sent),
        &[("x-mock-endpoint", "deepseek")],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert_eq!(got.header("x-turnkeeper-repaired"), "CX-02");
    let received = mock.received();
    assert_eq!(received.len() - before, 1, "no second refusal");
    assert_eq!(
        String::from_utf8_lossy(&received[before]),
        as_claude(&folded)
    );
}

/// A stream's first event reaches the client while the upstream is still holding the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streams_first_event_arrives_before_the_upstream_finishes() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let turn = tool_turn(&mock, true);
    let r = send(
        &base(&proxy),
        first_request("hold", true).to_string(),
        &[("x-mock-reply", &turn.id), ("x-mock-hold", "1")],
    )
    .await;
    assert_eq!(r.status(), 200);
    let mut r = r;
    let first = tokio::time::timeout(Duration::from_secs(5), r.chunk())
        .await
        .expect("the first event arrived while the upstream holds the rest")
        .expect("chunk")
        .expect("data");
    assert!(
        first.starts_with(b"event: message_start"),
        "{:?}",
        String::from_utf8_lossy(&first)
    );
    assert_eq!(mock.streams_finished(), 0, "the upstream has not finished");
    mock.release();
    let mut all = first.to_vec();
    while let Some(c) = r.chunk().await.expect("chunk") {
        all.extend_from_slice(&c);
    }
    assert!(
        all == turn.response.as_ref(),
        "the stream arrives whole and unchanged"
    );
    eventually("the turn is recorded", || {
        proxy.metrics().get(
            "records_total",
            &[("route", "messages"), ("result", "stored")],
        ) == 1
    })
    .await;
}

/// An upstream that drops the connection mid-stream: the client sees a broken body, and
/// nothing is recorded, so a later request cannot be "restored" to half a turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_cut_mid_stream_leaves_no_record() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let turn = tool_turn(&mock, true);
    let r = send(
        &base(&proxy),
        first_request("cut", true).to_string(),
        &[("x-mock-reply", &turn.id), ("x-mock-cut-after", "4")],
    )
    .await;
    assert_eq!(r.status(), 200);
    let body = r.bytes().await;
    assert!(
        body.is_err(),
        "the client must see the body break, not a complete-looking one"
    );
    eventually("the abort is counted", || {
        proxy.metrics().get(
            "streams_aborted_total",
            &[("route", "messages"), ("side", "upstream")],
        ) == 1
    })
    .await;
    assert_eq!(proxy.metrics().total("records_total"), 0);
    // The turn was never recorded: a spoiled copy of it is not restored.
    let content = response_content(&turn.response, true);
    let spoiled = follow_up("cut", &spoil(&content, "reordered"), true);
    let got = post(&base(&proxy), spoiled.to_string(), &[]).await;
    assert_eq!(got.header("x-turnkeeper-restored"), "");
}

/// A client that goes away mid-stream: the proxy stops reading the upstream and records
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_mid_stream_leaves_no_record() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let turn = tool_turn(&mock, true);
    let mut r = send(
        &base(&proxy),
        first_request("leave", true).to_string(),
        &[
            ("x-mock-reply", &turn.id),
            ("x-mock-hold", "1"),
            ("x-mock-delay-ms", "30"),
        ],
    )
    .await;
    let first = r.chunk().await.expect("chunk").expect("data");
    assert!(first.starts_with(b"event: message_start"));
    drop(r);
    mock.release();
    eventually("the proxy notices the client left", || {
        proxy.metrics().get(
            "streams_aborted_total",
            &[("route", "messages"), ("side", "client")],
        ) == 1
    })
    .await;
    eventually("the upstream stream stops", || {
        mock.streams_cut_by_client() == 1
    })
    .await;
    assert_eq!(mock.streams_finished(), 0);
    assert_eq!(proxy.metrics().total("records_total"), 0);
}

/// Fifty streams at once, each arriving whole and recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_streams() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let turn = tool_turn(&mock, true);
    let b = base(&proxy);
    let mut tasks = Vec::new();
    for n in 0..50 {
        let b = b.clone();
        let id = turn.id.clone();
        tasks.push(tokio::spawn(async move {
            post(
                &b,
                first_request(&format!("question {n}"), true).to_string(),
                &[("x-mock-reply", &id), ("x-mock-delay-ms", "2")],
            )
            .await
        }));
    }
    for t in tasks {
        let got = t.await.expect("task");
        assert_eq!(got.status, 200);
        assert!(got.body == turn.response, "each stream arrives whole");
    }
    assert_eq!(mock.streams_finished(), 50);
    assert_eq!(
        proxy.metrics().get(
            "records_total",
            &[("route", "messages"), ("result", "stored")]
        ),
        50
    );
}

/// Two proxies sharing one Redis restore each other's turns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_proxies_sharing_redis_restore_each_others_turns() {
    let Some(exchanges) = exchanges() else { return };
    let Some(redis) = redis() else { return };
    let mock = Mock::start(exchanges).await;
    let store = StoreConfig::Redis(redis.url.clone());
    let a = proxy_for(&mock, |c| c.store = store.clone()).await;
    let b = proxy_for(&mock, |c| c.store = store.clone()).await;
    for sse in [false, true] {
        let turn = tool_turn(&mock, sse);
        let content = response_content(&turn.response, sse);
        let q = format!("shared, stream={sse}");
        let first = post(
            &base(&a),
            first_request(&q, sse).to_string(),
            &[("x-mock-reply", &turn.id)],
        )
        .await;
        assert_eq!(first.status, 200);
        let spoiled = follow_up(&q, &spoil(&content, "unsigned"), sse);
        let got = post(
            &base(&b),
            spoiled.to_string(),
            &[("x-mock-reply", &turn.id)],
        )
        .await;
        assert_eq!(
            got.status,
            200,
            "stream={sse}: {}",
            String::from_utf8_lossy(&got.body)
        );
        assert_eq!(got.header("x-turnkeeper-restored"), "1");
        let sent = mock.received().last().cloned().expect("sent");
        let restored: Value = serde_json::from_str(&raw_content(&sent, 1)).expect("json");
        assert_eq!(restored, content);
    }
    assert_eq!(
        a.metrics().get(
            "records_total",
            &[("route", "messages"), ("result", "stored")]
        ),
        2
    );
    assert_eq!(
        b.metrics().get(
            "store_lookups_total",
            &[("route", "messages"), ("result", "hit")]
        ),
        2
    );
    // The keys carry a TTL.
    let client = redis::Client::open(redis.url.as_str()).expect("client");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("conn");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("turnkeeper:v1:turn:*")
        .query_async(&mut conn)
        .await
        .expect("keys");
    assert_eq!(keys.len(), 2);
    let ttl: i64 = redis::cmd("TTL")
        .arg(&keys[0])
        .query_async(&mut conn)
        .await
        .expect("ttl");
    assert!(ttl > 0 && ttl <= 7 * 24 * 3600, "{ttl}");
}

/// Every other path is forwarded untouched; `/metrics` is the proxy's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_paths_pass_and_metrics_answer() {
    let Some((mock, proxy)) = start(|_| {}).await else {
        return;
    };
    let r = client()
        .get(format!("{}/v1/models?limit=5", base(&proxy)))
        .header("x-api-key", "k")
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.text().await.expect("text"),
        r#"{"data":[],"has_more":false}"#
    );
    let seen = mock.received_headers();
    assert!(
        seen.last()
            .expect("one")
            .iter()
            .any(|(k, v)| k == "x-api-key" && v == "k")
    );
    let m = client()
        .get(format!("{}/metrics", base(&proxy)))
        .send()
        .await
        .expect("sent");
    assert_eq!(m.status(), 200);
    let text = m.text().await.expect("text");
    assert!(
        text.contains("turnkeeper_proxy_requests_total{route=\"other\"} 1\n"),
        "{text}"
    );
    assert!(text.contains("# TYPE turnkeeper_proxy_added_seconds histogram"));
}

/// A body over the limit, or one that is not a Messages request, goes as it came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_proxy_cannot_judge_goes_unchanged() {
    let Some((mock, proxy)) = start(|c| c.max_body = 512).await else {
        return;
    };
    let turn = tool_turn(&mock, false);
    let content = response_content(&turn.response, false);
    let mut damaged = follow_up("big", &content, false);
    damaged["messages"][2] = json!({"role": "user", "content": "x".repeat(1000)});
    let bytes = damaged.to_string();
    let got = post(&base(&proxy), bytes.clone(), &[]).await;
    assert_eq!(
        got.status, 400,
        "too large to repair: the upstream judges it as it came"
    );
    assert!(mock.received().last().expect("sent") == bytes.as_bytes());
    assert_eq!(
        proxy.metrics().get(
            "forwarded_unchanged_total",
            &[("route", "messages"), ("reason", "too_large")]
        ),
        1
    );
    let junk = "{\"messages\": [tru";
    let got = post(&base(&proxy), junk, &[]).await;
    assert_eq!(got.status, 400);
    assert!(mock.received().last().expect("sent") == junk.as_bytes());
    assert_eq!(
        proxy.metrics().get(
            "forwarded_unchanged_total",
            &[("route", "messages"), ("reason", "unparsable")]
        ),
        1
    );
}

/// The listen address is loopback unless remote access is asked for, and the upstream must be
/// an http(s) URL.
#[tokio::test]
async fn a_remote_listen_address_is_refused() {
    let c = Config {
        listen: "0.0.0.0:0".parse().expect("addr"),
        ..Config::default()
    };
    assert!(matches!(
        Proxy::start(c).await,
        Err(ProxyError::NotLoopback(_))
    ));
    let c = Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        upstream: "ftp://example".to_owned(),
        ..Config::default()
    };
    assert!(matches!(
        Proxy::start(c).await,
        Err(ProxyError::BadUpstream(_))
    ));
}

/// A directory store is private to the user and survives a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_store_is_private_and_survives_a_restart() {
    let Some(exchanges) = exchanges() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("turns");
    let mock = Mock::start(exchanges).await;
    let turn = tool_turn(&mock, false);
    let content = response_content(&turn.response, false);
    {
        let p = proxy_for(&mock, |c| c.store = StoreConfig::Dir(store.clone())).await;
        let first = post(
            &base(&p),
            first_request("restart", false).to_string(),
            &[("x-mock-reply", &turn.id)],
        )
        .await;
        assert_eq!(first.status, 200);
        p.shutdown().await;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&store).expect("dir").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        for f in std::fs::read_dir(&store).expect("ls").flatten() {
            assert_eq!(
                f.metadata().expect("meta").permissions().mode() & 0o777,
                0o600
            );
            let text = std::fs::read_to_string(f.path()).expect("read");
            assert!(!text.contains("sk-ant"), "no key in the store");
        }
    }
    let p = proxy_for(&mock, |c| c.store = StoreConfig::Dir(store.clone())).await;
    let got = post(
        &base(&p),
        follow_up("restart", &spoil(&content, "trimmed"), false).to_string(),
        &[("x-mock-reply", &turn.id)],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert_eq!(got.header("x-turnkeeper-restored"), "1");
}
