//! The new providers' error texts (`shared/research/api-rules-reasoning-2026-11.md` §11, with
//! the texts of §2–§8 filled in), the request settings, the other context-overflow wordings and
//! the zero quotas: for each, the diagnosis (kind, location, ids, parameter) and the first action
//! the planner takes, on one line.
//!
//! Every text here is deterministic (never `retryable`), except the retryable controls at the
//! end; OR-04's one resend after the drop is the planner's `drop_items` rung, not a retry.

use turnkeeper_recover::{Action, Attempts, Diagnosis, Location, classify, plan};

/// The diagnosis and the first action on one line: the kind, then every field that is set, then
/// `=>` and the action with its arguments.
fn render(d: &Diagnosis) -> String {
    let mut parts = vec![d.kind.as_str().to_owned()];
    if d.retryable {
        parts.push("retryable".to_owned());
    }
    if d.location != Location::default() {
        parts.push(format!("at={}", d.location));
    }
    for (name, ids) in [
        ("tools", &d.tool_use_ids),
        ("reasoning", &d.reasoning_ids),
        ("items", &d.item_ids),
    ] {
        if !ids.is_empty() {
            parts.push(format!("{name}=[{}]", ids.join(",")));
        }
    }
    if let Some(t) = d.tokens {
        let n = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
        parts.push(format!("tokens={}/{}", n(t.actual), n(t.limit)));
    }
    if let Some(w) = d.retry_after {
        parts.push(format!("wait={}ms", w.as_millis()));
    }
    if d.quota_exhausted {
        parts.push("quota_exhausted".to_owned());
    }
    if let Some(c) = d.config {
        parts.push(format!("config={}", c.as_str()));
    }
    if let Some(p) = &d.param {
        parts.push(format!("param={p}"));
    }
    let action = match plan(d, &Attempts::new()) {
        Action::Repair { rules, .. } => {
            let ids: Vec<&str> = rules.iter().map(|r| r.as_str()).collect();
            format!("repair({})", ids.join(","))
        }
        Action::RestoreReasoning { from } => format!("restore_reasoning({from:?})"),
        Action::EmptyReasoning { from } => format!("empty_reasoning({from:?})"),
        Action::DropItems { ids } => format!("drop_items([{}])", ids.join(",")),
        Action::StripItemIds { ids } => format!("strip_item_ids([{}])", ids.join(",")),
        Action::FixConfig { what } => format!("fix_config({what})"),
        Action::StripThinking { from } => format!("strip_thinking({from:?})"),
        Action::Retry { .. } => "retry".to_owned(),
        Action::GiveUp { reason } => format!("give_up({reason})"),
        other => other.name().to_owned(),
    };
    format!("{} => {action}", parts.join(" "))
}

