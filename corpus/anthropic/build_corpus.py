#!/usr/bin/env python3
"""Builds corpus/anthropic, corpus/gemini and corpus/damaged from ../shared/real-traffic.

Every signed value (thinking/signature, redacted_thinking.data, Gemini thoughtSignature) is spliced in as the
raw bytes of the recorded body (rawjson.Src.raw), never re-encoded. Run from anywhere:
    python3 corpus/anthropic/build_corpus.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from rawjson import COMPACT, SPACED, Raw, Src, write  # noqa: E402

CORPUS = os.path.dirname(HERE)
A = os.path.join(CORPUS, "anthropic")
G = os.path.join(CORPUS, "gemini")
D = os.path.join(CORPUS, "damaged")

T = "anthropic/"
FANTASY = T + "fantasy--TestAnthropicThinking-claude-sonnet-4-thinking__1.request.json"
FANTASY_RESP = T + "fantasy--TestAnthropicThinking-claude-sonnet-4-thinking__1.response.json"
FANTASY_B = T + "fantasy--TestThinking-anthropic-claude-sonnet--5623663482__1.request.json"
FANTASY_CC = T + "fantasy--TestAnthropicThinkingWithCacheControl-claude-sonnet-4-thinking__1.request.json"
FANTASY_CC_RESP = T + "fantasy--TestAnthropicThinkingWithCacheControl-claude-sonnet-4-thinking__1.response.json"
CREW = T + "crewai--lib-crewai-tests-llms-anthropic-test_anthropic_thinking_blocks_preserved_across_turns__1.request.json"
CREW_RESP = T + "crewai--lib-crewai-tests-llms-anthropic-test_anthropic_thinking_blocks_preserved_across_turns__1.response.json"
REDACTED = T + "pydantic-ai--test_anthropic-test_anthropic_model_thinking_part_redacted__1.request.json"
REDACTED_RESP = T + "pydantic-ai--test_anthropic-test_anthropic_model_thinking_part_redacted__1.response.json"
REDACTED2_REQ = T + "pydantic-ai--test_anthropic-test_anthropic_model_thinking_part_redacted_stream__0.request.json"
REDACTED2_RESP = T + "pydantic-ai--test_anthropic-test_anthropic_model_thinking_part_redacted_stream__0.response.assembled.json"
WEB = T + "pydantic-ai--test_anthropic-test_anthropic_web_search_tool__1.request.json"
WEB_RESP = T + "pydantic-ai--test_anthropic-test_anthropic_web_search_tool__1.response.json"
PAUSE_RESP = T + "pydantic-ai--test_anthropic-test_pause_turn_web_search_vcr__0.response.json"
PAUSE_REQ0 = T + "pydantic-ai--test_anthropic-test_pause_turn_web_search_vcr__0.request.json"
CODE_AUTO = T + "pydantic-ai--test_code_execution_files_vcr-test_anthropic_code_execution_files_cache_prefix_stable-automatic-sonnet-5__2.request.json"
CODE_AUTO_RESP = T + "pydantic-ai--test_code_execution_files_vcr-test_anthropic_code_execution_files_cache_prefix_stable-automatic-sonnet-5__2.response.json"
CODE_AUTO_RESP1 = T + "pydantic-ai--test_code_execution_files_vcr-test_anthropic_code_execution_files_cache_prefix_stable-automatic-sonnet-5__1.response.json"
CODE_MSG = T + "pydantic-ai--test_code_execution_files_vcr-test_anthropic_code_execution_files_cache_prefix_stable-messages-sonnet-5__2.request.json"
CODE_MSG_RESP = T + "pydantic-ai--test_code_execution_files_vcr-test_anthropic_code_execution_files_cache_prefix_stable-messages-sonnet-5__2.response.json"
OPUS46_REQ = T + "pydantic-ai--test_anthropic-test_anthropic_opus_46_features-adaptive-thinking__0.request.json"
OPUS46_RESP = T + "pydantic-ai--test_anthropic-test_anthropic_opus_46_features-adaptive-thinking__0.response.json"
ELLMER_TOOL = T + "ellmer--testthat-_vcr-anthropic-tool__2.request.json"
ELLMER_TOOL_RESP = T + "ellmer--testthat-_vcr-anthropic-tool__2.response.json"
MIRA_OFF = T + "mirascope--e2e-call_with_thinking_true-anthropic-sync--5d2972a8ac__1.request.json"
MCP = T + "pydantic-ai--test_anthropic-test_anthropic_mcp_servers__1.request.json"
ADVISOR = T + "pydantic-ai--test_anthropic-test_anthropic_advisor_tool_message_replay__1.request.json"
BEDROCK = T + "pydantic-ai--test_anthropic_mid_conversation_system-test_mid_conversation_system_prompt_unsupported_client--63345e9bac__0.request.json"
BEDROCK_RESP = T + "pydantic-ai--test_anthropic_mid_conversation_system-test_mid_conversation_system_prompt_unsupported_client--63345e9bac__0.response.json"
HAIKU = T + "llm-anthropic--test_anthropic-test_fixed_version_tool_chain_with_thinking_display_regression__1.request.json"
CAPAB = T + "pydantic-ai--test_capabilities-test_agent--b2ffa12b52__1.request.json"
BUDGET_400 = T + "pydantic-ai--test_anthropic-test_pause_turn_web_search_vcr--1879690e95__3.request.json"
BUDGET_400_RESP = T + "pydantic-ai--test_anthropic-test_pause_turn_web_search_vcr--1879690e95__3.response.json"

README = {"anthropic": [], "gemini": [], "damaged": []}

HEADER_A = """# corpus/anthropic: valid Anthropic Messages API bodies

