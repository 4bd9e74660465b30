//! The turn store on the Chat Completions and Responses routes, end to end against the mock
//! replaying real recorded exchanges (`../shared/real-traffic`): a response recorded as it
//! streams back gives the next request the reasoning its client dropped, a stream cut short on
//! either side records nothing, and a recoverable 400 is repaired with the store and retried
//! once.

mod support;

use serde_json::Value;
use support::*;
use turnkeeper_proxy::StoreConfig;

/// The end (exclusive) of the JSON string starting at `at` (its opening quote).
fn string_end(raw: &str, at: usize) -> usize {
    let b = raw.as_bytes();
    assert_eq!(b[at], b'"');
    let mut i = at + 1;
    while b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i + 1
}

/// `raw` without the span `start..end` of one member or array element and the comma that
/// separates it from its neighbour (the one before it, else the one after), as a client that
/// never had it would have written the body.
fn cut(raw: &str, start: usize, end: usize) -> String {
    let before = raw[..start].trim_end();
    if let Some(b) = before.strip_suffix(',') {
        format!("{b}{}", &raw[end..])
    } else {
        let after = raw[end..].trim_start();
        let after = after
            .strip_prefix(',')
            .expect("a separating comma")
            .trim_start();
        format!("{}{after}", &raw[..start])
    }
}

/// `raw` without the first `"reasoning_content"` member holding a non-empty string.
fn drop_reasoning_content(raw: &str) -> String {
    let key = "\"reasoning_content\"";
    let mut from = 0;
    loop {
        let at = from + raw[from..].find(key).expect("a reasoning_content member");
        let colon = at + key.len() + raw[at + key.len()..].find(':').expect("colon");
        let v = colon + 1 + (raw[colon + 1..].len() - raw[colon + 1..].trim_start().len());
        let end = string_end(raw, v);
        if end - v > 2 {
            return cut(raw, at, end);
        }
        from = end;
    }
}

/// `raw` without the first `input` item of type `reasoning` (an object opening with its `id`).
fn drop_reasoning_item(raw: &str) -> String {
    // The first reasoning item goes (the body is written again compactly: the comparison is by
    // JSON value, and a recorded body may be Python's json.dumps with its spaces).
    let mut v: Value = serde_json::from_str(raw).expect("json");
    let items = v["input"].as_array_mut().expect("input items");
    let at = items
        .iter()
        .position(|it| it["type"] == "reasoning")
        .expect("a reasoning item");
    items.remove(at);
    v.to_string()
}

/// A recorded pair (`<stem>__0` then `<stem>__1`), each request's model renamed as `model`
/// says: the follow-up, with the client's dropping applied, reaches the upstream as it was
/// recorded (the same JSON; `true` when byte for byte too: the client wrote the restored part
/// as the provider did).
async fn restored_case(
    mock: &Mock,
    proxy: &turnkeeper_proxy::Proxy,
    path: &str,
    stem: &str,
    model: (&str, &str),
    damage: fn(&str) -> String,
) -> (support::Got, bool) {
    let b = base(proxy);
    let first = mock.exchange(&format!("{stem}__0"));
    let first_req = with_model(
        std::str::from_utf8(&first.request).expect("utf-8"),
        model.0,
        model.1,
    );
    let got = post_to(
        &b,
        path,
        first_req,
        &[("x-mock-reply", &format!("{stem}__0"))],
    )
    .await;
    assert_eq!(
        got.status,
        200,
        "{stem}: {}",
        String::from_utf8_lossy(&got.body)
    );
    assert!(
        got.body == first.response,
        "{stem}: the response came back changed"
    );
    let follow = mock.exchange(&format!("{stem}__1"));
    let original = with_model(
        std::str::from_utf8(&follow.request).expect("utf-8"),
        model.0,
        model.1,
    );
    let damaged = damage(&original);
    assert_ne!(damaged, original);
    let got = post_to(
        &b,
        path,
        damaged,
        &[("x-mock-reply", &format!("{stem}__1"))],
    )
    .await;
    assert_eq!(
        got.status,
        200,
        "{stem}: {}",
        String::from_utf8_lossy(&got.body)
    );
    let sent = mock.received().last().expect("sent").clone();
    let mut sent_v: Value = serde_json::from_slice(&sent).expect("json");
    let mut want: Value = serde_json::from_str(&original).expect("json");
    // A Responses stream carries a reasoning item's `encrypted_content` three times, each
    // encrypted anew (`output_item.added`, `.done`, `response.completed`); the store keeps the
    // completed response's, the recorded client replayed the first. Each is the provider's.
    for v in [&mut sent_v, &mut want] {
        for it in v["input"].as_array_mut().into_iter().flatten() {
            if it["type"] == "reasoning"
                && let Some(enc) = it.get_mut("encrypted_content")
            {
                let text = enc.as_str().unwrap_or_default().to_owned();
                assert!(
                    first
                        .response
                        .windows(text.len())
                        .any(|w| w == text.as_bytes()),
                    "{stem}: an encrypted_content the provider never sent"
                );
                *enc = Value::Null;
            }
        }
    }
    assert_eq!(
        sent_v,
        want,
        "{stem}: the follow-up did not reach the upstream as recorded:\n{}",
        String::from_utf8_lossy(&sent)
    );
    (got, sent == original.as_bytes())
}

