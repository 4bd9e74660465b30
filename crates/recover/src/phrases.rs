//! The phrase table: stable substrings of real errors, grouped in families, in priority order.
//!
//! A row matches when every one of its phrases occurs in the normalised text (no spaces, quotes
//! or case), in any order and at any distance: a family of a few short phrases tolerates the
//! word order and the fillers of different wordings. Sources are `shared/research/api-rules.md`
//! and `api-rules-2026-11.md` (rule ids) and the development part of `corpus/errors`.

use crate::diagnosis::{ConfigField, ErrorKind};

/// One table row: kind, phrases that must all occur (readable form; normalised at start-up),
/// and the config field for `request_config_invalid` rows.
pub(crate) type Row = (ErrorKind, &'static [&'static str], Option<ConfigField>);

use ConfigField as C;
use ErrorKind as K;

/// The rule table, in priority order. Phrases are quoted from real errors; sources are
/// `shared/research/api-rules.md` (rule ids) and `corpus/errors` (ids of items).
pub(crate) const RULES: &[Row] = &[
    // 1. AN-22 (anthropics/claude-code#63221, vybestack/llxprt-code#1653).
    (
        K::ThinkingBlockModified,
        &["cannot be modified", "thinking"],
        None,
    ),
    // 2. AN-23/AN-25 (ding113/claude-code-hub#518, anomalyco/opencode#48637), AN-06
    //    (lbjlaq/Antigravity-Manager#1650), GM-01 (manthanabc/paws#103), GM-08.
    (
        K::ThinkingSignatureInvalid,
        &["invalid signature in thinking block"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["bound to a different conversation"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["signature: field required"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["invalid data in redacted_thinking"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["is missing a thought_signature"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["missing a thought_signature"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["corrupted thought signature"],
        None,
    ),
    //    Vertex wording GM-16, redacted data rebuilt without `data` (api-rules-2026-11 §6, AN-44).
    (
        K::ThinkingSignatureInvalid,
        &["thought signature is not valid"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["redacted_thinking.data", "field required"],
        None,
    ),
    //    api-rules-reasoning-2026-11 §7 and §11: GM-19's other wordings (Vertex names the content
    //    block; image models the content index), ORT-05 (OpenRouter's own text when the Gemini
    //    one is not relayed), and gateways that reword AN-23 for a signature minted for another
    //    key or model (brief of issue "recover-classes").
    (
        K::ThinkingSignatureInvalid,
        &["invalid thought signature for content at index"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["gemini models require openrouter reasoning details to be preserved"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["was not issued to this caller"],
        None,
    ),
    (
        K::ThinkingSignatureInvalid,
        &["forging thinking signature"],
        None,
    ),
    // 3. Request configuration (api-rules.md §1.2; trap 1). anthropics/claude-code#11388,
    //    n8n-io/n8n#14288, MartialBE/one-hub#529, liuw1535/antigravity2api-nodejs#149.
    //    Settings no transcript repair fixes (brief of issue "recover-classes"; peers.md §
    //    failover classes for the model wordings): a model id that is invalid or retired
    //    (Anthropic's 404 `not_found_error` names `model: <id>`), too many cache breakpoints,
    //    `temperature` with `top_p`, a thinking budget out of range, a model without tools, a key
    //    Bedrock does not take. Before the thinking rows: several say "thinking".
    (
        K::RequestConfigInvalid,
        &["not_found_error", "model:"],
        Some(C::Model),
    ),
    (
        K::RequestConfigInvalid,
        &["is not a valid model id"],
        Some(C::Model),
    ),
    (
        K::RequestConfigInvalid,
        &["model_not_found"],
        Some(C::Model),
    ),
    (
        K::RequestConfigInvalid,
        &["the model", "does not exist"],
        Some(C::Model),
    ),
    (
        K::RequestConfigInvalid,
        &["blocks with cache_control may be provided"],
        Some(C::CacheControl),
    ),
    (
        K::RequestConfigInvalid,
        &["temperature and top_p cannot both be specified"],
        Some(C::TemperatureAndTopP),
    ),
    (
        K::RequestConfigInvalid,
        &["budget_tokens", "must be less than"],
        Some(C::MaxTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["budget_tokens", "too small"],
        Some(C::BudgetTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["budget_tokens", "must be at least"],
        Some(C::BudgetTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking budget", "is invalid"],
        Some(C::BudgetTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["does not support tools"],
        Some(C::ToolsUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["tool use is not supported"],
        Some(C::ToolsUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["no endpoints found that support tool use"],
        Some(C::ToolsUnsupported),
    ),
    //    Other wordings of the same settings (development items of `corpus/errors/fresh.jsonl`):
    //    OpenAI's and gateways' "tools ... not supported", a Gemini model id the API version does
    //    not know, DeepSeek's and relays' "Model Not Exist", a Bedrock model that needs an
    //    inference profile, an output cap above the model's, a parameter a model refuses, two
    //    settings that exclude each other, a field of the wrong type.
    (
        K::RequestConfigInvalid,
        &["tools is not supported"],
        Some(C::ToolsUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["function calling not support"],
        Some(C::ToolsUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["is not found for api version"],
        Some(C::Model),
    ),
    (
        K::RequestConfigInvalid,
        &["model not exist"],
        Some(C::Model),
    ),
    (
        K::RequestConfigInvalid,
        &["with on-demand throughput"],
        Some(C::Model),
    ),
    (
        K::RequestConfigInvalid,
        &["tokens you requested exceed the model limit"],
        Some(C::MaxTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["does not support the parameter"],
        None,
    ),
    (K::RequestConfigInvalid, &["cannot specify both"], None),
    (
        K::RequestConfigInvalid,
        &["model not found"],
        Some(C::Model),
    ),
    (K::RequestConfigInvalid, &["unknown model"], Some(C::Model)),
    (
        K::RequestConfigInvalid,
        &["field in the request", "is illegal"],
        None,
    ),
    (
        K::RequestConfigInvalid,
        &["extraneous key", "is not permitted"],
        None,
    ),
    //    A Bedrock length cap on a tool definition, before the context row that reads the same
    //    `maxLength` on messages.
    (
        K::RequestConfigInvalid,
        &["#/tools/", "maxlength"],
        Some(C::ToolDefinition),
    ),
    //    OpenAI Responses (api-rules-reasoning-2026-11 §3.2, §6.4): OR-12 (`content` on an input
    //    reasoning item), OR-13 (reasoning items to a model without reasoning), OR-16 and LS-03
    //    (encrypted content where it is not supported, shapes a local server cannot read).
    (
        K::RequestConfigInvalid,
        &["input[", ".content: array too long"],
        None,
    ),
    (
        K::RequestConfigInvalid,
        &["reasoning input items can only be provided to a reasoning"],
        Some(C::ReasoningItems),
    ),
    (
        K::RequestConfigInvalid,
        &["encrypted content is not supported"],
        Some(C::Include),
    ),
    (
        K::RequestConfigInvalid,
        &["cannot determine type of", "item"],
        Some(C::ReasoningItems),
    ),
    (
        K::RequestConfigInvalid,
        &["temperature may only be set to"],
        Some(C::Temperature),
    ),
    (K::RequestConfigInvalid, &["top_p must be"], Some(C::TopP)),
    (
        K::RequestConfigInvalid,
        &["top_k", "thinking"],
        Some(C::TopK),
    ),
    (
        K::RequestConfigInvalid,
        &["must be greater than thinking.budget_tokens"],
        Some(C::MaxTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["budget_tokens: input should be"],
        Some(C::BudgetTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking may not be enabled when tool_choice"],
        Some(C::ToolChoice),
    ),
    (
        K::RequestConfigInvalid,
        &["does not support thinking"],
        Some(C::ModelWithoutThinking),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking.type.enabled is not supported"],
        Some(C::ManualThinkingUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["adaptive thinking is not supported"],
        Some(C::AdaptiveThinkingUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["include_thoughts is only enabled"],
        Some(C::IncludeThoughts),
    ),
    (
        K::RequestConfigInvalid,
        &["custom.name: string should match pattern"],
        Some(C::ToolDefinition),
    ),
    (
        K::RequestConfigInvalid,
        &["input_schema"],
        Some(C::ToolDefinition),
    ),
    //    api-rules-2026-11 §1.2, §3, §4, §5 and §8: effort, thinking types, context editing,
    //    tool search, tool choice, Bedrock toolConfig; development items of corpus/errors.
    (
        K::RequestConfigInvalid,
        &["temperature", "deprecated"],
        Some(C::Temperature),
    ),
    (
        K::RequestConfigInvalid,
        &["function tools with reasoning_effort"],
        Some(C::ReasoningEffort),
    ),
    (
        K::RequestConfigInvalid,
        &["reasoning_effort does not support"],
        Some(C::ReasoningEffort),
    ),
    (
        K::RequestConfigInvalid,
        &["unexpected reasoning effort"],
        Some(C::ReasoningEffort),
    ),
    (
        K::RequestConfigInvalid,
        &["does not support the effort parameter"],
        Some(C::Effort),
    ),
    (
        K::RequestConfigInvalid,
        &["does not support effort level"],
        Some(C::Effort),
    ),
    (
        K::RequestConfigInvalid,
        &["is not supported when thinking is disabled"],
        Some(C::Effort),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking.type.disabled is not supported"],
        Some(C::ThinkingType),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking.type.between_tools"],
        Some(C::ThinkingType),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking.disabled.display"],
        Some(C::ThinkingType),
    ),
    (
        K::RequestConfigInvalid,
        &["unsupported thinking type"],
        Some(C::ThinkingType),
    ),
    (
        K::RequestConfigInvalid,
        &["adaptive is not supported"],
        Some(C::AdaptiveThinkingUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["thinking.type must be enabled or disabled"],
        Some(C::AdaptiveThinkingUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["input should be enabled or disabled"],
        Some(C::AdaptiveThinkingUnsupported),
    ),
    (
        K::RequestConfigInvalid,
        &["strategy requires", "thinking", "to be enabled"],
        Some(C::ContextManagement),
    ),
    (
        K::RequestConfigInvalid,
        &["context_management", "not permitted"],
        Some(C::ContextManagement),
    ),
    (
        K::RequestConfigInvalid,
        &["defer_loading"],
        Some(C::DeferLoading),
    ),
    (
        K::RequestConfigInvalid,
        &["deferred tools require"],
        Some(C::DeferLoading),
    ),
    (
        K::RequestConfigInvalid,
        &["tool_search requires"],
        Some(C::DeferLoading),
    ),
    (
        K::RequestConfigInvalid,
        &["tool reference", "not found in available tools"],
        Some(C::ToolDefinition),
    ),
    (
        K::RequestConfigInvalid,
        &["does not match any of the expected tags"],
        Some(C::ToolDefinition),
    ),
    (
        K::RequestConfigInvalid,
        &["does not support tool types"],
        Some(C::ToolDefinition),
    ),
    (
        K::RequestConfigInvalid,
        &["function parameters is empty"],
        Some(C::ToolDefinition),
    ),
    (
        K::RequestConfigInvalid,
        &["invalid tool type"],
        Some(C::ToolDefinition),
    ),
    (
        K::RequestConfigInvalid,
        &["tool_choice", "not supported for this model"],
        Some(C::ToolChoice),
    ),
    (
        K::RequestConfigInvalid,
        &["tool_choice", "incompatible with thinking"],
        Some(C::ToolChoice),
    ),
    (
        K::RequestConfigInvalid,
        &["tool_choice parameter does not support"],
        Some(C::ToolChoice),
    ),
    (
        K::RequestConfigInvalid,
        &["toolconfig field must be defined"],
        Some(C::ToolConfig),
    ),
    (
        K::RequestConfigInvalid,
        &["reserved keyword", "system prompt"],
        Some(C::SystemPrompt),
    ),
    (
        K::RequestConfigInvalid,
        &["maximum allowed number of output tokens"],
        Some(C::MaxTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["to reserve tokens for a final answer"],
        Some(C::MaxTokens),
    ),
    (
        K::RequestConfigInvalid,
        &["budget_tokens", "greater than or equal to"],
        Some(C::BudgetTokens),
    ),
    //    GLM: `messages`/`history` illegal (1214) names no cause and is no configuration error
    //    (GLM-04); any other parameter named illegal (1210-style) is one.
    (K::Unknown, &["messages参数非法"], None),
    (K::Unknown, &["history参数非法"], None),
    (K::Unknown, &["the messages parameter is illegal"], None),
    (K::RequestConfigInvalid, &["参数非法"], None),
    (K::RequestConfigInvalid, &["调用参数有误"], None),
    (K::RequestConfigInvalid, &["invalid chat setting"], None),
    (
        K::RequestConfigInvalid,
        &["model identifier is invalid"],
        Some(C::Model),
    ),
    (K::RequestConfigInvalid, &["header is required"], None),
    //    OpenCode Go's router: a required header is absent (`MissingSessionID`).
    (K::RequestConfigInvalid, &["request is missing x-"], None),
    (K::RequestConfigInvalid, &["unknown parameter"], None),
    (K::RequestConfigInvalid, &["unsupported parameter"], None),
    (
        K::RequestConfigInvalid,
        &["unsupported value:", "does not support"],
        None,
    ),
    // 4. AN-19 (anthropics/claude-code#10199), AN-20 (tailcallhq/forgecode#1853),
    //    AN-16/AN-18 (anomalyco/opencode#3077, anthropics/claude-code#20734),
    //    DS-03 (decolua/9router#355), KM-01.
    (
        K::ThinkingBlockTrailing,
        &["final block in an assistant message cannot be thinking"],
        None,
    ),
    //    DS-01 (legacy deepseek-reasoner refuses `reasoning_content` back), BR-05 (DeepSeek R1 on
    //    Bedrock refuses its own unsigned reasoning; the text says "User messages").
    (
        K::ThinkingDisabledViolation,
        &["reasoning_content is an intermediate result for display purposes only"],
        None,
    ),
    (
        K::ThinkingDisabledViolation,
        &["user messages cannot contain reasoning content"],
        None,
    ),
    (
        K::ThinkingDisabledViolation,
        &["when thinking is disabled", "cannot contain"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["expected thinking or redacted_thinking"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["must start with a thinking block"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["first block must be thinking"],
        None,
    ),
    (
        K::ThinkingBlockOrder,
        &["in the thinking mode must be passed back"],
        None,
    ),
    (K::ThinkingBlockOrder, &["missing reasoning_content"], None),
    (
        K::ThinkingBlockOrder,
        &["reasoning_content is missing"],
        None,
    ),
    //    DS-03 as a gateway words it before the provider sees it (LiteLLM for DeepSeek V4,
    //    esengine/DeepSeek-Reasonix#6173).
    (
        K::ThinkingBlockOrder,
        &["with tool_calls must include reasoning_content"],
        None,
    ),
    // 5. AN-12 (tailcallhq/forgecode#1142; ding113/claude-code-hub#470 for server_tool_use).
    (K::ToolUseIdFormat, &["tool_use.id: string should"], None),
    //    MS-01 (Mistral, code 3280), OC-06 (40-character cap), RS-08 (Responses item prefixes).
    (
        K::ToolUseIdFormat,
        &["tool call id was", "must be a-z"],
        None,
    ),
    (K::ToolUseIdFormat, &["with a length of 9"], None),
    (
        K::ToolUseIdFormat,
        &["expected an id that begins with"],
        None,
    ),
    (
        K::ToolUseIdFormat,
        &["expected an id that contains letters"],
        None,
    ),
    (K::ToolUseIdFormat, &["invalid_id_prefix"], None),
    (
        K::ToolUseIdFormat,
        &["tool_calls[", "string too long"],
        None,
    ),
    (K::ToolUseIdFormat, &["call_id", "string too long"], None),
    //    RS-01..RS-04 (continuedev/continue#8933, openai/codex#8145, can1357/oh-my-pi#41).
    (
        K::ReasoningItemOrphan,
        &["of type reasoning was provided without"],
        None,
    ),
    (
        K::ReasoningItemOrphan,
        &["was provided without its required reasoning"],
        None,
    ),
    (
        K::ReasoningItemOrphan,
        &["encrypted content", "could not be verified"],
        None,
    ),
    (K::ReasoningItemOrphan, &["invalid_encrypted_content"], None),
    (
        K::ReasoningItemOrphan,
        &["items are not persisted when"],
        None,
    ),
    //    OR-03 with `store: true`, OR-04's other reasons and Copilot's form, ORT-06.
    (K::ReasoningItemOrphan, &["item with id", "not found"], None),
    (
        K::ReasoningItemOrphan,
        &["organization_id did not match"],
        None,
    ),
    (
        K::ReasoningItemOrphan,
        &["encrypted content", "could not be decrypted"],
        None,
    ),
    (
        K::ReasoningItemOrphan,
        &["encrypted function output content could not be"],
        None,
    ),
    //    OR-14: an item the `previous_response_id` chain already holds.
    (
        K::ToolUseIdMismatch,
        &["duplicate item found with id"],
        None,
    ),
    //    OR-15: the chain itself is gone; no kind of ours describes it.
    (
        K::Unknown,
        &["previous response with id", "not found"],
        None,
    ),
    (K::Unknown, &["previous_response_not_found"], None),
    //    AN-10/AN-15 (tghamm/Anthropic.SDK#184, anthropics/claude-code#64383), OC-02
    //    (miurla/morphic#136), Bedrock Converse, GM-09 response turn, RS-05.
    (K::ToolUseIdMismatch, &["unexpected tool_use_id"], None),
    (
        K::ToolUseIdMismatch,
        &["must be a response to a prece"],
        None,
    ),
    (
        K::ToolUseIdMismatch,
        &["exceeds the number of tooluse blocks"],
        None,
    ),
    (
        K::ToolUseIdMismatch,
        &["function response turn comes immediately after"],
        None,
    ),
    (
        K::ToolUseIdMismatch,
        &["no tool call found for function call output"],
        None,
    ),
    //    MM-01 (MiniMax 2013), mlx-openai-server's template text.
    (
        K::ToolUseIdMismatch,
        &["tool result's tool id", "not found"],
        None,
    ),
    (
        K::ToolUseIdMismatch,
        &[
            "tool role",
            "no previous assistant message with a tool call",
        ],
        None,
    ),
    //    Letta's streaming check: the results answer other calls than the last assistant made.
    (
        K::ToolUseIdMismatch,
        &["invalid tool call ids", "but received"],
        None,
    ),
    //    AN-08 (Kilo-Org/kilocode#5163), OC-01 (aliasrobotics/cai#111), GM-10
    //    (google-gemini/gemini-cli#18509), RS-05.
    (K::ToolResultMissing, &["ids were found without"], None),
    (
        K::ToolResultMissing,
        &["did not find", "tool_result block"],
        None,
    ),
    (
        K::ToolResultMissing,
        &["must be followed by tool messages"],
        None,
    ),
    (K::ToolResultMissing, &["insufficient tool messages"], None),
    (
        K::ToolResultMissing,
        &["number of function response parts"],
        None,
    ),
    (
        K::ToolResultMissing,
        &["no tool output found for function call"],
        None,
    ),
    //    AN-40: a server tool use left without its result.
    (
        K::ToolResultMissing,
        &["was found without a corresponding", "_tool_result"],
        None,
    ),
    //    AN-01..AN-03, Bedrock Converse, vLLM templates, GM-09 call turn, GM-12
    //    (CherryHQ/cherry-studio#39, vllm-project/vllm#6862, xincmm/sageread#8).
    (K::RoleOrder, &["roles must alternate"], None),
    (
        K::RoleOrder,
        &["must alternate between user and assistant"],
        None,
    ),
    (K::RoleOrder, &["roles should be alternating"], None),
    (K::RoleOrder, &["must start with a user message"], None),
    (K::RoleOrder, &["first message must use the"], None),
    (K::RoleOrder, &["must end with a user message"], None),
    (
        K::RoleOrder,
        &["does not support assistant message prefill"],
        None,
    ),
    (
        K::RoleOrder,
        &["function call turn comes immediately after"],
        None,
    ),
    (K::RoleOrder, &["multiturn requests ends with a user"], None),
    //    Gemini: function call and function response parts mixed in one turn.
    (
        K::RoleOrder,
        &["function call", "function response", "mix"],
        None,
    ),
    (
        K::RoleOrder,
        &["function_call part", "mixed with function_response"],
        None,
    ),
    //    MS-02, MS-03 (Mistral), MiniMax.
    (K::RoleOrder, &["unexpected role", "after role"], None),
    (K::RoleOrder, &["expected last role"], None),
    (K::RoleOrder, &["invalid message role"], None),
    //    The legacy deepseek-reasoner's alternation rule (deepseek-ai/DeepSeek-R1#21,
    //    stackblitz-labs/bolt.diy#1235).
    (
        K::RoleOrder,
        &["does not support successive user or assistant messages"],
        None,
    ),
    //    CX-02: an Anthropic-compatible endpoint that takes no `system` message (DeepSeek,
    //    Qwen; deepseek-ai/awesome-deepseek-agent#167, anthropics/claude-code#63569).
    (
        K::RoleOrder,
        &["unknown variant system", "expected user or assistant"],
        None,
    ),
    // 6. AN-04/AN-05 (anthropics/claude-code#6774, TheValkyrja/Anthropic2Vertex#5).
    (K::EmptyContent, &["must have non-empty content"], None),
    (K::EmptyContent, &["text content blocks must"], None),
    (
        K::EmptyContent,
        &["cache_control cannot be set for empty text"],
        None,
    ),
    (K::EmptyContent, &["is blank. add text"], None),
    //    OR-11 (a reasoning item without `summary`, OpenAI's and a compatible upstream's
    //    words), BR-04 (Bedrock's null `reasoningText.text`), GM-13 (a content without parts).
    (
        K::EmptyContent,
        &["missing required parameter", "].summary"],
        None,
    ),
    (K::EmptyContent, &["missing required field summary"], None),
    (
        K::EmptyContent,
        &[
            "reasoningcontent.reasoningtext.text",
            "failed to satisfy constraint",
        ],
        None,
    ),
    (K::EmptyContent, &["contents.parts must not be empty"], None),
    (K::EmptyContent, &["must contain at least one part"], None),
    //    KM-04 (Kimi), Mistral.
    (
        K::EmptyContent,
        &["content or tool_calls must be set"],
        None,
    ),
    (
        K::EmptyContent,
        &["must have either content or tool_calls"],
        None,
    ),
    // 7. Context window (stackblitz/bolt.new#1748, ChatGPTNextWeb/NextChat#625,
    //    google-gemini/gemini-cli#4231, TheR1D/shell_gpt#653 for the TPM trap).
    (K::ContextLengthExceeded, &["prompt is too long"], None),
    (K::ContextLengthExceeded, &["exceed context limit"], None),
    (K::ContextLengthExceeded, &["maximum context length"], None),
    (K::ContextLengthExceeded, &["context_length_exceeded"], None),
    (
        K::ContextLengthExceeded,
        &["exceeds the context window"],
        None,
    ),
    (K::ContextLengthExceeded, &["input token count"], None),
    (K::ContextLengthExceeded, &["request too large for"], None),
    (K::ContextLengthExceeded, &["input is too long"], None),
    //    llama.cpp and the Codex client's own text (api-rules-2026-11 §5, §8).
    (
        K::ContextLengthExceeded,
        &["exceed_context_size_error"],
        None,
    ),
    (
        K::ContextLengthExceeded,
        &["exceeds the available context size"],
        None,
    ),
    (K::ContextLengthExceeded, &["exceeds context size"], None),
    //    llama-cpp-python's and xAI's wordings (development items of `fresh.jsonl`).
    (K::ContextLengthExceeded, &["exceed context window"], None),
    (K::ContextLengthExceeded, &["maximum prompt length"], None),
    //    Anthropic's body cap (413 `request_too_large`, "Request Entity Too Large") and a
    //    gateway's wording of the window (development peer cases of `fresh.jsonl`).
    (
        K::ContextLengthExceeded,
        &["request entity too large"],
        None,
    ),
    (
        K::ContextLengthExceeded,
        &["exceeds model context window"],
        None,
    ),
    (
        K::ContextLengthExceeded,
        &["ran out of room in the model's context window"],
        None,
    ),
    //    vLLM's other wordings, Bedrock's length caps on the body (`Malformed input request`
    //    naming a `maxLength`) and Anthropic's 413 (peers.md).
    (
        K::ContextLengthExceeded,
        &["input prompt", "is too long"],
        None,
    ),
    (
        K::ContextLengthExceeded,
        &["is longer than the maximum model length"],
        None,
    ),
    (
        K::ContextLengthExceeded,
        &["malformed input request", "maxlength"],
        None,
    ),
    (K::ContextLengthExceeded, &["request_too_large"], None),
    (
        K::ContextLengthExceeded,
        &["request exceeds the maximum size"],
        None,
    ),
    // 8. Billing and zero quotas are decided before this table's retryable rows are read
    //    (`classify::quota_verdict`). Rate limits (bhouston/mycoder#62, BuilderIO/micro-agent#86,
    //    google/generative-ai-docs#438, kirodotdev/Kiro#8113).
    (K::RetryableRateLimit, &["rate_limit_error"], None),
    (K::RetryableRateLimit, &["rate limit reached"], None),
    (
        K::RetryableRateLimit,
        &["would exceed the rate limit"],
        None,
    ),
    (
        K::RetryableRateLimit,
        &["rate limit", "try again later"],
        None,
    ),
    (K::RetryableRateLimit, &["rate_limit_exceeded"], None),
    (K::RetryableRateLimit, &["resource_exhausted"], None),
    (
        K::RetryableRateLimit,
        &["resource has been exhausted"],
        None,
    ),
    (
        K::RetryableRateLimit,
        &["exceeded your current quota"],
        None,
    ),
    (K::RetryableRateLimit, &["throttlingexception"], None),
    (K::RetryableRateLimit, &["too many requests"], None),
    (K::RetryableRateLimit, &["too many tokens"], None),
    //    Development peer cases of `fresh.jsonl` (openfang's rate-limit wordings); the context
    //    rows above already took OpenAI's "Request too large ... tokens per min".
    (K::RetryableRateLimit, &["hit the rate limit"], None),
    (K::RetryableRateLimit, &["tokens per minute"], None),
    (
        K::RetryableRateLimit,
        &["would exceed your organization's rate limit"],
        None,
    ),
    (K::RetryableRateLimit, &["rate limit exceeded"], None),
    //    new-api / one-api: "the group's upstream load is saturated, try again later".
    (K::RetryableRateLimit, &["负载已饱和"], None),
    //    Overload (anthropics/anthropic-sdk-typescript#616, lobehub/lobehub#9728).
    (K::RetryableOverloaded, &["overloaded"], None),
    (K::RetryableOverloaded, &["experiencing high demand"], None),
    (
        K::RetryableOverloaded,
        &["service is currently unavailable"],
        None,
    ),
    (K::RetryableOverloaded, &["status code of 503"], None),
    //    Transient server errors (anthropics/claude-code#22766, Wei-Shaw/sub2api#6714).
    (K::RetryableServer, &["internal server error"], None),
    (K::RetryableServer, &["api_error"], None),
    (K::RetryableServer, &["server_error"], None),
    (K::RetryableServer, &["server had an error"], None),
    (K::RetryableServer, &["internal error encountered"], None),
    (K::RetryableServer, &["internal error has occurred"], None),
    (
        K::RetryableServer,
        &["an error occurred while processing your request"],
        None,
    ),
];