/// Classifies and plans every case and compares the line with the expected one; all mismatches
/// are reported together.
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
fn openai_responses() {
    check(&[
        // OR-01
        (
            Some(400),
            r#"{"error":{"message":"Item 'rs_68a1b2c3d4e5f60001' of type 'reasoning' was provided without its required following item.","type":"invalid_request_error","param":"input","code":null}}"#,
            "reasoning_item_orphan reasoning=[rs_68a1b2c3d4e5f60001] => drop_items([rs_68a1b2c3d4e5f60001])",
        ),
        // OR-02, a function call and a message
        (
            Some(400),
            "Item 'fc_68a1b2c3d4e5f60002' of type 'function_call' was provided without its required 'reasoning' item: 'rs_68a1b2c3d4e5f60001'.",
            "reasoning_item_orphan items=[fc_68a1b2c3d4e5f60002] => strip_item_ids([fc_68a1b2c3d4e5f60002])",
        ),
        (
            Some(400),
            "Item 'msg_68a1b2c3d4e5f60003' of type 'message' was provided without its required 'reasoning' item: 'rs_68a1b2c3d4e5f60001'.",
            "reasoning_item_orphan items=[msg_68a1b2c3d4e5f60003] => strip_item_ids([msg_68a1b2c3d4e5f60003])",
        ),
        // OR-03, `store: false`, then `store: true`
        (
            Some(404),
            "Item with id 'rs_68a1b2c3d4e5f60001' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
            "reasoning_item_orphan reasoning=[rs_68a1b2c3d4e5f60001] => strip_item_ids([])",
        ),
        (
            Some(404),
            "Item with id 'rs_68a1b2c3d4e5f60001' not found.",
            "reasoning_item_orphan reasoning=[rs_68a1b2c3d4e5f60001] => drop_items([rs_68a1b2c3d4e5f60001])",
        ),
        // OR-04 and ORT-06, the Copilot form
        (
            Some(400),
            r#"{"error":{"message":"The encrypted content gAAAA...XX== could not be verified.","type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}"#,
            "reasoning_item_orphan => drop_items([])",
        ),
        (
            Some(400),
            "The encrypted content for item rs_68a1b2c3d4e5f60001 could not be verified. Reason: Encrypted content could not be decrypted or parsed.",
            "reasoning_item_orphan reasoning=[rs_68a1b2c3d4e5f60001] => drop_items([rs_68a1b2c3d4e5f60001])",
        ),
        (
            Some(400),
            "The encrypted content for item cmp_68a1b2c3d4e5f60009 could not be verified. Reason: Encrypted content organization_id did not match the target organization.",
            "reasoning_item_orphan reasoning=[cmp_68a1b2c3d4e5f60009] => drop_items([cmp_68a1b2c3d4e5f60009])",
        ),
        (
            Some(400),
            r#"{"error":{"message":"Encrypted function output content could not be decrypted or decoded.","code":"invalid_request_body"}}"#,
            "reasoning_item_orphan => drop_items([])",
        ),
        // OR-05
        (
            Some(400),
            "No tool call found for function call output with call_id call_Q7x2.",
            "tool_use_id_mismatch tools=[call_Q7x2] => repair(AN-10)",
        ),
        (
            Some(400),
            "No tool output found for function call call_Q7x2.",
            "tool_result_missing tools=[call_Q7x2] => repair(AN-08,AN-09,AN-11)",
        ),
        // OR-08
        (
            Some(400),
            "Invalid 'input[5].id': 'toolu_01ABC'. Expected an ID that begins with 'fc'.",
            "tool_use_id_format at=messages[5] tools=[toolu_01ABC] => strip_item_ids([toolu_01ABC])",
        ),
        // OR-11, OpenAI's and a compatible upstream's
        (
            Some(400),
            "Missing required parameter: 'input[2].summary'.",
            "empty_content at=messages[2] => empty_reasoning(Some(2))",
        ),
        (
            Some(400),
            "`input[4]` missing required field `summary`",
            "empty_content at=messages[4] => empty_reasoning(Some(4))",
        ),
        // OR-12
        (
            Some(400),
            r#"{"error":{"message":"Invalid 'input[1].content': array too long. Expected an array with maximum length 0, but got an array with length 1 instead.","type":"invalid_request_error","code":"array_above_max_length"}}"#,
            "request_config_invalid at=messages[1] param=input[1].content => fix_config(input[1].content)",
        ),
        // OR-13
        (
            Some(400),
            "Reasoning input items can only be provided to a reasoning or computer use model. Remove reasoning items from your input and try again.",
            "request_config_invalid config=reasoning_items => drop_items([])",
        ),
        // OR-14
        (
            Some(400),
            "Duplicate item found with id rs_68a1b2c3d4e5f60001. Remove duplicate items from your input and try again.",
            "tool_use_id_mismatch items=[rs_68a1b2c3d4e5f60001] => drop_items([rs_68a1b2c3d4e5f60001])",
        ),
        // OR-15
        (
            Some(400),
            r#"{"error":{"message":"Previous response with id 'resp_68a1b2c3' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}"#,
            "unknown => give_up(the previous response is gone (OR-15): send the whole history inline, without previous_response_id)",
        ),
        // OR-16
        (
            Some(400),
            r#"{"error":{"message":"Encrypted content is not supported with this model.","type":"invalid_request_error","param":"include","code":null}}"#,
            "request_config_invalid config=include param=include => fix_config(include)",
        ),
        // OA-07
        (
            Some(400),
            r#"{"error":{"message":"Unknown parameter: 'messages[2].tool_calls[0].index'.","type":"invalid_request_error","param":"messages[2].tool_calls[0].index","code":"unknown_parameter"}}"#,
            "request_config_invalid at=messages[2] param=messages[2].tool_calls[0].index => fix_config(messages[2].tool_calls[0].index)",
        ),
        // LS-03: vLLM, llama.cpp
        (
            Some(400),
            "Encrypted content is not supported.",
            "request_config_invalid config=include => fix_config(include)",
        ),
        (
            Some(500),
            "Cannot determine type of 'item'",
            "request_config_invalid config=reasoning_items => drop_items([])",
        ),
    ]);
}