const KIMI_STREAM: &str = "fantasy--TestOpenAICompatibleThinking-avian-kimi-thinking-streaming";
const DEEPSEEK_JSON: &str =
    "pydantic-ai--test_deepseek-test_deepseek_deferred_capability_with_thinking";
/// A Responses tool loop whose follow-up sends its calls with their server ids (`fc_…`): without
/// its reasoning item such a call is rejected (OR-02), so the proxy puts the item back.
const RESPONSES_JSON: &str =
    "pydantic-ai--test_openai_responses-test_openai_responses_thinking_with_tool_calls";
/// A Responses tool loop recorded by fantasy (compact JSON, id-less calls).
const RESPONSES_FANTASY: &str =
    "fantasy--TestOpenAIResponsesWithSummaryThinking-openai-gpt-5-thinking--caf105e7e1";
const RESPONSES_STREAM: &str =
    "fantasy--TestOpenAIResponsesWithSummaryThinking-openai-gpt-5-thinking-streaming--caf105e7e1";

/// A Chat tool turn whose `reasoning_content` the client dropped reaches the upstream with the
/// reasoning the provider sent (a recorded stream, a recorded JSON response), byte-identical to
/// the recorded follow-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_chat_reasoning_content_is_restored_from_the_recorded_response() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    // Kimi under Moonshot's own model id (the recording went through a router, whose
    // `moonshotai/` name the rules leave to the router), and DeepSeek's own API.
    for (stem, model) in [
        (KIMI_STREAM, ("moonshotai/kimi-k2.5", "kimi-k2.5")),
        (DEEPSEEK_JSON, ("deepseek-reasoner", "deepseek-reasoner")),
    ] {
        let (got, identical) = restored_case(
            &mock,
            &proxy,
            "/v1/chat/completions",
            stem,
            model,
            drop_reasoning_content,
        )
        .await;
        let repaired = got.header("x-turnkeeper-repaired");
        assert!(
            repaired.contains("KM-01") || repaired.contains("DS-03"),
            "{stem}: {repaired}"
        );
        // The client wrote the reasoning back as the provider sent it: byte for byte.
        assert!(
            identical,
            "{stem}: not byte-identical to the recorded follow-up"
        );
    }
    let m = proxy.metrics();
    assert_eq!(
        m.get("records_total", &[("route", "chat"), ("result", "stored")]),
        4,
        "every complete response is recorded"
    );
    assert!(
        m.get(
            "store_lookups_total",
            &[("route", "chat"), ("result", "hit")]
        ) >= 2
    );
}

/// A Responses follow-up whose reasoning item the client dropped gets it back (OR-17), from a
/// recorded JSON response and a recorded stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_responses_reasoning_item_is_put_back() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    // Only a follow-up whose calls carry their server ids needs the item: fantasy's recorded
    // follow-ups (RESPONSES_STREAM) send id-less calls, which OpenAI accepts without their
    // reasoning, so such a request is forwarded as the client wrote it (OR-17 warns only).
    for (stem, identical_expected) in [(RESPONSES_JSON, false)] {
        let (got, identical) = restored_case(
            &mock,
            &proxy,
            "/v1/responses",
            stem,
            ("gpt-5", "gpt-5"),
            drop_reasoning_item,
        )
        .await;
        // The JSON recording is pretty-printed and the client's follow-up compact, and the
        // stream's client replayed another of the provider's encryptions: the item goes back as
        // the provider wrote it, so the bytes differ from the recorded follow-up's.
        assert_eq!(identical, identical_expected, "{stem}");
        assert!(
            got.header("x-turnkeeper-repaired").contains("OR-17"),
            "{stem}: {:?}",
            got.headers
        );
    }
    assert_eq!(
        proxy.metrics().get(
            "records_total",
            &[("route", "responses"), ("result", "stored")]
        ),
        2
    );
}

