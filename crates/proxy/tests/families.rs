//! The proxy's Chat Completions, Responses and Gemini routes end to end, over real HTTP on
//! loopback, against the mock upstream replaying each family's real recorded responses and
//! rejecting what each real API rejects (`support/mock.rs`); and the fixes to what real clients
//! showed on every route (an idle upstream connection, encoded bodies, clients that leave).

mod support;

use std::io::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use support::*;

/// Every request each API accepted passes through byte-identical, on every spelling of its
/// route, and its recorded response (JSON or stream) comes back byte-identical.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_accepted_real_request_of_each_family_passes_byte_identical() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let b = base(&proxy);
    let mut per_family = std::collections::BTreeMap::<String, usize>::new();
    let exchanges: Vec<Exchange> = mock
        .exchanges()
        .iter()
        .filter(|e| e.family != "anthropic")
        .cloned()
        .collect();
    for (n, e) in exchanges.iter().enumerate() {
        let before = mock.received().len();
        let got = post_to(
            &b,
            &path_of(e, n),
            e.request.clone(),
            &[("x-mock-reply", &e.id)],
        )
        .await;
        assert_eq!(
            got.status,
            200,
            "{} ({}): {}",
            e.id,
            path_of(e, n),
            String::from_utf8_lossy(&got.body)
        );
        let received = mock.received();
        assert_eq!(received.len(), before + 1, "{}: one upstream request", e.id);
        assert!(
            received[before] == e.request,
            "{}: the request was changed",
            e.id
        );
        assert!(got.body == e.response, "{}: the response was changed", e.id);
        assert_eq!(got.header("x-turnkeeper-repaired"), "", "{}", e.id);
        *per_family.entry(e.family.clone()).or_default() += 1;
    }
    assert!(per_family["openai-chat"] > 100, "{per_family:?}");
    assert!(per_family["openai-responses"] > 20, "{per_family:?}");
    assert!(per_family["gemini"] > 15, "{per_family:?}");
    let m = proxy.metrics();
    for (route, family) in [
        ("chat", "openai-chat"),
        ("responses", "openai-responses"),
        ("gemini", "gemini"),
    ] {
        assert_eq!(
            m.get(
                "forwarded_unchanged_total",
                &[("route", route), ("reason", "valid")]
            ),
            per_family[family] as u64,
            "{route}"
        );
        assert_eq!(m.added_count(route), per_family[family] as u64);
        // The judging is part of the added time, and takes some of it.
        let (added, judged) = m.added_and_judged_seconds(route);
        assert!(
            judged > 0.0 && judged <= added,
            "{route}: {judged} of {added}"
        );
    }
    assert_eq!(m.total("repairs_total"), 0);
}

/// The first recorded request of `family` (for `model` when given) whose body holds `needle`.
fn recorded<'a>(mock: &'a Mock, family: &str, model: &str, needle: &str) -> &'a Exchange {
    mock.exchanges()
        .iter()
        .find(|e| {
            e.family == family
                && e.model.contains(model)
                && String::from_utf8_lossy(&e.request).contains(needle)
        })
        .unwrap_or_else(|| panic!("no recorded {family} request for {model} with {needle}"))
}

/// A DeepSeek tool turn whose `reasoning_content` the agent dropped is rejected by DeepSeek
/// with its exact text; through the proxy it arrives with the field DeepSeek documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deepseek_tool_turn_without_reasoning_content_arrives_accepted() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let e = recorded(&mock, "openai-chat", "deepseek-reasoner", "\"tool_calls\"");
    let mut body: Value = serde_json::from_slice(&e.request).expect("json");
    let mut dropped = 0;
    for m in body["messages"].as_array_mut().expect("messages") {
        if m["role"] == "assistant"
            && m.get("tool_calls").is_some()
            && let Some(o) = m.as_object_mut()
        {
            dropped += usize::from(o.remove("reasoning_content").is_some());
        }
    }
    assert!(
        dropped > 0,
        "{}: the recording replays reasoning_content",
        e.id
    );
    let damaged = body.to_string();
    let direct = post_to(&mock.url(), "/chat/completions", damaged.clone(), &[]).await;
    assert_eq!(direct.status, 400);
    let msg = direct.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        msg.starts_with(
            "Missing `reasoning_content` field in the assistant message at message index"
        ),
        "{msg}"
    );
    let got = post_to(
        &base(&proxy),
        "/chat/completions",
        damaged,
        &[("x-mock-reply", &e.id)],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    let repaired = got.header("x-turnkeeper-repaired").to_owned();
    assert!(repaired.starts_with("DS-"), "{repaired}");
    let sent: Value = serde_json::from_slice(mock.received().last().expect("sent")).expect("json");
    for m in sent["messages"].as_array().expect("messages") {
        if m["role"] == "assistant" && m.get("tool_calls").is_some() {
            assert!(m.get("reasoning_content").is_some(), "{m}");
        }
    }
}

