"""Part of build_corpus.py: corpus/gemini (valid) and corpus/damaged (each with <name>.expect.json)."""
import json
import os

from rawjson import COMPACT, SPACED, Raw, Src, write
from build_corpus import (A, ADVISOR, BEDROCK, BUDGET_400, BUDGET_400_RESP, CAPAB, CREW, CREW_RESP, D, FANTASY,
                          FANTASY_B, FANTASY_CC, FANTASY_CC_RESP, FANTASY_RESP, G, MIRA_OFF, U, Asst, msg, text, tr,
                          with_messages)

GT = "gemini/"
GM3_ONE = GT + "llm-gemini--test_gemini-test_tools_with_gemini_3_thought_signatures__1.request.json"
GM3_TWO = GT + "pydantic-ai--test_tool_search-test_tool_search_eval-google__2.request.json"
GM3_XPROV = GT + "pydantic-ai--test_tool_search-test_anthropic_to_google_deferred_capability_history_replay__4.request.json"
GM25_PAR = GT + "mirascope--e2e-output-test_call_with_tools-google_gemini_2_5_flash-async__1.request.json"
GM25_SEQ = GT + "llm-gemini--test_gemini-test_tools__2.request.json"
GM3_PRO = GT + "mirascope--e2e-input-test_strict_mode_with_tools-google_gemini_3_pro_preview__1.request.json"

O = ("content", "role")  # key order used by fantasy and pydantic bodies
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

AN08 = ("messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each "
        "`tool_use` block must have a corresponding `tool_result` block in the next message.")
AN10 = ("messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` "
        "block must have a corresponding `tool_use` block in the previous message.")
AN16 = ("messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` "
        "is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
        "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid "
        "this requirement, disable `thinking`.")
AN12 = "messages.{n}.content.{m}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
AN23 = "messages.{n}.content.{m}: Invalid `signature` in `thinking` block"
PREFILL = "This model does not support assistant message prefill. The conversation must end with a user message."
GM01 = ("Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
        "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
        "call `default_api:{name}` , position {pos}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
        "for more details.")

_note = None