#[test]
fn deepseek_and_kimi() {
    check(&[
        // DS-01
        (
            Some(400),
            "The reasoning_content is an intermediate result for display purposes only and will not be included in the context for inference. Please remove the reasoning_content from your message to reduce network traffic.",
            "thinking_disabled_violation => drop_unsigned_reasoning",
        ),
        // DS-03, both eras, and DS-06 in Anthropic format
        (
            Some(400),
            "Missing `reasoning_content` field in the assistant message at message index 3. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
            "thinking_block_order at=messages[3] => restore_reasoning(Some(3))",
        ),
        (
            Some(400),
            "The `reasoning_content` in the thinking mode must be passed back to the API.",
            "thinking_block_order => restore_reasoning(None)",
        ),
        (
            Some(400),
            "Error from provider (Console Go): Upstream request failed: [invalid_request_error] The `content[].thinking` in the thinking mode must be passed back to the API.",
            "thinking_block_order => restore_from_store",
        ),
        // DS-09's wrappers: trace id, OpenCode Zen, 9router's reset, LiteLLM
        (
            Some(400),
            "Missing `reasoning_content` field in the assistant message at message index 5. [trace_id=4f1c2a9be07d11f0]",
            "thinking_block_order at=messages[5] => restore_reasoning(Some(5))",
        ),
        (
            Some(400),
            "Error from provider (DeepSeek): The `reasoning_content` in the thinking mode must be passed back to the API.",
            "thinking_block_order => restore_reasoning(None)",
        ),
        (
            Some(400),
            "[deepseek/deepseek-reasoner] [400]: Missing `reasoning_content` field in the assistant message at message index 7. (reset after 30s)",
            "thinking_block_order at=messages[7] => restore_reasoning(Some(7))",
        ),
        (
            Some(400),
            r#"litellm.BadRequestError: DeepseekException - {"error":{"message":"Missing `reasoning_content` field in the assistant message at message index 9. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_with_tools","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
            "thinking_block_order at=messages[9] => restore_reasoning(Some(9))",
        ),
        // KM-01 bare, in an envelope, through SiliconFlow; KM-06; KM-08
        (
            Some(400),
            "thinking is enabled but reasoning_content is missing in assistant tool call message at index 6",
            "thinking_block_order at=messages[6] => restore_reasoning(Some(6))",
        ),
        (
            Some(400),
            r#"{"error":{"message":"thinking is enabled but reasoning_content is missing in assistant tool call message at index 2","type":"invalid_request_error"}}"#,
            "thinking_block_order at=messages[2] => restore_reasoning(Some(2))",
        ),
        (
            Some(400),
            "Error code: 400 - {'code': 20015, 'message': 'thinking is enabled but reasoning_content is missing in assistant tool call message at index 4', 'data': None}",
            "thinking_block_order at=messages[4] => restore_reasoning(Some(4))",
        ),
        (
            Some(400),
            "preserved thinking (thinking.keep=all) requires reasoning_content on every assistant message, but assistant message at index 8 is missing reasoning_content",
            "thinking_block_order at=messages[8] => restore_reasoning(Some(8))",
        ),
        (
            Some(400),
            "tool_choice 'specified' is incompatible with thinking enabled",
            "request_config_invalid config=tool_choice => fix_config(tool_choice)",
        ),
        (
            Some(400),
            "tool_choice 'required' is incompatible with thinking enabled",
            "request_config_invalid config=tool_choice => fix_config(tool_choice)",
        ),
    ]);
}