/// Sends `steps` (bodies of one conversation, each answered with the recording `id`) to a proxy
/// that keeps readings and to one that keeps none, in turn: the upstream gets the same bytes from
/// both and both report the same repairs. Returns the repairs reported at each step.
async fn same_warm_and_cold(
    mock: &Mock,
    warm: &turnkeeper_proxy::Proxy,
    cold: &turnkeeper_proxy::Proxy,
    path: &str,
    id: &str,
    steps: &[String],
) -> Vec<String> {
    let mut reported = Vec::new();
    for (n, body) in steps.iter().enumerate() {
        let mut sent = Vec::new();
        let mut repaired = Vec::new();
        for proxy in [warm, cold] {
            let got = post_to(&base(proxy), path, body.clone(), &[("x-mock-reply", id)]).await;
            assert_eq!(
                got.status,
                200,
                "{path} step {n}: {}",
                String::from_utf8_lossy(&got.body)
            );
            repaired.push(got.header("x-turnkeeper-repaired").to_owned());
            sent.push(mock.received().last().expect("sent").clone());
        }
        assert!(
            sent[0] == sent[1],
            "{path} step {n}: the upstream got different bodies"
        );
        assert_eq!(repaired[0], repaired[1], "{path} step {n}");
        reported.push(repaired.swap_remove(0));
    }
    reported
}

/// A Chat and a Responses conversation read against the proxy's reading of its last request
/// are judged as when read whole: the recorded request, then the same conversation damaged
/// (DeepSeek's `reasoning_content` dropped from its tool turns; a reasoning item's following
/// call removed), then the recorded request again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_and_responses_read_against_the_last_request_are_judged_the_same() {
    let Some((mock, warm)) = start_all(|_| {}).await else {
        return;
    };
    let cold = proxy_for(&mock, |c| c.keep_readings = 0).await;

    let e = recorded(&mock, "openai-chat", "deepseek-reasoner", "\"tool_calls\"");
    let recorded_body = String::from_utf8(e.request.to_vec()).expect("utf-8");
    let mut body: Value = serde_json::from_slice(&e.request).expect("json");
    for m in body["messages"].as_array_mut().expect("messages") {
        if m["role"] == "assistant"
            && m.get("tool_calls").is_some()
            && let Some(o) = m.as_object_mut()
        {
            o.remove("reasoning_content");
        }
    }
    let steps = [recorded_body.clone(), body.to_string(), recorded_body];
    let reported =
        same_warm_and_cold(&mock, &warm, &cold, "/chat/completions", &e.id, &steps).await;
    assert_eq!(reported[0], "");
    assert!(reported[1].starts_with("DS-"), "{reported:?}");
    assert_eq!(reported[2], "");

    let (e, damaged) = orphaned_reasoning(&mock);
    let recorded_body = String::from_utf8(e.request.to_vec()).expect("utf-8");
    let steps = [recorded_body.clone(), damaged, recorded_body];
    let reported = same_warm_and_cold(&mock, &warm, &cold, "/v1/responses", &e.id, &steps).await;
    assert_eq!(reported[0], "");
    assert!(reported[1].contains("OR-01"), "{reported:?}");
    assert_eq!(reported[2], "");

    // What was moved over. Chat: nothing for the damaged body (the recording has a space after
    // each comma and colon, serde_json writes none, so no message is the same bytes); its reading
    // went beside the first one's, and the recorded request again was read against the first:
    // all 7 messages. Responses: the damaged body's first two items are the recording's bytes,
    // so its reading took the first one's place, and the recorded request again shares those
    // two with it: 2 + 2.
    let reused = |p: &turnkeeper_proxy::Proxy, route: &str| {
        p.metrics()
            .get("messages_reused_total", &[("route", route)])
    };
    assert_eq!(reused(&warm, "chat"), 7);
    assert_eq!(reused(&warm, "responses"), 2 + 2);
    assert_eq!(reused(&cold, "chat") + reused(&cold, "responses"), 0);
}

