"""Two torchlight CLIs side by side on the same .pte files, alternating.

    python3 bench/llm/ab_compare.py --base BASE_CLI --workdir DIR
        [--base-workdir BASE_DIR] [--quant fp32,int8,8da4w(,4w)] [--threads 1,2] [--rounds 5]
        [--env VAR=VALUE ...] [--base-env VAR=VALUE ...] [--base-unfused]
        [--kv-cache-dtype fp32|fp16]

For a loaded machine, where only a comparison inside one run means
anything: each round runs the base CLI and this checkout's CLI (or --cli)
once each, in alternating order, on the programs `bench_llm.py` exported to
DIR (run it once per precision with --workdir DIR first), and prints the
median decode and prefill tok/s of each and the ratio new / base, then
the best decode and prefill of each (the least disturbed runs). --env and --base-env
set variables for one side's runs, so one CLI can be compared with itself
under two settings (e.g. --base-env TORCHLIGHT_QUANT_ISA=avx2).
--base-workdir gives the base CLI its own programs (exported by its own
checkout), for when the new exporter emits operators the base CLI lacks.
--base-unfused gives the new side the programs `bench_llm.py
--fuse-linears` exported and the base side the default ones (separate
wq/wk/wv and w1/w3), so with --base
this CLI it measures sibling-linear fusion alone. --kv-cache-dtype fp16 picks
the programs `bench_llm.py --kv-cache-dtype fp16` exported. Each round's own
ratio new / base (two runs back to back) is kept too: the table gives
their median and range, the spread a drifting machine leaves.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_llm  # noqa: E402


def run_once(cli: Path, pte: Path, tokenizer: Path, threads: int, prompt_tokens: int,
             new_tokens: int, stats: Path, env: dict) -> tuple[float, float]:
    prompt = ("abcdefghijklmnopqrstuvwxyz " * 64)[:max(1, prompt_tokens - 2)]
    subprocess.run([str(cli), "llm", "--model", str(pte), "--tokenizer", str(tokenizer),
                    "--prompt", prompt, "--max-new-tokens", str(new_tokens), "--temperature", "0",
                    "--ignore-eos", "--threads", str(threads), "--stats-json", str(stats),
                    "--quiet"], check=True, stdout=subprocess.DEVNULL, env=env)
    s = json.loads(stats.read_text())
    return s["decode_tokens_per_s"], s["prefill_tokens_per_s"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", type=Path, required=True, help="the CLI to compare against")
    p.add_argument("--cli", type=Path, default=REPO / "build" / "release" / "bin" / "torchlight")
    p.add_argument("--workdir", type=Path, required=True, help="bench_llm.py's --workdir")
    p.add_argument("--base-workdir", type=Path, default=None,
                   help="the base CLI's programs (default: --workdir's)")
    p.add_argument("--shape", default="stories15m")
    p.add_argument("--quant", default="fp32,int8,8da4w")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--env", action="append", default=[], metavar="VAR=VALUE",
                   help="a variable for the new CLI's runs (repeatable)")
    p.add_argument("--base-env", action="append", default=[], metavar="VAR=VALUE",
                   help="a variable for the base CLI's runs (repeatable)")
    p.add_argument("--kv-cache-dtype", choices=["fp32", "fp16"], default="fp32",
                   help="the programs' KV cache dtype (bench_llm.py's flag)")
    p.add_argument("--base-unfused", action="store_true",
                   help="the new side runs the programs exported with --fuse-linears, the base "
                        "side the default (separate linears)")
    args = p.parse_args()
    envs = {name: dict(os.environ, **dict(v.split("=", 1) for v in values))
            for name, values in (("new", args.env), ("base", args.base_env))}
    tokenizer = args.workdir / "tokenizer-32000.bin"
    if not tokenizer.exists():  # bench_llm.py writes it on its first run
        bench_llm.synthetic_tokenizer(tokenizer, 32000)
    stats = args.workdir / "ab-stats.json"
    print("| quant | thr | decode base | decode new | ratio | prefill base | prefill new | ratio | "
          "best decode base / new | best prefill base / new | decode ratio per round: median "
          "(range) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for quant in args.quant.split(","):
        pte = {}
        for name, workdir in (("new", args.workdir), ("base", args.base_workdir or args.workdir)):
            fused = name == "new" and args.base_unfused
            stem = bench_llm.program_tag(args.shape, quant, 32, fuse_linears=fused,
                                         kv_cache_dtype=args.kv_cache_dtype)
            ptes = bench_llm.programs_of(workdir, stem)
            if not ptes:
                raise SystemExit(f"no {stem}-*.pte in {workdir}: run bench_llm.py with --workdir"
                                 + (" and --fuse-linears" if fused else ""))
            pte[name] = ptes[-1]
        for threads in (int(t) for t in args.threads.split(",")):
            got = {"base": [], "new": []}
            for i in range(args.rounds):
                order = (("base", args.base), ("new", args.cli))
                for name, cli in (order if i % 2 == 0 else order[::-1]):
                    got[name].append(run_once(cli, pte[name], tokenizer, threads,
                                              args.prompt_tokens, args.new_tokens, stats,
                                              envs[name]))
            med = {k: (statistics.median(d for d, _ in v), statistics.median(f for _, f in v))
                   for k, v in got.items()}
            (db, pb), (dn, pn) = med["base"], med["new"]
            best = {k: max(d for d, _ in v) for k, v in got.items()}
            best_prefill = {k: max(f for _, f in v) for k, v in got.items()}
            rounds = [n[0] / b[0] for b, n in zip(got["base"], got["new"])]
            print(f"| {quant} | {threads} | {db:.1f} | {dn:.1f} | {dn / db:.2f}x | {pb:.1f} | "
                  f"{pn:.1f} | {pn / pb:.2f}x | {best['base']:.1f} / {best['new']:.1f} | "
                  f"{best_prefill['base']:.1f} / {best_prefill['new']:.1f} | "
                  f"{statistics.median(rounds):.2f}x ({min(rounds):.2f}-{max(rounds):.2f}) |",
                  flush=True)


if __name__ == "__main__":
    main()
