#!/usr/bin/env python3
"""Regenerates the OpenCode corpus: one set of sessions written three ways.

    python3 corpus/opencode/make_corpus.py

Writes, next to this script:
  storage/                 the JSON-file tree of OpenCode <= v1.1.65 (2-space pretty JSON, ids in
                           every body, as Storage.write does; opencode-storage.md section 3)
  opencode.db              the SQLite store of OpenCode >= v1.2.0 (schema of v1.2.0..v1.2.10,
                           section 5.3; `data` = compact JSON without the id fields, section 5.4)
  export/<session>.json    a bare JSON array of {info, parts} per session
  export/<session>.doc.json  the `opencode export` document {info, messages} (healthy only)

The same messages and parts go into all three; then each store gets its own damage (malformed
files, unsafe ids, orphan parts) which readers must report and skip. All values are invented;
shapes follow seed 003 and opencode-storage.md section 7. See README.md for where each shape
comes from.
"""

import json
import os
import shutil
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PROJECT = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
T0 = 1764151026000  # 2025-11-26, before the 2026-08-14 id wrap


class Ids:
    """OpenCode-shaped ids: <prefix>_<12 hex of (ms*4096+counter) low 48 bits><14 base62>."""

    def __init__(self):
        self.n = 0

    def make(self, prefix, ms, descending=False):
        self.n += 1
        v = ms * 4096 + self.n % 4096
        if descending:
            v = ~v
        hexpart = format(v & 0xFFFFFFFFFFFF, "012x")
        tail = "".join(BASE62[(self.n * 7 + i * 13) % 62] for i in range(14))
        return f"{prefix}_{hexpart}{tail}"


IDS = Ids()
SIG = "EqQBCkgIBhABGAIiQ" + "Lk3mZ0pQ8rT2vX9wY4bN6cD1eF5gH7jK" * 3 + "=="


def sig(n):
    """An invented Anthropic-looking signature (base64 alphabet)."""
    return SIG.replace("Lk3", f"A{n:02d}", 1)


class Builder:
    def __init__(self, title, created, slug):
        self.id = IDS.make("ses", created, descending=True)
        self.info = {
            "id": self.id,
            "slug": slug,
            "version": "1.1.65",
            "projectID": PROJECT,
            "directory": "/home/dev/work/parser",
            "title": title,
            "time": {"created": created, "updated": created},
        }
        self.messages = []  # (info, parts)
        self.clock = created

    def tick(self, ms=1000):
        self.clock += ms
        return self.clock

    def user(self, *parts, model="claude-sonnet-4-5", provider="anthropic"):
        t = self.tick()
        mid = IDS.make("msg", t)
        info = {
            "id": mid,
            "sessionID": self.id,
            "role": "user",
            "time": {"created": t},
            "agent": "build",
            "model": {"providerID": provider, "modelID": model},
        }
        self.messages.append((info, self._parts(mid, parts)))
        return mid

    def assistant(self, *parts, parent, finish="stop", error=None, completed=True,
                  model="claude-sonnet-4-5", provider="anthropic", summary=None):
        t = self.tick()
        mid = IDS.make("msg", t)
        info = {
            "id": mid,
            "sessionID": self.id,
            "role": "assistant",
            "time": {"created": t},
            "parentID": parent,
            "modelID": model,
            "providerID": provider,
            "mode": "build",
            "agent": "build",
            "path": {"cwd": "/home/dev/work/parser", "root": "/home/dev/work/parser"},
            "cost": 0.0123,
            "tokens": {"input": 20923, "output": 154, "reasoning": 92,
                       "cache": {"read": 467, "write": 0}},
        }
        if summary is not None:
            info["summary"] = summary
        if completed:
            info["time"]["completed"] = t + 900
        if error is not None:
            info["error"] = error
        if finish is not None:
            info["finish"] = finish
        self.messages.append((info, self._parts(mid, parts)))
        self.info["time"]["updated"] = t + 900
        return mid

    def _parts(self, mid, parts):
        out = []
        for p in parts:
            if "id" in p:  # a hand-chosen id (plugins write these)
                pid = p.pop("id")
            else:
                pid = IDS.make("prt", self.tick(10))
            out.append(dict({"id": pid, "sessionID": self.id, "messageID": mid}, **p))
        return out


def text(t, **kw):
    return dict({"type": "text", "text": t}, **kw)


