"""CPU time, context switches and wall time per decoded token of `torchlight llm`.

    python3 bench/llm/token_rusage.py --model PTE --tokenizer TOKENIZER
        [--cli build/release/bin/torchlight] [--threads 1,2] [--tokens 16,112] [--rounds 3]

Runs the CLI twice per round and thread count, with the fewer and the more
new tokens after the same prompt, and divides the difference of the
children's rusage by the difference of tokens: what one decode step costs
with the load, the prompt and start-up taken out. Voluntary context switches
per token count how often the process slept (a pool worker waiting on its
futex, at 2 threads); involuntary ones how often it lost a core to another
process; CPU time below wall time is time spent waiting for a core or asleep.
Prints each round and the round with the least wall time.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(cli: Path, model: Path, tokenizer: Path, threads: int, tokens: int) -> tuple[float, ...]:
    """(CPU s, voluntary switches, involuntary switches, wall s) of one run."""
    prompt = ("abcdefghijklmnopqrstuvwxyz " * 64)[:126]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(cli), "llm", "--model", str(model), "--tokenizer", str(tokenizer),
                    "--prompt", prompt, "--max-new-tokens", str(tokens), "--temperature", "0",
                    "--ignore-eos", "--threads", str(threads), "--quiet"],
                   stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (cpu, after.ru_nvcsw - before.ru_nvcsw, after.ru_nivcsw - before.ru_nivcsw, wall)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--tokenizer", type=Path, required=True)
    p.add_argument("--cli", type=Path, default=REPO / "build" / "release" / "bin" / "torchlight")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--tokens", default="16,112", help="the fewer and the more new tokens")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    short, long = (int(t) for t in args.tokens.split(","))
    if long <= short:
        raise SystemExit(f"--tokens {args.tokens}: the second count must be the larger")
    print("| thr | round | CPU ms / token | voluntary cs / token | involuntary cs / token | wall ms / token |")
    print("|---|---|---|---|---|---|")
    for threads in (int(t) for t in args.threads.split(",")):
        rows = []
        for i in range(args.rounds):
            few = run(args.cli, args.model, args.tokenizer, threads, short)
            many = run(args.cli, args.model, args.tokenizer, threads, long)
            cpu, voluntary, involuntary, wall = ((m - f) / (long - short) for m, f in zip(many, few))
            rows.append((wall, cpu, voluntary, involuntary))
            print(f"| {threads} | {i + 1} | {cpu * 1e3:.3f} | {voluntary:.2f} | {involuntary:.2f} | "
                  f"{wall * 1e3:.3f} |", flush=True)
        wall, cpu, voluntary, involuntary = min(rows)
        print(f"| {threads} | least wall | {cpu * 1e3:.3f} | {voluntary:.2f} | {involuntary:.2f} | "
              f"{wall * 1e3:.3f} |", flush=True)


if __name__ == "__main__":
    main()
