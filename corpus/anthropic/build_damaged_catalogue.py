"""Damaged cases for the rule ids that had none (issue #12): one small body per id.

Run from the repository root: python3 corpus/anthropic/build_damaged_catalogue.py
Then `TURNKEEPER_BLESS=1 cargo test -p turnkeeper-prevent --test corpus corpus_damaged` writes
each case's exact rule lists and `.after.json`, for review in the diff.

The signed thinking block is the real one of `an08_aborted_turn.json` (from
`anthropic/fantasy--TestAnthropicThinking-claude-sonnet-4-thinking__1.request.json`), bytes kept.
"""
import json
import os

D = "corpus/damaged"
base = json.load(open(os.path.join(D, "an08_aborted_turn.json")))
TH = base["messages"][1]["content"][0]
assert TH["type"] == "thinking"


def write(name, body, model, thinking, api_rules, error, note, extra=None):
    with open(os.path.join(D, name + ".json"), "w") as f:
        json.dump(body, f, ensure_ascii=False)
    e = {"model": model, "thinking": thinking, "rules": [], "left": [], "api_rules": api_rules,
         "error": error, "note": note}
    if extra:
        e.update(extra)
    with open(os.path.join(D, name + ".expect.json"), "w") as f:
        json.dump(e, f, indent=2, ensure_ascii=False)
        f.write("\n")


def req(model, msgs, thinking=None, **top):
    b = {"model": model, "max_tokens": 16000}
    if thinking is not None:
        b["thinking"] = thinking
    b.update(top)
    b["messages"] = msgs
    return b


U = lambda t: {"role": "user", "content": t}
MAN = {"type": "enabled", "budget_tokens": 2048}

# AN-02 on a target that requires alternation (Bedrock Converse, old relays).
write("an02_consecutive_user_messages_converse",
      req("claude-sonnet-4-5", [U("Summarise the log."), U("Only the errors, please.")]),
      "claude-sonnet-4-5", None, ["AN-02"],
      "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.",
      "A harness appended a follow-up as its own user message; the Messages API merges them (AN-02) but Bedrock Converse rejects them. Run with the policy `merge_same_role` (the `policy` field).",
      {"policy": {"merge_same_role": True}})

# AN-15: a translator dropped the server_tool_use and kept its result.
write("an15_server_result_without_its_call",
      req("claude-sonnet-4-5", [U("What is the weather in Paris?"),
          {"role": "assistant", "content": [
              {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01A2b3C4d5E6f7G8h9",
               "content": [{"type": "web_search_result", "url": "https://example.org/paris",
                            "title": "Paris weather", "encrypted_content": "EqgfCioIARgBIiQ3"}]},
              {"type": "text", "text": "It is sunny in Paris."}]},
          U("And tomorrow?")]),
      "claude-sonnet-4-5", None, ["AN-15"],
      "messages.1.content.0: unexpected `tool_use_id` found in `web_search_tool_result` blocks: srvtoolu_01A2b3C4d5E6f7G8h9. Each `web_search_tool_result` block must have a corresponding `server_tool_use` block before it.",
      "A serializer with an allow-list of block types kept the server tool's result and dropped its `server_tool_use` (api-rules-2026-11.md AN-40). Error text as api-rules.md AN-15 gives it, with this block type.")