/// A store directory outlives the proxy: a second proxy on the same directory restores what the
/// first recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_directory_keeps_wire_turns_across_restarts() {
    let Some(exchanges) = all_exchanges() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mock = Mock::start(exchanges).await;
    let store = StoreConfig::Dir(dir.path().to_owned());
    let first = proxy_for(&mock, |c| c.store = store.clone()).await;
    let rename = |raw: &[u8]| {
        with_model(
            std::str::from_utf8(raw).expect("utf-8"),
            "deepseek-reasoner",
            "deepseek-reasoner",
        )
    };
    let e = mock.exchange(&format!("{DEEPSEEK_JSON}__0"));
    let got = post_to(
        &base(&first),
        "/chat/completions",
        rename(&e.request),
        &[("x-mock-reply", &e.id)],
    )
    .await;
    assert_eq!(got.status, 200);
    first.shutdown().await;
    let second = proxy_for(&mock, |c| c.store = store.clone()).await;
    let follow = mock.exchange(&format!("{DEEPSEEK_JSON}__1"));
    let damaged = drop_reasoning_content(&rename(&follow.request));
    let got = post_to(
        &base(&second),
        "/chat/completions",
        damaged,
        &[("x-mock-reply", &follow.id)],
    )
    .await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    assert!(mock.received().last().expect("sent") == &follow.request);
    assert_eq!(got.header("x-turnkeeper-repaired"), "DS-03");
}

/// A stream cut short by the upstream, or left by the client, records nothing: the follow-up
/// finds no reasoning to restore.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_short_on_either_side_records_nothing() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let b = base(&proxy);
    let m = proxy.metrics();
    for (stem, path) in [
        (KIMI_STREAM, "/v1/chat/completions"),
        (RESPONSES_STREAM, "/v1/responses"),
    ] {
        let id = format!("{stem}__0");
        let req = mock.exchange(&id).request.clone();
        // The upstream cuts the stream after 3 events.
        let r = client()
            .post(format!("{b}{path}"))
            .header("authorization", "Bearer sk-test-not-a-key")
            .header("x-mock-reply", &id)
            .header("x-mock-cut-after", "3")
            .body(req.clone())
            .send()
            .await
            .expect("sent");
        assert_eq!(r.status(), 200);
        assert!(r.bytes().await.is_err(), "{stem}: the cut shows as a cut");
        // The client leaves after the first event.
        let mut r = client()
            .post(format!("{b}{path}"))
            .header("authorization", "Bearer sk-test-not-a-key")
            .header("x-mock-reply", &id)
            .header("x-mock-hold", "1")
            .body(req)
            .send()
            .await
            .expect("sent");
        assert!(r.chunk().await.expect("first event").is_some());
        drop(r);
        // The upstream holds the rest until the proxy saw the client go.
        let route = if path.ends_with("responses") {
            "responses"
        } else {
            "chat"
        };
        eventually("the client's leaving is noticed", || {
            m.get(
                "streams_aborted_total",
                &[("route", route), ("side", "client")],
            ) == 1
        })
        .await;
        mock.release();
    }
    eventually("both sides' cuts are counted", || {
        m.get(
            "streams_aborted_total",
            &[("route", "chat"), ("side", "client")],
        ) == 1
            && m.get(
                "streams_aborted_total",
                &[("route", "responses"), ("side", "client")],
            ) == 1
            && m.get(
                "streams_aborted_total",
                &[("route", "chat"), ("side", "upstream")],
            ) == 1
            && m.get(
                "streams_aborted_total",
                &[("route", "responses"), ("side", "upstream")],
            ) == 1
    })
    .await;
    assert_eq!(m.total("records_total"), 0, "nothing partial is recorded");
    // The follow-ups find nothing to restore.
    let follow = mock.exchange(&format!("{KIMI_STREAM}__1"));
    let damaged = drop_reasoning_content(std::str::from_utf8(&follow.request).expect("utf-8"));
    post_to(&b, "/v1/chat/completions", damaged, &[]).await;
    assert!(mock.received().last().expect("sent") != &follow.request);
    let follow = mock.exchange(&format!("{RESPONSES_STREAM}__1"));
    let damaged = drop_reasoning_item(std::str::from_utf8(&follow.request).expect("utf-8"));
    post_to(&b, "/v1/responses", damaged.clone(), &[]).await;
    assert!(mock.received().last().expect("sent") == damaged.as_bytes());
    assert_eq!(
        m.get(
            "store_lookups_total",
            &[("route", "chat"), ("result", "hit")]
        ),
        0
    );
    assert_eq!(m.total("restores_total"), 0);
}

/// `raw` without its `function_call` item and that call's output (a client that lost the tool
/// call the reasoning item before it produced).
fn drop_function_call(raw: &str) -> String {
    let mut v: Value = serde_json::from_str(raw).expect("json");
    let items = v["input"].as_array_mut().expect("input");
    let call = items
        .iter()
        .find(|it| it["type"] == "function_call")
        .map(|it| it["call_id"].clone())
        .expect("a function call");
    items.retain(|it| it["call_id"] != call);
    v.to_string()
}