/// A recorded Responses follow-up with a reasoning item followed by its function call, and the
/// same body with that call (and its output) removed: the reasoning item is left orphaned.
fn orphaned_reasoning(mock: &Mock) -> (&Exchange, String) {
    let e = mock
        .exchanges()
        .iter()
        .find(|e| {
            e.family == "openai-responses" && {
                let v: Value = serde_json::from_slice(&e.request).unwrap_or(Value::Null);
                v["input"].as_array().is_some_and(|items| {
                    items.windows(2).any(|w| {
                        w[0]["type"] == "reasoning"
                            && w[0]["id"].is_string()
                            && w[1]["type"] == "function_call"
                    })
                })
            }
        })
        .expect("a recorded follow-up with reasoning and its call");
    let mut body: Value = serde_json::from_slice(&e.request).expect("json");
    let items = body["input"].as_array_mut().expect("input");
    let at = items
        .windows(2)
        .position(|w| w[0]["type"] == "reasoning" && w[1]["type"] == "function_call")
        .expect("pair");
    let call_id = items[at + 1]["call_id"].clone();
    items.remove(at + 1);
    items.retain(|it| !(it["type"] == "function_call_output" && it["call_id"] == call_id));
    (e, body.to_string())
}

/// A Responses follow-up whose reasoning item lost the item it produced is rejected with
/// OpenAI's text; through the proxy the orphan goes and the request is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphaned_responses_reasoning_item_is_repaired() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let (e, damaged) = orphaned_reasoning(&mock);
    let direct = post_to(&mock.url(), "/v1/responses", damaged.clone(), &[]).await;
    assert_eq!(direct.status, 400);
    let msg = direct.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        msg.ends_with("of type 'reasoning' was provided without its required following item."),
        "{msg}"
    );
    let got = post_to(
        &base(&proxy),
        "/v1/responses",
        damaged,
        &[("x-mock-reply", &e.id)],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert!(
        got.header("x-turnkeeper-repaired").contains("OR-01"),
        "{:?}",
        got.headers
    );
    assert_eq!(
        proxy.metrics().get(
            "repairs_total",
            &[("route", "responses"), ("rule", "OR-01")]
        ),
        1
    );
}

/// An unsigned first function call of the current turn on Gemini 3 is rejected with Gemini's
/// text; through the proxy the request is repaired under the model the path names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsigned_gemini_3_function_call_is_repaired() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let e = recorded(&mock, "gemini", "gemini-3", "\"functionResponse\"");
    let mut body: Value = serde_json::from_slice(&e.request).expect("json");
    let mut stripped = 0;
    for c in body["contents"].as_array_mut().expect("contents") {
        for p in c["parts"].as_array_mut().into_iter().flatten() {
            if p.get("functionCall").is_some()
                && let Some(o) = p.as_object_mut()
            {
                stripped += usize::from(o.remove("thoughtSignature").is_some());
            }
        }
    }
    assert!(stripped > 0);
    let damaged = body.to_string();
    let path = format!("/v1beta/models/{}:generateContent", e.model);
    let direct = post_to(&mock.url(), &path, damaged.clone(), &[]).await;
    assert_eq!(direct.status, 400);
    let msg = direct.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        msg.starts_with("Function call is missing a thought_signature in functionCall parts."),
        "{msg}"
    );
    let got = post_to(&base(&proxy), &path, damaged, &[("x-mock-reply", &e.id)]).await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert!(
        got.header("x-turnkeeper-repaired").contains("GM-"),
        "{:?}",
        got.headers
    );
}