# AN-22: the latest turn reordered, no stored original: only a warning, nothing guessed.
write("an22_latest_turn_reordered_no_store",
      req("claude-opus-4-6", [U("List the files."),
          {"role": "assistant", "content": [
              {"type": "tool_use", "id": "toolu_01XyZ", "name": "ls", "input": {}}, TH,
              {"type": "text", "text": "Listing."}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01XyZ", "content": "a.txt"}]}],
          thinking={"type": "adaptive"}),
      "claude-opus-4-6", "adaptive", ["AN-22"],
      "messages.1.content.1: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
      "A client sorted the latest turn's parts so the tool call came first (seed 002's cause). In adaptive mode only AN-22 applies; without a stored original turnkeeper can only warn (unverifiable), never reorder.",
      {"api_only": True})

# AN-25: a repair (AN-05) edits an earlier message on a prefix-bound model.
write("an25_repair_edits_the_prefix_of_bound_thinking",
      req("claude-fable-5-1", [U("Plan the release."),
          {"role": "assistant", "content": [TH, {"type": "text", "text": "Step one: tag."}]},
          {"role": "user", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "Go on."}]},
          {"role": "assistant", "content": [TH, {"type": "text", "text": "Step two: publish."}]},
          U("Thanks.")], thinking={"type": "adaptive"}),
      "claude-fable-5-1", "adaptive", ["AN-05", "AN-25"],
      "messages.2.content.0: text content blocks must contain non-whitespace text",
      "Whitespace text in an earlier user turn (AN-05). Removing it edits the prefix of the later thinking block, which a prefix-bound model then refuses (AN-25): the repair strips thinking from the edit point on. The thinking block is the real sonnet-4 one, used for its bytes only.")

# Gemini.
g = json.load(open(os.path.join(D, "gm10_response_count_mismatch.json")))
model_turn = g["contents"][1]
fr = {"functionResponse": {"name": "secret_retrieval_tool", "response": {"output": "Welcome to Moria!"}}}
fr2 = {"functionResponse": {"name": "secret_retrieval_tool", "response": {"output": "Radiant!"}}}
gm09 = dict(g)
gm09["contents"] = [g["contents"][0], model_turn,
                    {"role": "user", "parts": [{"text": "Hurry up."}]},
                    {"role": "user", "parts": [fr, fr2]}]
write("gm09_response_after_user_text", gm09, "gemini-3-pro-preview", None, ["GM-09"],
      "Please ensure that function response turn comes immediately after a function call turn.",
      "`gemini/mirascope--e2e-output-test_call_with_tools-google_gemini_2_5_flash-async__1.request.json` (via gm10_response_count_mismatch) with a user text content stored between the calls and their responses.")
gm03 = dict(g)
gm03["contents"] = [g["contents"][0], model_turn,
                    {"role": "user", "parts": [{"text": "Here you go."}, fr, fr2]}]
write("gm03_text_before_function_responses", gm03, "gemini-3-pro-preview", None, ["GM-03"],
      "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
      "`gemini/mirascope--e2e-output-test_call_with_tools-google_gemini_2_5_flash-async__1.request.json` (via gm10_response_count_mismatch) with a harness note put before the function responses. api-rules.md gives no dedicated GM-03 text; the GM-10 wording is an assumption.")
gm12 = dict(g)
gm12["contents"] = [{"role": "system", "parts": [{"text": "Be brief."}]}] + g["contents"][:2] + [{"role": "user", "parts": [fr, fr2]}]
write("gm12_system_role_content", gm12, "gemini-3-pro-preview", None, ["GM-12"],
      "Please use a valid role: user, model.",
      "An OpenAI-style system message converted to a Gemini content with role `system` (it belongs in systemInstruction). The SDK raises on any role but user and model (api-rules.md GM-12); the error text is the API's wording as commonly reported, not verified here.")
gm13 = dict(g)
gm13["contents"] = [g["contents"][0], model_turn, {"role": "user", "parts": [fr, fr2, {}]}]
write("gm13_empty_part", gm13, "gemini-3-pro-preview", None, ["GM-13"],
      "contents.2.parts.2: required oneof field 'data' must have one initialized field",
      "A converter emitted an empty Part() after the function responses (python-genai counts a content with an empty part invalid, api-rules.md GM-13). Error text as commonly reported for an empty part; not verified here.")

# Request settings.
ok_msgs = [U("Hello."), {"role": "assistant", "content": [TH, {"type": "text", "text": "Hi."}]}, U("Tell me more.")]
cfg = [
    ("cfg01_thinking_on_a_model_without_it", "claude-3-5-haiku-20241022", MAN, {}, "CFG-01",
     "'claude-3-5-haiku-20241022' does not support thinking."),
    ("cfg02_manual_thinking_adaptive_only_model", "claude-opus-4-7", MAN, {}, "CFG-02",
     "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior."),
    ("cfg03_adaptive_on_a_manual_only_model", "claude-sonnet-4-5", {"type": "adaptive"}, {}, "CFG-03",
     "adaptive thinking is not supported on this model"),
    ("cfg04_disabled_on_an_always_thinking_model", "claude-fable-5-1", {"type": "disabled"}, {}, "CFG-04",
     "\"thinking.type.disabled\" is not supported for this model."),
    ("cfg06_manual_thinking_without_budget", "claude-sonnet-4-5", {"type": "enabled"}, {}, "CFG-06",
     "thinking.budget_tokens: Field required"),
    ("cfg08_temperature_on_a_strict_sampling_model", "claude-opus-4-7", {"type": "adaptive"}, {"temperature": 0.5}, "CFG-08",
     "`temperature` is not supported for this model."),
    ("cfg10_top_k_with_thinking", "claude-sonnet-4-5", MAN, {"top_k": 40}, "CFG-10",
     "`top_k` is not available when thinking is enabled"),
    ("cfg11_top_p_below_095_with_thinking", "claude-sonnet-4-5", MAN, {"top_p": 0.5}, "CFG-11",
     "`top_p` must be greater than or equal to 0.95 when thinking is enabled"),
]
for name, model, th, top, rule, err in cfg:
    write(name, req(model, ok_msgs, thinking=th, **top), model, th.get("type"), [rule], err,
          "The transcript is valid (real signed block from `anthropic/fantasy--TestAnthropicThinking-claude-sonnet-4-thinking__1.request.json`); only the request settings are wrong (api-rules.md §1.2; api-rules-2026-11.md §1.1-1.2). Where api-rules gives no exact text, the error is an assumption.")
print("ok")

# Edge cases from peers' own test suites (issue #12, section 3).
call = {"type": "tool_use", "id": "toolu_01Dup", "name": "ls", "input": {}}
write("an46_duplicate_tool_use_ids",
      req("claude-sonnet-4-5", [U("List both folders."),
          {"role": "assistant", "content": [TH, call, dict(call, input={"path": "src"})]},
          {"role": "user", "content": [
              {"type": "tool_result", "tool_use_id": "toolu_01Dup", "content": "a.txt"},
              {"type": "tool_result", "tool_use_id": "toolu_01Dup", "content": "lib.rs"}]},
          U("Thanks.")], thinking=MAN),
      "claude-sonnet-4-5", "enabled", ["AN-46"],
      "`tool_use` ids must be unique",
      "Two parallel calls stored under one id by a client that derived ids from the tool name (LiteLLM filters duplicate tool_use ids for this reason, peers.md). No repair: which result answers which call cannot be known.")
th_no_text = {k: v for k, v in TH.items() if k != "thinking"}
write("an06_signed_thinking_without_text",
      req("claude-sonnet-4-5", [U("Hello."),
          {"role": "assistant", "content": [th_no_text, {"type": "text", "text": "Hi."}]},
          U("Tell me more."),
          {"role": "assistant", "content": [{"type": "text", "text": "Sure."}]},
          U("Go on.")], thinking=MAN),
      "claude-sonnet-4-5", "enabled", ["AN-06"],
      "messages.1.content.0.thinking.thinking: Field required",
      "A converter kept the signature of a reasoning part but not its text (openclaw's validateThinkingBlocks test: `th` without `thinking` is invalid, peers.md). Not the latest assistant message, so the block goes whole.")
write("an06_tool_use_without_input",
      req("claude-sonnet-4-5", [U("List the files."),
          {"role": "assistant", "content": [TH, {"type": "tool_use", "id": "toolu_01NoIn", "name": "ls"}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01NoIn", "content": "a.txt"}]}],
          thinking=MAN),
      "claude-sonnet-4-5", "enabled", ["AN-06"],
      "messages.1.content.1.tool_use.input: Field required",
      "A client dropped `input` of a call that took no arguments (peers' test suites). The repair adds `\"input\": {}`.")
write("an06_tool_result_in_assistant_message",
      req("claude-sonnet-4-5", [U("List the files."),
          {"role": "assistant", "content": [{"type": "text", "text": "Done."},
              {"type": "tool_result", "tool_use_id": "toolu_01Lost", "content": "a.txt"}]},
          U("Thanks.")]),
      "claude-sonnet-4-5", None, ["AN-06"],
      "messages.1.content.1: Input tag 'tool_result' found using 'type' does not match any of the expected tags",
      "A converter put a tool result into the assistant message (peers' test suites). Which turn it belonged to cannot be known: reported, not repaired. The error text is an assumption built from the API's tag-union wording.")
write("an10_error_result_then_real_output",
      req("claude-sonnet-4-5", [U("List the files."),
          {"role": "assistant", "content": [TH, {"type": "tool_use", "id": "toolu_01Twice", "name": "ls", "input": {}}]},
          {"role": "user", "content": [
              {"type": "tool_result", "tool_use_id": "toolu_01Twice", "is_error": True, "content": "tool call did not complete"},
              {"type": "tool_result", "tool_use_id": "toolu_01Twice", "content": "a.txt\nb.txt"}]},
          U("Thanks.")], thinking=MAN),
      "claude-sonnet-4-5", "enabled", ["AN-10"],
      "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01Twice. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
      "A repairer added a synthetic error result, then the real output arrived (peers' test suites). The real output is kept.")
write("an04_only_message_empty",
      req("claude-sonnet-4-5", [U(" ")]),
      "claude-sonnet-4-5", None, ["AN-04"],
      "messages.0: all messages must have non-empty content except for the optional final assistant message",
      "A lone whitespace prompt. Removing it would leave `\"messages\": []`, which the API rejects too (peers' test suites): the message is kept and the error left for the caller.")
print("edge cases ok")

# The API as of 2026-11 (api-rules-2026-11.md): request settings (damaged) ...
write("cfg13_between_tools_on_opus55",
      req("claude-opus-5-5", ok_msgs, thinking={"type": "between_tools"}),
      "claude-opus-5-5", "between_tools", ["CFG-13"],
      "\"thinking.type.between_tools\" is not supported for this model.",
      "Opus 5.5 refuses `between_tools` (api-rules-2026-11.md §1.1, matrix: 400 on `enabled`, `disabled`, `between_tools`); the exact text is assumed from the documented `enabled`/`disabled` texts.")
write("cfg14_display_with_disabled",
      req("claude-sonnet-4-6", ok_msgs, thinking={"type": "disabled", "display": "omitted"}),
      "claude-sonnet-4-6", "disabled", ["CFG-14"],
      "thinking.disabled.display: Extra inputs are not permitted",
      "Subagents sent `display` together with `disabled` (anthropics/claude-code#68797, api-rules-2026-11.md §1.2).")
write("cfg15_xhigh_effort_with_thinking_disabled",
      req("claude-haiku-5-5", ok_msgs, thinking={"type": "disabled"}, output_config={"effort": "xhigh"}),
      "claude-haiku-5-5", "disabled", ["CFG-15"],
      "output_config.effort 'xhigh' is not supported when thinking is disabled on this model. Use effort 'high' or below, or enable thinking.",
      "Haiku 5.5 allows `disabled` only at effort high or below (api-rules-2026-11.md §1.1-1.2; the text is the Opus 5 one, logancyang/obsidian-copilot#2843).")
write("cfg16_clear_thinking_without_thinking",
      req("claude-sonnet-4-6", ok_msgs, thinking={"type": "disabled"},
          context_management={"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}),
      "claude-sonnet-4-6", "disabled", ["CFG-16"],
      "`clear_thinking_20251015` strategy requires `thinking` to be enabled",
      "Claude Code sends this edit on every request; with thinking disabled the API refuses it (anthropics/claude-code#11971, api-rules-2026-11.md AN-33).")
write("cfg17_clear_thinking_not_first",
      req("claude-sonnet-4-6", ok_msgs, thinking=MAN,
          context_management={"edits": [{"type": "clear_tool_uses_20250919"}, {"type": "clear_thinking_20251015", "keep": "all"}]}),
      "claude-sonnet-4-6", "enabled", ["CFG-17"],
      "`clear_thinking_20251015` must be listed first in `context_management.edits`",
      "Combined with clear_tool_uses, clear_thinking must be listed first (context-editing page, api-rules-2026-11.md AN-33); the exact text is an assumption.")
write("cfg18_defer_loading_with_cache_control",
      req("claude-sonnet-4-6", ok_msgs,
          tools=[{"name": "search_docs", "description": "Search the docs.", "input_schema": {"type": "object"},
                  "defer_loading": True, "cache_control": {"type": "ephemeral"}}]),
      "claude-sonnet-4-6", None, ["CFG-18"],
      "Tool 'search_docs' cannot have both defer_loading=true and cache_control set. Tools with defer_loading cannot use prompt caching.",
      "anthropics/claude-code#30920 (recurring in #86743), router-for-me/CLIProxyAPI#4561 (api-rules-2026-11.md AN-37).")
write("cfg12_forced_tool_choice_sonnet55",
      req("claude-sonnet-5-5", ok_msgs, tool_choice={"type": "any"},
          tools=[{"name": "weather", "description": "Weather.", "input_schema": {"type": "object"}}]),
      "claude-sonnet-5-5", None, ["CFG-12"],
      "tool_choice: type \"tool\" and \"any\" are not supported for this model.",
      "Opus 5.5 and Sonnet 5.5 refuse forced tool use whatever the thinking mode (api-rules-2026-11.md §1.1-1.2).")

# ... and valid bodies the API accepts (corpus/anthropic).
A = "corpus/anthropic"


def valid(name, body):
    with open(os.path.join(A, name + ".json"), "w") as f:
        json.dump(body, f, ensure_ascii=False)


valid("opus55_progress_update_thinking",
      req("claude-opus-5-5", [U("Check both files."),
          {"role": "assistant", "content": [TH, {"type": "tool_use", "id": "toolu_01PuA", "name": "read", "input": {"path": "a"}},
                                            TH, {"type": "tool_use", "id": "toolu_01PuB", "name": "read", "input": {"path": "b"}}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01PuA", "content": "A"},
                                       {"type": "tool_result", "tool_use_id": "toolu_01PuB", "content": "B"}]}]))
valid("sonnet55_between_tools_text_first",
      req("claude-sonnet-5-5", [U("Check the file."),
          {"role": "assistant", "content": [{"type": "text", "text": "Reading it."},
                                            {"type": "tool_use", "id": "toolu_01BtA", "name": "read", "input": {"path": "a"}},
                                            TH, {"type": "tool_use", "id": "toolu_01BtB", "name": "read", "input": {"path": "b"}}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01BtA", "content": "A"},
                                       {"type": "tool_result", "tool_use_id": "toolu_01BtB", "content": "B"}]}],
          thinking={"type": "between_tools"}))
valid("compaction_on_demand_first_assistant",
      req("claude-opus-4-7", [
          {"role": "assistant", "content": [{"type": "compaction", "content": "The user asked for a release plan; steps one and two are done.",
                                             "encrypted_content": "EqQBCkYIBxgCKkDvZ9Q=="}]},
          U("What is step three?")], thinking={"type": "adaptive"}))
valid("compaction_threshold_null_content",
      req("claude-opus-4-7", [U("Plan the release."),
          {"role": "assistant", "content": [{"type": "compaction", "content": None}, {"type": "text", "text": "Step one: tag."}]},
          U("Go on.")], thinking={"type": "adaptive"},
          context_management={"edits": [{"type": "compact_20260112"}]}))
valid("web_fetch_server_tool_replay",
      req("claude-sonnet-4-6", [U("Summarise https://example.org."),
          {"role": "assistant", "content": [
              {"type": "server_tool_use", "id": "srvtoolu_01WfA", "name": "web_fetch", "input": {"url": "https://example.org"}},
              {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_01WfA",
               "content": {"type": "web_fetch_result", "url": "https://example.org",
                           "content": {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Example Domain"}}}},
              {"type": "text", "text": "It is the example domain."}]},
          U("Thanks.")]))
print("2026-11 ok")

# Compaction (api-rules-2026-11.md AN-34, AN-36).
valid("compaction_threshold_ignores_what_is_before",
      req("claude-opus-4-7", [U("Plan the release."),
          {"role": "assistant", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "Step one: tag."}]},
          U("Go on."),
          {"role": "assistant", "content": [{"type": "compaction", "content": "Release plan so far: tag."},
                                            {"type": "text", "text": "Step two: publish."}]},
          U("And then?")], thinking={"type": "adaptive"},
          context_management={"edits": [{"type": "compact_20260112"}]}))
write("an10_compaction_cut_inside_open_tool_call",
      req("claude-opus-4-7", [
          {"role": "assistant", "content": [{"type": "compaction", "content": "The user asked for the file list; a listing was started.",
                                             "encrypted_content": "EqQBCkYIBxgCKkDvZ9Q=="}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01Cut", "content": "a.txt"}]},
          U("Which files?")], thinking={"type": "adaptive"}),
      "claude-opus-4-7", "adaptive", ["AN-10"],
      "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01Cut. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
      "On-demand compaction summarised a turn whose tool call was still open, and the kept tail starts with its result: a cut inside an open tool call, which the API refuses (compaction-keep-recent-turns page, api-rules-2026-11.md AN-36). The error text is the AN-10 one the orphan result gives.")
print("compaction ok")

# New block types that must round-trip verbatim (api-rules-2026-11.md §1.5).
valid("new_block_types_2026_11_round_trip",
      req("claude-sonnet-5-5", [U("Plan the migration with the advisor."),
          {"role": "assistant", "content": [
              {"type": "mcp_tool_listing", "mcp_server_name": "docs", "tools": [{"name": "search", "description": "Search the docs."}]},
              {"type": "server_tool_use", "id": "srvtoolu_01Adv", "name": "advisor", "input": {}},
              {"type": "advisor_redacted_result", "tool_use_id": "srvtoolu_01Adv", "encrypted_content": "EqQBCkYIBxgCKkDvZ9Q=="},
              {"type": "text", "text": "The advisor suggests doing it in two steps."}]},
          U("Go ahead.")]))
print("block types ok")