/// The model named in `raw` replaced by `model` (a gateway's alias the rules do not take for the
/// vendor's own API), textually.
fn with_model(raw: &str, from: &str, to: &str) -> String {
    let needle = format!("\"{from}\"");
    assert!(raw.contains(&needle), "{from}");
    raw.replacen(&needle, &format!("\"{to}\""), 1)
}

/// The upstream's real 400 for a lost reasoning field (DeepSeek's and Kimi's texts, OpenAI's
/// Responses text), given once: the proxy repairs with the store, retries once, and the client
/// gets the retried response with `x-turnkeeper-recovered`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recoverable_400_is_repaired_with_the_store_and_retried_once() {
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let b = base(&proxy);
    struct Case {
        stem: &'static str,
        path: &'static str,
        model: (&'static str, &'static str),
        error: &'static str,
        damage: fn(&str) -> String,
    }
    let cases = [
        Case {
            stem: DEEPSEEK_JSON,
            path: "/chat/completions",
            // An alias a gateway serves DeepSeek under: the rules leave the body alone.
            model: ("deepseek-reasoner", "team-reasoner"),
            error: "Missing `reasoning_content` field in the assistant message at message index 3. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
            damage: drop_reasoning_content,
        },
        Case {
            stem: KIMI_STREAM,
            path: "/v1/chat/completions",
            model: ("moonshotai/kimi-k2.5", "gateway/k2"),
            error: "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2",
            damage: drop_reasoning_content,
        },
        Case {
            stem: RESPONSES_FANTASY,
            path: "/v1/responses",
            // An Azure deployment name: the rules leave the body to the API.
            model: ("gpt-5", "prod-reasoning-deployment"),
            error: "Item 'rs_075b435690aee51e0169b3196f54a8819e9a33c038fdc1f932' of type 'reasoning' was provided without its required following item.",
            damage: drop_function_call,
        },
    ];
    for c in cases {
        let first = mock.exchange(&format!("{}__0", c.stem));
        let first_req = with_model(
            std::str::from_utf8(&first.request).expect("utf-8"),
            c.model.0,
            c.model.1,
        );
        let got = post_to(
            &b,
            c.path,
            first_req,
            &[("x-mock-reply", &format!("{}__0", c.stem))],
        )
        .await;
        assert_eq!(got.status, 200);
        let follow = mock.exchange(&format!("{}__1", c.stem));
        let original = with_model(
            std::str::from_utf8(&follow.request).expect("utf-8"),
            c.model.0,
            c.model.1,
        );
        let damaged = (c.damage)(&original);
        let before = mock.received().len();
        let got = post_to(
            &b,
            c.path,
            damaged.clone(),
            &[
                ("x-mock-reply", &format!("{}__1", c.stem)),
                ("x-mock-reject-once", c.error),
            ],
        )
        .await;
        assert_eq!(
            got.status,
            200,
            "{}: {}\n{}",
            c.stem,
            proxy.metrics().render(),
            String::from_utf8_lossy(&got.body)
        );
        assert!(
            got.body == follow.response,
            "{}: the retried response",
            c.stem
        );
        assert!(
            !got.header("x-turnkeeper-recovered").is_empty(),
            "{}: {:?}",
            c.stem,
            got.headers
        );
        let received = mock.received();
        assert_eq!(
            received.len(),
            before + 2,
            "{}: sent, then retried once",
            c.stem
        );
        let retried: Value = serde_json::from_slice(&received[before + 1]).expect("json");
        if c.path.ends_with("responses") {
            // The orphaned reasoning item goes, whole; nothing else changes.
            let mut want: Value = serde_json::from_str(&damaged).expect("json");
            want["input"]
                .as_array_mut()
                .expect("input")
                .retain(|it| it["type"] != "reasoning");
            assert_eq!(retried, want, "{}", c.stem);
            assert_eq!(got.header("x-turnkeeper-recovered"), "drop_items");
            continue;
        }
        let want: Value = serde_json::from_str(&original).expect("json");
        assert_eq!(
            retried, want,
            "{}: the retry carries the stored reasoning",
            c.stem
        );
        println!(
            "{}: first sent {} the damaged body; retry byte-identical to the recording: {}",
            c.stem,
            if received[before] == damaged.as_bytes() {
                "as"
            } else {
                "other than"
            },
            received[before + 1] == original.as_bytes()
        );
    }
    let m = proxy.metrics();
    assert_eq!(
        m.get(
            "recoveries_total",
            &[
                ("route", "chat"),
                ("action", "restore_reasoning"),
                ("result", "2xx")
            ]
        ),
        2
    );
}