/// The signatures of the `functionCall` parts of `body` (Gemini contents), in order.
fn call_signatures(body: &[u8]) -> Vec<Option<String>> {
    let v: Value = serde_json::from_slice(body).expect("json");
    v["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
        .filter(|p| p.get("functionCall").is_some())
        .map(|p| p["thoughtSignature"].as_str().map(str::to_owned))
        .collect()
}

/// A Gemini 3 function call whose signature the client dropped is re-signed from the turn
/// store: the proxy recorded the response that made the call (a JSON `generateContent` reply,
/// and an `alt=sse` stream), and the follow-up that lost the signature reaches the upstream with
/// the signature Gemini sent, not the dummy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_call_that_lost_its_signature_is_re_signed_from_the_store() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let b = base(&proxy);
    let cases = [
        (
            "fantasy--TestGoogleCommon-gemini-3-pro-preview-multi_tool__",
            "generateContent",
        ),
        (
            "fantasy--TestGoogleCommon-gemini-3-pro-preview-multi_tool_streaming__",
            "streamGenerateContent?alt=sse",
        ),
    ];
    for (n, (stem, method)) in cases.into_iter().enumerate() {
        let find = |k: usize| {
            mock.exchanges()
                .iter()
                .find(|e| e.family == "gemini" && e.id == format!("{stem}{k}"))
                .unwrap_or_else(|| panic!("no recorded {stem}{k}"))
                .clone()
        };
        let (first, next) = (find(0), find(1));
        let path = format!("/v1beta/models/{}:{method}", first.model);
        // The first request: Gemini answers with a signed call, and the proxy records it.
        let got = post_to(
            &b,
            &path,
            first.request.clone(),
            &[("x-mock-reply", &first.id)],
        )
        .await;
        assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
        assert!(
            got.body == first.response,
            "{}: the response came back as sent",
            first.id
        );
        // (Each case records two responses: this one, and the follow-up's answer.)
        eventually("the Gemini response is recorded", || {
            proxy.metrics().get(
                "records_total",
                &[("route", "gemini"), ("result", "stored")],
            ) == 2 * n as u64 + 1
        })
        .await;
        // The follow-up, with every call's signature dropped by the client.
        let signed = call_signatures(&next.request);
        assert!(signed[0].is_some(), "{}: the recording replays it", next.id);
        let mut body: Value = serde_json::from_slice(&next.request).expect("json");
        for c in body["contents"].as_array_mut().expect("contents") {
            for p in c["parts"].as_array_mut().into_iter().flatten() {
                if p.get("functionCall").is_some()
                    && let Some(o) = p.as_object_mut()
                {
                    o.remove("thoughtSignature");
                }
            }
        }
        let damaged = body.to_string();
        let direct = post_to(&mock.url(), &path, damaged.clone(), &[]).await;
        assert_eq!(direct.status, 400, "{}: the API rejects it", next.id);
        let got = post_to(&b, &path, damaged, &[("x-mock-reply", &next.id)]).await;
        assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
        assert_eq!(got.header("x-turnkeeper-repaired"), "GM-01", "{}", next.id);
        let sent = mock.received().last().expect("sent").clone();
        // The first call has the signature Gemini sent with it (the one the client had replayed
        // in the recording); the parallel call after it stays unsigned, as Gemini sent it.
        assert_eq!(
            call_signatures(&sent),
            vec![signed[0].clone(), None],
            "{}",
            next.id
        );
        let recorded_sig = signed[0].as_deref().expect("signed");
        assert!(
            String::from_utf8_lossy(&first.response).contains(recorded_sig),
            "{}: the signature is the response's own",
            first.id
        );
    }
    let m = proxy.metrics();
    assert_eq!(
        m.get(
            "store_lookups_total",
            &[("route", "gemini"), ("result", "hit")]
        ),
        2
    );
    assert_eq!(
        m.get("repairs_total", &[("route", "gemini"), ("rule", "GM-01")]),
        2
    );
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).expect("write");
    e.finish().expect("gzip")
}

