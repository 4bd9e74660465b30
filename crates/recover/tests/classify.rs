//! What `classify` reads from an error, field by field: the kind and whether it is retried, the
//! provider, the innermost status, the location, the ids, the token figures, the wait, the
//! configuration field and parameter, and the message it quotes.
//!
//! Each case is an error text (a real one where the wording matters, trimmed to what the field
//! needs) and the whole diagnosis rendered on one line, so a case fails on any field it did not
//! expect, not only the one it is about.

use turnkeeper_recover::{Diagnosis, Location, Provider, classify, classify_with_hint};

/// The diagnosis on one line: the kind, then every field that is not empty, in a fixed order.
fn render(d: &Diagnosis) -> String {
    let mut parts = vec![d.kind.as_str().to_owned()];
    if d.retryable {
        parts.push("retryable".to_owned());
    }
    if d.provider != Provider::Unknown {
        parts.push(format!("provider={}", d.provider));
    }
    if let Some(s) = d.status {
        parts.push(format!("status={s}"));
    }
    if d.location != Location::default() {
        parts.push(format!("at={}", d.location));
    }
    if !d.tool_use_ids.is_empty() {
        parts.push(format!("tools=[{}]", d.tool_use_ids.join(",")));
    }
    if !d.reasoning_ids.is_empty() {
        parts.push(format!("reasoning=[{}]", d.reasoning_ids.join(",")));
    }
    if !d.item_ids.is_empty() {
        parts.push(format!("items=[{}]", d.item_ids.join(",")));
    }
    if d.quota_exhausted {
        parts.push("quota_exhausted".to_owned());
    }
    if let Some(t) = d.tokens {
        let n = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
        parts.push(format!("tokens={}/{}", n(t.actual), n(t.limit)));
    }
    if let Some(w) = d.retry_after {
        parts.push(format!("wait={}ms", w.as_millis()));
    }
    if d.prefix_binding {
        parts.push("prefix_binding".to_owned());
    }
    if let Some(c) = d.config {
        parts.push(format!("config={}", c.as_str()));
    }
    if let Some(p) = &d.param {
        parts.push(format!("param={p}"));
    }
    parts.push(format!("message={:?}", d.message));
    parts.join(" ")
}

