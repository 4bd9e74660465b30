//! The wire actions over every real recorded request of their family in `../shared/real-traffic`
//! (OpenAI Responses, Bedrock Converse, OpenAI Chat): `recover` never fails closed on a real body,
//! sends only a changed body, takes out exactly the reasoning the action names (each removal
//! fingerprinted) and leaves every other reasoning unit byte for byte.

mod common;

use std::path::Path;

use turnkeeper_model::wire::converse::{self, BlockKind};
use turnkeeper_model::wire::responses::{self, ItemKind};
use turnkeeper_model::wire::{Edit, chat, splice_into};
use turnkeeper_recover::{Attempts, Outcome, Recovered, classify, recover};

#[path = "../../testkit/src/shared.rs"]
mod shared;

/// The request bodies of `family` in the real traffic (none when `../shared` is absent).
fn requests(family: &str) -> Vec<(String, String)> {
    let Some(dir) = shared::shared_dir("real-traffic") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join(family)) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".request.json") {
            out.push((name, read(&e.path())));
        }
    }
    out.sort();
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The body of a corpus error.
fn corpus_error(id: &str) -> (Option<u16>, String) {
    let item = common::corpus()
        .into_iter()
        .find(|i| i.id == id)
        .unwrap_or_else(|| panic!("corpus/errors has no item {id}"));
    (item.status, item.body)
}

fn run(name: &str, request: &str, status: Option<u16>, error: &str) -> Recovered {
    let d = classify(status, error);
    let r = recover(request, &d, &mut Attempts::new(), None)
        .unwrap_or_else(|e| panic!("{name}: recover failed closed on a real body: {e}"));
    match r.outcome {
        Outcome::Send => assert_ne!(r.body, request, "{name}: an unchanged body is sent"),
        _ => assert_eq!(r.body, request, "{name}"),
    }
    r
}

#[test]
fn or04_naming_nothing_takes_every_reasoning_item_of_real_responses_requests() {
    // Wei-Shaw/sub2api#2863: nothing narrower than "the encrypted content failed" is known.
    let (status, error) = corpus_error("sub2api-2863-encrypted-content-reason");
    let mut sent = 0;
    for (name, request) in requests("openai-responses") {
        let Ok(input) = responses::read(&request) else {
            continue;
        };
        let reasoning: Vec<&str> = input
            .items
            .iter()
            .filter(|it| matches!(it.kind, ItemKind::Reasoning))
            .map(|it| it.span.get(&request))
            .collect();
        let r = run(&name, &request, status, &error);
        if reasoning.is_empty() {
            assert_eq!(r.outcome, Outcome::HandBack, "{name}");
            continue;
        }
        sent += 1;
        assert_eq!(r.outcome, Outcome::Send, "{name}");
        let out = responses::read(&r.body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            out.items.iter().all(|it| it.kind != ItemKind::Reasoning),
            "{name}: a reasoning item is left"
        );
        let fingerprinted = r
            .report
            .changes
            .iter()
            .filter(|c| c.fingerprint.is_some())
            .count();
        assert!(fingerprinted >= reasoning.len(), "{name}: {:#?}", r.report);
        // Every call keeps its call_id.
        let calls = |b: &responses::ResponsesBody<'_>, src: &str| -> Vec<String> {
            b.items
                .iter()
                .filter_map(|it| it.call_id.map(|c| c.decode(src).into_owned()))
                .collect()
        };
        assert_eq!(calls(&out, &r.body), calls(&input, &request), "{name}");
    }
    println!("{sent} real Responses requests with reasoning items recovered");
    assert!(
        sent > 0 || requests("openai-responses").is_empty(),
        "no real request exercised the drop"
    );
}

