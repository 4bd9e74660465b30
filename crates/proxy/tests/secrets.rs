//! Keys and authorization values reach the upstream, and nowhere else: not the logs (at the
//! most verbose level), not the turn store.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;
use support::*;
use turnkeeper_proxy::StoreConfig;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const KEY: &str = "sk-ant-api03-SECRETSECRETSECRET";
const BEARER: &str = "Bearer SECRET-OAUTH-TOKEN";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_never_reach_the_logs_or_the_store() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();
    let Some(exchanges) = exchanges() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let mock = Mock::start(exchanges).await;
    let proxy = proxy_for(&mock, |c| {
        c.store = StoreConfig::Dir(dir.path().join("turns"))
    })
    .await;
    let turn = tool_turn(&mock, false);
    let content = response_content(&turn.response, false);
    let auth = [
        ("x-api-key", KEY),
        ("authorization", BEARER),
        ("x-mock-reply", turn.id.as_str()),
    ];
    // A first turn (recorded), a follow-up with the turn reordered (restored) and an empty text
    // block (repaired), and a request the upstream rejects for good.
    let first = post(
        &base(&proxy),
        first_request("keys", false).to_string(),
        &auth,
    )
    .await;
    assert_eq!(first.status, 200);
    let mut spoiled = follow_up("keys", &content, false);
    let blocks = spoiled["messages"][1]["content"]
        .as_array_mut()
        .expect("blocks");
    blocks.rotate_left(1);
    spoiled["messages"].as_array_mut().expect("messages").push(json!({"role": "assistant", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "done"}]}));
    spoiled["messages"]
        .as_array_mut()
        .expect("messages")
        .push(json!({"role": "user", "content": "thanks"}));
    let got = post(&base(&proxy), spoiled.to_string(), &auth).await;
    assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
    let bad = post(
        &base(&proxy),
        json!({"model": "claude-sonnet-4-5", "max_tokens": 1}).to_string(),
        &auth,
    )
    .await;
    assert_eq!(bad.status, 400);
    // The upstream got the keys.
    let seen = mock.received_headers();
    assert!(
        seen.iter()
            .all(|h| h.iter().any(|(k, v)| k == "x-api-key" && v == KEY))
    );
    assert!(
        seen.iter()
            .all(|h| h.iter().any(|(k, v)| k == "authorization" && v == BEARER))
    );
    proxy.shutdown().await;
    let logs = String::from_utf8_lossy(&captured.0.lock().expect("lock")).into_owned();
    assert!(logs.contains("repaired"), "the logs were captured: {logs}");
    assert!(logs.contains("restored_message"), "{logs}");
    assert!(!logs.contains("SECRET"), "a key reached the logs:\n{logs}");
    for f in std::fs::read_dir(dir.path().join("turns"))
        .expect("store")
        .flatten()
    {
        let text = std::fs::read_to_string(f.path()).expect("read");
        assert!(
            !text.contains("SECRET"),
            "a key reached the store: {}",
            f.path().display()
        );
    }
}