/// Classifies every case and compares its rendering with the expected one; all mismatches are
/// reported together.
fn check(cases: &[(Option<u16>, &str, &str)]) {
    let mut wrong = Vec::new();
    for (status, body, expect) in cases {
        let got = render(&classify(*status, body));
        if got != *expect {
            wrong.push(format!(
                "{status:?} {body}\n  expected {expect}\n  got      {got}"
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn codes_and_statuses_decide_when_no_phrase_does() {
    check(&[
        (
            None,
            r#"{"error":{"code":"too_many_requests"}}"#,
            r#"retryable_rate_limit retryable message="{\"error\":{\"code\":\"too_many_requests\"}}""#,
        ),
        (
            None,
            r#"{"error":{"status":"UNAVAILABLE"}}"#,
            r#"retryable_overloaded retryable message="{\"error\":{\"status\":\"UNAVAILABLE\"}}""#,
        ),
        (
            None,
            r#"{"error":{"code":"internal_error"}}"#,
            r#"retryable_server retryable message="{\"error\":{\"code\":\"internal_error\"}}""#,
        ),
        (
            None,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"x"}}"#,
            r#"retryable_rate_limit retryable provider=anthropic message="{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"x\"}}""#,
        ),
        (
            None,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"x"}}"#,
            r#"retryable_overloaded retryable provider=anthropic message="{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"x\"}}""#,
        ),
        (
            None,
            r#"{"type":"error","error":{"type":"api_error","message":"x"}}"#,
            r#"retryable_server retryable provider=anthropic message="{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}""#,
        ),
        (
            Some(429),
            "upstream said no",
            r#"retryable_rate_limit retryable status=429 message="upstream said no""#,
        ),
        (
            Some(502),
            "upstream said no",
            r#"retryable_server retryable status=502 message="upstream said no""#,
        ),
        (
            Some(504),
            "upstream said no",
            r#"retryable_server retryable status=504 message="upstream said no""#,
        ),
        (
            Some(500),
            "upstream said no",
            r#"retryable_server retryable status=500 message="upstream said no""#,
        ),
        (
            Some(529),
            "upstream said no",
            r#"retryable_overloaded retryable status=529 message="upstream said no""#,
        ),
        (
            Some(418),
            "upstream said no",
            r#"unknown status=418 message="upstream said no""#,
        ),
        (
            None,
            "upstream said no",
            r#"unknown message="upstream said no""#,
        ),
        (
            Some(502),
            r#"{"error":{"type":"invalid_request_error","message":"upstream said no"}}"#,
            r#"unknown status=502 message="upstream said no""#,
        ),
        (
            None,
            r#"{"error":{"type":"overloaded_error","message":"temperature is not supported"}}"#,
            r#"unknown provider=anthropic message="temperature is not supported""#,
        ),
        (
            None,
            r#"{"error":{"code":"context_length_exceeded","message":"x"}}"#,
            r#"context_length_exceeded provider=openai message="{\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"x\"}}""#,
        ),
        (
            None,
            r#"{"error":{"code":"invalid_encrypted_content","message":"x"}}"#,
            r#"reasoning_item_orphan message="{\"error\":{\"code\":\"invalid_encrypted_content\",\"message\":\"x\"}}""#,
        ),
        (
            None,
            r#"{"error":{"code":"invalid_id_prefix","message":"x"}}"#,
            r#"tool_use_id_format message="{\"error\":{\"code\":\"invalid_id_prefix\",\"message\":\"x\"}}""#,
        ),
        (
            None,
            r#"{"error":{"code":"1210","message":"x"}}"#,
            r#"request_config_invalid provider=zhipu message="{\"error\":{\"code\":\"1210\",\"message\":\"x\"}}""#,
        ),
        (
            None,
            r#"{"error":{"code":"1214","message":"x"}}"#,
            r#"unknown provider=zhipu message="{\"error\":{\"code\":\"1214\",\"message\":\"x\"}}""#,
        ),
        (
            Some(429),
            "insufficient_quota",
            r#"unknown status=429 quota_exhausted message="insufficient_quota""#,
        ),
    ]);
}

#[test]
fn the_status_is_read_from_the_text() {
    check(&[
        (
            None,
            "build 1.429 Too Many Requests",
            r#"retryable_rate_limit retryable message="build 1.429 Too Many Requests""#,
        ),
        (
            None,
            "queue 502] upstream",
            r#"unknown message="queue 502] upstream""#,
        ),
        (
            None,
            "x[==502 upstream",
            r#"unknown message="x[==502 upstream""#,
        ),
        (
            None,
            "x[==502] upstream",
            r#"retryable_server retryable status=502 message="x[==502] upstream""#,
        ),
        (
            None,
            "(429) upstream",
            r#"retryable_rate_limit retryable status=429 message="(429) upstream""#,
        ),
        (
            None,
            "error:=(429) upstream",
            r#"unknown message="error:=(429) upstream""#,
        ),
        (
            None,
            "status:(429) upstream",
            r#"retryable_rate_limit retryable status=429 message="status:(429) upstream""#,
        ),
        (
            None,
            "x 429 Too Many Requests",
            r#"retryable_rate_limit retryable status=429 message="x 429 Too Many Requests""#,
        ),
        (
            None,
            "x 429 upstream",
            r#"unknown message="x 429 upstream""#,
        ),
        (
            None,
            "HTTP 500: Corrupted thought signature. (error 400, then error 502)",
            r#"thinking_signature_invalid status=500 message="HTTP 500: Corrupted thought signature. (error 400, then error 502)""#,
        ),
        (
            None,
            "Corrupted thought signature. (error 400, then error 502)",
            r#"thinking_signature_invalid status=400 message="Corrupted thought signature. (error 400, then error 502)""#,
        ),
        (
            None,
            "HTTP 529 upstream",
            r#"retryable_overloaded retryable status=529 message="HTTP 529 upstream""#,
        ),
        (
            Some(500),
            "status: 429, upstream",
            r#"retryable_rate_limit retryable status=429 message="status: 429, upstream""#,
        ),
        (
            None,
            "upstream 503 Service Unavailable",
            r#"retryable_overloaded retryable provider=gemini status=503 message="upstream 503 Service Unavailable""#,
        ),
        (
            None,
            "request 123 failed",
            r#"unknown message="request 123 failed""#,
        ),
        (
            None,
            "took 1.500 s, error 1,502 and v_404",
            r#"unknown message="took 1.500 s, error 1,502 and v_404""#,
        ),
        (
            None,
            "error 99 or error 600 or error 1000",
            r#"unknown message="error 99 or error 600 or error 1000""#,
        ),
        (
            None,
            "[502] upstream",
            r#"retryable_server retryable status=502 message="[502] upstream""#,
        ),
        (
            None,
            "error: (502) upstream",
            r#"retryable_server retryable status=502 message="error: (502) upstream""#,
        ),
        (
            None,
            "429 first, then error 503",
            r#"retryable_overloaded retryable status=503 message="429 first, then error 503""#,
        ),
    ]);
}

#[test]
fn the_provider_is_told_from_its_words() {
    check(&[
        (
            None,
            "OpenRouter: Provider returned error",
            r#"unknown provider=openrouter message="OpenRouter: Provider returned error""#,
        ),
        (
            None,
            "litellm.APIError: x",
            r#"unknown provider=litellm message="litellm.APIError: x""#,
        ),
        (
            None,
            "botocore error",
            r#"unknown provider=bedrock message="botocore error""#,
        ),
        (
            None,
            "ThrottlingException: slow down",
            r#"retryable_rate_limit retryable provider=bedrock message="ThrottlingException: slow down""#,
        ),
        (
            None,
            "An error occurred (ValidationException) when calling the ConverseOperation",
            r#"unknown provider=bedrock message="An error occurred (ValidationException) when calling the ConverseOperation""#,
        ),
        (
            None,
            "Converse operation failed",
            r#"unknown provider=bedrock message="Converse operation failed""#,
        ),
        (
            None,
            "Vertex AI said x",
            r#"unknown provider=vertex message="Vertex AI said x""#,
        ),
        (
            None,
            "aiplatform.googleapis.com x",
            r#"unknown provider=vertex message="aiplatform.googleapis.com x""#,
        ),
        (
            None,
            "model _vrtx_ x",
            r#"unknown provider=vertex message="model _vrtx_ x""#,
        ),
        (
            None,
            "DeepSeek x",
            r#"unknown provider=deepseek message="DeepSeek x""#,
        ),
        (
            None,
            "missing reasoning_content x",
            r#"thinking_block_order provider=deepseek message="missing reasoning_content x""#,
        ),
        (
            None,
            "Moonshot x",
            r#"unknown provider=kimi message="Moonshot x""#,
        ),
        (
            None,
            "kimi-k2 x",
            r#"unknown provider=kimi message="kimi-k2 x""#,
        ),
        (
            None,
            "Mistral x",
            r#"unknown provider=mistral message="Mistral x""#,
        ),
        (
            None,
            "code: 3280 x",
            r#"tool_use_id_format provider=mistral message="code: 3280 x""#,
        ),
        (
            None,
            "must be a-z, A-Z, 0-9, with a length of 9",
            r#"tool_use_id_format provider=mistral message="must be a-z, A-Z, 0-9, with a length of 9""#,
        ),
        (
            None,
            "MiniMax x",
            r#"unknown provider=minimax message="MiniMax x""#,
        ),
        (
            None,
            "error (2013) x",
            r#"unknown provider=minimax message="error (2013) x""#,
        ),
        (
            None,
            "open.bigmodel.cn x",
            r#"unknown provider=zhipu message="open.bigmodel.cn x""#,
        ),
        (
            None,
            "Zhipu x",
            r#"unknown provider=zhipu message="Zhipu x""#,
        ),
        (
            None,
            "code: 1210 x",
            r#"request_config_invalid provider=zhipu message="code: 1210 x""#,
        ),
        (
            None,
            "Gemini x",
            r#"unknown provider=gemini message="Gemini x""#,
        ),
        (
            None,
            "generativelanguage.googleapis.com x",
            r#"unknown provider=gemini message="generativelanguage.googleapis.com x""#,
        ),
        (
            None,
            "status INVALID_ARGUMENT x",
            r#"unknown provider=gemini message="status INVALID_ARGUMENT x""#,
        ),
        (
            None,
            "status RESOURCE_EXHAUSTED x",
            r#"retryable_rate_limit retryable provider=gemini message="status RESOURCE_EXHAUSTED x""#,
        ),
        (
            None,
            "in a function response turn x",
            r#"unknown provider=gemini message="in a function response turn x""#,
        ),
        (
            None,
            "thought_signature x",
            r#"unknown provider=gemini message="thought_signature x""#,
        ),
        (
            None,
            "the function call turn x",
            r#"unknown provider=gemini message="the function call turn x""#,
        ),
        (
            None,
            "overloaded_error x",
            r#"retryable_overloaded retryable provider=anthropic message="overloaded_error x""#,
        ),
        (
            None,
            "rate_limit_error x",
            r#"retryable_rate_limit retryable provider=anthropic message="rate_limit_error x""#,
        ),
        (
            None,
            "Anthropic x",
            r#"unknown provider=anthropic message="Anthropic x""#,
        ),
        (
            None,
            "request_id req_011CX x",
            r#"unknown provider=anthropic message="request_id req_011CX x""#,
        ),
        (
            None,
            "a redacted_thinking x",
            r#"unknown provider=anthropic message="a redacted_thinking x""#,
        ),
        (
            None,
            "a tool_result x",
            r#"unknown provider=anthropic message="a tool_result x""#,
        ),
        (
            None,
            "OpenAI x",
            r#"unknown provider=openai message="OpenAI x""#,
        ),
        (
            None,
            "a tool_call x",
            r#"unknown provider=openai message="a tool_call x""#,
        ),
        (
            None,
            "Item of type reasoning x",
            r#"unknown provider=openai message="Item of type reasoning x""#,
        ),
        (
            None,
            "the encrypted content x",
            r#"unknown provider=openai message="the encrypted content x""#,
        ),
        (
            None,
            "Rate limit reached for gpt-4o x",
            r#"retryable_rate_limit retryable provider=openai message="Rate limit reached for gpt-4o x""#,
        ),
        (
            None,
            "event response.failed x",
            r#"unknown provider=openai message="event response.failed x""#,
        ),
        (
            None,
            "model gpt-5 x",
            r#"unknown provider=openai message="model gpt-5 x""#,
        ),
    ]);
}

#[test]
fn the_location_is_the_nearest_before_the_phrase() {
    check(&[
        (
            Some(400),
            "messages.3.content.1: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.",
            r#"thinking_block_order provider=anthropic status=400 at=messages[3].content[1] message="messages.3.content.1: Expected thinking or redacted_thinking, but found text. When thinking is enabled, a final assistant message must start with a thinking block.""#,
        ),
        (
            Some(400),
            "messages.[4]: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.",
            r#"thinking_block_order provider=anthropic status=400 at=messages[4] message="messages.[4]: Expected thinking or redacted_thinking, but found text. When thinking is enabled, a final assistant message must start with a thinking block.""#,
        ),
        (
            Some(400),
            "retry of messages.1 failed: messages.5: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01, see messages.9",
            r#"tool_result_missing provider=anthropic status=400 at=messages[5] tools=[toolu_01] message="retry of messages.1 failed: messages.5: tool_use ids were found without tool_result blocks immediately after: toolu_01, see messages.9""#,
        ),
        (
            Some(400),
            "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_01 (message.6)",
            r#"tool_result_missing provider=anthropic status=400 at=messages[6] tools=[toolu_01] message="tool_use ids were found without tool_result blocks immediately after: toolu_01 (message.6)""#,
        ),
        (
            Some(400),
            "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_01 at messageIndex 7 and message.8",
            r#"tool_result_missing provider=anthropic status=400 at=messages[7] tools=[toolu_01] message="tool_use ids were found without tool_result blocks immediately after: toolu_01 at messageIndex 7 and message.8""#,
        ),
        (
            Some(400),
            "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_01 atIndex 2",
            r#"tool_result_missing provider=anthropic status=400 at=messages[2] tools=[toolu_01] message="tool_use ids were found without tool_result blocks immediately after: toolu_01 atIndex 2""#,
        ),
        (
            Some(400),
            "messages.99999999999: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01",
            r#"tool_result_missing provider=anthropic status=400 tools=[toolu_01] message="messages.99999999999: tool_use ids were found without tool_result blocks immediately after: toolu_01""#,
        ),
        (
            Some(400),
            "messages.x: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01",
            r#"tool_result_missing provider=anthropic status=400 tools=[toolu_01] message="messages.x: tool_use ids were found without tool_result blocks immediately after: toolu_01""#,
        ),
    ]);
}

#[test]
fn ids_are_read_after_their_markers() {
    check(&[
        (
            Some(400),
            "rs_0c3 of type 'reasoning' was provided without its required following item.",
            r#"reasoning_item_orphan provider=openai status=400 reasoning=[rs_0c3] message="rs_0c3 of type 'reasoning' was provided without its required following item.""#,
        ),
        (
            Some(400),
            "\"rs_0d4\" of type 'reasoning' was provided without its required following item.",
            r#"reasoning_item_orphan provider=openai status=400 reasoning=[rs_0d4] message="\"rs_0d4\" of type 'reasoning' was provided without its required following item.""#,
        ),
        (
            Some(400),
            "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A, toolu_02B, 'toolu_03C' ,toolu_01A. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            r#"tool_result_missing provider=anthropic status=400 at=messages[2] tools=[toolu_01A,toolu_02B,toolu_03C] message="messages.2: tool_use ids were found without tool_result blocks immediately after: toolu_01A, toolu_02B, 'toolu_03C' ,toolu_01A. Each tool_use block must have a corresponding tool_result block in the next message.""#,
        ),
        (
            Some(400),
            "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
            r#"tool_use_id_mismatch provider=anthropic status=400 at=messages[2].content[0] tools=[toolu_9x] message="messages.2.content.0: unexpected tool_use_id found in tool_result blocks: toolu_9x. Each tool_result block must have a corresponding tool_use block in the previous message.""#,
        ),
        (
            Some(400),
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_abc1, call_def2",
            r#"tool_result_missing provider=openai status=400 tools=[call_abc1,call_def2] message="An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_abc1, call_def2""#,
        ),
        (
            Some(400),
            "No tool output found for function call call_k9Z2.",
            r#"tool_result_missing status=400 tools=[call_k9Z2] message="No tool output found for function call call_k9Z2.""#,
        ),
        (
            Some(400),
            "No tool call found for function call output with call_id call_Q7.",
            r#"tool_use_id_mismatch status=400 tools=[call_Q7] message="No tool call found for function call output with call_id call_Q7.""#,
        ),
        (
            Some(400),
            "`tool_use` ids were found without `tool_result` blocks immediately after: abc, Each",
            r#"tool_result_missing provider=anthropic status=400 message="tool_use ids were found without tool_result blocks immediately after: abc, Each""#,
        ),
        (
            Some(400),
            "Item with id 'rs_68a1' not found. Items are not persisted when `store` is set to false.",
            r#"reasoning_item_orphan status=400 reasoning=[rs_68a1] message="Item with id 'rs_68a1' not found. Items are not persisted when store is set to false.""#,
        ),
        (
            Some(400),
            "Item 'rs_0a1, rs_0b2' of type 'reasoning' was provided without its required following item.",
            r#"reasoning_item_orphan provider=openai status=400 reasoning=[rs_0a1,rs_0b2] message="Item 'rs_0a1, rs_0b2' of type 'reasoning' was provided without its required following item.""#,
        ),
        (
            Some(400),
            "The encrypted content for item rs_77x could not be verified.",
            r#"reasoning_item_orphan provider=openai status=400 reasoning=[rs_77x] message="The encrypted content for item rs_77x could not be verified.""#,
        ),
    ]);
}

#[test]
fn token_figures_are_read_in_every_wording() {
    check(&[
        (
            Some(400),
            "This model's maximum context length is 100 tokens. For a total of at least 150 tokens (estimated), your messages resulted in 120 tokens.",
            r#"context_length_exceeded status=400 tokens=120/100 message="This model's maximum context length is 100 tokens. For a total of at least 150 tokens (estimated), your messages resulted in 120 tokens.""#,
        ),
        (
            Some(400),
            "input length and `max_tokens` exceed context limit: 190000, + 21333 > 200000",
            r#"context_length_exceeded status=400 message="input length and max_tokens exceed context limit: 190000, + 21333 > 200000""#,
        ),
        (
            Some(400),
            "prompt is too long: (,500 tokens > 400 maximum)",
            r#"context_length_exceeded status=400 tokens=-/400 message="prompt is too long: (,500 tokens > 400 maximum)""#,
        ),
        (
            Some(400),
            "prompt is too long: 1,209,062 tokens > 1,000,000 maximum",
            r#"context_length_exceeded status=400 tokens=1209062/1000000 message="prompt is too long: 1,209,062 tokens > 1,000,000 maximum""#,
        ),
        (
            Some(400),
            "prompt is too long: tokens > 200000 maximum",
            r#"context_length_exceeded status=400 tokens=-/200000 message="prompt is too long: tokens > 200000 maximum""#,
        ),
        (
            Some(400),
            "input length and `max_tokens` exceed context limit: 190000 + 21333 > 200000, decrease input length",
            r#"context_length_exceeded status=400 tokens=211333/200000 message="input length and max_tokens exceed context limit: 190000 + 21333 > 200000, decrease input length""#,
        ),
        (
            Some(400),
            "input length and `max_tokens` exceed context limit: 190000 + 21333, decrease input length",
            r#"context_length_exceeded status=400 tokens=211333/- message="input length and max_tokens exceed context limit: 190000 + 21333, decrease input length""#,
        ),
        (
            Some(400),
            "The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).",
            r#"context_length_exceeded status=400 tokens=3475108/1048576 message="The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).""#,
        ),
        (
            Some(400),
            "This model's maximum context length is 4097 tokens. However, your messages resulted in 4619 tokens. Please reduce the length of the messages.",
            r#"context_length_exceeded status=400 tokens=4619/4097 message="This model's maximum context length is 4097 tokens. However, your messages resulted in 4619 tokens. Please reduce the length of the messages.""#,
        ),
        (
            Some(400),
            "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (7000 in your prompt; 2000 for the completion).",
            r#"context_length_exceeded status=400 tokens=9000/8192 message="This model's maximum context length is 8192 tokens, however you requested 9000 tokens (7000 in your prompt; 2000 for the completion).""#,
        ),
        (
            Some(400),
            "This model's maximum context length is 262144 tokens. However, you requested 0 output tokens and your prompt contains at least 262145 input tokens, for a total of at least 262145 tokens.",
            r#"context_length_exceeded status=400 tokens=262145/262144 message="This model's maximum context length is 262144 tokens. However, you requested 0 output tokens and your prompt contains at least 262145 input tokens, for a total of at least 262145 tokens.""#,
        ),
        (
            Some(400),
            "This model's maximum context length is 1000 tokens. However, your messages resulted in 1200 (tokens of text).",
            r#"context_length_exceeded status=400 tokens=1200/1000 message="This model's maximum context length is 1000 tokens. However, your messages resulted in 1200 (tokens of text).""#,
        ),
        (
            Some(429),
            "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 31538. The input or output tokens must be reduced in order to run successfully.",
            r#"context_length_exceeded provider=openai status=429 tokens=31538/30000 message="Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 31538. The input or output tokens must be reduced in order to run successfully.""#,
        ),
        (
            Some(429),
            "Request too large for gpt-4o on tokens per min (TPM): Limit 30000. The input or output tokens must be reduced in order to run successfully.",
            r#"context_length_exceeded provider=openai status=429 message="Request too large for gpt-4o on tokens per min (TPM): Limit 30000. The input or output tokens must be reduced in order to run successfully.""#,
        ),
    ]);
}

#[test]
fn the_wait_is_read_with_its_unit() {
    check(&[
        (
            Some(429),
            "Rate limit reached. Please try again in 644ms.",
            r#"retryable_rate_limit retryable status=429 wait=644ms message="Rate limit reached. Please try again in 644ms.""#,
        ),
        (
            Some(429),
            "Rate limit reached. Please try again in 1.25s.",
            r#"retryable_rate_limit retryable status=429 wait=1250ms message="Rate limit reached. Please try again in 1.25s.""#,
        ),
        (
            Some(429),
            "Rate limit reached. Please try again in 2m",
            r#"retryable_rate_limit retryable status=429 wait=120000ms message="Rate limit reached. Please try again in 2m""#,
        ),
        (
            Some(429),
            "Rate limit reached. Please try again in 2 minutes",
            r#"retryable_rate_limit retryable status=429 wait=120000ms message="Rate limit reached. Please try again in 2 minutes""#,
        ),
        (
            Some(429),
            "Rate limit reached. Please try again in 1.5h",
            r#"retryable_rate_limit retryable status=429 wait=5400000ms message="Rate limit reached. Please try again in 1.5h""#,
        ),
        (
            Some(429),
            "Rate limit reached. Retry after 30 milliseconds",
            r#"retryable_rate_limit retryable status=429 wait=30ms message="Rate limit reached. Retry after 30 milliseconds""#,
        ),
        (
            Some(429),
            "Rate limit reached. retry_after: 7",
            r#"retryable_rate_limit retryable status=429 wait=7000ms message="Rate limit reached. retry_after: 7""#,
        ),
        (
            Some(429),
            "Rate limit reached. \"retryDelay\": \"20s\"",
            r#"retryable_rate_limit retryable status=429 wait=20000ms message="Rate limit reached. \"retryDelay\": \"20s\"""#,
        ),
        (
            Some(429),
            "Rate limit reached. (reset after 15s)",
            r#"retryable_rate_limit retryable status=429 wait=15000ms message="Rate limit reached. (reset after 15s)""#,
        ),
        (
            Some(429),
            "Rate limit reached. try again in soon, retry after 3s",
            r#"retryable_rate_limit retryable status=429 wait=3000ms message="Rate limit reached. try again in soon, retry after 3s""#,
        ),
    ]);
}

#[test]
fn configuration_errors_name_their_parameter() {
    check(&[
        (
            Some(400),
            r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model.","type":"invalid_request_error","param":"max_tokens"}}"#,
            r#"request_config_invalid status=400 param=max_tokens message="Unsupported parameter: 'max_tokens' is not supported with this model.""#,
        ),
        (
            Some(400),
            r#"{"error":{"message":"x is not supported","param":"1"}} Unsupported parameter: 'top_k.'"#,
            r#"request_config_invalid status=400 param=top_k message="x is not supported""#,
        ),
        (
            Some(400),
            r#"{"error":{"message":"x is not supported","param": "none"}} unknown parameter: reasoning.effort"#,
            r#"request_config_invalid status=400 param=reasoning.effort message="x is not supported""#,
        ),
        (
            Some(400),
            r#"{"xparam":"a"} Unsupported value: 'reasoning_effort' does not support 'minimal' with this model."#,
            r#"request_config_invalid status=400 config=reasoning_effort param=reasoning_effort message="{\"xparam\":\"a\"} Unsupported value: 'reasoning_effort' does not support 'minimal' with this model.""#,
        ),
        (
            Some(400),
            "max_tokens参数非法",
            r#"request_config_invalid status=400 param=max_tokens message="max_tokens参数非法""#,
        ),
        (
            Some(400),
            "调用参数有误",
            r#"request_config_invalid status=400 message="调用参数有误""#,
        ),
        (
            Some(400),
            "Request is missing x-opencode-session and cannot be routed",
            r#"request_config_invalid status=400 param=x-opencode-session message="Request is missing x-opencode-session and cannot be routed""#,
        ),
        (
            Some(400),
            "anthropic-version: header is required",
            r#"request_config_invalid provider=anthropic status=400 param=anthropic-version message="anthropic-version: header is required""#,
        ),
        (
            Some(400),
            "context_management: Extra inputs are not permitted",
            r#"request_config_invalid status=400 config=context_management param=context_management message="context_management: Extra inputs are not permitted""#,
        ),
        (
            Some(400),
            "context_management.edits.0: Extra inputs are not permitted",
            r#"request_config_invalid status=400 config=context_management param=context_management.edits.0 message="context_management.edits.0: Extra inputs are not permitted""#,
        ),
        (
            Some(400),
            "context_management refused; : Extra inputs are not permitted",
            r#"request_config_invalid status=400 config=context_management message="context_management refused; : Extra inputs are not permitted""#,
        ),
    ]);
}

#[test]
fn the_message_is_the_innermost_readable_one() {
    let long = format!("{}é", "x".repeat(599));
    let body = format!(r#"{{"error":{{"message":"{long} is not supported"}}}}"#);
    check(&[
        (
            Some(400),
            r#"{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"temperature is not supported\"}}"}}}"#,
            r#"unknown provider=openrouter status=400 message="temperature is not supported""#,
        ),
        (
            Some(400),
            r#"{"message": 'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01', "outer": {"message": "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#,
            r#"tool_result_missing provider=anthropic status=400 at=messages[1] tools=[toolu_01] message="messages.1: tool_use ids were found without tool_result blocks immediately after: toolu_01""#,
        ),
        (
            Some(400),
            "message: upstream refused the call, code 7",
            r#"unknown status=400 message="upstream refused the call""#,
        ),
        (
            Some(400),
            r#"{"message":{"text":"nested"},"detail":"x"}"#,
            r#"unknown status=400 message="{\"message\":{\"text\":\"nested\"},\"detail\":\"x\"}""#,
        ),
        (
            Some(400),
            r#"{"message":"it's \"quoted\" here","x":1}"#,
            r#"unknown status=400 message="it's \"quoted\" here""#,
        ),
        (
            Some(400),
            r#"{"message": "", "error": "plain"}"#,
            r#"unknown status=400 message="{\"message\": \"\", \"error\": \"plain\"}""#,
        ),
        (
            Some(400),
            &body,
            r#"unknown status=400 message="xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…""#,
        ),
    ]);
}

#[test]
fn a_hint_names_the_provider_only_when_the_text_does_not() {
    let p = |body: &str| classify_with_hint(Some(529), body, Provider::Bedrock).provider;
    assert_eq!(p("Overloaded"), Provider::Bedrock);
    assert_eq!(p("OpenAI: Overloaded"), Provider::OpenAi);
    assert_eq!(
        classify(Some(529), "Overloaded").provider,
        Provider::Unknown
    );
}
