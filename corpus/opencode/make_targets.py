#!/usr/bin/env python3
"""Writes two synthetic `opencode export` documents modelled on real stores (values invented).

- export/kimi_session.export.json: a session recorded with Kimi K2.6 through an OpenAI-compatible
  provider, with what the real Kimi store (shared/real-stores/opencode/aiand-v1.17-sqlite-kimi)
  shows: Kimi's native call ids (`functions.bash:0`), a whitespace-only text part before a tool
  call, unsigned reasoning, and a `question` tool left running in a message that has no
  `time.completed` (an interrupted turn).
- export/aborted_reasoning.export.json: a Claude session whose last assistant message was
  aborted (`MessageAbortedError`) after a long, degenerate, base64-laced reasoning part without a
  signature, *and* some text (the shape session-stores.md §2 asks for: had the aborted turn
  produced content, OpenCode would send it).

Run: python3 corpus/opencode/make_targets.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SES = "ses_0a1b2c3d4ffeKimiTarget0001"


def part(mid, pid, **body):
    return {"id": pid, "sessionID": SES, "messageID": mid, **body}


def doc(session_id, title, messages):
    return {
        "info": {"id": session_id, "slug": "synthetic", "version": "1.17.3",
                 "projectID": "global", "directory": "/home/dev/site", "title": title,
                 "time": {"created": 1781740000000, "updated": 1781740090000}},
        "messages": messages,
        "todos": [],
    }


def kimi():
    model = {"providerID": "opencode", "modelID": "moonshotai/kimi-k2.6"}
    u1, a1, u2, a2 = ("msg_ed8700000001UserFirst0001", "msg_ed8700000002AsstFirst0002",
                      "msg_ed8700000003UserSecond003", "msg_ed8700000004AsstSecond004")
    asst = lambda mid, parent, created, completed: {
        "id": mid, "sessionID": SES, "role": "assistant", "parentID": parent,
        "providerID": "opencode", "modelID": "moonshotai/kimi-k2.6", "mode": "build",
        "path": {"cwd": "/home/dev/site", "root": "/home/dev/site"}, "cost": 0,
        "tokens": {"input": 900, "output": 40, "reasoning": 10, "cache": {"read": 0, "write": 0}},
        "time": {"created": created, **({"completed": completed} if completed else {})},
    }
    messages = [
        {"info": {"id": u1, "sessionID": SES, "role": "user",
                  "time": {"created": 1781740000000}, "agent": "build", "model": model},
         "parts": [part(u1, "prt_ed8700000011TextPartUser01", type="text",
                        text="List the files, then ask me which one to deploy.")]},
        {"info": asst(a1, u1, 1781740001000, 1781740020000),
         "parts": [
             part(a1, "prt_ed8700000021StepStart0001", type="step-start"),
             part(a1, "prt_ed8700000022Reasoning0001", type="reasoning",
                  text="The user wants a listing first.",
                  time={"start": 1781740001100, "end": 1781740001500}),
             part(a1, "prt_ed8700000023BlankText0001", type="text", text=" ",
                  time={"start": 1781740001600, "end": 1781740001600}),
             part(a1, "prt_ed8700000024ToolBash00001", type="tool", callID="functions.bash:0",
                  tool="bash",
                  state={"status": "completed", "input": {"command": "ls"},
                         "output": "index.html\nserver.py\n", "title": "ls", "metadata": {},
                         "time": {"start": 1781740002000, "end": 1781740002100}}),
             part(a1, "prt_ed8700000025StepFinish001", type="step-finish", reason="tool-calls",
                  cost=0, tokens={"input": 900, "output": 40, "reasoning": 10,
                                  "cache": {"read": 0, "write": 0}}),
             part(a1, "prt_ed8700000026StepStart0002", type="step-start"),
             part(a1, "prt_ed8700000027TextAnswer001", type="text",
                  text="There are two files: index.html and server.py."),
             part(a1, "prt_ed8700000028StepFinish002", type="step-finish", reason="stop",
                  cost=0, tokens={"input": 950, "output": 20, "reasoning": 0,
                                  "cache": {"read": 0, "write": 0}}),
         ]},
        {"info": {"id": u2, "sessionID": SES, "role": "user",
                  "time": {"created": 1781740030000}, "agent": "build", "model": model},
         "parts": [part(u2, "prt_ed8700000031TextPartUser02", type="text",
                        text="Ask me with the question tool.")]},
        {"info": asst(a2, u2, 1781740031000, None),
         "parts": [
             part(a2, "prt_ed8700000041StepStart0003", type="step-start"),
             part(a2, "prt_ed8700000042Reasoning0002", type="reasoning",
                  text="Use the question tool.",
                  time={"start": 1781740031100, "end": 1781740031300}),
             part(a2, "prt_ed8700000043ToolQuestion1", type="tool",
                  callID="functions.question:1", tool="question",
                  state={"status": "running",
                         "input": {"question": "Which file should I deploy?"},
                         "time": {"start": 1781740031400}}),
         ]},
    ]
    return doc(SES, "Deploy the site (synthetic, Kimi)", messages)


def aborted():
    sid = "ses_0a1b2c3d5ffeAbortedReason1"
    model = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
    u1, a1 = "msg_bfee00000001UserAskPdf0001", "msg_bfee00000002AsstAborted002"
    p = lambda mid, pid, **b: {"id": pid, "sessionID": sid, "messageID": mid, **b}
    # Degenerate reasoning: repeated base64-looking runs broken by words (the real one was 19 KB).
    chunk = "JVBERi0xLjQKJfbk/N8KMSAwIG9iago8PAovVHlwZSAvQ2F0YWxvZwo+PgplbmRvYmoK"
    junk = " ".join(f"{chunk}{i % 7} then the card" for i in range(300))
    messages = [
        {"info": {"id": u1, "sessionID": sid, "role": "user",
                  "time": {"created": 1769507800000}, "agent": "plan", "model": model},
         "parts": [p(u1, "prt_bfee00000011UserTextPart01", type="text",
                     text="Suggest improvements to the wedding card in the PDF.")]},
        {"info": {"id": a1, "sessionID": sid, "role": "assistant", "parentID": u1,
                  "providerID": "anthropic", "modelID": "claude-sonnet-4-5", "mode": "plan",
                  "path": {"cwd": "/home/dev", "root": "/home/dev"}, "cost": 0,
                  "tokens": {"input": 0, "output": 0, "reasoning": 0,
                             "cache": {"read": 0, "write": 0}},
                  "time": {"created": 1769507801000, "completed": 1769507846000},
                  "error": {"name": "MessageAbortedError",
                            "data": {"message": "The operation was aborted."}}},
         "parts": [
             p(a1, "prt_bfee00000021StepStartPart1", type="step-start"),
             p(a1, "prt_bfee00000022DegenerateThk1", type="reasoning", text=junk,
               time={"start": 1769507802000, "end": 1769507840000}),
             p(a1, "prt_bfee00000023PartialText001", type="text",
               text="The card's typography could be more consistent.",
               time={"start": 1769507841000, "end": 1769507845000}),
         ]},
    ]
    return doc(sid, "Wedding card suggestions (synthetic, aborted)", messages)


for name, d in [("kimi_session.export.json", kimi()),
                ("aborted_reasoning.export.json", aborted())]:
    with open(os.path.join(HERE, "export", name), "w") as f:
        json.dump(d, f, indent=2, ensure_ascii=False)
        f.write("\n")
