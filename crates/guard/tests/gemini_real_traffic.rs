//! The turn store on the real Gemini traffic of `../shared/real-traffic/gemini/`: every recorded
//! response (JSON and `alt=sse` streams) is recorded, and every signed `functionCall` of the
//! follow-up requests that is found in the store is found with the very signature the client
//! sent back (up to the base64 alphabet: pydantic-ai re-encodes it URL-safe): the keys (call id,
//! else name and canonical arguments) never give back another call's signature.

#[path = "../../testkit/src/shared.rs"]
mod shared;

use turnkeeper_guard::{TurnStore, WireFamily};

/// A `functionCall` part of a request: id, name, args JSON text, signature JSON text.
type Call = (Option<String>, String, Option<String>, Option<String>);

/// The `functionCall` parts of a request.
fn calls(body: &str) -> Vec<Call> {
    let v: serde_json::Value = serde_json::from_str(body).expect("request JSON");
    let mut out = Vec::new();
    for c in v["contents"].as_array().into_iter().flatten() {
        for p in c["parts"].as_array().into_iter().flatten() {
            let Some(f) = p.get("functionCall") else {
                continue;
            };
            out.push((
                f.get("id").and_then(|i| i.as_str()).map(str::to_owned),
                f["name"].as_str().unwrap_or_default().to_owned(),
                f.get("args").map(|a| a.to_string()),
                p.get("thoughtSignature").map(|s| s.to_string()),
            ));
        }
    }
    out
}

#[test]
fn real_gemini_responses_are_recorded_and_give_back_only_their_own_signatures() {
    let Some(dir) = shared::shared_dir("real-traffic/gemini") else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("ls")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let mut store = TurnStore::in_memory();
    let (mut json, mut sse) = (0, 0);
    for p in files
        .iter()
        .filter(|p| p.to_string_lossy().contains(".response."))
    {
        let body = std::fs::read_to_string(p).expect("read");
        let r = store
            .add_any_response(&body)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(r.family, WireFamily::Gemini, "{}", p.display());
        if p.extension().is_some_and(|x| x == "sse") {
            sse += 1;
        } else {
            json += 1;
        }
    }
    assert!(json >= 30 && sse >= 5, "{json} JSON, {sse} streams");
    let (mut same, mut not_found) = (0, 0);
    for p in files
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".request.json"))
    {
        let body = std::fs::read_to_string(p).expect("read");
        for (id, name, args, sig) in calls(&body) {
            let Some(sig) = sig else { continue };
            match store.gemini_signature(id.as_deref(), &name, args.as_deref()) {
                Some(found) => {
                    // pydantic-ai sends a signature back in URL-safe base64 (`-`, `_`): the same
                    // bytes as the standard alphabet Gemini sent them in, which Google accepted.
                    let url_safe = |s: &str| s.replace('+', "-").replace('/', "_");
                    assert_eq!(
                        url_safe(found),
                        url_safe(&sig),
                        "{}: {name} {id:?}",
                        p.display()
                    );
                    same += 1;
                }
                None => not_found += 1,
            }
        }
    }
    // Found (13 when written, counted per request, a call replayed in later requests counted
    // again): the calls Gemini made in this traffic whose clients kept the id, or (no id) whose
    // name and arguments are not shared with a differently signed call. Not found: calls whose
    // response is not in the traffic (several sessions hold only their follow-up), calls made
    // by other providers (Claude, GPT) signed with the dummy, and pydantic-ai's
    // `generate_topic({})`, four calls under one name and arguments with four signatures.
    println!("{same} signed calls found with their own signature, {not_found} not found");
    assert!(same >= 12, "{same} found, {not_found} not");
}