Every request body here should be accepted by the real API (api-rules.md), so `check` must report no error and
`repair` must return it byte for byte. Paths in backticks are under `../shared/real-traffic/`. Signed values
(`thinking`, `signature`, `redacted_thinking.data`) are spliced in as the recorded raw bytes, never re-encoded;
`pydantic-ai--*` sources are json.dumps re-serialisations made by that project's cassette loader (see the
real-traffic README), which is why those files use `", "` separators and sorted keys.

Generated by `build_corpus.py` (which also writes ../gemini and ../damaged) and `gen_long.py`; helpers in
`rawjson.py`. Re-running them gives the same bytes.

"Unknown" block types and fields: the API rejects fields it does not define (AN-06), so the round-trip cases
use types and fields that are documented but rare or beta (`mcp_tool_use`, `advisor_tool_result`,
`container_upload`, `bash_code_execution_tool_result`, `document`, `search_result`, `caller`, `citations`,
`mcp_servers`, `container`, response-side `stop_details`/`inference_geo`/`output_tokens_details`). A typed
model that does not know them must still carry them through unchanged.

"""

FOOTER_A = """- `long_200_messages.json`: claude-sonnet-4 manual, 201 messages, written by `gen_long.py` (deterministic). Reuses
  the 13 real signed (thinking, tool_use) pairs from `anthropic/fantasy--*__1.request.json` verbatim across weather turns,
  mixed with string-content and multi-text turns; ends in a two-step open tool loop whose first assistant message
  starts with thinking.
- `build_corpus.py`, `build_damaged_gemini.py`, `rawjson.py`, `gen_long.py`: the generators (not corpus inputs).
"""

HEADER_G = """# corpus/gemini: valid Gemini generateContent bodies

Bodies as POSTed to `…/models/<model>:generateContent` (the model is in the URL; each line names it). Valid per
api-rules.md GM-01..GM-13. Paths are under `../shared/real-traffic/`; every `thoughtSignature` is copied as the
recorded raw bytes. Built by `../anthropic/build_corpus.py`. Real traffic has no `thought: true` parts (thought
summaries are only returned with includeThoughts), so the one thought part here is authored; it carries no
signature, as GM-14 allows.

