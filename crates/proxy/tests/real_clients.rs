//! Clients nobody here wrote, against the proxy in front of the mock: the `openai` Python SDK
//! (Chat and Responses, streaming and not) and Google's `google-genai` (Gemini, JSON and
//! `alt=sse`, follow-ups with and without the call's signature). The SDKs come from PyPI, pinned
//! in `bindings/python/requirements-test.txt`: a `python` named by `TURNKEEPER_OPENAI_PYTHON` /
//! `TURNKEEPER_GENAI_PYTHON`, else the venv `bindings/python/test.sh` builds in the target
//! directory (`python-venv`). Without the SDK a test prints one line and skips; `cargo xtask verify`
//! runs them again after the python step built that venv, with `TURNKEEPER_REQUIRE_REAL_CLIENTS=1`,
//! where a missing SDK fails.

mod support;

use std::process::Command;

use support::*;

/// A `python` that imports `module`: the one `var` names, else the venv of
/// `bindings/python/test.sh` (`<target dir>/python-venv`, the target dir found from this test's
/// own path, `<target dir>/debug/deps/`). With `TURNKEEPER_REQUIRE_REAL_CLIENTS=1` (the verify
/// step that runs these tests after the venv is built) a missing SDK is a failure, not a skip.
fn python(var: &str, module: &str) -> Option<String> {
    let found = find_python(var, module);
    if found.is_none() && std::env::var("TURNKEEPER_REQUIRE_REAL_CLIENTS").is_ok_and(|v| v == "1") {
        panic!(
            "no python with `{module}` (set {var}); TURNKEEPER_REQUIRE_REAL_CLIENTS=1 requires it"
        );
    }
    found
}

fn find_python(var: &str, module: &str) -> Option<String> {
    let venv = std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .nth(3)
                .map(|t| t.join("python-venv/bin/python"))
        })
        .filter(|p| p.exists())
        .map(|p| p.display().to_string());
    let py = std::env::var(var).ok().or(venv)?;
    let ok = Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(py)
}

/// Runs a client script (`cmd`, its environment set) against the proxy on loopback, asserts it
/// succeeded, and gives its standard output and the JSON line it printed per call.
async fn run_client(mut cmd: Command) -> (String, Vec<serde_json::Value>) {
    cmd.env("NO_PROXY", "127.0.0.1");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("python runs"))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    (stdout, lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_python_sdk_through_the_proxy() {
    let Some(py) = python("TURNKEEPER_OPENAI_PYTHON", "openai") else {
        println!(
            "skipped: set TURNKEEPER_OPENAI_PYTHON to a python with the openai SDK (bindings/python/test.sh builds one)"
        );
        return;
    };
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let mut cmd = Command::new(py);
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/openai_sdk.py"
    ))
    .env("OPENAI_BASE_URL", format!("{}/v1", base(&proxy)))
    .env_remove("OPENAI_API_KEY");
    let (stdout, lines) = run_client(cmd).await;
    println!("{stdout}");
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[0]["choices"].as_u64() >= Some(1), "{stdout}");
    assert!(lines[1]["chunks"].as_u64() > Some(1), "{stdout}");
    assert!(lines[2]["output"].as_u64() >= Some(1), "{stdout}");
    assert_eq!(lines[3]["completed"], true, "{stdout}");
    let m = proxy.metrics();
    assert_eq!(m.get("requests_total", &[("route", "chat")]), 2);
    assert_eq!(m.get("requests_total", &[("route", "responses")]), 2);
    assert_eq!(mock.received().len(), 4, "no retries, no extra requests");
}

/// The recorded exchange with this id.
fn exchange(mock: &Mock, id: &str) -> Exchange {
    mock.exchanges()
        .iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("no recorded {id}"))
        .clone()
}