def reasoning(t, signature=None, metadata=None, end=True):
    p = {"type": "reasoning", "text": t, "time": {"start": T0}}
    if end:
        p["time"]["end"] = T0 + 2088
    if signature is not None:
        p["metadata"] = {"anthropic": {"signature": signature}}
    if metadata is not None:
        p["metadata"] = metadata
    return p


def tool(call, name, status, inp, **state):
    st = {"status": status, "input": inp}
    st.update(state)
    return {"type": "tool", "callID": call, "tool": name, "state": st}


def step_start():
    return {"type": "step-start", "snapshot": "d293bb271fe096bc1d0957faba8d798dffc50b7d"}


def step_finish(reason):
    return {"type": "step-finish", "reason": reason,
            "snapshot": "f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4e", "cost": 0.0061,
            "tokens": {"input": 10461, "output": 77, "reasoning": 46,
                       "cache": {"read": 233, "write": 0}}}


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
       "rkJggg==")


def healthy():
    s = Builder("Fix the failing parser test", T0, "brave-otter")
    u1 = s.user(
        text("Fix the failing test in src/parser.rs. Here is the screenshot of the failure."),
        {"type": "file", "mime": "image/png", "filename": "failure.png",
         "url": "data:image/png;base64," + PNG},
        {"type": "file", "mime": "text/plain", "filename": "parser.rs",
         "url": "file:///home/dev/work/parser/src/parser.rs",
         "source": {"type": "file", "path": "src/parser.rs",
                    "text": {"value": "@src/parser.rs", "start": 12, "end": 26}}},
        {"type": "agent", "name": "build", "source": {"value": "@build", "start": 0, "end": 6}},
        text("Called the Read tool with the following input: {\"filePath\":\"src/parser.rs\"}",
             synthetic=True),
        text("(hidden note for the UI)", ignored=True),
    )
    s.assistant(
        step_start(),
        reasoning("The user wants the failing test fixed first. Run the suite to see it.",
                  signature=sig(1)),
        text("I'll run the tests first.", time={"start": T0, "end": T0 + 40}),
        tool("toolu_01HealthyBash0000000001", "bash", "completed",
             {"command": "cargo test -p parser", "description": "Run parser tests"},
             output="test parse_empty ... FAILED\n\nthread panicked at 'index out of bounds'",
             title="cargo test -p parser", metadata={"exit": 101},
             time={"start": T0 + 100, "end": T0 + 4100}),
        step_finish("tool-calls"),
        step_start(),
        reasoning("Empty input indexes [0]. Guard it, then show the screenshot diff.",
                  signature=sig(2)),
        tool("toolu_01HealthyEdit0000000002", "edit", "completed",
             {"filePath": "src/parser.rs", "oldString": "let c = s[0];",
              "newString": "let Some(c) = s.first() else { return None };"},
             output="Edit applied.", title="src/parser.rs", metadata={"diff": "@@ -1 +1 @@"},
             time={"start": T0 + 5000, "end": T0 + 5200},
             attachments=[{"id": "prt_attach0000000000000000001", "sessionID": s.id,
                           "messageID": "msg_attach", "type": "file", "mime": "image/png",
                           "filename": "diff.png", "url": "data:image/png;base64," + PNG}]),
        step_finish("tool-calls"),
        step_start(),
        reasoning("Tests should pass now; summarise.", signature=sig(3)),
        text("Fixed: `parse` no longer indexes an empty slice. All tests pass."),
        step_finish("stop"),
        {"type": "snapshot", "snapshot": "0f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4"},
        {"type": "patch", "hash": "9a8b7c6d5e4f30211203f4e5d6c7b8a9", "files": ["src/parser.rs"]},
        parent=u1, finish="stop",
    )
    u2 = s.user(
        text("Summarise the change for the changelog."),
        {"type": "subtask", "prompt": "Write a one-line changelog entry for the parser fix",
         "description": "changelog entry", "agent": "general",
         "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
         "command": "changelog"},
    )
    s.assistant(
        {"type": "retry", "attempt": 1,
         "error": {"name": "APIError", "data": {"message": "Overloaded", "statusCode": 529,
                                                "isRetryable": True,
                                                "responseBody": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}},
         "time": {"created": T0 + 9000}},
        step_start(),
        {"type": "reasoning", "text": "", "time": {"start": T0, "end": T0 + 10},
         "metadata": {"anthropic": {"redactedData": "EmwKAhgBEgy3vZ1redactedblob0123456789+/=="}}},
        text("- parser: empty input no longer panics (#142)"),
        step_finish("stop"),
        parent=u2, finish="stop",
    )
    u3 = s.user({"type": "compaction", "auto": False})
    s.assistant(
        step_start(),
        text("We fixed an out-of-bounds panic in `parse` for empty input and added a changelog "
             "entry. Next: add a regression test."),
        step_finish("stop"),
        parent=u3, finish="stop", summary=True,
    )
    s.user(text("Thanks. Add the regression test now."))
    return s


