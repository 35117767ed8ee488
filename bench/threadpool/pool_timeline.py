"""Where a decode step's time goes between the thread pool's calls.

    cmake -S . -B build/trace -DCMAKE_BUILD_TYPE=Release -DTORCHLIGHT_POOL_TRACE=ON
    cmake --build build/trace --target torchlight_cli
    TORCHLIGHT_POOL_TRACE=t.txt build/trace/bin/torchlight llm --model M.pte ... --threads 2
    python3 bench/threadpool/pool_timeline.py t.txt [--binary build/trace/bin/torchlight]
        [--token-items 1900] [--token K]

Reads the pool's timeline (extension/threadpool/pool_trace.h). A token ends
with a call of at least --token-items items (a Llama's classifier: 32000
columns in blocks of 16 is 2000). Prints, over the tokens after the
first few, the median token, the time between calls (serial operators and
the runner) and in calls; then per call size (items) on the pool: the
call's median length, when the worker began after the call started, how
long the caller waited for it after its own chunks, how long each side
was busy, and the chunks each ran. With --token K, that token's calls one
by one, named from --binary's symbols (nm).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import statistics
import subprocess
from pathlib import Path

MODES = {0: "inline", 1: "refused", 2: "pool", 3: "backed-off"}


def load(path: Path):
    calls, jobs = [], {}
    for line in path.read_text().splitlines():
        p = line.split()
        if p[0] == "call":
            start, own_done, end = int(p[1]), int(p[2]), int(p[3])
            mode, generation = int(p[8]), int(p[9])
            if mode == 2 and generation == 0:
                mode = 3
            calls.append(dict(start=start, own_done=own_done, end=end, fn=int(p[4], 16), items=int(p[5]),
                              chunks=int(p[6]), own=int(p[7]), mode=mode, generation=generation))
        elif p[0] == "job":
            jobs[int(p[1])] = dict(seen=int(p[2]), done=int(p[3]), chunks=int(p[4]), slept=int(p[5]))
    return calls, jobs


def symbols(binary: Path | None):
    if binary is None:
        return lambda a: hex(a)
    out = subprocess.run(["nm", "-C", "-S", "--defined-only", str(binary)], capture_output=True,
                         text=True).stdout
    syms = []
    for line in out.splitlines():
        q = line.split(" ", 3)
        if len(q) == 4 and q[2] in "tTwW":
            syms.append((int(q[0], 16), int(q[1], 16), q[3]))
    syms.sort()
    starts = [s[0] for s in syms]

    def name(a: int) -> str:
        i = bisect.bisect_right(starts, a) - 1
        return syms[i][2] if i >= 0 and a < syms[i][0] + syms[i][1] else hex(a)
    return name


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace", type=Path)
    p.add_argument("--binary", type=Path, default=None, help="the traced program, for names")
    p.add_argument("--token-items", type=int, default=1900)
    p.add_argument("--skip", type=int, default=8, help="tokens left out at the start")
    p.add_argument("--token", type=int, default=None, help="list this token's calls")
    args = p.parse_args()
    calls, jobs = load(args.trace)
    ends = [i for i, c in enumerate(calls) if c["items"] >= args.token_items]
    tokens = [(ends[k - 1] + 1, ends[k] + 1) for k in range(1, len(ends))][args.skip:]
    if not tokens:
        raise SystemExit(f"fewer than {args.skip + 2} calls of {args.token_items}+ items in {args.trace}")
    us = lambda ns: ns / 1000.0  # noqa: E731
    total, between = [], []
    for a, b in tokens:
        total.append(us(calls[b - 1]["end"] - calls[a - 1]["end"]))
        gap, prev = 0, calls[a - 1]["end"]
        for c in calls[a:b]:
            gap += c["start"] - prev
            prev = c["end"]
        between.append(us(gap))
    med = statistics.median
    print(f"{len(tokens)} tokens: median {med(total):.1f} us (fastest {min(total):.1f}), between calls "
          f"{med(between):.1f} us, in calls {med(total) - med(between):.1f} us")
    by = collections.defaultdict(list)
    modes = collections.defaultdict(collections.Counter)
    for a, b in tokens:
        for c in calls[a:b]:
            modes[c["items"]][MODES[c["mode"]]] += 1
            job = jobs.get(c["generation"]) if c["mode"] == 2 else None
            if job is None:
                continue
            by[c["items"]].append((us(c["end"] - c["start"]), us(job["seen"] - c["start"]),
                                   us(c["end"] - c["own_done"]), us(c["own_done"] - c["start"]),
                                   us(job["done"] - job["seen"]), c["own"], job["chunks"], c["chunks"]))
    print("| items | calls (how) | median us | worker began after | caller waited | caller busy | "
          "worker busy | chunks caller / worker of |")
    print("|---|---|---|---|---|---|---|---|")
    for items in sorted(modes):
        rows = by.get(items, [])
        how = ", ".join(f"{k} {v}" for k, v in modes[items].items())
        if not rows:
            print(f"| {items} | {how} | | | | | | |")
            continue
        m = [med(r[i] for r in rows) for i in range(7)]
        print(f"| {items} | {how} | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.2f} | {m[3]:.2f} | {m[4]:.2f} | "
              f"{m[5]:.1f} / {m[6]:.1f} of {rows[0][7]} |")
    if args.token is not None:
        name = symbols(args.binary)
        a, b = tokens[args.token]
        t0 = calls[a - 1]["end"]
        prev = t0
        for c in calls[a:b]:
            job = jobs.get(c["generation"]) if c["mode"] == 2 else None
            extra = (f" worker +{us(job['seen'] - c['start']):.2f}..+{us(job['done'] - c['start']):.2f} "
                     f"({job['chunks']} chunks)" if job else "")
            print(f"{us(c['start'] - t0):8.1f} gap {us(c['start'] - prev):6.2f} len {us(c['end'] - c['start']):7.2f} "
                  f"{MODES[c['mode']]:8s} {c['items']:5d} items {name(c['fn'])[:80]}{extra}")
            prev = c["end"]


if __name__ == "__main__":
    main()