"""

HEADER_D = """# corpus/damaged: transcripts a real API rejects

One body per file, Anthropic unless the name starts with `gm`. Each `<name>.json` has a `<name>.expect.json`:

```json
{"model": "...", "thinking": "enabled|adaptive|disabled|null", "rules": ["AN-08"], "error": "...", "note": "..."}
```

- `thinking` is the request's mode (`null` = no `thinking` param; for Gemini always `null`).
- `rules` are the api-rules.md ids violated. The request-configuration errors in api-rules.md §1.2 have no ids, so
  they use `CFG-07`, `CFG-05`, `CFG-09`, `CFG-12`.
- `error` is the error text api-rules.md / errors-public.json give for the first rule, with `N`/`M`/ids filled in;
  where several rules are broken, which one the API reports first is an assumption (said in the note).
- Each case starts from a valid transcript with real signed blocks kept byte for byte (the source is named) and is
  damaged the way agents do it. The only thinking texts not from real traffic are the deliberately unsigned,
  empty-signed or foreign-signed blocks of `an06_missing_signature`, `an19_*` and `an23_*`.
- Cases taken from peers.md §7 are named `seedNN_*` or say so in their note (seeds 9, 10, 11, 12, 14, 16, 17, 19,
  20, 21, 22 map here; 1-8 are error-classification seeds, 13/15/18/23/24 are not rejections on the real API:
  15 and 18 are in ../anthropic as valid cases).
- Built by `../anthropic/build_corpus.py` (`build_damaged_gemini.py`).

"""


def note(d, name, text):
    README[d].append((name, text))


def msg(role, content, order=("role", "content")):
    m = {"role": role, "content": content}
    return {k: m[k] for k in order}


def U(content, order=("role", "content")):
    return msg("user", content, order)


def Asst(content, order=("role", "content")):
    return msg("assistant", content, order)


def text(t, **extra):
    b = {"type": "text", "text": t}
    b.update(extra)
    return b


def tr(tid, content, **extra):
    b = {"type": "tool_result", "tool_use_id": tid, "content": content}
    b.update(extra)
    return b


def with_messages(src, messages, drop=(), **over):
    """The source body's top-level keys in their order, `messages` replaced, some keys overridden/added."""
    out = {}
    for k in src.obj:
        if k in drop:
            continue
        if k == "messages":
            out[k] = messages
        elif k in over:
            out[k] = over.pop(k)
        else:
            out[k] = src.raw(k)
    out.update(over)
    return out


