#!/usr/bin/env python3
"""Regenerates the doctor corpus's broken stores (`before/`):

    python3 corpus/opencode/doctor/make_doctor.py

`before/storage/` is a JSON-file tree and `before/opencode.db` a SQLite store holding the same
three sessions: the healthy and the broken session of ../make_corpus.py (with its store damage:
malformed files, unsafe ids, orphan parts), and an "interrupted" session with the shapes a crash
or a plugin leaves that the broken session does not have. `after/` is the expected repaired
form, written by `UPDATE_EXPECT=1 cargo test -p turnkeeper --test doctor` and reviewed by hand.
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import make_corpus as mc  # noqa: E402


def interrupted():
    """Shapes from seeds 000/003 and peers.md not in the broken session."""
    s = mc.Builder("Add a CLI flag", mc.T0 + 2 * 86_400_000, "calm-lynx")
    u = s.user(mc.text("Add a --verbose flag."), mc.text("  "))
    # The AI SDK drops unsigned reasoning; a turn holding only that is sent empty
    # ("all messages must have non-empty content"). An empty text part rides along.
    s.assistant(
        mc.step_start(),
        mc.reasoning("Where are flags parsed?", signature=None),
        mc.text(""),
        mc.step_finish("stop"),
        parent=u, finish="stop",
    )
    u = s.user(mc.text("go on"))
    # A tool call in an earlier step, then a thinking-only last step (seed 000, seed 004).
    s.assistant(
        mc.step_start(),
        mc.reasoning("Read main.rs.", signature=mc.sig(21)),
        mc.tool("toolu_01InterruptRead000000001", "read", "completed", {"filePath": "src/main.rs"},
                output="fn main() {}", title="src/main.rs", metadata={},
                time={"start": mc.T0, "end": mc.T0 + 10}),
        mc.step_finish("tool-calls"),
        mc.step_start(),
        mc.reasoning("Now edit it.", signature=mc.sig(22)),
        mc.step_finish("stop"),
        parent=u, finish="stop",
    )
    u = s.user(mc.text("retry"))
    # An errored turn (excluded from the request) whose tool part is stuck running: OpenCode
    # marks it as an error at the end of a turn; here it did not get to.
    s.assistant(
        mc.step_start(),
        mc.tool("toolu_01InterruptEdit000000001", "edit", "running",
                {"filePath": "src/main.rs"}, time={"start": mc.T0 + 50_000}),
        parent=u, finish=None,
        error={"name": "APIError", "data": {"message": "Overloaded", "statusCode": 529,
                                            "isRetryable": True}},
    )
    u = s.user(mc.text("once more"))
    # An empty signature and a non-base64 signature (api-rules AN-23, AN-06).
    s.assistant(
        mc.step_start(),
        mc.reasoning("Empty signature.", signature=""),
        mc.reasoning("Placeholder signature.", signature="[Continuing from previous reasoning]"),
        mc.reasoning("Good one.", signature=mc.sig(23)),
        mc.text("Added `--verbose`."),
        mc.step_finish("stop"),
        parent=u, finish="stop",
    )
    return s


def main():
    healthy, broken, extra = mc.healthy(), mc.broken(), interrupted()
    sessions = [healthy, broken, extra]
    before = os.path.join(HERE, "before")
    shutil.rmtree(before, ignore_errors=True)
    root = os.path.join(before, "storage")
    mc.write_json_tree(root, sessions)
    mc.damage_json_tree(root, broken)
    mc.write_db(os.path.join(before, "opencode.db"), sessions, broken)
    mc.write(os.path.join(before, "sessions.json"),
             mc.pretty({"healthy": healthy.id, "broken": broken.id, "interrupted": extra.id})
             + "\n")


if __name__ == "__main__":
    main()
