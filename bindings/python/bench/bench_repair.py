"""The binding's `repair` on a 1 MB body against the Rust library's `repair_str` on the same
bytes (examples/repair_timing.rs). A benchmark, not a test: it prints figures and asserts
nothing.

    bindings/python/bench/bench_repair.py [--runs N]

Needs the package installed with the release profile (TURNKEEPER_PY_PROFILE=release
bindings/python/test.sh, or pip install ./bindings/python) in the Python that runs it; builds
and runs the Rust side with cargo --release. Two bodies: a damaged one (a valid 1 MB history, then
an aborted tool call: the repair inserts a result and writes a new body) and the valid one
(nothing to change: the same object comes back).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import time

import turnkeeper

ROOT = pathlib.Path(__file__).resolve().parents[3]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def bodies() -> dict[str, pathlib.Path]:
    """Writes the two 1 MB bodies under the target directory."""
    damaged = json.loads((ROOT / "corpus/damaged/an08_aborted_turn.json").read_text())
    pad = []
    i = 0
    while len(json.dumps(pad, separators=(",", ":"))) < 1_000_000:
        pad.append({"role": "user", "content": f"question {i}: " + "how does this part work? " * 8})
        pad.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {i}: " + "it works like this. " * 10}]})
        i += 1
    damaged["messages"] = pad + damaged["messages"]
    valid = dict(damaged, messages=pad + [{"role": "user", "content": "thanks"}])
    out = {}
    for name, body in (("damaged", damaged), ("valid", valid)):
        p = TARGET / f"bench-repair-1mb-{name}.json"
        p.write_text(json.dumps(body, separators=(",", ":")))
        out[name] = p
    return out


def python_side(path: pathlib.Path, runs: int) -> dict:
    raw = path.read_bytes()
    turnkeeper.repair(raw)  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        r = turnkeeper.repair(raw)
        times.append(time.perf_counter_ns() - start)
    assert isinstance(r["body"], bytes)
    return {"median_ns": statistics.median(times), "min_ns": min(times), "changes": len(r["changes"])}


def rust_side(paths: list[pathlib.Path], runs: int) -> dict[str, dict]:
    cmd = ["cargo", "run", "-q", "--release", "-p", "turnkeeper-python", "--example", "repair_timing", "--", str(runs)]
    out = subprocess.run(cmd + [str(p) for p in paths], cwd=ROOT, check=True, capture_output=True, text=True)
    return {json.loads(line)["file"]: json.loads(line) for line in out.stdout.splitlines()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    runs = ap.parse_args().runs
    paths = bodies()
    rust = rust_side(list(paths.values()), runs)
    print(f"{'body':<8} {'bytes':>9} {'rust median':>12} {'python median':>14} {'ratio':>6}  (min: rust / python)")
    for name, p in paths.items():
        r, py = rust[str(p)], python_side(p, runs)
        ratio = py["median_ns"] / r["median_ns"]
        print(
            f"{name:<8} {r['bytes']:>9} {r['median_ns'] / 1e6:>10.3f}ms {py['median_ns'] / 1e6:>12.3f}ms {ratio:>6.2f}"
            f"  ({r['min_ns'] / 1e6:.3f} / {py['min_ns'] / 1e6:.3f} ms; {py['changes']} change(s))"
        )


if __name__ == "__main__":
    main()
