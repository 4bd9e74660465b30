#!/usr/bin/env python3
"""Turns criterion's saved estimates for the `transcript` bench (and, when it ran, the `opencode`
bench of the turnkeeper crate) into the tables of BENCHMARKS.md.

Usage: python3 crates/prevent/benches/tables.py [TARGET_DIR]   (default: $CARGO_TARGET_DIR or target)

Reads TARGET_DIR/criterion/transcript_<workload>/<bench>/new/estimates.json (median point
estimates) and the workload sizes from the names. Prints markdown on stdout.
"""
import json
import os
import sys

BENCHES = ["ignored_any", "value_roundtrip", "read", "check", "rules", "repair", "repair_into"]
ORDER = ["m10_10KB", "m100_1MB", "m1000_10MB", "m10000_10MB", "m10000_100MB"]


def median(base, group, bench):
    path = os.path.join(base, "criterion", group, bench, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1e9  # seconds
    except OSError:
        return None


def bench_meta(base, group):
    """Input bytes and messages from criterion's benchmark.json throughput fields."""
    out = {}
    for bench, key in (("read", "Bytes"), ("rules", "Elements")):
        path = os.path.join(base, "criterion", group, bench, "new", "benchmark.json")
        try:
            with open(path) as f:
                out[key] = json.load(f)["throughput"][key]
        except (OSError, KeyError, TypeError):
            pass
    return out.get("Bytes"), out.get("Elements")


def ms(x):
    return "–" if x is None else (f"{x * 1e3:.3f}" if x < 1e-3 else f"{x * 1e3:.1f}")


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CARGO_TARGET_DIR", "target")
    rows = []
    for w in ORDER:
        for damaged in (False, True):
            name = w + ("_damaged" if damaged else "")
            group = "transcript_" + name
            t = {b: median(base, group, b) for b in BENCHES}
            if t["read"] is None:
                continue
            size, msgs = bench_meta(base, group)
            rows.append((name, damaged, size, msgs, t))

    print("| workload | bytes | messages | IgnoredAny | Value round trip | read | check | rules | repair | repair_into |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, _, size, msgs, t in rows:
        print(f"| {name} | {size:,} | {msgs:,} | "
              + " | ".join("–" if t[b] is None
                           else f"{ms(t[b])} ms ({size / t[b] / 1e6:.0f} MB/s)" if b != "rules"
                           else f"{ms(t[b])} ms ({t[b] / msgs * 1e6:.2f} µs/msg)"
                           for b in BENCHES) + " |")

    print()
    print("| workload | check / IgnoredAny (≤ 1.25) | rules µs/msg (≤ 0.3 at 10k) | Value / repair (≥ 3, damaged) "
          "| repair / Value | repair_into / Value (≤ 0.5, damaged) | repair / IgnoredAny | repair_into / IgnoredAny (≤ 1.3, damaged) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, damaged, size, msgs, t in rows:
        ratio = t["check"] / t["ignored_any"]
        per = t["rules"] / msgs * 1e6

        def r(a, b):
            return "–" if not damaged or t[a] is None or t[b] is None else f"{t[a] / t[b]:.2f}"
        print(f"| {name} | {ratio:.2f} | {per:.2f} | {r('value_roundtrip', 'repair')} "
              f"| {r('repair', 'value_roundtrip')} | {r('repair_into', 'value_roundtrip')} "
              f"| {r('repair', 'ignored_any')} | {r('repair_into', 'ignored_any')} |")

    by = {name: t for name, _, _, _, t in rows}
    if "m1000_10MB" in by and "m10000_100MB" in by:
        print()
        print("| growth m1000_10MB → m10000_100MB (≤ 11×) | " + " | ".join(BENCHES) + " |")
        print("|---|" + "---:|" * len(BENCHES))
        for d in ("", "_damaged"):
            a, b = by.get("m1000_10MB" + d), by.get("m10000_100MB" + d)
            if a and b:
                print(f"| {'damaged' if d else 'valid'} | "
                      + " | ".join("–" if a[x] is None or b[x] is None else f"{b[x] / a[x]:.1f}×"
                                   for x in BENCHES) + " |")

    opencode(base)


OPENCODE = ["ignored_any", "value_roundtrip", "read", "check", "repair"]


def opencode(base):
    """The `opencode/<workload>` groups: the same sessions as OpenCode exports."""
    rows = []
    for w in ORDER:
        for damaged in (False, True):
            name = w + ("_damaged" if damaged else "")
            group = "opencode_" + name
            t = {b: median(base, group, b) for b in OPENCODE}
            if t["check"] is None:
                continue
            path = os.path.join(base, "criterion", group, "read", "new", "benchmark.json")
            try:
                with open(path) as f:
                    size = json.load(f)["throughput"]["Bytes"]
            except (OSError, KeyError, TypeError):
                continue
            rows.append((name, size, t))
    if not rows:
        return
    print()
    print("| OpenCode export | bytes | IgnoredAny | Value round trip | read | check | repair (doctor) | check / IgnoredAny | Value / repair |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, size, t in rows:
        print(f"| {name} | {size:,} | "
              + " | ".join(f"{ms(t[b])} ms ({size / t[b] / 1e6:.0f} MB/s)" for b in OPENCODE)
              + f" | {t['check'] / t['ignored_any']:.2f} | {t['value_roundtrip'] / t['repair']:.2f} |")


if __name__ == "__main__":
    main()