#[test]
fn or03_strips_the_ids_of_real_responses_requests_and_keeps_their_reasoning_whole() {
    // can1357/oh-my-pi#41 (store: false).
    let (status, error) = corpus_error("ohmypi-responses-item-not-found-store-false");
    let all = requests("openai-responses");
    let mut sent = 0;
    let none = all.is_empty();
    for (name, request) in all {
        let Ok(input) = responses::read(&request) else {
            continue;
        };
        let r = run(&name, &request, status, &error);
        if r.outcome != Outcome::Send {
            continue;
        }
        sent += 1;
        let out = responses::read(&r.body).unwrap_or_else(|e| panic!("{name}: {e}"));
        for it in &out.items {
            assert!(it.id.is_none(), "{name}: an id is left");
            if it.kind == ItemKind::Reasoning {
                // Kept reasoning carries its encrypted_content and every byte but its id.
                assert!(it.encrypted.is_set(), "{name}");
                let raw = it.span.get(&r.body);
                assert!(
                    input
                        .items
                        .iter()
                        .any(|i| without_id(&request, i).as_deref() == Some(raw)
                            || i.span.get(&request) == raw),
                    "{name}: a reasoning item changed beyond its id"
                );
            }
        }
    }
    println!("{sent} real Responses requests had their ids stripped");
    assert!(sent > 0 || none, "no real request exercised the strip");
}

/// Item `it` of `src` without its `id` member.
fn without_id(src: &str, it: &responses::Item) -> Option<String> {
    let k = it.member(src, "id")?;
    let e = Edit::remove_member(&it.members, k)?;
    let mut out = String::new();
    splice_into(src, it.span, &mut [e], &mut out);
    Some(out)
}

#[test]
fn br05_keeps_signed_reasoning_of_real_converse_requests() {
    let error = "User messages cannot contain reasoning content. Please remove the reasoning content and try again.";
    for (name, request) in requests("bedrock-converse") {
        let Ok(input) = converse::read(&request) else {
            continue;
        };
        let blocks = |b: &converse::ConverseBody<'_>, src: &str, signed: bool| -> Vec<String> {
            b.messages
                .iter()
                .flat_map(|m| m.blocks.iter())
                .filter(|x| {
                    x.kind == BlockKind::Reasoning
                        && x.reasoning.is_some_and(|r| r.is_signed()) == signed
                })
                .map(|x| x.span.get(src).to_owned())
                .collect()
        };
        let unsigned = blocks(&input, &request, false);
        let r = run(&name, &request, Some(400), error);
        if unsigned.is_empty() {
            assert_eq!(r.outcome, Outcome::HandBack, "{name}");
            continue;
        }
        let out = converse::read(&r.body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(blocks(&out, &r.body, false).is_empty(), "{name}");
        assert_eq!(
            blocks(&out, &r.body, true),
            blocks(&input, &request, true),
            "{name}"
        );
    }
}

#[test]
fn ds01_takes_reasoning_content_out_of_real_chat_requests() {
    let error = "The reasoning_content is an intermediate result for display purposes only and will not be included in the context for inference. Please remove the reasoning_content from your message to reduce network traffic.";
    let all = requests("openai-chat");
    let mut sent = 0;
    let none = all.is_empty();
    for (name, request) in all {
        let Ok(input) = chat::read(&request) else {
            continue;
        };
        let with = input
            .messages
            .iter()
            .filter(|m| m.reasoning_content.is_some())
            .count();
        let r = run(&name, &request, Some(400), error);
        if with == 0 {
            assert_eq!(r.outcome, Outcome::HandBack, "{name}");
            continue;
        }
        assert_eq!(r.outcome, Outcome::Send, "{name}");
        let out = chat::read(&r.body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.messages.len(), input.messages.len(), "{name}");
        assert!(
            out.messages.iter().all(|m| m.reasoning_content.is_none()),
            "{name}"
        );
        let removed = r
            .report
            .changes
            .iter()
            .filter(|c| c.path.ends_with(".reasoning_content"))
            .count();
        assert_eq!(removed, with, "{name}: one change per message");
        sent += 1;
    }
    println!("{sent} real Chat requests with reasoning_content recovered");
    assert!(sent > 0 || none, "no real request exercised the removal");
}