def broken():
    s = Builder("Refactor the tokenizer", T0 + 86_400_000, "quiet-heron")
    u = s.user(text("Refactor the tokenizer into its own module."))
    # seed 002 / opencode#9364: reasoning stored after text and tool parts of the same step.
    s.assistant(
        step_start(),
        text("Let me look at the current tokenizer."),
        tool("toolu_01BrokenRead00000000001", "read", "completed",
             {"filePath": "src/tokenizer.rs"}, output="pub fn tokenize(s: &str) -> Vec<Tok> {",
             title="src/tokenizer.rs", metadata={}, time={"start": T0, "end": T0 + 20}),
        reasoning("I should read the file before moving it.", signature=sig(11)),
        step_finish("tool-calls"),
        step_start(),
        reasoning("Now split it out.", signature=sig(12)),
        text("Moved it to `src/tokenizer/mod.rs`."),
        step_finish("stop"),
        parent=u, finish="stop",
    )
    u = s.user(text("and the tests?"))
    # empty text parts: "" from a crash mid-stream (section 6.1) and whitespace-only text.
    s.assistant(
        step_start(),
        reasoning("Check the tests.", signature=sig(13)),
        text(""),
        text("   \n"),
        text("The tests live in `tests/tokenizer.rs` and still pass."),
        step_finish("stop"),
        parent=u, finish="stop",
    )
    u = s.user(text("continue"))
    # thinking-only assistant message (seed 000 findMessagesWithThinkingOnly; seed 004).
    s.assistant(
        step_start(),
        reasoning("Nothing more to do here, I think.", signature=sig(14)),
        step_finish("stop"),
        parent=u, finish="stop",
    )
    u = s.user(text("run the benchmarks"))
    # tool parts left pending/running in a finished message (seed 003 rule 8; section 6.1).
    s.assistant(
        step_start(),
        reasoning("Run the benches and grep for regressions.", signature=sig(15)),
        tool("toolu_01BrokenBench0000000001", "bash", "running",
             {"command": "cargo bench", "description": "Run benchmarks"},
             title="cargo bench", time={"start": T0 + 30000}),
        tool("toolu_01BrokenGrep00000000001", "grep", "pending", {}, raw="{\"pattern\":\"regr"),
        parent=u, finish="tool-calls",
    )
    u = s.user(text("why did it stop?"))
    # aborted turn with content: kept (seed 003 "Messages with Errors").
    s.assistant(
        step_start(),
        reasoning("The benchmark run was interrupted; explain.", signature=sig(16)),
        text("The benchmark run was interrupted before it"),
        tool("toolu_01BrokenAbort0000000001", "bash", "error",
             {"command": "cargo bench -- tokenize"}, error="Tool execution aborted",
             time={"start": T0 + 40000, "end": T0 + 40000}),
        parent=u, finish=None,
        error={"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}},
    )
    u = s.user(text("try again"))
    # errored turn: excluded (seed 003); interrupted reasoning with "" and no signature.
    s.assistant(
        step_start(),
        reasoning("", end=False),
        parent=u, finish=None,
        error={"name": "APIError",
               "data": {"message": "Overloaded", "statusCode": 529, "isRetryable": True}},
    )
    # aborted without content (only step-start + reasoning): excluded too.
    s.assistant(
        step_start(),
        reasoning("Retrying the", signature=None, end=False),
        parent=u, finish=None,
        error={"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}},
    )
    u = s.user(
        # orphan tool result written by a plugin (peers.md section 1.2, OMO
        # recover-tool-result-missing): a foreign part type naming a call nobody made.
        {"id": "prt_0000000000_orphan_result", "type": "tool_result",
         "tool_use_id": "toolu_01GoneGoneGone000000001", "isError": True,
         "content": [{"type": "text", "text": "Operation cancelled by user (ESC pressed)"}]},
        text("What about the Unicode path? (é, 日本)"),
    )
    # invalid / foreign signatures in reasoning metadata (api-rules AN-23; peers.md 4, 1.6).
    s.assistant(
        {"id": "prt_0000000000_synthetic_thinking", "type": "thinking",
         "thinking": "[Continuing from previous reasoning]", "synthetic": True},
        step_start(),
        reasoning("Gemini's sentinel is not an Anthropic signature.",
                  signature="skip_thought_signature_validator"),
        reasoning("A Gemini thought signature only.",
                  metadata={"google": {"thoughtSignature": "CiQBVKhc7vGeminiSig=="}}),
        reasoning("Truncated signature.", signature=sig(17)[:24]),
        text("Unicode paths are handled by `char_indices`."),
        step_finish("stop"),
        parent=u, finish="stop",
    )
    u = s.user(text("and with gemini?"), model="gemini-2.5-pro", provider="google")
    s.assistant(
        step_start(),
        reasoning("Cross-model: signature from another provider.",
                  metadata={"google": {"thoughtSignature": "CiQBVKhc7vGeminiSig2=="}}),
        text("Same on Gemini."),
        step_finish("stop"),
        parent=u, finish="stop", model="gemini-2.5-pro", provider="google",
    )
    u = s.user(text("back to claude: summarise"))
    s.assistant(
        step_start(),
        reasoning("Summarise the refactor.", signature=sig(18)),
        text("Summary: tokenizer moved, tests pass, benchmarks pending.  "),
        step_finish("stop"),
        parent=u, finish="stop",
    )
    return s


def pretty(obj):
    return json.dumps(obj, indent=2, ensure_ascii=False)


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def without(obj, *keys):
    return {k: v for k, v in obj.items() if k not in keys}


def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8", "newline": ""})) as f:
        f.write(content)


def write_json_tree(root, sessions):
    write(os.path.join(root, "migration"), "2")
    write(os.path.join(root, "project", PROJECT + ".json"),
          pretty({"id": PROJECT, "worktree": "/home/dev/work/parser", "vcs": "git",
                  "time": {"created": T0, "updated": T0}, "sandboxes": []}))
    for s in sessions:
        write(os.path.join(root, "session", PROJECT, s.id + ".json"), pretty(s.info))
        for info, parts in s.messages:
            write(os.path.join(root, "message", s.id, info["id"] + ".json"), pretty(info))
            for p in parts:
                write(os.path.join(root, "part", info["id"], p["id"] + ".json"), pretty(p))


def damage_json_tree(root, s):
    """Store-specific damage in the broken session (each must be reported and skipped)."""
    first_msg = s.messages[0][0]["id"]
    pdir = os.path.join(root, "part", first_msg)
    # malformed JSON: a part file cut mid-write (anomalyco/opencode#5431), a 0-byte part file
    # after disk-full (#7607), and a NUL-filled file after a crash (#10904).
    write(os.path.join(pdir, "prt_ffffffffff01Truncated00001.json"),
          '{\n  "id": "prt_ffffffffff01Truncated00001",\n  "type": "text",\n  "text": "hel')
    write(os.path.join(pdir, "prt_ffffffffff02ZeroBytes00001.json"), "")
    write(os.path.join(pdir, "prt_ffffffffff03NulFilled00001.json"), b"\0" * 64)
    # wrong shape: a message file without a role; its part directory is then orphaned.
    bad_msg = IDS.make("msg", T0 + 86_400_000 + 999_000)
    write(os.path.join(root, "message", s.id, bad_msg + ".json"),
          pretty({"id": bad_msg, "sessionID": s.id, "time": {"created": T0}}))
    write(os.path.join(root, "part", bad_msg, "prt_ffffffffff04Orphaned00001.json"),
          pretty({"id": "prt_ffffffffff04Orphaned00001", "sessionID": s.id,
                  "messageID": bad_msg, "type": "text", "text": "lost"}))
    # a part directory whose message never existed (section 8 item 6).
    ghost = "msg_ffffffffff05GhostMessage01"
    write(os.path.join(root, "part", ghost, "prt_ffffffffff06GhostPart0001.json"),
          pretty({"id": "prt_ffffffffff06GhostPart0001", "sessionID": s.id,
                  "messageID": ghost, "type": "text", "text": "ghost"}))
    # path traversal: a body naming a parent directory as its message, and a file whose name
    # is `..json` (id ".").
    write(os.path.join(pdir, "prt_ffffffffff07Traversal0001.json"),
          pretty({"id": "prt_ffffffffff07Traversal0001", "sessionID": s.id,
                  "messageID": "../../../../etc", "type": "text", "text": "escape"}))
    write(os.path.join(root, "message", s.id, "..json"),
          pretty({"id": "..", "sessionID": s.id, "role": "user", "time": {"created": T0}}))
    # a session file whose body id tries to escape (listing must not follow it).
    write(os.path.join(root, "session", "global", "ses_ffffffffff08Traversal0001.json"),
          pretty({"id": "../../../etc/passwd", "title": "evil", "time": {"created": 1,
                                                                          "updated": 1}}))


SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text,
  icon_url text, icon_color text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_initialized integer, sandboxes text NOT NULL, commands text);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
  slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
  share_url text, summary_additions integer, summary_deletions integer, summary_files integer,
  summary_diffs text, revert text, permission text, time_created integer NOT NULL,
  time_updated integer NOT NULL, time_compacting integer, time_archived integer,
  FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL,
  FOREIGN KEY (session_id) REFERENCES session(id) ON DELETE CASCADE);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL,
  FOREIGN KEY (message_id) REFERENCES message(id) ON DELETE CASCADE);
