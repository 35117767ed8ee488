"""Prefill and decode tokens/s of Torchlight's LLM runner next to eager
PyTorch, on the same model, machine, thread count and run.

    ./torchlight exec python3 bench/llm/throughput.py                # all models, 1 and 2 threads
    ./torchlight exec python3 bench/llm/throughput.py --models shipped --threads 2

Models (random weights where noted; speed does not depend on the values):
  shipped     examples/llm/models/brown_gpt.pt, the byte-level GPT the demo uses
  stories110m Llama, dim 768, 12 layers, 12 heads, hidden 2048, vocab 32000, seq 1024 (random)
  gpt2        GPT-2 124M: 12 layers, 12 heads, width 768, vocab 50257, context 1024 (random)

Torchlight's figures are the runner's own stats (`torchlight llm --stats-json`):
prefill tokens/s = prompt tokens / prefill time, decode tokens/s = tokens
after the first / their time. Eager runs the same model object with its
static KV cache under torch.inference_mode: one forward over the prompt,
then one forward per new token (greedy). Both decode --new-tokens tokens
after a prompt of about --prompt-tokens tokens and ignore EOS.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import torchlight  # noqa: E402
from torchlight.llm import GPT, GPTConfig, Llama, LlamaConfig, export_llm  # noqa: E402
from torchlight.llm.gpt_weights import load_nanogpt_checkpoint  # noqa: E402

CLI = REPO / "build" / "release" / "bin" / "torchlight"
ASSETS = Path(os.environ.get("TORCHLIGHT_ASSETS_DIR", "/var/cache/torchlight/assets"))
PROMPT_TEXT = ("It was a bright cold day in April, and the clocks were striking thirteen. "
               "The hallway smelt of boiled cabbage and old rag mats. At one end of it a "
               "coloured poster, too large for indoor display, had been tacked to the wall. "
               "It depicted simply an enormous face, more than a metre wide: the face of a "
               "man of about forty-five, with a heavy black moustache and ruggedly handsome "
               "features. Winston made for the stairs. It was no use trying the lift. Even at "
               "the best of times it was seldom working, and at present the electric current "
               "was cut off during daylight hours. It was part of the economy drive in "
               "preparation for Hate Week. The flat was seven flights up, and Winston, who "
               "was thirty-nine and had a varicose ulcer above his right ankle, went slowly, "
               "resting several times on the way.")


def synthetic_llama2c_tokenizer(path: Path, vocab_size: int) -> None:
    """A llama2.c tokenizer.bin with vocab_size pieces: <unk>, BOS, EOS, the
    256 byte pieces, then the printable characters and character pairs.
    Only the prompt's token count depends on it, never the timing per token."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    printable = [bytes([c]) for c in range(32, 127)]
    pieces += printable
    for a in printable:
        for b in printable:
            if len(pieces) >= vocab_size:
                break
            pieces.append(a + b)
    n = 0
    while len(pieces) < vocab_size:  # filler that never matches ordinary text
        pieces.append(b"\x01filler%d" % n)
        n += 1
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(len(p) for p in pieces)))
        for i, piece in enumerate(pieces):
            score = -float(i) if len(piece) > 1 and i >= 259 else 0.0
            f.write(struct.pack("<fi", score, len(piece)) + piece)


def make_models(names, workdir: Path):
    """(name, model, tokenizer argument) for each requested model."""
    for name in names:
        torch.manual_seed(0)
        if name == "shipped":
            ckpt = REPO / "examples" / "llm" / "models" / "brown_gpt.pt"
            if not ckpt.exists():
                print(f"skip shipped: {ckpt} is missing (train it: examples/llm/README.md)")
                continue
            yield name, load_nanogpt_checkpoint(str(ckpt)).eval(), "bytes"
        elif name == "stories110m":
            config = LlamaConfig(dim=768, hidden_dim=2048, n_layers=12, n_heads=12, n_kv_heads=12,
                                 vocab_size=32000, max_seq_len=1024)
            tokenizer = workdir / "synthetic_tokenizer.bin"
            synthetic_llama2c_tokenizer(tokenizer, config.vocab_size)
            yield name, _small_init(Llama(config)).eval(), str(tokenizer)
        elif name == "gpt2":
            config = GPTConfig(block_size=1024, vocab_size=50257, n_layer=12, n_head=12, n_embd=768)
            gpt2 = ASSETS / "tokenizers" / "gpt2"
            yield name, _small_init(GPT(config)).eval(), f"{gpt2 / 'encoder.json'}"
        else:
            raise SystemExit(f"unknown model {name!r} (shipped, stories110m, gpt2)")


def _small_init(model):
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02)
    return model


def export(model, path: Path) -> None:
    prog = torchlight.to_edge(export_llm(model, last_logits_only=True)).to_executorch(
        torchlight.ExecutorchBackendConfig())
    prog.save(str(path))


