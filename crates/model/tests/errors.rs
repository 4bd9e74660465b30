//! Bad input gets a typed error that names the place, never a panic.

use turnkeeper_model::{Format, FormatHint, ModelError, read, read_bytes};

fn check(input: &[u8], hint: FormatHint, expect: &str) {
    match read_bytes(input, hint) {
        Ok(t) => panic!(
            "expected an error for {:?}, read {} messages",
            String::from_utf8_lossy(input),
            t.messages.len()
        ),
        Err(e) => assert_eq!(e.to_string(), expect),
    }
}

#[test]
fn syntax_errors_name_the_path_line_and_column() {
    check(
        b"{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},\n {\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"text\" \"text\":1}]}]}",
        FormatHint::Auto,
        "messages[1].content[1]: invalid JSON at line 2, column 75 (byte 118): expected ',' or '}' in an object",
    );
    check(
        b"{\"messages\":[",
        FormatHint::Auto,
        "messages[0]: invalid JSON at line 1, column 14 (byte 13): unexpected end of input",
    );
    check(
        b"{\"model\":1}",
        FormatHint::Auto,
        "cannot tell the format: expected an object with `messages` (Anthropic, OpenAI Chat or Bedrock Converse), `input` (OpenAI Responses) or `contents` (Gemini), or an array of {info, parts} (OpenCode export)",
    );
    check(
        b"{\"messages\":[1,",
        FormatHint::Exactly(Format::Anthropic),
        "messages[0]: expected a message object (byte 13)",
    );
}

#[test]
fn wrong_shapes_are_shape_errors() {
    check(
        b"[1,2]",
        FormatHint::Exactly(Format::Anthropic),
        "expected a JSON object (a Messages API body) (byte 0)",
    );
    check(
        b"{\"messages\":{}}",
        FormatHint::Auto,
        "messages: expected an array of messages (byte 12)",
    );
    check(
        b"{\"model\":\"x\"}",
        FormatHint::Exactly(Format::Anthropic),
        "no `messages` array (request) or `content` array (response) (byte 0)",
    );
    check(
        b"{\"contents\":[{\"role\":\"user\",\"parts\":[]}, 7]}",
        FormatHint::Auto,
        "contents[1]: expected a content object (byte 41)",
    );
}

#[test]
fn invalid_utf8_names_the_byte() {
    check(
        b"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
        FormatHint::Auto,
        "invalid UTF-8 at byte 39",
    );
}

#[test]
fn nesting_deeper_than_serde_limit_is_an_error_not_a_crash() {
    let mut deep =
        String::from("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"x\",\"input\":");
    deep.push_str(&"[".repeat(200_000));
    let err = read(&deep, FormatHint::Auto).expect_err("too deep");
    assert!(matches!(err, ModelError::Syntax { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("messages[0].content[0].input: invalid JSON"),
        "{err}"
    );
    assert!(
        err.to_string().ends_with("nesting deeper than 128 levels"),
        "{err}"
    );
}

/// Every strict prefix of a valid body (each format, cut at every character) is refused with a
/// syntax error at the cut: at its last byte, or at the start of the literal (`fal`, `nu`) it
/// cuts, with the line and column of that byte. A prefix that only cuts trailing whitespace is
/// the whole document and reads as the body does. Before, this test only asked for no panic.
#[test]
fn every_strict_prefix_of_a_valid_body_is_a_syntax_error_at_the_cut() {
    for file in [
        "anthropic/tool_loop_manual.json",
        "anthropic/response_interleaved_server_tools.json",
        "gemini/gemini3_two_signed_steps_open_turn.json",
        "opencode/export/kimi_session.export.json",
    ] {
        let path = format!("{}/../../corpus/{file}", env!("CARGO_MANIFEST_DIR"));
        let body = std::fs::read_to_string(&path).expect("corpus file");
        let whole = read(&body, FormatHint::Auto).expect("the corpus body reads");
        let mut cuts = 0;
        for (i, _) in body.char_indices() {
            let prefix = &body[..i];
            // A document ends at its closing bracket; only whitespace may follow.
            if body[i..].trim().is_empty() {
                let t = read(prefix, FormatHint::Auto).unwrap_or_else(|e| {
                    panic!("{file}: the body without its trailing whitespace: {e}")
                });
                assert_eq!(
                    (t.format, t.body, t.messages.len(), t.blocks.len()),
                    (
                        whole.format,
                        whole.body,
                        whole.messages.len(),
                        whole.blocks.len()
                    ),
                    "{file}"
                );
                continue;
            }
            cuts += 1;
            match read(prefix, FormatHint::Auto) {
                Ok(t) => panic!(
                    "{file}: the first {i} bytes read as a transcript of {} messages",
                    t.messages.len()
                ),
                Err(ModelError::Syntax {
                    offset,
                    line,
                    column,
                    ..
                }) => {
                    // At the cut, or at the start of a literal the cut runs into (`false` is the
                    // longest).
                    assert!(
                        offset <= i && i - offset < "false".len(),
                        "{file}: cut at byte {i}, error at byte {offset}"
                    );
                    let before = &prefix[..offset];
                    let want_line = 1 + before.matches('\n').count();
                    let want_column = offset - before.rfind('\n').map_or(0, |n| n + 1) + 1;
                    assert_eq!(
                        (line, column),
                        (want_line, want_column),
                        "{file}: cut at byte {i}, error at byte {offset}"
                    );
                }
                Err(e) => panic!("{file}: cut at byte {i}: not a syntax error: {e}"),
            }
        }
        assert!(cuts > 500, "{file}: {cuts} cuts");
    }
}

/// A key only the Messages API uses decides the format before `messages` is reached; the reader
/// then names what is missing in Anthropic terms.
#[test]
fn anthropic_only_keys_decide_the_format() {
    for body in [
        &b"{\"max_tokens\":16,\"system\":\"s\"}"[..],
        b"{\"thinking\":{\"type\":\"adaptive\"}}",
        b"{\"anthropic_version\":\"bedrock-2023-05-31\"}",
    ] {
        check(
            body,
            FormatHint::Auto,
            "no `messages` array (request) or `content` array (response) (byte 0)",
        );
    }
    let t = read(
        r#"{"max_tokens":16,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"hi"}]}"#,
        FormatHint::Auto,
    )
    .expect("reads");
    assert_eq!((t.format, t.messages.len()), (Format::Anthropic, 1));
}
