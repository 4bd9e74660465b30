//! Clients nobody here wrote, against the proxy in front of the mock: the `openai` Python SDK
//! (Chat and Responses, streaming and not). The SDK comes from PyPI into a virtualenv named by
//! `TURNKEEPER_OPENAI_PYTHON` (its `python`); without it the test prints one line and skips
//! (`.ci/run` does not install it yet).

mod support;

use std::process::Command;

use support::*;

fn python() -> Option<String> {
    let py = std::env::var("TURNKEEPER_OPENAI_PYTHON").ok()?;
    let ok = Command::new(&py)
        .args(["-c", "import openai"])
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(py)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_python_sdk_through_the_proxy() {
    let Some(py) = python() else {
        println!(
            "skipped: set TURNKEEPER_OPENAI_PYTHON to a python with the openai SDK (pip install openai)"
        );
        return;
    };
    let Some((mock, proxy)) = start_all(|_| {}).await else {
        return;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/openai_sdk.py");
    let base = format!("{}/v1", base(&proxy));
    let out = tokio::task::spawn_blocking(move || {
        Command::new(py)
            .arg(script)
            .env("OPENAI_BASE_URL", base)
            .env_remove("OPENAI_API_KEY")
            .env("NO_PROXY", "127.0.0.1")
            .output()
            .expect("python runs")
    })
    .await
    .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
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
