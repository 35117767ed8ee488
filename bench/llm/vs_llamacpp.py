"""The Python half of bench/llm/vs_llamacpp (run that script, not this):
converts the bench's random llama2.c checkpoint with llama.cpp's
convert-llama2c-to-ggml, quantizes it to q8_0 and q4_0, runs llama-bench and
`./torchlight bench llm` side by side and prints the table."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_llm  # noqa: E402

# Our precision -> llama.cpp's file type of the same kind.
PAIRS = (("fp32", "f32"), ("int8", "q8_0"), ("8da4w", "q4_0"))


def convert(shape: str, tools: Path, workdir: Path) -> dict:
    """GGUF files of the shape's checkpoint: {"f32": path, "q8_0": ..., "q4_0": ...}."""
    from torchlight.llm.llama2c import write_llama2c

    files = {kind: workdir / f"{shape}-{kind}.gguf" for _, kind in PAIRS}
    if all(f.exists() for f in files.values()):
        return files
    model = bench_llm.build_model(shape)  # the same seeded weights bench_llm exports
    ckpt = workdir / f"{shape}.bin"
    write_llama2c(ckpt, model)
    tokenizer = workdir / "tokenizer-32000.bin"
    bench_llm.synthetic_tokenizer(tokenizer, model.config.vocab_size)
    subprocess.run([str(tools / "llama-convert-llama2c-to-ggml"), "--copy-vocab-from-model",
                    str(tokenizer), "--llama2c-model", str(ckpt), "--llama2c-output-model",
                    str(files["f32"])], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    for kind, name in (("q8_0", "Q8_0"), ("q4_0", "Q4_0")):
        subprocess.run([str(tools / "llama-quantize"), str(files["f32"]), str(files[kind]), name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ckpt.unlink()
    return files


def llama_bench(tools: Path, gguf: Path, threads: int, prompt: int, new: int, repeats: int,
                depth: int):
    """(prefill tok/s, decode tok/s) from llama-bench's JSON (avg_ts, the mean of `repeats`).

    Decode runs at `depth` (-d: a context of that many tokens is filled
    first, untimed); with depth = prompt its tokens sit at the positions
    ours do, prompt .. prompt + new - 1, and attend over as much KV cache.
    Depth 0 (plain -n) times positions 0 .. new - 1, less work than ours.
    Its KV cache is float16, llama.cpp's default (llama-bench's -ctk / -ctv
    take no float32)."""
    def run(extra):
        out = subprocess.run([str(tools / "llama-bench"), "-m", str(gguf), "-t", str(threads),
                              "-r", str(repeats), "-o", "json", "-ctk", "f16", "-ctv", "f16"]
                             + extra,
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    prefill = decode = None
    for test in run(["-p", str(prompt), "-n", "0"]):
        if test.get("n_prompt", 0) > 0 and test.get("n_gen", 0) == 0:
            prefill = test["avg_ts"]
    for test in run(["-p", "0", "-n", str(new), "-d", str(depth)]):
        if test.get("n_gen", 0) > 0 and test.get("n_prompt", 0) == 0:
            decode = test["avg_ts"]
    return prefill, decode


def ours(shape: str, quant: str, threads: int, prompt: int, new: int, workdir: Path,
         repeats: int, kv_cache_dtype: str):
    """(prefill tok/s, decode tok/s), each the mean of `repeats` runs (as llama-bench's
    avg_ts), or None when the precision is not available here."""
    args = argparse.Namespace(shape=shape, quant=quant, group_size=32, threads=threads,
                              prompt_tokens=prompt, new_tokens=new, cli=bench_llm.CLI,
                              workdir=workdir, xnnpack=False, kv_cache_dtype=kv_cache_dtype)
    prefill, decode = [], []
    for _ in range(repeats):
        try:
            r = bench_llm.run(args)
        except SystemExit as e:
            print(f"  torchlight {quant}: {e}", flush=True)
            return None
        prefill.append(r["prefill_tok_s"])
        decode.append(r["decode_tok_s"])
    return sum(prefill) / repeats, sum(decode) / repeats


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--llamacpp-bin", type=Path, required=True)
    p.add_argument("--shape", choices=("stories15m", "stories110m"), default="stories110m")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3,
                   help="repetitions of each side (llama-bench -r, and runs of ours); means")
    p.add_argument("--llama-decode-from-empty", action="store_true",
                   help="time llama.cpp's decode from an empty context (positions 0..) as "
                        "before, instead of after --prompt-tokens as ours")
    p.add_argument("--workdir", type=Path, default=bench_llm.REPO / "build" / "bench-llm")
    p.add_argument("--kv-cache-dtype", choices=("fp16", "fp32"), default="fp16",
                   help="our KV cache (bench llm --kv-cache-dtype); llama.cpp's is float16, "
                        "its default (default fp16: the same on both sides)")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure every cell this many times, alternating which side goes "
                        "first; print each side's best round and the median of the rounds' "
                        "own ratios (default 1: one measurement)")
    p.add_argument("--quants", default=",".join(q for q, _ in PAIRS),
                   help="our precisions to compare, e.g. int8 (default: all)")
    args = p.parse_args()
    quants = args.quants.split(",")
    args.workdir.mkdir(parents=True, exist_ok=True)
    files = convert(args.shape, args.llamacpp_bin, args.workdir)
    depth = 0 if args.llama_decode_from_empty else args.prompt_tokens
    cells = [(int(t), quant, kind) for t in args.threads.split(",")
             for quant, kind in PAIRS if quant in quants]
    # rounds[i][cell] = (ours, theirs); each side (prefill, decode) or None.
    rounds = []
    for r in range(args.rounds):
        measured = {}
        for threads, quant, kind in cells:
            def theirs():
                return llama_bench(args.llamacpp_bin, files[kind], threads, args.prompt_tokens,
                                   args.new_tokens, args.repeats, depth)

            def mine():
                return ours(args.shape, quant, threads, args.prompt_tokens, args.new_tokens,
                            args.workdir, args.repeats, args.kv_cache_dtype)
            # Alternate which side goes first, so a drift in the machine's
            # speed during a round favours neither.
            if r % 2 == 0:
                b, a = theirs(), mine()
            else:
                a, b = mine(), theirs()
            measured[(threads, quant, kind)] = (a, b)
            print(f"  round {r + 1}/{args.rounds}: {threads} thread(s) {quant} vs {kind}: done",
                  flush=True)
        rounds.append(measured)

    print()
    print(f"{args.shape}, prompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens "
          f"(llama.cpp decodes at positions {depth}.., ours at {args.prompt_tokens}..), "
          f"KV cache ours {args.kv_cache_dtype} / llama.cpp fp16; tok/s (ours / llama.cpp), "
          f"means of {args.repeats} runs" + (f", best of {args.rounds} rounds" if args.rounds > 1
                                            else ""))
    print_table(cells, rounds)


def fmt(value) -> str:
    return f"{value:9.1f}" if value is not None else f"{'n/a':>9}"


def ratio(a, b) -> str:
    return f"{a / b:6.2f}x" if a is not None and b else f"{'n/a':>7}"


def summarize(pairs):
    """(best of ours, best of theirs, median of the rounds' own ratios) for one
    figure: `pairs` holds (ours, theirs) per round. The median of paired ratios
    compares runs made minutes apart only with each other, so a machine whose
    speed drifts between rounds moves it less than it moves either best."""
    mine = [a for a, _ in pairs if a is not None]
    theirs = [b for _, b in pairs if b]
    paired = [a / b for a, b in pairs if a is not None and b]
    return (max(mine) if mine else None, max(theirs) if theirs else None,
            statistics.median(paired) if paired else None)


def print_table(cells, rounds) -> None:
    several = len(rounds) > 1
    median_head = f" {'median':>7}" if several else ""
    header = (f"{'thr':>3} {'ours':>6} {'llama.cpp':>9} | {'decode':>9} {'llama.cpp':>9} "
              f"{'ratio':>7}{median_head} | {'prefill':>9} {'llama.cpp':>9} {'ratio':>7}"
              f"{median_head}")
    print(header)
    print("-" * len(header))
    for cell in cells:
        threads, quant, kind = cell
        line = f"{threads:>3} {quant:>6} {kind:>9}"
        for index in (1, 0):  # decode, then prefill
            pairs = []
            for measured in rounds:
                mine, theirs = measured[cell]
                pairs.append((mine[index] if mine else None, theirs[index]))
            best_mine, best_theirs, median = summarize(pairs)
            line += f" | {fmt(best_mine)} {fmt(best_theirs)} {ratio(best_mine, best_theirs)}"
            if several:
                line += f" {median:6.2f}x" if median is not None else f" {'n/a':>7}"
        print(line)

if __name__ == "__main__":
    main()