/// A gzip body is judged decoded: valid, it goes as the client sent it (still encoded);
/// damaged, it is repaired and goes decoded, without the `content-encoding` header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_body_is_judged_and_repaired() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let e = recorded(&mock, "openai-chat", "deepseek-reasoner", "\"tool_calls\"");
    let valid = gzip(&e.request);
    let got = post_to(
        &base(&proxy),
        "/chat/completions",
        valid.clone(),
        &[("x-mock-reply", &e.id), ("content-encoding", "gzip")],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert!(mock.received().last().expect("sent") == &valid[..]);
    let h = mock.received_headers();
    assert!(
        h.last()
            .expect("one")
            .iter()
            .any(|(k, v)| k == "content-encoding" && v == "gzip")
    );
    assert_eq!(got.header("x-turnkeeper-repaired"), "");
    let m = proxy.metrics();
    assert_eq!(
        m.get("decoded_total", &[("route", "chat"), ("encoding", "gzip")]),
        1
    );
    assert_eq!(
        m.get(
            "forwarded_unchanged_total",
            &[("route", "chat"), ("reason", "valid")]
        ),
        1
    );

    let mut body: Value = serde_json::from_slice(&e.request).expect("json");
    for m in body["messages"].as_array_mut().expect("messages") {
        if let Some(o) = m.as_object_mut() {
            o.remove("reasoning_content");
        }
    }
    let got = post_to(
        &base(&proxy),
        "/chat/completions",
        gzip(body.to_string().as_bytes()),
        &[("x-mock-reply", &e.id), ("content-encoding", "gzip")],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert!(got.header("x-turnkeeper-repaired").starts_with("DS-"));
    let h = mock.received_headers();
    assert!(
        !h.last()
            .expect("one")
            .iter()
            .any(|(k, _)| k == "content-encoding")
    );
    let sent: Value =
        serde_json::from_slice(mock.received().last().expect("sent")).expect("decoded json");
    assert_eq!(sent["model"], body["model"]);
}

/// A client that gives up before the response headers (the upstream silent before its first
/// byte) is counted in /metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_before_the_headers_is_counted() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let e = recorded(&mock, "openai-responses", "gpt-5", "\"input\"");
    let impatient = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(200))
        .build()
        .expect("client");
    let r = impatient
        .post(format!("{}/v1/responses", base(&proxy)))
        .header("content-type", "application/json")
        .header("x-mock-reply", &e.id)
        .header("x-mock-wait-ms", "1500")
        .body(e.request.clone())
        .send()
        .await;
    assert!(r.is_err(), "the client timed out");
    eventually("the proxy counts the client gone", || {
        proxy
            .metrics()
            .get("clients_gone_total", &[("route", "responses")])
            == 1
    })
    .await;
    let text = client()
        .get(format!("{}/metrics", base(&proxy)))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        text.contains("turnkeeper_proxy_clients_gone_total{route=\"responses\"} 1\n"),
        "{text}"
    );
}

/// An upstream that answers one request per connection and then closes it as the next request
/// arrives (what an idle timeout does to a pooled connection): the proxy sends that request
/// again on a fresh connection, and no client sees a 502.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pooled_connection_closed_by_the_upstream_never_reaches_the_client() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": []}).to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let body = body.clone();
            tokio::spawn(async move {
                let mut served = 0;
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if buf.len() < end + 4 + len {
                        continue;
                    }
                    buf.drain(..end + 4 + len);
                    if served == 1 {
                        // The second request on this connection: closed, as an idle timeout
                        // closes a connection the client has just written to.
                        return;
                    }
                    served += 1;
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n{body}",
                        body.len()
                    );
                    if sock.write_all(resp.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let upstream = format!("http://{addr}");
    let proxy = turnkeeper_proxy::Proxy::start(turnkeeper_proxy::Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        upstream: upstream.clone(),
        upstream_openai: upstream.clone(),
        upstream_gemini: upstream,
        ..turnkeeper_proxy::Config::default()
    })
    .await
    .expect("proxy");
    let req =
        json!({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}).to_string();
    for n in 0..6 {
        let got = post_to(&base(&proxy), "/v1/chat/completions", req.clone(), &[]).await;
        assert_eq!(
            got.status,
            200,
            "request {n}: {}",
            String::from_utf8_lossy(&got.body)
        );
    }
    let m = proxy.metrics();
    assert!(
        m.get(
            "upstream_retries_total",
            &[("route", "chat"), ("result", "ok")]
        ) >= 1,
        "{}",
        m.render()
    );
    assert_eq!(m.total("upstream_errors_total"), 0);
}