#[test]
fn gemini_openrouter_and_bedrock() {
    check(&[
        // GM-01 / GM-18, the Vertex wordings (GM-19), the image models', the corrupted one
        (
            Some(400),
            "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:read_file` , position 4. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
            "thinking_signature_invalid => repair(GM-01)",
        ),
        (
            Some(400),
            "Unable to submit request because function call `default_api:read_file` in the 3. content block is missing a `thought_signature`. Learn more: https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures",
            "thinking_signature_invalid at=messages[3] => repair(GM-01)",
        ),
        (
            Some(400),
            "Unable to submit request because Thought signature is not valid.",
            "thinking_signature_invalid => restore_from_store",
        ),
        (
            Some(400),
            "Unable to submit request because it has an invalid thought signature for content at index 5",
            "thinking_signature_invalid at=messages[5] => restore_from_store",
        ),
        (
            Some(400),
            "Corrupted thought signature.",
            "thinking_signature_invalid => restore_from_store",
        ),
        // GM-20: the Google JSON inside a JSON string
        (
            Some(400),
            r#"{"error":{"code":400,"message":"{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Function call is missing a thought_signature in functionCall parts.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n","status":"Bad Request"}}"#,
            "thinking_signature_invalid => repair(GM-01)",
        ),
        // ORT-05 through OpenRouter's `metadata.raw`, and its own text alone
        (
            Some(400),
            r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"Gemini models require OpenRouter reasoning details to be preserved in each request. Please refer to our docs: https://openrouter.ai/docs/guides/best-practices/reasoning-tokens#preserving-reasoning-blocks. Upstream error: {\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Function call is missing a thought_signature in functionCall parts.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}","provider_name":"Google AI Studio"}}}"#,
            "thinking_signature_invalid => restore_from_store",
        ),
        (
            Some(400),
            r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"Gemini models require OpenRouter reasoning details to be preserved in each request.","provider_name":"Google"}}}"#,
            "thinking_signature_invalid => restore_from_store",
        ),
        // BR-01, BR-02 (wrapped), BR-04, BR-05, BR-06, BR-10
        (
            Some(400),
            "An error occurred (ValidationException) when calling the ConverseStream operation: The model returned the following errors: If an assistant message contains any thinking blocks, the first block must be thinking. Found text",
            "thinking_block_order => repair(AN-16,AN-18)",
        ),
        (
            Some(400),
            "An error occurred (ValidationException) when calling the Converse operation: The model returned the following errors: messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).",
            "thinking_block_order at=messages[3].content[0] => repair(AN-16,AN-18)",
        ),
        (
            Some(400),
            "ValidationException: 1 validation error detected: Value at 'messages.3.member.content.0.member.reasoningContent.reasoningText.text' failed to satisfy constraint: Member must not be null",
            "empty_content at=messages[3].content[0] => restore_reasoning(Some(3))",
        ),
        (
            Some(400),
            "An error occurred (ValidationException) when calling the Converse operation: User messages cannot contain reasoning content. Please remove the reasoning content and try again.",
            "thinking_disabled_violation => drop_unsigned_reasoning",
        ),
        (
            Some(400),
            "ValidationException: This model does not support assistant message prefill. The conversation must end with a user message.",
            "role_order => repair(AN-03)",
        ),
        (
            Some(400),
            "An error occurred (ValidationException) when calling the Converse operation: The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use.",
            "request_config_invalid config=tool_choice => fix_config(tool_choice)",
        ),
    ]);
}

#[test]
fn request_settings() {
    check(&[
        (
            Some(404),
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-3-5-sonnet-20240620"},"request_id":"req_011CXyz"}"#,
            "request_config_invalid config=model => fix_config(model)",
        ),
        (
            Some(400),
            r#"{"error":{"message":"anthropic/claude-sonnet-9 is not a valid model ID","code":400}}"#,
            "request_config_invalid config=model => fix_config(model)",
        ),
        (
            Some(404),
            r#"{"error":{"message":"The model `gpt-4-32k` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
            "request_config_invalid config=model => fix_config(model)",
        ),
        (
            Some(400),
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"A maximum of 4 blocks with cache_control may be provided. Found 5."}}"#,
            "request_config_invalid config=cache_control => fix_config(cache_control)",
        ),
        (
            Some(400),
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"`temperature` and `top_p` cannot both be specified for this model. Please use only one."}}"#,
            "request_config_invalid config=temperature_and_top_p => fix_config(temperature_and_top_p)",
        ),
        (
            Some(400),
            "thinking.budget_tokens: must be less than max_tokens",
            "request_config_invalid config=max_tokens => fix_config(max_tokens)",
        ),
        (
            Some(400),
            "thinking.budget_tokens: budget_tokens must be at least 1024",
            "request_config_invalid config=budget_tokens => fix_config(budget_tokens)",
        ),
        (
            Some(400),
            "The thinking budget 0 is invalid. This model only works in thinking mode.",
            "request_config_invalid config=budget_tokens => fix_config(budget_tokens)",
        ),
        (
            Some(400),
            r#"{"error":{"message":"registry.ollama.ai/library/gemma3:27b does not support tools","type":"api_error","param":null,"code":null}}"#,
            "request_config_invalid config=tools_unsupported => fix_config(tools_unsupported)",
        ),
        (
            Some(400),
            "Tool use is not supported for this model.",
            "request_config_invalid config=tools_unsupported => fix_config(tools_unsupported)",
        ),
        (
            Some(404),
            r#"{"error":{"message":"No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing","code":404}}"#,
            "request_config_invalid config=tools_unsupported => fix_config(tools_unsupported)",
        ),
        (
            Some(400),
            "An error occurred (ValidationException) when calling the InvokeModel operation: Malformed input request: #: extraneous key [stream] is not permitted, please reformat your input and try again.",
            "request_config_invalid param=stream => fix_config(stream)",
        ),
        (
            Some(400),
            "ValidationException: Malformed input request: #/tools/0/name: expected maxLength: 64, actual: 81, please reformat your input and try again.",
            "request_config_invalid config=tool_definition => fix_config(tool_definition)",
        ),
    ]);
}

