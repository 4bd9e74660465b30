//! Fuzz target `claude_code_jsonl`: the body is `turnkeeper_testkit::fuzz::claude_code_jsonl`, which `cargo test`
//! also replays over every file of `corpus/` (test `corpus_fuzz_bodies`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| turnkeeper_testkit::fuzz::claude_code_jsonl(data));