CREATE INDEX message_session_idx ON message (session_id);
CREATE INDEX part_message_idx ON part (message_id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_project_idx ON session (project_id);
"""


def write_db(path, sessions, broken_session):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.execute("INSERT INTO project VALUES (?,?,?,?,?,?,?,?,?,?,?)",
               (PROJECT, "/home/dev/work/parser", "git", None, None, None, T0, T0, None, "[]",
                None))
    for s in sessions:
        i = s.info
        db.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                   "time_created, time_updated) VALUES (?,?,?,?,?,?,?,?)",
                   (i["id"], PROJECT, i["slug"], i["directory"], i["title"], i["version"],
                    i["time"]["created"], i["time"]["updated"]))
        for info, parts in s.messages:
            t = info["time"]["created"]
            db.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                       (info["id"], s.id, t, t, compact(without(info, "id", "sessionID"))))
            for p in parts:
                db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                           (p["id"], info["id"], s.id, t, t,
                            compact(without(p, "id", "sessionID", "messageID"))))
    # damage, broken session only (foreign keys are off on this connection, as on any
    # connection that does not enable them: section 5.3)
    s = broken_session
    first_msg = s.messages[0][0]["id"]
    db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
               ("prt_ffffffffff01Truncated00001", first_msg, s.id, T0, T0,
                '{"type":"text","text":"hel'))
    db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
               ("prt_ffffffffff06GhostPart0001", "msg_ffffffffff05GhostMessage01", s.id, T0, T0,
                '{"type":"text","text":"ghost"}'))
    db.execute("INSERT INTO message VALUES (?,?,?,?,?)",
               ("../../x", s.id, T0, T0, '{"role":"user","time":{"created":1}}'))
    db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
               ("prt_ffffffffff07Traversal0001", "../../x", s.id, T0, T0,
                '{"type":"text","text":"escape"}'))
    db.commit()
    db.close()


def export_array(s):
    return [{"info": info, "parts": parts} for info, parts in s.messages]


def main():
    healthy_s = healthy()
    broken_s = broken()
    sessions = [healthy_s, broken_s]
    root = os.path.join(HERE, "storage")
    shutil.rmtree(root, ignore_errors=True)
    write_json_tree(root, sessions)
    damage_json_tree(root, broken_s)
    write_db(os.path.join(HERE, "opencode.db"), sessions, broken_s)
    exp = os.path.join(HERE, "export")
    shutil.rmtree(exp, ignore_errors=True)
    write(os.path.join(exp, "healthy.json"), pretty(export_array(healthy_s)))
    write(os.path.join(exp, "healthy.doc.json"),
          pretty({"info": healthy_s.info, "messages": export_array(healthy_s)}))
    damaged = export_array(broken_s) + [
        {"info": {"id": "../../x", "sessionID": broken_s.id, "role": "user",
                  "time": {"created": 1}},
         "parts": [{"id": "prt_ffffffffff07Traversal0001", "sessionID": broken_s.id,
                    "messageID": "../../x", "type": "text", "text": "escape"}]},
        {"info": {"id": "msg_ffffffffff09NoRole000001", "sessionID": broken_s.id,
                  "time": {"created": 1}}, "parts": []},
    ]
    damaged[0]["parts"].append({"id": "prt_ffffffffff0aNoType000001", "sessionID": broken_s.id,
                                "messageID": damaged[0]["info"]["id"], "text": "no type"})
    write(os.path.join(exp, "broken.json"), pretty(damaged))
    ids = {"healthy": healthy_s.id, "broken": broken_s.id}
    write(os.path.join(HERE, "sessions.json"), pretty(ids) + "\n")


if __name__ == "__main__":
    main()