def damaged(name, body, model, thinking, rules, error, why, sep=SPACED):
    write(f"{D}/{name}.json", body, sep)
    exp = {"model": model, "thinking": thinking, "rules": rules, "error": error, "note": why}
    with open(f"{D}/{name}.expect.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(exp, indent=2, ensure_ascii=False) + "\n")
    _note("damaged", f"{name}.json", f"[{', '.join(rules) or 'config'}] {why}")


def raw_with(rawblock, **extra):
    """Append fields to a copied block's raw text (the copied bytes are kept as they are)."""
    t = rawblock.text.rstrip()
    assert t.endswith("}")
    sep = "," if ", " not in t else ", "
    kv = ":" if sep == "," else ": "
    add = "".join(f"{sep}{json.dumps(k)}{kv}{json.dumps(v)}" for k, v in extra.items())
    return Raw(t[:-1] + add + "}")


def anthropic_damaged():
    f, fr, fb = Src(FANTASY), Src(FANTASY_RESP), Src(FANTASY_B)
    m0, m1, m2 = f.msgs_raw()
    th, tu = f.raw("messages", 1, "content", 0), f.raw("messages", 1, "content", 1)
    tid = f.get("messages", 1, "content", 1, "id")
    S4, MAN = "claude-sonnet-4-20250514", "enabled"
    fsrc = f"real signed block from `{FANTASY}`"

    def fbody(ms, **over):
        return with_messages(f, ms, **over)

    # AN-01
    damaged("an01_first_message_assistant",
            fbody([m1, m2, msg("assistant", fr.raw("content"), O), msg("user", [text("And tomorrow?")], O)]),
            S4, MAN, ["AN-01"], 'messages: first message must use the "user" role',
            f"Keep-tail compaction cut the first user message, so history starts at the assistant thinking+tool_use ({fsrc}). Error: cherry-studio#39 / LangBot#867.", COMPACT)

    # AN-03 prefill on 4.6+
    damaged("an03_prefill_opus46",
            {"model": "claude-opus-4-6", "max_tokens": 4096, "thinking": {"type": "adaptive"},
             "messages": [U([text("List three pelican names as a JSON array.")]), Asst([text("[\"")])]},
            "claude-opus-4-6", "adaptive", ["AN-03"], PREFILL,
            "Classic JSON prefill (trailing assistant text) sent to a 4.6 model; migration guide + QwenLM/qwen-code#8039.")

    # AN-03 with thinking on (older model): the just-received answer replayed as the last message
    cw, cwr = Src(CREW), Src(CREW_RESP)
    damaged("an03_prefill_thinking_enabled",
            with_messages(cw, cw.msgs_raw() + [Asst(cwr.raw("content"))]),
            "claude-sonnet-4-5", MAN, ["AN-03"], PREFILL,
            f"`{CREW}` + its recorded response left as the final message (a retried request after the answer was stored). "
            "Prefill is not allowed while thinking is on. The exact wording for pre-4.6 models is not recorded; api-rules.md "
            "gives only this text for AN-03.", COMPACT)

    # AN-04
    damaged("an04_empty_user_string",
            fbody([m0, m1, m2, msg("assistant", fr.raw("content"), O), msg("user", "", O),
                   msg("assistant", [text("It looks like your message was empty. What would you like to know?")], O),
                   msg("user", [text("Is it going to rain?")], O)]),
            S4, MAN, ["AN-04"],
            "messages.4: all messages must have non-empty content except for the optional final assistant message",
            f"{fsrc}; a user message with content \"\" (attachment-only message whose file part was dropped). claude-code#6774.", COMPACT)
    damaged("an04_empty_assistant_array",
            with_messages(cw, cw.msgs_raw() + [Asst(cwr.raw("content")), U("Thanks! And 5+5?"), Asst([]), U("Hello?")]),
            "claude-sonnet-4-5", MAN, ["AN-04"],
            "messages.5: all messages must have non-empty content except for the optional final assistant message",
            f"`{CREW}` + recorded response; then an aborted assistant message stored with content [] (every part filtered as empty), followed by a user retry.", COMPACT)

    # AN-05
    damaged("an05_empty_text_block",
            fbody([m0, m1, m2, msg("assistant", fr.raw("content"), O), msg("user", [text("Thanks!")], O),
                   msg("assistant", [text("")], O), msg("user", [text("Hello? Any advice for tonight?")], O)]),
            S4, MAN, ["AN-05"], "messages: text content blocks must be non-empty",
            f"{fsrc}; a later assistant message left as [text \"\"] after its thinking part was dropped (peers.md §7 seed 17).", COMPACT)
    damaged("an05_whitespace_text",
            {"model": "claude-sonnet-4-6", "max_tokens": 4096, "thinking": {"type": "adaptive"},
             "messages": [U("Write a haiku about tide pools."), Asst([text("  \n")]),
                          U("You sent an empty reply; please try again.")]},
            "claude-sonnet-4-6", "adaptive", ["AN-05"], "messages: text content blocks must contain non-whitespace text",
            "Assistant message that streamed only whitespace before the user interrupted (peers.md §7 seed 16); TheValkyrja/Anthropic2Vertex#5.")
    cc, ccr = Src(FANTASY_CC), Src(FANTASY_CC_RESP)
    damaged("an05_cache_control_empty_text",
            with_messages(cc, cc.msgs_raw() + [msg("assistant", ccr.raw("content"), O),
                                               msg("user", [text("", cache_control={"type": "ephemeral"})], O)]),
            S4, MAN, ["AN-05"], "messages.4.content.0.text: cache_control cannot be set for empty text blocks",
            f"`{FANTASY_CC}` (real signed thinking) + recorded answer; the harness puts its cache breakpoint on the last user block, which is empty. Prompt-caching docs.", COMPACT)

    # AN-06
    sig = cw.get("messages", 1, "content", 0, "signature")
    a1 = [cw.raw("messages", 1, "content", 0), {"type": "text", "text": "2 + 2 = 4", "signature": sig}]
    damaged("an06_signature_on_text",
            with_messages(cw, [cw.raw("messages", 0), Asst(a1), cw.raw("messages", 2)]),
            "claude-sonnet-4-5", MAN, ["AN-06"], "messages.1.content.1.text.signature: Extra inputs are not permitted",
            f"`{CREW}`: a converter copied the reasoning signature onto the following text block (provider metadata leak). Thinking block untouched.", COMPACT)
    a1 = [raw_with(cc.raw("messages", 1, "content", 0), cache_control={"type": "ephemeral"}), cc.raw("messages", 1, "content", 1)]
    damaged("an06_cache_control_on_thinking",
            with_messages(cc, [cc.raw("messages", 0), msg("assistant", a1, O), cc.raw("messages", 2)]),
            S4, MAN, ["AN-06", "AN-28"], "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted",
            f"`{FANTASY_CC}`: the cache marker was attached to the first assistant block, which is thinking (its thinking/signature bytes untouched).", COMPACT)
    damaged("an06_missing_signature",
            fbody([m0, msg("assistant", [{"type": "thinking", "thinking": "The user wants the weather in Florence. I'll call the weather tool."}, tu], O), m2]),
            S4, MAN, ["AN-06"], "messages.1.content.0.thinking.signature: Field required",
            "A repairer injected a synthetic thinking block without a signature in front of the real tool_use (OMO-style). Antigravity-Manager#1650.", COMPACT)
    g3 = Src(GM3_ONE)
    gsig = g3.get("contents", 1, "parts", 1, "thoughtSignature")
    damaged("an06_thoughtsignature_on_tool_use",
            {"model": "claude-sonnet-4-6", "max_tokens": 4096, "thinking": {"type": "adaptive"},
             "tools": [{"name": "multiply", "description": "Multiply two numbers.", "input_schema": {
                 "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}}],
             "messages": [U("What is 5 times 3?"),
                          Asst([{"type": "tool_use", "id": "toolu_gm3_multiply_0", "name": "multiply", "input": {"y": 3, "x": 5},
                                 "thoughtSignature": gsig}]),
                          U([tr("toolu_gm3_multiply_0", "15")]), Asst([text("5 times 3 is 15.")]), U("And 6 times 7?")]},
            "claude-sonnet-4-6", "adaptive", ["AN-06"], "messages.1.content.0.tool_use.thoughtSignature: Extra inputs are not permitted",
            f"Gemini-3 history (`{GM3_ONE}`) converted to Anthropic with the part's thoughtSignature kept as an extra field (peers.md §7 seed 22).")

    # AN-08
    damaged("an08_aborted_turn",
            fbody([m0, m1, msg("user", [text("Never mind the tool, just guess from the season.")], O)]),
            S4, MAN, ["AN-08"], AN08.format(n=1, ids=tid),
            f"{fsrc}; the user pressed Esc before the tool ran and typed a new message (peers.md §7 seeds 9 and 11).", COMPACT)
    par = [text("I'll check both cities."),
           {"type": "tool_use", "id": "toolu_01Hn3cQw8ZkP5rV2xLs7Ty4B", "name": "weather", "input": {"location": "Florence, Italy"}},
           {"type": "tool_use", "id": "toolu_01Jm6dRe9AlQ4sW3yMt8Uz5C", "name": "weather", "input": {"location": "Rome, Italy"}}]
    ptools = [f.raw("tools", 0)]
    damaged("an08_missing_one_parallel_result",
            {"model": "claude-sonnet-4-6", "max_tokens": 4096, "thinking": {"type": "adaptive"}, "tools": ptools,
             "messages": [U("Weather in Florence and Rome?"), Asst(par), U([tr("toolu_01Hn3cQw8ZkP5rV2xLs7Ty4B", "40 C")])]},
            "claude-sonnet-4-6", "adaptive", ["AN-08"], AN08.format(n=1, ids="toolu_01Jm6dRe9AlQ4sW3yMt8Uz5C"),
            "Two parallel tool_use blocks; the second tool crashed and its result was never stored.")
    damaged("seed10_user_text_between_parallel_results",
            {"model": "claude-sonnet-4-6", "max_tokens": 4096, "thinking": {"type": "adaptive"}, "tools": ptools,
             "messages": [U("Weather in Florence and Rome?"), Asst(par), U("Also, should I bring an umbrella?"),
                          U([tr("toolu_01Jm6dRe9AlQ4sW3yMt8Uz5C", "34 C")])]},
            "claude-sonnet-4-6", "adaptive", ["AN-08", "AN-11"], AN08.format(n=1, ids="toolu_01Hn3cQw8ZkP5rV2xLs7Ty4B"),
            "peers.md §7 seed 10: A[tu1, tu2], U(text), T(tu2): one result missing and user text before the other. "
            "Which ids the API lists after merging the two user messages is inferred.")
    damaged("seed20_consecutive_assistant_after_tool_use",
            fbody([m0, m1, msg("assistant", fr.raw("content"), O), msg("user", [text("Thanks!")], O)]),
            S4, MAN, ["AN-08"], AN08.format(n=1, ids=tid),
            f"peers.md §7 seed 20: A[th*, tu] followed directly by A[text] ({fsrc}; the tool_result message was lost). Merged by AN-02, still no result.", COMPACT)

    # AN-09
    damaged("an09_text_before_tool_result",
            fbody([m0, m1, msg("user", [text("<system-reminder>The user's timezone is Europe/Rome.</system-reminder>"),
                                        f.raw("messages", 2, "content", 0)], O)]),
            S4, MAN, ["AN-09"], AN08.format(n=1, ids=tid),
            f"{fsrc}; a harness prepended a reminder text block before the tool_result. The docs say AN-09 gives the AN-08 "
            "errors (older wording: `messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message…`).", COMPACT)

    # AN-10
    damaged("an10_orphan_tool_result",
            fbody([m0, m2, msg("assistant", fr.raw("content"), O), msg("user", [text("Great, thanks.")], O)]),
            S4, MAN, ["AN-10"], AN10.format(n=1, m=0, id=tid),
            f"A pruner deleted the assistant thinking+tool_use message ({fsrc}) but kept its tool_result.", COMPACT)
    damaged("an10_duplicate_tool_result",
            fbody([m0, m1, msg("user", [f.raw("messages", 2, "content", 0), f.raw("messages", 2, "content", 0)], O)]),
            S4, MAN, ["AN-10"], AN10.format(n=2, m=1, id=tid),
            f"{fsrc}; a retried tool run appended a second result with the same id. Error text for a duplicate is inferred (AN-10 lists duplicates).", COMPACT)
    damaged("seed12_duplicate_result_in_later_message",
            fbody([m0, m1, m2, msg("assistant", fr.raw("content"), O),
                   msg("user", [f.raw("messages", 2, "content", 0), text("Thanks, and tomorrow?")], O)]),
            S4, MAN, ["AN-10"], AN10.format(n=4, m=0, id=tid),
            f"peers.md §7 seed 12: the same result replayed again two messages later ({fsrc}).", COMPACT)

    # AN-11
    damaged("an11_user_text_between_tool_use_and_result",
            fbody([m0, m1, msg("user", [text("Also tell me what to wear.")], O), m2]),
            S4, MAN, ["AN-11", "AN-08"], AN08.format(n=1, ids=tid),
            f"{fsrc}; the user typed while the tool ran and the UI stored the message before the tool_result. The two user messages merge (AN-02), so the result is no longer first (AN-09 in effect).", COMPACT)

    # AN-12
    kimi = {"model": "claude-sonnet-4-5", "max_tokens": 16000, "thinking": {"type": "enabled", "budget_tokens": 4000},
            "tools": [{"name": "Bash", "description": "Run a shell command.", "input_schema": {
                "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}],
            "messages": [U("List the files in the repo."),
                         Asst([text("I'll list them."), {"type": "tool_use", "id": "functions.Bash:0", "name": "Bash", "input": {"command": "ls"}}]),
                         U([tr("functions.Bash:0", "Cargo.toml\ncrates\nxtask")]),
                         Asst([text("The repo has Cargo.toml, crates/ and xtask/.")]),
                         U("Now run the tests.")]}
    damaged("an12_kimi_tool_id", kimi, "claude-sonnet-4-5", MAN, ["AN-12"], AN12.format(n=1, m=1),
            "Session started on Kimi K2 (ids `functions.<name>:<n>`, KM-03), continued on Claude. langchain#37756, bifrost#5097.")
    pipe = json.loads(json.dumps(kimi))
    pipe["messages"][1]["content"] = [{"type": "tool_use", "id": "call_a|b", "name": "Bash", "input": {"command": "ls"}},
                                      {"type": "tool_use", "id": "call_a:b", "name": "Bash", "input": {"command": "pwd"}}]
    pipe["messages"][2]["content"] = [tr("call_a|b", "Cargo.toml"), tr("call_a:b", "/work/main")]
    damaged("seed14_pipe_and_colon_ids", pipe, "claude-sonnet-4-5", MAN, ["AN-12"], AN12.format(n=1, m=0),
            "peers.md §7 seed 14: ids `call_a|b` and `call_a:b` (must map to two distinct sanitised ids).")
    empty = json.loads(json.dumps(kimi))
    empty["messages"][1]["content"][1]["id"] = ""
    empty["messages"][2]["content"][0]["tool_use_id"] = ""
    damaged("an12_empty_tool_id", empty, "claude-sonnet-4-5", MAN, ["AN-12"], AN12.format(n=1, m=1),
            "A provider that returned no call id; stored as \"\" (QwenLM/qwen-code#8160).")

    # AN-16
    bth, btu = fb.raw("messages", 1, "content", 0), fb.raw("messages", 1, "content", 1)
    damaged("an16_tool_use_before_thinking",
            with_messages(fb, [fb.raw("messages", 0), msg("assistant", [btu, bth], O), fb.raw("messages", 2)]),
            S4, MAN, ["AN-16", "AN-18", "AN-19"], AN16.format(n=1, found="tool_use"),
            f"Seed 002 (opencode#9364): parts sorted by id put tool_use before the thinking block. Blocks from `{FANTASY_B}`, bytes unchanged, order swapped (so the message also ends with thinking, AN-19). Error text as quoted in the seed, in its current wording.", COMPACT)
    damaged("an16_thinking_stripped_open_loop",
            fbody([m0, msg("assistant", [tu], O), m2]),
            S4, MAN, ["AN-16"], AN16.format(n=1, found="tool_use"),
            f"A normaliser dropped the reasoning part of the open turn's first assistant message ({fsrc}, tool_use kept).", COMPACT)
    ca = Src(CAPAB)
    cam = ca.get("messages", 1, "content")
    damaged("an16_text_first_manual",
            with_messages(ca, [ca.raw("messages", 0), Asst([ca.raw("messages", 1, "content", 1), ca.raw("messages", 1, "content", 2)], O),
                               ca.raw("messages", 2)], thinking={"budget_tokens": 2048, "type": "enabled"}),
            "claude-sonnet-4-6", MAN, ["AN-16"], AN16.format(n=1, found="text"),
            f"`{CAPAB}` replayed in manual mode after the thinking block was lost: open loop whose first assistant message is [text, tool_use] ({[b['type'] for b in cam]} originally).")

    # AN-18
    damaged("an18_thinking_after_text",
            with_messages(cw, [cw.raw("messages", 0), Asst([cw.raw("messages", 1, "content", 1), cw.raw("messages", 1, "content", 0)]),
                               cw.raw("messages", 2)]),
            "claude-sonnet-4-5", MAN, ["AN-18", "AN-19"],
            "messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`.",
            f"`{CREW}` with the assistant blocks reordered [text, thinking] (claude-code#20734). Bytes of both blocks unchanged. The message now also ends with thinking (AN-19); the AN-18 check is the one observed.", COMPACT)

    # AN-19
    damaged("an19_trailing_unsigned_thinking",
            fbody([m0, m1, m2, msg("assistant", fr.raw("content"), O), msg("user", [text("And Rome?")], O),
                   msg("assistant", [{"type": "thinking", "thinking": "The user now wants the weather in Rome. I should call the weather", "signature": ""}], O),
                   msg("user", [text("continue")], O)]),
            S4, MAN, ["AN-19", "AN-23"], "messages.5: The final block in an assistant message cannot be `thinking`.",
            f"{fsrc}; the next stream was cut after some thinking deltas and before signature_delta, and the partial block was stored (claude-code#10199). Which of AN-19/AN-23 the API reports first is not recorded.", COMPACT)

    # AN-20
    mo = Src(MIRA_OFF)
    damaged("an20_disabled_final_assistant_thinking",
            with_messages(mo, [mo.raw("messages", 0), mo.raw("messages", 1)]),
            "claude-sonnet-4-0", "disabled", ["AN-20"],
            "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
            f"`{MIRA_OFF}` cut after the assistant message (regenerate/continue with thinking off): signed thinking in the final position. forgecode#1853.")

    # AN-23
    gpro = Src(GM3_PRO)
    gpsig = gpro.get("contents", 1, "parts", 0, "thoughtSignature")
    def foreign(sigv, why, name):
        ms = [U("Answer this question: What is 2 + 3, using the custom addition tool??"),
              Asst([{"type": "thinking", "thinking": "**Calculating the sum**\n\nI'll call customAdditionImplementation with a=2 and b=3.", "signature": sigv},
                    {"type": "tool_use", "id": "toolu_vrtx_01Xq2a7LmN4pR8sT", "name": "customAdditionImplementation", "input": {"a": 2, "b": 3}}]),
              U([tr("toolu_vrtx_01Xq2a7LmN4pR8sT", "13")])]
        body = {"model": "claude-sonnet-4-5", "max_tokens": 8192, "thinking": {"type": "enabled", "budget_tokens": 4096},
                "tools": [{"name": "customAdditionImplementation", "description": "Perform computation on integers.",
                           "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}],
                "messages": ms}
        damaged(name, body, "claude-sonnet-4-5", MAN, ["AN-23"], AN23.format(n=1, m=0), why)
    foreign(gpsig, f"Session moved from Gemini 3 / Antigravity to the Anthropic API: the thought part became a thinking block carrying the real Gemini thoughtSignature from `{GM3_PRO}` (GM-08, AN-23).", "an23_gemini_signature")
    foreign("skip_thought_signature_validator", "Antigravity-style sentinel signature put on a Claude thinking block (api-rules AG-03) and sent to the direct API.", "an23_skip_validator_sentinel")
    foreign("", "Thinking block stored with an empty signature (stream saved before signature_delta) in the open loop.", "an23_empty_signature")

    # request configuration (api-rules.md §1.2 has no rule ids for these)
    b4 = Src(BUDGET_400)
    err = json.loads(open(os.path.join("/work/shared/real-traffic", BUDGET_400_RESP)).read())["error"]["message"]
    damaged("cfg_max_tokens_not_above_budget", with_messages(b4, b4.msgs_raw()), "claude-sonnet-4-5", MAN, ["CFG-07"], err,
            f"Verbatim real request `{BUDGET_400}` (max_tokens 4096 == budget_tokens 4096), recorded 400 `{BUDGET_400_RESP}`. api-rules.md §1.2 A.")
    full = with_messages(f, f.msgs_raw())
    def cfg(name, over, rule, error, why):
        body = dict(full)
        body.update(over)
        damaged(name, body, S4, MAN, [rule], error, f"{fsrc} transcript is valid; only the request config is wrong. {why}", COMPACT)
    cfg("cfg_budget_below_1024", {"thinking": {"budget_tokens": 512, "type": "enabled"}}, "CFG-05",
        "thinking.budget_tokens: Input should be greater than or equal to 1024",
        "api-rules.md §1.2 A (errors-traps.md quotes the path as `thinking.enabled.budget_tokens`).")
    cfg("cfg_temperature_with_thinking", {"temperature": 0.2}, "CFG-09",
        "`temperature` may only be set to 1 when thinking is enabled", "api-rules.md §1.2 related config errors.")
    cfg("cfg_forced_tool_choice_manual", {"tool_choice": {"type": "tool", "name": "weather"}}, "CFG-12",
        "Thinking may not be enabled when tool_choice forces tool use.", "api-rules.md §1.2 related config errors.")


def gemini_valid():
    g = Src(GM3_ONE)
    body = {"contents": [g.raw("contents", 0), g.raw("contents", 1), g.raw("contents", 2),
                         {"role": "model", "parts": [{"text": "**Confirming the product**\n\nThe tool returned 15, which matches 5 × 3.", "thought": True},
                                                     {"text": "5 times 3 is **15**."}]},
                         {"role": "user", "parts": [{"text": "What number is written on this sticky note?"},
                                                    {"inlineData": {"mimeType": "image/png", "data": PNG}}]}]}
    for k in g.obj:
        if k != "contents":
            body[k] = g.raw(k)
    body["generationConfig"] = {"thinkingConfig": {"includeThoughts": True, "thinkingLevel": "low"}}
    write(f"{G}/gemini3_signed_call_then_new_turn.json", body, COMPACT)
    _note("gemini", "gemini3_signed_call_then_new_turn.json",
          f"gemini-3-flash-preview: `{GM3_ONE}` verbatim contents (empty text part + snake_case function_call with thoughtSignature, "
          "function_response), then a model answer with a `thought: true` summary part, then a new user turn with `inlineData`. "
          "The signed call is now in an earlier turn (GM-01 does not validate it).")

    t = Src(GM3_TWO)
    write(f"{G}/gemini3_two_signed_steps_open_turn.json", {k: t.raw(k) for k in t.obj}, SPACED)
    _note("gemini", "gemini3_two_signed_steps_open_turn.json",
          f"gemini-3-flash-preview: `{GM3_TWO}` copied (two steps in the current turn, each first functionCall signed, ids echoed in functionResponse, `parameters_json_schema`, `toolConfig`).")

    x = Src(GM3_XPROV)
    write(f"{G}/gemini3_cross_provider_dummy_signatures.json", {k: x.raw(k) for k in x.obj}, SPACED)
    _note("gemini", "gemini3_cross_provider_dummy_signatures.json",
          f"gemini-3-flash-preview: `{GM3_XPROV}` copied: Claude-made history replayed to Gemini with the base64 of "
          "`skip_thought_signature_validator` as thoughtSignature (GM-05), then a real signed call in the current turn; `toolu_` ids as functionCall ids.")

    p = Src(GM25_PAR)
    contents = [p.raw("contents", i) for i in range(3)] + [
        {"parts": [{"text": "The secrets are \"Welcome to Moria!\" (mellon) and \"Life before Death\" (radiance)."}], "role": "model"},
        {"parts": [{"text": "Count the letters in both secrets with code."}], "role": "user"},
        {"parts": [{"executableCode": {"language": "PYTHON", "code": "print([len(s) for s in ['Welcome to Moria!', 'Life before Death']])"}},
                   {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "[17, 17]\n"}},
                   {"text": "Both secrets are 17 characters long."}], "role": "model"},
        {"parts": [{"text": "And what's in this clip?"},
                   {"fileData": {"mimeType": "video/mp4", "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc123xyz"},
                    "videoMetadata": {"startOffset": "1.5s", "endOffset": "4s"}}], "role": "user"}]
    body = {"contents": contents}
    for k in p.obj:
        if k != "contents":
            body[k] = p.raw(k)
    body["tools"] = [p.raw("tools", 0), {"codeExecution": {}}]
    write(f"{G}/gemini25_parallel_calls_and_rare_parts.json", body, SPACED)
    _note("gemini", "gemini25_parallel_calls_and_rare_parts.json",
          f"gemini-2.5-flash: `{GM25_PAR}` verbatim start (parallel calls, signature on the FIRST call only, GM-02; both "
          "responses in one user content, GM-03), then authored turns with `executableCode`/`codeExecutionResult` parts, "
          "`fileData` + `videoMetadata` (documented Part fields a narrow model may not know).")

    s = Src(GM25_SEQ)
    write(f"{G}/gemini25_sequential_snake_case.json", {k: s.raw(k) for k in s.obj}, COMPACT)
    _note("gemini", "gemini25_sequential_snake_case.json",
          f"gemini-2.5-flash: `{GM25_SEQ}` copied: snake_case `function_call`/`function_response` with ids, second step unsigned (2.5: optional, GM-07), `description: null`.")


def gemini_damaged():
    t = Src(GM3_TWO)
    c3 = t.get("contents", 3)
    part = {k: (t.raw("contents", 3, "parts", 0, k)) for k in c3["parts"][0] if k != "thoughtSignature"}
    body = {k: t.raw(k) for k in t.obj}
    body["contents"] = [t.raw("contents", i) for i in range(3)] + [{"parts": [part], "role": "model"}, t.raw("contents", 4)]
    damaged("gm01_missing_signature_second_step", body, "gemini-3-flash-preview", None, ["GM-01"],
            GM01.format(name="get_exchange_rate", pos=3),
            f"`{GM3_TWO}` with the thoughtSignature dropped from the second step's call (a proxy that only kept the first signature). "
            "Position numbering in the observed error is not documented; 3 assumes 0-based content index.")

    x = Src(GM3_XPROV)
    cs = []
    for i, c in enumerate(x.get("contents")):
        if c["role"] == "model" and any("functionCall" in p for p in c["parts"]) and i < 8:
            cs.append({"parts": [{k: v for k, v in p.items() if k != "thoughtSignature"} for p in c["parts"]], "role": "model"})
        else:
            cs.append(x.raw("contents", i))
    # make the first turn the current one: cut before the later user question
    cs = cs[:7]
    body = {k: x.raw(k) for k in x.obj}
    body["contents"] = cs
    damaged("gm01_cross_provider_history_unsigned", body, "gemini-3-flash-preview", None, ["GM-01"],
            GM01.format(name="load_capability", pos=1),
            f"`{GM3_XPROV}` before the dummy-signature fix: Claude-made calls in the current turn carry no thoughtSignature "
            "(GM-05 says set `skip_thought_signature_validator` on the first call of each step).")

    g = Src(GM3_ONE)
    c1 = g.get("contents", 1)
    fc2 = {"function_call": {"name": "multiply", "args": {"y": 4, "x": 2}}}
    body = {"contents": [g.raw("contents", 0), g.raw("contents", 1),
                         {"role": "user", "parts": [{"function_response": {"name": "multiply", "response": {"output": "15"}}}]},
                         {"role": "model", "parts": [fc2]},
                         {"role": "user", "parts": [{"function_response": {"name": "multiply", "response": {"output": "8"}}}]}]}
    for k in g.obj:
        if k != "contents":
            body[k] = g.raw(k)
    damaged("gm03_interleaved_parallel_calls", body, "gemini-3-flash-preview", None, ["GM-03", "GM-01"],
            GM01.format(name="multiply", pos=3),
            f"A parallel response [FC1+sig, FC2] (FC1 from `{GM3_ONE}`, FC2 authored, unsigned as GM-02 says) stored as FC1, FR1, FC2, FR2. "
            "The split-off FC2 becomes a step without a signature; api-rules.md gives no dedicated GM-03 text.")

    p = Src(GM25_PAR)
    body = {k: p.raw(k) for k in p.obj}
    body["contents"] = [p.raw("contents", 0), p.raw("contents", 1), {"parts": [p.raw("contents", 2, "parts", 0)], "role": "user"}]
    damaged("gm10_response_count_mismatch", body, "gemini-2.5-flash", None, ["GM-10"],
            "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
            f"`{GM25_PAR}` with the second functionResponse lost (tool crashed).")


def run(note):
    global _note
    _note = note
    anthropic_damaged()
    gemini_valid()
    gemini_damaged()