/// The `thoughtSignature` of each `functionCall` part of a Gemini request body, in order.
fn call_signatures(body: &[u8]) -> Vec<Option<String>> {
    let v: serde_json::Value = serde_json::from_slice(body).expect("json");
    v["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
        .filter(|p| p.get("functionCall").is_some())
        .map(|p| p["thoughtSignature"].as_str().map(str::to_owned))
        .collect()
}

/// `google-genai` (`generate_content` and `generate_content_stream`, `base_url` the proxy, api
/// key `test`) against the Gemini route, the mock replaying real Gemini 3 traffic: the SDK parses
/// the signed functionCall; its follow-up, the call's signature kept, reaches the upstream
/// byte-identical to what the SDK sent; the same follow-up with the signature dropped is
/// re-signed from the turn store with the signature of the recorded response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_google_genai_python_sdk_through_the_proxy() {
    let Some(py) = python("TURNKEEPER_GENAI_PYTHON", "google.genai") else {
        println!(
            "skipped: set TURNKEEPER_GENAI_PYTHON to a python with google-genai (bindings/python/test.sh builds one)"
        );
        return;
    };
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let stem = "fantasy--TestGoogleCommon-gemini-3-pro-preview-tool__";
    let (first, next) = (
        exchange(&mock, &format!("{stem}0")),
        exchange(&mock, &format!("{stem}1")),
    );
    let stream = exchange(
        &mock,
        "fantasy--TestGoogleCommon-gemini-3-pro-preview-multi_tool_streaming__0",
    );
    let recorded_sig = call_signatures(&next.request)[0]
        .clone()
        .expect("the recorded follow-up replays the signature");
    assert!(String::from_utf8_lossy(&first.response).contains(&recorded_sig));
    let mut cmd = Command::new(py);
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/genai_sdk.py"
    ))
    .envs([
        ("GENAI_BASE_URL", base(&proxy)),
        ("GENAI_MODEL", first.model.clone()),
        ("GENAI_FIRST", first.id.clone()),
        ("GENAI_NEXT", next.id.clone()),
        ("GENAI_STREAM", stream.id.clone()),
    ])
    .env_remove("GOOGLE_API_KEY")
    .env_remove("GEMINI_API_KEY")
    .env_remove("GOOGLE_GENAI_USE_VERTEXAI")
    .env_remove("GOOGLE_GENAI_API_VERSION");
    let (stdout, lines) = run_client(cmd).await;
    assert_eq!(lines.len(), 4, "{stdout}");
    let received = mock.received();
    assert_eq!(received.len(), 4, "no retries, no extra requests");
    let sent = |i: usize| lines[i]["sent"]["body"].as_str().unwrap_or("").to_owned();
    for (i, l) in lines.iter().enumerate() {
        println!(
            "{}: {} {}",
            l["call"], l["sent"]["path"], l["sent"]["query"]
        );
        let path = l["sent"]["path"].as_str().unwrap_or("");
        assert!(
            path.ends_with(&format!(
                "/models/{}:{}",
                first.model,
                if i == 1 {
                    "streamGenerateContent"
                } else {
                    "generateContent"
                }
            )),
            "{path}"
        );
    }
    // 1. The SDK parsed the signed call of the recorded response.
    assert_eq!(lines[0]["function"], "weather", "{stdout}");
    assert_eq!(lines[0]["args"]["location"], "Florence, Italy", "{stdout}");
    assert_eq!(lines[0]["signature"], recorded_sig.as_str(), "{stdout}");
    // 2. The stream (`alt=sse`) came through event by event and carried the calls.
    assert_eq!(lines[1]["sent"]["query"], "alt=sse", "{stdout}");
    assert!(lines[1]["chunks"].as_u64() > Some(1), "{stdout}");
    assert!(lines[1]["function_calls"].as_u64() >= Some(1), "{stdout}");
    // The first three requests (the signed follow-up among them) reached the mock as sent.
    for i in 0..3 {
        assert!(
            received[i] == sent(i).as_bytes(),
            "{}: the body was changed\nsent {}\ngot  {}",
            lines[i]["call"],
            sent(i),
            String::from_utf8_lossy(&received[i])
        );
    }
    // 3. The SDK sent the call back with its signature (the same bytes: it parses the base64
    // Gemini sent and writes it back in the URL-safe alphabet), and the mock accepted it.
    let url_safe = recorded_sig.replace('+', "-").replace('/', "_");
    assert_ne!(url_safe, recorded_sig, "the recorded signature has + or /");
    assert_eq!(
        call_signatures(sent(2).as_bytes()),
        vec![Some(url_safe)],
        "{stdout}"
    );
    assert!(
        lines[2]["text"].as_str().is_some_and(|t| !t.is_empty()),
        "{stdout}"
    );
    // 4. Without the signature the SDK's request would be rejected; it arrives re-signed.
    assert_eq!(call_signatures(sent(3).as_bytes()), vec![None], "{stdout}");
    assert_eq!(
        call_signatures(&received[3]),
        vec![Some(recorded_sig)],
        "the signature Gemini sent, from the store"
    );
    assert!(
        lines[3]["text"].as_str().is_some_and(|t| !t.is_empty()),
        "{stdout}"
    );
    let m = proxy.metrics();
    assert_eq!(m.get("requests_total", &[("route", "gemini")]), 4);
    assert_eq!(
        m.get(
            "forwarded_unchanged_total",
            &[("route", "gemini"), ("reason", "valid")]
        ),
        3
    );
    assert_eq!(
        m.get("repairs_total", &[("route", "gemini"), ("rule", "GM-01")]),
        1
    );
    assert_eq!(
        m.get(
            "store_lookups_total",
            &[("route", "gemini"), ("result", "hit")]
        ),
        1
    );
}
