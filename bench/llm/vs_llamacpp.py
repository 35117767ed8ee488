"""The Python half of bench/llm/vs_llamacpp (run that script, not this):
converts the bench's random llama2.c checkpoint with llama.cpp's
convert-llama2c-to-ggml, quantizes it to q8_0 and q4_0, runs llama-bench and
`./torchlight bench llm` side by side and prints the table."""

from __future__ import annotations

import argparse
import json
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


def llama_bench(tools: Path, gguf: Path, threads: int, prompt: int, new: int, repeats: int):
    """(prefill tok/s, decode tok/s) from llama-bench's JSON."""
    out = subprocess.run([str(tools / "llama-bench"), "-m", str(gguf), "-p", str(prompt), "-n",
                          str(new), "-t", str(threads), "-r", str(repeats), "-o", "json"],
                         check=True, capture_output=True, text=True).stdout
    prefill = decode = None
    for test in json.loads(out):
        if test.get("n_prompt", 0) > 0 and test.get("n_gen", 0) == 0:
            prefill = test["avg_ts"]
        elif test.get("n_gen", 0) > 0 and test.get("n_prompt", 0) == 0:
            decode = test["avg_ts"]
    return prefill, decode


def ours(shape: str, quant: str, threads: int, prompt: int, new: int, workdir: Path):
    """(prefill tok/s, decode tok/s), or None when the precision is not available here."""
    args = argparse.Namespace(shape=shape, quant=quant, group_size=32, threads=threads,
                              prompt_tokens=prompt, new_tokens=new, cli=bench_llm.CLI,
                              workdir=workdir, xnnpack=False)
    try:
        r = bench_llm.run(args)
    except SystemExit as e:
        print(f"  torchlight {quant}: {e}", flush=True)
        return None
    return r["prefill_tok_s"], r["decode_tok_s"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--llamacpp-bin", type=Path, required=True)
    p.add_argument("--shape", choices=("stories15m", "stories110m"), default="stories110m")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3, help="llama-bench repetitions")
    p.add_argument("--workdir", type=Path, default=bench_llm.REPO / "build" / "bench-llm")
    args = p.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    files = convert(args.shape, args.llamacpp_bin, args.workdir)
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        for quant, kind in PAIRS:
            theirs = llama_bench(args.llamacpp_bin, files[kind], threads, args.prompt_tokens,
                                 args.new_tokens, args.repeats)
            mine = ours(args.shape, quant, threads, args.prompt_tokens, args.new_tokens,
                        args.workdir)
            rows.append((threads, quant, kind, mine, theirs))
            print(f"  {threads} thread(s) {quant} vs {kind}: done", flush=True)

    def fmt(value):
        return f"{value:9.1f}" if value is not None else f"{'n/a':>9}"

    def ratio(a, b):
        return f"{a / b:6.2f}x" if a is not None and b else f"{'n/a':>7}"

    print()
    print(f"{args.shape}, prompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens; "
          f"tok/s (ours / llama.cpp)")
    header = (f"{'thr':>3} {'ours':>6} {'llama.cpp':>9} | {'decode':>9} {'llama.cpp':>9} "
              f"{'ratio':>7} | {'prefill':>9} {'llama.cpp':>9} {'ratio':>7}")
    print(header)
    print("-" * len(header))
    for threads, quant, kind, mine, theirs in rows:
        my_prefill, my_decode = mine if mine else (None, None)
        their_prefill, their_decode = theirs
        print(f"{threads:>3} {quant:>6} {kind:>9} | {fmt(my_decode)} {fmt(their_decode)} "
              f"{ratio(my_decode, their_decode)} | {fmt(my_prefill)} {fmt(their_prefill)} "
              f"{ratio(my_prefill, their_prefill)}")


if __name__ == "__main__":
    main()
