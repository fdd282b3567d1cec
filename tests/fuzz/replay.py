#!/usr/bin/env python3
"""replay.py — runs every input of a directory through a harness once and keeps going
past crashes, then lists the crashing inputs grouped by where they crash.

    python3 tests/fuzz/replay.py build-fuzz/fuzz_call DIR

libFuzzer stops at the first crash when given files; this reruns it on the inputs after
each crasher. fuzz_call keeps its database between inputs, so each crasher is then run
again alone to tell whether it reproduces by itself. Exit status 1 if any input crashed.
It does not minimise inputs (use the harness's -minimize_crash=1 for that).
"""
import os
import re
import subprocess
import sys

ENV = dict(os.environ, UBSAN_OPTIONS="print_stacktrace=1")


def where(stderr):
    """The first frame in quarry's sources, or the harness's own message."""
    for line in stderr.splitlines():
        m = re.search(r"#\d+ 0x[0-9a-f]+ in (\S+) (\S*src/\S+)", line)
        if m:
            return f"{m.group(1)} {m.group(2).split('/src/', 1)[-1]}"
        if line.startswith("fuzz_") and ": " in line:
            return line.split(": ", 1)[1][:100]
    return "unknown"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, d = sys.argv[1], sys.argv[2]
    files = sorted(os.path.join(d, f) for f in os.listdir(d))
    total, crashers = len(files), []
    while files:
        chunk = files[:2000]
        p = subprocess.run([binary, "-timeout=10", "-rss_limit_mb=4096"] + chunk, capture_output=True, text=True,
                           errors="replace", env=ENV)
        if p.returncode == 0:
            files = files[len(chunk):]
            continue
        last = [line[9:] for line in p.stderr.splitlines() if line.startswith("Running: ")][-1]
        alone = subprocess.run([binary, "-timeout=10", last], capture_output=True, text=True, errors="replace",
                               env=ENV)
        crashers.append((where(p.stderr), last, alone.returncode != 0))
        print(f"crash: {last}: {crashers[-1][0]}", flush=True)
        files = files[files.index(last) + 1:]
    groups = {}
    for w, f, alone in crashers:
        groups.setdefault(w, []).append((f, alone))
    print(f"{total} inputs, {len(crashers)} crashed")
    for w, fs in sorted(groups.items()):
        print(f"{len(fs):5d}  {w}")
        for f, alone in fs[:3]:
            print(f"       {f}{'' if alone else '  (not alone: needs the inputs before it)'}")
    sys.exit(1 if crashers else 0)


if __name__ == "__main__":
    main()