def run_torchlight(cli: Path, pte: Path, tokenizer: str, prompt: str, new_tokens: int, threads: int,
                   workdir: Path) -> dict:
    stats = workdir / "stats.json"
    cmd = [str(cli), "llm", "--model", str(pte), "--tokenizer", tokenizer, "--prompt", prompt,
           "--max-new-tokens", str(new_tokens), "--temperature", "0", "--ignore-eos",
           "--threads", str(threads), "--stats-json", str(stats), "--quiet"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(stats.read_text())


def run_eager_in_child(name: str, prompt_tokens: int, new_tokens: int, threads: int,
                       workdir: Path) -> dict:
    """run_eager in a fresh process whose BLAS and OpenMP pools have
    `threads` threads: OpenBLAS ignores torch.set_num_threads."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, "--eager-child", name, str(prompt_tokens),
                          str(new_tokens), str(threads), str(workdir)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_eager(model, prompt_tokens: int, new_tokens: int, threads: int) -> dict:
    torch.set_num_threads(threads)
    vocab = model.config.vocab_size
    prompt = torch.randint(0, vocab, (1, prompt_tokens))
    model.last_logits_only = True  # as the exported program: no logits for earlier positions
    with torch.inference_mode():
        model.reset_cache()
        start = time.perf_counter()
        logits = model(prompt, torch.arange(prompt_tokens))
        prefill = time.perf_counter() - start
        token = logits[:, -1].argmax(-1, keepdim=True)
        start = time.perf_counter()
        for pos in range(prompt_tokens, prompt_tokens + new_tokens - 1):
            logits = model(token, torch.tensor([pos]))
            token = logits[:, -1].argmax(-1, keepdim=True)
        decode = time.perf_counter() - start
    return {"prefill_tokens_per_s": prompt_tokens / prefill,
            "decode_tokens_per_s": (new_tokens - 1) / decode}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="shipped,stories110m,gpt2")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--prompt-chars", type=int, default=0,
                   help="prompt length in characters (0: ~128 tokens for each tokenizer)")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--cli", type=Path, default=CLI,
                   help="the torchlight CLI to measure (another build, to compare builds)")
    p.add_argument("--workdir", type=Path, default=REPO / "build" / "bench-llm")
    p.add_argument("--eager-child", nargs=5, metavar=("MODEL", "PROMPT", "NEW", "THREADS", "DIR"),
                   help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.eager_child:
        name, prompt_tokens, new_tokens, threads, workdir = args.eager_child
        (_, model, _), = make_models([name], Path(workdir))
        print(json.dumps(run_eager(model, int(prompt_tokens), int(new_tokens), int(threads))))
        return
    if not CLI.exists():
        raise SystemExit(f"{CLI} is missing: run ./torchlight build first")
    args.workdir.mkdir(parents=True, exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    rows = []
    for name, model, tokenizer in make_models(args.models.split(","), args.workdir):
        pte = args.workdir / f"{name}.pte"
        start = time.perf_counter()
        export(model, pte)
        print(f"{name}: exported {pte.stat().st_size / 2**20:.1f} MiB in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        chars = args.prompt_chars or {"shipped": 128, "stories110m": 250, "gpt2": 600}[name]
        prompt = PROMPT_TEXT[:chars]
        for t in threads:
            ours = run_torchlight(args.cli, pte, tokenizer, prompt, args.new_tokens, t, args.workdir)
            eager = run_eager_in_child(name, ours["prompt_tokens"], args.new_tokens, t,
                                       args.workdir)
            rows.append((name, t, ours, eager))
            print(f"  {t} thread(s): done", flush=True)
        pte.unlink()
    print()
    header = (f"{'model':<12} {'thr':>3} {'prompt':>6} | {'prefill tok/s':>13} {'eager':>8} {'ratio':>6} | "
              f"{'decode tok/s':>12} {'eager':>8} {'ratio':>6} | {'TTFT ms':>8} {'peak RSS MiB':>12}")
    print(header)
    print("-" * len(header))
    for name, t, ours, eager in rows:
        pf, ep = ours["prefill_tokens_per_s"], eager["prefill_tokens_per_s"]
        dc, ed = ours["decode_tokens_per_s"], eager["decode_tokens_per_s"]
        print(f"{name:<12} {t:>3} {ours['prompt_tokens']:>6} | {pf:>13.1f} {ep:>8.1f} {pf / ep:>5.2f}x | "
              f"{dc:>12.1f} {ed:>8.1f} {dc / ed:>5.2f}x | {ours['ttft_ms']:>8.1f} "
              f"{ours['peak_rss_bytes'] / 2**20:>12.0f}")


if __name__ == "__main__":
    main()