#[test]
fn context_overflow_in_other_words() {
    check(&[
        (
            Some(400),
            "ValidationException: Malformed input request: #/messages/41/content/0/text: expected maxLength: 2000000, actual: 2418893, please reformat your input and try again.",
            "context_length_exceeded => compact",
        ),
        (
            Some(413),
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            "context_length_exceeded => compact",
        ),
        (
            Some(400),
            r#"{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 33012 tokens (29012 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
            "context_length_exceeded tokens=33012/32768 => compact",
        ),
        (
            Some(400),
            "Input prompt (40961 tokens) is too long and exceeds limit of 40960",
            "context_length_exceeded tokens=40961/40960 => compact",
        ),
        (
            Some(400),
            "The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.",
            "context_length_exceeded tokens=9000/8192 => compact",
        ),
    ]);
}

#[test]
fn gemini_request_shapes_and_reworded_signatures() {
    check(&[
        (
            Some(400),
            r#"{"error":{"code":400,"message":"* GenerateContentRequest.contents[4].parts: contents.parts must not be empty.\n","status":"INVALID_ARGUMENT"}}"#,
            "empty_content at=messages[4] => repair(GM-13)",
        ),
        (
            Some(400),
            r#"{"error":{"code":400,"message":"Unable to submit request because it must include at least one parts field, which describes the prompt input. Each content must contain at least one part.","status":"INVALID_ARGUMENT"}}"#,
            "empty_content => repair(GM-13)",
        ),
        (
            Some(400),
            r#"{"error":{"code":400,"message":"Function call parts and function response parts cannot be mixed in the same content.","status":"INVALID_ARGUMENT"}}"#,
            "role_order => repair(GM-09,GM-03)",
        ),
        (
            Some(400),
            r#"{"error":{"type":"invalid_request_error","message":"messages.5.content.0: thinking signature was not issued to this caller"}}"#,
            "thinking_signature_invalid at=messages[5].content[0] => restore_from_store",
        ),
        (
            Some(403),
            "Forbidden: forging thinking signature is not allowed (messages.3.content.0)",
            "thinking_signature_invalid at=messages[3].content[0] => restore_from_store",
        ),
    ]);
}

#[test]
fn quotas_of_zero_are_not_waited_out() {
    check(&[
        (
            Some(429),
            "429 Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 0, model: gemini-2.5-pro. Please retry in 31.6s. RESOURCE_EXHAUSTED",
            "unknown quota_exhausted => give_up(the quota cannot be waited out (billing, or a limit of zero for this model or tier): change the model, the key or the plan)",
        ),
        (
            Some(429),
            r#"{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaValue":"0"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"41s"}]}}"#,
            "unknown quota_exhausted => give_up(the quota cannot be waited out (billing, or a limit of zero for this model or tier): change the model, the key or the plan)",
        ),
        (
            Some(429),
            r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"violations":[{"quotaId":"x","limit": 0}]}]}}"#,
            "unknown quota_exhausted => give_up(the quota cannot be waited out (billing, or a limit of zero for this model or tier): change the model, the key or the plan)",
        ),
        // Controls: a quota with a limit is waited out, a wrapper's reset stays on a rate limit.
        (
            Some(429),
            r#"{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel","quotaValue":"10"}]},{"retryDelay":"41s"}]}}"#,
            "retryable_rate_limit retryable wait=41000ms => retry",
        ),
        (
            Some(429),
            "[deepseek/deepseek-chat] [429]: Rate limit reached for requests (reset after 30s)",
            "retryable_rate_limit retryable wait=30000ms => retry",
        ),
    ]);
}