# ----------------------------------------------------------------------------------------------------------
# corpus/anthropic: valid bodies
# ----------------------------------------------------------------------------------------------------------
def anthropic_valid():
    # 1. manual tool loop, closed, then a second loop left open (first assistant message starts with thinking)
    f, fr, fb = Src(FANTASY), Src(FANTASY_RESP), Src(FANTASY_B)
    o = ("content", "role")  # fantasy's key order
    ms = f.msgs_raw() + [
        msg("assistant", fr.raw("content"), o),
        msg("user", [text("Thanks. It is late afternoon there now; can you check Florence again so I can decide whether to walk to the Uffizi?", )], o),
        msg("assistant", [fb.raw("messages", 1, "content", 0), fb.raw("messages", 1, "content", 1)], o),
        msg("user", [fb.raw("messages", 2, "content", 0)], o),
    ]
    write(f"{A}/tool_loop_manual.json", with_messages(f, ms), COMPACT)
    note("anthropic", "tool_loop_manual.json",
         f"claude-sonnet-4 manual thinking: `{FANTASY}` verbatim (thinking+tool_use, tool_result), its recorded final answer "
         f"(`{FANTASY_RESP}`), a new user turn, then a second real signed thinking+tool_use pair and its result from "
         f"`{FANTASY_B}`. Ends in an open tool loop whose first assistant message starts with thinking (AN-16 satisfied).")

    # 2. interleaved thinking: several thinking blocks between server tool calls in one assistant message
    c, cr = Src(CODE_AUTO), Src(CODE_AUTO_RESP)
    ms = c.msgs_raw() + [
        Asst(cr.raw("content"), ("content", "role")),
        U([text("Great. Now tell me which row has the largest value, and show the exact arithmetic.")], ("content", "role")),
    ]
    write(f"{A}/interleaved_thinking_server_tools.json", with_messages(c, ms))
    note("anthropic", "interleaved_thinking_server_tools.json",
         f"claude-sonnet-5 (thinking omitted = default on, display omitted): `{CODE_AUTO}` verbatim; its messages[1] holds "
         f"[thinking, server_tool_use, bash_code_execution_tool_result, thinking, server_tool_use, …, text]; appended the "
         f"recorded response `{CODE_AUTO_RESP}` and one user turn. Also carries `container_upload`, top-level `cache_control` and `container`.")

    # 3. redacted thinking (one block) replayed, then the next answer, then a new user turn
    r, rr = Src(REDACTED), Src(REDACTED_RESP)
    ms = r.msgs_raw() + [Asst(rr.raw("content"), ("content", "role")), U([text("Fine. Then just tell me a fun fact about pelicans.")], ("content", "role"))]
    write(f"{A}/redacted_thinking.json", with_messages(r, ms))
    note("anthropic", "redacted_thinking.json",
         f"claude-sonnet-4-5 manual: `{REDACTED}` verbatim (redacted_thinking + text, triggered by the magic string), plus "
         f"its recorded response `{REDACTED_RESP}` and a new user turn.")

    # 4. two consecutive redacted_thinking blocks in one assistant message
    r2, r2r = Src(REDACTED2_REQ), Src(REDACTED2_RESP)
    ms = r2.msgs_raw() + [Asst(r2r.raw("content"), ("content", "role")), U([text("What was that?")], ("content", "role"))]
    write(f"{A}/redacted_thinking_two_blocks.json", with_messages(r2, ms, stream=False))
    note("anthropic", "redacted_thinking_two_blocks.json",
         f"claude-sonnet-4-5 manual: request `{REDACTED2_REQ}` + the assembled streamed response `{REDACTED2_RESP}` "
         f"([redacted_thinking, redacted_thinking, text]; `data` strings are verbatim SSE payloads) + one user turn.")

    # 5. server tools: thinking + server_tool_use + web_search_tool_result + cited text, two full turns
    w, wr = Src(WEB), Src(WEB_RESP)
    ms = w.msgs_raw() + [Asst(wr.raw("content"), ("content", "role")), U([text("And which of the two cities is warmer right now?")], ("content", "role"))]
    write(f"{A}/server_tools_web_search.json", with_messages(w, ms))
    note("anthropic", "server_tools_web_search.json",
         f"claude-sonnet-4-0 manual: `{WEB}` verbatim (thinking, server_tool_use, web_search_tool_result with "
         f"encrypted_content, text blocks with `citations`), the recorded second response `{WEB_RESP}`, one user turn.")

    # 6. pause_turn continuation: trailing assistant message ends in an unanswered server_tool_use
    p0, pr = Src(PAUSE_REQ0), Src(PAUSE_RESP)
    blocks = pr.content_raw("content")
    # cut at the first server_tool_use (block 2): a pause point, thinking block untouched
    assert pr.get("content", 2, "type") == "server_tool_use"
    ms = p0.msgs_raw() + [Asst(blocks[:3], ("content", "role"))]
    write(f"{A}/pause_turn_continuation.json", with_messages(p0, ms, max_tokens=15000))
    note("anthropic", "pause_turn_continuation.json",
         f"claude-sonnet-4-5 manual: the `stop_reason:\"pause_turn\"` continuation shape (AN-15, AN-03 exception). User turn "
         f"from `{PAUSE_REQ0}`; the trailing assistant message is the first 3 blocks of the real pause_turn response "
         f"`{PAUSE_RESP}` [thinking, text, server_tool_use] (cut at the first unanswered server_tool_use; the full recorded "
         f"continuation is `pydantic-ai--test_anthropic-test_pause_turn_web_search_vcr__1.request.json`, 266 KB, same shape).")

    # 7. parallel tool calls, all results in one user message (adaptive, so no thinking is required)
    ms = [
        U("I'm choosing between Florence, Rome and Bologna for tomorrow. What's the weather in each?"),
        Asst([
            text("I'll check all three cities at once."),
            {"type": "tool_use", "id": "toolu_01A9wq3LhxY2nT7Vd8pQe4Kc", "name": "weather", "input": {"location": "Florence, Italy"}},
            {"type": "tool_use", "id": "toolu_01BfZ5sRk1m6JdCuN0tYxa3E", "name": "weather", "input": {"location": "Rome, Italy"}},
            {"type": "tool_use", "id": "toolu_01Cq8HgVe2o7WkPzR4bLnU9M", "name": "weather", "input": {"location": "Bologna, Italy"}},
        ]),
        U([
            tr("toolu_01A9wq3LhxY2nT7Vd8pQe4Kc", "31 C, sunny"),
            tr("toolu_01BfZ5sRk1m6JdCuN0tYxa3E", [text("34 C, humid")]),
            tr("toolu_01Cq8HgVe2o7WkPzR4bLnU9M", "weather service timeout", is_error=True),
            text("Bologna's lookup failed; skip it if needed."),
        ]),
    ]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 8192, "thinking": {"type": "adaptive"},
            "output_config": {"effort": "medium"},
            "tools": [Src(FANTASY).raw("tools", 0)], "tool_choice": {"type": "auto"}, "messages": ms}
    write(f"{A}/parallel_tool_calls.json", body)
    note("anthropic", "parallel_tool_calls.json",
         "claude-sonnet-4-6 adaptive: three parallel tool_use blocks answered by three tool_result blocks in ONE user "
         "message (AN-13), results first then text (AN-09), one `is_error:true`, string and block result content. "
         "Shape from api-rules.md AN-13/AN-14 (parallel-tool-use page); no thinking block (adaptive: AN-17). "
         "Real traffic has no parallel Anthropic tool calls, so ids/text are authored; tool schema from fantasy.")

    # 8. adaptive: assistant content starts with whitespace text before thinking (real opus-4-6 response)
    q, qr = Src(OPUS46_REQ), Src(OPUS46_RESP)
    ms = q.msgs_raw() + [Asst(qr.raw("content"), ("content", "role")), U([text("And 2+3?")], ("content", "role"))]
    write(f"{A}/adaptive_whitespace_text_first.json", with_messages(q, ms))
    note("anthropic", "adaptive_whitespace_text_first.json",
         f"claude-opus-4-6 adaptive: `{OPUS46_REQ}` + its recorded response `{OPUS46_RESP}` "
         "([text \"\\n\\n\", thinking, text]) + one user turn. Replayed as returned (DEVELOPERS.md principle 6). CAVEAT: "
         "no recorded request replays a whitespace-only text block; AN-05 as written would reject it.")

    # 9. adaptive: server_tool_use before thinking in a replayed assistant message (accepted, real)
    cm, cmr = Src(CODE_MSG), Src(CODE_MSG_RESP)
    ms = cm.msgs_raw() + [Asst(cmr.raw("content"), ("content", "role")), U([text("Thanks. Round that average to two decimals.")], ("content", "role"))]
    write(f"{A}/adaptive_server_tool_first.json", with_messages(cm, ms))
    note("anthropic", "adaptive_server_tool_first.json",
         f"claude-sonnet-5 default (adaptive) thinking: `{CODE_MSG}` verbatim (its messages[1] starts with "
         f"server_tool_use, then bash_code_execution_tool_result, then thinking; recorded status 200), plus the recorded "
         f"response `{CODE_MSG_RESP}` and one user turn.")

    # 10. display omitted: thinking "" + signature in an open tool loop, tool_use with `caller`
    e, er = Src(ELLMER_TOOL), Src(ELLMER_TOOL_RESP)
    ms = e.msgs_raw() + [
        {"role": "assistant", "content": er.raw("content")},
        {"role": "user", "content": [tr("toolu_01CsLvwXCRDWyXQyD4dvTe6S", "January", is_error=False)]},
    ]
    write(f"{A}/display_omitted_tool_loop.json",
          with_messages(e, ms, thinking={"type": "adaptive", "display": "omitted"}), COMPACT)
    note("anthropic", "display_omitted_tool_loop.json",
         f"claude-sonnet-5 adaptive, display omitted: `{ELLMER_TOOL}` verbatim (cache_control on system and user text, "
         f"string tool_result with is_error) + recorded response `{ELLMER_TOOL_RESP}` ([thinking \"\" + signature, "
         "tool_use with `caller`]) + its tool_result. Explicit `thinking` param added (same as the model default).")

    # 11. string and block content mixed; consecutive user messages (AN-02 merge), thinking on
    cw, cwr = Src(CREW), Src(CREW_RESP)
    ms = cw.msgs_raw() + [
        Asst(cwr.raw("content")),
        U("And 4+4?"),
        U([text("Answer with just the number, please.")]),
    ]
    write(f"{A}/mixed_string_and_block_content.json", with_messages(cw, ms), COMPACT)
    note("anthropic", "mixed_string_and_block_content.json",
         f"claude-sonnet-4-5 manual: `{CREW}` verbatim (user content as strings, assistant as blocks with signed thinking), "
         f"its recorded response `{CREW_RESP}`, then two consecutive user messages, one string and one block list "
         "(merged by the API, AN-02; peers.md §7 seed 18).")

    # 12. cache_control on system, tool_use, tool_result and a user text block (4 breakpoints, AN-07 max)
    cc, ccr = Src(FANTASY_CC), Src(FANTASY_CC_RESP)
    o = ("content", "role")
    ms = cc.msgs_raw() + [
        msg("assistant", ccr.raw("content"), o),
        msg("user", [text("Convert that to Fahrenheit and tell me if I need a hat.", cache_control={"type": "ephemeral", "ttl": "5m"})], o),
    ]
    write(f"{A}/cache_control_blocks.json", with_messages(cc, ms), COMPACT)
    note("anthropic", "cache_control_blocks.json",
         f"claude-sonnet-4 manual: `{FANTASY_CC}` verbatim (cache_control on system text, tool_use and tool_result), "
         f"recorded answer `{FANTASY_CC_RESP}`, a user text block with cache_control ttl 5m (4 breakpoints total).")

    # 13. rare (unknown-to-a-naive-model) block types and fields, all documented in api-rules.md §1.1
    mcp = Src(MCP)
    write(f"{A}/mcp_tool_blocks.json", with_messages(mcp, mcp.msgs_raw()))
    note("anthropic", "mcp_tool_blocks.json",
         f"claude-sonnet-4-0 manual, MCP connector: `{MCP}` verbatim (thinking, mcp_tool_use, mcp_tool_result, top-level "
         "`mcp_servers`). Block types a Messages-only model does not know; must round-trip.")

    adv = Src(ADVISOR)
    write(f"{A}/advisor_tool_replay.json", with_messages(adv, adv.msgs_raw()))
    note("anthropic", "advisor_tool_replay.json",
         f"claude-sonnet-5: `{ADVISOR}` verbatim (thinking \"\" + signature, text, server_tool_use, beta "
         "`advisor_tool_result`, text). Copied unchanged as a real accepted body with a beta block type.")

    img = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    ms = [
        U([
            text("Here is the incident report and the search hits I collected. Summarise what failed."),
            {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                            "data": "03:12 deploy 4.2.1 started\n03:14 health check failed on eu-west-1\n03:15 rollback"},
             "title": "incident-2291.txt", "context": "Pager export", "citations": {"enabled": True}},
            {"type": "search_result", "source": "https://status.example.com/incidents/2291", "title": "Status page: incident 2291",
             "content": [text("Elevated 5xx rates in eu-west-1 between 03:14 and 03:19 UTC.")], "citations": {"enabled": True}},
        ]),
        Asst([
            text("I'll pull the deployment log to confirm the timeline."),
            {"type": "tool_use", "id": "toolu_01Ux5rPq7VbN2cTz8hWkLm3D", "name": "read_log", "input": {"service": "api", "since": "03:00"},
             "caller": {"type": "direct"}},
        ]),
        U([
            tr("toolu_01Ux5rPq7VbN2cTz8hWkLm3D", [
                text("03:14:02 readiness probe timeout (5s) x3"),
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": img}},
            ], cache_control={"type": "ephemeral"}),
        ]),
    ]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 4096, "thinking": {"type": "adaptive", "display": "summarized"},
            "metadata": {"user_id": "u-5f1c"}, "service_tier": "auto",
            "system": [text("You are an SRE assistant.", cache_control={"type": "ephemeral", "ttl": "1h"})],
            "tools": [{"name": "read_log", "description": "Read service logs.", "input_schema": {
                "type": "object", "properties": {"service": {"type": "string"}, "since": {"type": "string"}},
                "required": ["service"]}, "cache_control": {"type": "ephemeral"}}],
            "messages": ms}
    write(f"{A}/rare_user_blocks_and_fields.json", body)
    note("anthropic", "rare_user_blocks_and_fields.json",
         "claude-sonnet-4-6 adaptive: user-side block types and optional fields from api-rules.md §1.1 a minimal model "
         "tends to drop: `document` (text source, title, context, citations), `search_result`, tool_use `caller`, "
         "tool_result with text+image list content and cache_control, top-level `metadata`/`service_tier`, ttl 1h. "
         "Authored (no signed content).")

    # 14. escapes, non-ASCII, long strings inside text; thinking kept verbatim
    cw = Src(CREW)
    long_log = "".join(f"[{i:05d}] worker-{i % 7} ok latency={i % 97}ms path=/api/v1/items/{i}\n" for i in range(1500))
    esc = Raw(r'"Tabs\tand\nnewlines, quotes \"q\", backslash \\ and solidus \/ as written; control \u0001 char; '
              r'raw é and escaped \u00e9; emoji \ud83e\uddea as a surrogate pair; \u2028 escaped line separator"')
    ms = [
        cw.raw("messages", 0), cw.raw("messages", 1),
        U([text("Ünïcödé: Ελληνικά, русский, 日本語のテキスト, العربية (RTL), עברית, देवनागरी, e\u0301 (combining), "
                "👩‍💻 (ZWJ), \u200b zero-width, \u2028 line separator, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"),
           {"type": "text", "text": esc},
           text("Here is the full log (about 100 KB); count how many lines mention worker-3:\n" + long_log)]),
    ]
    write(f"{A}/escapes_unicode_long.json", with_messages(cw, ms), COMPACT)
    note("anthropic", "escapes_unicode_long.json",
         f"claude-sonnet-4-5 manual: first two messages of `{CREW}` verbatim (signed thinking), then a user turn with "
         "raw non-ASCII (Greek, Cyrillic, CJK, RTL, combining marks, ZWJ emoji, U+2028, astral math letters), a text "
         "written with JSON escapes (\\t \\n \\\" \\\\ \\/ \\u0001 \\u00e9 surrogate pair), and a ~100 KB log text.")

    # 15. Bedrock InvokeModel body: anthropic_version + anthropic_beta, no model field
    b, br = Src(BEDROCK), Src(BEDROCK_RESP)
    ms = b.msgs_raw() + [Asst(br.raw("content"), ("content", "role")),
                         U([text("Now show the annotated version only.")], ("content", "role"))]
    body = {"anthropic_version": b.raw("anthropic_version"), "anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    body.update({k: v for k, v in with_messages(b, ms).items() if k != "anthropic_version"})
    write(f"{A}/bedrock_invoke.json", body)
    note("anthropic", "bedrock_invoke.json",
         f"Bedrock InvokeModel body for us.anthropic.claude-sonnet-5 (model is in the URL, not the body): `{BEDROCK}` "
         f"verbatim (anthropic_version bedrock-2023-05-31, string system) + recorded response `{BEDROCK_RESP}` "
         "(thinking \"\" + signature, text) + a user turn; `anthropic_beta` added (interleaved is automatic on "
         "Sonnet 5; newer doc copy says partner platforms ignore unsupported values).")

    # 16. thinking disabled, earlier assistant message still carries signed thinking (accepted, real)
    mo = Src(MIRA_OFF)
    write(f"{A}/thinking_disabled_history_thinking.json", with_messages(mo, mo.msgs_raw()))
    note("anthropic", "thinking_disabled_history_thinking.json",
         f"claude-sonnet-4-0 with thinking {{\"type\":\"disabled\"}}: `{MIRA_OFF}` verbatim: an EARLIER assistant "
         "message holds a signed thinking block (accepted; AN-20 only forbids it in the final position).")

    # 17. haiku 4.5, display summarized, temperature 1 with thinking, open loop (real)
    h = Src(HAIKU)
    write(f"{A}/haiku_display_summarized_tool_loop.json", with_messages(h, h.msgs_raw()), COMPACT)
    note("anthropic", "haiku_display_summarized_tool_loop.json",
         f"claude-haiku-4-5 manual, budget 1024, display summarized, temperature 1.0 (allowed with thinking): `{HAIKU}` verbatim.")

    # 18. adaptive sonnet-4-6 tool loop with thinking + text + tool_use (real)
    ca = Src(CAPAB)
    write(f"{A}/adaptive_tool_loop.json", with_messages(ca, ca.msgs_raw()))
    note("anthropic", "adaptive_tool_loop.json",
         f"claude-sonnet-4-6 adaptive: `{CAPAB}` verbatim ([thinking, text, tool_use] then tool_result).")

    # responses
    import shutil
    for src, name, why in [
        (OPUS46_RESP, "response_adaptive_whitespace_first.json",
         "opus-4-6 adaptive response starting with text \"\\n\\n\" before thinking; `inference_geo`, nested usage."),
        (CODE_AUTO_RESP1, "response_interleaved_server_tools.json",
         "sonnet-5 response with two thinking \"\" blocks between server tool calls; `container`, `stop_details` fields."),
        (ELLMER_TOOL_RESP, "response_omitted_thinking_tool_use.json",
         "sonnet-5 response: thinking \"\" + signature, tool_use with `caller`, `output_tokens_details`."),
    ]:
        shutil.copyfile(os.path.join("/work/shared/real-traffic", src), f"{A}/{name}")
        note("anthropic", name, f"RESPONSE body, byte copy of `{src}`: {why}")


if __name__ == "__main__":
    anthropic_valid()
    import build_damaged_gemini  # noqa: E402
    build_damaged_gemini.run(note)
    headers = {
        "anthropic": HEADER_A,
        "gemini": HEADER_G,
        "damaged": HEADER_D,
    }
    for d, items in README.items():
        path = {"anthropic": A, "gemini": G, "damaged": D}[d]
        with open(os.path.join(path, "README.md"), "w", encoding="utf-8") as fh:
            fh.write(headers[d])
            for name, t in sorted(items):
                fh.write(f"- `{name}`: {t}\n")
            if d == "anthropic":
                fh.write(FOOTER_A)
